//! `tandem doctor` lists what is missing for a run here, each with its fix
//! (issue 54): the model's server asked with the run's key (a loopback
//! API that answers, one that refuses the key, a port nobody listens on),
//! and the other installed copies of Tandem with their versions (a
//! `tandem` on PATH, the Neovim plugin as lazy.nvim cloned it, the VS Code
//! extension), one of another version named with what to do.

use std::path::Path;
use std::process::Stdio;

use serde_json::Value;
use tokio::process::Command;

use crate::common::mock_model::{MockModel, MockResponse};

/// `tandem doctor --json` in a fresh folder with `home` as HOME and its
/// data folder, PATH holding only `path` and the system's folders.
async fn doctor(dir: &Path, home: &Path, path: &str, env: &[(&str, &str)]) -> Value {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tandem"));
    command.current_dir(dir).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
    for var in crate::common::MODEL_VARIABLES {
        command.env_remove(var);
    }
    command.env("HOME", home).env("XDG_DATA_HOME", home.join("data")).env("PATH", path).envs(env.iter().copied());
    let output = command.args(["doctor", "--json"]).output().await.expect("run tandem doctor");
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr)))
}

fn missing(report: &Value) -> Vec<(String, String)> {
    report["missing"].as_array().expect("missing").iter().map(|m| (m["what"].as_str().unwrap_or_default().to_string(), m["fix"].as_str().unwrap_or_default().to_string())).collect()
}

#[tokio::test]
async fn doctor_asks_the_models_server_with_the_key_and_says_the_fix() {
    let dir = tempfile::tempdir().expect("temp dir");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let work = dir.path().join("work");
    std::fs::create_dir_all(work.join(".git")).expect("workspace");
    let system = "/usr/bin:/bin";

    // A server that answers and takes the key: nothing missing.
    let good = MockModel::start(vec![MockResponse::error(200, r#"{"data": []}"#)]).await;
    let report = doctor(&work, &home, system, &[("ANTHROPIC_BASE_URL", &good.url), ("ANTHROPIC_API_KEY", "sk-ant-good")]).await;
    assert_eq!(report["modelServer"]["ok"], true, "{report:#}");
    let request = &good.requests()[0];
    assert_eq!((request.method.as_str(), request.path.as_str()), ("GET", "/v1/models"));
    assert_eq!(request.header("x-api-key"), Some("sk-ant-good"), "the run's key is what is checked");
    assert_eq!(missing(&report), vec![], "{report:#}");

    // One that refuses the key.
    let refusing = MockModel::start(vec![MockResponse::error(401, r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#)]).await;
    let report = doctor(&work, &home, system, &[("ANTHROPIC_BASE_URL", &refusing.url), ("ANTHROPIC_API_KEY", "sk-ant-wrong")]).await;
    assert_eq!(report["modelServer"]["ok"], false, "{report:#}");
    let found = missing(&report);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].0.contains("refuses the key (HTTP 401"), "{found:?}");
    assert!(found[0].1.contains("check the key: ANTHROPIC_API_KEY"), "{found:?}");
    assert!(!serde_json::to_string(&report).unwrap_or_default().contains("sk-ant-wrong"), "never a key");

    // A local server that is not running.
    let port = std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("address").port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let report = doctor(&work, &home, system, &[("OPENAI_BASE_URL", &url)]).await;
    let found = missing(&report);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].0.starts_with(&format!("the model's server: {url} is not reachable")), "{found:?}");
    assert!(found[0].1.starts_with("start the server"), "{found:?}");

    // No model at all: the fix names where to put one.
    let report = doctor(&work, &home, system, &[]).await;
    let found = missing(&report);
    assert!(found.iter().any(|(what, fix)| what == "a model: no model provider is configured" && fix.contains("~/.tandem/settings.json")), "{found:?}");
    assert!(report.get("modelServer").is_none(), "no server to ask: {report:#}");
}

#[tokio::test]
async fn doctor_lists_the_installed_copies_and_one_of_another_version() {
    let dir = tempfile::tempdir().expect("temp dir");
    let home = dir.path().join("home");
    let work = dir.path().join("work");
    std::fs::create_dir_all(work.join(".git")).expect("workspace");
    let version = env!("CARGO_PKG_VERSION");
    // A tandem of another version on PATH.
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    std::fs::write(bin.join("tandem"), "#!/bin/sh\necho 'tandem 0.0.7'\n").expect("old tandem");
    std::process::Command::new("chmod").arg("755").arg(bin.join("tandem")).status().expect("chmod");
    // The Neovim plugin as lazy.nvim cloned it, of this version.
    let plugin = home.join("data/nvim/lazy/tandem/editors/nvim/lua/tandem");
    std::fs::create_dir_all(&plugin).expect("plugin");
    std::fs::write(plugin.join("version.lua"), format!("-- the plugin's version\nreturn '{version}'\n")).expect("version.lua");
    // The VS Code extension, of another version.
    let extension = home.join(".vscode/extensions/tandem.tandem-0.0.9-linux-x64");
    std::fs::create_dir_all(&extension).expect("extension");
    std::fs::write(extension.join("package.json"), r#"{"name": "tandem", "version": "0.0.9"}"#).expect("package.json");

    let path = format!("{}:/usr/bin:/bin", bin.display());
    let script = dir.path().join("script.json");
    std::fs::write(&script, r#"{"turns": []}"#).expect("script");
    let script = script.display().to_string();
    let report = doctor(&work, &home, &path, &[("TANDEM_PROVIDER", "scripted"), ("TANDEM_SCRIPT", &script)]).await;
    let installed: Vec<(String, String)> =
        report["installed"].as_array().expect("installed").iter().map(|c| (c["what"].as_str().unwrap_or_default().to_string(), c["version"].as_str().unwrap_or("?").to_string())).collect();
    assert_eq!(
        installed,
        [("tandem on PATH".to_string(), "0.0.7".to_string()), ("Neovim plugin (lazy.nvim)".to_string(), version.to_string()), ("VS Code extension".to_string(), "0.0.9".to_string())],
        "{report:#}"
    );
    let found = missing(&report);
    let whats: Vec<&str> = found.iter().map(|(what, _)| what.as_str()).collect();
    assert_eq!(found.len(), 2, "the lazy.nvim plugin is this version: {whats:?}");
    assert!(found[0].0.contains(&format!("tandem on PATH at {}/tandem is 0.0.7, this tandem {version}", bin.display())), "{found:?}");
    assert!(found[0].1.contains(&format!("cargo install tandem-agent --locked --version {version}")), "{found:?}");
    assert!(found[1].0.contains("VS Code extension") && found[1].0.contains("is 0.0.9"), "{found:?}");
    assert!(found[1].1.contains(&format!("the release v{version}")), "{found:?}");

    // In words too, each with its fix.
    let mut command = Command::new(env!("CARGO_BIN_EXE_tandem"));
    for var in crate::common::MODEL_VARIABLES {
        command.env_remove(var);
    }
    let output = command
        .current_dir(&work)
        .env("HOME", &home)
        .env("XDG_DATA_HOME", home.join("data"))
        .env("PATH", &path)
        .env("TANDEM_PROVIDER", "scripted")
        .env("TANDEM_SCRIPT", &script)
        .arg("doctor")
        .output()
        .await
        .expect("run tandem doctor");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains(&format!("  tandem on PATH: WARNING: 0.0.7 ({}/tandem)", bin.display())), "{text}");
    assert!(text.contains(&format!("  Neovim plugin (lazy.nvim): {version} (")), "{text}");
    assert!(text.contains("missing:\n  - the same version: the tandem on PATH"), "{text}");
    assert!(text.contains(&format!("    fix: one version for all: replace {}/tandem", bin.display())), "{text}");
}

/// A setting that stops the model names where its value was set: the
/// user's settings file (its "provider", a variable of its "env"), or the
/// environment variable; never TANDEM_PROVIDER for a value from a file
/// (issue 54). A base URL that is no URL is refused where it was set.
#[tokio::test]
async fn a_bad_value_is_named_where_it_was_set() {
    let dir = tempfile::tempdir().expect("temp dir");
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join(".tandem")).expect("home");
    let work = dir.path().join("work");
    std::fs::create_dir_all(work.join(".git")).expect("workspace");
    let file = home.join(".tandem/settings.json");
    let error = |report: &Value| report["provider"]["error"].as_str().unwrap_or_default().to_string();

    std::fs::write(&file, r#"{"provider": "anthropic"}"#).expect("settings");
    let report = doctor(&work, &home, "/usr/bin:/bin", &[]).await;
    let said = error(&report);
    assert!(said.starts_with("the anthropic provider needs ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)"), "{said}");
    assert!(said.ends_with(&format!("(provider is anthropic (\"provider\" in {}))", file.display())), "{said}");
    assert!(!said.contains("TANDEM_PROVIDER"), "the value came from the file: {said}");

    std::fs::write(&file, r#"{"provider": "openai", "env": {"OPENAI_BASE_URL": "localhost:11434/v1"}}"#).expect("settings");
    let said = error(&doctor(&work, &home, "/usr/bin:/bin", &[]).await);
    assert_eq!(said, format!("\"localhost:11434/v1\" (OPENAI_BASE_URL in the \"env\" of {}) is not a base URL: use http://HOST[:PORT][/PATH] or https://…", file.display()));

    std::fs::write(&file, r#"{"env": {"TANDEM_PROVIDER": "gemini"}}"#).expect("settings");
    let said = error(&doctor(&work, &home, "/usr/bin:/bin", &[]).await);
    assert!(said.starts_with(&format!("\"gemini\" (TANDEM_PROVIDER in the \"env\" of {}) is not a provider", file.display())), "{said}");

    // The same from the environment names the variable.
    std::fs::remove_file(&file).expect("no settings");
    let said = error(&doctor(&work, &home, "/usr/bin:/bin", &[("OPENAI_BASE_URL", "localhost:11434/v1")]).await);
    assert!(said.starts_with("OPENAI_BASE_URL=localhost:11434/v1 is not a base URL"), "{said}");
    let said = error(&doctor(&work, &home, "/usr/bin:/bin", &[("TANDEM_PROVIDER", "anthropic")]).await);
    assert!(said.ends_with("(provider (TANDEM_PROVIDER) is anthropic)"), "{said}");
}
