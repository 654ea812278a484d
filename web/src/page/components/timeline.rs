//! The simulated timeline: one lane per pipe the kernel uses, painted on a canvas
//! (`timeline_draw`), with lane labels as DOM beside it. Wheel or +/- zoom, drag pans,
//! a click moves the cursor (and picks the slice under it); the cursor plays, or steps
//! by instruction or by cycle with the arrow keys (shift: ten at a time). Below: what
//! each pipe is doing and which buffer slots are live at the cursor, and the races.

use std::rc::Rc;
use tilescope::dense::DenseSet;

use gloo::events::{EventListener, EventListenerOptions};
use gloo::timers::callback::Interval;
use tilescope::diag::LineCol;
use wasm_bindgen::JsCast;
use web_sys::HtmlCanvasElement;
use yew::prelude::*;

use super::branches::BranchList;
use super::buffers::BufferList;
use super::{panels::EmptyState, sync_card::SyncCard, use_app, AppContext};
use crate::page::keys;
use crate::page::lanes::{self, StepUnit, Window};
use crate::page::palette::{pipe_color, pipe_text_color};
use crate::page::state::Action;
use crate::page::timeline_draw::{self, canvas_height, Scene, AXIS_H, LANE_H};
use crate::protocol::{Race, SimOutput};

/// Frames per second of playback, and how much of the window one second plays.
const PLAY_FPS: u32 = 30;
const PLAY_WINDOW_PER_SECOND: f64 = 0.2;

/// The `performance.mark` set each time a new simulation is painted.
pub const SIM_PAINTED_MARK: &str = "tilescope:timeline-painted";

#[derive(Clone, PartialEq)]
struct Hover {
    x: f64,
    y: f64,
    text: String,
}

#[function_component]
pub fn TimelinePanel() -> Html {
    let app = use_app();
    let canvas = use_node_ref();
    let sim = app.results.sim.clone();
    let cycles = sim.as_ref().map_or(0, |s| s.cycles);
    let window = use_state(|| Window::all(cycles));
    let unit = use_state(|| StepUnit::Instruction);
    let playing = use_state(|| false);
    let hover = use_state(|| None::<Hover>);
    let drag = use_mut_ref(|| None::<(f64, Window, bool)>);
    let resized = use_state(|| 0u32);
    let sim_key = if sim.is_some() {
        app.results.sim_generation
    } else {
        0
    };
    // Listeners and the playback timer outlive a render: they read the newest window
    // and cursor through these cells rather than the values captured when they began.
    let win_cell = use_mut_ref(|| *window);
    *win_cell.borrow_mut() = *window;
    let cursor_cell = use_mut_ref(|| app.view.cursor);
    *cursor_cell.borrow_mut() = app.view.cursor;

    // A new run with a different length: show all of it.
    {
        let window = window.clone();
        use_effect_with(cycles, move |c| window.set(Window::all(*c)));
    }
    // Repaint on every change that shows.
    {
        let canvas = canvas.clone();
        let app = app.clone();
        let w = *window;
        let painted_sim = use_mut_ref(|| 0u64);
        use_effect_with(
            (
                sim_key,
                w.start.to_bits(),
                w.end.to_bits(),
                app.view.cursor,
                app.ui.selected_step,
                app.ui.selected_instr,
                app.ui.theme,
                *resized,
            ),
            move |_| {
                if let (Some(sim), Some(c)) = (&app.results.sim, canvas.cast::<HtmlCanvasElement>())
                {
                    let race_instrs: DenseSet<u32> = sim
                        .races
                        .iter()
                        .flat_map(|r| [r.first.index, r.second.index])
                        .collect();
                    timeline_draw::paint(
                        &c,
                        &Scene {
                            sim,
                            compile: app.results.compile.as_deref(),
                            window: w,
                            cursor: app.view.cursor,
                            selected_step: app.ui.selected_step,
                            selected_instr: app.ui.selected_instr,
                            race_instrs: &race_instrs,
                        },
                    );
                    // One mark per simulation drawn (not per hover or scroll repaint):
                    // the load and edit latency budgets are measured against it.
                    if std::mem::replace(&mut *painted_sim.borrow_mut(), sim_key) != sim_key {
                        crate::page::dom::mark(SIM_PAINTED_MARK);
                    }
                }
            },
        );
    }
    // Window resizes change the canvas width.
    {
        let resized = resized.clone();
        use_effect_with((), move |_| {
            let listener = web_sys::window().map(|w| {
                EventListener::new(&w, "resize", move |_| resized.set(resized.wrapping_add(1)))
            });
            move || drop(listener)
        });
    }
    // Wheel zoom needs a non-passive listener to keep the page from scrolling.
    {
        let canvas = canvas.clone();
        let window = window.clone();
        let win_cell = win_cell.clone();
        use_effect_with((sim_key, cycles), move |_| {
            let target = canvas.cast::<HtmlCanvasElement>();
            let listener = target.map(|c| {
                let el = c.clone();
                EventListener::new_with_options(
                    &c,
                    "wheel",
                    EventListenerOptions::enable_prevent_default(),
                    move |e| {
                        let Some(e) = e.dyn_ref::<web_sys::WheelEvent>() else {
                            return;
                        };
                        e.prevent_default();
                        let width = f64::from(el.client_width().max(1));
                        let w = *win_cell.borrow();
                        let next = if e.shift_key() || e.delta_x().abs() > e.delta_y().abs() {
                            let delta = if e.delta_x() != 0.0 {
                                e.delta_x()
                            } else {
                                e.delta_y()
                            };
                            w.pan(delta / width * w.span(), cycles)
                        } else {
                            let factor = (e.delta_y() * 0.0025).exp();
                            w.zoom(factor, f64::from(e.offset_x()) / width, cycles)
                        };
                        *win_cell.borrow_mut() = next;
                        window.set(next);
                    },
                )
            });
            move || drop(listener)
        });
    }
    // Playback: advance the cursor and keep it in view.
    {
        let app = app.clone();
        let window = window.clone();
        let playing_h = playing.clone();
        let (win_cell, cursor_cell) = (win_cell.clone(), cursor_cell.clone());
        use_effect_with((*playing, sim_key), move |(on, _)| {
            let interval = on.then(|| {
                Interval::new(1000 / PLAY_FPS, move || {
                    let w = *win_cell.borrow();
                    let step = (w.span() * PLAY_WINDOW_PER_SECOND / f64::from(PLAY_FPS)).max(1.0);
                    let next = (*cursor_cell.borrow() as f64 + step).round() as u64;
                    if next >= cycles {
                        playing_h.set(false);
                    }
                    let next = next.min(cycles);
                    *cursor_cell.borrow_mut() = next;
                    let w = w.follow(next, cycles);
                    *win_cell.borrow_mut() = w;
                    window.set(w);
                    app.dispatch(Action::SetCursor(next));
                })
            });
            move || drop(interval)
        });
    }

    let Some(sim) = sim else {
        let text = if app.requests.simulating {
            "Simulating…"
        } else if app
            .results
            .compile
            .as_ref()
            .is_some_and(|c| c.error_count() > 0)
        {
            "The kernel does not compile; fix the problems to simulate it."
        } else {
            "Each instruction as a bar on its pipe, stalls and set/wait flag arrows between pipes appear here after the simulation."
        };
        return html! { <EmptyState title="Timeline">{text}</EmptyState> };
    };

    let move_cursor = {
        let app = app.clone();
        let window = window.clone();
        let sim = Rc::clone(&sim);
        Callback::from(move |(unit, forward, count): (StepUnit, bool, u64)| {
            let next = lanes::step_cursor(&sim, app.view.cursor, unit, forward, count);
            window.set(window.follow(next, sim.cycles));
            app.dispatch(Action::SetCursor(next));
        })
    };
    let zoom = {
        let window = window.clone();
        Callback::from(move |factor: f64| window.set(window.zoom(factor, 0.5, cycles)))
    };
    let onkeydown = {
        let move_cursor = move_cursor.clone();
        let zoom = zoom.clone();
        let playing = playing.clone();
        let window = window.clone();
        let unit = *unit;
        let app = app.clone();
        let sim = Rc::clone(&sim);
        Callback::from(move |e: KeyboardEvent| {
            let count = if e.shift_key() { 10 } else { 1 };
            // `[` and `]` go through the set/wait flags (the arrow heads are not tab
            // stops: hundreds on a long run), opening each pair's card.
            let flag = |forward: bool| {
                let flags = lanes::flags_in_order(&sim);
                let current = app
                    .ui
                    .selected_instr
                    .and_then(|i| flags.iter().position(|f| f.set_instr == i));
                let key = if forward { "ArrowDown" } else { "ArrowUp" };
                keys::list_move(key, current, flags.len()).map(|k| flags[k].clone())
            };
            match e.key().as_str() {
                "ArrowRight" => move_cursor.emit((unit, true, count)),
                "ArrowLeft" => move_cursor.emit((unit, false, count)),
                "]" | "[" => {
                    if let Some(f) = flag(e.key() == "]") {
                        let at = f.wait_cycle.unwrap_or(f.set_cycle);
                        window.set(window.follow(at, sim.cycles));
                        app.dispatch(Action::SetCursor(at));
                        app.dispatch(Action::SelectInstr(Some(f.set_instr)));
                    }
                }
                // The slice at the cursor: its source, step and card.
                "Enter" => {
                    app.dispatch(Action::SelectInstr(lanes::slice_at(&sim, app.view.cursor)))
                }
                "." => move_cursor.emit((StepUnit::Cycle, true, count)),
                "," => move_cursor.emit((StepUnit::Cycle, false, count)),
                "+" | "=" => zoom.emit(0.5),
                "-" | "_" => zoom.emit(2.0),
                "0" => window.set(Window::all(cycles)),
                " " => playing.set(!*playing),
                _ => return,
            }
            e.prevent_default();
        })
    };

    // Pointer: drag pans, a click (no movement) sets the cursor and picks a slice.
    let point = {
        let sim = Rc::clone(&sim);
        let window = window.clone();
        move |e: &MouseEvent| -> Option<(u64, Option<u32>, f64)> {
            let c = e.target_dyn_into::<HtmlCanvasElement>()?;
            let width = f64::from(c.client_width().max(1));
            let x = f64::from(e.offset_x());
            let cycle = (window.start + x / width * window.span()).max(0.0) as u64;
            let y = f64::from(e.offset_y()) - AXIS_H;
            let lane = (y >= 0.0)
                .then(|| (y / LANE_H) as usize)
                .and_then(|i| sim.lanes.get(i));
            let hit = lane.and_then(|l| lanes::at(l, cycle)).map(|s| s.instr);
            Some((cycle, hit, width))
        }
    };
    let onmousedown = {
        let drag = drag.clone();
        let window = window.clone();
        Callback::from(move |e: MouseEvent| {
            *drag.borrow_mut() = Some((f64::from(e.client_x()), *window, false));
        })
    };
    let onmousemove = {
        let drag = drag.clone();
        let window = window.clone();
        let hover = hover.clone();
        let app = app.clone();
        let sim = Rc::clone(&sim);
        let point = point.clone();
        Callback::from(move |e: MouseEvent| {
            let mut d = drag.borrow_mut();
            if let Some((x0, w0, moved)) = d.as_mut() {
                let dx = f64::from(e.client_x()) - *x0;
                if dx.abs() > 3.0 {
                    *moved = true;
                }
                if *moved {
                    if let Some(c) = e.target_dyn_into::<HtmlCanvasElement>() {
                        let width = f64::from(c.client_width().max(1));
                        window.set(w0.pan(-dx / width * w0.span(), cycles));
                    }
                    return;
                }
            }
            let text = point(&e).and_then(|(cycle, hit, _)| {
                let instr = hit?;
                Some(slice_tooltip(&app, &sim, instr, cycle))
            });
            hover.set(text.map(|text| Hover {
                x: f64::from(e.offset_x()),
                y: f64::from(e.offset_y()),
                text,
            }));
        })
    };
    let onmouseup = {
        let drag = drag.clone();
        let app = app.clone();
        let point = point.clone();
        Callback::from(move |e: MouseEvent| {
            let was = drag.borrow_mut().take();
            if matches!(was, Some((_, _, true))) {
                return;
            }
            if let Some((cycle, hit, _)) = point(&e) {
                app.dispatch(Action::SetCursor(cycle.min(cycles)));
                if hit.is_some() {
                    app.dispatch(Action::SelectInstr(hit));
                }
            }
        })
    };
    let onmouseleave = {
        let drag = drag.clone();
        let hover = hover.clone();
        Callback::from(move |_: MouseEvent| {
            drag.borrow_mut().take();
            hover.set(None);
        })
    };

    let button = |label: &'static str, title: &'static str, cb: Callback<MouseEvent>| {
        html! { <button class="tl-btn" {title} onclick={cb}>{label}</button> }
    };
    let step_btn = |label: &'static str, title: &'static str, forward: bool, count: u64| {
        let move_cursor = move_cursor.clone();
        let unit = *unit;
        button(
            label,
            title,
            Callback::from(move |_| move_cursor.emit((unit, forward, count))),
        )
    };
    let unit_btn = |u: StepUnit, label: &'static str| {
        let unit_h = unit.clone();
        let active = *unit == u;
        html! {
            <button class={classes!("seg", active.then_some("seg-active"))}
                onclick={Callback::from(move |_| unit_h.set(u))}>{label}</button>
        }
    };
    let play = {
        let playing = playing.clone();
        let app = app.clone();
        Callback::from(move |_| {
            if !*playing && app.view.cursor >= cycles {
                app.dispatch(Action::SetCursor(0));
            }
            playing.set(!*playing);
        })
    };
    let fit = {
        let window = window.clone();
        Callback::from(move |_| window.set(Window::all(cycles)))
    };

    let labels = sim.lanes.iter().map(|l| {
        let util = if sim.cycles > 0 { l.busy as f64 * 100.0 / sim.cycles as f64 } else { 0.0 };
        html! {
            <div class="tl-lane-label" data-testid={format!("lane-{}", l.pipe.name())}
                style={format!("height:{LANE_H}px")}
                title={format!("{}: {} instructions, busy {} of {} cycles", l.pipe.name(), l.instructions, l.busy, sim.cycles)}>
                <span class="tl-pipe-dot" style={format!("background:{}", pipe_color(l.pipe))} />
                <span class="tl-pipe-name">{l.pipe.name()}</span>
                <span class="tl-pipe-util">{format!("{util:.0}%")}</span>
            </div>
        }
    });
    let tooltip = (*hover).clone().map(|h| {
        html! {
            <div class="tl-tooltip" style={format!("left:{}px;top:{}px", h.x + 14.0, h.y + 16.0)}>
                { for h.text.lines().map(|l| html! { <div>{l.to_string()}</div> }) }
            </div>
        }
    });
    let height = canvas_height(sim.lanes.len());
    let w = *window;
    // The canvas is not clickable per arrow for a keyboard or a screen reader: each
    // arrow in a readable window gets a button on its head that opens the pair's card.
    let arrows = timeline_draw::flag_arrows(&sim, w);
    let heads = (arrows.len() <= timeline_draw::FLAG_LABELS).then(|| {
        arrows.iter().map(|a| {
            let f = a.flag;
            let instr = f.set_instr;
            let app = app.clone();
            let onclick = Callback::from(move |_: MouseEvent| app.dispatch(Action::SelectInstr(Some(instr))));
            let left = (a.wait as f64 - w.start) / w.span().max(1.0) * 100.0;
            html! {
                <button class="tl-flag" data-testid="flag-arrow" data-instr={instr.to_string()} {onclick} tabindex="-1"
                    style={format!("left:{left:.3}%;top:{:.0}px", a.y1)}
                    title={format!("flag {} → {} #{}: why is it here?", f.src.name(), f.dst.name(), f.event)} />
            }
        }).collect::<Html>()
    });
    html! {
        <div class="timeline" tabindex="0" {onkeydown} data-testid="timeline"
            aria-label="Timeline: ← and → step, Enter picks the instruction at the cursor, [ and ] go through the sync flags, + and − zoom, space plays"
            aria-describedby="tl-readout">
            <div class="tl-bar">
                <div class="tl-group">
                    {button("|◀", "To the start", { let app = app.clone(); Callback::from(move |_| app.dispatch(Action::SetCursor(0))) })}
                    {step_btn("◀◀", "Back 10 (shift+←)", false, 10)}
                    {step_btn("◀", "Back one (←)", false, 1)}
                    <button class="tl-btn tl-play" title="Play / pause (space)" onclick={play}>{ if *playing { "pause" } else { "play" } }</button>
                    {step_btn("▶", "Forward one (→)", true, 1)}
                    {step_btn("▶▶", "Forward 10 (shift+→)", true, 10)}
                </div>
                <div class="segmented" title="What the arrow keys step by (, and . always step cycles)">
                    {unit_btn(StepUnit::Instruction, "instr")}
                    {unit_btn(StepUnit::Cycle, "cycle")}
                </div>
                <div class="tl-group">
                    {button("−", "Zoom out (-)", zoom.reform(|_| 2.0))}
                    {button("+", "Zoom in (+)", zoom.reform(|_| 0.5))}
                    {button("fit", "Show the whole run (0)", fit)}
                </div>
                <span class="tl-range">{format!("{:.0}–{:.0}", w.start, w.end)}</span>
                <span class="tl-spacer" />
                <span class="tl-cursor" data-testid="cursor-readout-cycle">
                    {format!("cycle {} / {}", app.view.cursor, sim.cycles)}
                </span>
            </div>
            <div class="tl-legend" data-testid="timeline-legend">
                <span title="The same colour as the step in the Steps panel; grey: loop control and sync">
                    <i class="lg-step" />{"slice colour: its step"}</span>
                <span title="The lane's name is in its pipe's colour, as in Steps"><i class="lg-pipe" />{"lane label: pipe"}</span>
                <span title="The pipe waited: for a flag, a full queue, a barrier or shared GM bandwidth"><i class="lg-stall" />{"stall"}</span>
                <span title="Click an arrow head for why the flag is there"><i class="lg-flag" />{"set → wait flag"}</span>
                <span title="Instructions in a race are outlined"><i class="lg-race" />{"race"}</span>
                if !sim.branches.is_empty() {
                    <span title="Where the S pipe decided an if: filled when the branch ran, hollow when it was skipped">{"◆ ◇ if: taken, skipped"}</span>
                }
            </div>
            if sim.capped {
                <div class="tl-capped">
                    {format!("Showing the first {} of {} instructions executed; the downloaded trace holds the first {}.",
                        sim.lanes.iter().map(|l| l.slices.len()).sum::<usize>(), sim.total_slices,
                        tilescope::limits::MAX_TRACE_EVENTS)}
                </div>
            }
            <div class="tl-body">
                <div class="tl-labels">
                    <div style={format!("height:{AXIS_H}px")} class="tl-axis-label">{"cycles"}</div>
                    {for labels}
                </div>
                <div class="tl-canvas-wrap">
                    <canvas ref={canvas} class="tl-canvas" style={format!("height:{height}px")}
                        {onmousedown} {onmousemove} {onmouseup} {onmouseleave} />
                    {heads}
                    {tooltip}
                </div>
            </div>
            <SyncCard />
            <div class="tl-at-cursor">
                <CursorReadout sim={Rc::clone(&sim)} />
                <BufferList sim={Rc::clone(&sim)} />
            </div>
            <BranchList sim={Rc::clone(&sim)} />
            <RaceList sim={Rc::clone(&sim)} />
        </div>
    }
}

/// The hover text of instruction `instr` on the timeline.
fn slice_tooltip(app: &AppContext, sim: &SimOutput, instr: u32, cycle: u64) -> String {
    let line = app.results.asm().get(instr as usize);
    let slice = sim
        .lanes
        .iter()
        .filter_map(|l| lanes::at(l, cycle))
        .find(|s| s.instr == instr);
    let mut out = format!("#{instr} {}", line.map_or("", |l| l.text.as_str()));
    if let Some(s) = slice {
        out.push_str(&format!(
            "\ncycles {}–{} ({})",
            s.start,
            s.end,
            s.end - s.start
        ));
        if let Some(st) = &s.stall {
            out.push_str(&format!(
                "\nstalled {} cycles: {}",
                st.to - st.from,
                st.reason
            ));
        }
    }
    if let (Some(cond), Some(s)) = (line.and_then(|l| l.branch.as_ref()), slice) {
        let run = sim
            .branch_runs
            .iter()
            .find(|r| r.instr == instr && r.cycle == s.start);
        if let Some(r) = run {
            out.push_str(&if r.taken {
                format!("\nif {cond}: taken, the branch ran")
            } else {
                format!("\nif {cond}: skipped, the branch did not run")
            });
        }
    }
    if let Some(l) = line {
        if let Some(step) = l.step {
            out.push_str(&format!("\nstep s{step}"));
        }
        if let Some(span) = l.span {
            let source = &app.view.source;
            let at = LineCol::at(source, span.start as usize);
            out.push_str(&format!(
                "\nline {}: {}",
                at.line,
                at.line_text(source).trim()
            ));
        }
    }
    out
}

#[derive(Properties, PartialEq)]
struct SimProps {
    sim: Rc<SimOutput>,
}

/// What each pipe is doing at the cursor: the instruction in flight, a stall, or idle.
#[function_component]
fn CursorReadout(props: &SimProps) -> Html {
    let app = use_app();
    let cursor = app.view.cursor;
    let sim = &props.sim;
    let asm = app.results.asm();
    let rows = sim.lanes.iter().map(|l| {
        let (state, text, step) = match lanes::at(l, cursor) {
            Some(s) => (
                "busy",
                asm.get(s.instr as usize).map_or(String::new(), |a| a.text.clone()),
                s.step.map(|s| format!("s{s}")),
            ),
            None => match lanes::stall_at(sim, l, cursor) {
                Some(reason) => ("stalled", reason, None),
                None => ("idle", "—".to_string(), None),
            },
        };
        html! {
            <tr class={format!("ro-{state}")}>
                <td class="ro-pipe" style={format!("color:{}", pipe_text_color(l.pipe))}>{l.pipe.name()}</td>
                <td class="ro-state">{state}</td>
                <td class="ro-text"><code>{text}</code></td>
                <td class="ro-step">{step.unwrap_or_default()}</td>
            </tr>
        }
    });
    let in_flight = sim
        .lanes
        .iter()
        .filter(|l| lanes::at(l, cursor).is_some())
        .count();
    html! {
        <div class="tl-readout" data-testid="cursor-readout" id="tl-readout">
            <div class="section-title" aria-live="polite">
                {format!("At cycle {cursor}")}
                <span class="muted">{format!(" · {in_flight} instruction{} in flight", if in_flight == 1 { "" } else { "s" })}</span>
            </div>
            <table class="readout-table">{for rows}</table>
        </div>
    }
}

#[function_component]
fn RaceList(props: &SimProps) -> Html {
    let app = use_app();
    let races = &props.sim.races;
    if races.is_empty() {
        return html! {
            <div class="tl-races" data-testid="race-list" data-count="0">
                <div class="section-title">{"Races"}<span class="muted">{" · none: every cross-pipe access pair is ordered"}</span></div>
            </div>
        };
    }
    let rows = races.iter().map(|r| race_row(&app, r));
    html! {
        <div class="tl-races" data-testid="race-list" data-count={races.len().to_string()}>
            <div class="section-title danger">{format!("{} race{}", races.len(), if races.len() == 1 { "" } else { "s" })}</div>
            <ul class="race-rows">{for rows}</ul>
        </div>
    }
}

pub fn race_row(app: &AppContext, r: &Race) -> Html {
    let side = |i: &crate::protocol::InstrRef| {
        let link = app.clone();
        let (index, cycle, span) = (i.index, i.first_cycle, i.span);
        let onclick = Callback::from(move |_: MouseEvent| {
            let app = &link;
            if let Some(c) = cycle {
                app.dispatch(Action::SetCursor(c));
            }
            app.dispatch(Action::SelectInstr(Some(index)));
            if let Some(span) = span {
                app.dispatch(Action::LinkSpan(Some(span)));
            }
        });
        let line = i
            .span
            .map(|s| LineCol::at(&app.view.source, s.start as usize).line);
        html! {
            <button class="race-side" {onclick} title="Show on the timeline and in the source">
                <span class="ro-pipe" style={format!("color:{}", pipe_text_color(i.pipe))}>{i.pipe.name()}</span>
                {" "}<code>{i.text.clone()}</code>
                <span class="muted">{format!(" {}{}", i.access.clone().unwrap_or_default(), line.map(|l| format!(" · line {l}")).unwrap_or_default())}</span>
            </button>
        }
    };
    html! {
        <li class="race">
            <div class="race-msg">{format!("{} ({} ×{})", r.message, r.place, r.count)}</div>
            {side(&r.first)}
            {side(&r.second)}
            if let Some(fix) = &r.fix {
                <div class="race-fix" data-testid="race-fix">{fix.clone()}</div>
            }
        </li>
    }
}
