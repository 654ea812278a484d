//! Painting the timeline canvas. Only what is in the window is drawn: each lane's
//! visible slices come from a binary search (`lanes::visible`), and slices narrower
//! than a pixel that land on an already painted pixel are skipped, so a 100k-slice
//! trace costs what fits on screen.

use tilescope::dense::DenseSet;
use tilescope::types::Pipe;

use wasm_bindgen::JsCast;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

use crate::page::dom;
use crate::page::lanes::{self, Window};
use crate::page::palette::step_fill;
use crate::protocol::{CompileOutput, FlagEvent, SimOutput};

/// Geometry shared with the lane labels beside the canvas (CSS px).
pub const AXIS_H: f64 = 22.0;
pub const LANE_H: f64 = 28.0;
const SLICE_PAD: f64 = 4.0;

pub fn canvas_height(lanes: usize) -> f64 {
    AXIS_H + LANE_H * lanes as f64 + 6.0
}

/// What the painter needs besides the data.
pub struct Scene<'a> {
    pub sim: &'a SimOutput,
    pub compile: Option<&'a CompileOutput>,
    pub window: Window,
    pub cursor: u64,
    pub selected_step: Option<u32>,
    pub selected_instr: Option<u32>,
    pub race_instrs: &'a DenseSet<u32>,
}

struct Colors {
    bg: &'static str,
    alt: &'static str,
    grid: &'static str,
    text: &'static str,
    muted: &'static str,
    accent: &'static str,
    danger: &'static str,
    dark: bool,
}

/// The theme's colours. The CSS defines them with `light-dark()`, which a canvas fill
/// style does not understand (custom properties compute to their text), so the two
/// palettes are repeated here; keep them in step with playground.css.
fn colors() -> Colors {
    let forced = dom::document()
        .and_then(|d| d.document_element())
        .and_then(|e| e.get_attribute("data-theme"));
    let dark = match forced.as_deref() {
        Some("dark") => true,
        Some("light") => false,
        _ => dom::prefers_dark(),
    };
    if dark {
        Colors {
            bg: "#15191f",
            alt: "#1a1f26",
            grid: "#2a313b",
            text: "#dde3ea",
            muted: "#9aa4b0",
            accent: "#4c8dff",
            danger: "#ff6b6b",
            dark,
        }
    } else {
        Colors {
            bg: "#ffffff",
            alt: "#f6f7f9",
            grid: "#e3e6ea",
            text: "#1d2127",
            muted: "#5f6873",
            accent: "#1f6feb",
            danger: "#c9252d",
            dark,
        }
    }
}

/// Sizes the canvas backing store for the device pixel ratio and paints the scene.
pub fn paint(canvas: &HtmlCanvasElement, scene: &Scene) {
    let dpr = web_sys::window()
        .map_or(1.0, |w| w.device_pixel_ratio())
        .max(1.0);
    let width = f64::from(canvas.client_width().max(1));
    let height = canvas_height(scene.sim.lanes.len());
    let (bw, bh) = ((width * dpr).round() as u32, (height * dpr).round() as u32);
    if canvas.width() != bw || canvas.height() != bh {
        canvas.set_width(bw);
        canvas.set_height(bh);
    }
    let Some(cx) = canvas
        .get_context("2d")
        .ok()
        .flatten()
        .and_then(|c| c.dyn_into::<CanvasRenderingContext2d>().ok())
    else {
        return;
    };
    let _ = cx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0);
    let c = colors();
    cx.set_fill_style_str(c.bg);
    cx.fill_rect(0.0, 0.0, width, height);

    let w = scene.window;
    let scale = width / w.span();
    let x_of = |cycle: f64| (cycle - w.start) * scale;
    let (from, to) = (w.start.floor().max(0.0) as u64, w.end.ceil() as u64 + 1);

    // Lane backgrounds and the time axis.
    for i in 0..scene.sim.lanes.len() {
        if i % 2 == 1 {
            cx.set_fill_style_str(c.alt);
            cx.fill_rect(0.0, AXIS_H + LANE_H * i as f64, width, LANE_H);
        }
    }
    let step = lanes::tick_step(scale, 90.0);
    cx.set_font("10px ui-monospace, SFMono-Regular, Menlo, monospace");
    cx.set_text_baseline("middle");
    let mut t = from - from % step;
    while (t as f64) < w.end {
        let x = x_of(t as f64).round() + 0.5;
        cx.set_fill_style_str(c.grid);
        cx.fill_rect(x, AXIS_H - 4.0, 1.0, height);
        cx.set_fill_style_str(c.muted);
        let _ = cx.fill_text(&t.to_string(), x + 3.0, AXIS_H / 2.0);
        t = t.saturating_add(step);
        if step == 0 {
            break;
        }
    }
    cx.set_fill_style_str(c.grid);
    cx.fill_rect(0.0, AXIS_H - 0.5, width, 1.0);

    let dim = scene.selected_step.is_some();
    let asm = scene.compile.map(|c| c.asm.as_slice()).unwrap_or_default();
    for (i, lane) in scene.sim.lanes.iter().enumerate() {
        let y0 = AXIS_H + LANE_H * i as f64;
        let range = lanes::visible(lane, from, to);
        let slices = lane.slices.get(range).unwrap_or_default();
        // Stalls first, under the slices.
        for s in slices {
            let Some(st) = &s.stall else { continue };
            let Some(row) = scene.sim.lanes.iter().position(|l| l.pipe == st.pipe) else {
                continue;
            };
            let (x0, x1) = (x_of(st.from as f64), x_of(st.to as f64));
            if x1 - x0 < 1.0 {
                continue;
            }
            let ys = AXIS_H + LANE_H * row as f64;
            cx.set_fill_style_str(if c.dark {
                "rgba(255,170,60,0.07)"
            } else {
                "rgba(230,140,20,0.07)"
            });
            cx.fill_rect(x0, ys + 2.0, x1 - x0, LANE_H - 4.0);
            cx.set_fill_style_str(if c.dark {
                "rgba(255,170,60,0.55)"
            } else {
                "rgba(200,110,10,0.55)"
            });
            cx.fill_rect(x0, ys + LANE_H - 4.0, x1 - x0, 2.0);
        }
        let mut painted_to = f64::NEG_INFINITY;
        let mut last_fill = String::new();
        for s in slices {
            let x0 = x_of(s.start as f64);
            let x1 = x_of(s.end.max(s.start + 1) as f64);
            let wpx = (x1 - x0).max(1.0);
            if wpx < 1.5 && x0.floor() <= painted_to {
                continue;
            }
            painted_to = (x0 + wpx).floor();
            let faded = dim && s.step != scene.selected_step;
            let fill = step_fill(s.step, c.dark);
            if fill != last_fill {
                cx.set_fill_style_str(&fill);
                last_fill = fill;
            }
            cx.set_global_alpha(if faded { 0.25 } else { 1.0 });
            cx.fill_rect(x0, y0 + SLICE_PAD, wpx, LANE_H - 2.0 * SLICE_PAD);
            if wpx > 44.0 {
                let text = asm.get(s.instr as usize).map_or("", |l| l.text.as_str());
                let name = text.split_whitespace().next().unwrap_or("");
                cx.set_fill_style_str(if c.dark { "#0d1117" } else { "#111418" });
                let _ = cx.fill_text_with_max_width(name, x0 + 4.0, y0 + LANE_H / 2.0, wpx - 8.0);
                cx.set_fill_style_str(&last_fill);
            }
            cx.set_global_alpha(1.0);
            if scene.race_instrs.contains(&s.instr) {
                cx.set_stroke_style_str(c.danger);
                cx.set_line_width(2.0);
                cx.stroke_rect(
                    x0,
                    y0 + SLICE_PAD - 1.0,
                    wpx,
                    LANE_H - 2.0 * SLICE_PAD + 2.0,
                );
            }
            if scene.selected_instr == Some(s.instr) {
                cx.set_stroke_style_str(c.text);
                cx.set_line_width(1.5);
                cx.stroke_rect(
                    x0,
                    y0 + SLICE_PAD - 1.5,
                    wpx,
                    LANE_H - 2.0 * SLICE_PAD + 3.0,
                );
            }
        }
    }

    paint_branches(&cx, scene, &c, &x_of, width);
    paint_flags(&cx, scene, &c, &x_of, width);

    // The cursor.
    let x = x_of(scene.cursor as f64);
    if (0.0..=width).contains(&x) {
        cx.set_fill_style_str(c.accent);
        cx.fill_rect(x.round() - 0.5, AXIS_H - 6.0, 1.5, height);
        cx.begin_path();
        cx.move_to(x - 5.0, AXIS_H - 8.0);
        cx.line_to(x + 5.0, AXIS_H - 8.0);
        cx.line_to(x, AXIS_H - 2.0);
        cx.close_path();
        cx.fill();
    }
}

/// Beyond this many decisions in the window a mark is a tick: diamonds would overlap.
const BRANCH_MARKS: usize = 200;

/// Each decision of an `if` in the window, on the S lane where the S pipe made it: a
/// filled diamond when the branch ran, a hollow one when it was skipped.
fn paint_branches(
    cx: &CanvasRenderingContext2d,
    scene: &Scene,
    c: &Colors,
    x_of: &dyn Fn(f64) -> f64,
    width: f64,
) {
    let runs = &scene.sim.branch_runs;
    let Some(row) = scene.sim.lanes.iter().position(|l| l.pipe == Pipe::S) else {
        return;
    };
    let w = scene.window;
    // The runs are in cycle order (the S pipe decides them in turn).
    let from = runs.partition_point(|r| (r.cycle as f64) < w.start);
    let to = runs.partition_point(|r| (r.cycle as f64) <= w.end);
    let shown = runs.get(from..to).unwrap_or_default();
    let y = AXIS_H + LANE_H * row as f64 + 4.0;
    cx.set_stroke_style_str(c.accent);
    cx.set_fill_style_str(c.accent);
    cx.set_line_width(1.5);
    for r in shown {
        let x = x_of(r.cycle as f64);
        if !(-5.0..=width + 5.0).contains(&x) {
            continue;
        }
        if shown.len() > BRANCH_MARKS {
            cx.fill_rect(x.round() - 0.5, y - 3.0, 1.0, 6.0);
            continue;
        }
        cx.begin_path();
        cx.move_to(x, y - 4.0);
        cx.line_to(x + 4.0, y);
        cx.line_to(x, y + 4.0);
        cx.line_to(x - 4.0, y);
        cx.close_path();
        if r.taken {
            cx.fill();
        } else {
            cx.set_fill_style_str(c.bg);
            cx.fill();
            cx.set_fill_style_str(c.accent);
            cx.stroke();
        }
    }
}

/// A set -> wait arrow: cycles on the time axis, y in CSS px on the canvas.
pub struct FlagArrow<'a> {
    pub flag: &'a FlagEvent,
    pub wait: u64,
    pub y0: f64,
    pub y1: f64,
    /// The arrow points down (the waiting pipe's lane is below the setting one).
    pub down: bool,
}

/// The flags that touch the window, as the canvas draws them: the painter and the
/// clickable arrow heads above the canvas share this, so a head sits on its arrow.
pub fn flag_arrows<'a>(sim: &'a SimOutput, w: Window) -> Vec<FlagArrow<'a>> {
    let row = |p| sim.lanes.iter().position(|l| l.pipe == p);
    sim.flags
        .iter()
        .filter_map(|f| Some((f, f.wait_cycle?)))
        .filter(|(f, wait)| (*wait as f64) >= w.start && (f.set_cycle as f64) <= w.end)
        .take(4000)
        .filter_map(|(flag, wait)| {
            let (rs, rd) = (row(flag.src)?, row(flag.dst)?);
            let down = rd >= rs;
            let y0 = AXIS_H + LANE_H * rs as f64 + if down { LANE_H - 3.0 } else { 3.0 };
            let y1 = AXIS_H + LANE_H * rd as f64 + if down { 3.0 } else { LANE_H - 3.0 };
            Some(FlagArrow {
                flag,
                wait,
                y0,
                y1,
                down,
            })
        })
        .collect()
}

/// Beyond this many arrows in the window they are too dense to label or to click.
pub const FLAG_LABELS: usize = 40;

/// Set -> wait arrows of the flags that touch the window.
fn paint_flags(
    cx: &CanvasRenderingContext2d,
    scene: &Scene,
    c: &Colors,
    x_of: &dyn Fn(f64) -> f64,
    width: f64,
) {
    let arrows = flag_arrows(scene.sim, scene.window);
    let label = arrows.len() <= FLAG_LABELS;
    cx.set_stroke_style_str(c.muted);
    cx.set_fill_style_str(c.muted);
    cx.set_line_width(1.0);
    cx.set_global_alpha(if label { 0.8 } else { 0.45 });
    for a in arrows {
        let (x0, x1) = (x_of(a.flag.set_cycle as f64), x_of(a.wait as f64));
        if x1 < -50.0 || x0 > width + 50.0 {
            continue;
        }
        let (y0, y1) = (a.y0, a.y1);
        cx.begin_path();
        cx.move_to(x0, y0);
        cx.bezier_curve_to(x0, (y0 + y1) / 2.0, x1, (y0 + y1) / 2.0, x1, y1);
        cx.stroke();
        // Arrow head.
        let dir = if a.down { -1.0 } else { 1.0 };
        cx.begin_path();
        cx.move_to(x1, y1);
        cx.line_to(x1 - 3.0, y1 + 5.0 * dir);
        cx.line_to(x1 + 3.0, y1 + 5.0 * dir);
        cx.close_path();
        cx.fill();
        if label && (x1 - x0).abs() > 24.0 {
            let _ = cx.fill_text(&format!("#{}", a.flag.event), x1 + 3.0, y1 + 6.0 * dir);
        }
    }
    cx.set_global_alpha(1.0);
}
