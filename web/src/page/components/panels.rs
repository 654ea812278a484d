//! The right-hand side: a tab strip and the selected panel.

use yew::prelude::*;

use super::{
    assembly::AssemblyPanel, compare::ComparePanel, output::OutputPanel, passes::PassesPanel,
    problems::ProblemsPanel, steps::StepsPanel, timeline::TimelinePanel, use_app,
};
use crate::page::share::Panel;
use crate::page::state::Action;

#[function_component]
pub fn Panels() -> Html {
    let app = use_app();
    let sim_problems = app.results.sim.as_ref().map_or(0, |s| s.problem_count());
    let problems = app
        .results
        .compile
        .as_ref()
        .map_or(0, |c| c.diagnostics.len())
        + sim_problems;
    let errors = app.results.compile.as_ref().map_or(0, |c| c.error_count()) + sim_problems;
    let tabs = Panel::ALL.iter().enumerate().map(|(i, panel)| {
        let panel = *panel;
        let selected = app.view.panel == panel;
        let onclick = {
            let app = app.clone();
            Callback::from(move |_| app.dispatch(Action::SelectPanel(panel)))
        };
        let badge = (panel == Panel::Problems && problems > 0)
            .then(|| html! { <span class={classes!("tab-badge", (errors == 0).then_some("tab-badge-warning"))}>{problems}</span> });
        html! {
            <button class={classes!("tab", selected.then_some("tab-selected"))} role="tab"
                aria-selected={selected.to_string()} title={format!("{} (Alt+{})", panel.title(), i + 1)} {onclick}>
                {panel.title()}{badge}
            </button>
        }
    });
    let body = panel_body(app.view.panel);
    html! {
        <div class="panels">
            <nav class="tabs" role="tablist">{ for tabs }</nav>
            <div class="panel-body" role="tabpanel">{body}</div>
        </div>
    }
}

/// What `panel` shows (the full page's selected tab, or an embed's one panel).
pub fn panel_body(panel: Panel) -> Html {
    match panel {
        Panel::Passes => html! { <PassesPanel /> },
        Panel::Steps => html! { <StepsPanel /> },
        Panel::Timeline => html! { <TimelinePanel /> },
        Panel::Assembly => html! { <AssemblyPanel /> },
        Panel::Output => html! { <OutputPanel /> },
        Panel::Problems => html! { <ProblemsPanel /> },
        Panel::Compare => html! { <ComparePanel /> },
    }
}

/// The body of a panel with nothing to show yet: a title and what will appear here.
#[derive(Properties, PartialEq)]
pub struct EmptyProps {
    pub title: AttrValue,
    pub children: Html,
}

#[function_component]
pub fn EmptyState(props: &EmptyProps) -> Html {
    html! {
        <div class="empty">
            <div class="empty-title">{props.title.clone()}</div>
            <div class="empty-text">{props.children.clone()}</div>
        </div>
    }
}
