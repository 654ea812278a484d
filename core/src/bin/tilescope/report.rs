//! Human and JSON summaries of a simulation.

use serde_json::{json, Value};
use tilescope::diag::Span;
use tilescope::isa::Program;
use tilescope::sim::{PipeStalls, PipeStats, SimResult};

/// Where a source span is, for a race line (`file:line:col: the source line`); `None`
/// when there is no source (hand-written assembly).
pub type Locate<'a> = &'a dyn Fn(Span) -> Option<String>;

/// Per pipe: `busy`, `instructions`, and `shared_bandwidth` (the part of `busy` that
/// MTE2 and MTE3 spent stretched by sharing GM bandwidth).
pub fn pipes_json(pipes: &[PipeStats]) -> Value {
    let mut out = serde_json::Map::new();
    for p in pipes {
        out.insert(
            p.pipe.name().to_string(),
            json!({
                "busy": p.busy,
                "instructions": p.instructions,
                "shared_bandwidth": p.shared_bandwidth,
            }),
        );
    }
    Value::Object(out)
}

/// The fields of `run --json` that a simulation alone provides.
pub fn sim_json(result: &SimResult) -> Value {
    json!({
        "cycles": result.cycles,
        "instructions": result.instructions,
        "pipes": pipes_json(&result.pipes),
        "stalls": result.stalls,
        "syncs": result.syncs,
        "gm_bytes": result.gm_bytes,
        "races": result.races,
        "errors": result.errors,
    })
}

/// Where a pipe's idle cycles went, as one line (`None` when it was never idle), and
/// the `wait_flag` it waited at longest, with its place in the source.
fn idle_text(s: &PipeStalls, program: Option<&Program>, locate: Locate) -> Option<String> {
    let causes = [
        (s.flag_wait, "waiting on flags"),
        (s.barrier, "at barriers"),
        (s.queue_full, "behind a full queue"),
        (s.not_issued, "with nothing issued"),
    ];
    let parts: Vec<String> = causes
        .iter()
        .filter(|(c, _)| *c > 0)
        .map(|(c, what)| format!("{c} {what}"))
        .collect();
    if parts.is_empty() {
        return None;
    }
    let mut line = format!(
        "        idle {}: {}
",
        s.idle(),
        parts.join(", ")
    );
    if let Some(f) = s.flags.first() {
        let ins = program.and_then(|p| p.instrs.get(f.wait_instr as usize));
        let at = ins
            .and_then(|i| i.prov.span)
            .and_then(locate)
            .map_or(String::new(), |l| format!(" ({l})"));
        line.push_str(&format!(
            "        longest: #{} wait_flag {}, {}, {}: {} cycles {}{at}\n",
            f.wait_instr,
            f.src.name(),
            f.dst.name(),
            f.id,
            f.cycles,
            if f.times == 1 {
                "in one wait".to_string()
            } else {
                format!("over {} waits", f.times)
            }
        ));
    }
    Some(line)
}

/// `locate` names the source line of each access of a race; `fixes[i]`, when given,
/// says what orders race `i` under `auto` sync. Each pipe's line says where its idle
/// cycles went; `program` names the `wait_flag` it waited at longest.
pub fn sim_text(
    result: &SimResult,
    program: Option<&Program>,
    locate: Locate,
    fixes: &[String],
) -> String {
    let mut s = format!("cycles: {}\n", result.cycles);
    for p in &result.pipes {
        if p.instructions == 0 {
            continue;
        }
        let share = if result.cycles == 0 {
            0.0
        } else {
            100.0 * p.busy as f64 / result.cycles as f64
        };
        s.push_str(&format!(
            "  {:<5} busy {:>10} cycles ({share:5.1}%), {} instructions",
            p.pipe.name(),
            p.busy,
            p.instructions
        ));
        if p.shared_bandwidth > 0 {
            s.push_str(&format!(
                ", {} cycles of it stretched by shared GM bandwidth",
                p.shared_bandwidth
            ));
        }
        s.push('\n');
        let stalls = result.stalls.iter().find(|x| x.pipe == p.pipe);
        if let Some(idle) = stalls.and_then(|x| idle_text(x, program, locate)) {
            s.push_str(&idle);
        }
    }
    s.push_str(&format!("syncs: {}\n", result.syncs));
    for (i, race) in result.races.iter().enumerate() {
        s.push_str(&format!("race: {}\n", race.message));
        for a in [&race.first, &race.second] {
            if let Some(at) = a.instr.prov.span.and_then(locate) {
                s.push_str(&format!(
                    "  {} #{}: {at}\n",
                    a.instr.pipe.name(),
                    a.instr.index
                ));
            }
        }
        if let Some(fix) = fixes.get(i) {
            s.push_str(&format!("  {fix}\n"));
        }
    }
    for e in &result.errors {
        s.push_str(&format!("error: {}\n", e.message));
    }
    s
}

/// A line per `if` of the program: its condition, where it is, and which way it went.
pub fn branches_text(program: &Program, result: &SimResult, locate: Locate) -> String {
    let mut s = String::new();
    for b in &result.branches {
        let cond = program.branch_at(b.instr).map_or("?", |x| x.cond.as_str());
        let at = program
            .instrs
            .get(b.instr as usize)
            .and_then(|i| i.prov.span)
            .and_then(locate)
            .map_or(String::new(), |l| format!("  {l}\n"));
        s.push_str(&format!(
            "branch: `if {cond}` taken {} of {} times\n{at}",
            b.taken, b.runs
        ));
    }
    s
}

/// The branches of `run --json`: each `if`'s `loop` instruction, condition and counts.
pub fn branches_json(program: &Program, result: &SimResult) -> Value {
    let rows: Vec<Value> = result
        .branches
        .iter()
        .map(|b| {
            json!({
                "instr": b.instr,
                "if": program.branch_at(b.instr).map(|x| x.cond.as_str()),
                "runs": b.runs,
                "taken": b.taken,
            })
        })
        .collect();
    Value::Array(rows)
}
