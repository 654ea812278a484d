//! Share links and the saved session: the whole view state as JSON, compressed with
//! lz-string's URI-safe alphabet into the URL fragment `#v1=...`.
//!
//! Decoding is bounded: fragments over `MAX_FRAGMENT_BYTES` are rejected before any
//! work, and `lz_output_len` measures the decompressed length by walking the code
//! stream with lengths only, so a crafted fragment (LZ output grows quadratically in
//! the number of codes) is rejected before lz-str materialises it.

use serde::{Deserialize, Serialize};

use crate::options::CompileOptions;

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
}

impl Panel {
    pub const ALL: [Panel; 6] = [
        Panel::Passes,
        Panel::Steps,
        Panel::Timeline,
        Panel::Assembly,
        Panel::Output,
        Panel::Problems,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Panel::Passes => "Passes",
            Panel::Steps => "Steps",
            Panel::Timeline => "Timeline",
            Panel::Assembly => "Assembly",
            Panel::Output => "Output",
            Panel::Problems => "Problems",
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
    #[serde(default)]
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
    /// Not a `#v1=` fragment (an unknown version, or something else entirely).
    UnknownFormat,
    TooLong {
        bytes: usize,
    },
    TooLarge,
    Corrupt,
    BadJson(String),
}

impl std::fmt::Display for ShareError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ShareError::UnknownFormat => write!(f, "the link is not a Tilescope v1 link"),
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
            ShareError::BadJson(e) => write!(f, "the link's contents are not a valid view: {e}"),
        }
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

/// The view in a fragment (with or without the leading `#`).
pub fn decode(fragment: &str) -> Result<ViewState, ShareError> {
    let fragment = fragment.strip_prefix('#').unwrap_or(fragment);
    if fragment.len() > MAX_FRAGMENT_BYTES {
        return Err(ShareError::TooLong {
            bytes: fragment.len(),
        });
    }
    let payload = fragment
        .strip_prefix(FRAGMENT_PREFIX)
        .ok_or(ShareError::UnknownFormat)?;
    let digits = uri_digits(payload).ok_or(ShareError::Corrupt)?;
    match lz_output_len(&digits, MAX_DECOMPRESSED_UNITS) {
        LzLen::Fits(_) => {}
        LzLen::Exceeds => return Err(ShareError::TooLarge),
        LzLen::Invalid => return Err(ShareError::Corrupt),
    }
    let units = lz_str::decompress_internal(digits.into_iter(), 6).ok_or(ShareError::Corrupt)?;
    let json = String::from_utf16(&units).map_err(|_| ShareError::Corrupt)?;
    let envelope: Envelope =
        serde_json::from_str(&json).map_err(|e| ShareError::BadJson(e.to_string()))?;
    if envelope.v != 1 {
        return Err(ShareError::UnknownFormat);
    }
    Ok(envelope.view)
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
}

/// Bit reader over 6-bit digits, least significant bit of each code first, as
/// lz-string writes them.
struct Bits<'a> {
    digits: &'a [u16],
    digit: usize,
    mask: u16,
}

impl Bits<'_> {
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
        let Some(mut code) = bits.read(num_bits).map(|c| c as usize) else {
            // lz-str returns None here too.
            return LzLen::Invalid;
        };
        match code {
            0 | 1 => {
                if bits.read(8 + 8 * code as u32).is_none() {
                    return LzLen::Invalid;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::{Preset, SyncMode};

    fn sample() -> ViewState {
        ViewState {
            source: "kernel k(x: f32[4], y: out f32[4]) {\n    store y[:] = load x[:];\n}\n// ünïcødé 😀"
                .into(),
            example: Some("elementwise".into()),
            options: CompileOptions {
                preset: Preset::A3,
                sync: SyncMode::Barrier,
                multibuffer_auto: false,
                kernel: None,
            },
            pass: Some("insert-sync".into()),
            panel: Panel::Timeline,
            cursor: 1234,
            seed: 7,
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
        assert_eq!(decode("#v2=abc"), Err(ShareError::UnknownFormat));
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
        assert_eq!(view.options, CompileOptions::default());
    }
}
