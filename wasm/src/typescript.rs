//! The TypeScript declarations of every type the API passes to or returns from
//! JavaScript, generated from the Rust types with ts-rs (core's `ts` feature), which
//! reads their serde attributes. `tilescope.d.ts` beside `src/` holds the output; the
//! module's `.d.ts` includes it, and the tests fail when it differs from
//! [`declarations`] (regenerate it with `cargo run -p tilescope-wasm --example
//! typescript > wasm/tilescope.d.ts`).

use std::any::TypeId;
use std::collections::BTreeMap;
use ts_rs::{Config, TypeVisitor, TS};

/// What the module's `.d.ts` declares besides its functions: `tilescope.d.ts`.
pub const DECLARATIONS: &str = include_str!("../tilescope.d.ts");

/// The declarations of the API's types, then of every type they refer to, each once and
/// in the order of their names (ts-rs visits a type's fields in no fixed order).
///
/// An error names two Rust types that have the same TypeScript name (rename one with
/// `#[cfg_attr(feature = "ts", ts(rename = "..."))]`).
pub fn declarations() -> Result<String, String> {
    // serde-wasm-bindgen hands JavaScript a `u64` as a number (and throws past 2^53).
    let cfg = Config::new().with_large_int("number");
    let mut walk = Walk {
        cfg: &cfg,
        seen: Vec::new(),
        rust: BTreeMap::new(),
        declared: BTreeMap::new(),
        clashes: Vec::new(),
    };
    let mut roots = Vec::new();
    walk.root::<tilescope::compile::CompileOptions>(&mut roots);
    walk.root::<crate::CompileResult>(&mut roots);
    walk.root::<crate::RunResult>(&mut roots);
    walk.root::<tilescope::run::Ablation>(&mut roots);
    walk.root::<tilescope::machine::Machine>(&mut roots);
    walk.root::<crate::Example>(&mut roots);
    walk.root::<tilescope::lesson::Lesson>(&mut roots);
    walk.root::<tilescope::lesson::Grade>(&mut roots);
    if !walk.clashes.is_empty() {
        return Err(walk.clashes.join("\n"));
    }
    let mut out = String::from(
        "// Generated from the Rust types by `tilescope_wasm::typescript::declarations`.\n",
    );
    let roots: Vec<String> = roots
        .iter()
        .filter_map(|name| walk.declared.remove(name))
        .collect();
    for declaration in roots.iter().chain(walk.declared.values()) {
        out.push('\n');
        out.push_str(declaration);
    }
    Ok(out)
}

struct Walk<'a> {
    cfg: &'a Config,
    seen: Vec<TypeId>,
    /// TypeScript name -> the Rust type declared under it.
    rust: BTreeMap<String, &'static str>,
    /// TypeScript name -> its declaration.
    declared: BTreeMap<String, String>,
    /// Two Rust types under one TypeScript name, which the declarations cannot tell apart.
    clashes: Vec<String>,
}

impl Walk<'_> {
    /// Declares `T` and what it refers to; `T` goes first, in the order of `roots`.
    fn root<T: TS + 'static>(&mut self, roots: &mut Vec<String>) {
        self.visit::<T>();
        roots.push(T::ident(self.cfg));
    }
}

impl TypeVisitor for Walk<'_> {
    fn visit<T: TS + 'static + ?Sized>(&mut self) {
        // Primitives and containers (`number`, `Array<T>`) have no declaration.
        if T::output_path().is_none() || self.seen.contains(&TypeId::of::<T>()) {
            return;
        }
        self.seen.push(TypeId::of::<T>());
        let name = T::ident(self.cfg);
        let rust = std::any::type_name::<T>();
        if let Some(other) = self.rust.insert(name.clone(), rust) {
            self.clashes.push(format!(
                "`{other}` and `{rust}` are both `{name}` in TypeScript"
            ));
        }
        let docs = T::docs().unwrap_or_default();
        let declaration = format!("{docs}export {}\n", one_member_a_line(&T::decl(self.cfg)));
        self.declared.insert(name, declaration);
        T::visit_dependencies(self);
    }
}

/// `type Name = { a: A, b: B, };` (ts-rs writes an object on one line, its members'
/// doc comments between them) with each member on a line of its own: readable, and what
/// wasm-bindgen's indenting of the `.d.ts` expects. Any other declaration is unchanged.
fn one_member_a_line(decl: &str) -> String {
    let Some((head, body)) = decl.split_once(" = {") else {
        return decl.to_string();
    };
    let Some(body) = body.strip_suffix("};") else {
        return decl.to_string();
    };
    let Some(members) = members(body) else {
        return decl.to_string();
    };
    let mut out = format!("{head} = {{\n");
    for member in members {
        for line in member.lines().map(str::trim).filter(|l| !l.is_empty()) {
            // A doc comment's inner lines (` * text`) line up under its `/**`.
            let indent = if line.starts_with('*') {
                "     "
            } else {
                "    "
            };
            out.push_str(indent);
            out.push_str(line);
            if !line.ends_with("*/") && !line.starts_with('*') && !line.starts_with("/**") {
                out.push(',');
            }
            out.push('\n');
        }
    }
    out.push_str("};");
    out
}

/// The members of an object type's body, split at its own commas (not those nested in
/// brackets, strings or doc comments); `None` when the body is not one object (`{ .. }
/// | { .. }`, a union).
fn members(body: &str) -> Option<Vec<&str>> {
    let mut members = Vec::new();
    let mut depth = 0u32;
    let mut start = 0;
    let mut at = 0;
    while let Some(c) = body.get(at..).and_then(|rest| rest.chars().next()) {
        let rest = body.get(at..).unwrap_or_default();
        let skip = if rest.starts_with("/**") {
            rest.find("*/").map_or(rest.len(), |end| end + 2)
        } else if c == '"' {
            rest.get(1..)
                .and_then(|r| r.find('"'))
                .map_or(rest.len(), |end| end + 2)
        } else {
            match c {
                '{' | '[' | '(' | '<' => depth += 1,
                '}' | ']' | ')' | '>' => depth = depth.checked_sub(1)?,
                ',' if depth == 0 => {
                    members.push(body.get(start..at)?);
                    start = at + 1;
                }
                _ => {}
            }
            c.len_utf8()
        };
        at += skip;
    }
    let last = body.get(start..)?;
    if !last.trim().is_empty() {
        members.push(last);
    }
    Some(members)
}
