//! The Compare panel: the kernel on screen under a second option set (preset, sync,
//! alias mode, pass switches), both runs' timelines stacked on one time axis and a
//! summary of what differs. The second option set is part of the share link.

use tilescope::types::Pipe;
use web_sys::HtmlSelectElement;
use yew::prelude::*;

use super::{panels::EmptyState, use_app};
use crate::page::palette::pipe_color;
use crate::page::state::{Action, Compared};
use crate::protocol::options::{AliasMode, CompileOptions, Preset, SyncStrategy};
use crate::protocol::SimOutput;

/// Busy intervals closer than this share of the run merge into one bar, so a lane is a
/// few hundred elements however long the run.
const MERGE_SHARE: f64 = 1.0 / 400.0;

#[function_component]
pub fn ComparePanel() -> Html {
    let app = use_app();
    let Some(b) = app.view.compare.clone() else {
        let start = {
            let app = app.clone();
            Callback::from(move |_: MouseEvent| {
                let a = &app.view.options;
                let sync = if a.sync == SyncStrategy::Barrier {
                    SyncStrategy::Auto
                } else {
                    SyncStrategy::Barrier
                };
                app.dispatch(Action::SetCompare(Some(Box::new(CompileOptions {
                    sync,
                    ..a.clone()
                }))));
            })
        };
        return html! {
            <EmptyState title="Compare two configurations">
                {"Run the same kernel under a second option set and see both timelines on one axis. "}
                <button class="tb-button small" data-testid="compare-start" onclick={start}>{"Compare with sync barrier"}</button>
            </EmptyState>
        };
    };
    // One select per option of B; the reducer reads the value (`Action::SetCompareOption`).
    let select = |field: &'static str, values: Vec<(&'static str, bool)>| {
        let app = app.clone();
        let onchange = Callback::from(move |e: Event| {
            if let Some(s) = e.target_dyn_into::<HtmlSelectElement>() {
                app.dispatch(Action::SetCompareOption(field, s.value()));
            }
        });
        html! {
            <label class="tb-field">
                <span class="tb-label">{field}</span>
                <select data-testid={format!("compare-{field}")} {onchange}>
                    { for values.into_iter().map(|(v, on)| html! { <option value={v} selected={on}>{v}</option> }) }
                </select>
            </label>
        }
    };
    // B's optional passes, each a switch (`Action::SetCompareOption("pass", name)`).
    let passes = tilescope::passes::optional_passes()
        .into_iter()
        .map(|name| {
            let app = app.clone();
            let off = b.disabled_passes.iter().any(|p| p == name);
            let onchange = Callback::from(move |_: Event| {
                app.dispatch(Action::SetCompareOption("pass", name.to_string()))
            });
            html! {
                <label class="check" data-testid="compare-pass" data-pass={name}>
                    <input type="checkbox" checked={!off} {onchange} />{name}
                </label>
            }
        });
    let stop = {
        let app = app.clone();
        Callback::from(move |_: MouseEvent| app.dispatch(Action::SetCompare(None)))
    };
    let head = html! {
        <div class="compare-head">
            <span class="muted">{format!("A: {} · {} · {}", crate::protocol::options::preset_name(&app.view.options), app.view.options.sync.name(), app.view.options.alias.name())}</span>
            <span>{"B:"}</span>
            {select("preset", Preset::ALL.iter().map(|p| (p.name(), Preset::of(&b) == Some(*p))).collect())}
            {select("sync", SyncStrategy::ALL.iter().map(|s| (s.name(), *s == b.sync)).collect())}
            {select("alias", AliasMode::ALL.iter().map(|a| (a.name(), *a == b.alias)).collect())}
            <details class="compare-passes">
                <summary>{format!("passes ({} off)", b.disabled_passes.len())}</summary>
                <div class="compare-pass-list">{for passes}</div>
            </details>
            <button class="tb-icon" onclick={stop} title="Stop comparing" aria-label="Stop comparing">{"×"}</button>
        </div>
    };
    let (Some(a), Some(second)) = (app.results.sim.clone(), app.results.compare_sim.clone()) else {
        return html! { <div class="compare">{head}<EmptyState title="Comparing">{"Simulating both configurations…"}</EmptyState></div> };
    };
    let bsim = match &*second {
        Compared::Ran(sim) => sim,
        Compared::Failed(error) => {
            return html! { <div class="compare">{head}<EmptyState title="B does not compile">{error.clone()}</EmptyState></div> };
        }
    };
    let span = a.cycles.max(bsim.cycles).max(1);
    html! {
        <div class="compare" data-testid="compare">
            {head}
            {summary(&a, bsim)}
            <div class="section-title">{format!("Timelines on one axis: 0 to {span} cycles")}</div>
            {lanes("A", &a, span)}
            {lanes("B", bsim, span)}
        </div>
    }
}

fn summary(a: &SimOutput, b: &SimOutput) -> Html {
    let row = |name: String, x: u64, y: u64| {
        let diff = y as i64 - x as i64;
        html! {
            <tr><td>{name}</td><td class="mono">{x}</td><td class="mono">{y}</td>
                <td class={classes!("mono", (diff < 0).then_some("better"), (diff > 0).then_some("worse"))}>{format!("{diff:+}")}</td></tr>
        }
    };
    let busy = |s: &SimOutput, p: Pipe| s.lane(p).map_or(0, |l| l.busy);
    let pipes = Pipe::ALL
        .into_iter()
        .filter(|p| a.lane(*p).is_some() || b.lane(*p).is_some());
    let verdict = |s: &SimOutput| if s.reference_match { "✓" } else { "✕" };
    html! {
        <table class="compare-summary" data-testid="compare-summary">
            <thead><tr><th /><th>{"A"}</th><th>{"B"}</th><th>{"B − A"}</th></tr></thead>
            <tbody>
                {row("cycles".into(), a.cycles, b.cycles)}
                {row("set/wait pairs".into(), a.syncs, b.syncs)}
                {row("races".into(), a.races.len() as u64, b.races.len() as u64)}
                { for pipes.map(|p| row(format!("{} busy", p.name()), busy(a, p), busy(b, p))) }
                <tr><td>{"outputs match the reference"}</td><td>{verdict(a)}</td><td>{verdict(b)}</td><td /></tr>
            </tbody>
        </table>
    }
}

/// One run's lanes, each a row of busy bars placed on `span` cycles.
fn lanes(label: &str, s: &SimOutput, span: u64) -> Html {
    let merge = (span as f64 * MERGE_SHARE) as u64;
    let pct = |c: u64| c as f64 * 100.0 / span as f64;
    let rows = s.lanes.iter().map(|lane| {
        let mut bars: Vec<(u64, u64)> = Vec::new();
        for slice in &lane.slices {
            match bars.last_mut() {
                Some(last) if slice.start <= last.1 + merge => last.1 = last.1.max(slice.end),
                _ => bars.push((slice.start, slice.end)),
            }
        }
        let color = pipe_color(lane.pipe);
        html! {
            <div class="cmp-lane">
                <span class="cmp-pipe">{lane.pipe.name()}</span>
                <div class="cmp-track">
                    { for bars.iter().map(|(from, to)| html! {
                        <div class="cmp-bar" style={format!("left:{:.3}%;width:{:.3}%;background:{color}", pct(*from), pct(to - from).max(0.1))} />
                    }) }
                </div>
            </div>
        }
    });
    html! {
        <div class="cmp-run">
            <div class="cmp-run-label">{format!("{label}: {} cycles", s.cycles)}</div>
            {for rows}
        </div>
    }
}
