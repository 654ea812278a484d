//! What the walk knows on the paths on which one `if` ran its body.
//!
//! The walk goes through an `if` region once and then keeps, per pipe, only what both
//! paths know (`Walker::branch`). Clocks are prefixes (knowing instance 9 of a pipe
//! means knowing 1 to 8), so that meet forgets more than it must: a wait whose set on
//! the skipping path is older than some work before the branch forgets, with that work,
//! everything the taken path ordered inside the branch. Yet an instance inside the
//! branch exists only on the taken path, so asking about it may use what the taken path
//! knows. A pair whose two ends sit inside one `if` (the next block's write after this
//! block's read) needs exactly that to be seen as ordering its hazard.
//!
//! Each walked instance of an `if` body gets a tag. Per tag, [`Paths`] keeps a clock for
//! every pipe that holds on every path on which that instance ran its body, as flags
//! keep one per set ([`TagClocks`]). A stored clock is only ever joined with the pipe's
//! plain clock when read ([`Paths::knows`]), so plain ticks need not touch it. At the end
//! of an instance, tags of `if`s inside it keep their clocks (on the skipping path they
//! did not run either); tags from before it meet their state before the branch the way
//! plain clocks do.

use super::walk::{Clock, Inst};
use foldhash::HashMap;

/// The most recent branch runs whose clocks are kept. An older run's instances are
/// mostly ordered by plain clocks by then; forgetting what holds where it ran only
/// makes the walk ask for more sync (a pair goes around a branch instead of inside it),
/// never for less, and it keeps each set and wait's work bounded.
const MAX_TAGS: usize = 16;

/// Per tag: one clock (a flag's set).
pub type TagClocks = HashMap<u32, Clock>;

/// Per tag: a clock per pipe.
pub type Known = HashMap<u32, [Clock; 7]>;

#[derive(Clone, Default)]
pub struct Paths {
    /// Per tag, the tag of the `if` instance it is nested in.
    parents: Vec<Option<u32>>,
    /// The `if` instances being walked, innermost last.
    open: Vec<u32>,
    clocks: Known,
    /// Runs below this may have been dropped (`MAX_TAGS`).
    dropped: u32,
}

fn join(a: &mut Clock, b: &Clock) {
    for (x, y) in a.iter_mut().zip(b) {
        *x = (*x).max(*y);
    }
}

/// What holds on both paths of a branch, per component `p` of a clock: the taken
/// path's value where, before the branch, the skipping path already knew every
/// instance of `p` a later check can ask about (`asked`), else the smaller. `own` is a
/// pipe's own component, which the caller keeps.
pub fn meet(now: &mut Clock, before: &Clock, asked: &[u32; 7], own: Option<usize>) {
    for (p, (v, b)) in now.iter_mut().zip(before).enumerate() {
        if Some(p) != own && *b < asked[p] {
            *v = (*v).min(*b);
        }
    }
}

impl Paths {
    /// What is known per tag now: what [`Paths::close`] needs of the state before a
    /// branch (the tags' parents only grow, so they need no copy).
    pub fn known(&self) -> Known {
        self.clocks.clone()
    }

    /// The innermost `if` instance being walked (an instruction's tag).
    pub fn current(&self) -> Option<u32> {
        self.open.last().copied()
    }

    /// Starts walking an instance of an `if` body; returns its tag.
    pub fn open(&mut self) -> u32 {
        let tag = self.parents.len() as u32;
        self.parents.push(self.current());
        self.open.push(tag);
        tag
    }

    /// Whether pipe `q`, whose plain clock is `plain`, knows `inst`: by its plain clock,
    /// or by what it knows on the paths where an `if` instance `inst` lies in ran.
    pub fn knows(&self, q: usize, plain: &Clock, inst: &Inst) -> bool {
        let p = inst.pipe.index();
        if plain[p] >= inst.count {
            return true;
        }
        let mut tag = inst.tag;
        // Tags only name earlier tags as parents, so the chain ends.
        while let Some(t) = tag {
            if self.clocks.get(&t).is_some_and(|c| c[q][p] >= inst.count) {
                return true;
            }
            tag = self.parents.get(t as usize).copied().flatten();
        }
        false
    }

    /// Work units of one set, wait or barrier (the walk's budget).
    pub fn cost(&self) -> u64 {
        self.clocks.len() as u64
    }

    /// What a set on pipe `src` carries, per tag.
    pub fn set(&self, src: usize, plain: &Clock) -> TagClocks {
        self.clocks
            .iter()
            .map(|(&t, c)| {
                let mut k = c[src];
                join(&mut k, plain);
                (t, k)
            })
            .collect()
    }

    /// A wait on pipe `dst` consumed a set `set` carrying `carried`; `plains` are the
    /// plain clocks after the wait joined `set`.
    pub fn wait(&mut self, dst: usize, set: &Clock, carried: &TagClocks, plains: &[Clock; 7]) {
        for (&t, k) in carried {
            // A run dropped since (`MAX_TAGS`) is not brought back: what the set knew
            // there is forgotten, which only asks for more sync.
            if self.forgotten(t) {
                continue;
            }
            self.clocks.entry(t).or_insert(*plains);
            if let Some(c) = self.clocks.get_mut(&t) {
                join(&mut c[dst], k);
            }
        }
        for (t, c) in self.clocks.iter_mut() {
            if !carried.contains_key(t) {
                join(&mut c[dst], set);
            }
        }
    }

    /// `pipe_barrier ALL` with the plain clocks before it: on each tag's paths, every
    /// pipe knows what any pipe knew there.
    pub fn barrier(&mut self, plains: &[Clock; 7]) {
        for c in self.clocks.values_mut() {
            let mut all = [0; 7];
            for (k, plain) in c.iter().zip(plains) {
                join(&mut all, k);
                join(&mut all, plain);
            }
            *c = [all; 7];
        }
    }

    /// Ends the instance `tag` of an `if` body: `taken` are the plain clocks at its end,
    /// `before` what was known per tag and `plains` the plain clocks before the branch,
    /// `asked` as for [`meet`].
    pub fn close(
        &mut self,
        tag: u32,
        taken: &[Clock; 7],
        before: &Known,
        plains: &[Clock; 7],
        asked: &[u32; 7],
    ) {
        self.open.pop();
        // On its paths, the `if`s around it ran too.
        let mut mine = *taken;
        for a in &self.open {
            if let Some(c) = self.clocks.get(a) {
                for (m, k) in mine.iter_mut().zip(c) {
                    join(m, k);
                }
            }
        }
        for (&t, now) in self.clocks.iter_mut() {
            if t >= tag {
                continue;
            }
            let was = before.get(&t).unwrap_or(plains);
            for (q, (v, b)) in now.iter_mut().zip(was).enumerate() {
                let (mut v2, mut b2) = (*v, *b);
                join(&mut v2, &taken[q]);
                join(&mut b2, &plains[q]);
                meet(&mut v2, &b2, asked, Some(q));
                *v = v2;
            }
        }
        self.clocks.insert(tag, mine);
        while self.clocks.len() > MAX_TAGS {
            let oldest = self
                .clocks
                .keys()
                .copied()
                .filter(|t| !self.open.contains(t))
                .min();
            let Some(t) = oldest else { break };
            self.clocks.remove(&t);
            self.dropped = self.dropped.max(t + 1);
        }
    }

    /// Whether run `t`'s clocks were dropped: every run below `dropped` that has no
    /// clocks now (a set may carry one that no pipe holds yet).
    fn forgotten(&self, t: u32) -> bool {
        t < self.dropped && !self.clocks.contains_key(&t)
    }

    /// A flag's carried clocks at the end of instance `tag`: `taken` is its set on the
    /// taken path, `before` its set and carried clocks before the branch.
    pub fn close_flag(
        &self,
        tag: u32,
        carried: &mut TagClocks,
        taken: &Clock,
        before: (&Clock, &TagClocks),
        asked: &[u32; 7],
    ) {
        carried.retain(|t, _| !self.forgotten(*t));
        let outer: Vec<u32> = carried
            .keys()
            .chain(before.1.keys())
            .copied()
            .filter(|&t| t < tag && !self.forgotten(t))
            .collect();
        for t in outer {
            let mut v = carried.get(&t).copied().unwrap_or(*taken);
            join(&mut v, taken);
            let mut b = before.1.get(&t).copied().unwrap_or(*before.0);
            join(&mut b, before.0);
            meet(&mut v, &b, asked, None);
            carried.insert(t, v);
        }
        carried.insert(tag, *taken);
    }
}
