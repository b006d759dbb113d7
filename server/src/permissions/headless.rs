//! The terminal's prompter (`tandem ask`, `tandem chat`, the demo): the
//! [`Gate`] decides; what it asks goes to the terminal as a numbered
//! choice, and with no terminal (CI, a pipe, a script) nobody is asked: the
//! gate's denial tells the model how to get the permission.

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;

use super::gate::{Answer, Gate, Prompter, Review};
use super::policy::Policy;
use super::ProjectRules;
use crate::tools::PermissionRequest;

pub const ALLOW_ONCE: &str = "Allow once";
pub const ALWAYS_ALLOW: &str = "Always allow";
pub const ALWAYS_ALLOW_SAVE: &str = "Always allow, saved in .tandem/settings.local.json";
pub const DENY: &str = "Deny";
pub const APPLY: &str = "Apply";
pub const REJECT: &str = "Reject";

/// Someone at a terminal. `choose` shows `question` and returns the chosen
/// option (`None`: no answer, which is a denial).
#[async_trait]
pub trait Terminal: Send + Sync {
    async fn choose(&self, question: &str, options: &[&str]) -> Option<String>;
}

/// Asks at a terminal.
pub struct TerminalPrompter(pub Arc<dyn Terminal>);

/// The gate of a run outside the editor.
pub type HeadlessGate = Gate<TerminalPrompter>;

/// The gate of a run at `terminal` (`None` when no one can answer);
/// "Always allow, saved" writes to `project_rules`.
pub fn gate(policy: Policy, terminal: Option<Arc<dyn Terminal>>, project_rules: Arc<dyn ProjectRules>) -> HeadlessGate {
    Gate::new(policy, terminal.map(TerminalPrompter), project_rules)
}

#[async_trait]
impl Prompter for TerminalPrompter {
    async fn ask(&self, _request: &PermissionRequest, question: &str, always: bool) -> Answer {
        let mut options = vec![ALLOW_ONCE];
        if always {
            options.extend([ALWAYS_ALLOW, ALWAYS_ALLOW_SAVE]);
        }
        options.push(DENY);
        match self.0.choose(question, &options).await.as_deref() {
            Some(ALLOW_ONCE) => Answer::AllowOnce,
            Some(ALWAYS_ALLOW) => Answer::AllowAlways,
            Some(ALWAYS_ALLOW_SAVE) => Answer::AllowInProject,
            Some(_) => Answer::Deny("the user denied it".into()),
            None => Answer::Deny("no answer at the terminal".into()),
        }
    }

    async fn review(&self, request: &PermissionRequest, _path: &Path) -> Review {
        let mut question = format!("Tandem: apply this change ({} {})?", request.tool, request.summary);
        if let Some(preview) = request.preview.as_deref().filter(|p| !p.is_empty()) {
            question.push_str("\n\n");
            question.push_str(preview);
        }
        match self.0.choose(&question, &[APPLY, REJECT]).await.as_deref() {
            Some(APPLY) => Review::Apply,
            _ => Review::Reject("the user rejected the change".into()),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::permissions::PermissionRules;
    use crate::tools::permission_mode::PermissionMode;
    use crate::tools::{PermissionDecision, PermissionGate, ToolKind};
    use std::sync::Mutex;

    /// A terminal that answers from a list and keeps the questions.
    struct Scripted {
        answers: Mutex<Vec<&'static str>>,
        questions: Mutex<Vec<(String, Vec<String>)>>,
    }

    #[async_trait]
    impl Terminal for Scripted {
        async fn choose(&self, question: &str, options: &[&str]) -> Option<String> {
            self.questions.lock().unwrap().push((question.to_string(), options.iter().map(|o| o.to_string()).collect()));
            let mut answers = self.answers.lock().unwrap();
            if answers.is_empty() { None } else { Some(answers.remove(0).to_string()) }
        }
    }

    fn shell(command: &str) -> PermissionRequest {
        PermissionRequest {
            tool: "run_shell".into(),
            kind: ToolKind::Execute { command: command.into() },
            read_only: false,
            summary: command.lines().next().unwrap_or("").into(),
            preview: None,
            input: serde_json::json!({"command": command}),
            accept_edits: false,
            run: None,
            grants: Default::default(),
            hook: Default::default(),
        }
    }

    fn headless(dir: &std::path::Path, terminal: Option<Arc<dyn Terminal>>) -> HeadlessGate {
        let policy = Policy::new(PermissionMode::Default, &PermissionRules::default(), &[dir.to_path_buf()]);
        gate(policy, terminal, Arc::new(super::super::NoProjectRules))
    }

    #[tokio::test]
    async fn with_no_one_to_ask_the_model_is_told_how_to_get_permission() {
        let dir = tempfile::tempdir().unwrap();
        let policy = headless(dir.path(), None);
        assert_eq!(policy.decide(&shell("git status")).await, PermissionDecision::Allow);
        let PermissionDecision::Deny(reason) = policy.decide(&shell("git push")).await else { panic!() };
        assert!(reason.contains("needs permission") && reason.contains(".tandem/settings.json") && reason.contains("run_shell(git push)"), "{reason}");
        let edit = PermissionRequest {
            tool: "edit_file".into(),
            kind: ToolKind::Edit { path: dir.path().join("a.rs") },
            read_only: false,
            summary: "a.rs".into(),
            preview: Some("-a\n+b".into()),
            input: serde_json::json!({}),
            accept_edits: false,
            run: None,
            grants: Default::default(),
            hook: Default::default(),
        };
        expect_test::expect!["edit_file a.rs needs permission; rerun with `--permission-mode acceptEdits` or allow it in `.tandem/settings.json`"]
            .assert_eq(&match policy.decide(&edit).await { PermissionDecision::Deny(r) => r, other => format!("{other:?}") });
    }

    #[tokio::test]
    async fn multi_line_command_prompt_shows_every_line_and_why() {
        let dir = tempfile::tempdir().unwrap();
        let terminal = Arc::new(Scripted { answers: Mutex::new(vec![DENY]), questions: Mutex::default() });
        let policy = headless(dir.path(), Some(terminal.clone()));
        let decision = policy.decide(&shell("echo building the project\ntouch X")).await;
        assert_eq!(decision, PermissionDecision::Deny("the user denied it".into()));
        let questions = terminal.questions.lock().unwrap();
        expect_test::expect![[r#"
            Tandem wants to run a shell command:
            echo building the project
            touch X

            Asked because:
            - `touch X` is not known to be read-only

            "Always allow" adds: run_shell(touch X)
            options: Allow once | Always allow | Always allow, saved in .tandem/settings.local.json | Deny"#]]
        .assert_eq(&format!("{}\noptions: {}", questions[0].0, questions[0].1.join(" | ")));
    }

    #[tokio::test]
    async fn always_allow_saved_goes_to_the_project_rules_and_stays_narrow() {
        let dir = tempfile::tempdir().unwrap();
        let terminal = Arc::new(Scripted { answers: Mutex::new(vec![ALWAYS_ALLOW_SAVE, DENY]), questions: Mutex::default() });
        let saved = Arc::new(Saved::default());
        let rules = Policy::new(PermissionMode::Default, &PermissionRules::default(), &[dir.path().to_path_buf()]);
        let policy = gate(rules, Some(terminal.clone()), saved.clone());
        assert_eq!(policy.decide(&shell("git push origin main")).await, PermissionDecision::Approved);
        // The rule covers the same subcommand without asking again...
        assert_eq!(policy.decide(&shell("git push origin other")).await, PermissionDecision::Allow);
        // ...and nothing else.
        assert!(matches!(policy.decide(&shell("git reset --hard")).await, PermissionDecision::Deny(_)));
        assert_eq!(terminal.questions.lock().unwrap().len(), 2);
        // The project's rules got the narrow rule (the settings layer writes it
        // to .tandem/settings.local.json: its own tests).
        assert_eq!(*saved.0.lock().unwrap(), vec![vec!["run_shell(git push:*)".to_string()]]);
    }

    /// The rules "Always allow, saved" keeps.
    #[derive(Default)]
    struct Saved(Mutex<Vec<Vec<String>>>);

    impl ProjectRules for Saved {
        fn save_allow(&self, rules: &[String]) -> Result<std::path::PathBuf, String> {
            self.0.lock().unwrap().push(rules.to_vec());
            Ok(".tandem/settings.local.json".into())
        }
    }
}
