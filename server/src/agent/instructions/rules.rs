//! Path-scoped rules: the Markdown files in the workspace root's
//! `.tandem/rules/` and `.claude/rules/` (Claude Code's folder). A rule whose
//! front matter names `paths:` (globs relative to the root; Copilot's
//! `applyTo:` is read the same) is loaded when the run first touches a file
//! they match ([`super::scoped`]); a rule without is part of the system
//! prompt, like `AGENTS.md`.
//!
//! ```markdown
//! ---
//! paths: ["src/api/**/*.rs", "proto/*.proto"]
//! ---
//! Every handler returns a typed error.
//! ```
//!
//! Each folder's files are taken in name order, at most [`MAX_RULE_FILES`]
//! of them, read confined to the workspace like every file a folder brings.
//! A rule that cannot be read or parsed, or whose glob does not compile, is
//! skipped with the reason (in the log and in `tandem doctor`).

use std::path::PathBuf;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use super::MAX_FILE_BYTES;
use crate::tools::support::front_matter;
use crate::workspace::Workspace;

/// The folders rules are read from, relative to the primary root.
pub const RULE_FOLDERS: [&str; 2] = [".tandem/rules", ".claude/rules"];
/// Rule files read from one folder, at most (the first by name).
pub const MAX_RULE_FILES: usize = 64;

/// One rule file.
#[derive(Debug, Clone)]
pub struct Rule {
    /// Its path relative to the root: `.tandem/rules/api.md`.
    pub name: String,
    pub path: PathBuf,
    /// The globs as written (`None`: the rule always applies).
    pub paths: Option<Vec<String>>,
    matcher: Option<GlobSet>,
    /// The text after the front matter.
    pub body: String,
}

impl Rule {
    /// Does the rule apply to the file `relative` (to the root, `/`-separated)?
    pub fn matches(&self, relative: &str) -> bool {
        self.matcher.as_ref().is_some_and(|set| set.is_match(relative))
    }
}

/// The rules found, and the files skipped with why.
#[derive(Debug, Default)]
pub struct Rules {
    pub rules: Vec<Rule>,
    pub skipped: Vec<(String, String)>,
}

/// Every rule of the primary root's rule folders.
pub fn load(workspace: &Workspace) -> Rules {
    let mut found = Rules::default();
    for folder in RULE_FOLDERS {
        let dir = workspace.root().join(folder);
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        let mut names: Vec<String> = entries
            .filter_map(Result::ok)
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".md") && !name.starts_with('.'))
            .collect();
        names.sort();
        if names.len() > MAX_RULE_FILES {
            let said = format!("{} more rule files not read: at most {MAX_RULE_FILES} are read from a folder", names.len() - MAX_RULE_FILES);
            tracing::warn!(folder, "{said}");
            found.skipped.push((folder.to_string(), said));
            names.truncate(MAX_RULE_FILES);
        }
        for file in names {
            let name = format!("{folder}/{file}");
            match read(workspace, &name) {
                Ok(Some(rule)) => found.rules.push(rule),
                Ok(None) => {}
                Err(reason) => {
                    tracing::warn!(rule = %name, %reason, "rule skipped");
                    found.skipped.push((name, reason));
                }
            }
        }
    }
    found
}

fn read(workspace: &Workspace, name: &str) -> Result<Option<Rule>, String> {
    let path = workspace.root().join(name);
    let Some(text) = workspace.read_confined(&path, Some(workspace.roots()), MAX_FILE_BYTES)? else { return Ok(None) };
    let doc = front_matter::parse(&text)?;
    let paths = match doc.list("paths")? {
        Some(paths) => Some(paths),
        None => doc.list("applyTo")?,
    };
    let matcher = match &paths {
        None => None,
        Some(globs) if globs.is_empty() => return Err("`paths` lists no globs".to_string()),
        Some(globs) => Some(glob_set(globs)?),
    };
    Ok(Some(Rule { name: name.to_string(), path, paths, matcher, body: doc.body }))
}

/// `*` stays within a folder, `**` crosses folders; a leading `/` or `./`
/// means the root, as it does relative to it.
fn glob_set(globs: &[String]) -> Result<GlobSet, String> {
    let mut set = GlobSetBuilder::new();
    for glob in globs {
        let bare = glob.trim_start_matches("./").trim_start_matches('/');
        let compiled = GlobBuilder::new(bare).literal_separator(true).build().map_err(|err| format!("the glob `{glob}` does not compile: {err}"))?;
        set.add(compiled);
    }
    set.build().map_err(|err| format!("the globs do not compile: {err}"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn workspace(files: &[(&str, &str)]) -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let workspace = Workspace::with_roots(vec![dir.path().to_path_buf()], None).unwrap();
        (dir, workspace)
    }

    #[test]
    fn globs_scope_rules_and_bad_ones_are_skipped_with_the_reason() {
        let (_dir, workspace) = workspace(&[
            (".tandem/rules/api.md", "---\npaths: [\"src/api/**/*.rs\", \"/proto/*.proto\"]\n---\nTyped errors.\n"),
            (".tandem/rules/always.md", "Always.\n"),
            (".claude/rules/ts.md", "---\napplyTo: \"**/*.ts\"\n---\nStrict TS.\n"),
            (".claude/rules/bad.md", "---\npaths: \"src/[\"\n---\nNever.\n"),
            (".claude/rules/open.md", "---\npaths: [\n---\nNever.\n"),
            (".claude/rules/notes.txt", "not a rule"),
        ]);
        let found = load(&workspace);
        let names: Vec<&str> = found.rules.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, [".tandem/rules/always.md", ".tandem/rules/api.md", ".claude/rules/ts.md"]);
        let api = &found.rules[1];
        assert!(api.matches("src/api/v1/users.rs") && api.matches("proto/a.proto"));
        assert!(!api.matches("src/api.rs") && !api.matches("proto/x/a.proto") && !api.matches("src/api/users.ts"));
        assert!(found.rules[2].matches("web/app.ts") && found.rules[2].matches("app.ts"));
        assert!(found.rules[0].paths.is_none() && !found.rules[0].matches("anything.rs"));
        let skipped: Vec<&str> = found.skipped.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(skipped, [".claude/rules/bad.md", ".claude/rules/open.md"]);
        assert!(found.skipped[0].1.contains("does not compile"), "{:?}", found.skipped);
    }
}
