//! A step of the post-build hook (`post_build.rs`): it renders the language reference,
//! `docs/language.md`, as `language.html` beside the page (and the publishing guide as
//! `publishing.html`), so the help overlay opens it as a page a student can read, with
//! working section links.
//!
//! Headings get the ids GitHub gives them (lower case, punctuation dropped, spaces as
//! `-`), which the reference's own links (`[indexing](#indexing)`) already use; a link
//! to an id the page does not have fails the build.

use std::collections::BTreeSet;
use std::path::Path;

use pulldown_cmark::{html, CowStr, Event, HeadingLevel, Options, Parser, Tag, TagEnd};

use crate::Result;

/// The documents the site serves, relative to the workspace root, and their names in
/// the built site (the help overlay and the Share dialog link to them).
const PAGES: [(&str, &str); 2] = [
    ("docs/language.md", "language.html"),
    ("docs/publishing.md", "publishing.html"),
];

/// Writes each of `PAGES` into `dir` (Trunk's staging directory).
pub fn write(root: &Path, dir: &Path) -> Result<()> {
    for (source, target) in PAGES {
        let markdown = std::fs::read_to_string(root.join(source))
            .map_err(|e| format!("reading {source}: {e}"))?;
        let page = render(&markdown).map_err(|e| format!("{source} {e}"))?;
        let out = dir.join(target);
        std::fs::write(&out, page).map_err(|e| format!("writing {}: {e}", out.display()))?;
    }
    Ok(())
}

/// GitHub's heading id: lower case, letters, digits, `-` and `_` kept, spaces as `-`,
/// the rest dropped.
fn slug(text: &str) -> String {
    text.chars()
        .flat_map(char::to_lowercase)
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The reference as a standalone HTML page.
fn render(markdown: &str) -> Result<String> {
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    let events: Vec<Event> = Parser::new_ext(markdown, options).collect();
    // Each heading's id from its text; a repeated title gets `-1`, `-2`, as on GitHub.
    let mut ids = Vec::new();
    let mut seen = BTreeSet::new();
    let mut title: Option<String> = None;
    let mut text: Option<String> = None;
    for e in &events {
        match e {
            Event::Start(Tag::Heading { .. }) => text = Some(String::new()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(s) = text.as_mut() {
                    s.push_str(t);
                }
            }
            Event::End(TagEnd::Heading(level)) => {
                let heading = text.take().unwrap_or_default();
                if *level == HeadingLevel::H1 && title.is_none() {
                    title = Some(heading.clone());
                }
                let base = slug(&heading);
                let mut id = base.clone();
                let mut n = 0;
                while !seen.insert(id.clone()) {
                    n += 1;
                    id = format!("{base}-{n}");
                }
                ids.push(id);
            }
            _ => {}
        }
    }
    let broken: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::Start(Tag::Link { dest_url, .. }) => {
                dest_url.strip_prefix('#').map(str::to_string)
            }
            _ => None,
        })
        .filter(|target| !seen.contains(target))
        .collect();
    if !broken.is_empty() {
        return Err(format!(
            "links to sections it does not have: #{}",
            broken.join(", #")
        ));
    }
    let mut ids = ids.into_iter();
    let events = events.into_iter().map(|e| match e {
        Event::Start(Tag::Heading {
            level,
            id: None,
            classes,
            attrs,
        }) => Event::Start(Tag::Heading {
            level,
            id: ids.next().map(CowStr::from),
            classes,
            attrs,
        }),
        other => other,
    });
    let mut body = String::new();
    html::push_html(&mut body, events);
    let title = title.unwrap_or_else(|| "Tilescope".into());
    Ok(format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title} · Tilescope</title>\n\
         <link rel=\"icon\" href=\"data:,\">\n<style>{STYLE}</style>\n</head>\n\
         <body>\n<main class=\"doc\">\n{body}</main>\n</body>\n</html>\n",
        title = html_escape(&title)
    ))
}

fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A readable page in the playground's colours, light or dark with the system.
const STYLE: &str = "
:root { color-scheme: light dark; --text: #1d2127; --muted: #5f6873; --bg: #fff; --code: #f3f5f7; --border: #dde1e6; --accent: #2563eb; }
@media (prefers-color-scheme: dark) { :root { --text: #e3e6ea; --muted: #9aa3ad; --bg: #15181c; --code: #1f242a; --border: #2c333b; --accent: #7aa7ff; } }
body { margin: 0; background: var(--bg); color: var(--text); font: 15px/1.6 system-ui, sans-serif; }
.doc { max-width: 860px; margin: 0 auto; padding: 24px 20px 80px; }
a { color: var(--accent); }
h1, h2, h3 { line-height: 1.25; margin-top: 1.6em; }
h2 { border-bottom: 1px solid var(--border); padding-bottom: 4px; }
code, pre { font: 13px/1.5 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: var(--code); }
code { padding: 1px 4px; border-radius: 4px; }
pre { padding: 10px 12px; border-radius: 6px; overflow: auto; }
pre code { padding: 0; background: none; }
table { border-collapse: collapse; margin: 12px 0; }
th, td { border: 1px solid var(--border); padding: 4px 8px; text-align: left; vertical-align: top; }
";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_get_githubs_ids_and_every_section_link_resolves() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let markdown = std::fs::read_to_string(root.join(PAGES[0].0)).expect("the reference");
        let page = render(&markdown).expect("renders, every #link resolving");
        assert!(page.contains("<h2 id=\"indexing\">"), "GitHub's ids");
        assert!(page.contains("href=\"#indexing\""));
        assert!(page.contains("<title>"));
        // No request for the host's /favicon.ico, outside a site served under a path.
        assert!(page.contains("<link rel=\"icon\" href=\"data:,\">"));
        assert_eq!(
            slug("Explicit multi-buffers: `buffers`"),
            "explicit-multi-buffers-buffers"
        );
        assert_eq!(
            slug("Masks: comparisons, `where` and `iota`"),
            "masks-comparisons-where-and-iota"
        );
    }

    #[test]
    fn a_link_to_a_missing_section_fails_the_build() {
        let err = render("# T\n\n## Here\n\nSee [there](#there).\n").expect_err("broken link");
        assert!(err.contains("#there"), "{err}");
    }
}
