//! Beside the per-pipe readout: every on-chip buffer slot at the cursor, live or free,
//! and the pipe that last wrote it. Hovering a slot names the instructions that
//! produced and consume its value.

use std::rc::Rc;

use yew::prelude::*;

use super::use_app;
use crate::page::palette::pipe_text_color;
use crate::protocol::buffers::SlotValue;
use crate::protocol::{AsmLine, SimOutput};

#[derive(Properties, PartialEq)]
pub struct BufferListProps {
    pub sim: Rc<SimOutput>,
}

/// `#12 dma.f32 …, #14 vexp …` for the hover text.
fn instr_list(asm: &[AsmLine], instrs: &[u32]) -> String {
    instrs
        .iter()
        .map(|&i| {
            let text = asm.get(i as usize).map_or("", |l| l.text.as_str());
            format!("#{i} {text}")
        })
        .collect::<Vec<_>>()
        .join("\n  ")
}

fn hover_text(asm: &[AsmLine], v: &SlotValue) -> String {
    let mut out = format!(
        "value written by {} at cycle {}\nproduced by\n  {}",
        v.writer.name(),
        v.from,
        instr_list(asm, &v.producers)
    );
    if v.consumers.is_empty() {
        out.push_str("\nnever read");
    } else {
        out.push_str(&format!(
            "\nread until cycle {} by\n  {}",
            v.to,
            instr_list(asm, &v.consumers)
        ));
    }
    out
}

#[function_component]
pub fn BufferList(props: &BufferListProps) -> Html {
    let app = use_app();
    let cursor = app.view.cursor;
    let slots = &props.sim.buffers;
    if slots.is_empty() {
        return html! {};
    }
    let asm = app.results.asm();
    let live = slots.iter().filter(|s| s.at(cursor).live.is_some()).count();
    let rows = slots.iter().map(|s| {
        let at = s.at(cursor);
        let state = if at.live.is_some() { "live" } else { "free" };
        let writer = at.last.map(|v| {
            html! {
                <span class="ro-pipe" style={format!("color:{}", pipe_text_color(v.writer))}>{v.writer.name()}</span>
            }
        });
        let title = at.last.map(|v| hover_text(asm, v)).unwrap_or_else(|| "not written yet".into());
        html! {
            <tr class={format!("buf-{state}")} {title}>
                <td class="buf-name"><code>{s.name.clone()}</code></td>
                <td class="buf-space">{s.space.name()}</td>
                <td class="buf-range"><code>{format!("{:#x}–{:#x}", s.lo, s.hi)}</code></td>
                <td class="buf-state">{state}</td>
                <td class="buf-writer">{writer.unwrap_or_default()}</td>
            </tr>
        }
    });
    html! {
        <div class="tl-buffers" data-testid="buffer-list" data-live={live.to_string()}>
            <div class="section-title">
                {"Buffers"}
                <span class="muted">{format!(" · {live} of {} slots live", slots.len())}</span>
            </div>
            <table class="readout-table">{for rows}</table>
        </div>
    }
}
