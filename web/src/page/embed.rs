//! The embedded view: the page under `?embed=PANEL` shows the kernel's editor and one
//! panel, for an `<iframe>` on a course page (docs/embedding.md). Pure data, tested
//! natively: the options an embed URL carries, read defensively (a hostile or mistyped
//! URL falls back to the defaults with a message, as a bad share link does), and the
//! snippet the Share dialog offers.

use crate::page::share::Panel;

/// The panels an embed can show: the ones that explain a kernel by themselves.
pub const PANELS: [Panel; 5] = [
    Panel::Timeline,
    Panel::Passes,
    Panel::Steps,
    Panel::Assembly,
    Panel::Output,
];

/// A query longer than this is not read at all.
const MAX_QUERY_BYTES: usize = 1024;
/// The frame heights the Share dialog offers, in CSS pixels.
pub const MIN_HEIGHT: u32 = 240;
pub const MAX_HEIGHT: u32 = 2000;
pub const DEFAULT_HEIGHT: u32 = 520;

/// A colour theme an embed may ask for, to match its course page.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EmbedTheme {
    /// The reader's system theme.
    #[default]
    System,
    Light,
    Dark,
}

impl EmbedTheme {
    pub const ALL: [EmbedTheme; 3] = [EmbedTheme::System, EmbedTheme::Light, EmbedTheme::Dark];

    /// The theme called `name` (what `name` gives back).
    pub fn from_name(name: &str) -> Option<EmbedTheme> {
        EmbedTheme::ALL.into_iter().find(|t| t.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            EmbedTheme::System => "system",
            EmbedTheme::Light => "light",
            EmbedTheme::Dark => "dark",
        }
    }
}

/// What an embed URL asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmbedOptions {
    /// The one panel beside the editor.
    pub panel: Panel,
    /// Editing is off; the kernel still compiles and runs.
    pub read_only: bool,
    pub theme: EmbedTheme,
}

impl Default for EmbedOptions {
    fn default() -> Self {
        EmbedOptions {
            panel: Panel::Timeline,
            read_only: false,
            theme: EmbedTheme::System,
        }
    }
}

/// The options a page URL's query (`location.search`, with or without its `?`) asks
/// for: `None` when it asks for no embed, else the options and a message for each part
/// that was ignored.
pub fn parse(query: &str) -> Option<(EmbedOptions, Vec<String>)> {
    let query = query.strip_prefix('?').unwrap_or(query);
    let mut pairs = query.split('&').filter(|p| !p.is_empty()).map(|pair| {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        (decode(key), decode(value))
    });
    if !pairs.clone().any(|(key, _)| key == "embed") {
        return None;
    }
    let mut options = EmbedOptions::default();
    let mut notes = Vec::new();
    if query.len() > MAX_QUERY_BYTES {
        notes.push(format!(
            "The embed options are {} bytes long, more than {MAX_QUERY_BYTES}: the defaults are used.",
            query.len()
        ));
        return Some((options, notes));
    }
    for (key, value) in pairs.by_ref() {
        match key.as_str() {
            "embed" if value.is_empty() => {}
            "embed" => match PANELS.iter().find(|p| p.name() == value) {
                Some(panel) => options.panel = *panel,
                None => notes.push(format!(
                    "`embed={}` is not a panel an embed shows ({}): showing the timeline.",
                    shown(&value),
                    PANELS.map(Panel::name).join(", ")
                )),
            },
            "readonly" => match value.as_str() {
                "" | "1" | "true" => options.read_only = true,
                "0" | "false" => options.read_only = false,
                _ => notes.push(format!(
                    "`readonly={}` is not 1 or 0: the kernel stays editable.",
                    shown(&value)
                )),
            },
            "theme" => match EmbedTheme::from_name(&value) {
                Some(theme) => options.theme = theme,
                None => notes.push(format!(
                    "`theme={}` is not light, dark or system: the reader's theme is used.",
                    shown(&value)
                )),
            },
            // A host may add its own parameters (a cache buster, a course id).
            _ => notes.push(format!(
                "The embed option `{}` is unknown and was ignored.",
                shown(&key)
            )),
        }
    }
    Some((options, notes))
}

/// The query for `options` (what `parse` reads back), starting with `?`.
pub fn query(options: &EmbedOptions) -> String {
    let mut query = format!("?embed={}", options.panel.name());
    if options.read_only {
        query.push_str("&readonly=1");
    }
    if options.theme != EmbedTheme::System {
        query.push_str("&theme=");
        query.push_str(options.theme.name());
    }
    query
}

/// The `<iframe>` for a course page: `page` is the site's page URL without query or
/// fragment, `fragment` the share link's (`v1=...`), `title` what the frame is called
/// for a screen reader.
pub fn snippet(
    page: &str,
    fragment: &str,
    options: &EmbedOptions,
    height: u32,
    title: &str,
) -> String {
    let src = format!("{page}{}#{fragment}", query(options));
    let height = height.clamp(MIN_HEIGHT, MAX_HEIGHT);
    format!(
        "<iframe src=\"{}\" title=\"{}\" width=\"100%\" height=\"{height}\" \
         style=\"border: 1px solid #ccc; border-radius: 6px\" loading=\"lazy\"></iframe>",
        attribute(&src),
        attribute(&format!("Tilescope: {title}"))
    )
}

/// `text` as an HTML attribute value inside double quotes.
fn attribute(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A URL query component, percent-decoded (`+` as a space); malformed escapes are kept
/// as they are.
fn decode(part: &str) -> String {
    let bytes = part.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                match std::str::from_utf8(&bytes[i + 1..i + 3])
                    .ok()
                    .and_then(|hex| u8::from_str_radix(hex, 16).ok())
                {
                    Some(byte) => {
                        out.push(byte);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            byte => out.push(byte),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A value from the URL as a message quotes it: at most 40 characters.
fn shown(value: &str) -> String {
    const MAX: usize = 40;
    if value.chars().count() <= MAX {
        value.to_string()
    } else {
        format!("{}…", value.chars().take(MAX).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_without_embed_is_not_an_embed() {
        assert_eq!(parse(""), None);
        assert_eq!(parse("?again=1"), None);
        assert_eq!(parse("?embedded=1"), None);
    }

    #[test]
    fn the_defaults_are_the_timeline_editable() {
        assert_eq!(parse("?embed"), Some((EmbedOptions::default(), vec![])));
        assert_eq!(parse("embed="), Some((EmbedOptions::default(), vec![])));
    }

    #[test]
    fn every_option_round_trips_through_the_query() {
        for panel in PANELS {
            for read_only in [false, true] {
                for theme in EmbedTheme::ALL {
                    let options = EmbedOptions {
                        panel,
                        read_only,
                        theme,
                    };
                    assert_eq!(parse(&query(&options)), Some((options, vec![])));
                }
            }
        }
    }

    #[test]
    fn hostile_options_fall_back_with_a_message() {
        let (options, notes) = parse("?embed=problems&readonly=yes&theme=%3Cb%3E&x=1").unwrap();
        assert_eq!(options, EmbedOptions::default());
        assert_eq!(notes.len(), 4, "{notes:?}");
        assert!(notes[0].contains("`embed=problems` is not a panel"));
        assert!(notes[1].contains("`readonly=yes`"));
        // Decoded, and shown as text by the page (Yew escapes it).
        assert!(notes[2].contains("`theme=<b>`"));
        assert!(notes[3].contains("`x` is unknown"));
        let long = format!("?embed=steps&pad={}", "a".repeat(2000));
        let (options, notes) = parse(&long).unwrap();
        assert_eq!(options.panel, Panel::Timeline);
        assert!(notes[0].contains("more than 1024"));
        let (_, notes) = parse(&format!("?embed={}", "z".repeat(100))).unwrap();
        assert!(notes[0].contains(&format!("`embed={}…`", "z".repeat(40))));
    }

    #[test]
    fn malformed_escapes_stay_as_they_are() {
        assert_eq!(decode("a%2"), "a%2");
        assert_eq!(decode("%zz"), "%zz");
        assert_eq!(decode("%41+b"), "A b");
        assert_eq!(decode("%"), "%");
        assert_eq!(decode("%ff"), "\u{fffd}");
    }

    #[test]
    fn the_snippet_quotes_what_it_holds() {
        let options = EmbedOptions {
            panel: Panel::Steps,
            read_only: true,
            theme: EmbedTheme::Dark,
        };
        let s = snippet("https://x.org/c/", "v1=ab", &options, 99_999, "a \"b\" <c>");
        assert_eq!(
            s,
            "<iframe src=\"https://x.org/c/?embed=steps&amp;readonly=1&amp;theme=dark#v1=ab\" \
             title=\"Tilescope: a &quot;b&quot; &lt;c&gt;\" width=\"100%\" height=\"2000\" \
             style=\"border: 1px solid #ccc; border-radius: 6px\" loading=\"lazy\"></iframe>"
        );
    }
}
