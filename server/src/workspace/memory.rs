//! The user's memory of a project: notes in
//! `~/.tandem/memory/<project>/`, one Markdown file per entry (`NAME.md`),
//! `<project>` named as the project's other per-user folders are (its
//! folder's name and a hash of its path, [`project_dir_name`]).
//!
//! The user owns them: they live in their home, never in the repository,
//! `tandem memory` lists, shows, adds, edits and removes them, and the
//! agent's proposals are saved only when the user accepts them. Every run's
//! system prompt holds them, bounded ([`MAX_PROMPT_CHARS`]), as the user's
//! own instructions. Being the user's, they are read wherever they link.

use std::path::{Path, PathBuf};

use super::project_dir_name;

/// One entry is at most this large; a larger one is not read.
pub const MAX_ENTRY_BYTES: u64 = 16 * 1024;
/// Entries read, at most (the first by name).
pub const MAX_ENTRIES: usize = 100;
/// Characters of memory in the system prompt, at most.
pub const MAX_PROMPT_CHARS: usize = 8_000;

/// A project's memory folder.
#[derive(Debug, Clone)]
pub struct Memory {
    dir: PathBuf,
}

/// One entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub path: PathBuf,
    pub text: String,
}

impl Memory {
    /// The memory of the project at `root` (canonical) for the user whose
    /// home is `home`.
    pub fn at(home: &Path, root: &Path) -> Memory {
        Memory { dir: home.join(".tandem").join("memory").join(project_dir_name(root)) }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The entries, by name, and the files that could not be read, with why.
    pub fn entries(&self) -> (Vec<Entry>, Vec<String>) {
        let Ok(listing) = std::fs::read_dir(&self.dir) else { return (Vec::new(), Vec::new()) };
        let mut names: Vec<String> = listing
            .filter_map(Result::ok)
            .filter_map(|entry| entry.file_name().to_str().and_then(|f| f.strip_suffix(".md")).map(str::to_string))
            .filter(|name| valid_name(name).is_ok())
            .collect();
        names.sort();
        let mut problems = Vec::new();
        if names.len() > MAX_ENTRIES {
            problems.push(format!("{} more entries not read: at most {MAX_ENTRIES} are", names.len() - MAX_ENTRIES));
            names.truncate(MAX_ENTRIES);
        }
        let mut entries = Vec::new();
        for name in names {
            match self.read(&name) {
                Ok(entry) => entries.push(entry),
                Err(err) => problems.push(err),
            }
        }
        (entries, problems)
    }

    /// The file of the entry `name` (a `.md` ending is allowed).
    pub fn path_of(&self, name: &str) -> Result<PathBuf, String> {
        let name = name.strip_suffix(".md").unwrap_or(name);
        valid_name(name)?;
        Ok(self.dir.join(format!("{name}.md")))
    }

    pub fn read(&self, name: &str) -> Result<Entry, String> {
        let path = self.path_of(name)?;
        let name = name.strip_suffix(".md").unwrap_or(name).to_string();
        match crate::confined_file::read(&path, None, MAX_ENTRY_BYTES) {
            Ok(Some(bytes)) => match String::from_utf8(bytes) {
                Ok(text) => Ok(Entry { name, path, text }),
                Err(_) => Err(format!("{}: it is not UTF-8 text", path.display())),
            },
            Ok(None) => Err(format!("no memory entry \"{name}\" (in {})", self.dir.display())),
            Err(refusal) => Err(format!("{}: {refusal}", path.display())),
        }
    }

    /// Write the entry (new or replacing), creating the folder (only the
    /// user may read it). Returns its file.
    pub fn save(&self, name: &str, text: &str) -> Result<PathBuf, String> {
        let path = self.path_of(name)?;
        if text.trim().is_empty() {
            return Err("the entry is empty".to_string());
        }
        if text.len() as u64 > MAX_ENTRY_BYTES {
            return Err(format!("the entry is {} bytes; an entry holds at most {MAX_ENTRY_BYTES}", text.len()));
        }
        create_private_dir(&self.dir).map_err(|err| format!("cannot create {}: {err}", self.dir.display()))?;
        let mut text = text.trim_end().to_string();
        text.push('\n');
        super::atomic_write(&path, text.as_bytes(), None).map_err(|err| match err {
            super::DiskWriteError::Io(err) => format!("cannot write {}: {err}", path.display()),
            other => format!("cannot write {}: {other:?}", path.display()),
        })?;
        Ok(path)
    }

    pub fn remove(&self, name: &str) -> Result<PathBuf, String> {
        let path = self.path_of(name)?;
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(path),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Err(format!("no memory entry \"{name}\" (in {})", self.dir.display())),
            Err(err) => Err(format!("cannot remove {}: {err}", path.display())),
        }
    }

    /// The system-prompt section (empty without entries): every entry
    /// under its name, at most [`MAX_PROMPT_CHARS`] in all, a cut said.
    pub fn prompt_section(&self) -> String {
        let (entries, problems) = self.entries();
        for problem in &problems {
            tracing::warn!("memory: {problem}");
        }
        if entries.is_empty() {
            return String::new();
        }
        let mut out = String::from(
            "# Memory\nNotes the user keeps for this project (they list and edit them with `tandem memory`). Follow them as the user's own instructions.\n",
        );
        let mut left = MAX_PROMPT_CHARS;
        for entry in &entries {
            let part = format!("\n## {}\n{}\n", entry.name, entry.text.trim_end());
            let count = part.chars().count();
            if count > left {
                out.extend(part.chars().take(left));
                out.push_str(&format!("\n[... memory cut at {MAX_PROMPT_CHARS} characters; `tandem memory` shows every entry]\n"));
                tracing::warn!("memory cut at {MAX_PROMPT_CHARS} characters in the system prompt");
                break;
            }
            left -= count;
            out.push_str(&part);
        }
        out
    }
}

/// Letters, digits, `-`, `_`, `.`; at most 64; not starting with `.`.
fn valid_name(name: &str) -> Result<(), String> {
    let fine = !name.is_empty() && name.len() <= 64 && !name.starts_with('.') && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if fine {
        Ok(())
    } else {
        Err(format!("\"{name}\" is not an entry name: use 1 to 64 letters, digits, '-', '_' or '.', not starting with '.'"))
    }
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_saved_listed_bounded_and_removed() {
        let home = tempfile::tempdir().unwrap();
        let memory = Memory::at(home.path(), Path::new("/work/app"));
        assert!(memory.dir().starts_with(home.path().join(".tandem/memory")));
        assert!(memory.dir().file_name().unwrap().to_string_lossy().starts_with("app-"), "{}", memory.dir().display());
        assert_eq!(memory.prompt_section(), "");
        memory.save("testing", "Run `make check` before committing.").unwrap();
        memory.save("b-style.md", "Tabs.\n\n").unwrap();
        for bad in ["../escape", ".hidden", "", "a/b", &"x".repeat(65)] {
            assert!(memory.save(bad, "x").is_err(), "{bad:?}");
        }
        assert!(memory.save("empty", "  \n").is_err());
        assert!(memory.save("huge", &"x".repeat(MAX_ENTRY_BYTES as usize + 1)).is_err());
        let (entries, problems) = memory.entries();
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(entries.iter().map(|e| (e.name.as_str(), e.text.as_str())).collect::<Vec<_>>(), [("b-style", "Tabs.\n"), ("testing", "Run `make check` before committing.\n")]);
        expect_test::expect![[r#"
            # Memory
            Notes the user keeps for this project (they list and edit them with `tandem memory`). Follow them as the user's own instructions.

            ## b-style
            Tabs.

            ## testing
            Run `make check` before committing.
        "#]]
        .assert_eq(&memory.prompt_section());
        memory.remove("b-style").unwrap();
        assert!(memory.remove("b-style").unwrap_err().contains("no memory entry"));
        assert_eq!(memory.entries().0.len(), 1);
        // Bounded: entries past the cap are cut, and it is said.
        for n in 0..3 {
            memory.save(&format!("long{n}"), &"y".repeat(MAX_ENTRY_BYTES as usize - 10)).unwrap();
        }
        let section = memory.prompt_section();
        assert!(section.chars().count() < MAX_PROMPT_CHARS + 400, "{}", section.len());
        assert!(section.ends_with("[... memory cut at 8000 characters; `tandem memory` shows every entry]\n"));
    }
}
