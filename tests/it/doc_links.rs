//! The project's documents hold together: every relative link and anchor in
//! README.md, CHANGELOG.md, ARCHITECTURE.md, CONTRIBUTING.md, BENCHMARKS.md,
//! RELIABILITY.md, docs/*.md and bench/notes/*.md resolves, no link leaves
//! the repository, every heading is unique within its file (so its anchor
//! names one place), the README stays short enough to read, and its
//! walk-through is what scripts/test.sh runs.
//!
//! Markdown is read with `pulldown-cmark`, so what counts as a link or a
//! heading is what a CommonMark renderer takes for one: links inside code
//! spans and code blocks are text, not links. Anchors are GitHub's: the
//! heading's text lowercased, punctuation dropped, spaces turned to `-`,
//! and a repeated anchor suffixed `-1`, `-2`...

use std::collections::{BTreeMap, HashMap};
use std::path::{Component, Path, PathBuf};

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// The documents checked, relative to the repository root; every
/// Markdown document of [`DOCUMENT_FOLDERS`] is added to them.
const TOP_LEVEL_DOCUMENTS: &[&str] = &[
    "README.md",
    "CHANGELOG.md",
    "ARCHITECTURE.md",
    "CONTRIBUTING.md",
    "BENCHMARKS.md",
    "RELIABILITY.md",
];

/// The folders whose every `*.md` is checked too: the user's guides, and
/// the benchmarks' history that BENCHMARKS.md links.
const DOCUMENT_FOLDERS: &[&str] = &["docs", "bench/notes"];

/// The most lines README.md may have: it is the user's first page, and the
/// rest lives in docs/.
const README_MAX_LINES: usize = 300;

/// What one Markdown document holds that links care about.
#[derive(Debug, Default)]
struct Outline {
    /// Each heading's text, in document order.
    headings: Vec<String>,
    /// Each link's destination as written, in document order.
    links: Vec<String>,
}

/// Reads a document's headings and link destinations (images included).
fn outline(markdown: &str) -> Outline {
    let mut outline = Outline::default();
    let mut heading: Option<String> = None;
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    for event in Parser::new_ext(markdown, options) {
        match event {
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::End(TagEnd::Heading(_)) => outline.headings.extend(heading.take()),
            Event::Text(text) | Event::Code(text) => {
                if let Some(heading) = heading.as_mut() {
                    heading.push_str(&text);
                }
            }
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                outline.links.push(dest_url.into_string());
            }
            _ => {}
        }
    }
    outline
}

/// GitHub's anchor for a heading's text, before duplicates are numbered:
/// lowercased, every character that is not a letter, a digit, `_`, `-` or
/// a space dropped, spaces turned into `-`.
fn slug(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// Every anchor a document's headings give, duplicates numbered as GitHub
/// numbers them (`a`, `a-1`, `a-2`).
fn anchors(headings: &[String]) -> Vec<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut anchors = Vec::new();
    for heading in headings {
        let base = slug(heading);
        let count = seen.entry(base.clone()).or_insert(0);
        anchors.push(if *count == 0 {
            base.clone()
        } else {
            format!("{base}-{count}")
        });
        *count += 1;
    }
    anchors
}

/// Whether a destination points outside the repository's files: a URL
/// with a scheme (`https:`, `mailto:`...).
fn is_external(destination: &str) -> bool {
    let scheme_end = destination.find(':');
    let path_start = destination.find(['/', '#', '?']);
    match (scheme_end, path_start) {
        (Some(colon), Some(slash)) => colon < slash,
        (Some(_), None) => true,
        (None, _) => false,
    }
}

/// `base/relative` with `.` and `..` worked out, or `None` when it climbs
/// above the repository root.
fn resolve(base: &Path, relative: &str) -> Option<PathBuf> {
    let mut parts: Vec<String> = base
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    for component in Path::new(relative).components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::Normal(part) => parts.push(part.to_string_lossy().into_owned()),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(parts.iter().collect())
}

/// Every broken link among `documents` (path relative to the repository
/// root, then text), one line each. A destination is checked against the
/// documents themselves first, then against `exists` (other files and
/// directories of the repository); an anchor only in a Markdown document.
fn broken_links(
    documents: &BTreeMap<PathBuf, String>,
    exists: impl Fn(&Path) -> bool,
) -> Vec<String> {
    let outlines: BTreeMap<&PathBuf, Outline> = documents
        .iter()
        .map(|(path, text)| (path, outline(text)))
        .collect();
    let anchors_of: BTreeMap<&PathBuf, Vec<String>> = outlines
        .iter()
        .map(|(path, outline)| (*path, anchors(&outline.headings)))
        .collect();
    let mut broken = Vec::new();
    for (path, outline) in &outlines {
        let directory = path.parent().unwrap_or(Path::new(""));
        for destination in &outline.links {
            if is_external(destination) {
                continue;
            }
            let (target, anchor) = match destination.split_once('#') {
                Some((target, anchor)) => (target, Some(anchor)),
                None => (destination.as_str(), None),
            };
            let target = target.split_once('?').map_or(target, |(path, _)| path);
            let resolved = if target.is_empty() {
                Some((*path).clone())
            } else {
                resolve(directory, target)
            };
            let Some(resolved) = resolved else {
                broken.push(format!(
                    "{}: ({destination}) leaves the repository",
                    path.display()
                ));
                continue;
            };
            let known = anchors_of.get(&resolved);
            if known.is_none() && !exists(&resolved) {
                broken.push(format!(
                    "{}: ({destination}): no file {}",
                    path.display(),
                    resolved.display()
                ));
                continue;
            }
            let Some(anchor) = anchor else { continue };
            match known {
                Some(anchors) if anchors.iter().any(|a| a == anchor) => {}
                Some(_) => broken.push(format!(
                    "{}: ({destination}): {} has no heading with the anchor #{anchor}",
                    path.display(),
                    resolved.display()
                )),
                None => broken.push(format!(
                    "{}: ({destination}): an anchor into {}, which is not a checked document",
                    path.display(),
                    resolved.display()
                )),
            }
        }
    }
    broken
}

/// Every heading that appears more than once in its document, one line
/// each (and every heading whose anchor another heading's text also
/// gives, which would make GitHub number one of them).
fn repeated_headings(documents: &BTreeMap<PathBuf, String>) -> Vec<String> {
    let mut repeated = Vec::new();
    for (path, text) in documents {
        let mut by_anchor: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for heading in outline(text).headings {
            by_anchor.entry(slug(&heading)).or_default().push(heading);
        }
        for (anchor, headings) in by_anchor {
            if headings.len() > 1 {
                repeated.push(format!(
                    "{}: {} headings give #{anchor}: {headings:?}",
                    path.display(),
                    headings.len()
                ));
            }
        }
    }
    repeated
}

/// The repository's root.
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The checked documents, read from the repository: path relative to the
/// root, then text.
fn documents() -> BTreeMap<PathBuf, String> {
    let mut paths: Vec<PathBuf> = TOP_LEVEL_DOCUMENTS.iter().map(PathBuf::from).collect();
    for folder in DOCUMENT_FOLDERS {
        let entries = std::fs::read_dir(root().join(folder))
            .unwrap_or_else(|e| panic!("{folder}/ is a readable directory: {e}"));
        for entry in entries {
            let name = entry
                .unwrap_or_else(|e| panic!("{folder}/ lists its entries: {e}"))
                .file_name();
            let name = name.to_string_lossy();
            if name.ends_with(".md") {
                paths.push(Path::new(folder).join(name.as_ref()));
            }
        }
    }
    paths
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(root().join(&path))
                .unwrap_or_else(|e| panic!("{} reads: {e}", path.display()));
            (path, text)
        })
        .collect()
}

#[test]
fn every_relative_link_and_anchor_in_the_documents_resolves() {
    let documents = documents();
    assert!(
        documents.len() > TOP_LEVEL_DOCUMENTS.len(),
        "docs/ holds no Markdown document"
    );
    for folder in DOCUMENT_FOLDERS {
        assert!(
            documents.keys().any(|path| path.starts_with(folder)),
            "{folder}/ holds no Markdown document"
        );
    }
    let broken = broken_links(&documents, |path| root().join(path).exists());
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_heading_is_unique_within_its_document() {
    let repeated = repeated_headings(&documents());
    assert!(
        repeated.is_empty(),
        "headings that repeat (their links would be ambiguous):\n{}",
        repeated.join("\n")
    );
}

#[test]
fn the_readme_stays_short() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md reads");
    let lines = readme.lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines, more than {README_MAX_LINES}: move detail into docs/"
    );
}

/// The first code block after the heading `heading` in `markdown`.
fn code_block_after(markdown: &str, heading: &str) -> Option<String> {
    let mut current_heading: Option<String> = None;
    let mut found = false;
    let mut block: Option<String> = None;
    for event in Parser::new(markdown) {
        match event {
            Event::Start(Tag::Heading { .. }) => current_heading = Some(String::new()),
            Event::End(TagEnd::Heading(_)) => {
                found = current_heading.take().as_deref() == Some(heading);
            }
            Event::Start(Tag::CodeBlock(_)) if found => block = Some(String::new()),
            Event::Text(text) => {
                if let Some(current) = current_heading.as_mut() {
                    current.push_str(&text);
                } else if let Some(block) = block.as_mut() {
                    block.push_str(&text);
                }
            }
            Event::End(TagEnd::CodeBlock) if block.is_some() => return block,
            _ => {}
        }
    }
    None
}

/// Each grpcurl call of a script: its `-d '...'` body (white space
/// collapsed) and the method named after the address that follows it.
fn grpcurl_calls(script: &str, address: &str) -> Vec<(String, String)> {
    let mut calls = Vec::new();
    for chunk in script.split("-d '").skip(1) {
        let Some((body, rest)) = chunk.split_once('\'') else {
            continue;
        };
        let Some((_, after_address)) = rest.split_once(address) else {
            continue;
        };
        let method = after_address.split_whitespace().next().unwrap_or("");
        let body = body.split_whitespace().collect::<Vec<_>>().join(" ");
        calls.push((body, method.to_owned()));
    }
    calls
}

/// The README's walk-through is what scripts/test.sh runs against a live
/// server: every call of it but the `Subscribe` (which never ends), with
/// the same body, so the walk-through a user copies is known to work.
#[test]
fn the_readme_walk_through_is_what_the_test_script_runs() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md reads");
    let script =
        std::fs::read_to_string(root().join("scripts/test.sh")).expect("scripts/test.sh reads");
    let walk_through = code_block_after(&readme, "A five-minute walk-through")
        .expect("README.md has a code block under \"A five-minute walk-through\"");
    let shown = grpcurl_calls(&walk_through, "127.0.0.1:50051 ");
    let tested = grpcurl_calls(&script, "\"127.0.0.1:$port\" ");
    assert!(
        shown.len() >= 6,
        "the walk-through shows {} calls",
        shown.len()
    );
    let untested: Vec<_> = shown
        .iter()
        .filter(|(_, method)| method != "recap.v1.InjectionService/Subscribe")
        .filter(|call| !tested.contains(call))
        .collect();
    assert!(
        untested.is_empty(),
        "README walk-through calls scripts/test.sh does not run as shown: {untested:?}"
    );
}

#[test]
fn anchors_are_computed_as_github_computes_them() {
    assert_eq!(slug("Run it"), "run-it");
    assert_eq!(
        slug("Durable writes against Redis (issue 17)"),
        "durable-writes-against-redis-issue-17"
    );
    assert_eq!(
        slug("Differences from ST-Auto-Recap"),
        "differences-from-st-auto-recap"
    );
    assert_eq!(slug("The injection's text"), "the-injections-text");
    assert_eq!(
        slug("After UNAVAILABLE: what to retry"),
        "after-unavailable-what-to-retry"
    );
    assert_eq!(slug("message_recaps_enabled"), "message_recaps_enabled");
    assert_eq!(
        slug("Where the 137k instructions go, and why"),
        "where-the-137k-instructions-go-and-why"
    );
    let headings = ["Setup", "Setup", "Other", "Setup"].map(String::from);
    assert_eq!(anchors(&headings), ["setup", "setup-1", "other", "setup-2"]);
    // A heading's code span counts as text.
    assert_eq!(
        outline("## The `Subscribe` stream\n").headings,
        ["The Subscribe stream"]
    );
}

#[test]
fn the_checker_finds_broken_links_and_ignores_code_and_urls() {
    let documents: BTreeMap<PathBuf, String> = [
        (
            "README.md",
            "# Top\n\n## Run it\n\n[ok](#run-it) [ok](docs/a.md#part-two) [ok](docs/a.md) \
             [ok](src/lib.rs) [web](https://example.com/#nothing) [mail](mailto:a@b.c)\n\n\
             [bad anchor](#no-such) [bad file](docs/missing.md) [bad part](docs/a.md#nope)\n\n\
             `[code](#not-a-link)`\n\n```\n[block](#not-a-link-either)\n```\n",
        ),
        (
            "docs/a.md",
            "# A\n\n## Part two\n\n[up](../README.md#top) [out](../../shared/x.md) \
             [source](../src/lib.rs#L3)\n",
        ),
    ]
    .into_iter()
    .map(|(path, text)| (PathBuf::from(path), text.to_owned()))
    .collect();
    let broken = broken_links(&documents, |path| path == Path::new("src/lib.rs"));
    let expected = [
        "README.md: (#no-such): README.md has no heading with the anchor #no-such",
        "README.md: (docs/missing.md): no file docs/missing.md",
        "README.md: (docs/a.md#nope): docs/a.md has no heading with the anchor #nope",
        "docs/a.md: (../../shared/x.md) leaves the repository",
        "docs/a.md: (../src/lib.rs#L3): an anchor into src/lib.rs, which is not a checked document",
    ];
    assert_eq!(broken, expected);

    let repeated: BTreeMap<PathBuf, String> = [(
        PathBuf::from("x.md"),
        "# X\n\n## Errors\n\n### Errors\n".to_owned(),
    )]
    .into();
    assert_eq!(
        repeated_headings(&repeated),
        ["x.md: 2 headings give #errors: [\"Errors\", \"Errors\"]"]
    );
}

/// The fenced code blocks of `markdown` in the language `language`, in
/// document order.
fn code_blocks(markdown: &str, language: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for event in Parser::new(markdown) {
        match event {
            Event::Start(Tag::CodeBlock(pulldown_cmark::CodeBlockKind::Fenced(info)))
                if info.as_ref() == language =>
            {
                current = Some(String::new());
            }
            Event::Text(text) => {
                if let Some(block) = current.as_mut() {
                    block.push_str(&text);
                }
            }
            Event::End(TagEnd::CodeBlock) => blocks.extend(current.take()),
            _ => {}
        }
    }
    blocks
}

#[test]
fn the_docs_show_the_first_injection_each_package_tests() {
    let read = |path: &str| {
        std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
    };
    for (shown_in, readme, language) in [
        ("docs/clients.md", "clients/python/README.md", "python"),
        ("docs/clients.md", "clients/typescript/README.md", "js"),
        ("README.md", "clients/python/README.md", "python"),
    ] {
        let tested = code_blocks(&read(readme), language);
        let shown = code_blocks(&read(shown_in), language);
        assert_eq!(
            shown.first(),
            tested.first(),
            "{shown_in}'s first {language} block must be {readme}'s (its tests run that one)"
        );
        let lines = shown.first().map_or(0, |block| block.lines().count());
        assert!(
            lines <= 10,
            "{language}: a first injection in {lines} lines"
        );
    }
}
