//! The layering of `server/src`, checked from the source (as
//! rust-analyzer's tidy tests check theirs): every `crate::` path in every
//! file (`use crate::x`, `use crate::{a, b::c}` groups, inline
//! `crate::x::y` paths; `tandem::x` in the binary's files) is an import of
//! a top-level module, and imports only go down the layers below, never up,
//! and never round in a circle between modules of one layer.
//!
//! A new top-level module must be given its layer here (and in the diagram
//! in `server/src/lib.rs`).
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, top first. A module may import modules of lower layers, and
/// of its own layer as long as that makes no circle.
const LAYERS: &[(&str, &[&str])] = &[
    ("front ends", &["main", "cli", "lsp", "acp"]),
    ("host", &["host", "settings"]),
    ("agent", &["agent", "completion"]),
    ("what the contract asks", &["permissions", "hooks", "mcp", "thread", "sandbox", "checkpoint", "language_servers"]),
    ("the tool contract", &["tools"]),
    ("workspace", &["workspace"]),
    ("leaves", &["model", "environment", "consent", "scope"]),
];

/// One import of a top-level module.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Import {
    module: String,
    line: usize,
    text: String,
}

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, modules)| modules.contains(&module))
}

/// Blank out comments and string literals (keeping line breaks), so doc
/// links and strings are not taken for imports.
fn code_only(source: &str) -> String {
    let bytes = source.as_bytes();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    let blank = |out: &mut String, text: &str| {
        for c in text.chars() {
            out.push(if c == '\n' { '\n' } else { ' ' });
        }
    };
    while i < bytes.len() {
        let rest = &source[i..];
        if rest.starts_with("//") {
            let end = rest.find('\n').unwrap_or(rest.len());
            blank(&mut out, &rest[..end]);
            i += end;
        } else if rest.starts_with("/*") {
            let end = rest.find("*/").map_or(rest.len(), |e| e + 2);
            blank(&mut out, &rest[..end]);
            i += end;
        } else if let Some(hashes) = raw_string_start(rest) {
            let close = format!("\"{}", "#".repeat(hashes));
            let open_len = 2 + hashes;
            let end = rest[open_len..].find(&close).map_or(rest.len(), |e| open_len + e + close.len());
            blank(&mut out, &rest[..end]);
            i += end;
        } else if rest.starts_with('"') {
            let mut end = 1;
            let body = rest.as_bytes();
            while end < body.len() && body[end] != b'"' {
                end += if body[end] == b'\\' { 2 } else { 1 };
            }
            let end = (end + 1).min(rest.len());
            blank(&mut out, &rest[..end]);
            i += end;
        } else if rest.starts_with('\'') && rest.len() > 2 && (rest.as_bytes()[2] == b'\'' || rest.as_bytes()[1] == b'\\') {
            // A char literal ('"', '\n'); lifetimes ('a) are left alone.
            let end = rest[1..].find('\'').map_or(1, |e| e + 2);
            blank(&mut out, &rest[..end]);
            i += end;
        } else {
            let c = rest.chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// `r"`, `r#"`, `br##"` …: the number of `#`s of a raw string starting here.
fn raw_string_start(rest: &str) -> Option<usize> {
    let rest = rest.strip_prefix('b').unwrap_or(rest);
    let rest = rest.strip_prefix('r')?;
    let hashes = rest.bytes().take_while(|b| *b == b'#').count();
    rest[hashes..].starts_with('"').then_some(hashes)
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The top-level modules a file's code names through `prefix` (`crate` or
/// `tandem`): `prefix::x`, and each element of `prefix::{a, b::c}`.
fn imports(source: &str, prefix: &str) -> Vec<Import> {
    let code = code_only(source);
    let bytes = code.as_bytes();
    let needle = format!("{prefix}::");
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find(&needle) {
        let start = from + at;
        from = start + needle.len();
        if start > 0 && (is_ident(bytes[start - 1]) || bytes[start - 1] == b':' || bytes[start - 1] == b'$') {
            continue; // `$crate::`, `other_crate::`, `a::crate::`
        }
        let line = code[..start].matches('\n').count() + 1;
        let text = source.lines().nth(line - 1).unwrap_or("").trim().to_string();
        let after = &code[from..];
        let names: Vec<String> = if let Some(group) = after.strip_prefix('{') {
            top_level_items(group)
        } else {
            vec![after.bytes().take_while(|b| is_ident(*b)).map(char::from).collect()]
        };
        for module in names.into_iter().filter(|m| !m.is_empty() && m != "self") {
            found.push(Import { module, line, text: text.clone() });
        }
    }
    found
}

/// The first name of each comma-separated item of a `{…}` group (up to its
/// closing brace): `a, b::{c, d}, e as f` → a, b, e.
fn top_level_items(group: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut depth = 0usize;
    let mut current = String::new();
    for c in group.chars() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        if depth == 0 {
            current.push(c);
        }
    }
    items.push(current);
    items.iter().map(|item| item.trim().bytes().take_while(|b| is_ident(*b)).map(char::from).collect()).collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file belongs to (`None` for `lib.rs`, which only
/// declares them).
fn module_of(relative: &Path) -> Option<String> {
    let first = relative.components().next()?.as_os_str().to_str()?.to_string();
    let module = first.strip_suffix(".rs").unwrap_or(&first).to_string();
    (module != "lib").then_some(module)
}

/// The binary's files: `crate::` there is the binary, `tandem::` the library.
fn in_binary(module: &str) -> bool {
    module == "main" || module == "cli"
}

/// Every import edge between top-level modules, with where it is.
fn edges(src: &Path) -> BTreeMap<(String, String), Vec<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    assert!(files.len() > 50, "found only {} files under {}", files.len(), src.display());
    let mut edges: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for file in files {
        let relative = file.strip_prefix(src).unwrap().to_path_buf();
        let Some(module) = module_of(&relative) else { continue };
        let source = std::fs::read_to_string(&file).unwrap();
        let mut found = imports(&source, "crate");
        if in_binary(&module) {
            found.extend(imports(&source, "tandem"));
        }
        for import in found {
            if import.module == module {
                continue;
            }
            let place = format!("server/src/{}:{}: {}", relative.display(), import.line, import.text);
            edges.entry((module.clone(), import.module)).or_default().push(place);
        }
    }
    edges
}

/// A circle through `start` in `graph`, if there is one.
fn circle(graph: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    fn walk(graph: &BTreeMap<String, BTreeSet<String>>, start: &str, path: &mut Vec<String>, seen: &mut BTreeSet<String>) -> bool {
        let here = path.last().cloned().unwrap_or_default();
        for next in graph.get(&here).into_iter().flatten() {
            if next == start {
                path.push(next.clone());
                return true;
            }
            if seen.insert(next.clone()) {
                path.push(next.clone());
                if walk(graph, start, path, seen) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    let mut path = vec![start.to_string()];
    walk(graph, start, &mut path, &mut BTreeSet::new()).then_some(path)
}

/// What is wrong with these edges: imports that run up, unknown modules,
/// circles.
fn problems(edges: &BTreeMap<(String, String), Vec<String>>) -> Vec<String> {
    let mut problems = Vec::new();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for ((from, to), places) in edges {
        match (layer_of(from), layer_of(to)) {
            (None, _) => problems.push(format!("`{from}` has no layer in tests/layers.rs (LAYERS): give it one ({})", places[0])),
            (_, None) => problems.push(format!("`{to}` has no layer in tests/layers.rs (LAYERS): give it one ({})", places[0])),
            (Some(a), Some(b)) if b < a => {
                for place in places {
                    problems.push(format!(
                        "{place}\n    `{from}` ({}) imports `{to}` ({}), a layer above it: invert it (a trait in `{from}` that `{to}` implements) or move the type down",
                        LAYERS[a].0, LAYERS[b].0
                    ));
                }
            }
            _ => {}
        }
        graph.entry(from.clone()).or_default().insert(to.clone());
    }
    let mut reported = BTreeSet::new();
    for module in graph.keys() {
        if let Some(path) = circle(&graph, module) {
            let members: BTreeSet<String> = path.iter().cloned().collect();
            if reported.insert(members) {
                let hops: Vec<String> = path.windows(2).map(|w| format!("{} → {}: {}", w[0], w[1], edges[&(w[0].clone(), w[1].clone())][0])).collect();
                problems.push(format!("a circle: {}\n    {}", path.join(" → "), hops.join("\n    ")));
            }
        }
    }
    problems
}

#[test]
fn imports_only_go_down_the_layers_and_make_no_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("server/src");
    let problems = problems(&edges(&src));
    assert!(problems.is_empty(), "the layers of server/src (see server/src/lib.rs):\n{}", problems.join("\n"));
}

#[test]
fn every_form_of_path_is_read_and_comments_and_strings_are_not() {
    let source = r##"
//! See [`crate::agent`] (a doc link, not an import).
use crate::{model::Message, tools::{Tool, ToolKind}, self};
use crate::workspace::Workspace;
fn f() {
    let _ = crate::hooks::current(x);
    let s = "crate::settings::Settings";
    let r = r#"crate::lsp"#;
    let c = '"'; let _ = crate::scope::Scope::User; // crate::cli
    /* crate::host */
    let _ = $crate::nope; let _ = othercrate::nope;
}
"##;
    let found: Vec<(String, usize)> = imports(source, "crate").into_iter().map(|i| (i.module, i.line)).collect();
    let expected: Vec<(String, usize)> =
        [("model", 3), ("tools", 3), ("workspace", 4), ("hooks", 6), ("scope", 9)].iter().map(|(m, l)| (m.to_string(), *l)).collect();
    assert_eq!(found, expected);
}

#[test]
fn an_import_up_and_a_circle_are_named_with_their_file() {
    let edge = |from: &str, to: &str, place: &str| ((from.to_string(), to.to_string()), vec![place.to_string()]);
    let edges: BTreeMap<_, _> = [
        edge("tools", "agent", "server/src/tools/agent.rs:24: use crate::agent::subagent::run_child;"),
        edge("hooks", "thread", "server/src/hooks.rs:3: use crate::thread::X;"),
        edge("thread", "hooks", "server/src/thread/a.rs:9: use crate::hooks::Y;"),
        edge("agent", "tools", "server/src/agent/run.rs:1: use crate::tools::Executor;"),
    ]
    .into_iter()
    .collect();
    let problems = problems(&edges);
    assert!(problems.iter().any(|p| p.starts_with("server/src/tools/agent.rs:24: use crate::agent::subagent::run_child;") && p.contains("`tools` (the tool contract) imports `agent` (agent)")), "{problems:#?}");
    assert!(problems.iter().any(|p| p.starts_with("a circle: hooks → thread → hooks")), "{problems:#?}");
    assert!(problems.iter().any(|p| p.starts_with("a circle: agent → tools → agent")), "{problems:#?}");
    assert_eq!(problems.len(), 3, "{problems:#?}");
}
