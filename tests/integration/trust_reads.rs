//! Issue 49: trusting a folder reads its files as the loaders do. A
//! repository whose `.tandem/settings.local.json` is a FIFO (no writer: a
//! plain read waits forever) and whose `.mcp.json` links to `/dev/zero` (a
//! plain read never ends, filling the memory) is trusted by `tandem
//! trust` and by the editor's "Trust Workspace" (`tandem.trust`): both
//! finish, say which files they skipped and why, and trust the rest; the
//! language server answers another request meanwhile.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::json;

use crate::common::lsp_client::Fixture;

/// `tandem trust` is given this long before the test says it hung.
const WAIT: Duration = Duration::from_secs(30);

/// A FIFO settings file, a `.mcp.json` linking to `/dev/zero`, and one
/// plain settings file that is trusted. The FIFO is read first (before the
/// fix, trusting hung there: the link was never reached).
fn plant(root: &Path) {
    std::fs::create_dir_all(root.join(".tandem")).unwrap();
    std::fs::write(root.join(".tandem/settings.json"), json!({"permissionMode": "acceptEdits"}).to_string()).unwrap();
    let status = Command::new("mkfifo").arg(root.join(".tandem/settings.local.json")).status().unwrap();
    assert!(status.success());
    std::os::unix::fs::symlink("/dev/zero", root.join(".mcp.json")).unwrap();
}

fn home_of(root: &Path) -> PathBuf {
    let home = root.parent().unwrap().join("home");
    std::fs::create_dir_all(&home).unwrap();
    home
}

/// `tandem ARGS` in `root`, killed (and the test failed) past [`WAIT`]:
/// whether it succeeded, and its output.
fn tandem(root: &Path, home: &Path, args: &[&str]) -> (bool, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .args(args)
        .current_dir(root)
        .env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let pid = child.id();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut { stdout }, &mut text);
        let _ = tx.send(text);
    });
    let Ok(stdout) = rx.recv_timeout(WAIT) else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("`tandem {}` (pid {pid}) did not finish within {WAIT:?}", args.join(" "));
    };
    (child.wait().unwrap().success(), stdout)
}

#[test]
fn tandem_trust_skips_a_fifo_and_a_link_to_dev_zero_and_says_so() {
    let f = Fixture::new(&[]);
    plant(&f.root);
    let home = home_of(&f.root);
    let (ok, said) = tandem(&f.root, &home, &["trust"]);
    assert!(ok, "{said}");
    assert!(said.contains(".tandem/settings.local.json: it is not a regular file (a FIFO); not trusted"), "{said}");
    assert!(said.contains(".mcp.json: it is a symlink to /dev/zero"), "{said}");
    // What was read is trusted; what was skipped is not (nor is it loaded).
    let (ok, listed) = tandem(&f.root, &home, &["trust", "--list"]);
    assert!(ok, "{listed}");
    assert!(listed.contains(".tandem/settings.json: trusted"), "{listed}");
    assert!(listed.contains(".tandem/settings.local.json: not read: it is not a regular file (a FIFO)"), "{listed}");
    assert!(listed.contains(".mcp.json: not read: it is a symlink to /dev/zero"), "{listed}");
    // `tandem doctor` reads them for its trust report the same way (the
    // FIFO is made a FIFO `.mcp.json`: as settings, it stops doctor).
    std::fs::remove_file(f.root.join(".tandem/settings.local.json")).unwrap();
    std::fs::remove_file(f.root.join(".mcp.json")).unwrap();
    assert!(Command::new("mkfifo").arg(f.root.join(".mcp.json")).status().unwrap().success());
    let (_, doctor) = tandem(&f.root, &home, &["doctor", "--json"]);
    let report: serde_json::Value = serde_json::from_str(&doctor).unwrap_or_else(|e| panic!("{e}: {doctor}"));
    assert_eq!(report["trust"]["files"][".mcp.json"], "not read: it is not a regular file (a FIFO)", "{report}");
    assert_eq!(report["trust"]["files"][".tandem/settings.json"], "trusted", "{report}");
}

#[test]
fn trust_workspace_in_the_editor_completes_and_the_server_answers_meanwhile() {
    let f = Fixture::new(&[("notes.txt", "notes\n")]);
    plant(&f.root);
    let home = home_of(&f.root);
    let (home_var, data_var) = (home.display().to_string(), home.join("data").display().to_string());
    let mut client = f.start_with_env(json!([]), json!({}), json!({}), &[("HOME", &home_var), ("XDG_DATA_HOME", &data_var)]);
    let trust = client.send_request("workspace/executeCommand", json!({"command": "tandem.trust", "arguments": []}));
    let other = client.send_request("workspace/executeCommand", json!({"command": "tandem.provider", "arguments": []}));
    // Both within the client's bounded wait: neither hangs the server.
    let answered = client.response(other);
    assert!(answered.get("result").is_some(), "{answered}");
    let trusted = client.response(trust);
    let skipped: Vec<&str> = trusted["result"]["skipped"].as_array().unwrap_or_else(|| panic!("{trusted}")).iter().map(|s| s.as_str().unwrap()).collect();
    assert!(skipped.iter().any(|s| s.starts_with(".tandem/settings.local.json: it is not a regular file (a FIFO)")), "{trusted}");
    assert!(skipped.iter().any(|s| s.starts_with(".mcp.json: it is a symlink to /dev/zero")), "{trusted}");
    assert_eq!(trusted["result"]["trusted"], json!(f.root), "{trusted}");
    client.shutdown();
}
