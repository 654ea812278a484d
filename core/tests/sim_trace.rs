mod sim_support;

use serde_json::Value;
use tilescope::sim::trace::chrome_trace;

#[test]
fn chrome_trace_has_pipes_slices_stalls_and_flag_flows() {
    let p = sim_support::load("double_buffer");
    let r = sim_support::run(&p);
    let t = chrome_trace(&p, &r);
    let events = t["traceEvents"].as_array().unwrap();
    let of = |ph: &str| {
        events
            .iter()
            .filter(|e| e["ph"] == ph)
            .collect::<Vec<&Value>>()
    };

    let meta = of("M");
    assert!(meta
        .iter()
        .any(|e| e["name"] == "process_name" && e["pid"] == 1));
    let threads: Vec<&str> = meta
        .iter()
        .filter(|e| e["name"] == "thread_name")
        .map(|e| e["args"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(threads, vec!["S", "MTE2", "MTE1", "M", "V", "FIX", "MTE3"]);

    let slices = of("X");
    let instrs: Vec<&&Value> = slices.iter().filter(|e| e["cat"] == "instr").collect();
    assert_eq!(instrs.len(), r.trace.len());
    let vexp = instrs.iter().find(|e| e["name"] == "vexp.f32").unwrap();
    assert_eq!(vexp["tid"], 5);
    assert_eq!(vexp["args"]["step"], 2);
    assert_eq!(vexp["args"]["span"], serde_json::json!([70, 80]));
    assert!(vexp["args"]["text"]
        .as_str()
        .unwrap()
        .starts_with("vexp.f32 ub[r3]{8, 64, 64}"));
    assert_eq!(vexp["dur"], 136);
    assert!(slices
        .iter()
        .any(|e| e["cat"] == "stall" && e["name"] == "wait flag"));

    let (starts, ends) = (of("s"), of("f"));
    let waited = r.flags.iter().filter(|f| f.wait_cycle.is_some()).count();
    assert_eq!((starts.len(), ends.len()), (waited, waited));
    for (s, f) in starts.iter().zip(&ends) {
        assert_eq!(s["id"], f["id"]);
        assert_eq!(f["bp"], "e");
        assert!(s["ts"].as_u64() <= f["ts"].as_u64());
    }
    assert!(t["otherData"]["units"]
        .as_str()
        .unwrap()
        .contains("1 cycle"));
    // The export is plain JSON that serialises.
    assert!(serde_json::to_string(&t).unwrap().len() > 100);
    // And the result itself serialises (the CLI's --json).
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["cycles"], r.cycles);
    assert!(json["trace"][0]["pipe"].is_string());
}
