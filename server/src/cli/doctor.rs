//! `tandem doctor`: what this machine and this folder's settings give
//! Tandem, in plain words, for the user to check before a run (and for
//! `:checkhealth tandem`, which runs `tandem doctor --json`). Today:
//! whether shell commands run in a sandbox, and why not.

use std::process::ExitCode;

use tandem::sandbox::Availability;

/// Print the report; exit 1 when something the user expects is missing
/// (no sandbox can start), 0 otherwise (a sandbox switched off by the
/// user's own settings is their choice, said but not a failure). With
/// `json`, one object: `{"version", "workspace", "sandbox": {"state":
/// "ready" | "disabled" | "unavailable", "description", "notice"?}}`.
#[allow(clippy::print_stdout)]
pub fn doctor(root: &std::path::Path, json: bool) -> anyhow::Result<ExitCode> {
    let settings = super::ask::load_settings(root)?;
    let sandbox = tandem::host::sandbox(&settings, &[root.to_path_buf()]);
    let ok = !matches!(sandbox, Availability::Unavailable(_));
    if json {
        let state = match sandbox {
            Availability::Ready(_) => "ready",
            Availability::Disabled => "disabled",
            Availability::Unavailable(_) => "unavailable",
        };
        let mut report = serde_json::json!({
            "version": env!("CARGO_PKG_VERSION"),
            "workspace": root,
            "sandbox": {"state": state, "description": sandbox.describe()},
        });
        if let Some(notice) = sandbox.notice() {
            report["sandbox"]["notice"] = serde_json::json!(notice);
        }
        println!("{report}");
        return Ok(if ok { ExitCode::SUCCESS } else { ExitCode::from(1) });
    }
    println!("tandem {}", env!("CARGO_PKG_VERSION"));
    println!("workspace: {}", root.display());
    println!("sandbox: {}{}", if ok { "" } else { "WARNING: " }, sandbox.describe());
    if matches!(sandbox, Availability::Disabled) {
        if let Some(notice) = sandbox.notice() {
            println!("  {notice}");
        }
    }
    Ok(if ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
