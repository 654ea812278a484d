//! Below the timeline: every `if` of the kernel, how often the S pipe reached it and
//! how often its condition held, as the simulator counted them. On the canvas each
//! decision is a mark on the S lane (filled: taken, hollow: skipped); a row's buttons
//! put the cursor on its first decision of each kind.

use std::rc::Rc;

use tilescope::diag::LineCol;
use yew::prelude::*;

use super::{use_app, AppContext};
use crate::page::state::Action;
use crate::protocol::SimOutput;

#[derive(Properties, PartialEq)]
pub struct BranchListProps {
    pub sim: Rc<SimOutput>,
}

#[function_component]
pub fn BranchList(props: &BranchListProps) -> Html {
    let app = use_app();
    let sim = &props.sim;
    if sim.branches.is_empty() {
        return Html::default();
    }
    let asm = app.results.asm();
    let rows = sim.branches.iter().map(|b| {
        let line = asm.get(b.instr as usize);
        let cond = line.and_then(|l| l.branch.clone()).unwrap_or_default();
        let at = line.and_then(|l| l.span).map(|span| {
            let source = &app.view.source;
            let at = LineCol::at(source, span.start as usize);
            format!("line {}: {}", at.line, at.line_text(source).trim())
        });
        let skipped = b.runs - b.taken;
        html! {
            <li class="branch-row" data-testid="branch-row" data-runs={b.runs.to_string()} data-taken={b.taken.to_string()}>
                <code>{format!("if {cond}")}</code>
                <span class="branch-count">{verdict(b.taken, b.runs)}</span>
                if let Some(at) = at { <span class="muted small">{at}</span> }
                {jump(&app, sim, b.instr, true, b.taken)}
                {jump(&app, sim, b.instr, false, skipped)}
            </li>
        }
    });
    html! {
        <div class="tl-branches" data-testid="branch-list">
            <div class="section-title">{"Branches"}
                <span class="muted">{" · which way each if went, as the simulator ran it (marks on the S lane: ◆ taken, ◇ skipped)"}</span>
            </div>
            <ul class="branch-rows">{for rows}</ul>
        </div>
    }
}

/// "taken 3 of 8 times", or what a branch that never ran or always went one way means.
fn verdict(taken: u64, runs: u64) -> String {
    match (taken, runs) {
        (_, 0) => "never reached".to_string(),
        (0, _) => format!("skipped all {runs} times"),
        (t, r) if t == r => format!("taken all {runs} times"),
        (t, r) => format!("taken {t} of {r} times"),
    }
}

/// A button that puts the cursor on the first decision of `instr` that went `taken`'s
/// way (none when there was none in the kept trace).
fn jump(app: &AppContext, sim: &SimOutput, instr: u32, taken: bool, count: u64) -> Html {
    let first = sim
        .branch_runs
        .iter()
        .find(|r| r.instr == instr && r.taken == taken)
        .map(|r| r.cycle);
    let (Some(cycle), true) = (first, count > 0) else {
        return Html::default();
    };
    let app = app.clone();
    let onclick = Callback::from(move |_: MouseEvent| {
        app.dispatch(Action::SetCursor(cycle));
        app.dispatch(Action::SelectInstr(Some(instr)));
    });
    let label = if taken {
        "first taken"
    } else {
        "first skipped"
    };
    html! {
        <button class="tb-button small" {onclick} title={format!("Put the cursor on cycle {cycle}")}>{label}</button>
    }
}
