//! `tilescope opt`: named passes run on tile-IR text, as `mlir-opt` and `clif-util`
//! run them. A section of `tilescope compile --emit passes` pastes in unchanged: its
//! `=== after PASS ===` header is skipped, and the options line the dump starts with
//! ([`header`]) sets the machine and the options the passes read.

use crate::compile::{resolve_machine, AliasMode, CompileOptions, SyncStrategy};
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::ir::read;
use crate::passes::{self, Context, PassManager, PassRecord, Stage};

/// The prefix of the options line.
const OPTIONS: &str = "; options:";

/// The line `--emit passes` starts with: the machine preset and every option a pass
/// reads, as `opt` reads them back (`; options: preset=a3 sync=auto alias=precise
/// auto-buffers=on`, then `disable-pass=NAME,...` when passes were left out).
pub fn header(options: &CompileOptions) -> String {
    let preset = resolve_machine(options).map_or_else(|_| "?".to_string(), |m| m.name);
    let mut line = format!(
        "{OPTIONS} preset={preset} sync={} alias={} auto-buffers={}",
        json_name(&options.sync),
        json_name(&options.alias),
        if options.auto_multi_buffer {
            "on"
        } else {
            "off"
        }
    );
    if !options.disabled_passes.is_empty() {
        line.push_str(&format!(
            " disable-pass={}",
            options.disabled_passes.join(",")
        ));
    }
    line.push('\n');
    line
}

/// An option enum's name as the JSON interface spells it.
fn json_name<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        _ => "?".to_string(),
    }
}

fn from_json_name<T: serde::de::DeserializeOwned>(name: &str) -> Option<T> {
    serde_json::from_value(serde_json::Value::String(name.to_string())).ok()
}

/// The options of `text`'s options line (the defaults where it has none), with the
/// line's diagnostics located in `text`.
pub fn options_of(text: &str) -> Result<CompileOptions, Diagnostic> {
    let mut options = CompileOptions::default();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let Some(rest) = line.trim_end().strip_prefix(OPTIONS) else {
            continue;
        };
        let mut at = start + OPTIONS.len();
        for word in rest.split(' ') {
            let here = Span::new(at, at + word.len());
            at += word.len() + 1;
            if word.is_empty() {
                continue;
            }
            let bad = |what: &str| Diagnostic::error(format!("{what} in the options line"), here);
            let (key, value) = word
                .split_once('=')
                .ok_or_else(|| bad("expected `key=value`"))?;
            match key {
                "preset" => options.preset = Some(value.to_string()),
                "sync" => {
                    options.sync = from_json_name::<SyncStrategy>(value)
                        .ok_or_else(|| bad(&format!("`{value}` is not a sync strategy")))?
                }
                "alias" => {
                    options.alias = from_json_name::<AliasMode>(value)
                        .ok_or_else(|| bad(&format!("`{value}` is not an alias mode")))?
                }
                "auto-buffers" => {
                    options.auto_multi_buffer = match value {
                        "on" => true,
                        "off" => false,
                        _ => return Err(bad("expected `on` or `off`")),
                    }
                }
                "disable-pass" => {
                    options.disabled_passes = value.split(',').map(str::to_string).collect()
                }
                _ => return Err(bad(&format!("`{key}` is not an option"))),
            }
        }
    }
    Ok(options)
}

/// What `opt` made: the record of every pass that ran, and the first failure.
#[derive(Clone, Debug, Default)]
pub struct OptResult {
    pub passes: Vec<PassRecord>,
    pub diagnostics: Diagnostics,
    /// The text the IR's positions are in (the kernel source, or the reader's stand-in),
    /// for rendering the passes' diagnostics.
    pub source: String,
    /// Diagnostics about the IR text itself (located in it) rather than a pass's.
    pub in_text: bool,
}

/// Runs `pass_names` in order on the kernel in `text` (the options line, when there is
/// one, gives the machine and options; `machine`, when given, overrides its machine). `source` is the kernel source the positions refer to, when at hand.
pub fn opt(
    text: &str,
    pass_names: &[String],
    source: Option<&str>,
    machine: Option<crate::machine::Machine>,
) -> OptResult {
    let in_text = |diagnostics: Diagnostics| OptResult {
        diagnostics,
        in_text: true,
        ..OptResult::default()
    };
    let mut options = match options_of(text) {
        Ok(o) => o,
        Err(d) => return in_text(vec![d]),
    };
    if machine.is_some() {
        options.machine = machine;
    }
    let read = match read::read(text, source) {
        Ok(r) => r,
        Err(d) => return in_text(d),
    };
    let fail = |d: Diagnostic, source: &str| OptResult {
        diagnostics: vec![d],
        source: source.to_string(),
        ..OptResult::default()
    };
    let machine = match resolve_machine(&options) {
        Ok(m) => m,
        Err(d) => return fail(d, &read.source),
    };
    let all = passes::pipeline();
    let mut chosen = Vec::new();
    for name in pass_names {
        match all.iter().position(|p| p.name() == name.as_str()) {
            Some(i) => chosen.push(i),
            None => {
                let names: Vec<&str> = all.iter().map(|p| p.name()).collect();
                let d = Diagnostic::global(format!(
                    "`{}` is not a pass; the passes are: {}",
                    crate::front::lexer::truncate(name),
                    names.join(", ")
                ));
                return fail(d, &read.source);
            }
        }
    }
    let mut cx = Context::new(read.source.clone(), None);
    cx.ir = Some(read.kernel);
    cx.machine = Some(machine);
    options.configure(&mut cx);
    // Each name gets its own instance, so a pass named twice runs twice.
    let list: Vec<Box<dyn passes::AnyPass>> = chosen
        .into_iter()
        .filter_map(|i| passes::pipeline().into_iter().nth(i))
        .collect();
    if let Err(d) = passes::stage::check_order(&list, Stage::of(&cx)) {
        return fail(d, &cx.source);
    }
    let manager = PassManager::new(list, true, None);
    let (records, outcome) = manager.run(&mut cx);
    OptResult {
        passes: records,
        diagnostics: outcome.err().unwrap_or_default(),
        source: cx.source,
        in_text: false,
    }
}
