//! Compiling and running through the JavaScript API and reading insert-sync's set/wait
//! pairs as JavaScript receives them: the values go through `JsValue` and are read back
//! by field name into the structs below (`serde_wasm_bindgen::from_value`), under
//! wasm-bindgen-test in Node.
#![cfg(target_arch = "wasm32")]

use js_sys::{Object, Reflect};
use serde::Deserialize;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::wasm_bindgen_test;

#[derive(Debug, Deserialize)]
struct Site {
    pipe: String,
    line: Option<u32>,
}

#[derive(Debug, Deserialize)]
struct Pair {
    src: String,
    dst: String,
    kind: String,
    buffer: Option<String>,
    producer: Site,
    consumer: Site,
    set_index: Option<u32>,
    wait_index: Option<u32>,
}

#[derive(Debug, Deserialize)]
struct Sync {
    strategy: String,
    alias: String,
    pairs: Vec<Pair>,
    notes: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct Pass {
    name: String,
}

#[derive(Debug, Deserialize)]
struct Compiled {
    passes: Vec<Pass>,
    diagnostics: Vec<JsDiagnostic>,
    asm: Option<String>,
    sync: Option<Sync>,
}

#[derive(Debug, Deserialize)]
struct JsDiagnostic {
    message: String,
}

#[derive(Debug, Deserialize)]
struct Race {
    message: String,
}

#[derive(Debug, Deserialize)]
struct Ran {
    cycles: f64,
    reference_match: bool,
    races: Vec<Race>,
    race_fixes: Vec<Option<Pair>>,
    compile: Compiled,
}

fn source(name: &str) -> &'static str {
    tilescope::examples::ALL
        .iter()
        .find(|e| e.name == name)
        .map(|e| e.source)
        .expect("a gallery example")
}

/// Options as a JavaScript object, `disabled_passes` as an array of strings.
fn options(sync: &str, disabled: &[&str]) -> JsValue {
    let o = Object::new();
    Reflect::set(&o, &"preset".into(), &"a3".into()).expect("set");
    Reflect::set(&o, &"sync".into(), &sync.into()).expect("set");
    let passes: js_sys::Array = disabled.iter().map(|p| JsValue::from_str(p)).collect();
    Reflect::set(&o, &"disabled_passes".into(), &passes).expect("set");
    o.into()
}

fn get(value: &JsValue, key: &str) -> JsValue {
    Reflect::get(value, &key.into()).expect("property access")
}

/// The compile result as JavaScript receives it, and read into `Compiled`.
fn compile(name: &str, sync: &str, disabled: &[&str]) -> (JsValue, Compiled) {
    let value = tilescope_wasm::compile(source(name), options(sync, disabled)).expect("compiles");
    let read = serde_wasm_bindgen::from_value(value.clone()).expect("the compile result's shape");
    (value, read)
}

fn compiled(name: &str, sync: &str, disabled: &[&str]) -> Compiled {
    compile(name, sync, disabled).1
}

fn is_pipe(name: &str) -> bool {
    ["S", "MTE2", "MTE1", "M", "V", "FIX", "MTE3"].contains(&name)
}

#[wasm_bindgen_test]
fn compile_explains_each_set_wait_pair() {
    let (value, result) = compile("elementwise", "auto", &[]);
    assert!(result.diagnostics.is_empty(), "{:?}", result.diagnostics);
    let sync = result.sync.expect("a sync report");
    assert_eq!(
        (sync.strategy.as_str(), sync.alias.as_str()),
        ("auto", "precise")
    );
    assert!(sync.notes.is_empty(), "{:?}", sync.notes);
    assert!(!sync.pairs.is_empty());
    for pair in &sync.pairs {
        assert!(is_pipe(&pair.src) && is_pipe(&pair.dst), "{pair:?}");
        assert_ne!(pair.src, pair.dst);
        assert_eq!(
            (&pair.producer.pipe, &pair.consumer.pipe),
            (&pair.src, &pair.dst)
        );
        assert!(
            pair.set_index.is_some() && pair.wait_index.is_some(),
            "{pair:?}"
        );
    }
    // The load of `t` (MTE2) feeds the vector op (V): a RAW pair on `t`, between the
    // source lines of the load and of the store that computes from it.
    let raw = sync
        .pairs
        .iter()
        .find(|p| p.src == "MTE2" && p.dst == "V" && p.kind == "RAW")
        .expect("an MTE2 -> V RAW pair");
    assert_eq!(raw.buffer.as_deref(), Some("t"));
    assert_eq!((raw.producer.line, raw.consumer.line), (Some(8), Some(9)));
    // Its set_flag and wait_flag are where the pair says in the program.
    let instrs = get(&get(&value, "program"), "instrs");
    for (index, op) in [(raw.set_index, "SetFlag"), (raw.wait_index, "WaitFlag")] {
        let index = index.expect("placed");
        let flag = get(
            &get(
                &Reflect::get_u32(&instrs, index).expect("an instruction"),
                "op",
            ),
            op,
        );
        assert_eq!(
            get(&flag, "src").as_string().as_deref(),
            Some("MTE2"),
            "#{index}"
        );
        assert_eq!(
            get(&flag, "dst").as_string().as_deref(),
            Some("V"),
            "#{index}"
        );
    }
}

#[wasm_bindgen_test]
fn without_sync_there_are_no_pairs() {
    let result = compiled("elementwise", "none", &[]);
    let sync = result.sync.expect("a sync report");
    assert_eq!(sync.strategy, "none");
    assert!(sync.pairs.is_empty(), "{:?}", sync.pairs);
    assert!(!result.asm.expect("assembly").contains("set_flag"));
}

#[wasm_bindgen_test]
fn disabled_passes_are_left_out() {
    let all = compiled("elementwise", "auto", &[]);
    assert!(all.passes.iter().any(|p| p.name == "multi-buffer"));
    let without = compiled("elementwise", "auto", &["multi-buffer"]);
    assert!(without.diagnostics.is_empty(), "{:?}", without.diagnostics);
    assert!(!without.passes.iter().any(|p| p.name == "multi-buffer"));
    assert_eq!(without.passes.len() + 1, all.passes.len());
    // A pass that cannot be turned off is a diagnostic naming the ones that can.
    let wrong = compiled("elementwise", "auto", &["parse"]);
    let message = &wrong.diagnostics.first().expect("a diagnostic").message;
    assert!(message.contains("multi-buffer"), "{message}");
    assert!(wrong.sync.is_none());
}

#[wasm_bindgen_test]
fn run_returns_the_pairs_it_ran_with_and_the_fix_of_each_race() {
    let value = tilescope_wasm::run(
        source("elementwise"),
        options("auto", &[]),
        JsValue::NULL,
        Some(1),
    )
    .expect("runs");
    let ran: Ran = serde_wasm_bindgen::from_value(value).expect("the run result's shape");
    assert!(ran.reference_match && ran.cycles > 0.0 && ran.races.is_empty());
    assert!(ran.race_fixes.is_empty());
    assert!(!ran.compile.sync.expect("a sync report").pairs.is_empty());

    let value = tilescope_wasm::run(
        source("elementwise"),
        options("none", &[]),
        JsValue::NULL,
        Some(1),
    )
    .expect("runs");
    let ran: Ran = serde_wasm_bindgen::from_value(value).expect("the run result's shape");
    assert!(ran.compile.sync.expect("a sync report").pairs.is_empty());
    assert!(!ran.races.is_empty());
    assert_eq!(ran.race_fixes.len(), ran.races.len());
    // The same fix the playground and `tilescope run --sync none` name for a race on `t`.
    let fix = ran
        .race_fixes
        .iter()
        .flatten()
        .find(|f| f.src == "MTE2" && f.dst == "V")
        .unwrap_or_else(|| {
            panic!(
                "a fix from MTE2 to V: {:?}",
                ran.races.first().map(|r| &r.message)
            )
        });
    assert_eq!(
        (fix.kind.as_str(), fix.buffer.as_deref()),
        ("RAW", Some("t"))
    );
}

#[wasm_bindgen_test]
fn the_sync_object_is_the_clis() {
    // `tilescope compile --emit json` writes `explain::sync_json`; the API's `sync` is
    // the same JSON.
    for (name, sync) in [
        ("elementwise", "auto"),
        ("flash_attention", "auto"),
        ("elementwise", "none"),
    ] {
        let options = tilescope::compile::CompileOptions {
            sync: serde_json::from_value(serde_json::json!(sync)).expect("a strategy"),
            ..tilescope::compile::CompileOptions::default()
        };
        let result = tilescope::compile::compile(source(name), &options);
        let cli = tilescope::explain::sync_json(&result, source(name));
        let api = tilescope_wasm::CompileResult::new(result, source(name));
        assert_eq!(
            serde_json::to_value(&api.sync).expect("serialises"),
            cli,
            "{name}"
        );
    }
}
