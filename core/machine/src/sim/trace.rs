//! Chrome Trace Event export (opens in Perfetto and chrome://tracing): one process, one
//! thread per pipe, an `X` slice per instruction, stalls as their own `X` slices
//! (category `stall`) just before the instruction, and each flag's set -> wait as a flow
//! arrow. One cycle is shown as one microsecond.

use super::{SimResult, StallReason};
use crate::isa::Program;
use crate::types::Pipe;
use serde_json::{json, Value};

const PID: u32 = 1;

fn tid(p: Pipe) -> usize {
    p.index() + 1
}

pub fn chrome_trace(program: &Program, result: &SimResult) -> Value {
    chrome_trace_located(program, result, None)
}

/// As [`chrome_trace`], each slice's source position as `line` and `col` of `source`
/// (the byte `span` when there is no source).
pub fn chrome_trace_located(program: &Program, result: &SimResult, source: Option<&str>) -> Value {
    let mut events = vec![
        json!({"ph": "M", "pid": PID, "name": "process_name", "args": {"name": "tilescope core"}}),
    ];
    for p in Pipe::ALL {
        events.push(json!({"ph": "M", "pid": PID, "tid": tid(p), "name": "thread_name", "args": {"name": p.name()}}));
        events.push(json!({"ph": "M", "pid": PID, "tid": tid(p), "name": "thread_sort_index", "args": {"sort_index": p.index()}}));
    }
    for e in &result.trace {
        let text = program.instr_text(e.index as usize);
        let name = text.split_whitespace().next().unwrap_or("?").to_string();
        let mut args = json!({"index": e.index, "text": text, "dispatch": e.dispatch});
        if let Some(step) = e.prov.step {
            args["step"] = json!(step);
        }
        if let Some(span) = e.prov.span {
            match source.map(|src| span.line_col(src)) {
                Some(at) => {
                    args["line"] = json!(at.line);
                    args["col"] = json!(at.col);
                }
                None => args["span"] = json!([span.start, span.end]),
            }
        }
        if let Some(stall) = e.stall {
            args["stall"] = serde_json::to_value(stall).unwrap_or(Value::Null);
            let (label, cycles) = match stall {
                StallReason::QueueFull { cycles } => ("queue full", cycles),
                StallReason::WaitFlag { cycles, .. } => ("wait flag", cycles),
                StallReason::Bandwidth { cycles } => ("GM bandwidth", cycles),
                StallReason::Barrier { cycles } => ("barrier", cycles),
            };
            // A bandwidth stall is inside the transfer; the others precede the start.
            let (ts, on) = match stall {
                StallReason::Bandwidth { .. } => (e.end.saturating_sub(cycles), e.pipe),
                StallReason::QueueFull { .. } => (e.dispatch.saturating_sub(cycles + 1), Pipe::S),
                _ => (e.start.saturating_sub(cycles), e.pipe),
            };
            if cycles > 0 && stall_visible(stall) {
                events.push(json!({
                    "ph": "X", "pid": PID, "tid": tid(on), "cat": "stall", "name": label,
                    "ts": ts, "dur": cycles, "args": {"index": e.index, "stall": args["stall"].clone()}
                }));
            }
        }
        events.push(json!({
            "ph": "X", "pid": PID, "tid": tid(e.pipe), "cat": "instr", "name": name,
            "ts": e.start, "dur": e.end - e.start, "args": args
        }));
    }
    for (i, f) in result.flags.iter().enumerate() {
        let (Some(wait), Some(_)) = (f.wait_cycle, f.wait_instr) else {
            continue;
        };
        let name = format!("flag {}->{} #{}", f.src, f.dst, f.id);
        // The arrow leaves the end of the set slice and lands on the wait's slice.
        events.push(json!({"ph": "s", "pid": PID, "tid": tid(f.src), "id": i, "cat": "flag", "name": name, "ts": f.set_cycle.saturating_sub(1)}));
        events.push(json!({"ph": "f", "bp": "e", "pid": PID, "tid": tid(f.dst), "id": i, "cat": "flag", "name": name, "ts": wait}));
    }
    json!({
        "traceEvents": events,
        "displayTimeUnit": "ns",
        "otherData": {
            "units": "1 cycle is shown as 1 us",
            "cycles": result.cycles,
            "trace_truncated": result.trace_truncated,
        }
    })
}

fn stall_visible(s: StallReason) -> bool {
    !matches!(s, StallReason::Barrier { .. })
}
