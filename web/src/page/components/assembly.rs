//! The final program: one line per instruction with its pipe and step; the
//! instructions executing at the timeline cursor are highlighted, and clicking one
//! selects its source span and step.

use tilescope::dense::DenseSet;

use yew::prelude::*;

use super::{panels::EmptyState, sync_card::SyncCard, use_app};
use crate::page::keys;
use crate::page::lanes;
use crate::page::palette::pipe_text_color;
use crate::page::state::Action;

#[function_component]
pub fn AssemblyPanel() -> Html {
    let app = use_app();
    let list_ref = use_node_ref();
    let cursor = app.view.cursor;
    let running: DenseSet<u32> = app
        .results
        .sim
        .iter()
        .flat_map(|s| s.lanes.iter())
        .filter_map(|l| lanes::at(l, cursor))
        .map(|s| s.instr)
        .collect();
    // Keep the first running instruction in view as the cursor moves.
    {
        let list_ref = list_ref.clone();
        use_effect_with((cursor, app.ui.selected_instr), move |_| {
            let line = list_ref.cast::<web_sys::Element>().and_then(|l| {
                l.query_selector(".asm-running, .asm-selected")
                    .ok()
                    .flatten()
            });
            if let Some(line) = line {
                let options = web_sys::ScrollIntoViewOptions::new();
                options.set_block(web_sys::ScrollLogicalPosition::Nearest);
                line.scroll_into_view_with_scroll_into_view_options(&options);
            }
        });
    }
    let Some(compile) = app.results.compile.clone().filter(|c| !c.asm.is_empty()) else {
        return html! {
            <EmptyState title="Assembly">
                {"The per-pipe program emitted by the last pass appears here once the kernel \
                  compiles through emit."}
            </EmptyState>
        };
    };
    let header = compile.asm_header.iter().map(|h| {
        html! { <div class="asm-line asm-decl" role="option" aria-disabled="true"><span class="asm-ln" /><span class="asm-pipe" /><span class="asm-text">{h.clone()}</span></div> }
    });
    let lines = compile.asm.iter().enumerate().map(|(i, l)| {
        let index = i as u32;
        let onclick = {
            let app = app.clone();
            Callback::from(move |_: MouseEvent| app.dispatch(Action::SelectInstr(Some(index))))
        };
        let in_step = app.ui.selected_step.is_some() && l.step == app.ui.selected_step;
        let class = classes!(
            "asm-line",
            running.contains(&index).then_some("asm-running"),
            (app.ui.selected_instr == Some(index)).then_some("asm-selected"),
            in_step.then_some("asm-in-step"),
        );
        let selected = app.ui.selected_instr == Some(index);
        html! {
            <div {class} {onclick} data-instr={index.to_string()} id={format!("asm-{index}")}
                role="option" aria-selected={selected.to_string()}>
                <span class="asm-ln">{i}</span>
                <span class="asm-pipe" style={format!("color:{}", pipe_text_color(l.pipe))}>{l.pipe.name()}</span>
                <span class="asm-text">{format!("{}{}", "  ".repeat(l.depth.min(16) as usize), l.text)}</span>
                if let Some(s) = l.step { <span class="asm-step">{format!("s{s}")}</span> }
            </div>
        }
    });
    // One tab stop: the arrow keys select instructions (`page::keys`).
    let onkeydown = {
        let app = app.clone();
        let len = compile.asm.len();
        Callback::from(move |e: KeyboardEvent| {
            let current = app.ui.selected_instr.map(|i| i as usize);
            if let Some(next) = keys::list_move(&e.key(), current, len) {
                e.prevent_default();
                app.dispatch(Action::SelectInstr(Some(next as u32)));
            }
        })
    };
    let active = app.ui.selected_instr.map(|i| format!("asm-{i}"));
    let note = if app.results.sim.is_some() {
        format!(
            "{} instructions · highlighted: executing at cycle {cursor}",
            compile.asm.len()
        )
    } else {
        format!("{} instructions", compile.asm.len())
    };
    html! {
        <div class="asm">
            <div class="panel-note">{note}</div>
            <SyncCard />
            <div class="asm-list code-view" ref={list_ref} tabindex="0" role="listbox"
                aria-label="Assembly: ↑ and ↓ select an instruction" aria-activedescendant={active}
                {onkeydown} data-testid="asm-list">
                {for header}
                {for lines}
            </div>
        </div>
    }
}
