//! The page's one record of its requests to the worker: ids, what each was for, which
//! are still unanswered and since when. The worker link owns it; the app's state never
//! sees an id, only answers the tracker has found current (`Action::Received`) and what
//! was sent for which purpose (`Action::Sent`).
//!
//! Kept free of the browser so its rules are tested natively: the newest request of
//! each purpose is the only one whose answer counts, the worker answers in order, and a
//! worker that is replaced or crashes takes what it was asked with it.

use std::collections::VecDeque;

use crate::protocol::{Request, RequestId, Response};

/// What a request is for. Each purpose has at most one request whose answer counts:
/// the newest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// Compile and simulate the text in the editor.
    Compile,
    /// Grade the open lesson's code.
    Grade,
    /// Run without each optional pass (what each pass buys).
    Ablation,
    /// The Compare panel's run under a second option set.
    Compare,
    /// The newest simulation's Chrome trace, for a download.
    Trace,
}

impl Purpose {
    const ALL: [Purpose; 5] = [
        Purpose::Compile,
        Purpose::Grade,
        Purpose::Ablation,
        Purpose::Compare,
        Purpose::Trace,
    ];

    fn index(self) -> usize {
        self as usize
    }
}

/// Requests kept for crash reports and resending; more pile up only if the worker
/// hangs, and the watchdog replaces it then. A newest request is never the one dropped.
const MAX_UNANSWERED: usize = 8;

#[derive(Clone, Debug)]
struct Unanswered {
    request: Request,
    purpose: Purpose,
    /// When it was sent (`clock::now_ms`).
    sent_ms: f64,
}

/// What an answer from the worker is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// The answer to the newest request of this purpose: the app wants it.
    Current(Purpose),
    /// The answer to a request a newer one of its purpose replaced, or one abandoned.
    Stale,
}

#[derive(Debug, Default)]
pub struct Tracker {
    last_id: RequestId,
    /// The newest request of each purpose still waiting for its answer.
    newest: [Option<RequestId>; Purpose::ALL.len()],
    /// Requests the worker has not answered, oldest first.
    unanswered: VecDeque<Unanswered>,
}

impl Tracker {
    /// Gives the request `make` builds a fresh id and records it as the newest of its
    /// purpose.
    pub fn send(
        &mut self,
        purpose: Purpose,
        now_ms: f64,
        make: impl FnOnce(RequestId) -> Request,
    ) -> Request {
        self.last_id += 1;
        let request = make(self.last_id);
        self.newest[purpose.index()] = Some(self.last_id);
        self.unanswered.push_back(Unanswered {
            request: request.clone(),
            purpose,
            sent_ms: now_ms,
        });
        if self.unanswered.len() > MAX_UNANSWERED {
            let newest = self.newest;
            let oldest_replaced = self
                .unanswered
                .iter()
                .position(|u| !newest.contains(&Some(u.request.id())));
            if let Some(at) = oldest_replaced {
                self.unanswered.remove(at);
            }
        }
        request
    }

    /// Which purpose's newest request `id` is, if any.
    pub fn purpose_of(&self, id: RequestId) -> Option<Purpose> {
        Purpose::ALL
            .into_iter()
            .find(|p| self.newest[p.index()] == Some(id))
    }

    /// Records the worker's answer and says whether the app wants it. A compile that
    /// goes on to simulate is answered only by its `Simulated`: until then it stays the
    /// newest compile, unanswered.
    pub fn answer(&mut self, response: &Response) -> Answer {
        let id = response.id();
        let answer = match self.purpose_of(id) {
            Some(purpose) => Answer::Current(purpose),
            None => Answer::Stale,
        };
        let done = !matches!(
            response,
            Response::Compiled {
                simulating: true,
                ..
            }
        );
        if done {
            self.forget_through(id);
        }
        answer
    }

    /// The worker answers in order: everything sent up to `id` is done, answered or
    /// never to be.
    fn forget_through(&mut self, id: RequestId) {
        for newest in &mut self.newest {
            if newest.is_some_and(|n| n <= id) {
                *newest = None;
            }
        }
        self.unanswered.retain(|u| u.request.id() > id);
    }

    /// The worker crashed on `id`, and what it had not reached died with it: returns
    /// what `id` was for (if it still counted) and its source, for the report. The
    /// newest request of every other purpose stays, to be resent (`to_resend`).
    pub fn crashed(&mut self, id: RequestId) -> (Option<Purpose>, String) {
        let purpose = self.purpose_of(id);
        let source = self
            .unanswered
            .iter()
            .find(|u| u.request.id() == id)
            .map(|u| source_of(&u.request).to_string())
            .unwrap_or_default();
        self.forget_through(id);
        (purpose, source)
    }

    /// The newest unanswered request of each purpose, oldest first: what a replacement
    /// worker must be asked again.
    pub fn to_resend(&self) -> Vec<Request> {
        self.unanswered
            .iter()
            .filter(|u| self.newest[u.purpose.index()] == Some(u.request.id()))
            .map(|u| u.request.clone())
            .collect()
    }

    /// Everything in flight is abandoned (the worker is replaced).
    pub fn abandon_all(&mut self) {
        self.unanswered.clear();
        self.newest = Default::default();
    }

    /// When the oldest unanswered request was sent.
    pub fn busy_since(&self) -> Option<f64> {
        self.unanswered.front().map(|u| u.sent_ms)
    }

    /// `id` is the newest compile and still unanswered (the watchdog's question).
    pub fn is_waiting_compile(&self, id: RequestId) -> bool {
        self.newest[Purpose::Compile.index()] == Some(id)
    }

    /// The newest compile's id, for an answer that cannot name its own (a message that
    /// did not decode).
    pub fn newest_compile(&self) -> RequestId {
        self.newest[Purpose::Compile.index()].unwrap_or(self.last_id)
    }
}

/// The kernel text a request carries, for a crash report.
fn source_of(request: &Request) -> &str {
    match request {
        Request::Compile { source, .. }
        | Request::Compare { source, .. }
        | Request::Ablate { source, .. }
        | Request::Grade { source, .. } => source,
        Request::Trace { .. } => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compile(tracker: &mut Tracker, source: &str, now: f64) -> RequestId {
        let source = source.to_string();
        tracker
            .send(Purpose::Compile, now, |id| Request::Compile {
                id,
                source,
                options: crate::protocol::options::playground(),
                seed: 0,
                asm: false,
            })
            .id()
    }

    fn grade(tracker: &mut Tracker, now: f64) -> RequestId {
        tracker
            .send(Purpose::Grade, now, |id| Request::Grade {
                id,
                lesson: Box::new(crate::catalog::lessons()[0].clone()),
                source: "graded".into(),
            })
            .id()
    }

    fn compiled(id: RequestId, simulating: bool) -> Response {
        Response::Compiled {
            id,
            output: Default::default(),
            simulating,
        }
    }

    #[test]
    fn only_the_newest_request_of_a_purpose_counts() {
        let mut t = Tracker::default();
        let first = compile(&mut t, "a", 0.0);
        let second = compile(&mut t, "b", 1.0);
        let graded = grade(&mut t, 2.0);
        assert_eq!(t.answer(&compiled(first, false)), Answer::Stale);
        assert_eq!(
            t.answer(&compiled(second, true)),
            Answer::Current(Purpose::Compile)
        );
        assert!(t.is_waiting_compile(second), "simulating: still unanswered");
        let simulated = Response::Simulated {
            id: second,
            sim: Box::default(),
        };
        assert_eq!(t.answer(&simulated), Answer::Current(Purpose::Compile));
        assert!(!t.is_waiting_compile(second));
        assert_eq!(t.busy_since(), Some(2.0), "the grade is still unanswered");
        let grade = Response::Graded {
            id: graded,
            grade: Default::default(),
        };
        assert_eq!(t.answer(&grade), Answer::Current(Purpose::Grade));
        assert_eq!(t.answer(&grade), Answer::Stale, "answered once");
        assert_eq!(t.busy_since(), None);
    }

    #[test]
    fn a_crash_reports_its_source_and_the_newest_of_each_other_purpose_is_resent() {
        let mut t = Tracker::default();
        let old = compile(&mut t, "old text", 0.0);
        let graded = grade(&mut t, 1.0);
        let newest = compile(&mut t, "new text", 2.0);
        assert_eq!(t.crashed(old), (None, "old text".to_string()));
        let resent: Vec<RequestId> = t.to_resend().iter().map(Request::id).collect();
        assert_eq!(resent, [graded, newest]);
        assert_eq!(
            t.crashed(newest),
            (Some(Purpose::Compile), "new text".into())
        );
        assert_eq!(t.purpose_of(graded), None, "sent before the crash: done");
    }

    #[test]
    fn abandoning_forgets_everything_in_flight() {
        let mut t = Tracker::default();
        let id = compile(&mut t, "a", 0.0);
        t.abandon_all();
        assert_eq!(t.answer(&compiled(id, false)), Answer::Stale);
        assert!(t.to_resend().is_empty() && t.busy_since().is_none());
    }

    #[test]
    fn a_hung_worker_keeps_at_most_a_few_requests_and_never_drops_a_newest() {
        let mut t = Tracker::default();
        let graded = grade(&mut t, 0.0);
        let mut last = 0;
        for i in 0..20 {
            last = compile(&mut t, &format!("edit {i}"), f64::from(i));
        }
        assert!(t.unanswered.len() <= MAX_UNANSWERED);
        let resent: Vec<RequestId> = t.to_resend().iter().map(Request::id).collect();
        assert_eq!(resent, [graded, last]);
    }
}
