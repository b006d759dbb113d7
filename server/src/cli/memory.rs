//! `tandem memory`: the user's notes for this project, which every run's
//! system prompt holds ([`tandem::workspace::memory`]). `list` (the
//! default) shows each entry's name and first line, `show NAME` the whole
//! entry, `add NAME TEXT` writes one, `edit NAME` opens it in `$VISUAL` or
//! `$EDITOR` (a new one starts empty), `remove NAME` deletes it.

use std::process::ExitCode;

use tandem::workspace::memory::Memory;
use tandem::workspace::Workspace;

use super::terminal::outln;

/// What `tandem memory` was asked.
pub enum MemoryCommand {
    List,
    Show(String),
    Add(String, String),
    Edit(String),
    Remove(String),
}

pub fn memory(workspace: &Workspace, command: MemoryCommand) -> anyhow::Result<ExitCode> {
    let Some(home) = workspace.home() else { anyhow::bail!("cannot find your home folder (set HOME)") };
    let memory = Memory::at(home, workspace.root());
    match command {
        MemoryCommand::List => {
            let (entries, problems) = memory.entries();
            if entries.is_empty() {
                outln!("No memory for this project yet ({}). `tandem memory add NAME TEXT` writes an entry; the agent may propose some, which you accept or decline.", memory.dir().display());
            } else {
                outln!("Memory for this project ({}), in every run's system prompt:", memory.dir().display());
                for entry in &entries {
                    let first = entry.text.lines().find(|l| !l.trim().is_empty()).unwrap_or_default();
                    let first: String = first.chars().take(80).collect();
                    outln!("  {}: {}", entry.name, first);
                }
            }
            for problem in &problems {
                outln!("Not read: {problem}");
            }
        }
        MemoryCommand::Show(name) => {
            let entry = memory.read(&name).map_err(anyhow::Error::msg)?;
            outln!("{}", entry.text.trim_end());
        }
        MemoryCommand::Add(name, text) => {
            let path = memory.save(&name, &text).map_err(anyhow::Error::msg)?;
            outln!("Saved {}.", path.display());
        }
        MemoryCommand::Edit(name) => {
            let path = memory.path_of(&name).map_err(anyhow::Error::msg)?;
            let Some(editor) = tandem::environment::var("VISUAL").or_else(|| tandem::environment::var("EDITOR")).filter(|e| !e.trim().is_empty()) else {
                anyhow::bail!("set VISUAL or EDITOR to edit {} (or use `tandem memory add {name} TEXT`)", path.display());
            };
            let new = !path.exists();
            if new {
                // The editor opens the folder's new file; the folder must be there.
                memory.save(&name, "(new entry)").map_err(anyhow::Error::msg)?;
            }
            let mut words = editor.split_whitespace();
            let program = words.next().unwrap_or_default();
            let status = std::process::Command::new(program).args(words).arg(&path).status();
            let failed = match status {
                Ok(status) if status.success() => None,
                Ok(status) => Some(format!("{program} ended with {status}")),
                Err(err) => Some(format!("cannot start {program}: {err}")),
            };
            if let Some(failed) = failed {
                // A new entry the editor never wrote is not left behind.
                if new {
                    let _ = memory.remove(&name);
                    anyhow::bail!("{failed}; no entry was made");
                }
                anyhow::bail!("{failed}; {} is as it was left", path.display());
            }
            outln!("Saved {}.", path.display());
        }
        MemoryCommand::Remove(name) => {
            let path = memory.remove(&name).map_err(anyhow::Error::msg)?;
            outln!("Removed {}.", path.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}
