//! The simulated timeline: one lane per pipe. A shell until the simulator lands.

use tilescope::types::Pipe;
use yew::prelude::*;

use super::use_app;

#[function_component]
pub fn TimelinePanel() -> Html {
    let app = use_app();
    let sim = app.sim.clone();
    let cycles = sim.as_ref().map_or(0, |s| s.cycles.max(1));
    let lanes = Pipe::ALL.iter().map(|pipe| {
        let slices = sim
            .iter()
            .flat_map(|s| s.slices.iter())
            .filter(|s| s.pipe == *pipe)
            .map(|s| {
                let left = s.start as f64 * 100.0 / cycles as f64;
                let width =
                    ((s.end.saturating_sub(s.start)) as f64 * 100.0 / cycles as f64).max(0.05);
                html! {
                    <div class="slice" style={format!("left:{left:.3}%;width:{width:.3}%")}
                        title={format!("{} · {}–{}", s.label, s.start, s.end)} />
                }
            });
        html! {
            <div class="lane">
                <div class="lane-name">{pipe.name()}</div>
                <div class="lane-track">{ for slices }</div>
            </div>
        }
    });
    html! {
        <div class="timeline">
            <div class="timeline-head">
                <span>{"Pipes"}</span>
                <span class="timeline-cycles">
                    { if sim.is_some() { format!("{cycles} cycles · cursor {}", app.view.cursor) } else { "no simulation yet".to_string() } }
                </span>
            </div>
            <div class="lanes">{ for lanes }</div>
            if sim.is_none() {
                <div class="timeline-note">
                    {"The timing simulator fills these lanes: each instruction as a bar on its pipe, \
                      stalls and set/wait flag arrows between pipes. It will appear here once the \
                      simulator is part of the build."}
                </div>
            }
        </div>
    }
}
