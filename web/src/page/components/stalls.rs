//! Where the cycles go: each pipe's run split into busy cycles and idle cycles by cause
//! (core's `SimResult::stalls`), as a stacked bar whose parts add up to the run, and
//! the `wait_flag`s that held their pipes longest. Each row opens the timeline at the
//! stretch it names (a flag wait with the card saying why its pair is there). This is
//! the view of "why is this not at the bound".

use tilescope::sim::PipeStalls;
use tilescope::types::Pipe;
use yew::prelude::*;

use super::{problems::location, use_app};
use crate::page::palette::pipe_color;
use crate::page::state::Action;
use crate::protocol::{FlagWait, SimOutput};

/// One part of a pipe's run: what it was doing, the stylesheet class of its bar
/// segment, and its cycles.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Part {
    pub what: &'static str,
    pub class: &'static str,
    pub cycles: u64,
}

/// A pipe's run in the order the bar draws it; the parts add up to the run's cycles.
pub fn parts(s: &PipeStalls) -> [Part; 6] {
    [
        Part {
            what: "busy",
            class: "stall-busy",
            cycles: s.busy,
        },
        Part {
            what: "stretched by shared GM bandwidth",
            class: "stall-shared",
            cycles: s.shared_bandwidth,
        },
        Part {
            what: "waiting on flags",
            class: "stall-flag",
            cycles: s.flag_wait,
        },
        Part {
            what: "held at a barrier",
            class: "stall-barrier",
            cycles: s.barrier,
        },
        Part {
            what: "behind a full queue",
            class: "stall-queue",
            cycles: s.queue_full,
        },
        Part {
            what: "nothing issued",
            class: "stall-none",
            cycles: s.not_issued,
        },
    ]
}

/// The pipes worth a row: those that ran something (the S pipe always does).
fn shown(sim: &SimOutput) -> impl Iterator<Item = &PipeStalls> {
    sim.stalls
        .iter()
        .filter(|s| s.pipe == Pipe::S || s.busy + s.shared_bandwidth > 0)
}

#[derive(Properties, PartialEq)]
pub struct StallsProps {
    pub sim: std::rc::Rc<SimOutput>,
}

#[function_component]
pub fn StallsView(props: &StallsProps) -> Html {
    let app = use_app();
    let sim = &props.sim;
    let cycles = sim.cycles.max(1) as f64;
    let rows = shown(sim).map(|s| {
        let parts = parts(s);
        let segments = parts.iter().filter(|p| p.cycles > 0).map(|p| {
            let width = format!("width:{:.3}%", p.cycles as f64 * 100.0 / cycles);
            let style = if p.class == "stall-busy" || p.class == "stall-shared" {
                // The colour only: `.stall-shared` hatches over it.
                format!("{width};background-color:{}", pipe_color(s.pipe))
            } else {
                width
            };
            html! {
                <div class={classes!("stall-seg", p.class)} {style}
                    title={format!("{}: {} cycles", p.what, p.cycles)} />
            }
        });
        let figures: Vec<String> = parts
            .iter()
            .filter(|p| p.cycles > 0)
            .map(|p| format!("{} {}", p.cycles, p.what))
            .collect();
        let longest = s.longest_idle;
        let onclick = {
            let app = app.clone();
            Callback::from(move |_| {
                if let Some(l) = longest {
                    app.dispatch(Action::ShowCycle(l.from));
                }
            })
        };
        let label = longest.map_or(String::new(), |l| {
            format!("longest idle: {} cycles from {}", l.cycles, l.from)
        });
        html! {
            <div class="stall-row" data-testid="stall-row" data-pipe={s.pipe.name()}
                data-total={s.total().to_string()}>
                <span class="util-pipe">{s.pipe.name()}</span>
                <div class="stall-bar">{for segments}</div>
                <span class="stall-detail">{figures.join(" · ")}</span>
                <button class="tb-button small" {onclick} disabled={longest.is_none()}
                    title="Show the pipe's longest idle stretch on the timeline">{label}</button>
            </div>
        }
    });
    let waits = sim.flag_waits.iter().map(|w| flag_row(&app, w));
    html! {
        <>
            <div class="section-title">{"Where the cycles go"}</div>
            <div class="util-note muted">
                {"Each pipe's cycles: busy (its colour), stretched by shared GM bandwidth (hatched), \
                  or idle because it waited on a flag, the scalar pipe was held at a barrier or \
                  behind a full queue, or nothing was issued to it (empty). Every bar adds up to \
                  the run."}
            </div>
            <div class="stall-legend">
                { for [("stall-flag", "waiting on a flag"), ("stall-barrier", "held at a barrier"), ("stall-queue", "behind a full queue"), ("stall-none", "nothing issued")].iter().map(|(class, what)| html! {
                    <span><span class={classes!("stall-swatch", *class)} />{*what}</span>
                }) }
            </div>
            <div class="stalls" data-testid="stalls">{for rows}</div>
            if !sim.flag_waits.is_empty() {
                <div class="section-title">{"Longest flag waits"}</div>
                <ul class="flag-waits" data-testid="flag-waits">{for waits}</ul>
            }
        </>
    }
}

/// A `wait_flag` that held its pipe: the row selects it and opens the timeline at its
/// longest wait, where the sync card says why the pair is there.
fn flag_row(app: &super::AppContext, w: &FlagWait) -> Html {
    let onclick = {
        let (app, from, index) = (app.clone(), w.longest_from, w.wait.index);
        Callback::from(move |_| {
            app.dispatch(Action::SelectInstr(Some(index)));
            app.dispatch(Action::ShowCycle(from));
        })
    };
    let loc = w.wait.span.map(|s| location(app, s.start));
    let times = if w.times == 1 {
        "in one wait".to_string()
    } else {
        format!("over {} waits", w.times)
    };
    html! {
        <li>
            <button class="problem-main" data-testid="flag-wait" {onclick}
                title="Show its longest wait on the timeline, and why the pair is there">
                <span class="problem-pipe">{w.dst.name()}</span>
                <code>{format!("#{} {}", w.wait.index, w.wait.text)}</code>
                <span class="mono">{format!("{} cycles {times}", w.cycles)}</span>
                if let Some(loc) = loc { <span class="problem-loc">{loc}</span> }
            </button>
        </li>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::options::playground;

    /// The view's parts are core's figures for every pipe of a real run, and add up
    /// to its cycles.
    #[test]
    fn the_bars_are_cores_figures_and_add_up_to_the_run() {
        let source = crate::catalog::find("softmax").map_or("", |e| e.source);
        let (_, sim) = crate::worker::engine::run(source, &playground(), 0);
        let (sim, _) = sim.expect("softmax simulates");
        assert!(sim.cycles > 0 && sim.stalls.len() == 7);
        for s in &sim.stalls {
            let p = parts(s);
            assert_eq!(p.iter().map(|p| p.cycles).sum::<u64>(), sim.cycles, "{s:?}");
            assert_eq!(
                (p[0].cycles, p[2].cycles, p[5].cycles),
                (s.busy, s.flag_wait, s.not_issued)
            );
        }
        assert!(shown(&sim).any(|s| s.pipe == Pipe::V));
        // The flag waits listed are the longest of every pipe's, in order.
        let longest = sim
            .stalls
            .iter()
            .flat_map(|s| &s.flags)
            .map(|f| f.cycles)
            .max();
        assert_eq!(sim.flag_waits.first().map(|w| w.cycles), longest);
        assert!(sim
            .flag_waits
            .windows(2)
            .all(|w| w[0].cycles >= w[1].cycles));
    }
}
