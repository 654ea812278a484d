//! Share links and the saved session: the whole view state as JSON, compressed with
//! lz-string's URI-safe alphabet into the URL fragment `#v1=...`.
//!
//! Decoding is bounded: fragments over `MAX_FRAGMENT_BYTES` are rejected before any
//! work, and `lz_output_len` measures the decompressed length by walking the code
//! stream with lengths only, so a crafted fragment (LZ output grows quadratically in
//! the number of codes) is rejected before lz-str materialises it.

use serde::{Deserialize, Serialize};

use crate::protocol::options::{self, AliasMode, CompileOptions, Preset, SyncStrategy};

pub const FRAGMENT_PREFIX: &str = "v1=";
/// Fragments longer than this are rejected unread.
pub const MAX_FRAGMENT_BYTES: usize = 64 * 1024;
/// Decompressed JSON longer than this (UTF-16 code units) is rejected.
pub const MAX_DECOMPRESSED_UNITS: usize = 1024 * 1024;

/// The right-hand panel in view.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Panel {
    #[default]
    Passes,
    Steps,
    Timeline,
    Assembly,
    Output,
    Problems,
    Compare,
}

impl Panel {
    pub const ALL: [Panel; 7] = [
        Panel::Passes,
        Panel::Steps,
        Panel::Timeline,
        Panel::Assembly,
        Panel::Output,
        Panel::Problems,
        Panel::Compare,
    ];

    /// The name links and embed URLs use (serde's lower case).
    pub fn name(self) -> &'static str {
        match self {
            Panel::Passes => "passes",
            Panel::Steps => "steps",
            Panel::Timeline => "timeline",
            Panel::Assembly => "assembly",
            Panel::Output => "output",
            Panel::Problems => "problems",
            Panel::Compare => "compare",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Panel::Passes => "Passes",
            Panel::Steps => "Steps",
            Panel::Timeline => "Timeline",
            Panel::Assembly => "Assembly",
            Panel::Output => "Output",
            Panel::Problems => "Problems",
            Panel::Compare => "Compare",
        }
    }

    /// What the panel shows, in one line (the help overlay lists them).
    pub fn blurb(self) -> &'static str {
        match self {
            Panel::Passes => "the IR after every compiler pass, or its diff with the pass before; switch optional passes off to see what they buy",
            Panel::Steps => "the ordered step graph: each loop body as load → compute → store steps, with data, sync and loop-carried edges",
            Panel::Timeline => "the simulated run per pipe, with sync flags, stalls and races; step through it and see the buffers live at the cursor",
            Panel::Assembly => "the final program, one instruction per line with its pipe and step; a set or wait explains its flag",
            Panel::Output => "cycles against the lower bound, the path bound and the roofline, where each pipe's cycles went, and the outputs compared with the reference interpreter",
            Panel::Problems => "every compile error, race and simulation error, each linked to its source line or cycle",
            Panel::Compare => "the same kernel under other options (preset, sync, alias), both runs on one axis",
        }
    }
}

/// Everything a link restores.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ViewState {
    pub source: String,
    /// The gallery entry the source came from (may have been edited since).
    #[serde(default)]
    pub example: Option<String>,
    #[serde(default = "options::playground", with = "link_options")]
    pub options: CompileOptions,
    /// Selected pass by name: names survive recompiles, indices may not.
    #[serde(default)]
    pub pass: Option<String>,
    #[serde(default)]
    pub panel: Panel,
    /// Timeline cursor, in cycles.
    #[serde(default)]
    pub cursor: u64,
    /// Seed of the generated inputs.
    #[serde(default)]
    pub seed: u64,
    /// The lesson open beside the editor (its id, `01-load-store`); `source` is the
    /// student's code for it.
    #[serde(default)]
    pub lesson: Option<String>,
    /// The second option set of the Compare panel (`options` is the first).
    #[serde(default, with = "link_options::optional")]
    pub compare: Option<CompileOptions>,
}

/// Compile options as a link writes them: the fields the page sets, under the names
/// links have always used. A link carries no machine description (the page only
/// offers presets) and no `verify`.
#[derive(Serialize, Deserialize)]
struct LinkOptions {
    preset: Preset,
    sync: SyncStrategy,
    #[serde(default)]
    alias: AliasMode,
    multibuffer_auto: bool,
    #[serde(default)]
    kernel: Option<String>,
    #[serde(default)]
    disabled_passes: Vec<String>,
}

impl LinkOptions {
    fn of(o: &CompileOptions) -> LinkOptions {
        LinkOptions {
            // The page sets only the presets it offers (`Preset::set`).
            preset: Preset::of(o).unwrap_or_default(),
            sync: o.sync,
            alias: o.alias,
            multibuffer_auto: o.auto_multi_buffer,
            kernel: o.kernel.clone(),
            disabled_passes: o.disabled_passes.clone(),
        }
    }

    fn options(self) -> CompileOptions {
        let mut o = options::playground();
        self.preset.set(&mut o);
        o.sync = self.sync;
        o.alias = self.alias;
        o.auto_multi_buffer = self.multibuffer_auto;
        o.kernel = self.kernel;
        o.disabled_passes = self.disabled_passes;
        o
    }
}

/// `ViewState`'s options through `LinkOptions` (serde's `with`).
mod link_options {
    use super::{CompileOptions, LinkOptions};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(o: &CompileOptions, s: S) -> Result<S::Ok, S::Error> {
        LinkOptions::of(o).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<CompileOptions, D::Error> {
        LinkOptions::deserialize(d).map(LinkOptions::options)
    }

    pub mod optional {
        use super::{CompileOptions, LinkOptions};
        use serde::{Deserialize, Deserializer, Serialize, Serializer};

        pub fn serialize<S: Serializer>(
            o: &Option<CompileOptions>,
            s: S,
        ) -> Result<S::Ok, S::Error> {
            o.as_ref().map(LinkOptions::of).serialize(s)
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(
            d: D,
        ) -> Result<Option<CompileOptions>, D::Error> {
            Ok(Option::<LinkOptions>::deserialize(d)?.map(LinkOptions::options))
        }
    }
}

/// The format version lives inside the JSON as well as in the prefix, so a v2 reader can
/// still tell a v1 payload apart after the prefix is stripped.
#[derive(Serialize, Deserialize)]
struct Envelope {
    v: u32,
    #[serde(flatten)]
    view: ViewState,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShareError {
    /// Not a `#vN=` fragment at all.
    UnknownFormat,
    /// A `#vN=` link of another format version; its payload is still read if it can be.
    Version(String),
    TooLong {
        bytes: usize,
    },
    TooLarge,
    Corrupt,
    /// The compressed data ends early; whatever decompressed before the cut is kept.
    Truncated,
    BadJson(String),
    /// A field holds a value this version does not know; it was reset to its default.
    UnknownValue {
        field: &'static str,
        value: String,
    },
}

/// Values quoted back in messages are cut to this many characters.
const MAX_QUOTED_CHARS: usize = 40;

impl std::fmt::Display for ShareError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ShareError::UnknownFormat => write!(f, "the link is not a Tilescope link"),
            ShareError::Version(v) => write!(
                f,
                "the link has format version {}, this playground reads version 1",
                quoted(v)
            ),
            ShareError::TooLong { bytes } => write!(
                f,
                "the link is {bytes} bytes long; links over {} KiB are not opened",
                MAX_FRAGMENT_BYTES / 1024
            ),
            ShareError::TooLarge => write!(
                f,
                "the link expands to more than {} MiB and was not opened",
                MAX_DECOMPRESSED_UNITS / (1024 * 1024)
            ),
            ShareError::Corrupt => write!(f, "the link is damaged (it does not decompress)"),
            ShareError::Truncated => write!(f, "the link is cut short"),
            ShareError::BadJson(e) => write!(f, "the link's contents are not a valid view: {e}"),
            ShareError::UnknownValue { field, value } => {
                write!(f, "unknown {field} {}; using the default", quoted(value))
            }
        }
    }
}

/// `value` in quotes, shortened: link contents are untrusted and may be huge.
fn quoted(value: &str) -> String {
    let mut short: String = value.chars().take(MAX_QUOTED_CHARS).collect();
    if short.len() < value.len() {
        short.push('…');
    }
    format!("{short:?}")
}

/// A link read as far as it could be.
#[derive(Clone, Debug, PartialEq)]
pub struct Opened {
    /// The recovered view; `None` when not even the kernel text survived.
    pub view: Option<ViewState>,
    /// Everything that was wrong with the link, in the order found; empty for a clean one.
    pub problems: Vec<ShareError>,
}

impl Opened {
    fn failed(problem: ShareError) -> Opened {
        Opened {
            view: None,
            problems: vec![problem],
        }
    }

    /// One sentence for the banner, `None` for a clean link.
    pub fn message(&self) -> Option<String> {
        if self.problems.is_empty() {
            return None;
        }
        let what: Vec<String> = self.problems.iter().map(ToString::to_string).collect();
        let outcome = if self.view.is_some() {
            "The kernel text was kept."
        } else {
            "Showing the default example."
        };
        Some(format!(
            "Could not fully open this link: {}. {outcome}",
            what.join("; ")
        ))
    }
}

/// The fragment (without `#`) for a view.
pub fn encode(view: &ViewState) -> String {
    let envelope = Envelope {
        v: 1,
        view: view.clone(),
    };
    // Serialising plain data with string keys cannot fail.
    let json = serde_json::to_string(&envelope).unwrap_or_default();
    format!(
        "{FRAGMENT_PREFIX}{}",
        lz_str::compress_to_encoded_uri_component(json.as_str())
    )
}

/// The view in a fragment (with or without the leading `#`), only if the link is
/// entirely sound; `open` recovers what it can from a damaged one.
pub fn decode(fragment: &str) -> Result<ViewState, ShareError> {
    let opened = open(fragment);
    match (opened.view, opened.problems.into_iter().next()) {
        (Some(view), None) => Ok(view),
        (_, Some(problem)) => Err(problem),
        // `open` always reports why it has no view.
        (None, None) => Err(ShareError::Corrupt),
    }
}

/// Reads a fragment leniently: an unknown option value falls back to its default, another
/// format version or a cut-short link keeps the kernel text if it decompresses. Work is
/// bounded by `MAX_FRAGMENT_BYTES` and `MAX_DECOMPRESSED_UNITS` whatever the input.
pub fn open(fragment: &str) -> Opened {
    let fragment = fragment.strip_prefix('#').unwrap_or(fragment);
    if fragment.len() > MAX_FRAGMENT_BYTES {
        return Opened::failed(ShareError::TooLong {
            bytes: fragment.len(),
        });
    }
    let mut problems = Vec::new();
    let payload = match fragment.strip_prefix(FRAGMENT_PREFIX) {
        Some(payload) => payload,
        None => match other_version(fragment) {
            Some((version, payload)) => {
                problems.push(ShareError::Version(version.to_string()));
                payload
            }
            None => return Opened::failed(ShareError::UnknownFormat),
        },
    };
    let Some(digits) = uri_digits(payload) else {
        problems.push(ShareError::Corrupt);
        return Opened {
            view: None,
            problems,
        };
    };
    let units = match lz_output_len(&digits, MAX_DECOMPRESSED_UNITS) {
        LzLen::Fits(_) => lz_str::decompress_internal(digits.into_iter(), 6),
        LzLen::Truncated { bits, code_bits } => {
            problems.push(ShareError::Truncated);
            lz_str::decompress_internal(close_stream(&digits, bits, code_bits).into_iter(), 6)
        }
        LzLen::Exceeds => {
            problems.push(ShareError::TooLarge);
            None
        }
        LzLen::Invalid => None,
    };
    let Some(units) = units else {
        if !problems.iter().any(is_fatal) {
            problems.push(ShareError::Corrupt);
        }
        return Opened {
            view: None,
            problems,
        };
    };
    // A cut may split a surrogate pair; the replacement character marks the spot.
    let json = String::from_utf16_lossy(&units);
    let view = match serde_json::from_str::<serde_json::Value>(&json) {
        Ok(value) => lenient_view(&value, &mut problems),
        Err(e) => {
            let source = recover_source(&json);
            if source.is_none() || !problems.contains(&ShareError::Truncated) {
                problems.push(ShareError::BadJson(e.to_string()));
            }
            source.map(|source| ViewState {
                source,
                ..empty_view()
            })
        }
    };
    Opened { view, problems }
}

fn is_fatal(problem: &ShareError) -> bool {
    matches!(
        problem,
        ShareError::Corrupt | ShareError::TooLarge | ShareError::TooLong { .. }
    )
}

/// `("9", payload)` for `v9=payload`: a version this build does not write.
fn other_version(fragment: &str) -> Option<(&str, &str)> {
    let rest = fragment.strip_prefix('v')?;
    let (version, payload) = rest.split_once('=')?;
    let numeric = !version.is_empty() && version.len() <= 4;
    (numeric && version.bytes().all(|b| b.is_ascii_digit())).then_some((version, payload))
}

/// A view with no kernel: the defaults every recovered field starts from.
fn empty_view() -> ViewState {
    ViewState {
        source: String::new(),
        example: None,
        options: crate::protocol::options::playground(),
        pass: None,
        panel: Panel::default(),
        cursor: 0,
        seed: 0,
        lesson: None,
        compare: None,
    }
}

/// The view in a JSON value field by field, so one bad field costs only itself. The
/// kernel text is the one field without which nothing is recovered.
fn lenient_view(value: &serde_json::Value, problems: &mut Vec<ShareError>) -> Option<ViewState> {
    use serde_json::Value;
    let Some(source) = value.get("source").and_then(Value::as_str) else {
        problems.push(ShareError::BadJson("it holds no kernel text".into()));
        return None;
    };
    if let Some(v) = value.get("v") {
        if v.as_u64() != Some(1) && !problems.iter().any(|p| matches!(p, ShareError::Version(_))) {
            problems.push(ShareError::Version(v.to_string()));
        }
    }
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
    let number = |key: &str| value.get(key).and_then(Value::as_u64).unwrap_or(0);
    let mut view = ViewState {
        source: source.to_string(),
        example: text(value, "example"),
        pass: text(value, "pass"),
        cursor: number("cursor"),
        seed: number("seed"),
        ..empty_view()
    };
    if let Some(lesson) = value.get("lesson").filter(|l| !l.is_null()) {
        match lesson
            .as_str()
            .filter(|id| crate::page::lessons::find(id).is_some())
        {
            Some(id) => view.lesson = Some(id.to_string()),
            None => problems.push(unknown_value("lesson", lesson)),
        }
    }
    if let Some(panel) = value.get("panel") {
        match serde_json::from_value::<Panel>(panel.clone()) {
            Ok(panel) => view.panel = panel,
            Err(_) => problems.push(unknown_value("panel", panel)),
        }
    }
    if let Some(compare) = value.get("compare").filter(|c| !c.is_null()) {
        match lenient_options(compare, problems) {
            Some(options) => view.compare = Some(options),
            None => problems.push(unknown_value("compare", compare)),
        }
    }
    let Some(options) = value.get("options") else {
        return Some(view);
    };
    view.options = lenient_options(options, problems).unwrap_or_default();
    Some(view)
}

/// Compile options field by field: an unknown value falls back to its default with a
/// message. `None` when `options` is not an object.
fn lenient_options(
    options: &serde_json::Value,
    problems: &mut Vec<ShareError>,
) -> Option<CompileOptions> {
    use serde_json::Value;
    options.as_object()?;
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
    let defaults = LinkOptions::of(&options::playground());
    let link = LinkOptions {
        preset: lenient_field(options, "preset", defaults.preset, problems),
        sync: lenient_field(options, "sync", defaults.sync, problems),
        alias: lenient_field(options, "alias", defaults.alias, problems),
        multibuffer_auto: options
            .get("multibuffer_auto")
            .and_then(Value::as_bool)
            .unwrap_or(defaults.multibuffer_auto),
        kernel: text(options, "kernel"),
        disabled_passes: disabled_passes(options, problems),
    };
    Some(link.options())
}

/// The optional passes a link turns off; a name that is not an optional pass is
/// dropped with a message.
fn disabled_passes(options: &serde_json::Value, problems: &mut Vec<ShareError>) -> Vec<String> {
    let optional = tilescope::passes::optional_passes();
    let names = options.get("disabled_passes").and_then(|v| v.as_array());
    let mut kept = Vec::new();
    for name in names.into_iter().flatten() {
        match name.as_str().filter(|n| optional.contains(n)) {
            Some(n) if !kept.iter().any(|k| k == n) => kept.push(n.to_string()),
            Some(_) => {}
            None => problems.push(unknown_value("pass", name)),
        }
    }
    kept
}

fn lenient_field<T: serde::de::DeserializeOwned>(
    object: &serde_json::Value,
    field: &'static str,
    default: T,
    problems: &mut Vec<ShareError>,
) -> T {
    let Some(value) = object.get(field) else {
        return default;
    };
    serde_json::from_value(value.clone()).unwrap_or_else(|_| {
        problems.push(unknown_value(field, value));
        default
    })
}

fn unknown_value(field: &'static str, value: &serde_json::Value) -> ShareError {
    let value = match value {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    ShareError::UnknownValue { field, value }
}

/// The kernel text of a JSON view cut off part-way: the `source` string up to the cut.
/// `encode` writes `source` right after the version, so a cut link usually keeps most
/// of it.
fn recover_source(json: &str) -> Option<String> {
    const KEY: &str = "\"source\":\"";
    let start = json.find(KEY)? + KEY.len() - 1;
    let body = json.get(start + 1..)?;
    // The string's end: the first quote not escaped by an odd run of backslashes.
    let mut escaped = false;
    let mut end = body.len();
    for (i, b) in body.bytes().enumerate() {
        match b {
            b'\\' => escaped = !escaped,
            b'"' if !escaped => {
                end = i;
                break;
            }
            _ => escaped = false,
        }
    }
    let mut text = body.get(..end)?.trim_end_matches('\u{FFFD}').to_string();
    // A cut can split an escape (`\`, `\u00`, a surrogate pair's second half): drop an
    // odd final backslash, then retry without the last `\uXXXX` while that fails.
    // serde_json does the unescaping itself.
    if text.bytes().rev().take_while(|b| *b == b'\\').count() % 2 == 1 {
        text.pop();
    }
    for _ in 0..3 {
        if let Ok(s) = serde_json::from_str::<String>(&format!("\"{text}\"")) {
            return Some(s);
        }
        let cut = text.rfind("\\u").filter(|i| text.len() - i <= 12)?;
        text.truncate(cut);
    }
    None
}

// 65 chars as in lz-string; `$` (64) never appears in compressor output.
const URI_KEY: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+-$";

/// The 6-bit digits of a URI-component payload. lz-string maps a space (what `+`
/// becomes in some URL decoders) back to `+`.
fn uri_digits(payload: &str) -> Option<Vec<u16>> {
    payload
        .bytes()
        .map(|b| if b == b' ' { b'+' } else { b })
        .map(|b| URI_KEY.iter().position(|k| *k == b).map(|n| n as u16))
        .collect()
}

#[derive(Debug, PartialEq, Eq)]
enum LzLen {
    Fits(usize),
    Exceeds,
    Invalid,
    /// The input ran out before the end code; `bits` is where the unfinished code
    /// starts and `code_bits` its width.
    Truncated {
        bits: usize,
        code_bits: u32,
    },
}

/// Bit reader over 6-bit digits, least significant bit of each code first, as
/// lz-string writes them.
struct Bits<'a> {
    digits: &'a [u16],
    digit: usize,
    mask: u16,
}

impl Bits<'_> {
    /// Bits consumed so far.
    fn position(&self) -> usize {
        self.digit * 6 + (5 - self.mask.trailing_zeros() as usize)
    }

    fn read(&mut self, n: u32) -> Option<u32> {
        let mut value = 0u32;
        for bit in 0..n {
            let d = *self.digits.get(self.digit)?;
            if d & self.mask != 0 {
                value |= 1 << bit;
            }
            self.mask >>= 1;
            if self.mask == 0 {
                self.mask = 1 << 5;
                self.digit += 1;
            }
        }
        Some(value)
    }
}

/// The decompressed length (UTF-16 units) of an lz-string stream, computed by replaying
/// the decoder with entry lengths instead of entries: O(codes) memory whatever the
/// output size. lz-str has no bounded decompression, hence this walk; it follows
/// `lz_str::decompress_internal` step for step.
fn lz_output_len(digits: &[u16], cap: usize) -> LzLen {
    if digits.is_empty() {
        return LzLen::Fits(0);
    }
    let mut bits = Bits {
        digits,
        digit: 0,
        mask: 1 << 5,
    };
    // Entry lengths; codes 0..3 are the control codes.
    let mut dict: Vec<usize> = vec![1, 1, 1];
    let Some(first) = bits.read(2) else {
        return LzLen::Invalid;
    };
    match first {
        0 | 1 => {
            if bits.read(8 + 8 * first).is_none() {
                return LzLen::Invalid;
            }
        }
        2 => return LzLen::Fits(0),
        _ => return LzLen::Invalid,
    }
    dict.push(1);
    let mut w = 1usize;
    let mut total = 1usize;
    let mut num_bits: u32 = 3;
    let mut enlarge_in: u64 = 4;
    loop {
        // A valid stream never needs codes this wide before its input runs out.
        if num_bits > 31 {
            return LzLen::Invalid;
        }
        let start = bits.position();
        let truncated = LzLen::Truncated {
            bits: start,
            code_bits: num_bits,
        };
        let Some(mut code) = bits.read(num_bits).map(|c| c as usize) else {
            // lz-str returns None here; `open` recovers the part before the cut.
            return truncated;
        };
        match code {
            0 | 1 => {
                if bits.read(8 + 8 * code as u32).is_none() {
                    return truncated;
                }
                dict.push(1);
                code = dict.len() - 1;
                enlarge_in = enlarge_in.saturating_sub(1);
            }
            2 => return LzLen::Fits(total),
            _ => {}
        }
        if enlarge_in == 0 {
            enlarge_in = 1 << num_bits;
            num_bits += 1;
        }
        let entry = if let Some(len) = dict.get(code) {
            *len
        } else if code == dict.len() {
            w + 1
        } else {
            return LzLen::Invalid;
        };
        total += entry;
        if total > cap {
            return LzLen::Exceeds;
        }
        dict.push(w + 1);
        enlarge_in = enlarge_in.saturating_sub(1);
        w = entry;
        if enlarge_in == 0 {
            enlarge_in = 1 << num_bits;
            num_bits += 1;
        }
    }
}

/// The digits of `digits` up to bit `bits`, then the end code in `code_bits` bits:
/// a cut-short stream made whole, so lz-str decompresses what came before the cut.
fn close_stream(digits: &[u16], bits: usize, code_bits: u32) -> Vec<u16> {
    let mut out = Vec::with_capacity(bits / 6 + 8);
    let mut push_bit = |n: usize, on: bool| {
        if n.is_multiple_of(6) {
            out.push(0);
        }
        if let (true, Some(last)) = (on, out.last_mut()) {
            *last |= 1 << (5 - n % 6);
        }
    };
    for n in 0..bits {
        let on = digits
            .get(n / 6)
            .is_some_and(|d| d & (1 << (5 - n % 6)) != 0);
        push_bit(n, on);
    }
    // The end code is 2: bit 1 set, least significant bit first.
    for i in 0..code_bits as usize {
        push_bit(bits + i, i == 1);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::options::{Preset, SyncStrategy};

    fn sample() -> ViewState {
        ViewState {
            source: "kernel k(x: f32[4], y: out f32[4]) {\n    store y[:] = load x[:];\n}\n// ünïcødé 😀"
                .into(),
            example: Some("elementwise".into()),
            options: CompileOptions {
                preset: Some("a3".into()),
                sync: SyncStrategy::Barrier,
                alias: crate::protocol::options::AliasMode::Coarse,
                auto_multi_buffer: false,
                kernel: None,
                disabled_passes: vec!["vector-peephole".into()],
                ..crate::protocol::options::playground()
            },
            pass: Some("insert-sync".into()),
            panel: Panel::Timeline,
            cursor: 1234,
            seed: 7,
            lesson: Some("08-multi-buffering".into()),
            compare: Some(CompileOptions {
                sync: SyncStrategy::None,
                ..crate::protocol::options::playground()
            }),
        }
    }

    #[test]
    fn round_trip_restores_the_exact_view() {
        let view = sample();
        let fragment = encode(&view);
        assert!(fragment.starts_with("v1="));
        assert!(fragment
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+-$=".contains(&b)));
        assert_eq!(decode(&format!("#{fragment}")), Ok(view));
    }

    #[test]
    fn length_walk_agrees_with_lz_str() {
        for text in [
            "",
            "a",
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "abcabcabcabd😀😀😀 tile",
            &"xyz".repeat(5000),
        ] {
            let compressed = lz_str::compress_to_encoded_uri_component(text);
            let digits = uri_digits(&compressed).expect("valid alphabet");
            let expected = text.encode_utf16().count();
            assert_eq!(
                lz_output_len(&digits, usize::MAX),
                LzLen::Fits(expected),
                "{text:?}"
            );
        }
    }

    #[test]
    fn oversized_output_is_rejected_before_decompressing() {
        // Just over 1 Mi of one char compresses to a few KiB but expands past the cap.
        let big = "a".repeat(MAX_DECOMPRESSED_UNITS + 1000);
        let fragment = format!(
            "v1={}",
            lz_str::compress_to_encoded_uri_component(big.as_str())
        );
        assert!(fragment.len() < MAX_FRAGMENT_BYTES);
        assert_eq!(decode(&fragment), Err(ShareError::TooLarge));
    }

    #[test]
    fn long_fragments_are_rejected_unread() {
        let fragment = format!("v1={}", "A".repeat(MAX_FRAGMENT_BYTES));
        assert!(matches!(decode(&fragment), Err(ShareError::TooLong { .. })));
    }

    #[test]
    fn bad_links_are_errors_not_panics() {
        assert_eq!(decode("#v2=abc"), Err(ShareError::Version("2".into())));
        assert_eq!(decode("#foo"), Err(ShareError::UnknownFormat));
        assert_eq!(decode("#v1=%%%"), Err(ShareError::Corrupt));
        let not_json = format!("v1={}", lz_str::compress_to_encoded_uri_component("hello"));
        assert!(matches!(decode(&not_json), Err(ShareError::BadJson(_))));
        // Every truncation of a valid link fails cleanly or decodes.
        let good = encode(&sample());
        for cut in 0..good.len() {
            let _ = decode(&good[..cut]);
        }
    }

    #[test]
    fn missing_optional_fields_take_defaults() {
        let json = r#"{"v":1,"source":"x"}"#;
        let fragment = format!("v1={}", lz_str::compress_to_encoded_uri_component(json));
        let view = decode(&fragment).expect("decodes");
        assert_eq!(view.source, "x");
        assert_eq!(view.panel, Panel::Passes);
        assert_eq!(view.options, crate::protocol::options::playground());
    }

    #[test]
    fn an_unknown_lesson_is_dropped_with_a_message_and_the_code_kept() {
        let opened = open(&link_with_json(
            r#"{"v":1,"source":"my code","lesson":"99-no-such"}"#,
        ));
        let view = opened.view.clone().expect("the code is kept");
        assert_eq!((view.source.as_str(), view.lesson), ("my code", None));
        assert_eq!(
            opened.problems,
            vec![ShareError::UnknownValue {
                field: "lesson",
                value: "99-no-such".into()
            }]
        );
        let opened = open(&link_with_json(
            r#"{"v":1,"source":"x","lesson":"01-load-store"}"#,
        ));
        assert!(opened.problems.is_empty());
        assert_eq!(
            opened.view.and_then(|v| v.lesson).as_deref(),
            Some("01-load-store")
        );
    }

    #[test]
    fn a_link_turns_off_only_optional_passes() {
        let opened = open(&link_with_json(
            r#"{"v":1,"source":"x","options":{"disabled_passes":["multi-buffer","emit","multi-buffer"]}}"#,
        ));
        let view = opened.view.expect("the view");
        assert_eq!(view.options.disabled_passes, ["multi-buffer"]);
        assert_eq!(
            opened.problems,
            vec![ShareError::UnknownValue {
                field: "pass",
                value: "emit".into()
            }]
        );
    }

    fn link_with_json(json: &str) -> String {
        format!("v1={}", lz_str::compress_to_encoded_uri_component(json))
    }

    /// Links keep the field names they were always written with, whatever core's
    /// option type calls them, and carry no machine.
    #[test]
    fn a_link_writes_the_page_s_option_names() {
        let fragment = encode(&sample());
        let payload = fragment.strip_prefix(FRAGMENT_PREFIX).expect("prefix");
        let units = lz_str::decompress_from_encoded_uri_component(payload).expect("lz");
        let json: serde_json::Value =
            serde_json::from_str(&String::from_utf16(&units).expect("utf-16")).expect("json");
        let mut keys: Vec<&str> = json["options"]
            .as_object()
            .expect("options")
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort();
        assert_eq!(
            keys,
            [
                "alias",
                "disabled_passes",
                "kernel",
                "multibuffer_auto",
                "preset",
                "sync"
            ]
        );
        assert_eq!(json["options"]["preset"], "a3");
        assert_eq!(json["compare"]["preset"], "teach");
    }

    #[test]
    fn invalid_encoding_opens_nothing_and_says_so() {
        for fragment in [
            "#v1=<script>window.__xss=1</script>",
            "#v1=%3Cimg%3E",
            "#v1=a b!",
        ] {
            let opened = open(fragment);
            assert_eq!(opened.view, None, "{fragment}");
            assert_eq!(opened.problems, vec![ShareError::Corrupt], "{fragment}");
            let message = opened.message().expect("a message");
            assert!(message.contains("default example"), "{message}");
        }
        assert_eq!(open("#hello").problems, vec![ShareError::UnknownFormat]);
        assert_eq!(open("").problems, vec![ShareError::UnknownFormat]);
    }

    #[test]
    fn a_cut_link_keeps_the_kernel_text_before_the_cut() {
        let view = ViewState {
            source: format!(
                "{}\n// ünïcødé 😀 \"quoted\" \\ back\\slash\n",
                "x".repeat(300)
            ),
            ..sample()
        };
        let good = encode(&view);
        let mut recovered_some = 0;
        for cut in FRAGMENT_PREFIX.len()..good.len() {
            let opened = open(&good[..cut]);
            assert!(!opened.problems.is_empty(), "cut at {cut} is reported");
            if let Some(v) = opened.view {
                assert!(
                    view.source.starts_with(&v.source),
                    "cut at {cut}: {:?} is not a prefix",
                    v.source
                );
                recovered_some += 1;
            }
        }
        // Only cuts inside `{"v":1,"source":"` lose everything.
        assert!(recovered_some > good.len() * 3 / 4, "{recovered_some}");
        let half = open(&good[..good.len() / 2]);
        assert!(half.problems.contains(&ShareError::Truncated));
        assert!(half.view.is_some_and(|v| v.source.len() > 100));
    }

    /// A stream that only ever refers to the entry being defined: each code adds one
    /// more character than the last, so `codes` codes expand to about codes²/2 units.
    fn bomb(codes: usize) -> String {
        let mut bits: Vec<bool> = Vec::new();
        let put = |value: usize, width: u32, bits: &mut Vec<bool>| {
            bits.extend((0..width).map(|i| value & (1 << i) != 0));
        };
        put(0, 2, &mut bits); // an 8-bit literal follows
        put(usize::from(b'a'), 8, &mut bits);
        let (mut dict_len, mut num_bits, mut enlarge_in) = (4usize, 3u32, 4u64);
        for _ in 0..codes {
            put(dict_len, num_bits, &mut bits);
            dict_len += 1;
            enlarge_in -= 1;
            if enlarge_in == 0 {
                enlarge_in = 1 << num_bits;
                num_bits += 1;
            }
        }
        put(2, num_bits, &mut bits);
        let digits = bits.chunks(6).map(|chunk| {
            let d = chunk
                .iter()
                .enumerate()
                .fold(0usize, |d, (i, on)| d | (usize::from(*on) << (5 - i)));
            char::from(URI_KEY[d])
        });
        format!("{FRAGMENT_PREFIX}{}", digits.collect::<String>())
    }

    #[test]
    fn a_decompression_bomb_is_stopped_before_it_expands() {
        // As many codes as fit the fragment cap: ~ 10^8 units if decompressed.
        let fragment = bomb(28_300);
        assert!(fragment.len() <= MAX_FRAGMENT_BYTES, "{}", fragment.len());
        assert!(
            fragment.len() > MAX_FRAGMENT_BYTES - 4096,
            "{}",
            fragment.len()
        );
        let digits = uri_digits(&fragment[FRAGMENT_PREFIX.len()..]).expect("alphabet");
        match lz_output_len(&digits, usize::MAX) {
            LzLen::Fits(n) => assert!(n > 200_000_000, "expands to {n}"),
            other => panic!("the bomb is a valid stream: {other:?}"),
        }
        let started = std::time::Instant::now();
        let opened = open(&fragment);
        let took = started.elapsed();
        assert_eq!(opened.problems, vec![ShareError::TooLarge]);
        assert_eq!(opened.view, None);
        // The walk stops after ~1,500 codes; decompressing would take seconds and GBs.
        assert!(took.as_millis() < 250, "took {took:?}");
    }

    #[test]
    fn a_huge_kernel_fits_a_link_and_decodes_whole() {
        let line = "// a long comment line to make the kernel big ........................\n";
        let source = format!(
            "{}{}",
            crate::catalog::default_example().source,
            line.repeat(1_000_000 / line.len())
        );
        assert!(source.len() >= 990_000);
        let view = ViewState { source, ..sample() };
        let fragment = encode(&view);
        assert!(fragment.len() < MAX_FRAGMENT_BYTES, "{}", fragment.len());
        assert_eq!(decode(&fragment), Ok(view));
    }

    #[test]
    fn a_malformed_kernel_is_opened_for_the_compiler_to_report() {
        let view = ViewState {
            source: "kernel <img src=x onerror=\"window.__xss=1\">(".into(),
            ..sample()
        };
        assert_eq!(decode(&encode(&view)), Ok(view));
    }

    #[test]
    fn unknown_option_values_fall_back_and_keep_the_kernel() {
        let fragment = link_with_json(
            r#"{"v":1,"source":"kernel k() {}","options":{"preset":"turbo","sync":"<img src=x>",
                "multibuffer_auto":false,"kernel":"k"},"panel":"nope","cursor":-4,"seed":3}"#,
        );
        let opened = open(&fragment);
        let view = opened.view.clone().expect("the kernel is kept");
        assert_eq!(view.source, "kernel k() {}");
        assert_eq!(Preset::of(&view.options), Some(Preset::Teach));
        assert_eq!(view.options.sync, SyncStrategy::Auto);
        assert!(!view.options.auto_multi_buffer);
        assert_eq!(view.options.kernel.as_deref(), Some("k"));
        assert_eq!((view.panel, view.cursor, view.seed), (Panel::Passes, 0, 3));
        assert_eq!(
            opened.problems,
            vec![
                ShareError::UnknownValue {
                    field: "panel",
                    value: "nope".into()
                },
                ShareError::UnknownValue {
                    field: "preset",
                    value: "turbo".into()
                },
                ShareError::UnknownValue {
                    field: "sync",
                    value: "<img src=x>".into()
                },
            ]
        );
        let message = opened.message().expect("a message");
        assert!(message.contains("unknown preset \"turbo\"") && message.contains("kept"));
        assert!(decode(&fragment).is_err(), "the strict reader refuses it");
    }

    #[test]
    fn quoted_values_are_shortened() {
        let long = ShareError::UnknownValue {
            field: "preset",
            value: "z".repeat(10_000),
        };
        assert!(long.to_string().len() < 100, "{long}");
    }

    #[test]
    fn other_versions_are_reported_and_their_kernel_recovered() {
        let payload = &encode(&sample())[FRAGMENT_PREFIX.len()..];
        for version in ["0", "9"] {
            let opened = open(&format!("#v{version}={payload}"));
            assert_eq!(opened.problems, vec![ShareError::Version(version.into())]);
            assert_eq!(opened.view.map(|v| v.source), Some(sample().source));
        }
        let unreadable = open("#v9=!!!");
        assert_eq!(
            unreadable.problems,
            vec![ShareError::Version("9".into()), ShareError::Corrupt]
        );
        assert_eq!(unreadable.view, None);
        // The version inside the payload counts too.
        let future = open(&link_with_json(r#"{"v":7,"source":"x"}"#));
        assert_eq!(future.problems, vec![ShareError::Version("7".into())]);
        assert_eq!(future.view.map(|v| v.source).as_deref(), Some("x"));
    }
}
