//! The tidy test: the shape of `server/src`, checked from the source (as
//! rust-analyzer's tidy tests check theirs). Each rule names the file and
//! line that breaks it; a list of known exceptions may only shrink.
//!
//! - **Layers**: every `crate::` path in every file (`use crate::x`,
//!   `use crate::{a, b::c}` groups, inline `crate::x::y` paths;
//!   `tandem::x` in the binary's files) is an import of a top-level
//!   module, and imports only go down the layers below, never up, and
//!   never round in a circle between modules of one layer.
//! - **No circle between the files of one module** (a child may read what
//!   its parent declares; today's circles are `KNOWN_FILE_CIRCLES`).
//! - **No front end imports another**, and **front ends reach the loop,
//!   the threads, the permission machinery and the hooks only through the
//!   host** (`host` re-exports the words they speak, an allowed list
//!   that may only shrink).
//! - **The protocol stands alone**: `protocol` imports nothing from the
//!   crate.
//! - **Front ends learn what a call changed from its result**: no front
//!   end reads the workspace's side tables of writes or matches a tool
//!   result's text; and **keep no barrier beside the run's stream** (an
//!   edit and a question wait their turn in it).
//! - **LSP types only under `lsp/`** (`language_servers/`, the client of
//!   the servers Tandem starts, speaks LSP as JSON).
//! - **No platform sandbox words outside `sandbox/`** in code or strings.
//! - **`lib.rs`'s diagram names every module**, and each has a layer here.
//! - **One lock helper**: no lock is recovered from poisoning by hand.
//! - **No `#[test]` in `tests/editors`**: its own harness runs what each
//!   module lists.
//!
//! A new top-level module must be given its layer here (and a place in
//! the diagram in `server/src/lib.rs`).
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, top first. A module may import modules of lower layers, and
/// of its own layer as long as that makes no circle.
const LAYERS: &[(&str, &[&str])] = &[
    ("front ends", &["main", "cli", "lsp", "acp"]),
    ("host", &["host", "settings", "review"]),
    ("agent", &["agent", "completion"]),
    ("what the contract asks", &["permissions", "hooks", "mcp", "thread", "sandbox", "checkpoint", "language_servers", "tasks", "worktree"]),
    ("the tool contract", &["tools"]),
    ("workspace", &["workspace"]),
    ("leaves", &["model", "environment", "consent", "scope", "sync", "json_file", "confined_file", "trust", "diff", "wire", "platform", "protocol", "visible"]),
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
    blank_out(source, false)
}

/// Blank out comments only: the code and its string literals stay.
fn without_comments(source: &str) -> String {
    blank_out(source, true)
}

/// One pass over the source that tells comments from strings (a `/*` or
/// `//` inside a string starts no comment), blanking comments and, unless
/// `keep_strings`, string and char literals.
fn blank_out(source: &str, keep_strings: bool) -> String {
    let bytes = source.as_bytes();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    let blank = |out: &mut String, text: &str| {
        for c in text.chars() {
            out.push(if c == '\n' { '\n' } else { ' ' });
        }
    };
    let literal = |out: &mut String, text: &str| {
        if keep_strings {
            out.push_str(text);
        } else {
            blank(out, text);
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
            literal(&mut out, &rest[..end]);
            i += end;
        } else if rest.starts_with('"') {
            let mut end = 1;
            let body = rest.as_bytes();
            while end < body.len() && body[end] != b'"' {
                end += if body[end] == b'\\' { 2 } else { 1 };
            }
            let end = (end + 1).min(rest.len());
            literal(&mut out, &rest[..end]);
            i += end;
        } else if let Some(end) = char_literal_len(rest) {
            literal(&mut out, &rest[..end]);
            i += end;
        } else {
            let c = rest.chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// The length of the char literal starting here (`'"'`, `'é'`, `'\''`,
/// `'\u{1F600}'`), or `None` for a lifetime (`'a`) or no quote.
fn char_literal_len(rest: &str) -> Option<usize> {
    let mut chars = rest.strip_prefix('\'')?.char_indices();
    let (_, first) = chars.next()?;
    if first == '\\' {
        // Past the escaped character, so `'\''` ends at its last quote.
        let (escaped, c) = chars.next()?;
        let from = 1 + escaped + c.len_utf8();
        return rest[from..].find('\'').map(|e| from + e + 1);
    }
    let (at, second) = chars.next()?;
    (second == '\'').then_some(1 + at + 1)
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

/// Leaves that import no module of the crate at all: the protocol the
/// front ends and the editor plugins speak is plain data, the first crate
/// of a later split.
const SELF_CONTAINED: &[&str] = &["protocol"];

#[test]
fn the_protocol_imports_nothing_from_the_crate() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("server/src");
    let found: Vec<String> = edges(&src)
        .iter()
        .filter(|((from, _), _)| SELF_CONTAINED.contains(&from.as_str()))
        .flat_map(|((from, to), places)| places.iter().map(move |p| format!("{p}\n    `{from}` imports `{to}`: it stands alone")))
        .collect();
    assert!(found.is_empty(), "{}", found.join("\n"));
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
        edge("tools", "agent", "server/src/tools/agent.rs:24: use crate::agent::sub_agent::run_child;"),
        edge("hooks", "thread", "server/src/hooks.rs:3: use crate::thread::X;"),
        edge("thread", "hooks", "server/src/thread/a.rs:9: use crate::hooks::Y;"),
        edge("agent", "tools", "server/src/agent/run.rs:1: use crate::tools::Executor;"),
    ]
    .into_iter()
    .collect();
    let problems = problems(&edges);
    assert!(problems.iter().any(|p| p.starts_with("server/src/tools/agent.rs:24: use crate::agent::sub_agent::run_child;") && p.contains("`tools` (the tool contract) imports `agent` (agent)")), "{problems:#?}");
    assert!(problems.iter().any(|p| p.starts_with("a circle: hooks → thread → hooks")), "{problems:#?}");
    assert!(problems.iter().any(|p| p.starts_with("a circle: agent → tools → agent")), "{problems:#?}");
    assert_eq!(problems.len(), 3, "{problems:#?}");
}

/// The places in `src` that take a `std::sync` lock by hand, recovering a
/// poisoned one (`.lock().unwrap_or_else(…into_inner)`): `sync.rs` is the
/// one helper for that.
fn hand_made_lock_recoveries(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut found = Vec::new();
    for file in files {
        let relative = file.strip_prefix(src).unwrap();
        if relative == Path::new("sync.rs") {
            continue;
        }
        let code = code_only(&std::fs::read_to_string(&file).unwrap());
        for (index, line) in code.lines().enumerate() {
            let squeezed: String = line.chars().filter(|c| !c.is_whitespace()).collect();
            if squeezed.contains(".into_inner())") || squeezed.contains("PoisonError::into_inner") {
                found.push(format!("server/src/{}:{}", relative.display(), index + 1));
            }
        }
    }
    found
}

#[test]
fn locks_are_taken_through_the_one_helper() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("server/src");
    let found = hand_made_lock_recoveries(&src);
    assert!(
        found.is_empty(),
        "a lock recovered by hand: use `crate::sync::{{MutexExt, RwLockExt, IntoValue}}` (`.locked()`, `.reading()`, `.writing()`, `.into_value()`):\n{}",
        found.join("\n")
    );
}

// ------------------------------------------------------------------
// The tidy rules beyond the layers (rust-analyzer's tidy tests in
// spirit): each reads the source and names the file and line that
// breaks it. A list of known exceptions may only shrink.

/// Every Rust file of `src` with its module path (`lsp/runs/mod.rs` →
/// `["lsp", "runs"]`, `lsp/server.rs` → `["lsp", "server"]`).
fn module_files(src: &Path) -> Vec<(PathBuf, Vec<String>)> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files
        .into_iter()
        .map(|file| {
            let relative = file.strip_prefix(src).unwrap().to_path_buf();
            let mut path: Vec<String> = relative.iter().map(|c| c.to_string_lossy().into_owned()).collect();
            let last = path.pop().unwrap_or_default();
            let stem = last.trim_end_matches(".rs");
            if stem != "mod" && stem != "lib" {
                path.push(stem.to_string());
            }
            (relative, path)
        })
        .collect()
}

/// The module paths a file's code names, resolved (`super::x` from
/// `lsp/runs/forward.rs` is `lsp::runs::x`), with their lines. Groups
/// give one path per item (`a::{b, c::d}` → `a::b`, `a::c::d`).
fn paths_named(code: &str, module: &[String], is_mod_file: bool, in_binary: bool) -> Vec<(Vec<String>, usize)> {
    let bytes = code.as_bytes();
    let mut found = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let rest = &code[at..];
        let start_ok = at == 0 || !(is_ident(bytes[at - 1]) || bytes[at - 1] == b':' || bytes[at - 1] == b'$');
        let prefix = ["crate::", "super::", "self::", "tandem::"].into_iter().find(|p| start_ok && rest.starts_with(p));
        let Some(prefix) = prefix else {
            at += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        };
        let line = code[..at].matches('\n').count() + 1;
        let base: Vec<String> = match prefix {
            "crate::" if in_binary => {
                at += prefix.len();
                continue;
            }
            "crate::" | "tandem::" => Vec::new(),
            "self::" if is_mod_file => module.to_vec(),
            "self::" => module.to_vec(),
            // `super` of `a/b.rs` (module a::b) is `a`; of `a/b/mod.rs` (a::b) too.
            _ => module[..module.len().saturating_sub(1)].to_vec(),
        };
        if prefix == "tandem::" && !in_binary {
            at += prefix.len();
            continue;
        }
        let mut end = at + prefix.len();
        let mut segments = base.clone();
        loop {
            let ident: String = code[end..].bytes().take_while(|b| is_ident(*b)).map(char::from).collect();
            if ident.is_empty() {
                break;
            }
            end += ident.len();
            segments.push(ident);
            if code[end..].starts_with("::") && code[end + 2..].bytes().next().is_some_and(is_ident) {
                end += 2;
            } else {
                break;
            }
        }
        if code[end..].starts_with("::{") {
            for item in top_level_items(&code[end + 3..]) {
                if !item.is_empty() && item != "self" {
                    let mut path = segments.clone();
                    path.push(item);
                    found.push((path, line));
                }
            }
        }
        found.push((segments, line));
        at = end.max(at + 1);
    }
    found
}

/// The file a resolved path lands in: the longest module path of a file
/// that starts it.
fn file_of<'a>(path: &[String], modules: &'a [(PathBuf, Vec<String>)]) -> Option<&'a (PathBuf, Vec<String>)> {
    modules.iter().filter(|(_, m)| !m.is_empty() && path.starts_with(m)).max_by_key(|(_, m)| m.len())
}

/// Import edges between files of one top-level module, leaving out those
/// to a file's own enclosing modules (a child reads what its parent
/// declares; the parent declares the child: not a circle of design).
fn file_edges(src: &Path) -> BTreeMap<(String, String), usize> {
    let modules = module_files(src);
    let mut edges = BTreeMap::new();
    for (relative, module) in &modules {
        let Some(top) = module.first() else { continue };
        let is_mod_file = relative.file_name().is_some_and(|n| n == "mod.rs");
        let in_bin = in_binary(top);
        let code = code_only(&std::fs::read_to_string(src.join(relative)).unwrap());
        for (path, line) in paths_named(&code, module, is_mod_file, in_bin) {
            let Some((target, target_module)) = file_of(&path, &modules) else { continue };
            if target == relative || target_module.first() != Some(top) || module.starts_with(target_module) {
                continue;
            }
            edges.entry((relative.display().to_string(), target.display().to_string())).or_insert(line);
        }
    }
    edges
}

/// The groups of files of one module that import each other round in a
/// circle (the strongly connected parts of the import graph with more
/// than one file), each sorted.
fn file_circles(edges: &BTreeMap<(String, String), usize>) -> BTreeSet<Vec<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, to) in edges.keys() {
        graph.entry(from.clone()).or_default().insert(to.clone());
    }
    let reach = |start: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![start.to_string()];
        while let Some(at) = todo.pop() {
            for next in graph.get(&at).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<String, BTreeSet<String>> = graph.keys().map(|k| (k.clone(), reach(k))).collect();
    let mut groups = BTreeSet::new();
    for (file, from_here) in &reached {
        let group: Vec<String> = from_here.iter().filter(|other| reached.get(*other).is_some_and(|r| r.contains(file))).cloned().collect();
        if group.len() > 1 {
            groups.insert(group);
        }
    }
    groups
}

/// One circle inside a group, for the message: each hop with its line.
fn circle_in(group: &[String], edges: &BTreeMap<(String, String), usize>) -> String {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, to) in edges.keys().filter(|(f, t)| group.contains(f) && group.contains(t)) {
        graph.entry(from.clone()).or_default().insert(to.clone());
    }
    let path = circle(&graph, &group[0]).unwrap_or_default();
    path.windows(2).map(|w| format!("server/src/{}:{} → {}", w[0], edges[&(w[0].clone(), w[1].clone())], w[1])).collect::<Vec<_>>().join("\n    ")
}

/// Circles between files inside one module that are known and not yet
/// taken apart. This list may only shrink: a new circle fails the test,
/// and a circle that is gone must be taken off the list.
const KNOWN_FILE_CIRCLES: &[&[&str]] = &[
    &["acp/files.rs", "acp/permission.rs", "acp/session.rs"],
    &["agent/run/mod.rs", "agent/sub_agent.rs"],
    &["mcp/server.rs", "mcp/tool.rs"],
    &["thread/history.rs", "thread/store.rs", "thread/transcript.rs"],
];

#[test]
fn no_circle_of_imports_between_the_files_of_one_module() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("server/src");
    let edges = file_edges(&src);
    assert!(edges.len() > 20, "found only {} edges between files: the reader is broken", edges.len());
    let groups = file_circles(&edges);
    let known: Vec<BTreeSet<&str>> = KNOWN_FILE_CIRCLES.iter().map(|c| c.iter().copied().collect()).collect();
    let new: Vec<String> = groups
        .iter()
        .filter(|g| !known.iter().any(|k| g.iter().all(|f| k.contains(f.as_str()))))
        .map(|g| format!("files importing each other round in a circle: {}\n    {}", g.join(", "), circle_in(g, &edges)))
        .collect();
    let gone: Vec<String> = KNOWN_FILE_CIRCLES
        .iter()
        .filter(|k| !groups.iter().any(|g| g.len() == k.len() && g.iter().all(|f| k.contains(&f.as_str()))))
        .map(|k| k.join(", "))
        .collect();
    assert!(new.is_empty(), "take the circle apart (move what both need into a file of its own, or down to the parent):\n{}", new.join("\n"));
    assert!(gone.is_empty(), "these circles changed or are gone: put the groups as they are now on KNOWN_FILE_CIRCLES in tests/layers.rs (it may only shrink):\n{}\nnow: {groups:#?}", gone.join("\n"));
}

/// The front ends: each knows its own protocol, none another's.
const FRONT_ENDS: &[&str] = &["lsp", "acp", "cli"];

/// A front end that uses another, known and not yet taken apart (may only shrink).
const KNOWN_FRONT_END_IMPORTS: &[(&str, &str)] = &[
    // `tandem demo`'s second act runs the editor front end in process.
    ("cli", "lsp"),
];

#[test]
fn no_front_end_imports_another() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("server/src");
    let edges = edges(&src);
    let found: Vec<String> = edges
        .iter()
        .filter(|((from, to), _)| FRONT_ENDS.contains(&from.as_str()) && FRONT_ENDS.contains(&to.as_str()))
        .filter(|((from, to), _)| !KNOWN_FRONT_END_IMPORTS.contains(&(from.as_str(), to.as_str())))
        .flat_map(|((from, to), places)| places.iter().map(move |p| format!("{p}\n    `{from}` uses the front end `{to}`: share it through the host or a lower layer")))
        .collect();
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The workspace's side tables of what runs wrote: a front end learns what
/// a call did to files from the call's result (its `effects`), not from
/// these.
const WORKSPACE_SIDE_TABLES: &[&str] = &["take_disk_writes", "disk_write_since", "take_call_effects"];

/// Front-end files that still read a side table (may only shrink).
const KNOWN_SIDE_TABLE_READERS: &[&str] = &[];

/// `(file, line, text)` of each front-end line (comments and test modules
/// left out) that matches `found`.
fn front_end_lines(src: &Path, found: impl Fn(&str) -> bool) -> Vec<(String, usize, String)> {
    let mut out = Vec::new();
    for front_end in FRONT_ENDS {
        let mut files = Vec::new();
        rust_files(&src.join(front_end), &mut files);
        for file in files {
            let relative = file.strip_prefix(src).unwrap().display().to_string();
            // A module of tests (`lsp/tests.rs`, declared `#[cfg(test)]`) is no front end's code.
            if relative.ends_with("/tests.rs") {
                continue;
            }
            let source = std::fs::read_to_string(&file).unwrap();
            let code = without_comments(source.split("#[cfg(test)]").next().unwrap_or_default());
            for (n, line) in code.lines().enumerate() {
                if found(line) {
                    out.push((relative.clone(), n + 1, line.trim().to_string()));
                }
            }
        }
    }
    out
}

#[test]
fn front_ends_learn_what_a_call_changed_from_its_result_not_from_the_workspace() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("server/src");
    let calls = |line: &str| WORKSPACE_SIDE_TABLES.iter().any(|name| line.contains(&format!(".{name}(")));
    let found: Vec<String> = front_end_lines(&src, calls)
        .into_iter()
        .filter(|(file, _, _)| !KNOWN_SIDE_TABLE_READERS.contains(&file.as_str()))
        .map(|(file, line, text)| format!("server/src/{file}:{line}: {text}\n    a front end reads what the workspace wrote: use the tool result's `effects`"))
        .collect();
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn front_ends_never_read_a_tool_results_text_for_what_happened() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("server/src");
    let reads = |line: &str| ["content.contains(", "content.starts_with(", "content.ends_with("].iter().any(|p| line.contains(p));
    let found: Vec<String> = front_end_lines(&src, reads)
        .into_iter()
        .map(|(file, line, text)| format!("server/src/{file}:{line}: {text}\n    the model's words are no fact: use the result's `effects` or `is_error`"))
        .collect();
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// What a barrier beside the run's stream looks like: an outbox, a count
/// of the events sent, a count of those passed on. An edit to the user's
/// buffer and a question wait their turn in the stream itself
/// (`EventSender::caught_up`, `EventSender::question`).
const BARRIER_WORDS: &[&str] = &["Outbox", ".sent()", "forwarded.send_modify("];

#[test]
fn front_ends_keep_no_barrier_beside_the_runs_stream() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("server/src");
    let barrier = |line: &str| BARRIER_WORDS.iter().any(|word| line.contains(word));
    let found: Vec<String> = front_end_lines(&src, barrier)
        .into_iter()
        .map(|(file, line, text)| format!("server/src/{file}:{line}: {text}\n    a barrier beside the run's stream: wait for the turn in the stream (`caught_up`, `question`)"))
        .collect();
    assert!(found.is_empty(), "{}", found.join("\n"));
    assert!(!src.join("lsp/outbox.rs").exists(), "the LSP outbox came back: the editor sink waits for `BufferEdit::turn`");
}

/// What the host stands between: a front end reaches the loop, the
/// threads, the permission machinery and the hooks only through it.
const BEHIND_THE_HOST: &[&str] = &["agent", "thread", "permissions", "hooks"];

/// Front-end files that still reach behind the host, each with what it
/// reaches (may only shrink).
const KNOWN_REACHING_BEHIND_THE_HOST: &[(&str, &str)] = &[
    // One of the editor front end's unit tests drives the loop itself, with
    // a tool of its own in the registry, to count how often an edit's input
    // is parsed and its document read on the way from the model to the
    // applyEdit (issue 7's count): counters no run through the host shows.
    ("lsp/tests.rs", "agent"),
];

#[test]
fn front_ends_reach_the_loop_threads_permissions_and_hooks_only_through_the_host() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("server/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut found = BTreeSet::new();
    let mut places = Vec::new();
    for file in files {
        let relative = file.strip_prefix(&src).unwrap().display().to_string();
        let Some(module) = module_of(Path::new(&relative)) else { continue };
        if !FRONT_ENDS.contains(&module.as_str()) && module != "main" {
            continue;
        }
        let source = std::fs::read_to_string(&file).unwrap();
        let prefix = if in_binary(&module) { "tandem" } else { "crate" };
        for import in imports(&source, prefix) {
            if BEHIND_THE_HOST.contains(&import.module.as_str()) {
                found.insert((relative.clone(), import.module.clone()));
                if !KNOWN_REACHING_BEHIND_THE_HOST.contains(&(relative.as_str(), import.module.as_str())) {
                    places.push(format!("server/src/{relative}:{}: {}\n    a front end reaches `{}` past the host: use what `host` offers", import.line, import.text, import.module));
                }
            }
        }
    }
    let gone: Vec<String> =
        KNOWN_REACHING_BEHIND_THE_HOST.iter().filter(|(f, m)| !found.contains(&(f.to_string(), m.to_string()))).map(|(f, m)| format!("{f} → {m}")).collect();
    assert!(places.is_empty(), "{}", places.join("\n"));
    assert!(gone.is_empty(), "no longer reached: take them off KNOWN_REACHING_BEHIND_THE_HOST in tests/layers.rs:\n{}", gone.join("\n"));
}

/// The names `host/mod.rs` re-exports (`pub use`): the words a front end
/// speaks that the layers behind the host define. May only shrink; a name
/// no front end must write goes (the front end calls a host method).
const HOST_REEXPORTS: &[&str] = &[
    // The sandbox's "allow HOST" question (issue 57): the answer a prompter
    // returns and the words of its two allow options.
    "HostAnswer", "allow_host_label", "allow_host_saved_label",
    "Endpoint", "told_instead", "Answer", "Gate", "Offers", "Prompter", "Review", "ALLOW_LIKE_THIS", "INSTEAD_PROMPT", "TELL_INSTEAD",
    "protected_path", "Finished", "RunEnding", "RunHandle", "StartError", "EventSender", "QuestionTurns", "RunEvent", "RunOutcome",
    "RunRequest", "RunStatus", "ModelRequest", "ModelResponse", "Provider", "ProviderError", "StreamEvent", "ScriptedProvider",
    "describe_project", "project_hooks", "shared_hooks", "Hooks", "SharedHooks", "Terminal", "TerminalPrompter", "TaskStatus", "Tasks",
    "format_cost", "ThreadError", "Threads", "ThreadStore", "Totals",
];

/// The names a module file re-exports: each `pub use` item's own name (or
/// its `as` name), groups read item by item.
fn reexported_names(source: &str) -> Vec<String> {
    let code = code_only(source);
    let mut names = Vec::new();
    for statement in code.split(';') {
        let Some(path) = statement.trim().strip_prefix("pub use ") else { continue };
        let items: Vec<String> = match path.split_once('{') {
            Some((_, group)) => group.trim_end_matches('}').split(',').map(|item| item.trim().to_string()).filter(|item| !item.is_empty()).collect(),
            None => vec![path.trim().to_string()],
        };
        for item in items {
            let name = match item.split_once(" as ") {
                Some((_, alias)) => alias.trim(),
                None => item.rsplit("::").next().unwrap_or_default().trim(),
            };
            names.push(name.to_string());
        }
    }
    names
}

#[test]
fn the_host_reexports_only_the_allowed_names() {
    let source = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("server/src/host/mod.rs")).unwrap();
    let names = reexported_names(&source);
    let extra: Vec<&String> = names.iter().filter(|name| !HOST_REEXPORTS.contains(&name.as_str())).collect();
    assert!(extra.is_empty(), "host/mod.rs re-exports {extra:?}: give the front end a host method instead");
    let gone: Vec<&&str> = HOST_REEXPORTS.iter().filter(|name| !names.iter().any(|n| n == *name)).collect();
    assert!(gone.is_empty(), "no longer re-exported: take {gone:?} off HOST_REEXPORTS in tests/layers.rs");
    assert_eq!(
        reexported_names("pub use a::b::{C, d as e};\npub use f::G;\n// pub use h::I;\n"),
        ["C", "e", "G"],
        "the re-exports are read item by item, comments left out"
    );
}

/// The ports: traits through which a tool asks for a service the layers
/// above implement. Each is declared under `tools/ports/`.
const PORTS: &[&str] = &["PermissionGate", "PlanReview", "ToolSource", "ShellSandbox", "ToolHooks", "CodeIntel", "Tasks"];

/// Ports still declared outside `tools/ports/` (may only shrink).
const KNOWN_PORTS_OUTSIDE: &[&str] = &[
    // Beside the request and decision it speaks, which the executor builds.
    "PermissionGate",
];

#[test]
fn every_port_is_declared_under_tools_ports() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("server/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut declared = BTreeMap::new();
    for file in files {
        let relative = file.strip_prefix(&src).unwrap().display().to_string();
        let code = code_only(&std::fs::read_to_string(&file).unwrap());
        for port in PORTS {
            if code.lines().any(|line| line.trim_start().starts_with(&format!("pub trait {port}:")) || line.trim_start().starts_with(&format!("pub trait {port} "))) {
                declared.insert(*port, relative.clone());
            }
        }
    }
    let outside: Vec<String> = declared
        .iter()
        .filter(|(port, file)| !file.starts_with("tools/ports/") && !KNOWN_PORTS_OUTSIDE.contains(port))
        .map(|(port, file)| format!("server/src/{file}: the port `{port}` belongs under tools/ports/"))
        .collect();
    assert!(outside.is_empty(), "{}", outside.join("\n"));
    let missing: Vec<&&str> = PORTS.iter().filter(|port| !declared.contains_key(*port)).collect();
    assert!(missing.is_empty(), "no `pub trait` found for {missing:?}: keep PORTS in tests/layers.rs true");
    let moved: Vec<&&str> = KNOWN_PORTS_OUTSIDE.iter().filter(|port| declared.get(*port).is_some_and(|f| f.starts_with("tools/ports/"))).collect();
    assert!(moved.is_empty(), "now under tools/ports/: take {moved:?} off KNOWN_PORTS_OUTSIDE");
}

/// The crates that carry LSP's types.
const LSP_TYPE_CRATES: &[&str] = &["tower_lsp_server", "ls_types", "lsp_types"];

#[test]
fn lsp_types_are_only_under_lsp() {
    // `language_servers/` (the client of the servers Tandem starts) speaks
    // LSP as JSON and stays without the types, so one module knows them.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("server/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut found = Vec::new();
    for file in files {
        let relative = file.strip_prefix(&src).unwrap();
        if module_of(relative).as_deref() == Some("lsp") {
            continue;
        }
        let code = code_only(&std::fs::read_to_string(&file).unwrap());
        for (index, line) in code.lines().enumerate() {
            for name in LSP_TYPE_CRATES {
                let named = line.match_indices(name).any(|(at, _)| (at == 0 || !is_ident(line.as_bytes()[at - 1])) && line[at + name.len()..].starts_with("::"));
                if named {
                    found.push(format!("server/src/{}:{}: {}", relative.display(), index + 1, line.trim()));
                }
            }
        }
    }
    assert!(found.is_empty(), "LSP types outside lsp/ (only the LSP front end knows them):\n{}", found.join("\n"));
}

/// Words only a platform's sandbox knows: the tools, their flags and
/// their messages.
const PLATFORM_WORDS: &[&str] = &["bwrap", "bubblewrap", "seatbelt", "sandbox-exec", "landlock", "seccomp"];

/// Files outside `sandbox/` whose code or strings name a platform's sandbox.
fn platform_words_outside_the_sandbox(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut found = Vec::new();
    for file in files {
        let relative = file.strip_prefix(src).unwrap();
        if module_of(relative).as_deref() == Some("sandbox") {
            continue;
        }
        let code = without_comments(&std::fs::read_to_string(&file).unwrap()).to_lowercase();
        for (index, line) in code.lines().enumerate() {
            if let Some(word) = PLATFORM_WORDS.iter().find(|w| line.contains(*w)) {
                found.push(format!("server/src/{}:{}: `{word}`: {}", relative.display(), index + 1, line.trim()));
            }
        }
    }
    found
}

#[test]
fn platform_sandbox_words_are_only_under_sandbox() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("server/src");
    let found = platform_words_outside_the_sandbox(&src);
    assert!(found.is_empty(), "a platform's sandbox named outside sandbox/ (put it behind the ShellSandbox port):\n{}", found.join("\n"));
}

#[test]
fn the_platform_rule_reads_strings_and_skips_comments() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("tools")).unwrap();
    std::fs::create_dir_all(dir.path().join("sandbox")).unwrap();
    // A `/*` or `//` inside a string or a char starts no comment: the
    // lines after it are still read.
    std::fs::write(
        dir.path().join("tools/a.rs"),
        "// bubblewrap in a comment\n/* bwrap */ let x = 1;\nlet g = \"Edit(./*)\"; let u = \"https://x\"; let q = '\\''; let p = '/';\nlet s = \"bwrap: failed\";\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("sandbox/b.rs"), "let s = \"bwrap: failed\";\n").unwrap();
    let found = platform_words_outside_the_sandbox(dir.path());
    assert_eq!(found, ["server/src/tools/a.rs:4: `bwrap`: let s = \"bwrap: failed\";"], "{found:#?}");
}

#[test]
fn a_circle_between_files_is_found_and_a_parent_child_pair_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let at = |p: &str, text: &str| {
        let path = dir.path().join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    at("m/mod.rs", "mod a; mod b; use a::A; use self::b::B;\n");
    at("m/a.rs", "use super::b::B;\nuse super::Shared;\n");
    at("m/b.rs", "use crate::m::a::{A, other};\n");
    at("n.rs", "use crate::m::a::A;\n");
    let circles = file_circles(&file_edges(dir.path()));
    assert_eq!(circles.into_iter().collect::<Vec<_>>(), [vec!["m/a.rs".to_string(), "m/b.rs".to_string()]]);
}

/// The top-level modules `lib.rs` declares, whatever their visibility
/// (`mod x;`, `pub mod x;`, `pub(crate) mod x;`).
fn declared_modules(lib: &str) -> Vec<String> {
    lib.lines()
        .filter_map(|l| {
            let l = l.trim();
            let l = match l.strip_prefix("pub") {
                Some(rest) if rest.starts_with('(') => rest.split_once(')')?.1.trim_start(),
                Some(rest) => rest.trim_start(),
                None => l,
            };
            l.strip_prefix("mod ")?.strip_suffix(';').map(|m| m.trim().to_string())
        })
        .collect()
}

#[test]
fn a_module_is_declared_whatever_its_visibility() {
    let lib = "//! mod nothing;\npub mod a;\nmod b;\npub(crate) mod c;\n  pub(super) mod d;\nmod e {\n}\npub use a::x;\n";
    assert_eq!(declared_modules(lib), ["a", "b", "c", "d"]);
}

#[test]
fn the_diagram_in_lib_rs_names_every_module_and_layers_rs_gives_each_a_layer() {
    let lib = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("server/src/lib.rs")).unwrap();
    let diagram: String = lib.split("```text").nth(1).and_then(|d| d.split("```").next()).unwrap_or_default().to_string();
    assert!(!diagram.is_empty(), "lib.rs has no ```text diagram");
    let words: BTreeSet<&str> = diagram.split(|c: char| !(c.is_alphanumeric() || c == '_')).collect();
    let modules = declared_modules(&lib);
    assert!(modules.len() > 10, "{modules:?}");
    let missing: Vec<&String> = modules.iter().filter(|m| !words.contains(m.as_str())).collect();
    assert!(missing.is_empty(), "lib.rs declares modules its diagram does not name: {missing:?}");
    let unlayered: Vec<&String> = modules.iter().filter(|m| layer_of(m).is_none()).collect();
    assert!(unlayered.is_empty(), "modules without a layer in tests/layers.rs (LAYERS): {unlayered:?}");
}

/// `tests/editors` has its own harness (libtest-mimic, see its main.rs),
/// which runs what the modules' `trials()` list: a `#[test]` there would
/// be compiled out and never run, so it is refused here.
#[test]
fn the_editor_tests_are_listed_for_their_harness_not_marked_test() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/editors");
    let mut found = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            for (n, line) in text.lines().enumerate() {
                if line.trim_start().starts_with("#[test]") {
                    found.push(format!("{}:{}", path.display(), n + 1));
                }
            }
        }
    }
    assert!(found.is_empty(), "a #[test] in tests/editors is never run by its harness: list the function in its module's trials() instead\n{}", found.join("\n"));
}
