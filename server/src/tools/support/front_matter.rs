//! Markdown files with YAML front matter (skills' `SKILL.md`, custom agents'
//! `*.md`): split the `---` block from the body, parse it with a YAML
//! parser, and read fields by names spelled the ways people write them
//! (`when_to_use`, `when-to-use`, `When-To-Use` are one field). Also where
//! such files are looked up (the project's folders, then the user's) and
//! how they are read (through the workspace, bounded).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::workspace::Workspace;

/// A parsed file: the front matter's fields and the body after it.
#[derive(Debug, Clone, Default)]
pub struct Document {
    fields: serde_json::Map<String, Value>,
    pub body: String,
}

/// `When-To-Use` → `when_to_use`.
fn normalize(key: &str) -> String {
    key.trim().to_ascii_lowercase().replace('-', "_")
}

/// Split and parse. No front matter is fine (all body); a block that never
/// closes, YAML that does not parse, or YAML that is not a mapping is an
/// error saying so.
pub fn parse(text: &str) -> Result<Document, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let Some(first) = lines.next() else { return Ok(Document::default()) };
    if first.trim_end() != "---" {
        return Ok(Document { fields: Default::default(), body: text.to_string() });
    }
    let mut yaml = String::new();
    let mut offset = first.len();
    let mut closed = false;
    for line in lines {
        offset += line.len();
        if matches!(line.trim_end(), "---" | "...") {
            closed = true;
            break;
        }
        yaml.push_str(line);
    }
    if !closed {
        return Err("the front matter starts with --- but has no closing --- line".to_string());
    }
    let body = text[offset..].trim_start_matches(['\r', '\n']).to_string();
    if yaml.trim().is_empty() {
        return Ok(Document { fields: Default::default(), body });
    }
    let value: Value = serde_yaml_ng::from_str(&yaml).map_err(|e| format!("the front matter is not valid YAML: {e}"))?;
    let Value::Object(map) = value else {
        return Err("the front matter must be a mapping of `key: value` lines".to_string());
    };
    let fields = map.into_iter().map(|(k, v)| (normalize(&k), v)).collect();
    Ok(Document { fields, body })
}

impl Document {
    /// A field by any of its spellings.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.fields.get(&normalize(key)).filter(|v| !v.is_null())
    }

    /// A text field; numbers and booleans read as text, an empty one as absent.
    pub fn text(&self, key: &str) -> Result<Option<String>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.trim().to_string()).filter(|s| !s.is_empty())),
            Some(Value::Number(n)) => Ok(Some(n.to_string())),
            Some(Value::Bool(b)) => Ok(Some(b.to_string())),
            Some(_) => Err(format!("`{key}` must be text")),
        }
    }

    /// A yes/no field (`true`, `false`, `yes`, `no`).
    pub fn flag(&self, key: &str) -> Result<Option<bool>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(Value::String(s)) => match s.trim().to_ascii_lowercase().as_str() {
                "true" | "yes" | "on" => Ok(Some(true)),
                "false" | "no" | "off" => Ok(Some(false)),
                _ => Err(format!("`{key}` must be true or false, not \"{s}\"")),
            },
            Some(_) => Err(format!("`{key}` must be true or false")),
        }
    }

    /// A list field: a comma-separated string or a YAML/JSON array of strings.
    pub fn list(&self, key: &str) -> Result<Option<Vec<String>>, String> {
        let items: Vec<String> = match self.get(key) {
            None => return Ok(None),
            Some(Value::String(s)) => {
                // `["a", "b"]` written as a string: read it as the JSON array it is.
                if let Ok(Value::Array(items)) = serde_json::from_str::<Value>(s.trim()) {
                    return Self::strings(key, &items).map(Some);
                }
                s.split(',').map(|p| p.trim().to_string()).filter(|p| !p.is_empty()).collect()
            }
            Some(Value::Array(items)) => Self::strings(key, items)?,
            Some(_) => return Err(format!("`{key}` must be a comma-separated list or an array")),
        };
        Ok(Some(items))
    }

    fn strings(key: &str, items: &[Value]) -> Result<Vec<String>, String> {
        items
            .iter()
            .map(|v| match v {
                Value::String(s) => Ok(s.trim().to_string()),
                _ => Err(format!("`{key}` must list names as text")),
            })
            .filter(|r| r.as_ref().map(|s| !s.is_empty()).unwrap_or(true))
            .collect()
    }
}

/// Tool names as Claude Code's files write them, mapped to Tandem's; a
/// permission pattern after the name (`Bash(git:*)`) is dropped.
pub fn tool_name(name: &str) -> String {
    let bare = name.split('(').next().unwrap_or(name).trim();
    match bare {
        "Read" => "read_file",
        "Write" => "write_file",
        "Edit" | "MultiEdit" => "edit_file",
        "Glob" | "LS" => "list_files",
        "Grep" => "grep_search",
        "Bash" => "run_shell",
        "WebFetch" => "web_fetch",
        "Task" | "Agent" => "agent",
        "Skill" => "skill",
        other => other,
    }
    .to_string()
}

/// Where a skill or agent file was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Project,
    User,
}

impl Origin {
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Project => "project",
            Origin::User => "user",
        }
    }
}

/// The folders searched, in priority order: the project's, then the user's.
pub fn search_dirs(workspace: &Workspace, kind: &str) -> Vec<(PathBuf, Origin)> {
    let mut dirs = vec![
        (workspace.root().join(".tandem").join(kind), Origin::Project),
        (workspace.root().join(".claude").join(kind), Origin::Project),
    ];
    if let Some(home) = workspace.home() {
        dirs.push((home.join(".tandem").join(kind), Origin::User));
        dirs.push((home.join(".claude").join(kind), Origin::User));
    }
    dirs
}

/// A file that was not loaded, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub path: PathBuf,
    pub reason: String,
}

/// A file's text through the workspace (an open buffer counts), refused
/// past `max_bytes`, when it is not a regular file, or — for a project's
/// file — when it resolves outside the workspace after symlinks (a
/// repository's `SKILL.md` linking to `~/.npmrc` is skipped, never read);
/// the user's own may link anywhere ([`Workspace::read_confined`]).
pub(crate) fn read_bounded(workspace: &Workspace, file: &Path, origin: Origin, max_bytes: u64) -> Result<String, String> {
    let inside = match origin {
        Origin::Project => Some(workspace.roots()),
        Origin::User => None,
    };
    match workspace.read_confined(file, inside, max_bytes)? {
        Some(text) => Ok(text.to_string()),
        None => Err("the file is gone".to_string()),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn fields_by_any_spelling_and_the_body() {
        let doc = parse("---\nname: review\nWhen-To-Use: after edits\nuser_invocable: \"no\"\nallowed-tools: Read, Grep, Bash(git diff:*)\n---\n\nBody $ARGUMENTS\n").unwrap();
        assert_eq!(doc.text("name").unwrap().as_deref(), Some("review"));
        assert_eq!(doc.text("when_to_use").unwrap().as_deref(), Some("after edits"));
        assert_eq!(doc.flag("user-invocable").unwrap(), Some(false));
        let tools: Vec<String> = doc.list("allowed_tools").unwrap().unwrap().iter().map(|t| tool_name(t)).collect();
        assert_eq!(tools, ["read_file", "grep_search", "run_shell"]);
        assert_eq!(doc.body, "Body $ARGUMENTS\n");
    }

    #[test]
    fn lists_as_arrays_or_json_text() {
        let doc = parse("---\ntools: [read_file, grep_search]\nallowed-tools: '[\"list_files\"]'\n---\n").unwrap();
        assert_eq!(doc.list("tools").unwrap().unwrap(), ["read_file", "grep_search"]);
        assert_eq!(doc.list("allowed-tools").unwrap().unwrap(), ["list_files"]);
    }

    #[test]
    fn malformed_front_matter_says_why() {
        assert!(parse("---\nname: x\nno end\n").unwrap_err().contains("no closing ---"));
        assert!(parse("---\nname: [unclosed\n---\nbody").unwrap_err().starts_with("the front matter is not valid YAML"));
        assert!(parse("---\n- a\n- b\n---\n").unwrap_err().contains("mapping"));
        assert!(parse("---\nname: {a: 1}\n---\n").unwrap().text("name").is_err());
    }

    #[test]
    fn no_front_matter_is_all_body() {
        let doc = parse("# Title\ntext").unwrap();
        assert_eq!((doc.body.as_str(), doc.get("name")), ("# Title\ntext", None));
        // CRLF files too.
        let doc = parse("---\r\nname: x\r\n---\r\nbody").unwrap();
        assert_eq!((doc.text("name").unwrap().as_deref(), doc.body.as_str()), (Some("x"), "body"));
    }
}
