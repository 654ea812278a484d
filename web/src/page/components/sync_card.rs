//! Why a set/wait pair is there: shown when the selected instruction (picked in the
//! Assembly panel or on the timeline) is a `set_flag` or `wait_flag`. It names the
//! hazard, the buffer, both instructions with their source lines, the event id,
//! whether the pair orders a loop's back edge and whether either end runs only inside
//! an `if`, with links to each place.

use tilescope::explain::{Site, SyncRow};
use yew::prelude::*;

use super::use_app;
use crate::page::state::Action;
use crate::page::text;

/// What the pair prevents, in a sentence.
fn reason(r: &SyncRow) -> String {
    let (p, c) = (r.src.name(), r.dst.name());
    let what = r.buffer.as_deref().unwrap_or("the buffer");
    match r.kind.as_str() {
        "RAW" => format!("{c} reads {what} after {p} writes it: without the pair {c} could read it before the write lands."),
        "WAR" => format!("{c} overwrites {what} while {p} may still read it: the pair holds the write until the read is done."),
        "WAW" => format!("{c} writes {what} after {p} wrote it: the pair keeps the two writes in order."),
        "flag-reuse" => format!("{c} sets an event id again that an earlier {c} → {p} pair used: the pair holds the new set until {p} has waited on the earlier one, so the flag is never set twice."),
        _ => format!("The flag {p} → {c} is set again: the pair waits for its previous use first."),
    }
}

fn at(site: &Site) -> String {
    match (site.line, site.col) {
        (Some(l), Some(c)) => format!("{} at {l}:{c}", site.pipe.name()),
        _ => site.pipe.name().to_string(),
    }
}

/// The card of the pair the selected instruction belongs to (nothing when it is not a
/// `set_flag` or `wait_flag`).
#[function_component]
pub fn SyncCard() -> Html {
    let app = use_app();
    let app = &app;
    let row = app
        .ui
        .selected_instr
        .and_then(|i| app.results.compile.as_ref()?.sync_of(i).cloned());
    let Some(r) = row else {
        return html! {};
    };
    let jump_to = |site: &Site| {
        let app = app.clone();
        let (line, col) = (site.line.unwrap_or(1), site.col.unwrap_or(1));
        Callback::from(move |_: MouseEvent| {
            let start = text::line_start(&app.view.source, line.saturating_sub(1));
            let offset = app.view.source[start..]
                .char_indices()
                .nth(col.saturating_sub(1))
                .map_or(start, |(i, _)| start + i);
            app.dispatch(Action::JumpTo(offset));
        })
    };
    let select = |index: Option<usize>, label: &str| {
        let app = app.clone();
        let instr = index.map(|i| i as u32);
        let label = format!(
            "{label} #{}",
            index.map_or("-".to_string(), |i| i.to_string())
        );
        html! {
            <button class="tb-button small" disabled={instr.is_none()}
                onclick={Callback::from(move |_: MouseEvent| app.dispatch(Action::SelectInstr(instr)))}>{label}</button>
        }
    };
    let ids = if r.dynamic {
        format!(
            "event ids {} follow the slot of {}",
            r.events
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            r.buffer.as_deref().unwrap_or("the buffer")
        )
    } else {
        format!("event id {}", r.event)
    };
    let back = r.back_edge.then_some(
        " · back edge: it orders one iteration against the next, primed before the loop and drained after it",
    );
    // Whether the producer or the consumer runs only inside an `if` (the step graph
    // carries each step's conditions).
    let branch_of = |step: Option<u32>| {
        let graph = app.results.compile.as_ref()?.steps.as_ref()?;
        graph.node(step?)?.step.branch.clone()
    };
    let branches: Vec<String> = [
        ("producer", branch_of(r.producer_step)),
        ("consumer", branch_of(r.consumer_step)),
    ]
    .into_iter()
    .filter_map(|(who, c)| Some(format!("the {who} runs only if {}", c?)))
    .collect();
    let inside = match (r.set_index, r.wait_index) {
        (Some(set), Some(wait)) => app
            .results
            .compile
            .as_ref()
            .and_then(|c| c.branch_around(set, wait)),
        _ => None,
    };
    let branch_note = (!branches.is_empty()).then(|| {
        let runs = if inside.is_some() {
            "its set_flag and wait_flag are inside the if region, so the pair runs only when the branch does"
        } else {
            "its set_flag or wait_flag is outside the if region, so the pair runs on every path"
        };
        format!("Branch: {}. The pair: {runs}.", branches.join("; "))
    });
    html! {
        <div class="sync-card" data-testid="sync-card">
            <div class="sync-card-title">
                {format!("{} → {} · {} on {}", r.src.name(), r.dst.name(), r.kind, r.buffer.as_deref().unwrap_or("-"))}
            </div>
            <p class="sync-card-why">{reason(&r)}</p>
            <p class="muted small">{ids}{back.unwrap_or("")}</p>
            if let Some(note) = branch_note {
                <p class="muted small" data-testid="sync-card-branch">{note}</p>
            }
            if let Some(region) = &r.region {
                <p class="muted small mono">{format!("{}: {}", r.buffer.as_deref().unwrap_or("-"), region.text())}</p>
            }
            <div class="sync-card-links">
                <button class="tb-button small" onclick={jump_to(&r.producer)}>{format!("producer: {}", at(&r.producer))}</button>
                <button class="tb-button small" onclick={jump_to(&r.consumer)}>{format!("consumer: {}", at(&r.consumer))}</button>
                {select(r.set_index, "set_flag")}
                {select(r.wait_index, "wait_flag")}
            </div>
        </div>
    }
}
