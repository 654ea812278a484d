//! Simulation results: cycles against the lower bound, the path bound and the roofline,
//! per-pipe utilisation, where each pipe's cycles went (`stalls.rs`), and the output
//! tensors compared with the reference interpreter (each downloadable as .npy).

use yew::prelude::*;

use super::{panels::EmptyState, stalls::StallsView, use_app};
use crate::page::dom;
use crate::page::palette::pipe_color;

#[function_component]
pub fn OutputPanel() -> Html {
    let app = use_app();
    let Some(sim) = app.results.sim.clone() else {
        let text = if app.requests.simulating {
            "Simulating…"
        } else {
            "After a simulation: cycles against the bound, the path bound and the roofline, \
             how busy each pipe was and why it idled, and the output tensors compared with \
             the reference interpreter (downloadable as .npy)."
        };
        return html! { <EmptyState title="Output">{text}</EmptyState> };
    };
    // A kernel with nothing to run (its loops all empty) takes 0 cycles, its bound.
    let efficiency = if sim.cycles > 0 {
        sim.bound as f64 * 100.0 / sim.cycles as f64
    } else {
        100.0
    };
    let roofline = sim.roofline.clone();
    let roof_pct = if sim.cycles > 0 {
        roofline.cycles as f64 * 100.0 / sim.cycles as f64
    } else {
        100.0
    };
    let roof_title = format!(
        "What no program of this kernel beats: {} GM bytes at the machine's fastest paths take {} cycles, \
         {} multiply-accumulates at the matrix unit's peak take {}",
        roofline.gm_read_bytes + roofline.gm_write_bytes,
        roofline.gm_cycles,
        roofline.macs,
        roofline.matrix_cycles
    );
    // The path bound, where the whole trace was kept.
    let path = sim.path_bound.map(|p| {
        let pct = if sim.cycles > 0 { p as f64 * 100.0 / sim.cycles as f64 } else { 100.0 };
        let title = format!(
            "The lower bound ({}) plus the work the busiest pipe must wait for before it can \
             start and that must follow its end, along this run's data dependences: no order \
             of these instructions takes fewer cycles. The rest of the gap to the cycles is \
             the schedule's.",
            sim.bound
        );
        html! {
            <div class="stat" {title}><div class="stat-num" data-testid="stat-path-bound">{p}</div><div class="stat-label">{format!("path bound ({pct:.0}%)")}</div></div>
        }
    });
    let verdict = if sim.outputs.is_empty() {
        html! { <span class="badge badge-muted">{"no outputs"}</span> }
    } else if sim.reference_match {
        html! { <span class="badge badge-ok">{"✓ matches reference"}</span> }
    } else {
        html! { <span class="badge badge-error">{"✕ differs from reference"}</span> }
    };
    let pipes = sim.lanes.iter().map(|l| {
        let pct = if sim.cycles > 0 { l.busy as f64 * 100.0 / sim.cycles as f64 } else { 0.0 };
        // The stretch from sharing GM bandwidth is hatched at the end of the busy bar.
        let shared_pct = if l.busy > 0 { l.shared_bandwidth as f64 * 100.0 / l.busy as f64 } else { 0.0 };
        let title = (l.shared_bandwidth > 0).then(|| {
            format!(
                "{} of {} busy cycles: GM transfers stretched while MTE2 and MTE3 shared the bandwidth",
                l.shared_bandwidth, l.busy
            )
        });
        html! {
            <div class="util-row">
                <span class="util-pipe">{l.pipe.name()}</span>
                <div class="util-bar" {title}>
                    <div class="util-fill" style={format!("width:{:.2}%;background:{}", pct.min(100.0), pipe_color(l.pipe))}>
                        if l.shared_bandwidth > 0 {
                            <div class="util-shared" style={format!("width:{:.2}%", shared_pct.min(100.0))} />
                        }
                    </div>
                </div>
                <span class="util-num">{format!("{pct:.1}%")}</span>
                <span class="util-detail muted">{format!("{} busy · {} instr", l.busy, l.instructions)}</span>
            </div>
        }
    });
    let shared_note = sim.lanes.iter().any(|l| l.shared_bandwidth > 0).then(|| html! {
        <div class="util-note muted">{"Hatched: cycles GM transfers were stretched while MTE2 and MTE3 shared the bandwidth."}</div>
    });
    let tensors = sim.outputs.iter().map(|t| {
        let npy = t.npy.clone();
        let name = t.name.clone();
        let download = Callback::from(move |_| {
            dom::download(&format!("{name}.npy"), &npy, "application/octet-stream")
        });
        let shape = t.shape.iter().map(u64::to_string).collect::<Vec<_>>().join("×");
        let more = t.shape.iter().product::<u64>() > t.preview.len() as u64;
        html! {
            <tr>
                <td><code class="tensor-name">{t.name.clone()}</code></td>
                <td class="mono">{format!("{} [{shape}]", t.dtype)}</td>
                <td>
                    if t.matches { <span class="badge badge-ok">{"match"}</span> }
                    else { <span class="badge badge-error">{format!("{} differ", t.mismatches)}</span> }
                </td>
                <td class="mono">{format!("{:.2e}", t.max_abs_err)}</td>
                <td class="mono preview">{format!("[{}{}]", t.preview.join(", "), if more { ", …" } else { "" })}</td>
                <td><button class="tb-button small" onclick={download} title="Download as .npy">{".npy ↓"}</button></td>
            </tr>
        }
    });
    html! {
        <div class="output">
            <div class="stats">
                <div class="stat"><div class="stat-num" data-testid="stat-cycles">{sim.cycles}</div><div class="stat-label">{"cycles"}</div></div>
                <div class="stat"><div class="stat-num" data-testid="stat-bound">{sim.bound}</div><div class="stat-label">{"lower bound"}</div></div>
                <div class="stat"><div class="stat-num">{format!("{efficiency:.0}%")}</div><div class="stat-label">{"of bound"}</div></div>
                {path}
                <div class="stat" title={roof_title}><div class="stat-num" data-testid="stat-roofline">{roofline.cycles}</div><div class="stat-label">{format!("roofline ({roof_pct:.0}%)")}</div></div>
                <div class="stat"><div class="stat-num">{sim.syncs}</div><div class="stat-label">{"set/wait pairs"}</div></div>
                <div class="stat"><div class="stat-num">{sim.races.len()}</div><div class="stat-label">{"races"}</div></div>
                <div class="stat stat-verdict">{verdict}</div>
            </div>
            <div class="section-title">{"Pipe utilisation"}</div>
            <div class="util">{for pipes}</div>
            {shared_note}
            <StallsView sim={sim.clone()} />
            <div class="section-title">{"Outputs"}</div>
            <table class="tensors">
                <thead><tr><th>{"name"}</th><th>{"type"}</th><th>{"reference"}</th><th>{"max abs err"}</th><th>{"values"}</th><th /></tr></thead>
                <tbody>{for tensors}</tbody>
            </table>
        </div>
    }
}
