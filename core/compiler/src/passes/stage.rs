//! The stages a compile's program passes through, and the check that passes run in an
//! order where each reads what the one before left.
//!
//! Every pass names the stage it reads and the stage it leaves as types (`Pass::In`,
//! `Pass::Out`). The built-in pipeline is built with [`Chain`], whose `then` accepts
//! only a pass that reads the stage the chain is at, so a wrong order does not compile:
//!
//! ```compile_fail,E0271
//! use tilescope_compiler::passes::{emit::Emit, stage::Chain, ParsePass};
//! // emit reads the lowered program; parse leaves the tile IR.
//! let _ = Chain::new().then(ParsePass).then(Emit);
//! ```
//!
//! A list made at run time (the pipeline less `--disable-pass` names, a range of it) is
//! checked by [`check_order`] before any pass runs, and the pass manager checks the
//! context against each pass's stages as it runs them.

use std::marker::PhantomData;

use super::{Context, Pass};
use crate::diag::{Diagnostic, Diagnostics};

/// What the pass context holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// The source text only.
    Source,
    /// The tile IR, no addresses yet.
    Tile,
    /// The tile IR with every buffer's address (plan-memory on).
    Planned,
    /// The per-pipe lowered program (lower-to-pipes, insert-sync).
    Lowered,
    /// The final program (emit).
    Final,
}

impl Stage {
    pub fn name(self) -> &'static str {
        match self {
            Stage::Source => "source",
            Stage::Tile => "tile IR",
            Stage::Planned => "planned tile IR",
            Stage::Lowered => "lowered program",
            Stage::Final => "final program",
        }
    }

    /// The stage `cx` is at, from what it holds.
    pub fn of(cx: &Context) -> Stage {
        if cx.program.is_some() {
            Stage::Final
        } else if cx.lowered.is_some() {
            Stage::Lowered
        } else {
            match &cx.ir {
                Some(k) if crate::ir::verify_plan::is_planned(k) => Stage::Planned,
                Some(_) => Stage::Tile,
                None => Stage::Source,
            }
        }
    }
}

/// A stage as a type, for `Pass::In` and `Pass::Out`.
pub trait IsStage {
    const STAGE: Stage;
}

macro_rules! stage_types {
    ($($name:ident),*) => {$(
        #[doc = concat!("The `", stringify!($name), "` stage as a type.")]
        pub struct $name;
        impl IsStage for $name {
            const STAGE: Stage = Stage::$name;
        }
    )*};
}
stage_types!(Source, Tile, Planned, Lowered, Final);

/// A pass of any stages, as lists hold them: `Pass` with its stages as values.
pub trait AnyPass {
    fn name(&self) -> &'static str;
    fn description(&self) -> &'static str;
    fn run(&self, cx: &mut Context) -> Result<(), Diagnostics>;
    fn optional(&self) -> bool;
    /// The stage the pass reads.
    fn needs(&self) -> Stage;
    /// The stage the pass leaves.
    fn makes(&self) -> Stage;
}

impl<P: Pass> AnyPass for P {
    fn name(&self) -> &'static str {
        Pass::name(self)
    }
    fn description(&self) -> &'static str {
        Pass::description(self)
    }
    fn run(&self, cx: &mut Context) -> Result<(), Diagnostics> {
        Pass::run(self, cx)
    }
    fn optional(&self) -> bool {
        Pass::optional(self)
    }
    fn needs(&self) -> Stage {
        P::In::STAGE
    }
    fn makes(&self) -> Stage {
        P::Out::STAGE
    }
}

/// Passes in an order the compiler checks: the chain is at stage `S`, and `then` takes
/// only a pass that reads `S`.
pub struct Chain<S: IsStage> {
    passes: Vec<Box<dyn AnyPass>>,
    at: PhantomData<S>,
}

impl Chain<Source> {
    #[allow(clippy::new_without_default)] // a chain starts at the source, not by default
    pub fn new() -> Chain<Source> {
        Chain {
            passes: Vec::new(),
            at: PhantomData,
        }
    }
}

impl<S: IsStage> Chain<S> {
    pub fn then<P: Pass<In = S> + 'static>(mut self, pass: P) -> Chain<P::Out> {
        self.passes.push(Box::new(pass));
        Chain {
            passes: self.passes,
            at: PhantomData,
        }
    }
}

impl Chain<Final> {
    /// The passes, from the source to the final program.
    pub fn build(self) -> Vec<Box<dyn AnyPass>> {
        self.passes
    }
}

/// Checks that each of `passes` reads the stage the one before leaves, the first
/// reading `from`; returns the stage the last leaves. An error names the first pass out
/// of order.
pub fn check_order(passes: &[Box<dyn AnyPass>], from: Stage) -> Result<Stage, Diagnostic> {
    let mut at = from;
    let mut before = String::from("at the start");
    for pass in passes {
        if pass.needs() != at {
            return Err(Diagnostic::global(format!(
                "pass `{}` reads the {}, but {before} the program is the {}",
                pass.name(),
                pass.needs().name(),
                at.name()
            )));
        }
        at = pass.makes();
        before = format!("after `{}`", pass.name());
    }
    Ok(at)
}
