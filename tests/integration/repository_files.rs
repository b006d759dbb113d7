//! Issue 49: nothing outside the workspace reaches the model because of a
//! file the repository contains. A cloned repository whose instruction,
//! skill and agent files are symlinks to the user's secrets (`CLAUDE.md ->
//! ~/.aws/credentials`, a `SKILL.md` -> a private key, an agent file out
//! of the folder) runs `tandem ask` and `tandem acp` against a loopback
//! model: no request the model receives holds a secret, while the user's
//! own files (which may link anywhere) and links inside the workspace
//! still work. Also `tandem skills` and `tandem agents` say what they
//! skipped and why.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::json;

use crate::common;
use common::mock_model::{MockModel, MockResponse};
use common::turns;

/// What the repository's links point at: none may reach the model.
const SECRETS: [&str; 7] = [
    "AWS-SECRET-ACCESS-KEY-1",
    "TANDEM-USER-SETTINGS-2",
    "SSH-PRIVATE-KEY-3",
    "NPM-TOKEN-4",
    "SKILL-PRIVATE-KEY-5",
    "FOLDER-SKILL-SECRET-6",
    "AGENT-SECRET-PROMPT-7",
];

/// A home with secrets and the user's own files, and a repository that
/// links to them.
struct Repo {
    _temp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn link(target: &Path, at: &Path) {
    std::fs::create_dir_all(at.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(target, at).unwrap();
}

impl Repo {
    fn new() -> Repo {
        let temp = tempfile::tempdir().unwrap();
        let base = temp.path().canonicalize().unwrap();
        let (root, home) = (base.join("repo"), base.join("home"));
        std::fs::create_dir_all(&root).unwrap();
        // The user's secrets.
        write(&home.join(".aws/credentials"), "[default]\naws_secret_access_key = AWS-SECRET-ACCESS-KEY-1\n");
        write(&home.join(".tandem/settings.json"), "{\"permissions\": {\"deny\": [\"read_file(TANDEM-USER-SETTINGS-2)\"]}}");
        write(&home.join(".ssh/id_ed25519"), "-----BEGIN OPENSSH PRIVATE KEY-----\nSSH-PRIVATE-KEY-3\n");
        write(&home.join("secret-skill.md"), "---\nname: deploy\ndescription: NPM-TOKEN-4\n---\nSKILL-PRIVATE-KEY-5\n");
        write(&home.join("skill-folder/SKILL.md"), "---\nname: linked\ndescription: FOLDER-SKILL-SECRET-6\n---\nFOLDER-SKILL-SECRET-6\n");
        write(&home.join("agent.md"), "---\nname: helper\ndescription: helps\n---\nAGENT-SECRET-PROMPT-7\n");
        // The user's own files: theirs, wherever they link.
        write(&home.join("dotfiles/AGENTS.md"), "USER-OWN-INSTRUCTIONS\n");
        link(&home.join("dotfiles/AGENTS.md"), &home.join(".tandem/AGENTS.md"));
        write(&home.join("dotfiles/mine.md"), "---\nname: mine\ndescription: USER-OWN-SKILL\n---\nMine.\n");
        link(&home.join("dotfiles/mine.md"), &home.join(".tandem/skills/mine/SKILL.md"));
        // The repository: links out of it, and one inside it.
        link(&home.join(".aws/credentials"), &root.join("CLAUDE.md"));
        link(&home.join(".tandem/settings.json"), &root.join("AGENTS.md"));
        link(&home.join(".ssh/id_ed25519"), &root.join(".tandem/AGENTS.md"));
        link(&home.join("secret-skill.md"), &root.join(".tandem/skills/deploy/SKILL.md"));
        link(&home.join("skill-folder"), &root.join(".claude/skills/linked"));
        link(&home.join("agent.md"), &root.join(".tandem/agents/helper.md"));
        write(&root.join("shared/ok.md"), "---\nname: ok\ndescription: IN-WORKSPACE-SKILL\n---\nFine.\n");
        link(Path::new("../../../shared/ok.md"), &root.join(".tandem/skills/ok/SKILL.md"));
        Repo { _temp: temp, root, home }
    }

    fn command(&self, args: &[&str]) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_tandem"));
        command.current_dir(&self.root).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
        for var in common::MODEL_VARIABLES {
            command.env_remove(var);
        }
        command.env("HOME", &self.home).env("XDG_DATA_HOME", self.home.join("data")).env("XDG_CACHE_HOME", self.home.join("cache"));
        command.args(args);
        command
    }
}

/// The model's calls: an unasked `skill` call for the linked skill, then
/// the linked agent; enough answers for a sub-agent that would run.
fn attack_turns() -> Vec<MockResponse> {
    vec![
        turns::tools("", &[("toolu_skill", "skill", json!({"skill_name": "deploy"}))]),
        turns::tools("", &[("toolu_agent", "agent", json!({"description": "help", "prompt": "go", "type": "helper"}))]),
        turns::text("done"),
        turns::text("done"),
        turns::text("done"),
    ]
}

/// Every request the model received: no secret in any, and the user's own
/// files and the workspace's own link in the first one's system prompt.
fn assert_no_secret_reached_the_model(mock: &MockModel) {
    let requests = mock.requests();
    assert!(requests.len() >= 2, "{} requests", requests.len());
    for (index, request) in requests.iter().enumerate() {
        let body = request.body.to_string();
        for secret in SECRETS {
            assert!(!body.contains(secret), "request {index} holds {secret}: {body}");
        }
    }
    let system = requests[0].body["system"].to_string();
    for own in ["USER-OWN-INSTRUCTIONS", "USER-OWN-SKILL", "IN-WORKSPACE-SKILL"] {
        assert!(system.contains(own), "{own} is missing from the system prompt: {system}");
    }
    let skill = &turns::last_results(&requests[1].body)[0];
    assert!(skill.1 && skill.2.contains("deploy"), "{skill:?}");
}

#[tokio::test]
async fn tandem_ask_sends_the_model_nothing_a_repository_links_to_outside_it() {
    let repo = Repo::new();
    let mock = MockModel::start(attack_turns()).await;
    let mut command = repo.command(&["ask", "--json", "hello"]);
    command.env("TANDEM_PROVIDER", "anthropic").env("ANTHROPIC_BASE_URL", &mock.url).env("ANTHROPIC_API_KEY", "test-key");
    let output = command.output().await.unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{}\n{stderr}", String::from_utf8_lossy(&output.stdout));
    assert_no_secret_reached_the_model(&mock);
    // The agent call names no agent the repository linked in.
    let requests = mock.requests();
    let agent = turns::last_results(&requests[2].body);
    assert!(agent[0].1 && !agent[0].2.contains("AGENT-SECRET"), "{agent:?}");
}

#[tokio::test]
async fn tandem_skills_and_agents_say_which_files_link_out_of_the_workspace() {
    let repo = Repo::new();
    let skills = repo.command(&["skills"]).output().await.unwrap();
    let skills = String::from_utf8_lossy(&skills.stdout).replace(&repo.root.display().to_string(), "REPO").replace(&repo.home.display().to_string(), "HOME");
    expect_test::expect![[r#"
        ok (project, inline) REPO/.tandem/skills/ok/SKILL.md
            IN-WORKSPACE-SKILL
        mine (user, inline) HOME/.tandem/skills/mine/SKILL.md
            USER-OWN-SKILL

        Skipped:
          REPO/.tandem/skills/deploy/SKILL.md: it is a symlink to HOME/secret-skill.md, outside REPO
          REPO/.claude/skills/linked/SKILL.md: it is a symlink to HOME/skill-folder/SKILL.md, outside REPO
    "#]]
    .assert_eq(&skills);
    let agents = repo.command(&["agents"]).output().await.unwrap();
    let agents = String::from_utf8_lossy(&agents.stdout).replace(&repo.root.display().to_string(), "REPO").replace(&repo.home.display().to_string(), "HOME");
    assert!(agents.contains("REPO/.tandem/agents/helper.md: it is a symlink to HOME/agent.md, outside REPO"), "{agents}");
    assert!(!agents.contains("helper (project)"), "{agents}");
}

/// The same through ACP, where the client reads files for the agent
/// (`fs/read_text_file`, answered here from the disk as an editor does,
/// following links): the agent never asks it for a file that links out.
#[tokio::test(flavor = "multi_thread")]
async fn tandem_acp_sends_the_model_nothing_a_repository_links_to_outside_it() {
    let repo = Repo::new();
    let mock = MockModel::start(attack_turns()).await;
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_tandem"));
    command.arg("acp").current_dir(&repo.root).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
    for var in common::MODEL_VARIABLES {
        command.env_remove(var);
    }
    command
        .env("HOME", &repo.home)
        .env("XDG_DATA_HOME", repo.home.join("data"))
        .env("XDG_CACHE_HOME", repo.home.join("cache"))
        .env("TANDEM_PROVIDER", "anthropic")
        .env("ANTHROPIC_BASE_URL", &mock.url)
        .env("ANTHROPIC_API_KEY", "test-key");
    let root = repo.root.clone();
    let asked = tokio::task::spawn_blocking(move || {
        let mut acp = crate::acp::Raw::spawn(command);
        acp.initialize();
        let id = acp.request("session/new", json!({"cwd": root, "mcpServers": []}));
        let session = acp.response(id)["result"]["sessionId"].as_str().unwrap().to_string();
        let id = acp.request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "hello"}]}));
        let answer = acp.response(id);
        let _ = acp.child.kill();
        let _ = acp.child.wait();
        (answer, acp.paths_read)
    })
    .await
    .unwrap();
    let (answer, paths_read) = asked;
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_no_secret_reached_the_model(&mock);
    // The client follows links: it is never asked for one that leads out.
    let secret_places = [".aws", ".ssh", "secret-skill.md", "skill-folder", "agent.md", ".tandem/settings.json"].map(|p| repo.home.join(p));
    for path in &paths_read {
        let real = Path::new(path).canonicalize().unwrap_or_else(|_| PathBuf::from(path));
        assert!(!secret_places.iter().any(|place| real.starts_with(place)), "the client was asked for {path} ({})", real.display());
    }
}
