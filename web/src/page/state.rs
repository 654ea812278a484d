//! App state and its reducer. Pure data (no web-sys), so every transition is tested
//! natively; components dispatch `Action`s and effects in `components::app` do the I/O.
//! The state is split by concern: `view` (what a share link restores), `results` (what
//! the worker answered for the text on screen), `requests` (the ids in flight), `ui`
//! and `lessons`; `AppState::apply` is the one reducer over all of them.

use std::collections::BTreeMap;
use std::rc::Rc;

use serde::{Deserialize, Serialize};

use tilescope::diag::Span;
use yew::Reducible;

use crate::catalog;
use crate::page::embed::EmbedOptions;
use crate::page::lessons::Grade;
use crate::page::lessons::{self, Lesson, Progress};
use crate::page::share::{Panel, ViewState};
use crate::page::tracker::Purpose;
use crate::protocol::options::{AliasMode, CompileOptions, Preset, SyncStrategy};
use crate::protocol::{AsmLine, CompileOutput, PassRecord, Response, SimOutput};
use tilescope::run::Ablation;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Theme {
    /// Follow `prefers-color-scheme`.
    #[default]
    System,
    Light,
    Dark,
}

impl Theme {
    pub fn name(self) -> &'static str {
        match self {
            Theme::System => "system",
            Theme::Light => "light",
            Theme::Dark => "dark",
        }
    }

    pub fn from_name(name: &str) -> Theme {
        match name {
            "light" => Theme::Light,
            "dark" => Theme::Dark,
            _ => Theme::System,
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Overlay {
    #[default]
    None,
    Help,
    Gallery,
    Lessons,
    /// The link and the embed snippet.
    Share,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BannerKind {
    Info,
    Error,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Banner {
    pub kind: BannerKind,
    pub text: String,
    /// Text the banner offers to copy and shows on request (the input that crashed the
    /// compiler).
    pub input: Option<String>,
    /// It reports trouble with the worker, which the next finished run shows is over:
    /// that run takes the banner away.
    pub until_next_run: bool,
}

impl Banner {
    pub fn info(text: impl Into<String>) -> Banner {
        Banner {
            kind: BannerKind::Info,
            text: text.into(),
            input: None,
            until_next_run: false,
        }
    }

    pub fn error(text: impl Into<String>) -> Banner {
        Banner {
            kind: BannerKind::Error,
            text: text.into(),
            input: None,
            until_next_run: false,
        }
    }

    /// The worker stopped or was replaced; the next finished run removes this.
    pub fn worker_trouble(text: impl Into<String>) -> Banner {
        Banner {
            until_next_run: true,
            ..Banner::error(text)
        }
    }
}

/// A request to move the editor caret; `nonce` makes repeated jumps to the same place
/// observable as changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Jump {
    pub at: usize,
    pub nonce: u64,
}

/// The open lesson's session: its latest grade, the hints shown, how often it was
/// checked. Reset when a lesson is opened; the grade request in flight is in
/// `Requests::grade`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LessonSession {
    pub grade: Option<Rc<Grade>>,
    /// The text `grade` judged: once the editor holds something else, the verdict is
    /// about code that is no longer there.
    pub graded_source: Option<String>,
    /// The text of the grade request in flight.
    pub grading_source: Option<String>,
    pub hints: usize,
    pub tries: u32,
    pub solution_shown: bool,
}

impl LessonSession {
    /// The verdict on screen judged `source`, the text in the editor now.
    pub fn grade_is_for(&self, source: &str) -> bool {
        self.graded_source.as_deref() == Some(source)
    }

    /// The reference solution may be shown: after a pass, or after
    /// `SOLUTION_AFTER_TRIES` checks.
    pub fn solution_unlocked(&self) -> bool {
        self.tries >= lessons::SOLUTION_AFTER_TRIES || self.grade.as_ref().is_some_and(|g| g.passed)
    }
}

impl LessonSession {
    fn of(work: &LessonWork) -> LessonSession {
        LessonSession {
            grade: work.grade.clone().map(Rc::new),
            graded_source: work.graded_source.clone(),
            grading_source: None,
            hints: work.hints,
            tries: work.tries,
            solution_shown: work.solution_shown,
        }
    }
}

/// A student's work in one lesson: the code, the hints shown, the checks and the last
/// verdict. Kept while they open other lessons and examples, and across reloads
/// (local storage), so reopening a lesson shows their code, not the starter.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct LessonWork {
    pub source: String,
    pub hints: usize,
    pub tries: u32,
    pub solution_shown: bool,
    pub grade: Option<Grade>,
    pub graded_source: Option<String>,
}

/// The lesson track: the open lesson's session, every lesson's work, and the medals
/// earned.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LessonState {
    pub session: LessonSession,
    /// By lesson id (kept in local storage).
    pub work: BTreeMap<String, LessonWork>,
    /// The best medal of every lesson passed (kept in local storage).
    pub progress: Progress,
}

/// What the worker answered for the text and options on screen.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Results {
    pub compile: Option<Rc<CompileOutput>>,
    pub sim: Option<Rc<SimOutput>>,
    /// Counts the simulations received, so views can tell a new run from the one they
    /// drew (an `Rc` address cannot: a freed run's address is reused by the next).
    pub sim_generation: u64,
    /// The worker crashed on the newest request: the panels still show the last
    /// compile that succeeded, for an older text, until the next one answers.
    pub stale: bool,
    /// The compile on screen went on to simulate, and that run never finished (the
    /// worker stopped answering): why, for the status bar and Problems.
    pub run_stopped: Option<String>,
    /// What each optional pass buys: the run without it, for the result on screen.
    pub ablation: Option<Rc<Vec<Ablation>>>,
    /// The run under the Compare panel's second option set, for the text on screen.
    pub compare_sim: Option<Rc<Compared>>,
}

impl Results {
    /// The final program's lines, or none before a compile succeeds.
    pub fn asm(&self) -> &[AsmLine] {
        self.compile.as_deref().map_or(&[], |c| c.asm.as_slice())
    }
}

/// What the page waits for from the worker, by purpose. The ids are the worker link's
/// (`tracker.rs`), which passes on only the answer to the newest request of each
/// purpose; the state ignores an answer it has stopped waiting for (an edit made the
/// ablation or comparison pointless, a lesson closed before its grade came).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Requests {
    /// A compile (or its simulation) is in flight.
    pub compile: bool,
    /// The compile answered and the simulation of the same request is running.
    pub simulating: bool,
    /// Ablation runs for the result on screen.
    pub ablation: bool,
    /// The Compare panel's run.
    pub compare: bool,
    /// The open lesson's grade.
    pub grade: bool,
}

impl Requests {
    /// A compile (or its simulation) is in flight.
    pub fn is_busy(&self) -> bool {
        self.compile
    }

    /// The worker is gone: nothing it was asked will answer.
    pub fn clear_all(&mut self) {
        *self = Requests::default();
    }

    /// Whether the page waits for an answer for `purpose`.
    fn waits_for(&self, purpose: Purpose) -> bool {
        match purpose {
            Purpose::Compile => self.compile,
            Purpose::Grade => self.grade,
            Purpose::Ablation => self.ablation,
            Purpose::Compare => self.compare,
            Purpose::Trace => false,
        }
    }

    /// No answer will come for `purpose`.
    fn forget(&mut self, purpose: Purpose) {
        match purpose {
            Purpose::Compile => {
                self.compile = false;
                self.simulating = false;
            }
            Purpose::Grade => self.grade = false,
            Purpose::Ablation => self.ablation = false,
            Purpose::Compare => self.compare = false,
            Purpose::Trace => {}
        }
    }
}

/// What the page shows around the results: theme, messages, overlays, the panels'
/// switches, the links between the editor and the IR, and the worker's health.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ui {
    pub theme: Theme,
    pub banner: Option<Banner>,
    pub overlay: Overlay,
    pub hide_unchanged: bool,
    pub show_diff: bool,
    /// Source span highlighted because the pointer is on an IR line.
    pub linked_span: Option<Span>,
    /// Editor caret (byte offset), to highlight the IR lines it came from.
    pub caret: usize,
    pub jump: Option<Jump>,
    /// The step clicked in the step graph: highlighted there, in the IR, the editor and
    /// on the timeline.
    pub selected_step: Option<u32>,
    /// The instruction picked in the Assembly panel or on the timeline.
    pub selected_instr: Option<u32>,
    /// The loaded example's notes above the editor were dismissed.
    pub example_note_hidden: bool,
    /// The "Start here" card that points a newcomer at lesson 1 is shown (until it is
    /// dismissed or a lesson is opened; remembered in local storage).
    pub start_here: bool,
    pub worker_restarts: u32,
    /// The worker could not be loaded, and why: nothing compiles.
    pub worker_unavailable: Option<String>,
    /// The page is an embed (`?embed=...`): one panel, and runs on Run.
    pub embed: Option<Embedded>,
}

/// An embedded view's options and the text its last Run compiled.
#[derive(Clone, Debug, PartialEq)]
pub struct Embedded {
    pub options: EmbedOptions,
    /// What the results on screen are for: an embed compiles on Run (and once when it
    /// loads), not while the student types.
    pub ran: String,
}

/// The page's state, by concern. `apply` is the one reducer over all of it.
#[derive(Clone, Debug, PartialEq)]
pub struct AppState {
    /// What a share link restores: the text, options, pass, panel, cursor, lesson.
    pub view: ViewState,
    pub results: Results,
    pub requests: Requests,
    pub ui: Ui,
    pub lessons: LessonState,
}

/// The Compare panel's second run: its simulation, or why there is none.
#[derive(Clone, Debug, PartialEq)]
pub enum Compared {
    Ran(Box<SimOutput>),
    Failed(String),
}

impl Default for AppState {
    fn default() -> Self {
        AppState::new(default_view())
    }
}

pub fn default_view() -> ViewState {
    let example = catalog::default_example();
    ViewState {
        source: example.source.to_string(),
        example: Some(example.name.to_string()),
        options: crate::protocol::options::playground(),
        pass: None,
        // A newcomer starts where the examples' teaching text points: the timeline.
        panel: Panel::Timeline,
        cursor: 0,
        seed: 0,
        lesson: None,
        compare: None,
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    SetSource(String),
    LoadExample(String),
    SetPreset(Preset),
    SetSync(SyncStrategy),
    SetAlias(AliasMode),
    SetMultibuffer(bool),
    SelectPass(String),
    /// Move the pass selection by this many visible passes (arrow keys).
    MovePass(isize),
    SelectPanel(Panel),
    SetCursor(u64),
    SetTheme(Theme),
    ShowOverlay(Overlay),
    ToggleHideUnchanged,
    ToggleDiff,
    /// The worker link sent a request for this purpose.
    Sent(Purpose),
    /// The answer to the newest request of this purpose (the link drops the others);
    /// boxed: results are large next to every other action.
    Received(Purpose, Box<Response>),
    /// The worker died or stopped answering; it has been restarted.
    WorkerRestarted(String),
    /// The worker panicked on a request whose source was `input`; it has been
    /// restarted. `purpose` is what the request was for, if its answer still counted;
    /// the newest request of every other purpose was sent to the new worker.
    WorkerCrashed {
        purpose: Option<Purpose>,
        message: String,
        input: String,
    },
    /// The worker's script or module could not be loaded (the text says why): nothing
    /// compiles until the page is reloaded, and the text is kept.
    WorkerUnavailable(String),
    /// The worker was replaced to cancel a long run (an edit came in): whatever it was
    /// asked is gone, and the newer compile follows.
    WorkerReplaced,
    /// An embed's Run: compile and simulate the text in the editor.
    Run,
    /// Esc: close the overlay, else the banner.
    Escape,
    /// Close the "Start here" card for good.
    DismissStartHere,
    ShowBanner(Banner),
    DismissBanner,
    LinkSpan(Option<Span>),
    Caret(usize),
    JumpTo(usize),
    /// Select a step (or clear the selection): links its span and shows the pass with
    /// steps.
    SelectStep(Option<u32>),
    /// Select an instruction of the final program: links its span and step.
    SelectInstr(Option<u32>),
    /// Show a runtime problem: the timeline at `cycle`.
    ShowCycle(u64),
    HideExampleNote,
    /// Turn an optional pass off, or back on.
    TogglePass(String),
    /// Set (or clear) the Compare panel's second option set.
    /// Boxed: core's options hold a whole machine description.
    SetCompare(Option<Box<CompileOptions>>),
    /// Set one option (`preset`, `sync`, `alias`) of the Compare panel's second set by
    /// its name; an unknown value changes nothing.
    SetCompareOption(&'static str, String),
    /// What the open lesson's pane does (only with the lesson track).
    Lesson(LessonAction),
}

#[derive(Clone, Debug, PartialEq)]
pub enum LessonAction {
    /// Open a lesson by id: its starter code, preset and options.
    Open(String),
    /// Leave the lesson; the code stays in the editor.
    Close,
    ShowHint,
    ShowSolution,
    /// Put the lesson's starter code back in the editor.
    ResetStarter,
}

/// Turns an optional pass off, or back on; a name that is not an optional pass is
/// ignored (the switches only offer those).
fn toggle_pass(disabled: &mut Vec<String>, name: String) {
    if let Some(at) = disabled.iter().position(|p| *p == name) {
        disabled.remove(at);
    } else if tilescope::passes::optional_passes().contains(&name.as_str()) {
        disabled.push(name);
    }
}

impl AppState {
    pub fn new(view: ViewState) -> AppState {
        AppState {
            view,
            results: Results::default(),
            requests: Requests::default(),
            ui: Ui::default(),
            lessons: LessonState::default(),
        }
    }

    /// Lessons passed, for the toolbar.
    pub fn lessons_passed(&self) -> usize {
        self.lessons.progress.passed()
    }

    /// The lesson open beside the editor.
    pub fn open_lesson(&self) -> Option<&'static Lesson> {
        lessons::find(self.view.lesson.as_deref()?)
    }

    /// What the editor holds, as a title: the open lesson, the example it came from,
    /// or "Kernel" (an embed's bar, an embed frame's title).
    pub fn source_title(&self) -> String {
        match (
            self.open_lesson(),
            self.view.example.as_deref().and_then(catalog::find),
        ) {
            (Some(l), _) => format!("Lesson {} · {}", l.number, l.title),
            (None, Some(e)) => e.title.to_string(),
            (None, None) => "Kernel".to_string(),
        }
    }

    /// The text the worker compiles: the editor's, or in an embed the last Run's.
    pub fn compiled_source(&self) -> &str {
        match &self.ui.embed {
            Some(embed) => &embed.ran,
            None => &self.view.source,
        }
    }

    /// An embed whose editor holds an edit its last Run did not see.
    pub fn edited_since_run(&self) -> bool {
        self.ui
            .embed
            .as_ref()
            .is_some_and(|e| e.ran != self.view.source)
    }

    /// The editor takes no edits (a read-only embed).
    pub fn read_only(&self) -> bool {
        self.ui.embed.as_ref().is_some_and(|e| e.options.read_only)
    }

    /// The editor holds a hand-written `.tasm` program (an assembly lesson).
    pub fn is_asm(&self) -> bool {
        self.open_lesson()
            .is_some_and(|l| l.kind == lessons::LessonKind::Asm)
    }

    /// Passes shown in the list (all, or the changed ones, the ones that say what they
    /// left as written, and the first).
    pub fn visible_passes(&self) -> Vec<(usize, &PassRecord)> {
        let Some(compile) = &self.results.compile else {
            return Vec::new();
        };
        compile
            .passes
            .iter()
            .enumerate()
            .filter(|(i, p)| !self.ui.hide_unchanged || p.changed || !p.notes.is_empty() || *i == 0)
            .collect()
    }

    /// Index of the selected pass: the named one, else the last pass.
    pub fn selected_pass(&self) -> Option<usize> {
        let passes = &self.results.compile.as_ref()?.passes;
        self.view
            .pass
            .as_ref()
            .and_then(|name| passes.iter().position(|p| &p.name == name))
            .or_else(|| passes.len().checked_sub(1))
    }

    /// The options or source changed: the simulation on screen no longer matches and is
    /// dropped; the compile stays until the next response replaces it, so the pass
    /// panels do not flicker while typing.
    fn invalidate(&mut self) {
        self.results.sim = None;
        self.results.ablation = None;
        self.requests.ablation = false;
        self.results.compare_sim = None;
        self.requests.compare = false;
    }

    pub fn apply(&mut self, action: Action) {
        self.apply_action(action);
        self.keep_work();
    }

    /// The open lesson's code and session, into its `LessonWork`.
    fn keep_work(&mut self) {
        let Some(id) = self.view.lesson.clone() else {
            return;
        };
        let session = &self.lessons.session;
        let work = LessonWork {
            source: self.view.source.clone(),
            hints: session.hints,
            tries: session.tries,
            solution_shown: session.solution_shown,
            grade: session.grade.as_deref().cloned(),
            graded_source: session.graded_source.clone(),
        };
        if self.lessons.work.get(&id) != Some(&work) {
            self.lessons.work.insert(id, work);
        }
    }

    fn apply_action(&mut self, action: Action) {
        match action {
            Action::SetSource(_) if self.read_only() => {}
            Action::SetSource(source) => {
                if source != self.view.source {
                    self.view.source = source;
                    // An embed keeps its results until Run.
                    if self.ui.embed.is_none() {
                        self.invalidate();
                    }
                }
            }
            Action::Run => {
                if let Some(embed) = &mut self.ui.embed {
                    if embed.ran != self.view.source {
                        embed.ran = self.view.source.clone();
                        self.invalidate();
                    }
                }
            }
            Action::LoadExample(id) => {
                if let Some(example) = catalog::find(&id) {
                    self.view.source = example.source.to_string();
                    self.view.example = Some(example.name.to_string());
                    self.view.lesson = None;
                    self.new_lesson_session();
                    self.ui.example_note_hidden = false;
                    self.view.options.kernel = None;
                    self.ui.overlay = Overlay::None;
                    self.clear_selection();
                    self.invalidate();
                }
            }
            // A lesson is graded on its own preset: the timeline shows that machine too.
            Action::SetPreset(_) if self.view.lesson.is_some() => {}
            Action::SetPreset(p) => {
                p.set(&mut self.view.options);
                self.invalidate();
            }
            Action::SetSync(s) => {
                self.view.options.sync = s;
                self.invalidate();
            }
            Action::SetAlias(a) => {
                self.view.options.alias = a;
                self.invalidate();
            }
            Action::SetMultibuffer(on) => {
                self.view.options.auto_multi_buffer = on;
                self.invalidate();
            }
            Action::SelectPass(name) => self.view.pass = Some(name),
            Action::MovePass(delta) => self.move_pass(delta),
            Action::SelectPanel(panel) => self.view.panel = panel,
            Action::SetCursor(c) => self.view.cursor = c,
            Action::SetTheme(t) => self.ui.theme = t,
            Action::ShowOverlay(o) => {
                self.ui.overlay = if self.ui.overlay == o {
                    Overlay::None
                } else {
                    o
                }
            }
            Action::ToggleHideUnchanged => self.ui.hide_unchanged = !self.ui.hide_unchanged,
            Action::ToggleDiff => self.ui.show_diff = !self.ui.show_diff,
            Action::Sent(purpose) => self.sent(purpose),
            Action::Received(purpose, response) => self.receive(purpose, *response),
            Action::WorkerRestarted(message) => {
                if self.requests.simulating && self.results.sim.is_none() {
                    self.results.run_stopped =
                        Some(format!("the simulation gave no answer ({message})"));
                }
                self.requests.clear_all();
                self.lessons.session.grading_source = None;
                self.ui.worker_restarts += 1;
                self.ui.banner = Some(Banner::worker_trouble(format!(
                    "The compiler stopped ({message}) and was restarted; your text is kept."
                )));
            }
            Action::WorkerReplaced => {
                self.requests.clear_all();
                self.lessons.session.grading_source = None;
            }
            Action::DismissStartHere => self.ui.start_here = false,
            Action::Escape => {
                if self.ui.overlay != Overlay::None {
                    self.ui.overlay = Overlay::None;
                } else {
                    self.ui.banner = None;
                }
            }
            Action::WorkerUnavailable(message) => {
                self.requests.clear_all();
                self.ui.banner = Some(Banner::error(format!(
                    "The compiler could not be loaded ({message}). Your text is kept: check \
                     the connection and reload the page."
                )));
                self.ui.worker_unavailable = Some(message);
            }
            Action::WorkerCrashed {
                purpose,
                message,
                input,
            } => {
                // An older request's crash leaves the newest one in flight (it is resent
                // to the new worker).
                if let Some(purpose) = purpose {
                    self.requests.forget(purpose);
                }
                match purpose {
                    Some(Purpose::Compile) => self.results.stale = self.results.compile.is_some(),
                    Some(Purpose::Grade) => self.lessons.session.grading_source = None,
                    _ => {}
                }
                self.ui.worker_restarts += 1;
                self.ui.banner = Some(Banner {
                    input: Some(input),
                    ..Banner::worker_trouble(format!(
                        "The compiler stopped on this input ({message}). It was restarted and \
                         your text is kept; please report the input."
                    ))
                });
            }
            Action::ShowBanner(b) => self.ui.banner = Some(b),
            Action::DismissBanner => self.ui.banner = None,
            Action::LinkSpan(span) => self.ui.linked_span = span,
            Action::Caret(at) => self.ui.caret = at,
            Action::JumpTo(at) => {
                let nonce = self.ui.jump.map_or(0, |j| j.nonce + 1);
                self.ui.jump = Some(Jump { at, nonce });
                self.ui.caret = at;
            }
            Action::SelectStep(step) => self.select_step(step),
            Action::SelectInstr(instr) => {
                self.ui.selected_instr = instr;
                let line = instr.and_then(|i| self.results.compile.as_ref()?.asm.get(i as usize));
                if let Some(line) = line {
                    self.ui.linked_span = line.span;
                    self.ui.selected_step = line.step;
                    if let Some(span) = line.span {
                        self.apply(Action::JumpTo(span.start as usize));
                    }
                }
            }
            Action::ShowCycle(cycle) => {
                self.view.cursor = cycle;
                self.view.panel = Panel::Timeline;
            }
            Action::HideExampleNote => self.ui.example_note_hidden = true,
            Action::TogglePass(name) => {
                toggle_pass(&mut self.view.options.disabled_passes, name);
                self.invalidate();
            }
            Action::SetCompare(options) => {
                self.view.compare = options.map(|o| *o);
                self.results.compare_sim = None;
                self.requests.compare = false;
            }
            Action::SetCompareOption(field, value) => {
                let Some(mut b) = self.view.compare.clone() else {
                    return;
                };
                match field {
                    "preset" => {
                        if let Some(p) = Preset::from_name(&value) {
                            p.set(&mut b);
                        }
                    }
                    "sync" => b.sync = SyncStrategy::from_name(&value).unwrap_or(b.sync),
                    "alias" => {
                        b.alias = AliasMode::ALL
                            .into_iter()
                            .find(|a| a.name() == value)
                            .unwrap_or(b.alias)
                    }
                    "pass" => toggle_pass(&mut b.disabled_passes, value),
                    _ => {}
                }
                self.apply(Action::SetCompare(Some(Box::new(b))));
            }
            Action::Lesson(action) => self.lesson_action(action),
        }
    }

    fn lesson_action(&mut self, action: LessonAction) {
        match action {
            LessonAction::Open(id) => self.start_lesson(&id),
            LessonAction::Close => {
                self.view.lesson = None;
                self.new_lesson_session();
            }
            LessonAction::ShowHint => {
                let hints = self.open_lesson().map_or(0, |l| l.hints.len());
                self.lessons.session.hints = (self.lessons.session.hints + 1).min(hints);
            }
            LessonAction::ShowSolution => {
                if self.lessons.session.solution_unlocked() {
                    self.lessons.session.solution_shown = true;
                }
            }
            LessonAction::ResetStarter => {
                if let Some(lesson) = self.open_lesson() {
                    self.apply(Action::SetSource(lesson.starter.clone()));
                }
            }
        }
    }

    fn start_lesson(&mut self, id: &str) {
        let Some(lesson) = lessons::find(id) else {
            return;
        };
        self.view.lesson = Some(lesson.id.clone());
        self.view.example = None;
        self.ui.start_here = false;
        // The lesson's own preset name: one the page does not know is the compile's to
        // report, not a silent `teach`.
        self.view.options = CompileOptions {
            preset: Some(lesson.preset.clone()),
            auto_multi_buffer: lesson.auto_buffers,
            ..crate::protocol::options::playground()
        };
        self.view.pass = None;
        // An assembly lesson is about its timeline; a kernel lesson starts where the
        // student last looked.
        if lesson.kind == lessons::LessonKind::Asm {
            self.view.panel = Panel::Timeline;
        }
        // The student's own work in this lesson, else its starter.
        match self.lessons.work.get(&lesson.id) {
            Some(work) => {
                self.view.source = work.source.clone();
                self.lessons.session = LessonSession::of(work);
                self.requests.grade = false;
            }
            None => {
                self.view.source = lesson.starter.clone();
                self.new_lesson_session();
            }
        }
        self.ui.overlay = Overlay::None;
        self.clear_selection();
        self.invalidate();
    }

    /// The lesson after the open one, if any.
    pub fn next_lesson(&self) -> Option<&'static Lesson> {
        let open = self.open_lesson()?;
        lessons::all().iter().find(|l| l.number == open.number + 1)
    }

    /// Another program is on screen: a step, an instruction or a span picked in the old
    /// one would point at something unrelated.
    fn clear_selection(&mut self) {
        self.ui.selected_step = None;
        self.ui.selected_instr = None;
        self.ui.linked_span = None;
        self.ui.jump = None;
    }

    /// A lesson opened, closed or left: a fresh session, and the grade in flight, for
    /// the lesson before, will not count.
    fn new_lesson_session(&mut self) {
        self.lessons.session = LessonSession::default();
        self.requests.grade = false;
    }

    fn select_step(&mut self, step: Option<u32>) {
        self.ui.selected_step = step;
        let Some(compile) = self.results.compile.clone() else {
            return;
        };
        let node = step.and_then(|id| compile.steps.as_ref()?.node(id));
        self.ui.linked_span = node.map(|n| n.step.span);
        if let Some(n) = node {
            self.ui.caret = n.step.span.start as usize;
            if let Some(pass) = compile.steps_pass() {
                self.view.pass = Some(pass.name.clone());
            }
        }
    }

    fn sent(&mut self, purpose: Purpose) {
        match purpose {
            Purpose::Compile => {
                self.requests.compile = true;
                self.results.run_stopped = None;
            }
            Purpose::Grade => {
                self.requests.grade = true;
                self.lessons.session.grading_source = Some(self.view.source.clone());
                self.lessons.session.tries += 1;
            }
            Purpose::Ablation => self.requests.ablation = true,
            Purpose::Compare => self.requests.compare = true,
            Purpose::Trace => {}
        }
    }

    fn receive(&mut self, purpose: Purpose, response: Response) {
        if !self.requests.waits_for(purpose) {
            return;
        }
        match (purpose, response) {
            (_, Response::Crashed { message, .. }) => {
                let input = self.view.source.clone();
                self.apply(Action::WorkerCrashed {
                    purpose: Some(purpose),
                    message,
                    input,
                });
            }
            (Purpose::Grade, Response::Graded { grade, .. }) => self.graded(grade),
            // The Compare panel's run answers as a simulation of its own request.
            (Purpose::Compare, Response::Simulated { sim, .. }) => {
                self.requests.compare = false;
                let failed = sim.lanes.is_empty() && !sim.diagnostics.is_empty();
                self.results.compare_sim = Some(Rc::new(match sim.diagnostics.first() {
                    Some(d) if failed => Compared::Failed(d.message.clone()),
                    _ => Compared::Ran(sim),
                }));
            }
            (Purpose::Ablation, Response::Ablated { ablation, .. }) => {
                self.requests.ablation = false;
                self.results.ablation = Some(Rc::new(ablation));
            }
            (
                Purpose::Compile,
                Response::Compiled {
                    output, simulating, ..
                },
            ) => {
                let previous = self.results.compile.replace(Rc::new(output));
                self.results.stale = false;
                self.requests.simulating = simulating;
                if !simulating {
                    self.requests.compile = false;
                    self.results.sim = None;
                }
                self.forget_stale_selection(previous.as_deref());
            }
            (Purpose::Compile, Response::Simulated { sim, .. }) => {
                self.requests.compile = false;
                self.requests.simulating = false;
                self.results.run_stopped = None;
                if self.ui.banner.as_ref().is_some_and(|b| b.until_next_run) {
                    self.ui.banner = None;
                }
                self.view.cursor = self.view.cursor.min(sim.cycles);
                self.results.sim = Some(Rc::new(*sim));
                self.results.sim_generation += 1;
            }
            // The worker answers each request with its own kind: another is a bug in
            // the page or the worker, said as one rather than waited on for ever.
            (purpose, other) => {
                self.requests.forget(purpose);
                self.ui.banner = Some(Banner::error(format!(
                    "Internal error: the compiler answered a {purpose:?} request with {}. \
                     Please report it; your text is kept.",
                    other.kind()
                )));
            }
        }
    }

    fn graded(&mut self, grade: Grade) {
        self.requests.grade = false;
        if let (Some(lesson), Some(medal)) = (self.open_lesson(), grade.medal) {
            self.lessons.progress.record(&lesson.id, medal);
        }
        self.lessons.session.grade = Some(Rc::new(grade));
        self.lessons.session.graded_source = self.lessons.session.grading_source.take();
    }

    /// Step and instruction numbers name what they named in `previous`, the compile
    /// they were picked in: when the new compile's program or step graph differs, the
    /// same number may be another instruction or step, so the pick is dropped.
    fn forget_stale_selection(&mut self, previous: Option<&CompileOutput>) {
        let Some(compile) = &self.results.compile else {
            return;
        };
        if previous.is_none_or(|p| p.steps != compile.steps) {
            self.ui.selected_step = None;
        }
        if previous.is_none_or(|p| p.asm != compile.asm) {
            self.ui.selected_instr = None;
        }
    }

    fn move_pass(&mut self, delta: isize) {
        let visible: Vec<String> = self
            .visible_passes()
            .into_iter()
            .map(|(_, p)| p.name.clone())
            .collect();
        if visible.is_empty() {
            return;
        }
        let current = self
            .selected_pass()
            .and_then(|i| self.results.compile.as_ref()?.passes.get(i))
            .and_then(|p| visible.iter().position(|n| *n == p.name))
            .unwrap_or(visible.len() - 1);
        let next = current.saturating_add_signed(delta).min(visible.len() - 1);
        self.view.pass = visible.get(next).cloned();
    }
}

impl Reducible for AppState {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        let mut next = (*self).clone();
        next.apply(action);
        Rc::new(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_passes(changed: &[bool]) -> AppState {
        let passes = changed
            .iter()
            .enumerate()
            .map(|(i, c)| PassRecord {
                name: format!("p{i}"),
                changed: *c,
                ..PassRecord::default()
            })
            .collect();
        let mut s = AppState::default();
        s.results.compile = Some(Rc::new(CompileOutput {
            passes,
            ..CompileOutput::default()
        }));
        s
    }

    #[test]
    fn starts_on_the_default_example_and_its_timeline() {
        let mut s = AppState::default();
        assert_eq!(s.view.example.as_deref(), Some("elementwise"));
        assert!(s.view.source.contains("kernel elementwise"));
        assert_eq!(s.view.panel, Panel::Timeline);
        assert!(!s.ui.example_note_hidden);
        s.apply(Action::HideExampleNote);
        assert!(s.ui.example_note_hidden);
        s.apply(Action::LoadExample("softmax".into()));
        assert!(!s.ui.example_note_hidden, "a new example shows its notes");
    }

    #[test]
    fn arrow_keys_walk_visible_passes_and_stop_at_ends() {
        let mut s = with_passes(&[true, false, true, true]);
        assert_eq!(s.selected_pass(), Some(3));
        s.apply(Action::MovePass(-1));
        assert_eq!(s.view.pass.as_deref(), Some("p2"));
        s.apply(Action::ToggleHideUnchanged);
        s.apply(Action::MovePass(-1));
        assert_eq!(
            s.view.pass.as_deref(),
            Some("p0"),
            "p1 is unchanged and hidden"
        );
        s.apply(Action::MovePass(-5));
        assert_eq!(s.view.pass.as_deref(), Some("p0"));
        s.apply(Action::MovePass(9));
        assert_eq!(s.view.pass.as_deref(), Some("p3"));
    }

    /// A pass that changed nothing but says what it left as written stays listed
    /// when unchanged passes are hidden.
    #[test]
    fn an_unchanged_pass_with_a_note_stays_visible() {
        let mut s = with_passes(&[true, false, false, true]);
        if let Some(c) = s.results.compile.as_mut() {
            Rc::make_mut(c).passes[2].notes = vec!["5:9: loop `i` is left as written".into()];
        }
        let shown = |s: &AppState| -> Vec<usize> {
            s.visible_passes().into_iter().map(|(i, _)| i).collect()
        };
        assert_eq!(shown(&s), [0, 1, 2, 3]);
        s.apply(Action::ToggleHideUnchanged);
        assert_eq!(shown(&s), [0, 2, 3], "p1 is unchanged and hidden");
    }

    #[test]
    fn an_answer_the_state_stopped_waiting_for_is_ignored() {
        let mut s = AppState::default();
        let out = CompileOutput {
            total_micros: 5,
            ..CompileOutput::default()
        };
        let answer = |output: CompileOutput| {
            Action::Received(
                Purpose::Compile,
                Box::new(Response::Compiled {
                    id: 1,
                    output,
                    simulating: false,
                }),
            )
        };
        s.apply(answer(out.clone()));
        assert!(s.results.compile.is_none(), "nothing was asked");
        s.apply(Action::Sent(Purpose::Compile));
        assert!(s.requests.is_busy());
        s.apply(answer(out));
        assert_eq!(s.results.compile.as_ref().map(|c| c.total_micros), Some(5));
        assert!(!s.requests.is_busy());
    }

    #[test]
    fn an_answer_of_the_wrong_kind_is_an_internal_error_not_a_wait() {
        let mut s = AppState::default();
        s.apply(Action::Sent(Purpose::Compile));
        s.apply(Action::Received(
            Purpose::Compile,
            Box::new(Response::Ablated {
                id: 1,
                ablation: Vec::new(),
            }),
        ));
        assert!(!s.requests.is_busy());
        let banner = s.ui.banner.map(|b| b.text).unwrap_or_default();
        assert!(
            banner.contains("Internal error") && banner.contains("Ablated"),
            "{banner}"
        );
    }

    fn embedded(read_only: bool) -> AppState {
        let mut s = AppState::default();
        s.ui.embed = Some(Embedded {
            options: EmbedOptions {
                read_only,
                ..EmbedOptions::default()
            },
            ran: s.view.source.clone(),
        });
        s.results.sim = Some(Rc::default());
        s
    }

    #[test]
    fn an_embed_compiles_what_run_saw_and_keeps_its_results_while_typing() {
        let mut s = embedded(false);
        let first = s.view.source.clone();
        s.apply(Action::SetSource("edited".into()));
        assert_eq!(s.compiled_source(), first);
        assert!(s.edited_since_run());
        assert!(s.results.sim.is_some(), "typing keeps the run on screen");
        s.apply(Action::Run);
        assert_eq!(s.compiled_source(), "edited");
        assert!(!s.edited_since_run());
        assert!(s.results.sim.is_none(), "Run drops the old run");
        // The full page compiles what the editor holds.
        let mut page = AppState::default();
        page.apply(Action::SetSource("typed".into()));
        assert_eq!(page.compiled_source(), "typed");
        page.apply(Action::Run);
        assert!(page.ui.embed.is_none());
    }

    #[test]
    fn a_read_only_embed_takes_no_edit() {
        let mut s = embedded(true);
        let first = s.view.source.clone();
        s.apply(Action::SetSource("edited".into()));
        assert_eq!(s.view.source, first);
        assert!(s.read_only() && !s.edited_since_run());
    }

    #[test]
    fn a_crash_shows_a_banner_and_keeps_the_text() {
        let mut s = AppState::default();
        s.apply(Action::SetSource("my text".into()));
        s.apply(Action::Sent(Purpose::Compile));
        s.apply(Action::Received(
            Purpose::Compile,
            Box::new(Response::Crashed {
                id: 7,
                message: "boom".into(),
            }),
        ));
        assert_eq!(s.view.source, "my text");
        assert_eq!(s.ui.worker_restarts, 1);
        assert!(s
            .ui
            .banner
            .as_ref()
            .is_some_and(|b| b.kind == BannerKind::Error && b.text.contains("boom")));
        assert!(!s.requests.is_busy());
        assert_eq!(
            s.ui.banner.and_then(|b| b.input).as_deref(),
            Some("my text")
        );
    }

    #[test]
    fn every_simulation_received_gets_a_new_generation() {
        let mut s = AppState::default();
        let mut generations = Vec::new();
        for id in 1..=3 {
            s.apply(Action::Sent(Purpose::Compile));
            s.apply(Action::Received(
                Purpose::Compile,
                Box::new(Response::Simulated {
                    id,
                    sim: Default::default(),
                }),
            ));
            generations.push(s.results.sim_generation);
            // An edit drops the run on screen before the next one arrives.
            s.apply(Action::SetSource(format!("// edit {id}")));
        }
        assert_eq!(generations, [1, 2, 3]);
    }

    #[test]
    fn a_crash_marks_the_last_good_results_stale_until_the_next_compile() {
        let mut s = AppState::default();
        s.apply(Action::Sent(Purpose::Compile));
        s.apply(Action::Received(
            Purpose::Compile,
            Box::new(Response::Compiled {
                id: 1,
                output: Default::default(),
                simulating: false,
            }),
        ));
        assert!(!s.results.stale);
        s.apply(Action::Sent(Purpose::Compile));
        s.apply(Action::Received(
            Purpose::Compile,
            Box::new(Response::Crashed {
                id: 2,
                message: "boom".into(),
            }),
        ));
        assert!(s.results.stale && s.results.compile.is_some());
        s.apply(Action::Sent(Purpose::Compile));
        s.apply(Action::Received(
            Purpose::Compile,
            Box::new(Response::Compiled {
                id: 3,
                output: Default::default(),
                simulating: false,
            }),
        ));
        assert!(!s.results.stale);
    }

    #[test]
    fn an_older_requests_crash_keeps_the_newest_in_flight() {
        let mut s = AppState::default();
        s.apply(Action::Sent(Purpose::Compile));
        s.apply(Action::Sent(Purpose::Compile));
        s.apply(Action::WorkerCrashed {
            purpose: None,
            message: "boom".into(),
            input: "old text".into(),
        });
        assert!(s.requests.compile);
        assert_eq!(s.ui.worker_restarts, 1);
        assert_eq!(
            s.ui.banner.and_then(|b| b.input).as_deref(),
            Some("old text")
        );
    }

    #[test]
    fn loading_an_example_replaces_source_and_closes_the_gallery() {
        let mut s = AppState::default();
        s.apply(Action::ShowOverlay(Overlay::Gallery));
        s.apply(Action::LoadExample("softmax".into()));
        assert_eq!(s.ui.overlay, Overlay::None);
        assert!(s.view.source.contains("kernel softmax"));
        s.apply(Action::LoadExample("no-such".into()));
        assert!(s.view.source.contains("kernel softmax"));
    }

    #[test]
    fn jumps_are_distinct_even_to_the_same_place() {
        let mut s = AppState::default();
        s.apply(Action::JumpTo(4));
        let first = s.ui.jump;
        s.apply(Action::JumpTo(4));
        assert_ne!(first, s.ui.jump);
        assert_eq!(s.ui.caret, 4);
    }

    #[test]
    fn compile_then_simulation_stream_into_the_state() {
        let mut s = AppState::default();
        s.view.cursor = 10_000;
        s.apply(Action::Sent(Purpose::Compile));
        s.apply(Action::Received(
            Purpose::Compile,
            Box::new(Response::Compiled {
                id: 4,
                output: CompileOutput::default(),
                simulating: true,
            }),
        ));
        assert!(s.results.compile.is_some() && s.requests.simulating && s.requests.is_busy());
        s.apply(Action::Received(
            Purpose::Compile,
            Box::new(Response::Simulated {
                id: 4,
                sim: Box::new(SimOutput {
                    cycles: 500,
                    ..SimOutput::default()
                }),
            }),
        ));
        assert!(!s.requests.simulating && !s.requests.is_busy());
        assert_eq!(s.results.sim.as_ref().map(|x| x.cycles), Some(500));
        assert_eq!(s.view.cursor, 500, "the cursor is clamped to the run");
        // An edit drops the simulation until the next one arrives.
        s.apply(Action::SetSource("x".into()));
        assert!(s.results.sim.is_none());
    }

    #[test]
    fn selecting_a_step_links_its_span_and_shows_form_steps() {
        let example = crate::catalog::default_example();
        let mut s = AppState::default();
        s.results.compile = Some(Rc::new(crate::worker::engine::compile(
            example.source,
            &crate::protocol::options::playground(),
        )));
        let node = s
            .results
            .compile
            .as_ref()
            .and_then(|c| c.steps.as_ref()?.nodes.last().cloned())
            .expect("a step");
        s.apply(Action::SelectStep(Some(node.step.id)));
        assert_eq!(s.ui.selected_step, Some(node.step.id));
        assert_eq!(s.ui.linked_span, Some(node.step.span));
        assert_eq!(s.view.pass.as_deref(), Some(crate::protocol::STEPS_PASS));
        // An instruction of the step selects the step and its span.
        let instr = s
            .results
            .compile
            .as_ref()
            .and_then(|c| c.asm.iter().position(|l| l.step == Some(node.step.id)))
            .expect("an instruction of the step");
        s.apply(Action::SelectStep(None));
        s.apply(Action::SelectInstr(Some(instr as u32)));
        assert_eq!(s.ui.selected_step, Some(node.step.id));
        assert!(s.ui.linked_span.is_some() && s.ui.jump.is_some());
        s.apply(Action::ShowCycle(42));
        assert_eq!((s.view.cursor, s.view.panel), (42, Panel::Timeline));
    }

    /// What the worker answers for `source` under the default options, as a response to
    /// request `id`.
    fn compiled(id: crate::protocol::RequestId, source: &str) -> Action {
        Action::Received(
            Purpose::Compile,
            Box::new(Response::Compiled {
                id,
                output: crate::worker::engine::compile(
                    source,
                    &crate::protocol::options::playground(),
                ),
                simulating: false,
            }),
        )
    }

    #[test]
    fn a_selection_does_not_survive_another_program() {
        let softmax = crate::catalog::find("softmax").expect("softmax");
        let mut s = AppState::default();
        s.apply(Action::LoadExample("softmax".into()));
        s.apply(Action::Sent(Purpose::Compile));
        s.apply(compiled(1, softmax.source));
        s.apply(Action::SelectInstr(Some(12)));
        assert_eq!(s.ui.selected_instr, Some(12));
        // The same program compiled again (an edit to a comment) keeps the pick.
        s.apply(Action::Sent(Purpose::Compile));
        s.apply(compiled(2, softmax.source));
        assert_eq!(s.ui.selected_instr, Some(12));
        // Another example: instruction 12 would be something unrelated.
        s.apply(Action::LoadExample("flash_attention".into()));
        assert_eq!((s.ui.selected_instr, s.ui.selected_step), (None, None));
        assert!(s.ui.linked_span.is_none());
        // A pick in an edited program is dropped when the program changes under it.
        s.apply(Action::Sent(Purpose::Compile));
        s.apply(compiled(3, softmax.source));
        s.apply(Action::SelectInstr(Some(12)));
        let flash = crate::catalog::find("flash_attention").expect("flash_attention");
        s.apply(Action::Sent(Purpose::Compile));
        s.apply(compiled(4, flash.source));
        assert_eq!(
            s.ui.selected_instr, None,
            "instruction 12 of another program"
        );
    }

    /// The grader's answer to request `id`: passed, with gold.
    fn gold(id: crate::protocol::RequestId) -> Action {
        Action::Received(
            Purpose::Grade,
            Box::new(Response::Graded {
                id,
                grade: Grade {
                    passed: true,
                    medal: Some(lessons::Medal::Gold),
                    ..Grade::default()
                },
            }),
        )
    }

    #[test]
    fn a_verdict_says_when_the_code_changed_after_it() {
        let lesson = lessons::find("08-multi-buffering").expect("lesson 8");
        let mut s = AppState::default();
        s.apply(Action::Lesson(LessonAction::Open(lesson.id.clone())));
        s.apply(Action::SetSource(lesson.solution.clone()));
        s.apply(Action::Sent(Purpose::Grade));
        // Typing while the grade runs: the verdict judges the text that was sent.
        s.apply(Action::SetSource("wrong".into()));
        s.apply(gold(1));
        assert!(!s.lessons.session.grade_is_for(&s.view.source));
        s.apply(Action::SetSource(lesson.solution.clone()));
        assert!(s.lessons.session.grade_is_for(&s.view.source));
        s.apply(Action::SetSource(format!("{}\n// edited", lesson.solution)));
        assert!(!s.lessons.session.grade_is_for(&s.view.source));
    }

    #[test]
    fn each_lesson_keeps_the_students_work() {
        let first = lessons::find("01-load-store").expect("lesson 1");
        let second = lessons::all()
            .iter()
            .find(|l| l.number == 2)
            .expect("lesson 2");
        let mut s = AppState::default();
        s.ui.start_here = true;
        s.apply(Action::Lesson(LessonAction::Open(first.id.clone())));
        assert!(!s.ui.start_here, "opening a lesson retires the start card");
        s.apply(Action::SetSource(first.solution.clone()));
        s.apply(Action::Lesson(LessonAction::ShowHint));
        s.apply(Action::Sent(Purpose::Grade));
        s.apply(gold(1));
        assert_eq!(
            s.next_lesson().map(|l| l.id.as_str()),
            Some(second.id.as_str())
        );
        // On to lesson 2, which starts from its starter; then an example.
        s.apply(Action::Lesson(LessonAction::Open(second.id.clone())));
        assert_eq!(s.view.source, second.starter);
        assert!(s.lessons.session.grade.is_none() && s.lessons.session.hints == 0);
        s.apply(Action::SetSource("my lesson 2 attempt".into()));
        s.apply(Action::LoadExample("softmax".into()));
        // Back to lesson 1: the student's passing code, hint and verdict.
        s.apply(Action::Lesson(LessonAction::Open(first.id.clone())));
        assert_eq!(s.view.source, first.solution);
        assert_eq!(s.lessons.session.hints, 1);
        assert!(s.lessons.session.grade.as_ref().is_some_and(|g| g.passed));
        assert!(s.lessons.session.grade_is_for(&s.view.source));
        s.apply(Action::Lesson(LessonAction::Open(second.id.clone())));
        assert_eq!(s.view.source, "my lesson 2 attempt");
        // What local storage keeps reads back.
        let json = serde_json::to_string(&s.lessons.work).expect("serialise");
        let back: BTreeMap<String, LessonWork> = serde_json::from_str(&json).expect("read back");
        assert_eq!(back, s.lessons.work);
    }

    #[test]
    fn a_lesson_keeps_its_preset() {
        let lesson = lessons::find("09-capacity").expect("lesson 9");
        let mut s = AppState::default();
        s.apply(Action::Lesson(LessonAction::Open(lesson.id.clone())));
        assert_eq!(
            crate::protocol::options::preset_name(&s.view.options),
            lesson.preset
        );
        let other = Preset::ALL
            .into_iter()
            .find(|p| p.name() != lesson.preset)
            .expect("another preset");
        s.apply(Action::SetPreset(other));
        assert_eq!(
            crate::protocol::options::preset_name(&s.view.options),
            lesson.preset,
            "graded on the lesson's preset"
        );
        s.apply(Action::Lesson(LessonAction::Close));
        s.apply(Action::SetPreset(other));
        assert_eq!(Preset::of(&s.view.options), Some(other));
    }

    #[test]
    fn opening_a_lesson_loads_its_starter_and_options_and_grades_stream_in() {
        let lesson = lessons::find("08-multi-buffering").expect("lesson 8");
        let mut s = AppState::default();
        s.view.options.sync = SyncStrategy::Barrier;
        s.apply(Action::Lesson(LessonAction::Open(lesson.id.clone())));
        assert_eq!(s.view.lesson.as_deref(), Some(lesson.id.as_str()));
        assert_eq!(s.view.source, lesson.starter);
        assert_eq!(s.view.example, None);
        assert_eq!(
            crate::protocol::options::preset_name(&s.view.options),
            lesson.preset
        );
        assert_eq!(s.view.options.auto_multi_buffer, lesson.auto_buffers);
        assert_eq!(s.view.options.sync, SyncStrategy::Auto);
        assert!(!s.is_asm());

        // Hints one at a time, never past the last.
        for _ in 0..lesson.hints.len() + 2 {
            s.apply(Action::Lesson(LessonAction::ShowHint));
        }
        assert_eq!(s.lessons.session.hints, lesson.hints.len());

        // The solution stays locked until a pass or enough tries.
        s.apply(Action::Lesson(LessonAction::ShowSolution));
        assert!(!s.lessons.session.solution_shown);
        s.apply(Action::Sent(Purpose::Grade));
        // A compile's answer does not end the grade.
        s.apply(Action::Received(
            Purpose::Compile,
            Box::new(Response::Compiled {
                id: 4,
                output: CompileOutput::default(),
                simulating: false,
            }),
        ));
        assert!(s.requests.grade);
        let fail = Grade {
            passed: false,
            ..Grade::default()
        };
        s.apply(Action::Received(
            Purpose::Grade,
            Box::new(Response::Graded { id: 5, grade: fail }),
        ));
        assert!(!s.requests.grade);
        assert!(s.lessons.session.grade.as_ref().is_some_and(|g| !g.passed));
        assert_eq!(s.lessons.progress.medal(&lesson.id), None);

        let pass = Grade {
            passed: true,
            medal: Some(lessons::Medal::Silver),
            ..Grade::default()
        };
        s.apply(Action::Sent(Purpose::Grade));
        s.apply(Action::Received(
            Purpose::Grade,
            Box::new(Response::Graded { id: 6, grade: pass }),
        ));
        assert_eq!(
            s.lessons.progress.medal(&lesson.id),
            Some(lessons::Medal::Silver)
        );
        s.apply(Action::Lesson(LessonAction::ShowSolution));
        assert!(
            s.lessons.session.solution_shown,
            "a pass unlocks the solution"
        );

        s.apply(Action::SetSource("edited".into()));
        s.apply(Action::Lesson(LessonAction::ResetStarter));
        assert_eq!(s.view.source, lesson.starter);

        // Leaving keeps the code; loading an example leaves too.
        s.apply(Action::SetSource("mine".into()));
        s.apply(Action::Lesson(LessonAction::Close));
        assert_eq!(
            (s.view.lesson.as_deref(), s.view.source.as_str()),
            (None, "mine")
        );
        s.apply(Action::Lesson(LessonAction::Open(lesson.id.clone())));
        assert_eq!(
            s.view.source, "mine",
            "a lesson reopens with the student's work"
        );
        assert!(s.lessons.session.solution_shown);
        s.apply(Action::LoadExample("softmax".into()));
        assert_eq!(s.view.lesson, None);
        assert_eq!(
            s.lessons.progress.medal(&lesson.id),
            Some(lessons::Medal::Silver)
        );
    }

    #[test]
    fn three_tries_unlock_the_solution_and_a_crash_ends_the_check() {
        let mut s = AppState::default();
        s.apply(Action::Lesson(LessonAction::Open("18-asm-race".into())));
        assert!(s.is_asm());
        assert_eq!(s.view.panel, Panel::Timeline);
        for _ in 1..=SOLUTION_TRIES {
            s.apply(Action::Sent(Purpose::Grade));
        }
        s.apply(Action::WorkerCrashed {
            purpose: Some(Purpose::Grade),
            message: "boom".into(),
            input: String::new(),
        });
        assert!(!s.requests.grade);
        s.apply(Action::Lesson(LessonAction::ShowSolution));
        assert!(s.lessons.session.solution_shown);
        s.apply(Action::Lesson(LessonAction::Open("no-such".into())));
        assert_eq!(s.view.lesson.as_deref(), Some("18-asm-race"));
    }

    #[test]
    fn leaving_a_lesson_drops_its_grade_in_flight() {
        let mut s = AppState::default();
        s.apply(Action::Lesson(LessonAction::Open("18-asm-race".into())));
        s.apply(Action::Sent(Purpose::Grade));
        s.apply(Action::Lesson(LessonAction::Close));
        assert!(!s.requests.grade);
        s.apply(Action::Received(
            Purpose::Grade,
            Box::new(Response::Graded {
                id: 1,
                grade: Grade::default(),
            }),
        ));
        assert!(s.lessons.session.grade.is_none(), "the old lesson's answer");
    }

    const SOLUTION_TRIES: u64 = lessons::SOLUTION_AFTER_TRIES as u64;

    #[test]
    fn optional_passes_toggle_and_stale_ablations_are_dropped() {
        let mut s = AppState::default();
        s.apply(Action::TogglePass("multi-buffer".into()));
        assert_eq!(s.view.options.disabled_passes, ["multi-buffer"]);
        s.apply(Action::TogglePass("insert-sync".into()));
        s.apply(Action::TogglePass("no-such".into()));
        assert_eq!(
            s.view.options.disabled_passes,
            ["multi-buffer"],
            "required and unknown passes stay on"
        );
        s.apply(Action::TogglePass("multi-buffer".into()));
        assert!(s.view.options.disabled_passes.is_empty());

        let ablation = |id| {
            Box::new(Response::Ablated {
                id,
                ablation: Vec::new(),
            })
        };
        // Before it is asked for (the link passes only the newest request's answer).
        s.apply(Action::Received(Purpose::Ablation, ablation(2)));
        assert!(s.results.ablation.is_none(), "not waited for");
        s.apply(Action::Sent(Purpose::Ablation));
        s.apply(Action::Received(Purpose::Ablation, ablation(3)));
        assert!(s.results.ablation.is_some() && !s.requests.ablation);
        // An edit drops it: it measured the previous text.
        s.apply(Action::SetSource("edited".into()));
        assert!(s.results.ablation.is_none());
        s.apply(Action::Sent(Purpose::Ablation));
        s.apply(Action::SetSource("edited again".into()));
        s.apply(Action::Received(Purpose::Ablation, ablation(4)));
        assert!(s.results.ablation.is_none(), "answered for an edited text");
    }

    #[test]
    fn a_compare_run_belongs_to_the_text_and_options_on_screen() {
        let mut s = AppState::default();
        let b = CompileOptions {
            sync: SyncStrategy::Barrier,
            ..crate::protocol::options::playground()
        };
        s.apply(Action::SetCompare(Some(Box::new(b.clone()))));
        assert_eq!(s.view.compare, Some(b));
        let compared = |id| {
            Box::new(Response::Simulated {
                id,
                sim: Box::new(SimOutput {
                    cycles: 9,
                    ..SimOutput::default()
                }),
            })
        };
        s.apply(Action::Received(Purpose::Compare, compared(1)));
        assert!(s.results.compare_sim.is_none(), "not waited for");
        s.apply(Action::Sent(Purpose::Compare));
        s.apply(Action::Received(Purpose::Compare, compared(2)));
        assert!(
            matches!(s.results.compare_sim.as_deref(), Some(Compared::Ran(sim)) if sim.cycles == 9)
        );
        s.apply(Action::SetSource("edited".into()));
        assert!(s.results.compare_sim.is_none(), "an edit drops it");
        s.apply(Action::SetCompareOption("sync", "none".into()));
        s.apply(Action::SetCompareOption("preset", "turbo".into()));
        assert_eq!(
            s.view.compare.as_ref().map(|b| (b.sync, Preset::of(b))),
            Some((SyncStrategy::None, Some(Preset::Teach)))
        );
        let b_off = |s: &AppState| s.view.compare.as_ref().map(|b| b.disabled_passes.clone());
        s.apply(Action::SetCompareOption("pass", "multi-buffer".into()));
        s.apply(Action::SetCompareOption("pass", "emit".into()));
        assert_eq!(
            b_off(&s),
            Some(vec!["multi-buffer".to_string()]),
            "a required pass stays on"
        );
        assert!(
            s.view.options.disabled_passes.is_empty(),
            "A keeps its passes"
        );
        s.apply(Action::SetCompareOption("pass", "multi-buffer".into()));
        assert_eq!(b_off(&s), Some(vec![]));
        s.apply(Action::SetCompare(None));
        assert_eq!(s.view.compare, None);
    }
}
