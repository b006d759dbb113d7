//! The one permission gate every front end runs its calls through:
//! [`Gate`] is the run's [`PermissionGate`]. [`Policy`] gives the rules'
//! verdict ([`RuleVerdict`]); the gate carries it out — allow, deny, or put
//! the question to the user through the front end's [`Prompter`], then
//! keep what an "always" answer means, as narrow as the policy offers:
//!
//! - "Always allow" ([`Answer::AllowAlways`]): the rules join the call's
//!   thread grants (its later runs keep them, no other thread has them);
//! - "Always allow in this project" ([`Answer::AllowInProject`]): saved
//!   through [`ProjectRules`] (`.tandem/settings.local.json`) and held at
//!   once for every thread;
//! - "Allow commands like this for this session"
//!   ([`Answer::AllowLikeThis`]): the command's shapes (`cargo test`, `git
//!   commit`: program and subcommand, one per simple command) join the
//!   policy's session shapes; a later command whose every shape is allowed
//!   runs unasked, in the sandbox's contained profile, when the sandbox
//!   contains it (else it is asked as before). Offered only where a
//!   sandbox confines the command and nothing in it reaches past it;
//! - "Reject always" ([`Answer::DenyAlways`]): calls the rules cover are
//!   refused for the rest of the gate's life (one ACP session).
//!
//! A host the sandbox's network lists refused is put to the user through
//! [`Prompter::ask_host`] ("allow pypi.org" for the session, or saved in
//! the user's settings); the gate keeps the session's answers
//! ([`Gate::host_grants`]), which every run's network reads.
//!
//! An edit to review goes to the prompter's [`Prompter::review`] (the
//! editor's own preview, a prompt with the diff, a terminal question).
//! With no prompter (no terminal: CI, a pipe, a script) nobody can answer:
//! an ask or a review is a denial that tells the model how to get the
//! permission. Questions go out one at a time: two at once would confuse
//! the user.
//!
//! A prompter owns only the asking — its labels, its texts for a review,
//! the words of a refusal — never the decision.

use std::path::Path;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use super::policy::{headless_denial, AskInfo, Call, Policy, RuleVerdict};
use super::rules::{PermissionRules, Rule};
use super::ProjectRules;
use crate::scope::Scope;
use crate::sync::MutexExt;
use crate::protocol::QuestionKind;
use crate::tools::ports::network::{HostAnswer, HostAsker, HostGrants};
use crate::tools::ports::questions::QuestionTurn;
use crate::tools::{PermissionDecision, PermissionGate, PermissionRequest, ToolKind};

/// What the user answered to an asked call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    AllowOnce,
    /// For this call's thread: the narrow rules join its grants.
    AllowAlways,
    /// For every thread: the narrow rules are saved in the project.
    AllowInProject,
    /// For the rest of the session: commands of the same shapes that the
    /// sandbox contains.
    AllowLikeThis,
    /// Refused, or no answer; the reason is for the model, in the front
    /// end's words ("the user denied it", "the user did not answer…").
    Deny(String),
    /// Refused, and calls the narrow rules cover for the rest of the session.
    DenyAlways(String),
}

/// The option that refuses a call or an edit and lets the user say what
/// the model should do instead, in every front end that can read a line
/// of text from the user (the terminal, editors that answer
/// `tandem/textInput`).
pub const TELL_INSTEAD: &str = "Tell Tandem what to do instead";

/// The question that follows [`TELL_INSTEAD`].
pub const INSTEAD_PROMPT: &str = "What should Tandem do instead?";

/// The refusal the model reads after [`TELL_INSTEAD`]: `refusal` ("the
/// user denied it"), with what the user typed when they typed something.
pub fn told_instead(refusal: &str, said: Option<&str>) -> String {
    match said.map(str::trim).filter(|s| !s.is_empty()) {
        Some(said) => format!("{refusal}; instead, the user says: {said}"),
        None => refusal.to_string(),
    }
}

/// What the user answered to an edit's review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Review {
    Apply,
    /// Apply it, and every edit after it in this session without asking:
    /// the session goes to `acceptEdits` (from `default`; a mode that
    /// already allows more stays).
    ApplyAndAcceptEdits,
    /// Apply only the hunks marked `true`, in the order the preview shows
    /// them (the terminal's per-hunk review); at least one is marked, and
    /// one is not unless the user commented (`comments`: their words on
    /// hunks, or on the whole edit as hunk 0, for the model).
    /// `accept_edits`: and the edits after it as
    /// [`Review::ApplyAndAcceptEdits`].
    Hunks { keep: Vec<bool>, accept_edits: bool, comments: Vec<crate::protocol::HunkComment> },
    /// The editor reviews the edit itself when it is sent
    /// ([`PermissionDecision::ReviewInEditor`]).
    InEditor,
    /// Rejected, or no answer; the reason is for the model.
    Reject(String),
}

/// The answer "Allow commands like this for this session", in every
/// front end's list.
pub const ALLOW_LIKE_THIS: &str = "Allow commands like this for this session";

/// What a question may offer beside "Allow once" and the refusals.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Offers {
    /// Narrow rules exist: "Always allow" (and "in this project").
    pub always: bool,
    /// The command's shapes can be allowed for the session
    /// ([`ALLOW_LIKE_THIS`]).
    pub like_this: bool,
}

/// How a front end asks the user. Only the asking: the gate decides.
#[async_trait]
pub trait Prompter: Send + Sync {
    /// Put an asked call to the user. `question` says what and why (see
    /// [`ask_text`]); `offers.always`: narrow rules exist, so "always"
    /// answers may be offered (else the call can be allowed once only);
    /// `offers.like_this`: [`ALLOW_LIKE_THIS`] may be offered.
    async fn ask(&self, request: &PermissionRequest, question: &str, offers: Offers) -> Answer;

    /// Review an edit of `path`; the diff is the request's `preview`.
    async fn review(&self, request: &PermissionRequest, path: &Path) -> Review;

    /// The rules the user chose to keep in the project could not be saved
    /// (they hold for this session anyway); `problem` says why.
    async fn not_saved(&self, problem: &str) {
        let _ = problem;
    }

    /// Let `host`, which the sandbox's network lists refused, through?
    /// `request` is the question as a call (tool `network`, a fetch of
    /// the host). A front end without labels of its own asks it as a call
    /// that can be allowed once, which lets the host through for the
    /// session.
    async fn ask_host(&self, request: &PermissionRequest, host: &str, question: &str) -> HostAnswer {
        let _ = host;
        match self.ask(request, question, Offers::default()).await {
            Answer::AllowOnce | Answer::AllowAlways | Answer::AllowLikeThis => HostAnswer::Session,
            Answer::AllowInProject => HostAnswer::Saved,
            Answer::Deny(_) | Answer::DenyAlways(_) => HostAnswer::Deny,
        }
    }
}

/// The label of "allow HOST for this session", in every front end's list.
pub fn allow_host_label(host: &str) -> String {
    format!("Allow {host} for this session")
}

/// The label of "allow HOST" saved in the user's settings.
pub fn allow_host_saved_label(host: &str) -> String {
    format!("Always allow {host} (saved in ~/.tandem/settings.json)")
}

/// A refused host's question as a call: what the front end shows it with
/// (a fetch of the host), and the run's turn to wait for.
pub fn host_request(host: &str, questions: Option<QuestionTurn>) -> PermissionRequest {
    PermissionRequest {
        tool: "network".into(),
        kind: ToolKind::Fetch { url: format!("https://{host}/") },
        read_only: true,
        summary: host.to_string(),
        preview: None,
        input: serde_json::json!({ "host": host }),
        accept_edits: false,
        run: None,
        grants: Arc::default(),
        hook: Default::default(),
        questions,
    }
}

/// A prompter behind a pointer: the host holds the front end's this way.
#[async_trait]
impl Prompter for Arc<dyn Prompter> {
    async fn ask(&self, request: &PermissionRequest, question: &str, offers: Offers) -> Answer {
        (**self).ask(request, question, offers).await
    }

    async fn review(&self, request: &PermissionRequest, path: &Path) -> Review {
        (**self).review(request, path).await
    }

    async fn not_saved(&self, problem: &str) {
        (**self).not_saved(problem).await
    }

    async fn ask_host(&self, request: &PermissionRequest, host: &str, question: &str) -> HostAnswer {
        (**self).ask_host(request, host, question).await
    }
}

/// The question for an asked call: the whole command (every line), what
/// made it asked, and the rule "Always allow" adds.
pub fn ask_text(request: &PermissionRequest, info: &AskInfo) -> String {
    let mut text = match &request.kind {
        ToolKind::Execute { command } => format!("Tandem wants to run a shell command:\n{command}"),
        ToolKind::Fetch { url } => format!("Tandem wants to fetch {url}"),
        _ => format!("Tandem wants to {} {}", request.tool, request.summary).trim_end().to_string(),
    };
    if !info.reasons.is_empty() {
        text.push_str("\n\nAsked because:");
        for reason in &info.reasons {
            text.push_str("\n- ");
            text.push_str(reason);
        }
    }
    // A question about an edit (a protected file) shows what would be written.
    if let (ToolKind::Edit { .. }, Some(preview)) = (&request.kind, request.preview.as_deref().filter(|p| !p.trim().is_empty())) {
        text.push_str("\n\n");
        text.push_str(&bounded_preview(preview));
    }
    if request.wants_network() {
        text.push_str("\n\nIt asks for the network: allowing it lets this one command reach it (shell commands run in a sandbox without network).");
    }
    if !info.always.is_empty() {
        let rules: Vec<String> = info.always.iter().map(ToString::to_string).collect();
        text.push_str(&format!("\n\n\"Always allow\" adds: {}", rules.join(", ")));
    }
    if offers_like_this(request, info) {
        text.push_str(if info.always.is_empty() { "\n\n" } else { "\n" });
        text.push_str(&format!(
            "\"Allow commands like this\" allows for this session, in the sandbox (writes inside the workspace only, no network): {}",
            info.shapes.join(", ")
        ));
    }
    text
}

/// [`ALLOW_LIKE_THIS`] is offered: the command has shapes to allow, and
/// nothing in it is the user's to open one call at a time (the network,
/// a protected path).
fn offers_like_this(request: &PermissionRequest, info: &AskInfo) -> bool {
    !info.shapes.is_empty() && !info.protected && !request.wants_network()
}

/// A diff for a question: its first lines, and how many more there are.
fn bounded_preview(preview: &str) -> String {
    const LINES: usize = 60;
    let total = preview.lines().count();
    let mut shown: Vec<&str> = preview.lines().take(LINES).collect();
    let more = format!("… {} more lines", total.saturating_sub(LINES));
    if total > LINES {
        shown.push(&more);
    }
    shown.join("\n")
}

pub struct Gate<P> {
    policy: Policy,
    /// `None`: no one can answer.
    prompter: Option<P>,
    /// Where "Always allow in this project" saves.
    project_rules: Arc<dyn ProjectRules>,
    /// What "reject always" refused, for the rest of the session.
    refused: Mutex<Vec<Rule>>,
    /// One question at a time.
    asking: tokio::sync::Mutex<()>,
    /// The hosts the user let through the sandbox's network for the session.
    hosts: Arc<HostGrants>,
}

impl<P: Prompter> Gate<P> {
    /// `prompter`: `None` when no one can answer.
    pub fn new(policy: Policy, prompter: Option<P>, project_rules: Arc<dyn ProjectRules>) -> Self {
        Gate { policy, prompter, project_rules, refused: Mutex::default(), asking: tokio::sync::Mutex::new(()), hosts: Arc::default() }
    }

    /// The hosts the user let through the sandbox's network for the
    /// session (each run's network reads them).
    pub fn host_grants(&self) -> Arc<HostGrants> {
        Arc::clone(&self.hosts)
    }

    /// The rules the gate decides by (settings change during a session:
    /// the front end sets the new mode and rules here).
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    pub fn prompter(&self) -> Option<&P> {
        self.prompter.as_ref()
    }

    /// The reason a call is refused by an earlier "reject always", if it is.
    fn refused_before(&self, call: Call<'_>) -> Option<String> {
        let refused = self.refused.locked().clone();
        if refused.is_empty() {
            return None;
        }
        let deny = refused.iter().map(|rule| (Scope::Editor, rule.to_string())).collect();
        let rules = PermissionRules { deny, ..PermissionRules::default() };
        let policy = Policy::new(Default::default(), &rules, self.policy.roots());
        policy.deny_reason(call).map(|_| "the user rejected calls like this one for the rest of this session".to_string())
    }

    async fn ask(&self, prompter: &P, request: &PermissionRequest, info: &AskInfo) -> PermissionDecision {
        let question = ask_text(request, info);
        let offers = Offers { always: !info.always.is_empty(), like_this: offers_like_this(request, info) };
        let answer = {
            let _one_at_a_time = self.asking.lock().await;
            // Asked while another question allowed its shapes (calls run
            // side by side): the answer is given already.
            let allowed = self.policy.allowed_shapes();
            if offers.like_this && info.shapes.iter().all(|s| allowed.contains(s)) {
                return PermissionDecision::Contained;
            }
            prompter.ask(request, &question, offers).await
        };
        // The network is this one answer's: "Always allow" is not offered
        // for it (see `decide`), so every such call is asked.
        let allowed = if request.wants_network() { PermissionDecision::ApprovedWithNetwork } else { PermissionDecision::Approved };
        match answer {
            Answer::AllowOnce => allowed,
            Answer::AllowAlways => {
                request.grants.add(info.always.iter().map(ToString::to_string));
                allowed
            }
            Answer::AllowLikeThis if offers.like_this => {
                self.policy.allow_shapes(&info.shapes);
                allowed
            }
            // Not offered: what a front end may not give is once only.
            Answer::AllowLikeThis => allowed,
            Answer::AllowInProject => {
                self.policy.allow_for_session(&info.always);
                let rules: Vec<String> = info.always.iter().map(ToString::to_string).collect();
                if let Err(problem) = self.project_rules.save_allow(&rules) {
                    tracing::warn!("cannot save the rule: {problem}");
                    prompter.not_saved(&problem).await;
                }
                allowed
            }
            Answer::Deny(reason) => PermissionDecision::Declined(reason),
            Answer::DenyAlways(reason) => {
                self.refused.locked().extend(info.always.iter().cloned());
                PermissionDecision::Deny(reason)
            }
        }
    }

    /// "Allow edits for this session": `default` becomes `acceptEdits`; a
    /// mode that allows more (or plans) stays.
    fn accept_edits_from_now(&self) {
        use crate::tools::permission_mode::PermissionMode;
        if self.policy.mode() == PermissionMode::Default {
            self.policy.set_mode(PermissionMode::AcceptEdits);
        }
    }

    async fn review(&self, prompter: &P, request: &PermissionRequest, path: &Path) -> PermissionDecision {
        let _one_at_a_time = self.asking.lock().await;
        match prompter.review(request, path).await {
            Review::Apply => PermissionDecision::Approved,
            Review::ApplyAndAcceptEdits => {
                self.accept_edits_from_now();
                PermissionDecision::Approved
            }
            Review::Hunks { keep, accept_edits, comments } => {
                if accept_edits {
                    self.accept_edits_from_now();
                }
                let part = keep.iter().any(|k| !k).then(|| keep.into());
                match (part, comments.is_empty()) {
                    (Some(keep), true) => PermissionDecision::ApprovedHunks(keep),
                    (None, true) => PermissionDecision::Approved,
                    (keep, false) => PermissionDecision::Commented { keep, comments: comments.into() },
                }
            }
            Review::InEditor => PermissionDecision::ReviewInEditor,
            Review::Reject(reason) => PermissionDecision::Declined(reason),
        }
    }
}

#[async_trait]
impl<P: Prompter> PermissionGate for Gate<P> {
    async fn decide(&self, request: &PermissionRequest) -> PermissionDecision {
        let granted = request.grants.rules();
        let call = Call::of(request, &granted);
        if let Some(reason) = self.refused_before(call) {
            return PermissionDecision::Deny(reason);
        }
        let nobody = |info: &AskInfo| PermissionDecision::Deny(headless_denial(call, &request.summary, info));
        let verdict = self.policy.decide_with_hook(call, request.hook.clone());
        // Only the user's answer opens the network: a command that asks for
        // it is asked about whatever else would let it run (but a deny still
        // wins, and `bypassPermissions` asks nothing: it runs without the
        // network unless the settings allow it). With no one to ask it is
        // decided as any other call.
        if let (true, Some(prompter)) = (request.wants_network(), &self.prompter) {
            let reasons = match verdict {
                RuleVerdict::Deny(reason) => return PermissionDecision::Deny(reason),
                _ if self.policy.mode() == crate::tools::permission_mode::PermissionMode::BypassPermissions => return PermissionDecision::Approved,
                RuleVerdict::Ask(info) => info.reasons,
                _ => Vec::new(),
            };
            return self.ask(prompter, request, &AskInfo { reasons, ..AskInfo::default() }).await;
        }
        match verdict {
            RuleVerdict::Allow => PermissionDecision::Allow,
            RuleVerdict::Approved => PermissionDecision::Approved,
            RuleVerdict::Contained => PermissionDecision::Contained,
            RuleVerdict::Deny(reason) => PermissionDecision::Deny(reason),
            RuleVerdict::Review => match (&request.kind, &self.prompter) {
                (ToolKind::Edit { path }, Some(prompter)) => self.review(prompter, request, path).await,
                (ToolKind::Edit { .. }, None) => nobody(&AskInfo::default()),
                _ => PermissionDecision::Deny("only edits are reviewed".into()),
            },
            RuleVerdict::Ask(info) => match &self.prompter {
                Some(prompter) => self.ask(prompter, request, &info).await,
                None => nobody(&info),
            },
        }
    }
}

#[async_trait]
impl<P: Prompter> HostAsker for Gate<P> {
    /// Asked in any mode (the lists are the sandbox's, not a call's
    /// rules); with nobody to ask, the host stays refused.
    async fn ask_host(&self, host: &str, reason: &str, turn: Option<QuestionTurn>) -> HostAnswer {
        let Some(prompter) = &self.prompter else { return HostAnswer::Deny };
        let question = format!("The sandbox's network refused {host} ({reason}). Let {host} through?");
        if let Some(turn) = &turn {
            turn.wait(QuestionKind::Permission { tool: "network".into(), kind: ToolKind::Fetch { url: format!("https://{host}/") }, question: question.clone() }).await;
        }
        let answer = {
            let _one_at_a_time = self.asking.lock().await;
            prompter.ask_host(&host_request(host, None), host, &question).await
        };
        if answer != HostAnswer::Deny {
            self.hosts.grant(host);
        }
        if answer == HostAnswer::Saved {
            if let Err(problem) = self.project_rules.save_network_allow(host) {
                tracing::warn!("cannot save the host: {problem}");
                prompter.not_saved(&problem).await;
            }
        }
        answer
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::tools::permission_mode::PermissionMode;

    /// A user who answers from a list, and what they were asked.
    #[derive(Default)]
    struct Scripted {
        answers: Mutex<Vec<Answer>>,
        reviews: Mutex<Vec<Review>>,
        asked: Mutex<Vec<(String, bool)>>,
        reviewed: Mutex<Vec<std::path::PathBuf>>,
        not_saved: Mutex<Vec<String>>,
        offered_like_this: Mutex<Vec<bool>>,
    }

    impl Scripted {
        fn answering(answers: Vec<Answer>) -> Self {
            Scripted { answers: Mutex::new(answers), ..Scripted::default() }
        }
    }

    #[async_trait]
    impl Prompter for Arc<Scripted> {
        async fn ask(&self, _request: &PermissionRequest, question: &str, offers: Offers) -> Answer {
            let always = offers.always;
            self.asked.lock().unwrap().push((question.to_string(), always));
            self.offered_like_this.lock().unwrap().push(offers.like_this);
            let mut answers = self.answers.lock().unwrap();
            if answers.is_empty() { Answer::Deny("no answer".into()) } else { answers.remove(0) }
        }

        async fn review(&self, _request: &PermissionRequest, path: &Path) -> Review {
            self.reviewed.lock().unwrap().push(path.to_path_buf());
            let mut reviews = self.reviews.lock().unwrap();
            if reviews.is_empty() { Review::Reject("no answer".into()) } else { reviews.remove(0) }
        }

        async fn not_saved(&self, problem: &str) {
            self.not_saved.lock().unwrap().push(problem.to_string());
        }
    }

    /// The project rules "Always allow in this project" saved.
    #[derive(Default)]
    struct Saved(Mutex<Vec<Vec<String>>>);

    impl ProjectRules for Saved {
        fn save_allow(&self, rules: &[String]) -> Result<std::path::PathBuf, String> {
            self.0.lock().unwrap().push(rules.to_vec());
            Ok(".tandem/settings.local.json".into())
        }

        fn save_network_allow(&self, host: &str) -> Result<std::path::PathBuf, String> {
            self.0.lock().unwrap().push(vec![format!("network:{host}")]);
            Ok("~/.tandem/settings.json".into())
        }
    }

    #[tokio::test]
    async fn a_refused_host_is_asked_and_an_allow_is_kept_for_the_session_or_saved() {
        let dir = tempfile::tempdir().unwrap();
        let saved = Arc::new(Saved::default());
        let user = Arc::new(Scripted::answering(vec![Answer::AllowOnce, Answer::Deny("no".into()), Answer::AllowInProject]));
        let gate = gate(dir.path(), Some(Arc::clone(&user)), Arc::clone(&saved));
        let reason = "pypi.org is not in sandbox.network.allow";
        assert_eq!(gate.ask_host("pypi.org", reason, None).await, HostAnswer::Session);
        assert_eq!(user.asked.lock().unwrap()[0].0, "The sandbox's network refused pypi.org (pypi.org is not in sandbox.network.allow). Let pypi.org through?");
        assert!(gate.host_grants().contains("pypi.org"));
        assert!(saved.0.lock().unwrap().is_empty());
        assert_eq!(gate.ask_host("evil.example", "x", None).await, HostAnswer::Deny);
        assert!(!gate.host_grants().contains("evil.example"));
        assert_eq!(gate.ask_host("files.pythonhosted.org", "x", None).await, HostAnswer::Saved);
        assert!(gate.host_grants().contains("files.pythonhosted.org"));
        assert_eq!(*saved.0.lock().unwrap(), vec![vec!["network:files.pythonhosted.org".to_string()]]);
        // Nobody to ask: it stays refused.
        let nobody: Gate<Arc<Scripted>> = Gate::new(Policy::new(PermissionMode::Default, &PermissionRules::default(), &[]), None, Arc::new(Saved::default()));
        assert_eq!(nobody.ask_host("pypi.org", reason, None).await, HostAnswer::Deny);
    }

    fn request(tool: &str, kind: ToolKind, grants: &Arc<crate::tools::Grants>) -> PermissionRequest {
        PermissionRequest {
            tool: tool.into(),
            summary: match &kind {
                ToolKind::Execute { command } => command.clone(),
                _ => String::new(),
            },
            kind,
            read_only: false,
            preview: Some("-a\n+b".into()),
            input: serde_json::json!({}),
            accept_edits: false,
            run: None,
            grants: Arc::clone(grants),
            hook: Default::default(),
            questions: None,
        }
    }

    fn shell(command: &str, grants: &Arc<crate::tools::Grants>) -> PermissionRequest {
        request("run_shell", ToolKind::Execute { command: command.into() }, grants)
    }

    fn gate(dir: &Path, prompter: Option<Arc<Scripted>>, saved: Arc<Saved>) -> Gate<Arc<Scripted>> {
        let policy = Policy::new(PermissionMode::Default, &PermissionRules::default(), &[dir.to_path_buf()]);
        Gate::new(policy, prompter, saved)
    }

    #[tokio::test]
    async fn allow_once_approves_this_call_only() {
        let dir = tempfile::tempdir().unwrap();
        let user = Arc::new(Scripted::answering(vec![Answer::AllowOnce, Answer::Deny("the user denied it".into())]));
        let gate = gate(dir.path(), Some(Arc::clone(&user)), Arc::default());
        let thread = Arc::default();
        assert_eq!(gate.decide(&shell("git push", &thread)).await, PermissionDecision::Approved);
        assert_eq!(gate.decide(&shell("git push", &thread)).await, PermissionDecision::Declined("the user denied it".into()));
        assert_eq!(user.asked.lock().unwrap().len(), 2);
        assert!(thread.rules().is_empty());
        // What needs no one is not asked.
        assert_eq!(gate.decide(&shell("git status", &thread)).await, PermissionDecision::Allow);
        assert_eq!(user.asked.lock().unwrap().len(), 2);
    }

    // Unix only: the commands name Unix paths (`/etc`, `/tmp`), and a command runs contained only in bubblewrap's profile (Linux).
    #[cfg(unix)]
    #[tokio::test]
    async fn a_shape_allowed_for_the_session_is_asked_once_however_often_it_comes() {
        let dir = tempfile::tempdir().unwrap();
        let user = Arc::new(Scripted::answering(vec![Answer::AllowLikeThis; 4]));
        let policy = Policy::new(PermissionMode::Default, &PermissionRules::default(), &[dir.path().to_path_buf()]);
        policy.set_containment(crate::permissions::Containment { sandboxed: true, probe: None, auto_allow_in_default: false });
        let gate = Arc::new(Gate::new(policy, Some(Arc::clone(&user)), Arc::new(Saved::default())));
        let thread: Arc<crate::tools::Grants> = Arc::default();
        let shapes = ["cargo test --lib n{}", "touch f{}.txt", "npm install pkg{}", "git commit -m c{} && cargo test"];
        // 40 commands of 4 shapes, ten at a time side by side.
        let mut decisions = Vec::new();
        for round in 0..4 {
            let calls = (0..10).map(|i| {
                let (gate, thread) = (Arc::clone(&gate), Arc::clone(&thread));
                let command = shapes[(round * 10 + i) % 4].replace("{}", &i.to_string());
                tokio::spawn(async move { gate.decide(&shell(&command, &thread)).await })
            });
            for call in calls.collect::<Vec<_>>() {
                decisions.push(call.await.unwrap());
            }
        }
        assert_eq!(user.asked.lock().unwrap().len(), 4, "{:#?}", user.asked.lock().unwrap());
        assert!(decisions.iter().all(|d| matches!(d, PermissionDecision::Approved | PermissionDecision::Contained)), "{decisions:?}");
        assert_eq!(decisions.iter().filter(|d| **d == PermissionDecision::Approved).count(), 4);
        assert!(thread.rules().is_empty(), "a session's shapes are not the thread's grants");
        // The question named what the answer allows.
        let first = user.asked.lock().unwrap()[0].0.clone();
        assert!(first.contains("\"Allow commands like this\" allows for this session, in the sandbox"), "{first}");
        // A command leaving the walls is asked, and not offered the shape.
        user.answers.lock().unwrap().push(Answer::Deny("no".into()));
        assert!(matches!(gate.decide(&shell("touch /etc/x", &thread)).await, PermissionDecision::Declined(_)));
        assert_eq!(user.offered_like_this.lock().unwrap().last(), Some(&false));
        // Nor is a call that asks for the network.
        user.answers.lock().unwrap().push(Answer::AllowLikeThis);
        assert_eq!(gate.decide(&networked("npm install x", &thread)).await, PermissionDecision::ApprovedWithNetwork);
        assert_eq!(user.offered_like_this.lock().unwrap().last(), Some(&false));
        assert_eq!(user.asked.lock().unwrap().len(), 6);
    }

    fn networked(command: &str, grants: &Arc<crate::tools::Grants>) -> PermissionRequest {
        let mut request = shell(command, grants);
        request.input = serde_json::json!({"command": command, "network": true});
        request
    }

    #[tokio::test]
    async fn only_the_users_answer_opens_the_network_and_only_for_one_call() {
        let dir = tempfile::tempdir().unwrap();
        let thread = Arc::default();
        let rules = PermissionRules { allow: vec![(Scope::Editor, "run_shell(npm install)".into())], deny: vec![(Scope::Editor, "run_shell(git push:*)".into())], ..PermissionRules::default() };
        let user = Arc::new(Scripted::answering(vec![Answer::AllowOnce, Answer::AllowOnce, Answer::Deny("the user denied it".into())]));
        let policy = Policy::new(PermissionMode::Default, &rules, &[dir.path().to_path_buf()]);
        let gate = Gate::new(policy, Some(Arc::clone(&user)), Arc::new(Saved::default()));
        // Allowed by a rule, judged read-only, or asked anyway: with the
        // network asked for, the user is asked, with no "Always" to give.
        assert_eq!(gate.decide(&networked("npm install", &thread)).await, PermissionDecision::ApprovedWithNetwork);
        assert_eq!(gate.decide(&networked("git status", &thread)).await, PermissionDecision::ApprovedWithNetwork);
        assert_eq!(gate.decide(&networked("curl https://example.com", &thread)).await, PermissionDecision::Declined("the user denied it".into()));
        {
            let asked = user.asked.lock().unwrap();
            assert_eq!(asked.len(), 3);
            assert!(asked.iter().all(|(question, always)| !always && question.contains("It asks for the network")), "{asked:?}");
            assert!(asked[2].0.contains("Asked because:"), "the other reasons stay: {}", asked[2].0);
        }
        // The same calls without the network are decided as ever.
        assert_eq!(gate.decide(&shell("npm install", &thread)).await, PermissionDecision::Allow);
        assert_eq!(user.asked.lock().unwrap().len(), 3);
        // A deny rule still wins, unasked.
        assert!(matches!(gate.decide(&networked("git push origin", &thread)).await, PermissionDecision::Deny(_)));
        assert_eq!(user.asked.lock().unwrap().len(), 3);
        assert!(thread.rules().is_empty(), "no grant for the network");

        // bypassPermissions asks nothing, and so gives no network.
        let policy = Policy::new(PermissionMode::BypassPermissions, &rules, &[dir.path().to_path_buf()]);
        let gate = Gate::new(policy, Some(Arc::clone(&user)), Arc::new(Saved::default()));
        assert_eq!(gate.decide(&networked("curl https://example.com", &thread)).await, PermissionDecision::Approved);
        // With no one to ask, as any other call.
        let policy = Policy::new(PermissionMode::Default, &rules, &[dir.path().to_path_buf()]);
        let gate: Gate<Arc<Scripted>> = Gate::new(policy, None, Arc::new(Saved::default()));
        assert_eq!(gate.decide(&networked("npm install", &thread)).await, PermissionDecision::Allow);
        assert_eq!(user.asked.lock().unwrap().len(), 3);
    }

    #[tokio::test]
    async fn always_allow_grants_the_narrow_rule_to_the_thread_only() {
        let dir = tempfile::tempdir().unwrap();
        let user = Arc::new(Scripted::answering(vec![Answer::AllowAlways]));
        let gate = gate(dir.path(), Some(Arc::clone(&user)), Arc::default());
        let thread = Arc::default();
        assert_eq!(gate.decide(&shell("git push origin main", &thread)).await, PermissionDecision::Approved);
        expect_test::expect![[r#"
            Tandem wants to run a shell command:
            git push origin main

            Asked because:
            - `git push origin main` is not known to be read-only: `push` is not a known read-only subcommand

            "Always allow" adds: run_shell(git push:*)
            always: true"#]]
        .assert_eq(&user.asked.lock().unwrap().iter().map(|(q, always)| format!("{q}\nalways: {always}")).collect::<String>());
        assert_eq!(thread.rules(), ["run_shell(git push:*)"]);
        // The same subcommand runs unasked in this thread...
        assert_eq!(gate.decide(&shell("git push origin other", &thread)).await, PermissionDecision::Allow);
        // ...not another command, and not in another thread.
        assert!(matches!(gate.decide(&shell("git reset --hard", &thread)).await, PermissionDecision::Declined(_)));
        assert!(matches!(gate.decide(&shell("git push origin main", &Arc::default())).await, PermissionDecision::Declined(_)));
        assert_eq!(user.asked.lock().unwrap().len(), 3);
    }

    #[tokio::test]
    async fn always_allow_in_the_project_saves_the_narrow_rule_for_every_thread() {
        let dir = tempfile::tempdir().unwrap();
        let user = Arc::new(Scripted::answering(vec![Answer::AllowInProject]));
        let saved = Arc::new(Saved::default());
        let gate = gate(dir.path(), Some(Arc::clone(&user)), Arc::clone(&saved));
        assert_eq!(gate.decide(&shell("git push origin main", &Arc::default())).await, PermissionDecision::Approved);
        assert_eq!(*saved.0.lock().unwrap(), [vec!["run_shell(git push:*)".to_string()]]);
        // Another thread has it at once; another command is still asked.
        assert_eq!(gate.decide(&shell("git push origin other", &Arc::default())).await, PermissionDecision::Allow);
        assert!(matches!(gate.decide(&shell("git reset --hard", &Arc::default())).await, PermissionDecision::Declined(_)));
        assert!(user.not_saved.lock().unwrap().is_empty());

        // A rule that cannot be saved holds for the session, and the user is told.
        let user = Arc::new(Scripted::answering(vec![Answer::AllowInProject]));
        let policy = Policy::new(PermissionMode::Default, &PermissionRules::default(), &[dir.path().to_path_buf()]);
        let gate = Gate::new(policy, Some(Arc::clone(&user)), Arc::new(super::super::NoProjectRules));
        assert_eq!(gate.decide(&shell("git push origin main", &Arc::default())).await, PermissionDecision::Approved);
        assert_eq!(gate.decide(&shell("git push origin x", &Arc::default())).await, PermissionDecision::Allow);
        assert_eq!(*user.not_saved.lock().unwrap(), ["rules cannot be saved in this run"]);
    }

    #[tokio::test]
    async fn deny_always_refuses_calls_like_it_for_the_session_without_asking() {
        let dir = tempfile::tempdir().unwrap();
        let user = Arc::new(Scripted::answering(vec![Answer::DenyAlways("the user rejected it".into())]));
        let gate = gate(dir.path(), Some(Arc::clone(&user)), Arc::default());
        let thread = Arc::default();
        assert_eq!(gate.decide(&shell("git push origin main", &thread)).await, PermissionDecision::Deny("the user rejected it".into()));
        expect_test::expect!["the user rejected calls like this one for the rest of this session"].assert_eq(
            &match gate.decide(&shell("git push origin other", &thread)).await {
                PermissionDecision::Deny(reason) => reason,
                other => format!("{other:?}"),
            },
        );
        assert_eq!(user.asked.lock().unwrap().len(), 1);
        // A call the rule does not cover is still asked.
        assert!(matches!(gate.decide(&shell("touch X", &thread)).await, PermissionDecision::Declined(r) if r == "no answer"));
        assert_eq!(user.asked.lock().unwrap().len(), 2);
    }

    #[tokio::test]
    async fn an_edit_is_reviewed_by_the_prompter_and_a_call_no_rule_covers_is_offered_once_only() {
        let dir = tempfile::tempdir().unwrap();
        let user = Arc::new(Scripted::default());
        *user.reviews.lock().unwrap() = vec![Review::Apply, Review::InEditor, Review::Reject("the user chose Reject".into())];
        let gate = gate(dir.path(), Some(Arc::clone(&user)), Arc::default());
        let path = dir.path().join("a.rs");
        let edit = request("edit_file", ToolKind::Edit { path: path.clone() }, &Arc::default());
        assert_eq!(gate.decide(&edit).await, PermissionDecision::Approved);
        assert_eq!(gate.decide(&edit).await, PermissionDecision::ReviewInEditor);
        assert_eq!(gate.decide(&edit).await, PermissionDecision::Declined("the user chose Reject".into()));
        assert_eq!(*user.reviewed.lock().unwrap(), [path.clone(), path.clone(), path]);
        assert!(user.asked.lock().unwrap().is_empty());
        // In acceptEdits (or after "Execute and accept edits") nothing is reviewed.
        let accepted = PermissionRequest { accept_edits: true, ..edit };
        assert_eq!(gate.decide(&accepted).await, PermissionDecision::Allow);
        assert_eq!(user.reviewed.lock().unwrap().len(), 3);
        // A command no rule can cover: no "always" answers on offer.
        let _ = gate.decide(&shell("eval \"$X\"", &Arc::default())).await;
        assert_eq!(user.asked.lock().unwrap().last().map(|(_, always)| *always), Some(false));
    }

    #[tokio::test]
    async fn with_no_one_to_ask_the_model_is_told_how_to_get_permission() {
        let dir = tempfile::tempdir().unwrap();
        let gate = gate(dir.path(), None, Arc::default());
        assert_eq!(gate.decide(&shell("git status", &Arc::default())).await, PermissionDecision::Allow);
        let PermissionDecision::Deny(reason) = gate.decide(&shell("git push", &Arc::default())).await else { panic!() };
        assert!(reason.contains("needs permission") && reason.contains(".tandem/settings.json") && reason.contains("run_shell(git push)"), "{reason}");
        let edit = PermissionRequest { summary: "a.rs".into(), ..request("edit_file", ToolKind::Edit { path: dir.path().join("a.rs") }, &Arc::default()) };
        expect_test::expect!["edit_file a.rs needs permission; rerun with `--permission-mode acceptEdits` or allow it in `.tandem/settings.json`"]
            .assert_eq(&match gate.decide(&edit).await {
                PermissionDecision::Deny(reason) => reason,
                other => format!("{other:?}"),
            });
    }
}
