//! The step graph: the steps of form-steps as nodes, with data edges (a tile
//! produced in one step and read in another), loop-carried edges (a loop's yielded value
//! read by the next iteration) and sync edges (set/wait flag pairs of the final program,
//! attributed to steps by the instructions' `prov.step`). Printable as Graphviz DOT.

use crate::dense::DenseMap;
use crate::diag::Span;
use crate::front::hir::{Cond, Operand};
use crate::ir::{BlockItem, ForOp, IndexExpr, Kernel, LoopVarId, OpKind, OpMap, ValueDef, ValueId};
use crate::isa::{Op, Program, Val};
use crate::lowered::{Item, Lowered, Target};
use crate::types::Pipe;
use serde::{Deserialize, Serialize};
use std::fmt::Write;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(default)]
pub struct StepGraph {
    pub nodes: Vec<StepNode>,
    pub edges: Vec<StepEdge>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(default)]
pub struct StepNode {
    pub id: u32,
    /// `load, compute, store` or a subset.
    pub kind: String,
    pub pipes: Vec<Pipe>,
    /// Buffer names (plan-memory slabs) and GM tensors read and written.
    pub reads: Vec<String>,
    pub writes: Vec<String>,
    pub span: Span,
    /// The loop variable of the innermost enclosing loop, if any.
    pub loop_var: Option<String>,
    /// The conditions of the `if` branches around the step inside its innermost loop,
    /// joined with `&&` (an `else` is `!(...)`), with source names: the step runs in
    /// an iteration only when this holds.
    pub branch: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum StepEdgeKind {
    Data,
    LoopCarried,
    Sync,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct StepEdge {
    pub from: u32,
    pub to: u32,
    pub kind: StepEdgeKind,
    /// Sync edges: the flag's pipes and event id (`None` for a dynamic id).
    pub flag: Option<(Pipe, Pipe, Option<i64>)>,
    /// The wait precedes the set in program order: the edge crosses a loop back edge.
    pub back: bool,
}

/// Builds the graph from the stepped IR, the lowered program (buffer accesses) and the
/// final program (pipes and flags).
pub fn step_graph(k: &Kernel, lowered: Option<&Lowered>, program: &Program) -> StepGraph {
    let mut g = StepGraph::default();
    let mut step_of: OpMap<u32> = DenseMap::new();
    // Steps with their innermost loop variable and the conditions of the branches
    // around them up to that loop, in program order.
    type Frame = (Vec<BlockItem>, usize, Option<String>, Option<String>);
    let mut stack: Vec<Frame> = vec![(k.body.items.clone(), 0, None, None)];
    while let Some((items, i, var, branch)) = stack.last_mut() {
        let Some(item) = items.get(*i).cloned() else {
            stack.pop();
            continue;
        };
        *i += 1;
        let (var, branch) = (var.clone(), branch.clone());
        match item {
            BlockItem::Step(s) => {
                for &o in &s.ops {
                    step_of.insert(o, s.id);
                }
                g.nodes.push(StepNode {
                    id: s.id,
                    kind: s.kind.name(),
                    span: s.span,
                    loop_var: var,
                    branch,
                    ..StepNode::default()
                });
            }
            BlockItem::Op(o) => {
                if let Some(OpKind::For(l)) = k.ops.get(o).map(|x| &x.kind) {
                    let items = l.body.items.clone();
                    match branch_text(k, l) {
                        Some(cond) => {
                            let path = match branch {
                                Some(outer) => {
                                    format!("{} && {}", and_operand(&outer), and_operand(&cond))
                                }
                                None => cond,
                            };
                            stack.push((items, 0, var, Some(path)));
                        }
                        None => {
                            let name = k.loop_vars.get(l.var).map(|v| v.name.clone());
                            stack.push((items, 0, name, None));
                        }
                    }
                }
            }
        }
    }
    // The steps that may have produced a value: through a branch, its init (the branch
    // was skipped) or what the branch yielded.
    let def_steps = |v: ValueId| -> Vec<u32> {
        let mut out = Vec::new();
        let mut todo = vec![v];
        let mut seen = crate::dense::DenseSet::new();
        while let Some(v) = todo.pop() {
            if !seen.insert(v) {
                continue;
            }
            let Some(def) = k.values.get(v).map(|x| x.def) else {
                continue;
            };
            let (op, index, result) = match def {
                ValueDef::Result { op, index } => (op, index as usize, true),
                ValueDef::LoopArg { op, index } => (op, index as usize, false),
            };
            match k.ops.get(op).map(|o| &o.kind) {
                Some(OpKind::For(l)) if l.end.guard().is_some() => {
                    todo.extend(l.inits.get(index));
                    if result {
                        todo.extend(l.yields.get(index));
                    }
                }
                _ if result => out.extend(step_of.get(&op).copied()),
                _ => {}
            }
        }
        out
    };
    let mut data: Vec<(u32, u32, bool)> = Vec::new();
    k.walk_ops(|id, op| {
        if let OpKind::For(l) = &op.kind {
            // A branch carries nothing from one iteration to the next: its values pass
            // through it (`def_steps`).
            if l.end.guard().is_some() {
                return;
            }
            // The yield of iteration i feeds the readers of the argument in iteration i+1.
            for (arg, y) in l.args.iter().zip(&l.yields) {
                for from in def_steps(*y) {
                    k.walk_ops(|uid, uop| {
                        if uop.kind.operands().contains(arg) {
                            if let Some(&to) = step_of.get(&uid) {
                                data.push((from, to, true));
                            }
                        }
                    });
                }
            }
            return;
        }
        let Some(&to) = step_of.get(&id) else { return };
        for v in op.kind.operands() {
            for from in def_steps(v) {
                if from != to {
                    data.push((from, to, false));
                }
            }
        }
    });
    data.sort_unstable();
    data.dedup();
    for (from, to, carried) in data {
        g.edges.push(StepEdge {
            from,
            to,
            kind: if carried {
                StepEdgeKind::LoopCarried
            } else {
                StepEdgeKind::Data
            },
            flag: None,
            back: carried,
        });
    }
    // Pipes and flags from the final program.
    // Each step's pipes as a bit set over `Pipe::index`.
    let mut pipes: DenseMap<u32, u8> = DenseMap::new();
    // Flags keyed by pipes and id operand (an immediate, or the register of a dynamic id).
    let mut sets: Vec<(usize, (Pipe, Pipe, Val), u32)> = Vec::new();
    let mut waits: Vec<(usize, (Pipe, Pipe, Val), u32)> = Vec::new();
    for (i, ins) in program.instrs.iter().enumerate() {
        let Some(step) = ins.prov.step else { continue };
        match &ins.op {
            Op::SetFlag { src, dst, id } => sets.push((i, (*src, *dst, *id), step)),
            Op::WaitFlag { src, dst, id } => waits.push((i, (*src, *dst, *id), step)),
            op if op.pipe() != Pipe::S => {
                *pipes.entry(step).or_default() |= 1 << op.pipe().index();
            }
            _ => {}
        }
    }
    let id_of = |v: &Val| match v {
        Val::Imm(x) => Some(*x),
        Val::Reg(_) => None,
    };
    let mut sync: Vec<(u32, u32, Pipe, Pipe, Option<i64>, bool)> = Vec::new();
    for (wi, key, to) in waits {
        // The nearest set before the wait; failing that (the set is later in a loop
        // body), the last one after it, reached over the back edge.
        let before = sets.iter().rev().find(|(si, k, _)| *si < wi && *k == key);
        let after = || sets.iter().rev().find(|(si, k, _)| *si > wi && *k == key);
        if let Some(&(si, (src, dst, id), from)) = before.or_else(after) {
            sync.push((from, to, src, dst, id_of(&id), si > wi));
        }
    }
    sync.sort_unstable();
    sync.dedup();
    for (from, to, src, dst, id, back) in sync {
        g.edges.push(StepEdge {
            from,
            to,
            kind: StepEdgeKind::Sync,
            flag: Some((src, dst, id)),
            back,
        });
    }
    let (mut reads, mut writes) = lowered.map(step_buffers).unwrap_or_default();
    for n in &mut g.nodes {
        let set = pipes.get(&n.id).copied().unwrap_or(0);
        n.pipes = Pipe::ALL
            .into_iter()
            .filter(|p| set & 1 << p.index() != 0)
            .collect();
        n.reads = reads.remove(&n.id).unwrap_or_default();
        n.writes = writes.remove(&n.id).unwrap_or_default();
    }
    g
}

/// An `if` region's condition as the views show it: as written in the kernel
/// (`i % 32 == 0`), or, for a region the IR text made, its IR condition with source
/// names. `None` for a loop that is not a branch.
pub fn branch_text(k: &Kernel, l: &ForOp) -> Option<String> {
    let cond = l.end.guard()?;
    let written = k.loop_vars.get(l.var).and_then(|v| v.written.clone());
    Some(written.unwrap_or_else(|| cond_text(k, cond)))
}

/// `c` as an operand of `&&`: in parentheses when it has a `||` outside any.
fn and_operand(c: &str) -> String {
    let mut depth = 0i32;
    let mut bytes = c.bytes().peekable();
    let mut or = false;
    while let Some(b) = bytes.next() {
        match b {
            b'(' => depth += 1,
            b')' => depth -= 1,
            b'|' if depth == 0 && bytes.peek() == Some(&b'|') => or = true,
            _ => {}
        }
    }
    if or {
        format!("({c})")
    } else {
        c.to_string()
    }
}

/// A branch's condition with source names (`i1 * 16 + i2 == 0` after axis-split).
pub fn cond_text(k: &Kernel, c: &Cond<IndexExpr>) -> String {
    let var = |v: LoopVarId| {
        k.loop_vars
            .get(v)
            .map_or("?", |x| x.name.as_str())
            .to_string()
    };
    c.text(&mut |operand| match operand {
        Operand::Index(e) => e.source_text(&var),
        Operand::Element { param, index } => {
            let name = k
                .params
                .get(*param as usize)
                .map_or("?", |p| p.name.as_str());
            let index: Vec<String> = index.iter().map(|e| e.source_text(&var)).collect();
            format!("load {name}[{}]", index.join(", "))
        }
    })
}

/// Each step's buffer and tensor names, sorted and distinct.
type Names = DenseMap<u32, Vec<String>>;

fn step_buffers(l: &Lowered) -> (Names, Names) {
    let mut reads = Names::new();
    let mut writes = Names::new();
    let mut stack: Vec<&[Item]> = vec![&l.body];
    while let Some(items) = stack.pop() {
        for item in items {
            match item {
                Item::Loop(lp) => stack.push(&lp.body),
                Item::Instr(ins) => {
                    let Some(step) = ins.prov.step else { continue };
                    for a in &ins.accesses {
                        let name = match a.target {
                            Target::Buffer(b) => {
                                l.buffers.get(b.0 as usize).map(|x| format!("%{}", x.name))
                            }
                            Target::Tensor(t) => l.tensors.get(t as usize).map(|x| x.name.clone()),
                        };
                        let Some(name) = name else { continue };
                        let set = if a.write { &mut writes } else { &mut reads };
                        let names = set.entry(step).or_default();
                        if !names.contains(&name) {
                            names.push(name);
                        }
                    }
                }
            }
        }
    }
    for names in reads.values_mut().chain(writes.values_mut()) {
        names.sort();
    }
    (reads, writes)
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Graphviz DOT: data edges solid, loop-carried dashed, sync edges dotted and labelled
/// with the flag.
pub fn steps_dot(g: &StepGraph) -> String {
    let mut s = String::from("digraph steps {\n  node [shape=box, fontname=monospace];\n");
    for n in &g.nodes {
        let pipes: Vec<&str> = n.pipes.iter().map(|p| p.name()).collect();
        let mut lp = n
            .loop_var
            .as_ref()
            .map_or(String::new(), |v| format!("\\nloop {}", escape(v)));
        if let Some(c) = &n.branch {
            let _ = write!(lp, "\\nif {}", escape(c));
        }
        let _ = writeln!(
            s,
            "  s{} [label=\"step {} ({})\\n{}{}\"];",
            n.id,
            n.id,
            escape(&n.kind),
            pipes.join(" "),
            lp
        );
    }
    for e in &g.edges {
        let attrs = match e.kind {
            StepEdgeKind::Data => String::new(),
            StepEdgeKind::LoopCarried => " [style=dashed, label=\"loop-carried\"]".to_string(),
            StepEdgeKind::Sync => {
                let label = e.flag.map_or(String::new(), |(a, b, id)| {
                    let id = id.map_or("dyn".to_string(), |i| i.to_string());
                    format!("{}->{} #{id}", a.name(), b.name())
                });
                let back = if e.back { ", constraint=false" } else { "" };
                format!(" [style=dotted, color=red, label=\"{label}\"{back}]")
            }
        };
        let _ = writeln!(s, "  s{} -> s{}{attrs};", e.from, e.to);
    }
    s.push_str("}\n");
    s
}
