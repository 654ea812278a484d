//! The Passes panel: the pass list (changed ones marked), the selected pass's IR with
//! its description, or its diff against the previous pass. IR lines link to source
//! spans both ways: hovering a line highlights its span in the editor, and lines whose
//! span holds the editor caret are marked.

use tilescope::diag::Span;
use yew::prelude::*;

use super::{panels::EmptyState, sync_card::SyncCard, use_app};
use crate::page::diff::{self, DiffKind};
use crate::page::keys;
use crate::page::share::Panel;
use crate::page::state::Action;

#[function_component]
pub fn PassesPanel() -> Html {
    let app = use_app();
    // Hooks come before the early returns below: Yew needs the same hooks every render.
    let ir_ref = use_node_ref();
    // The IR line the arrow keys are on.
    let ir_focus = use_state(|| None::<usize>);
    {
        let ir_ref = ir_ref.clone();
        use_effect_with(*ir_focus, move |_| {
            let focused = ir_ref
                .cast::<web_sys::Element>()
                .and_then(|ir| ir.query_selector(".ir-focus").ok().flatten());
            if let Some(line) = focused {
                let options = web_sys::ScrollIntoViewOptions::new();
                options.set_block(web_sys::ScrollLogicalPosition::Nearest);
                line.scroll_into_view_with_scroll_into_view_options(&options);
            }
        });
    }
    // When the caret moves, bring the first IR line it maps to into view.
    {
        let ir_ref = ir_ref.clone();
        use_effect_with(
            (app.ui.caret, app.view.pass.clone(), app.ui.selected_step),
            move |_| {
                let linked = ir_ref
                    .cast::<web_sys::Element>()
                    .and_then(|ir| ir.query_selector(".ir-linked").ok().flatten());
                if let Some(line) = linked {
                    let options = web_sys::ScrollIntoViewOptions::new();
                    options.set_block(web_sys::ScrollLogicalPosition::Nearest);
                    line.scroll_into_view_with_scroll_into_view_options(&options);
                }
            },
        );
    }
    let Some(compile) = app.results.compile.clone() else {
        return html! { <EmptyState title="No results yet">{"The compiler has not answered yet."}</EmptyState> };
    };
    if compile.passes.is_empty() {
        let app = app.clone();
        let n = compile.error_count();
        let onclick = Callback::from(move |_| app.dispatch(Action::SelectPanel(Panel::Problems)));
        return html! {
            <EmptyState title="No passes to show">
                {format!("The source did not get through the front end ({n} error{}). ", if n == 1 { "" } else { "s" })}
                <button class="link" {onclick}>{"Open Problems"}</button>
            </EmptyState>
        };
    }
    let selected = app.selected_pass().unwrap_or(0);
    let visible = app.visible_passes();

    let onkeydown = {
        let app = app.clone();
        Callback::from(move |e: KeyboardEvent| {
            let delta = match e.key().as_str() {
                "ArrowUp" | "k" => -1,
                "ArrowDown" | "j" => 1,
                _ => return,
            };
            e.prevent_default();
            app.dispatch(Action::MovePass(delta));
        })
    };
    let on_hide = {
        let app = app.clone();
        Callback::from(move |_| app.dispatch(Action::ToggleHideUnchanged))
    };
    let list = visible.iter().map(|(i, pass)| {
        let onclick = {
            let app = app.clone();
            let name = pass.name.clone();
            Callback::from(move |_| app.dispatch(Action::SelectPass(name.clone())))
        };
        html! {
            <li class={classes!("pass", (*i == selected).then_some("pass-selected"), (!pass.changed).then_some("pass-unchanged"))}
                {onclick} title={pass.description.clone()} data-testid="pass-item" data-pass={pass.name.clone()}>
                <span class={classes!("pass-dot", pass.changed.then_some("pass-dot-changed"))}
                    title={if pass.changed { "changed the IR" } else { "no change" }} />
                <span class="pass-index">{i + 1}</span>
                <span class="pass-name">{pass.name.clone()}</span>
                <span class="pass-time">{format_micros(pass.micros)}</span>
            </li>
        }
    });

    // A compile that failed part-way shows the passes that ran, then where it stopped.
    let failure = compile
        .diagnostics
        .iter()
        .find(|d| d.severity == tilescope::diag::Severity::Error)
        .map(|d| {
            let open = {
                let app = app.clone();
                Callback::from(move |_| app.dispatch(Action::SelectPanel(Panel::Problems)))
            };
            let after = compile.passes.last().map_or("", |p| p.name.as_str());
            html! {
                <li class="pass pass-failed" data-testid="pass-failed">
                    <span class="pass-dot pass-dot-failed" title="the compile stopped here" />
                    <span class="pass-name">
                        {format!("stopped after {after}: {}", d.message)}
                        {" "}<button class="link" onclick={open}>{"Open Problems"}</button>
                    </span>
                </li>
            }
        });

    let Some(pass) = compile.passes.get(selected) else {
        return html! {};
    };
    let previous = selected.checked_sub(1).and_then(|i| compile.passes.get(i));
    let caret = app.ui.caret as u32;
    // Lines of the selected step (spans inside the step's), else lines holding the caret.
    let step_span = app
        .ui
        .selected_step
        .and_then(|id| compile.steps.as_ref()?.node(id))
        .map(|n| n.step.span);
    let line_class = |span: Option<Span>| {
        let span = span?;
        match step_span {
            Some(step) => (step.start <= span.start && span.end <= step.end).then_some("ir-linked"),
            None => (span.start <= caret && caret <= span.end).then_some("ir-linked"),
        }
    };
    let hover = |span: Option<Span>| {
        let app = app.clone();
        Callback::from(move |_: MouseEvent| app.dispatch(Action::LinkSpan(span)))
    };
    // Set/wait lines open the pair's card, as in the Assembly panel: a line whose
    // instructions (core's provenance) include one of a pair.
    let sync_instr = |line: Option<usize>| {
        pass.instrs_of_line(line?).iter().copied().find(|&i| {
            compile
                .asm
                .get(i as usize)
                .is_some_and(|a| a.sync.is_some())
        })
    };
    let pick = |instr: Option<u32>| {
        let (instr, app) = (instr?, app.clone());
        Some(Callback::from(move |_: MouseEvent| {
            app.dispatch(Action::SelectInstr(Some(instr)))
        }))
    };
    let unhover = {
        let app = app.clone();
        Callback::from(move |_: MouseEvent| app.dispatch(Action::LinkSpan(None)))
    };

    // The IR is one tab stop: ↑ and ↓ move through its lines, linking each to its
    // source as the pointer does; Enter on a set or wait line opens the pair's card.
    let focus = *ir_focus;
    let mut shown: Vec<(Option<Span>, Option<u32>)> = Vec::new();
    let (body, stats) = if app.ui.show_diff {
        let old = previous.map_or("", |p| p.ir.as_str());
        let lines = diff::diff_lines(old, &pass.ir);
        let stats = diff::stats(&lines);
        let body: Html = lines
            .into_iter()
            .map(|l| {
                let span = l.new_line.and_then(|n| pass.span_of_line(n));
                let (class, sign) = match l.kind {
                    DiffKind::Same => ("ir-line", " "),
                    DiffKind::Added => ("ir-line ir-added", "+"),
                    DiffKind::Removed => ("ir-line ir-removed", "−"),
                };
                let instr = sync_instr(l.new_line);
                let onclick = pick(instr);
                let n = shown.len();
                shown.push((span, instr));
                html! {
                    <div class={classes!(class, line_class(span), instr.map(|_| "ir-sync"), (focus == Some(n)).then_some("ir-focus"))}
                        data-instr={instr.map(|i| i.to_string())} onmouseenter={hover(span)} {onclick}
                        id={format!("ir-line-{n}")} role="option" aria-selected={(focus == Some(n)).to_string()}>
                        <span class="ir-ln">{l.new_line.map(|n| (n + 1).to_string()).unwrap_or_default()}</span>
                        <span class="ir-sign">{sign}</span>
                        <span class="ir-text">{l.text}</span>
                    </div>
                }
            })
            .collect();
        (body, Some(stats))
    } else {
        let body: Html = pass
            .ir
            .lines()
            .enumerate()
            .map(|(n, text)| {
                let span = pass.span_of_line(n);
                let instr = sync_instr(Some(n));
                let onclick = pick(instr);
                shown.push((span, instr));
                html! {
                    <div class={classes!("ir-line", line_class(span), instr.map(|_| "ir-sync"), (focus == Some(n)).then_some("ir-focus"))}
                        data-instr={instr.map(|i| i.to_string())} onmouseenter={hover(span)} {onclick}
                        id={format!("ir-line-{n}")} role="option" aria-selected={(focus == Some(n)).to_string()}>
                        <span class="ir-ln">{n + 1}</span>
                        <span class="ir-text">{text.to_string()}</span>
                    </div>
                }
            })
            .collect();
        (body, None)
    };

    let on_ir_key = {
        let app = app.clone();
        let ir_focus = ir_focus.clone();
        Callback::from(move |e: KeyboardEvent| {
            if e.key() == "Enter" {
                if let Some(instr) = focus.and_then(|n| shown.get(n)).and_then(|l| l.1) {
                    e.prevent_default();
                    app.dispatch(Action::SelectInstr(Some(instr)));
                }
                return;
            }
            if let Some(next) = keys::list_move(&e.key(), focus, shown.len()) {
                e.prevent_default();
                ir_focus.set(Some(next));
                app.dispatch(Action::LinkSpan(shown[next].0));
            }
        })
    };
    let ir_active = focus.map(|n| format!("ir-line-{n}"));
    let mode = |diff: bool, label: &'static str| {
        let app = app.clone();
        let active = app.ui.show_diff == diff;
        let onclick = Callback::from(move |_| {
            if !active {
                app.dispatch(Action::ToggleDiff);
            }
        });
        html! { <button class={classes!("seg", active.then_some("seg-active"))} {onclick}>{label}</button> }
    };

    html! {
        <div class="passes">
            <div class="pass-list-wrap">
                <div class="pass-list-head">
                    <label class="check" title="Hide passes that changed nothing (h)">
                        <input type="checkbox" checked={app.ui.hide_unchanged} onchange={on_hide} />
                        {"hide unchanged"}
                    </label>
                </div>
                <ol class="pass-list" tabindex="0" {onkeydown} aria-label="Passes (arrow keys move)">
                    { for list }
                    { for failure }
                </ol>
                <PassSwitches />
            </div>
            <div class="pass-view">
                <div class="pass-head">
                    <div class="pass-title">
                        <span class="pass-title-name">{pass.name.clone()}</span>
                        <span class="pass-desc">{pass.description.clone()}</span>
                    </div>
                    if let Some((added, removed)) = stats {
                        <span class="diff-stats"><span class="plus">{format!("+{added}")}</span>{" "}<span class="minus">{format!("−{removed}")}</span></span>
                    }
                    <div class="segmented" title="d toggles">
                        {mode(false, "IR")}
                        {mode(true, "Diff")}
                    </div>
                </div>
                if !pass.notes.is_empty() {
                    <ul class="pass-notes" data-testid="pass-notes" aria-label="What this pass left as written, and why">
                        { for pass.notes.iter().map(|n| html! { <li>{format!("Note at {n}")}</li> }) }
                    </ul>
                }
                <SyncCard />
                <div class="ir" ref={ir_ref} onmouseleave={unhover} data-testid="ir-view" data-pass={pass.name.clone()}
                    tabindex="0" role="listbox" onkeydown={on_ir_key} aria-activedescendant={ir_active}
                    aria-label={format!("The IR after {}: ↑ and ↓ move through its lines, Enter opens a sync line's card", pass.name)}>{body}</div>
            </div>
        </div>
    }
}

/// A pass's time to a tenth of a millisecond: browsers coarsen `performance.now`
/// (Chromium to 0.1 ms in a worker that is not cross-origin isolated), so finer digits
/// would be noise and a zero would claim a pass took no time.
fn format_micros(us: u64) -> String {
    if us < 100 {
        "<0.1 ms".to_string()
    } else {
        format!("{:.1} ms", us as f64 / 1000.0)
    }
}

/// What a pass does to the run, in words and as a class coloured by its sign: the run
/// with it took `with` cycles, without it `without`.
fn cycle_effect(with: u64, without: u64) -> (String, &'static str) {
    match with.cmp(&without) {
        std::cmp::Ordering::Less => (
            format!("saves {} cycles", without - with),
            "pass-effect pass-effect-gain",
        ),
        std::cmp::Ordering::Greater => (
            format!("costs {} cycles", with - without),
            "pass-effect pass-effect-cost",
        ),
        std::cmp::Ordering::Equal => ("no change".into(), "pass-effect"),
    }
}

/// A switch per optional pass, with what it buys: the cycles of the run on screen
/// against the run without it (measured by the worker once the result has settled).
#[function_component]
fn PassSwitches() -> Html {
    let app = use_app();
    let cycles = app.results.sim.as_ref().map(|s| s.cycles);
    let rows = tilescope::passes::optional_passes().into_iter().map(|name| {
        let on = !app.view.options.disabled_passes.iter().any(|p| p == name);
        let effect = app
            .results
            .ablation
            .as_ref()
            .and_then(|a| a.iter().find(|r| r.pass == name))
            .zip(cycles)
            .map(|(r, with)| match &r.error {
                Some(e) => (format!("needed: {e}"), "pass-effect-needed"),
                None if !r.matches_reference => ("needed: wrong without".into(), "pass-effect-needed"),
                None => cycle_effect(with, r.cycles),
            });
        let onchange = {
            let app = app.clone();
            Callback::from(move |_: Event| app.dispatch(Action::TogglePass(name.to_string())))
        };
        html! {
            <li class="pass-switch" data-testid="pass-switch" data-pass={name}>
                <label class="check" title={if on { "On: turn it off to see what it buys" } else { "Off: the compile leaves it out" }}>
                    <input type="checkbox" checked={on} {onchange} />
                    <span class="pass-switch-name">{name}</span>
                </label>
                if let Some((text, class)) = effect {
                    <span class={class} data-testid="pass-effect">{text}</span>
                }
            </li>
        }
    });
    html! {
        <div class="pass-switches">
            <div class="pass-switches-head" title="Optional passes: turn one off to see what it buys">{"optional passes"}</div>
            <ul>{ for rows }</ul>
        </div>
    }
}

#[cfg(test)]
mod tests {
    use super::{cycle_effect, format_micros};

    #[test]
    fn a_pass_that_makes_the_run_slower_is_a_cost_not_a_gain() {
        assert_eq!(
            cycle_effect(1000, 1387),
            ("saves 387 cycles".into(), "pass-effect pass-effect-gain")
        );
        assert_eq!(
            cycle_effect(1387, 1000),
            ("costs 387 cycles".into(), "pass-effect pass-effect-cost")
        );
        assert_eq!(cycle_effect(5, 5), ("no change".into(), "pass-effect"));
    }

    #[test]
    fn pass_times_show_tenths_of_a_millisecond() {
        assert_eq!(format_micros(0), "<0.1 ms");
        assert_eq!(format_micros(99), "<0.1 ms");
        assert_eq!(format_micros(199), "0.2 ms");
        assert_eq!(format_micros(2_000), "2.0 ms");
    }
}
