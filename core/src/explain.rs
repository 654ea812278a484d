//! Why each sync is there, for people: insert-sync's record of every set/wait pair it
//! placed (the hazard it orders, the buffer by its source name, the producer and the
//! consumer with their source positions, whether it orders a loop's back edge, its event
//! ids) joined with where the pair's `set_flag` and `wait_flag` ended up in the final
//! program. `tilescope compile --emit sync` prints [`sync_table`]; the JSON results
//! carry [`sync_json`].

use crate::compile::CompileResult;
use crate::diag::Span;
use crate::isa::{Op, Program, Val};
use crate::passes::sync::{PairInfo, Reason, Region, RemovedPair, SyncReport};
use crate::sim::{AccessKind, Race};
use crate::types::Pipe;
use serde::{Deserialize, Serialize};

/// A source position of one side of a pair.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Site {
    pub pipe: Pipe,
    /// 1-based; `None` when the instruction has no source span.
    pub line: Option<usize>,
    pub col: Option<usize>,
}

/// One set/wait pair as users read it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SyncRow {
    pub src: Pipe,
    pub dst: Pipe,
    /// The first event id (for a dynamic pair, the id of slot 0).
    pub event: u32,
    /// Every id the pair uses: one, or one per slot for a dynamic pair.
    pub events: Vec<u32>,
    /// The id follows the slot of the buffer the hazard is on.
    pub dynamic: bool,
    /// On the slots of a `buffers` tile: the set's id is `event + (counter +
    /// slot_offsets[0]) % slots`, the wait's with `slot_offsets[1]`: the producer's and
    /// the consumer's slot index on that buffer (`b[(i + 1) % 2]` has offset 1).
    // Always written (as `null` when absent): the playground's worker codec, postcard,
    // cannot read a field a serialiser may leave out.
    #[serde(default)]
    pub slot_offsets: Option<[u32; 2]>,
    /// `RAW`, `WAR`, `WAW`, or `flag-reuse` (a wait ordered before the next set of the
    /// same flag).
    pub kind: String,
    /// The buffer (by its tile's source name) or tensor the hazard is on.
    pub buffer: Option<String>,
    /// The bytes of each of the buffer's slots (none for a tensor).
    pub region: Option<Region>,
    pub producer: Site,
    pub consumer: Site,
    /// Orders a dependence across a loop's back edge (primed before the loop, drained
    /// after it).
    pub back_edge: bool,
    /// Positions of the pair's `set_flag` and `wait_flag` in the final program.
    pub set_index: Option<usize>,
    pub wait_index: Option<usize>,
    /// The steps of the producer and the consumer: a view joins them with the step
    /// graph (whether one runs only inside an `if`).
    #[serde(default)]
    pub producer_step: Option<u32>,
    #[serde(default)]
    pub consumer_step: Option<u32>,
}

fn site(pipe: Pipe, span: Option<Span>, source: &str) -> Site {
    let at = span.map(|s| s.line_col(source));
    Site {
        pipe,
        line: at.map(|a| a.line),
        col: at.map(|a| a.col),
    }
}

/// The rows of every pair `report` placed; `program` (the final one) gives the set and
/// wait positions: the first `set_flag` (`wait_flag`) of the pair's pipes and first id
/// that comes from the producer's (consumer's) source span and no earlier pair claimed.
/// Pairs claim in the program order of their first instruction: pairs that share an id
/// (straight-line pairs whose ids insert-sync recycled) take turns on it in that order.
pub fn sync_rows(report: &SyncReport, program: Option<&Program>, source: &str) -> Vec<SyncRow> {
    let mut claimed = vec![false; program.map_or(0, |p| p.instrs.len())];
    let mut turns: Vec<usize> = (0..report.pairs.len()).collect();
    // By the first three levels of each pair's first path (a pair without one first).
    turns.sort_by_key(|&k| {
        let first = report.pairs.get(k).and_then(|p| p.paths.first());
        first.map_or(&[][..], |f| &f[..f.len().min(3)])
    });
    let mut found = vec![(None, None); report.pairs.len()];
    for k in turns {
        let Some(p) = report.pairs.get(k) else {
            continue;
        };
        let event = p.ids.first().copied().unwrap_or(0);
        let mut find = |set: bool| {
            let program = program?;
            let span = if set {
                p.producer.span
            } else {
                p.consumer.span
            };
            let at = program.instrs.iter().enumerate().position(|(i, ins)| {
                let (src, dst, id) = match (&ins.op, set) {
                    (Op::SetFlag { src, dst, id }, true)
                    | (Op::WaitFlag { src, dst, id }, false) => (*src, *dst, *id),
                    _ => return false,
                };
                let id_matches = match id {
                    Val::Imm(x) => !p.dynamic && x == i64::from(event),
                    Val::Reg(_) => p.dynamic,
                };
                !claimed.get(i).copied().unwrap_or(true)
                    && src == p.src
                    && dst == p.dst
                    && id_matches
                    && ins.prov.span == span
            })?;
            if let Some(c) = claimed.get_mut(at) {
                *c = true;
            }
            Some(at)
        };
        if let Some(f) = found.get_mut(k) {
            *f = (find(true), find(false));
        }
    }
    report
        .pairs
        .iter()
        .zip(found)
        .map(|(p, (set_index, wait_index))| SyncRow {
            src: p.src,
            dst: p.dst,
            event: p.ids.first().copied().unwrap_or(0),
            events: p.ids.clone(),
            dynamic: p.dynamic,
            slot_offsets: p.slot_offsets,
            kind: kind(p),
            buffer: p
                .buffer
                .as_deref()
                .map(|b| buffer_label(b, p.buffer_span, source)),
            region: p.region.clone(),
            producer: site(p.src, p.producer.span, source),
            consumer: site(p.dst, p.consumer.span, source),
            back_edge: p.loop_carried.is_some(),
            set_index,
            wait_index,
            producer_step: p.producer.step,
            consumer_step: p.consumer.step,
        })
        .collect()
}

/// A pair insert-sync found redundant, and the placed pairs (rows of [`sync_rows`])
/// whose chain of pipes orders what it would have.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RemovedRow {
    pub src: Pipe,
    pub dst: Pipe,
    pub kind: String,
    pub buffer: Option<String>,
    pub producer: Site,
    pub consumer: Site,
    pub covered_by: Vec<usize>,
}

/// The longest source excerpt that names a temporary.
const EXCERPT_CHARS: usize = 32;

/// A buffer's name as the student knows it: the source names of the tiles it holds
/// (`t`; `l, m` for a buffer two share), else, for a temporary the compiler made (IR
/// names `%0`, `3`), the source expression at `span` that made it; never the IR's
/// numbering when there is source to show.
pub fn buffer_label(name: &str, span: Option<Span>, source: &str) -> String {
    let named: Vec<&str> = name
        .split('|')
        .map(|n| n.trim_start_matches('%'))
        .filter(|n| !n.is_empty() && !n.chars().all(|c| c.is_ascii_digit()))
        .collect();
    if !named.is_empty() {
        return named.join(", ");
    }
    let excerpt = span
        .and_then(|s| source.get(s.start as usize..s.end as usize))
        .map(|text| text.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|text| !text.is_empty());
    match excerpt {
        Some(text) if text.chars().count() > EXCERPT_CHARS => {
            let cut: String = text.chars().take(EXCERPT_CHARS - 1).collect();
            format!("{cut}…")
        }
        Some(text) => text,
        None => name.to_string(),
    }
}

pub fn removed_rows(report: &SyncReport, source: &str) -> Vec<RemovedRow> {
    report
        .removed
        .iter()
        .map(|r: &RemovedPair| RemovedRow {
            src: r.src,
            dst: r.dst,
            kind: r.hazard.map_or("hazard", |h| h.name()).to_string(),
            buffer: r
                .buffer
                .as_deref()
                .map(|b| buffer_label(b, r.buffer_span, source)),
            producer: site(r.src, r.producer.span, source),
            consumer: site(r.dst, r.consumer.span, source),
            covered_by: r.covered_by.clone(),
        })
        .collect()
}

/// For each race of a run of `source` compiled under `options`, the pair `auto` places
/// that orders it (`race_fix`): what `tilescope run --sync none`, the wasm API and the
/// playground show. Empty for a run compiled with sync, or without races.
pub fn race_fixes(
    options: &crate::compile::CompileOptions,
    source: &str,
    races: &[Race],
) -> Vec<Option<SyncRow>> {
    use crate::compile::{compile, CompileOptions, SyncStrategy};
    if options.sync != SyncStrategy::None || races.is_empty() {
        return Vec::new();
    }
    let auto = compile(
        source,
        &CompileOptions {
            sync: SyncStrategy::Auto,
            ..options.clone()
        },
    );
    let rows = auto
        .sync
        .as_ref()
        .map(|report| sync_rows(report, auto.program.as_ref(), source))
        .unwrap_or_default();
    races
        .iter()
        .map(|race| race_fix(race, &rows, source).cloned())
        .collect()
}

/// The pair `auto` places that orders `race` (found in a run compiled without sync):
/// the pair from the pipe of the race's first access to the pipe of its second, of the
/// race's hazard, whose producer and consumer are the racing instructions' source
/// positions, else one on the same pipes, hazard and tensor. `None` when `auto` orders
/// the two accesses only through a chain of other pairs.
pub fn race_fix<'a>(race: &Race, auto: &'a [SyncRow], source: &str) -> Option<&'a SyncRow> {
    let (first, second) = (&race.first, &race.second);
    let hazard = match (first.kind, second.kind) {
        (AccessKind::Write, AccessKind::Read) => "RAW",
        (AccessKind::Read, AccessKind::Write) => "WAR",
        (AccessKind::Write, AccessKind::Write) => "WAW",
        // Two reads never race.
        (AccessKind::Read, AccessKind::Read) => return None,
    };
    let producer = site(first.instr.pipe, first.instr.prov.span, source);
    let consumer = site(second.instr.pipe, second.instr.prov.span, source);
    let candidates = || {
        auto.iter()
            .filter(move |r| r.src == producer.pipe && r.dst == consumer.pipe && r.kind == hazard)
    };
    let same_lines =
        |r: &&SyncRow| r.producer.line == producer.line && r.consumer.line == consumer.line;
    candidates().find(same_lines).or_else(|| {
        race.buffer
            .as_ref()
            .and_then(|b| candidates().find(|r| r.buffer.as_ref() == Some(b)))
    })
}

/// [`race_fix`]'s answer as a sentence; `at` writes a source position (`file:line:col`
/// in the CLI, `line N` in the playground).
pub fn race_fix_text(fix: Option<&SyncRow>, at: &dyn Fn(&Site) -> String) -> String {
    match fix {
        Some(r) => format!(
            "auto orders it with a {} -> {} pair ({} on {}): set_flag after {}, wait_flag before {}",
            r.src.name(),
            r.dst.name(),
            r.kind,
            r.buffer.as_deref().unwrap_or("-"),
            at(&r.producer),
            at(&r.consumer)
        ),
        None => "auto orders it through a chain of other pairs".to_string(),
    }
}

fn kind(p: &PairInfo) -> String {
    match (p.reason, p.hazard) {
        (Reason::Hazard, Some(h)) => h.name().to_string(),
        (Reason::Hazard, None) => "hazard".to_string(),
        (Reason::FlagReuse, _) => "flag-reuse".to_string(),
    }
}

/// `{ pairs, removed, notes }`: the pairs placed, the pairs found redundant (with the
/// placed pairs that cover each), and every event-id reduction and barrier fallback.
pub fn sync_json(result: &CompileResult, source: &str) -> serde_json::Value {
    let Some(report) = &result.sync else {
        return serde_json::Value::Null;
    };
    let rows = sync_rows(report, result.program.as_ref(), source);
    serde_json::json!({
        "strategy": report.strategy,
        "alias": report.alias,
        "pairs": rows,
        "removed": removed_rows(report, source),
        "notes": notes(report),
    })
}

/// Every reduction of event ids and every fallback, as sentences.
pub fn notes(report: &SyncReport) -> Vec<String> {
    let mut out = report.notes.clone();
    for r in &report.slot_reductions {
        out.push(format!(
            "event ids ran out: the {} -> {} pairs of loop {} use {} ids for {} slots, so at most {} iterations are in flight",
            r.src.name(),
            r.dst.name(),
            r.loop_id.0,
            r.ids,
            r.slots,
            r.ids
        ));
    }
    if report.barriers > 0 {
        out.push(format!(
            "{} pipe_barrier(ALL) inserted where event ids ran out",
            report.barriers
        ));
    }
    out
}

/// The table `tilescope compile --emit sync` prints: one row per pair, then the notes.
pub fn sync_table(result: &CompileResult, source: &str, file: &str) -> String {
    let Some(report) = &result.sync else {
        return "no sync report: the kernel did not compile\n".to_string();
    };
    let rows = sync_rows(report, result.program.as_ref(), source);
    let at = |s: &Site| match (s.line, s.col) {
        (Some(l), Some(c)) => format!("{file}:{l}:{c}"),
        _ => "-".to_string(),
    };
    let index = |i: Option<usize>| i.map_or("-".to_string(), |i| format!("#{i}"));
    let mut out = format!(
        "{} set/wait pairs ({:?} sync, {} aliasing)\n",
        rows.len(),
        report.strategy,
        report.alias.name()
    );
    out.push_str("pair  flag            id     kind        buffer      producer -> consumer\n");
    for (n, r) in rows.iter().enumerate() {
        let ids = if r.dynamic {
            format!("{}..{} slot", r.event, r.event + r.events.len() as u32 - 1)
        } else {
            r.event.to_string()
        };
        // Explicit slots: the phase of each side's slot index on the buffer.
        let phases = r
            .slot_offsets
            .map_or(String::new(), |[p, c]| format!("  (slot i+{p} -> i+{c})"));
        out.push_str(&format!(
            "{n:<5} {:<15} {ids:<6} {:<11} {:<11} {} {} {} -> {} {} {}{}{phases}\n",
            format!("{} -> {}", r.src.name(), r.dst.name()),
            r.kind,
            r.buffer.as_deref().unwrap_or("-"),
            r.producer.pipe.name(),
            at(&r.producer),
            index(r.set_index),
            r.consumer.pipe.name(),
            at(&r.consumer),
            index(r.wait_index),
            if r.back_edge { "  (back edge)" } else { "" }
        ));
        if let Some(region) = &r.region {
            out.push_str(&format!(
                "      {}: {}\n",
                r.buffer.as_deref().unwrap_or("-"),
                region.text()
            ));
        }
    }
    for r in removed_rows(report, source) {
        let chain: Vec<String> = r.covered_by.iter().map(|i| i.to_string()).collect();
        out.push_str(&format!(
            "removed: {} -> {} {} on {} ({} {} -> {} {}), covered by pairs {}\n",
            r.src.name(),
            r.dst.name(),
            r.kind,
            r.buffer.as_deref().unwrap_or("-"),
            r.producer.pipe.name(),
            at(&r.producer),
            r.consumer.pipe.name(),
            at(&r.consumer),
            if chain.is_empty() {
                "-".to_string()
            } else {
                chain.join(", ")
            }
        ));
    }
    for note in notes(report) {
        out.push_str(&format!("note: {note}\n"));
    }
    out
}
