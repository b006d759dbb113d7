//! The terminal's prompter (`tandem ask`, `tandem chat`, the demo): the
//! [`Gate`] decides; what it asks goes to the terminal as a numbered
//! choice, and with no terminal (CI, a pipe, a script) nobody is asked: the
//! gate's denial tells the model how to get the permission.

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;

use super::gate::{allow_host_label, allow_host_saved_label, told_instead, Answer, Gate, Offers, Prompter, Review, INSTEAD_PROMPT};
pub use super::gate::ALLOW_LIKE_THIS;
pub use super::gate::TELL_INSTEAD;
use super::policy::Policy;
use super::ProjectRules;
use crate::protocol::{HunkComment, HunkDecision};
use crate::tools::ports::network::HostAnswer;
use crate::tools::PermissionRequest;

pub const ALLOW_ONCE: &str = "Allow once";
pub const ALWAYS_ALLOW: &str = "Always allow";
pub const ALWAYS_ALLOW_SAVE: &str = "Always allow, saved in .tandem/settings.local.json";
pub const DENY: &str = "Deny";
pub const APPLY: &str = "Apply";
pub const REJECT: &str = "Reject";
pub const APPLY_HUNK: &str = "Apply this hunk";
pub const SKIP_HUNK: &str = "Skip this hunk";
pub const APPLY_REST: &str = "Apply all the rest";
pub const ALLOW_EDITS: &str = "Allow edits for this session";
pub const APPLY_COMMENTED: &str = "Apply, with a comment";
pub const COMMENT_HUNK: &str = "Comment on this hunk";
/// The question after [`APPLY_COMMENTED`] and [`COMMENT_HUNK`].
pub const COMMENT_PROMPT: &str = "Your comment for Tandem:";

/// Someone at a terminal. `choose` shows `question` and returns the chosen
/// option (`None`: no answer, which is a denial).
#[async_trait]
pub trait Terminal: Send + Sync {
    async fn choose(&self, question: &str, options: &[&str]) -> Option<String>;

    /// Ask for a line of text (`None`: no answer).
    async fn line(&self, prompt: &str) -> Option<String> {
        let _ = prompt;
        None
    }
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
    async fn ask(&self, _request: &PermissionRequest, question: &str, offers: Offers) -> Answer {
        let mut options = vec![ALLOW_ONCE];
        if offers.like_this {
            options.push(ALLOW_LIKE_THIS);
        }
        if offers.always {
            options.extend([ALWAYS_ALLOW, ALWAYS_ALLOW_SAVE]);
        }
        options.extend([DENY, TELL_INSTEAD]);
        match self.0.choose(question, &options).await.as_deref() {
            Some(ALLOW_ONCE) => Answer::AllowOnce,
            Some(ALWAYS_ALLOW) => Answer::AllowAlways,
            Some(ALLOW_LIKE_THIS) => Answer::AllowLikeThis,
            Some(ALWAYS_ALLOW_SAVE) => Answer::AllowInProject,
            Some(TELL_INSTEAD) => Answer::Deny(told_instead(DENIED, self.said().await.as_deref())),
            Some(_) => Answer::Deny(DENIED.into()),
            None => Answer::Deny("no answer at the terminal".into()),
        }
    }

    /// "Allow HOST for this session", "Always allow HOST" (saved in the
    /// user's settings) or "Deny".
    async fn ask_host(&self, _request: &PermissionRequest, host: &str, question: &str) -> HostAnswer {
        let (session, saved) = (allow_host_label(host), allow_host_saved_label(host));
        match self.0.choose(question, &[&session, &saved, DENY]).await {
            Some(chosen) if chosen == session => HostAnswer::Session,
            Some(chosen) if chosen == saved => HostAnswer::Saved,
            _ => HostAnswer::Deny,
        }
    }

    /// The edit's diff, then what to do with it: apply, reject, allow
    /// edits for the session, or say what to do instead. A change of
    /// several hunks by `edit_file` or `write_file` is put hunk by hunk
    /// (`y` apply it, `n` skip it, `a` apply it and the rest), when the
    /// whole diff is shown.
    async fn review(&self, request: &PermissionRequest, _path: &Path) -> Review {
        let title = format!("Tandem: apply this change ({} {})?", request.tool, request.summary);
        let preview = request.preview.as_deref().unwrap_or("");
        let hunks = hunks_of(preview);
        let by_hunk = hunks.len() > 1 && matches!(request.tool.as_str(), "edit_file" | "write_file") && !preview.contains("(diff cut:");
        // The user's words may go with an edit tool's change (an undo's
        // restore is all or nothing, and has no model to read them).
        let commentable = matches!(request.tool.as_str(), "edit_file" | "write_file");
        if !by_hunk {
            let question = if preview.is_empty() { title } else { format!("{title}\n\n{preview}") };
            let mut options = vec![APPLY, REJECT, ALLOW_EDITS, TELL_INSTEAD];
            if commentable {
                options.push(APPLY_COMMENTED);
            }
            return match self.0.choose(&question, &options).await.as_deref() {
                Some(APPLY) => Review::Apply,
                Some(ALLOW_EDITS) => Review::ApplyAndAcceptEdits,
                Some(TELL_INSTEAD) => self.instead().await,
                Some(APPLY_COMMENTED) => {
                    let comments = self.comment(0, HunkDecision::Accepted).await.into_iter().collect();
                    Review::Hunks { keep: vec![true], accept_edits: false, comments }
                }
                _ => Review::Reject(REJECTED.into()),
            };
        }
        let count = hunks.len();
        let mut keep = Vec::with_capacity(count);
        let mut accept_edits = false;
        // The user's words on each hunk, given before its answer.
        let mut said: Vec<Option<String>> = vec![None; count];
        let mut index = 0;
        while index < count {
            let question = format!("{title} Hunk {} of {count}:\n\n{}", index + 1, hunks[index]);
            match self.0.choose(&question, &[APPLY_HUNK, SKIP_HUNK, APPLY_REST, ALLOW_EDITS, TELL_INSTEAD, COMMENT_HUNK]).await.as_deref() {
                // Asked again, the comment kept for the answer that follows.
                Some(COMMENT_HUNK) => {
                    said[index] = self.0.line(&format!("{COMMENT_PROMPT} ")).await.map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
                    continue;
                }
                Some(APPLY_HUNK) => keep.push(true),
                Some(SKIP_HUNK) => keep.push(false),
                Some(APPLY_REST) => break,
                Some(ALLOW_EDITS) => {
                    accept_edits = true;
                    break;
                }
                Some(TELL_INSTEAD) => return self.instead().await,
                _ => return Review::Reject(REJECTED.into()),
            }
            index += 1;
        }
        // What was not answered hunk by hunk was taken with the rest.
        keep.resize(count, true);
        let comments: Vec<HunkComment> = said
            .into_iter()
            .zip(&keep)
            .enumerate()
            .filter_map(|(i, (text, kept))| {
                let decision = if *kept { HunkDecision::Accepted } else { HunkDecision::Rejected };
                text.map(|comment| HunkComment { hunk: i + 1, lines: None, decision, comment })
            })
            .collect();
        match (keep.iter().all(|k| *k), keep.iter().any(|k| *k)) {
            (true, _) if accept_edits && comments.is_empty() => Review::ApplyAndAcceptEdits,
            (true, _) if comments.is_empty() => Review::Apply,
            (false, false) => {
                let reason = format!("{REJECTED} (every hunk of it)");
                match crate::protocol::review_comments_note(&request.summary, &comments) {
                    Some(note) => Review::Reject(format!("{reason}.\n{note}")),
                    None => Review::Reject(reason),
                }
            }
            _ => Review::Hunks { keep, accept_edits, comments },
        }
    }
}

/// The reason a rejected edit gives the model (the CLI's edit status
/// reads it).
const REJECTED: &str = "the user rejected the change";

/// The reason a denied call gives the model.
const DENIED: &str = "the user denied it";

impl TerminalPrompter {
    /// "No, and tell Tandem what to do instead": the user's words go to
    /// the model with the rejection.
    async fn instead(&self) -> Review {
        Review::Reject(told_instead(REJECTED, self.said().await.as_deref()))
    }

    /// The user's comment on the edit (hunk 0) or one of its hunks, after
    /// [`APPLY_COMMENTED`]; none when nothing was typed.
    async fn comment(&self, hunk: usize, decision: HunkDecision) -> Option<HunkComment> {
        let text = self.0.line(&format!("{COMMENT_PROMPT} ")).await?;
        let text = text.trim();
        (!text.is_empty()).then(|| HunkComment { hunk, lines: None, decision, comment: text.to_string() })
    }

    /// The line the user types after [`TELL_INSTEAD`].
    async fn said(&self) -> Option<String> {
        self.0.line(&format!("{INSTEAD_PROMPT} ")).await
    }
}

/// A preview's hunks: each `@@` header with the rows under it.
fn hunks_of(preview: &str) -> Vec<String> {
    let mut hunks: Vec<String> = Vec::new();
    for line in preview.lines() {
        match hunks.last_mut() {
            Some(hunk) if !line.starts_with("@@") => {
                hunk.push('\n');
                hunk.push_str(line);
            }
            _ if line.starts_with("@@") => hunks.push(line.to_string()),
            _ => {}
        }
    }
    hunks
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::permissions::PermissionRules;
    use crate::protocol::{HunkComment, HunkDecision};
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

        async fn line(&self, prompt: &str) -> Option<String> {
            self.questions.lock().unwrap().push((prompt.to_string(), Vec::new()));
            let mut answers = self.answers.lock().unwrap();
            if answers.is_empty() { None } else { Some(answers.remove(0).to_string()) }
        }
    }

    #[tokio::test]
    async fn the_terminal_offers_allow_host_for_the_session_or_saved() {
        let terminal = Arc::new(Scripted {
            answers: Mutex::new(vec!["Allow pypi.org for this session", "Always allow x.org (saved in ~/.tandem/settings.json)", "Deny"]),
            questions: Mutex::default(),
        });
        let prompter = TerminalPrompter(terminal.clone());
        let ask = |host: &'static str| {
            let prompter = &prompter;
            async move { prompter.ask_host(&super::super::gate::host_request(host, None), host, "refused").await }
        };
        assert_eq!(ask("pypi.org").await, HostAnswer::Session);
        assert_eq!(ask("x.org").await, HostAnswer::Saved);
        assert_eq!(ask("y.org").await, HostAnswer::Deny);
        let options = terminal.questions.lock().unwrap()[0].1.clone();
        assert_eq!(options, ["Allow pypi.org for this session", "Always allow pypi.org (saved in ~/.tandem/settings.json)", "Deny"]);
    }

    fn edit(dir: &std::path::Path, preview: &str) -> PermissionRequest {
        PermissionRequest {
            tool: "write_file".into(),
            kind: ToolKind::Edit { path: dir.join("a.txt") },
            read_only: false,
            summary: "a.txt".into(),
            preview: Some(preview.into()),
            input: serde_json::json!({}),
            accept_edits: false,
            run: None,
            grants: Default::default(),
            hook: Default::default(),
            questions: None,
        }
    }

    const THREE_HUNKS: &str = "@@ -1,2 +1,2 @@\n   1 - a\n   1 + A\n   2   b\n@@ -9,2 +9,1 @@\n   9   i\n  10 - j\n@@ -20,1 +19,2 @@\n  19   t\n  20 + u";

    fn scripted(answers: Vec<&'static str>) -> Arc<Scripted> {
        Arc::new(Scripted { answers: Mutex::new(answers), questions: Mutex::default() })
    }

    #[tokio::test]
    async fn an_edit_of_several_hunks_is_reviewed_hunk_by_hunk() {
        let dir = tempfile::tempdir().unwrap();
        // y, n, y: the middle hunk is left out.
        let terminal = scripted(vec![APPLY_HUNK, SKIP_HUNK, APPLY_HUNK]);
        let gate = headless(dir.path(), Some(terminal.clone()));
        assert_eq!(gate.decide(&edit(dir.path(), THREE_HUNKS)).await, PermissionDecision::ApprovedHunks(vec![true, false, true].into()));
        {
            let questions = terminal.questions.lock().unwrap();
            assert_eq!(questions.len(), 3);
            expect_test::expect![[r#"
                Tandem: apply this change (write_file a.txt)? Hunk 2 of 3:

                @@ -9,2 +9,1 @@
                   9   i
                  10 - j
                options: Apply this hunk | Skip this hunk | Apply all the rest | Allow edits for this session | Tell Tandem what to do instead | Comment on this hunk"#]]
            .assert_eq(&format!("{}\noptions: {}", questions[1].0, questions[1].1.join(" | ")));
        }
        // n, then a: the first is left out, the rest applied unasked.
        let terminal = scripted(vec![SKIP_HUNK, APPLY_REST]);
        let gate = headless(dir.path(), Some(terminal.clone()));
        assert_eq!(gate.decide(&edit(dir.path(), THREE_HUNKS)).await, PermissionDecision::ApprovedHunks(vec![false, true, true].into()));
        assert_eq!(terminal.questions.lock().unwrap().len(), 2);
        // Every hunk skipped is a rejection; every hunk taken, an approval.
        let gate = headless(dir.path(), Some(scripted(vec![SKIP_HUNK, SKIP_HUNK, SKIP_HUNK])));
        assert!(matches!(gate.decide(&edit(dir.path(), THREE_HUNKS)).await, PermissionDecision::Declined(r) if r.starts_with("the user rejected the change")));
        let gate = headless(dir.path(), Some(scripted(vec![APPLY_HUNK, APPLY_REST])));
        assert_eq!(gate.decide(&edit(dir.path(), THREE_HUNKS)).await, PermissionDecision::Approved);
        // A diff that was cut, or an undo's restore, is all or nothing.
        let cut = format!("{THREE_HUNKS}\n... (diff cut: 500 more lines; read the file to see the rest)");
        let terminal = scripted(vec![APPLY]);
        let gate = headless(dir.path(), Some(terminal.clone()));
        assert_eq!(gate.decide(&edit(dir.path(), &cut)).await, PermissionDecision::Approved);
        assert_eq!(terminal.questions.lock().unwrap()[0].1, [APPLY, REJECT, ALLOW_EDITS, TELL_INSTEAD, APPLY_COMMENTED]);
        let terminal = scripted(vec![APPLY]);
        let gate = headless(dir.path(), Some(terminal.clone()));
        assert_eq!(gate.decide(&PermissionRequest { tool: "undo".into(), ..edit(dir.path(), THREE_HUNKS) }).await, PermissionDecision::Approved);
        assert_eq!(terminal.questions.lock().unwrap()[0].1, [APPLY, REJECT, ALLOW_EDITS, TELL_INSTEAD]);
    }

    #[tokio::test]
    async fn allow_edits_for_this_session_stops_asking_about_edits_only() {
        let dir = tempfile::tempdir().unwrap();
        let terminal = scripted(vec![ALLOW_EDITS, DENY]);
        let gate = headless(dir.path(), Some(terminal.clone()));
        let one_hunk = "@@ -1,1 +1,1 @@\n   1 - a\n   1 + A";
        assert_eq!(gate.decide(&edit(dir.path(), one_hunk)).await, PermissionDecision::Approved);
        assert_eq!(gate.policy().mode(), PermissionMode::AcceptEdits);
        // The next edit is not asked about; a command still is.
        assert!(matches!(gate.decide(&edit(dir.path(), one_hunk)).await, PermissionDecision::Allow | PermissionDecision::Approved));
        assert_eq!(terminal.questions.lock().unwrap().len(), 1);
        assert!(matches!(gate.decide(&shell("touch X")).await, PermissionDecision::Declined(_)));
        assert_eq!(terminal.questions.lock().unwrap().len(), 2);
        // At a hunk: the rest of this edit too.
        let gate = headless(dir.path(), Some(scripted(vec![SKIP_HUNK, ALLOW_EDITS])));
        assert_eq!(gate.decide(&edit(dir.path(), THREE_HUNKS)).await, PermissionDecision::ApprovedHunks(vec![false, true, true].into()));
        assert_eq!(gate.policy().mode(), PermissionMode::AcceptEdits);
    }

    #[tokio::test]
    async fn tell_tandem_instead_rejects_with_the_users_words() {
        let dir = tempfile::tempdir().unwrap();
        let terminal = scripted(vec![APPLY_HUNK, TELL_INSTEAD, "use a constant, not a literal"]);
        let gate = headless(dir.path(), Some(terminal.clone()));
        assert_eq!(
            gate.decide(&edit(dir.path(), THREE_HUNKS)).await,
            PermissionDecision::Declined("the user rejected the change; instead, the user says: use a constant, not a literal".into())
        );
        assert_eq!(terminal.questions.lock().unwrap()[2].0, "What should Tandem do instead? ");
        // Nothing typed: a plain rejection.
        let gate = headless(dir.path(), Some(scripted(vec![TELL_INSTEAD])));
        assert_eq!(gate.decide(&edit(dir.path(), THREE_HUNKS)).await, PermissionDecision::Declined("the user rejected the change".into()));
    }

    /// Comments at the terminal: on a hunk (`c`, then the hunk asked
    /// again), kept with its answer; on a whole edit ("Apply, with a
    /// comment"). Both reach the decision, which carries them to the
    /// call's result; a hunk's comment on an edit rejected whole goes with
    /// the refusal.
    #[tokio::test]
    async fn comments_on_hunks_and_on_a_whole_edit_go_with_the_decision() {
        let dir = tempfile::tempdir().unwrap();
        let terminal = scripted(vec![APPLY_HUNK, COMMENT_HUNK, "keep j, it is used", SKIP_HUNK, APPLY_HUNK]);
        let gate = headless(dir.path(), Some(terminal.clone()));
        let comments: Arc<[HunkComment]> = vec![HunkComment { hunk: 2, lines: None, decision: HunkDecision::Rejected, comment: "keep j, it is used".into() }].into();
        assert_eq!(gate.decide(&edit(dir.path(), THREE_HUNKS)).await, PermissionDecision::Commented { keep: Some(vec![true, false, true].into()), comments });
        {
            let questions = terminal.questions.lock().unwrap();
            assert_eq!(questions[2].0, "Your comment for Tandem: ");
            assert!(questions[3].0.ends_with("Hunk 2 of 3:\n\n@@ -9,2 +9,1 @@\n   9   i\n  10 - j"), "the hunk is asked again: {:?}", questions[3]);
        }
        let one_hunk = "@@ -1,1 +1,1 @@\n   1 - a\n   1 + A";
        let gate = headless(dir.path(), Some(scripted(vec![APPLY_COMMENTED, "fine, but name it ALPHA next time"])));
        let comments: Arc<[HunkComment]> = vec![HunkComment { hunk: 0, lines: None, decision: HunkDecision::Accepted, comment: "fine, but name it ALPHA next time".into() }].into();
        assert_eq!(gate.decide(&edit(dir.path(), one_hunk)).await, PermissionDecision::Commented { keep: None, comments });
        let gate = headless(dir.path(), Some(scripted(vec![COMMENT_HUNK, "no", SKIP_HUNK, SKIP_HUNK, SKIP_HUNK])));
        assert!(
            matches!(gate.decide(&edit(dir.path(), THREE_HUNKS)).await, PermissionDecision::Declined(r) if r.ends_with("\n- hunk 1 rejected by the user: no")),
            "the comment goes with the refusal"
        );
    }

    #[tokio::test]
    async fn tell_tandem_instead_denies_an_asked_command_with_the_users_words() {
        let dir = tempfile::tempdir().unwrap();
        let terminal = scripted(vec![TELL_INSTEAD, "run the unit tests only"]);
        let gate = headless(dir.path(), Some(terminal.clone()));
        assert_eq!(
            gate.decide(&shell("touch X")).await,
            PermissionDecision::Declined("the user denied it; instead, the user says: run the unit tests only".into())
        );
        assert_eq!(terminal.questions.lock().unwrap()[0].1.last().map(String::as_str), Some(TELL_INSTEAD));
        assert_eq!(terminal.questions.lock().unwrap()[1].0, "What should Tandem do instead? ");
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
            questions: None,
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
            questions: None,
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
        assert_eq!(decision, PermissionDecision::Declined("the user denied it".into()));
        let questions = terminal.questions.lock().unwrap();
        expect_test::expect![[r#"
            Tandem wants to run a shell command:
            echo building the project
            touch X

            Asked because:
            - `touch X` is not known to be read-only

            "Always allow" adds: run_shell(touch X)
            options: Allow once | Always allow | Always allow, saved in .tandem/settings.local.json | Deny | Tell Tandem what to do instead"#]]
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
        assert!(matches!(policy.decide(&shell("git reset --hard")).await, PermissionDecision::Declined(_)));
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

    /// Issue 58: the agent's proposed memory note reaches the user whole,
    /// through the same question as any call, and is saved only when the
    /// user allows it; a declined one leaves the memory as it was.
    #[tokio::test]
    async fn a_memory_note_the_agent_proposes_is_asked_whole_and_saved_only_when_allowed() {
        use crate::tools::{Executor, ToolCall, ToolContext, ToolRegistry};
        use crate::workspace::memory::Memory;
        let (dir, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let mut workspace = crate::workspace::Workspace::new(dir.path()).unwrap();
        workspace.set_home(Some(home.path().to_path_buf()));
        let memory = Memory::at(home.path(), workspace.root());
        let ctx = ToolContext::new(Arc::new(workspace));
        ctx.run.activate("remember");
        let call = ToolCall::new("t1", "remember", serde_json::json!({"name": "testing", "text": "Run `make check`.\nNot cargo test alone."}));
        for (answer, saved) in [(DENY, false), (ALLOW_ONCE, true)] {
            let terminal = scripted(vec![answer]);
            let executor = Executor::new(ToolRegistry::builtin()).with_results_dir(None).with_gate(Arc::new(headless(dir.path(), Some(terminal.clone()))));
            let result = executor.execute(&call, &ctx).await.unwrap();
            let questions = terminal.questions.lock().unwrap().clone();
            assert_eq!(questions.len(), 1, "{questions:?}");
            assert!(
                questions[0].0.starts_with("Tandem wants to remember this note in your memory of the project, as \"testing\": Run `make check`. / Not cargo test alone."),
                "{}",
                questions[0].0
            );
            assert_eq!(result.is_error, !saved, "{}", result.content);
            assert_eq!(memory.read("testing").is_ok(), saved, "{}", result.content);
        }
        assert_eq!(memory.read("testing").unwrap().text, "Run `make check`.\nNot cargo test alone.\n");
        // A name that would leave the folder is refused before anyone is asked.
        let terminal = scripted(vec![ALLOW_ONCE]);
        let executor = Executor::new(ToolRegistry::builtin()).with_results_dir(None).with_gate(Arc::new(headless(dir.path(), Some(terminal.clone()))));
        let bad = ToolCall::new("t2", "remember", serde_json::json!({"name": "../../escape", "text": "x"}));
        let result = executor.execute(&bad, &ctx).await.unwrap();
        assert!(result.is_error && result.content.contains("is not an entry name"), "{}", result.content);
        assert!(terminal.questions.lock().unwrap().is_empty());
    }

}
