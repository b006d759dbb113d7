//! `tandem trust`: the user trusts this folder's own files (its
//! `.tandem/settings.json`, `.tandem/settings.local.json` and `.mcp.json`)
//! as they are now, so that what they ask for applies; until then they may
//! only tighten ([`tandem::trust`]). `--list` shows the folders trusted,
//! `--revoke` forgets this one.

use std::path::Path;
use std::process::ExitCode;

use tandem::trust::{project_files, read_project_file, FileTrust, TrustSource, TrustStore};

use super::terminal::outln;

/// What `tandem trust` was asked.
pub enum TrustCommand {
    Trust,
    List,
    Revoke,
}

pub fn trust(root: &Path, command: TrustCommand) -> anyhow::Result<ExitCode> {
    match command {
        TrustCommand::Trust => {
            let trusted = tandem::host::trust_folder(root).map_err(anyhow::Error::msg)?;
            let applied = trusted.applied;
            outln!("Trusted {}: its settings files apply as they are now.", root.display());
            if !trusted.skipped.is_empty() {
                outln!("Not read, so not trusted (Tandem does not load them either):");
                for line in &trusted.skipped {
                    outln!("  {line}");
                }
            }
            if applied.is_empty() {
                outln!("(Nothing in them needed it.)");
            } else {
                outln!("Now applied, which was ignored until now:");
                for item in &applied {
                    let what = format!("{} {}", item.field, item.message);
                    outln!("  {}: {}", item.source.trim_end_matches(" (changed since you trusted the folder)"), what.trim());
                }
            }
            outln!("When one of these files changes, Tandem ignores it again until you run `tandem trust` once more.");
            Ok(ExitCode::SUCCESS)
        }
        TrustCommand::List => {
            let Some(store) = TrustStore::for_user() else { anyhow::bail!("cannot find the user's data folder (set XDG_DATA_HOME)") };
            let folders = store.list();
            if folders.is_empty() {
                outln!("No folder is trusted yet: run `tandem trust` in one.");
            }
            for (folder, record) in folders {
                outln!("{folder} (trusted {})", record.trusted_at);
                let trust = TrustSource::User.trust(Path::new(&folder));
                let mut relatives = project_files(Path::new(&folder));
                relatives.extend(record.files.keys().filter(|f| !relatives.contains(f)).cloned().collect::<Vec<_>>());
                for relative in &relatives {
                    // Read as the loaders read: a FIFO here must not hang the list.
                    let state = match read_project_file(Path::new(&folder), relative) {
                        Ok(Some(bytes)) => match trust.file(relative, &bytes) {
                            FileTrust::Trusted => "trusted".to_string(),
                            FileTrust::Changed => "changed since: ignored until trusted again".to_string(),
                            FileTrust::NotTrusted => "new since: ignored until trusted again".to_string(),
                        },
                        Ok(None) if record.files.contains_key(relative) => "gone".to_string(),
                        Ok(None) => continue,
                        Err(refusal) => format!("not read: {refusal}"),
                    };
                    outln!("  {relative}: {state}");
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        TrustCommand::Revoke => {
            let Some(store) = TrustStore::for_user() else { anyhow::bail!("cannot find the user's data folder (set XDG_DATA_HOME)") };
            if store.revoke(root)? {
                outln!("{} is no longer trusted: its files may only tighten again.", root.display());
            } else {
                outln!("{} was not trusted.", root.display());
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
