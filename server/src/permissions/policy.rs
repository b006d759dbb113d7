//! The one decision: what happens to a call, given the mode, the rules and
//! what the call does. The gate ([`super::Gate`]) carries out the
//! verdict; front ends only ask the user a [`RuleVerdict::Ask`] or
//! review a [`RuleVerdict::Review`] for it: they never decide themselves.
//!
//! Order: deny rules → plan mode → ask rules → allow rules → the mode.
//!
//! | mode | reads | edits | shell | web fetch | other tools (MCP) |
//! |---|---|---|---|---|---|
//! | `default` | run | reviewed in the editor (asked on a terminal) | known read-only commands run, others asked | asked per new domain | asked |
//! | `acceptEdits` | run | run (inside the workspace) | as `default` | as `default` | as `default` |
//! | `plan` | run | refused | known read-only commands run, others refused | refused unless read-only | refused unless read-only |
//! | `bypassPermissions` | run | run | run | run | run |
//!
//! Deny rules apply in every mode; ask rules in every mode but
//! `bypassPermissions` ("nothing is asked"). Paths outside the workspace
//! are refused by the tools themselves whatever the mode.

use std::sync::RwLock;

use std::path::PathBuf;

use super::protected::{self, Level, Protected};
use super::rules::{Family, Pattern, Places, Rule};
use super::shell::{self, Analysis, ShellEnv, SimpleCommand, Write};
use super::ToolKind;
use crate::sync::RwLockExt;
use crate::tools::permission_mode::{PermissionMode, PLAN_MODE_REFUSAL};
use super::rules::PermissionRules;
use crate::scope::Scope;

/// What the rules say about one call (the gate carries it out).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleVerdict {
    /// Runs without asking anyone (judged read-only, or a rule covers it):
    /// a shell command gets the sandbox's unasked profile.
    Allow,
    /// Runs because the mode the user chose approves it (`bypassPermissions`;
    /// in `acceptEdits`, what a rule allows): a shell command gets the
    /// sandbox's approved profile.
    Approved,
    /// Runs without a question because the sandbox contains it: writes
    /// only inside the workspace, no network, no service socket, the home
    /// folder as unasked commands see it (`acceptEdits`,
    /// `autoAllowSandboxed`, or a shape the user allowed for the
    /// session). A shell command gets the sandbox's contained profile.
    Contained,
    /// Refused; the reason is for the model.
    Deny(String),
    /// An edit the user reviews (default mode): in the editor's own
    /// review where it has one, else as a question with the diff.
    Review,
    /// Someone must answer.
    Ask(AskInfo),
}

/// Why a call is asked, and what "Always allow" would add.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AskInfo {
    /// What made it asked, each naming the part: "`rm -rf build` is not
    /// known to be read-only", "the rule `run_shell(git push:*)` in permissions.ask".
    pub reasons: Vec<String>,
    /// The narrowest rules that cover this call, for "Always allow". Empty
    /// when no rule can (a redirect outside the workspace, `eval`, …): the
    /// user can then allow it once only.
    pub always: Vec<Rule>,
    /// It writes a protected path: asked in every mode, and only a rule
    /// naming the path lets it run unasked.
    pub protected: bool,
    /// The shapes "Allow commands like this for this session" would allow
    /// (`cargo test`, `git commit`), one per command of it that needs
    /// one: empty when it cannot be offered (no sandbox, a concern, a
    /// path outside the workspace, a command whose shape is any command).
    pub shapes: Vec<String>,
}

/// What the run's sandbox lets the policy allow without a question: set
/// by the host from the sandbox it found and the user's settings.
#[derive(Debug, Clone, Copy, Default)]
pub struct Containment {
    /// A sandbox confines this run's shell commands (the settings switch
    /// one on)...
    pub sandboxed: bool,
    /// ...and, when set, this says the platform's sandbox can start here:
    /// asked only when a command's containment is judged, so a run with
    /// no shell command starts no probe process.
    pub probe: Option<fn() -> bool>,
    /// `"autoAllowSandboxed": true` in the user's own settings: in
    /// `default` too, a command the sandbox contains runs unasked.
    pub auto_allow_in_default: bool,
}

/// One call as the policy sees it.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    pub tool: &'a str,
    pub kind: &'a ToolKind,
    /// The tool says this call changes nothing.
    pub read_only: bool,
    /// The user approved a plan with "Execute and accept edits": this
    /// run's edits apply without review, as in `acceptEdits`.
    pub accept_edits: bool,
    /// The conversation's "Always allow" rules (their text): allow rules
    /// for this call's thread only.
    pub granted: &'a [String],
}

impl<'a> Call<'a> {
    /// The call a permission request asks about; `granted` are its
    /// thread's grants (`request.grants.rules()`).
    pub fn of(request: &'a crate::tools::PermissionRequest, granted: &'a [String]) -> Self {
        Call { tool: &request.tool, kind: &request.kind, read_only: request.read_only, accept_edits: request.accept_edits, granted }
    }
}

/// A rule and the layer it came from (`None`: added in this session).
#[derive(Debug, Clone)]
struct Sourced {
    rule: Rule,
    scope: Option<Scope>,
}

impl Sourced {
    fn describe(&self, list: &str) -> String {
        let from = match self.scope {
            Some(Scope::User) => " (~/.tandem/settings.json)",
            Some(Scope::Project) => " (.tandem/settings.json)",
            Some(Scope::Local) => " (.tandem/settings.local.json)",
            Some(Scope::Editor) => " (editor settings)",
            Some(Scope::EditorFolder) => " (the folder's editor settings)",
            None => " (allowed in this session)",
        };
        format!("the rule `{}` in permissions.{list}{from}", self.rule)
    }
}

#[derive(Debug, Clone, Default)]
struct RuleSet {
    allow: Vec<Sourced>,
    ask: Vec<Sourced>,
    deny: Vec<Sourced>,
}

/// Mode, rules and places: everything a decision needs.
pub struct Policy {
    mode: RwLock<PermissionMode>,
    rules: RwLock<RuleSet>,
    places: Places,
    shell: ShellEnv,
    containment: RwLock<Containment>,
    /// The command shapes the user allowed for this session ("Allow
    /// commands like this for this session").
    shapes: RwLock<Vec<String>>,
}

impl Policy {
    /// `roots` are the workspace roots (the first is the primary one).
    pub fn new(mode: PermissionMode, rules: &PermissionRules, roots: &[std::path::PathBuf]) -> Self {
        let roots: Vec<_> = roots.iter().map(|r| r.canonicalize().unwrap_or_else(|_| r.clone())).collect();
        let root = roots.first().cloned().unwrap_or_default();
        let policy = Policy {
            mode: RwLock::new(mode),
            rules: RwLock::new(RuleSet::default()),
            places: Places { root: root.clone(), home: dirs::home_dir() },
            shell: ShellEnv { cwd: root, roots },
            containment: RwLock::new(Containment::default()),
            shapes: RwLock::new(Vec::new()),
        };
        policy.set_rules(rules);
        policy
    }

    /// Replace the rules from settings (keeping those allowed in this session).
    pub fn set_rules(&self, rules: &PermissionRules) {
        let parse = |list: &[(Scope, String)]| -> Vec<Sourced> {
            list.iter().filter_map(|(scope, text)| Rule::parse(text).ok().map(|rule| Sourced { rule, scope: Some(*scope) })).collect()
        };
        let mut set = self.rules.writing();
        let session: Vec<Sourced> = set.allow.iter().filter(|s| s.scope.is_none()).cloned().collect();
        set.allow = parse(&rules.allow);
        set.allow.extend(session);
        set.ask = parse(&rules.ask);
        set.deny = parse(&rules.deny);
    }

    pub fn set_mode(&self, mode: PermissionMode) {
        *self.mode.writing() = mode;
    }

    pub fn mode(&self) -> PermissionMode {
        *self.mode.reading()
    }

    /// What the run's sandbox contains (the host sets it when the run's
    /// sandbox and settings are known, and again when the settings change).
    pub fn set_containment(&self, containment: Containment) {
        *self.containment.writing() = containment;
    }

    /// "Allow commands like this for this session": commands of these
    /// shapes that the sandbox contains run unasked from now on.
    pub fn allow_shapes(&self, shapes: &[String]) {
        let mut allowed = self.shapes.writing();
        for shape in shapes {
            if !allowed.contains(shape) {
                allowed.push(shape.clone());
            }
        }
    }

    /// The command shapes allowed for this session.
    pub fn allowed_shapes(&self) -> Vec<String> {
        self.shapes.reading().clone()
    }

    /// The sandbox contains this command: it runs in one, and nothing in
    /// it reaches past the walls as far as its structure tells — no
    /// concern (a write outside the workspace, a name only known when it
    /// runs, `eval`), no protected path written or named, every path it
    /// names inside the workspace.
    fn contained(&self, analysis: &Analysis) -> bool {
        let containment = *self.containment.reading();
        containment.sandboxed
            && containment.probe.is_none_or(|probe| probe())
            && analysis.concerns.is_empty()
            && analysis.protected_writes.is_empty()
            && analysis.unknown.is_empty()
            && analysis.commands.iter().all(|c| !c.dynamic_name && c.words.iter().all(|w| stays_inside(w)))
            && analysis.reads.iter().all(|path| self.shell.roots.iter().any(|root| path.starts_with(root)))
            // A protected path named as an operand (`touch .git/hooks/x`):
            // the sandbox holds it read-only, and the question says why.
            && analysis.reads.iter().all(|path| protected::protected(path, &self.shell.roots).is_none())
            && analysis.writes.iter().all(|w| self.shell.roots.iter().any(|root| w.path.starts_with(root)))
    }

    /// The mode lets a contained command run unasked: `acceptEdits` (or a
    /// plan approved with "Execute and accept edits"), or `default` with
    /// `autoAllowSandboxed`.
    fn contained_runs_unasked(&self, call: Call<'_>) -> bool {
        match self.mode() {
            PermissionMode::AcceptEdits => true,
            PermissionMode::Default => call.accept_edits || self.containment.reading().auto_allow_in_default,
            _ => false,
        }
    }

    /// The shapes of the commands in `uncovered` (those neither read-only
    /// nor allowed by a rule), when the command is contained and each has
    /// a shape; `None` otherwise.
    fn contained_shapes(&self, analysis: &Analysis, uncovered: &[&SimpleCommand]) -> Option<Vec<String>> {
        if !self.contained(analysis) {
            return None;
        }
        let mut shapes: Vec<String> = Vec::new();
        for command in uncovered {
            let shape = shape(command)?;
            if !shapes.contains(&shape) {
                shapes.push(shape);
            }
        }
        Some(shapes)
    }

    /// "Always allow in this project": these rules, just saved to
    /// `.tandem/settings.local.json`, hold at once in every thread (until
    /// the settings are read again, which brings them from the file).
    /// "Always allow" alone is a thread's grant (`tools::Grants`), not this.
    pub fn allow_for_session(&self, rules: &[Rule]) {
        let mut set = self.rules.writing();
        for rule in rules {
            set.allow.push(Sourced { rule: rule.clone(), scope: None });
        }
    }

    /// The workspace roots the policy judges paths against.
    pub fn roots(&self) -> &[std::path::PathBuf] {
        &self.shell.roots
    }

    /// The existing paths read-deny rules cover, for the sandbox to mask.
    pub fn read_denied_paths(&self) -> Vec<std::path::PathBuf> {
        let deny: Vec<Rule> = self.rules.reading().deny.iter().map(|s| s.rule.clone()).collect();
        super::masks::read_denied_paths(&deny, &self.places)
    }

    /// The paths edit-deny rules cover, for the sandbox to keep read-only.
    pub fn edit_denied_paths(&self) -> Vec<std::path::PathBuf> {
        let deny: Vec<Rule> = self.rules.reading().deny.iter().map(|s| s.rule.clone()).collect();
        super::masks::edit_denied_paths(&deny, &self.places)
    }

    /// Analyse a shell command in this workspace.
    pub fn analyze_shell(&self, command: &str) -> Analysis {
        shell::analyze(command, &self.shell)
    }

    /// The deny rule that forbids this call, if any (a hook's "allow"
    /// does not lift deny rules).
    pub fn deny_reason(&self, call: Call<'_>) -> Option<String> {
        let rules = self.rules.reading().clone();
        let analysis = match call.kind {
            ToolKind::Execute { command } => Some(self.analyze_shell(command)),
            _ => None,
        };
        self.denied(&rules, call, analysis.as_ref())
    }

    /// The first deny rule that hits the call, as the reason for the model.
    fn denied(&self, rules: &RuleSet, call: Call<'_>, analysis: Option<&Analysis>) -> Option<String> {
        rules.deny.iter().find_map(|s| self.deny_hit(&s.rule, call, analysis).map(|why| format!("{} forbids this call{why}", s.describe("deny"))))
    }

    /// Does a deny rule hit the call? `Some(detail)` when it does (the
    /// detail, possibly empty, says how). A shell command is matched on
    /// every command it runs, wrappers unwrapped, by basename; a command
    /// whose name is only known when it runs cannot be checked, so it is
    /// refused while deny rules for the shell exist. Read and edit deny
    /// rules also cover the paths a command names and the files it writes.
    fn deny_hit(&self, rule: &Rule, call: Call<'_>, analysis: Option<&Analysis>) -> Option<String> {
        let Some(analysis) = analysis else {
            return rule.matches(call.tool, call.kind, &self.places).then(String::new);
        };
        match (rule.family(), &rule.pattern) {
            (Family::Execute, None) => Some(String::new()),
            (Family::Execute, Some(_)) => {
                if let Some(hit) = analysis.runs.iter().find(|c| rule.matches_run(c)) {
                    return Some(if analysis.commands.iter().any(|c| c.words == hit.words) {
                        String::new()
                    } else {
                        format!(" (the command runs `{}`)", hit.display())
                    });
                }
                analysis.unknown.first().map(|what| {
                    format!(": {what}, and a command only known when it runs cannot be checked against deny rules; write the command out")
                })
            }
            (Family::Read, Some(_)) => analysis
                .reads
                .iter()
                .find(|path| rule.matches("read_file", &ToolKind::Read { paths: vec![path.to_path_buf()] }, &self.places))
                .map(|path| format!(" (the command reads `{}`)", path.strip_prefix(&self.places.root).unwrap_or(path).display())),
            (Family::Edit, _) => analysis
                .writes
                .iter()
                .find(|w| rule.matches("write_file", &ToolKind::Edit { path: w.path.clone() }, &self.places))
                .map(|w| format!(" (the command writes `{}`)", w.shown)),
            _ => rule.matches(call.tool, call.kind, &self.places).then(String::new),
        }
    }

    pub fn decide(&self, call: Call<'_>) -> RuleVerdict {
        let mode = self.mode();
        let mut rules = self.rules.reading().clone();
        // The thread's own grants count as allow rules, for its calls only.
        rules.allow.extend(call.granted.iter().filter_map(|text| Rule::parse(text).ok()).map(|rule| Sourced { rule, scope: None }));
        let analysis = match call.kind {
            ToolKind::Execute { command } => Some(self.analyze_shell(command)),
            _ => None,
        };

        // 1. Deny rules, in every mode.
        if let Some(reason) = self.denied(&rules, call, analysis.as_ref()) {
            return RuleVerdict::Deny(reason);
        }
        // A read-deny rule cannot mask git's objects: a command printing
        // files from them is asked; where nobody would be asked (the mode
        // or an allow rule lets it run) the deny rule refuses it.
        let mut analysis = analysis;
        if let Some((rule, why)) = analysis.as_ref().and_then(|a| self.object_read_under_deny(&rules, a)) {
            if let Some(analysis) = analysis.as_mut() {
                analysis.concerns.push(why.clone());
            }
            // Asked from here on, unless the mode or a rule that covers
            // every command would let it run.
            if mode == PermissionMode::BypassPermissions || self.allowed(call, analysis.as_ref(), &rules.allow) {
                return RuleVerdict::Deny(format!("{} forbids this call: {why}", rule.describe("deny")));
            }
        }
        // 2. Plan mode is read-only, whatever the other rules say.
        let read_only = is_read_only(call, analysis.as_ref());
        if mode == PermissionMode::Plan && !read_only {
            return RuleVerdict::Deny(PLAN_MODE_REFUSAL.to_string());
        }
        // Protected paths: a write there is asked in every mode, unless an
        // allow rule names the path (bypassPermissions lets the lesser ones go).
        if let Some(verdict) = self.protected_verdict(call, analysis.as_ref(), &rules.allow) {
            return verdict;
        }
        // A note for the user's memory outlives the run: every later
        // conversation in this project starts with it. Asked in every mode,
        // so text the model read (a repository's instructions, a fetched
        // page) cannot plant a lasting instruction unseen; only an allow
        // rule naming `remember` lets it go unasked.
        if call.tool == "remember" && !self.allowed(call, analysis.as_ref(), &rules.allow) {
            return RuleVerdict::Ask(AskInfo {
                reasons: vec!["a note for your memory of this project: later conversations here start with it (asked in every mode)".to_string()],
                ..AskInfo::default()
            });
        }
        if mode == PermissionMode::BypassPermissions {
            return RuleVerdict::Approved;
        }
        // 3. Ask rules.
        let asked: Vec<&Sourced> = rules.ask.iter().filter(|s| self.rule_hits(&s.rule, call, analysis.as_ref())).collect();
        if !asked.is_empty() {
            return RuleVerdict::Ask(AskInfo {
                reasons: asked.iter().map(|s| s.describe("ask")).collect(),
                // An ask rule wins over allow rules: "Always allow" would change nothing.
                ..AskInfo::default()
            });
        }
        // 4. Allow rules. A command judged read-only stays unasked; what
        // needed the rule is approved by it only in `acceptEdits`.
        if self.allowed(call, analysis.as_ref(), &rules.allow) {
            // A shell write that edit rules allow, every target of it,
            // must land: approved. A rule that only names the command (a
            // bare `run_shell`) does not allow writes in `default`: the
            // command runs unasked, in the read-only sandbox.
            let writes_allowed = analysis
                .as_ref()
                .is_some_and(|a| !a.writes.is_empty() && a.writes.iter().all(|w| self.edit_allowed(w, &rules.allow)));
            if read_only {
                return RuleVerdict::Allow;
            }
            if writes_allowed {
                return RuleVerdict::Approved;
            }
            // Where contained commands run unasked, one a rule allows is
            // not held to the read-only sandbox either.
            let verdict = self.allowed_verdict(call);
            let contained = analysis.as_ref().is_some_and(|a| self.contained(a));
            return if verdict == RuleVerdict::Allow && contained && self.contained_runs_unasked(call) { RuleVerdict::Contained } else { verdict };
        }
        // 5. The mode.
        match call.kind {
            ToolKind::Read { .. } => RuleVerdict::Allow,
            ToolKind::Edit { .. } if mode == PermissionMode::AcceptEdits || call.accept_edits => RuleVerdict::Allow,
            ToolKind::Edit { .. } => RuleVerdict::Review,
            ToolKind::Execute { .. } if read_only => RuleVerdict::Allow,
            ToolKind::Execute { .. } => {
                let analysis = analysis.unwrap_or_default();
                let uncovered: Vec<&SimpleCommand> = analysis
                    .commands
                    .iter()
                    .filter(|c| c.problem.is_some() && !rules.allow.iter().any(|s| s.rule.matches_command(c)))
                    .collect();
                // Writes into the workspace are edits: allowed where edits
                // are, with the sandbox's approved profile (they must land).
                if analysis.concerns.is_empty() && uncovered.is_empty() && (mode == PermissionMode::AcceptEdits || call.accept_edits) {
                    return RuleVerdict::Approved;
                }
                // What the sandbox contains runs unasked where the mode
                // says so, or where the user allowed each of its shapes
                // for the session.
                let shapes = self.contained_shapes(&analysis, &uncovered);
                if let Some(shapes) = &shapes {
                    let allowed = self.shapes.reading();
                    let granted = !shapes.is_empty() && shapes.iter().all(|s| allowed.contains(s));
                    if granted || self.contained_runs_unasked(call) {
                        return RuleVerdict::Contained;
                    }
                }
                let mut reasons = analysis.concerns.clone();
                reasons.extend(uncovered.iter().filter_map(|c| c.problem.clone()));
                let writes: Vec<&Write> = analysis.writes.iter().filter(|w| !self.edit_allowed(w, &rules.allow)).collect();
                reasons.extend(writes.iter().map(|w| shell::write_reason(w)));
                let mut always = self.narrowest_shell_rules(&analysis, &rules.allow);
                if analysis.concerns.is_empty() {
                    always.extend(writes.iter().map(|w| self.edit_rule(w)));
                }
                RuleVerdict::Ask(AskInfo { reasons, always, protected: false, shapes: shapes.unwrap_or_default() })
            }
            ToolKind::Fetch { url } => {
                let host = super::rules::host_of(url);
                RuleVerdict::Ask(AskInfo {
                    reasons: vec![match &host {
                        Some(host) => format!("fetches from {host}, a domain not allowed yet"),
                        None => format!("fetches `{url}`"),
                    }],
                    always: host
                        .map(|h| Rule { tool: "web_fetch".into(), pattern: Some(Pattern::Domain(h)) })
                        .into_iter()
                        .collect(),
                    ..AskInfo::default()
                })
            }
            ToolKind::Other if read_only => RuleVerdict::Allow,
            ToolKind::Other => RuleVerdict::Ask(AskInfo {
                reasons: vec![format!("`{}` is not known to be read-only", call.tool)],
                always: vec![Rule { tool: call.tool.to_string(), pattern: None }],
                ..AskInfo::default()
            }),
        }
    }

    /// The verdict on a write to a protected path ([`super::protected`]),
    /// when the call makes one: asked, with the reason, in every mode —
    /// `bypassPermissions` lets only [`Level::Asked`] paths go — unless an
    /// allow rule (or a grant) names the path. `None`: no protected path
    /// is written. A shell command's writes are checked here too; the
    /// sandbox keeps these paths read-only for it besides.
    fn protected_verdict(&self, call: Call<'_>, analysis: Option<&Analysis>, allow: &[Sourced]) -> Option<RuleVerdict> {
        let mode = self.mode();
        let targets: Vec<(PathBuf, String)> = match (call.kind, analysis) {
            (ToolKind::Edit { path }, _) => vec![(path.clone(), self.shown(path))],
            (ToolKind::Execute { .. }, Some(analysis)) => analysis.protected_writes.iter().map(|w| (w.path.clone(), w.shown.clone())).collect(),
            _ => return None,
        };
        let mut reasons = Vec::new();
        let mut always = Vec::new();
        for (path, shown) in targets {
            let Some(found) = protected::protected(&path, &self.shell.roots) else { continue };
            if mode == PermissionMode::BypassPermissions && found.level == Level::Asked {
                continue;
            }
            let mut granted = allow.to_vec();
            granted.extend(call.granted.iter().filter_map(|text| Rule::parse(text).ok()).map(|rule| Sourced { rule, scope: None }));
            if granted.iter().any(|s| names_protected(&s.rule, &found) && s.rule.matches("write_file", &ToolKind::Edit { path: path.clone() }, &self.places)) {
                continue;
            }
            let every_mode = if found.level == Level::Always { "asked in every mode, bypassPermissions too" } else { "asked in every mode" };
            reasons.push(format!("writes to `{shown}`, a protected path ({}): {every_mode}", found.what));
            always.push(self.edit_rule(&Write { shown, path }));
        }
        if reasons.is_empty() {
            return None;
        }
        // A command with a concern no rule covers can be allowed once only.
        if analysis.is_some_and(|a| !a.concerns.is_empty()) {
            always.clear();
        }
        Some(RuleVerdict::Ask(AskInfo { reasons, always, protected: true, shapes: Vec::new() }))
    }

    /// [`Policy::protected_verdict`] with the rules and the command's
    /// analysis of its own (after a hook's "allow").
    pub fn protected_on_its_own(&self, call: Call<'_>) -> Option<RuleVerdict> {
        let allow = self.rules.reading().allow.clone();
        let analysis = match call.kind {
            ToolKind::Execute { command } => Some(self.analyze_shell(command)),
            _ => None,
        };
        self.protected_verdict(call, analysis.as_ref(), &allow)
    }

    /// A path as the user knows it: relative to the primary root.
    fn shown(&self, path: &std::path::Path) -> String {
        path.strip_prefix(&self.places.root).map(|p| p.display().to_string()).unwrap_or_else(|_| path.display().to_string())
    }

    /// A call allowed without a question: approved when the user chose
    /// `acceptEdits` (or "Execute and accept edits"), else unasked.
    pub fn allowed_verdict(&self, call: Call<'_>) -> RuleVerdict {
        match self.mode() {
            PermissionMode::BypassPermissions | PermissionMode::AcceptEdits => RuleVerdict::Approved,
            _ if call.accept_edits => RuleVerdict::Approved,
            _ => RuleVerdict::Allow,
        }
    }

    /// A call a hook allows without asking: refused when it prints files
    /// from git's objects while a read-deny rule exists.
    pub fn object_read_denial(&self, call: Call<'_>) -> Option<String> {
        let ToolKind::Execute { command } = call.kind else { return None };
        let rules = self.rules.reading().clone();
        let analysis = self.analyze_shell(command);
        self.object_read_under_deny(&rules, &analysis).map(|(rule, why)| format!("{} forbids this call: {why}", rule.describe("deny")))
    }

    /// The first read-deny rule and why the command is asked, when it
    /// prints files from git's objects without naming only files that
    /// exist and the rule does not cover (`git log -p`, `git show HEAD`,
    /// `git grep x`).
    fn object_read_under_deny<'r>(&self, rules: &'r RuleSet, analysis: &Analysis) -> Option<(&'r Sourced, String)> {
        let rule = rules.deny.iter().find(|s| s.rule.family() == Family::Read && s.rule.pattern.is_some())?;
        for command in &analysis.runs {
            let Some(read) = shell::git::object_read(command) else { continue };
            let paths = shell::git::resolved_paths(&read, &self.places.root);
            let limited = !paths.is_empty() && paths.iter().all(|p| p.is_file());
            if !limited {
                return Some((
                    rule,
                    format!(
                        "`{}` may print files from git's objects, where the sandbox cannot hide what a read-deny rule covers; name the files it may show (`-- PATH`)",
                        read.shown
                    ),
                ));
            }
        }
        None
    }

    /// For ask rules: does the rule hit any part of the call? (Shell
    /// commands: any command it runs, wrappers unwrapped.)
    fn rule_hits(&self, rule: &Rule, call: Call<'_>, analysis: Option<&Analysis>) -> bool {
        match (rule.family(), analysis) {
            (Family::Execute, Some(analysis)) => rule.pattern.is_none() || analysis.runs.iter().any(|c| rule.matches_run(c)),
            _ => rule.matches(call.tool, call.kind, &self.places),
        }
    }

    /// For allow rules: does the set cover the whole call? A shell command
    /// is covered when it has no structural concern, each of its simple
    /// commands is read-only or matched by a rule, and each file it writes
    /// is allowed to be edited (or a bare `run_shell` rule allows every
    /// command).
    fn allowed(&self, call: Call<'_>, analysis: Option<&Analysis>, allow: &[Sourced]) -> bool {
        match analysis {
            Some(analysis) => {
                let execute_rules: Vec<&Rule> = allow.iter().map(|s| &s.rule).filter(|r| r.family() == Family::Execute).collect();
                if execute_rules.iter().any(|r| r.pattern.is_none()) {
                    return true;
                }
                analysis.concerns.is_empty()
                    && analysis.commands.iter().all(|c| c.problem.is_none() || execute_rules.iter().any(|r| r.matches_command(c)))
                    && analysis.writes.iter().all(|w| self.edit_allowed(w, allow))
            }
            None => allow.iter().any(|s| s.rule.matches(call.tool, call.kind, &self.places)),
        }
    }

    /// An edit allow rule covers this write.
    fn edit_allowed(&self, write: &Write, allow: &[Sourced]) -> bool {
        let kind = ToolKind::Edit { path: write.path.clone() };
        allow.iter().any(|s| s.rule.family() == Family::Edit && s.rule.matches("write_file", &kind, &self.places))
    }

    /// The rule "Always allow" adds for a write: an edit rule for that file.
    /// Spelled with `/` on every system (a rule in a settings file reads
    /// the same everywhere; `./etc\hosts` was Windows' spelling), from the
    /// path as the file system opens it ([`crate::platform::path_as_opened`]).
    fn edit_rule(&self, write: &Write) -> Rule {
        // (Only Windows' `\` is a separator: a Linux name may hold one.)
        let slashed = |path: &std::path::Path| {
            let text = path.to_string_lossy();
            if cfg!(windows) { text.replace('\\', "/") } else { text.into_owned() }
        };
        let path = crate::platform::path_as_opened(&write.path);
        let root = crate::platform::path_as_opened(&self.places.root);
        let glob = match path.strip_prefix(&*root) {
            Ok(relative) => format!("./{}", globset::escape(&slashed(relative))),
            // `//` and the absolute path (`//etc/hosts`, `//C:/Windows/x`).
            Err(_) => format!("//{}", globset::escape(slashed(&path).trim_start_matches('/'))),
        };
        Rule { tool: "edit_file".into(), pattern: Some(Pattern::Path(glob)) }
    }

    /// "Always allow" for a shell command: one rule per simple command that
    /// is neither read-only nor allowed yet, each its first words
    /// (`git push:*`), never "every command". None when the command has a
    /// concern no rule can cover.
    fn narrowest_shell_rules(&self, analysis: &Analysis, allow: &[Sourced]) -> Vec<Rule> {
        if !analysis.concerns.is_empty() {
            return Vec::new();
        }
        let mut rules: Vec<Rule> = Vec::new();
        for command in &analysis.commands {
            if command.problem.is_none() || allow.iter().any(|s| s.rule.matches_command(command)) {
                continue;
            }
            let Some(rule) = narrowest_rule(command) else { return Vec::new() };
            if !rules.contains(&rule) {
                rules.push(rule);
            }
        }
        rules
    }
}

/// An allow rule names a protected path when it is an edit rule whose
/// pattern spells the component that protects it (`edit_file(.vscode/**)`,
/// `edit_file(./.git/hooks/pre-commit)`): a rule for every file
/// (`edit_file`, `edit_file(**)`) does not.
fn names_protected(rule: &Rule, found: &Protected) -> bool {
    rule.family() == Family::Edit
        && matches!(&rule.pattern, Some(Pattern::Path(glob)) if glob.to_ascii_lowercase().contains(&found.name.to_ascii_lowercase()))
}

/// The narrowest useful rule for one simple command: the command and its
/// subcommand (`git status:*`, `cargo test:*`); the exact command when its
/// second word is not a subcommand (`rm -rf build`, `make`).
pub fn narrowest_rule(command: &SimpleCommand) -> Option<Rule> {
    if command.dynamic_name || command.words.is_empty() {
        return None;
    }
    let is_subcommand = |w: &str| {
        w.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == ':')
    };
    let (words, prefix) = match command.words.get(1) {
        Some(sub) if is_subcommand(sub) && command.words.len() > 2 => (command.words[..2].to_vec(), true),
        _ => (command.words.clone(), false),
    };
    Some(Rule { tool: "run_shell".into(), pattern: Some(Pattern::Command { words, prefix }) })
}

/// A word of a command cannot name a place outside the workspace that
/// the judgement did not see: no expansion (`$HOME`, `$(…)`, a leading
/// `~`), and a glob only below the command's folder (`*.rs`, not
/// `../*` or `/etc/*`). Words keep their raw text when they are not
/// static, so a quoted `'$x'` is refused too (fail closed).
fn stays_inside(word: &str) -> bool {
    if word.contains('$') || word.contains('`') || word.starts_with('~') || word.contains("=~") {
        return false;
    }
    let glob = word.contains(['*', '?', '[', '{']);
    !glob || (!word.starts_with('/') && !word.contains(".."))
}

/// Programs whose second word is a subcommand that says what they do
/// (`cargo test` and `cargo publish` are different questions); for any
/// other program the shape is its name alone.
const SUBCOMMAND_PROGRAMS: &[&str] = &[
    "git", "cargo", "rustup", "npm", "pnpm", "yarn", "bun", "deno", "go", "pip", "pip3", "uv", "poetry", "pipenv", "conda",
    "docker", "podman", "kubectl", "helm", "terraform", "gh", "make", "just", "mvn", "gradle", "dotnet", "swift", "mix", "stack",
    "cabal", "dune", "opam", "bundle", "gem", "rake", "composer", "apt", "apt-get", "brew", "nix", "systemctl", "tandem",
];

/// A command's shape, for "Allow commands like this for this session":
/// its program's name and, for a program that has subcommands
/// ([`SUBCOMMAND_PROGRAMS`]) whose second word reads as one (letters,
/// digits, `-`, `_`, starting with a letter), that word — `cargo test`,
/// `git status`, `npm install`, `make`; `touch` for `touch a.txt`, `rm`
/// for `rm -rf build`. A compound command (`a && b`, `a | b`) has a
/// shape per simple command, each allowed on its own. None for a name
/// only known when it runs, an assignment, and a program that runs
/// another command (`timeout`, `env`, `xargs`, `sh`, `find`): its shape
/// would be every command.
pub fn shape(command: &SimpleCommand) -> Option<String> {
    if command.dynamic_name {
        return None;
    }
    let program = command.words.first()?;
    let name = shell::base_name(program);
    if name.is_empty() || name.contains('=') || shell::wrappers::runs_another(name) {
        return None;
    }
    let is_subcommand = |w: &str| {
        w.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    };
    Some(match command.words.get(1) {
        Some(sub) if SUBCOMMAND_PROGRAMS.contains(&name) && is_subcommand(sub) => format!("{name} {sub}"),
        _ => name.to_string(),
    })
}

fn is_read_only(call: Call<'_>, analysis: Option<&Analysis>) -> bool {
    match (call.kind, analysis) {
        (ToolKind::Execute { .. }, Some(analysis)) => analysis.is_read_only(),
        (ToolKind::Read { .. }, _) => true,
        (ToolKind::Edit { .. }, _) => false,
        _ => call.read_only,
    }
}

/// The answer the model gets when a call needs permission and no one can
/// give it (no terminal, no editor).
pub fn headless_denial(call: Call<'_>, summary: &str, ask: &AskInfo) -> String {
    let what = if summary.is_empty() { call.tool.to_string() } else { format!("{} {summary}", call.tool) };
    let why = if ask.reasons.is_empty() { String::new() } else { format!(" ({})", ask.reasons.join("; ")) };
    if ask.protected {
        let rules: Vec<String> = ask.always.iter().map(|r| format!("\"{r}\"")).collect();
        let how = if rules.is_empty() {
            "run it where someone can answer".to_string()
        } else {
            format!("to let Tandem write it unasked, add an allow rule that names it to your own settings (~/.tandem/settings.json): \"permissions\": {{\"allow\": [{}]}}", rules.join(", "))
        };
        return format!("{what} needs permission{why}; no one can answer in this run, and no mode lets it through: {how}");
    }
    match (call.kind, ask.always.as_slice()) {
        (ToolKind::Edit { .. }, _) => format!(
            "{what} needs permission{why}; rerun with `--permission-mode acceptEdits` or allow it in `.tandem/settings.json`"
        ),
        (_, []) => format!("{what} needs permission{why}; no one can answer in this run: allow it in `.tandem/settings.json` or rerun with `--permission-mode bypassPermissions`"),
        (_, rules) => {
            let list: Vec<String> = rules.iter().map(|r| format!("\"{r}\"")).collect();
            format!(
                "{what} needs permission{why}; no one can answer in this run: allow it in `.tandem/settings.json` with \"permissions\": {{\"allow\": [{}]}}, or rerun with `--permission-mode bypassPermissions`",
                list.join(", ")
            )
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    struct Fixture {
        _dir: tempfile::TempDir,
        root: PathBuf,
    }

    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        Fixture { _dir: dir, root }
    }

    fn rules(allow: &[&str], ask: &[&str], deny: &[&str]) -> PermissionRules {
        let list = |l: &[&str]| l.iter().map(|r| (Scope::Project, r.to_string())).collect();
        PermissionRules { allow: list(allow), ask: list(ask), deny: list(deny) }
    }

    fn shell(policy: &Policy, command: &str) -> RuleVerdict {
        let kind = ToolKind::Execute { command: command.into() };
        policy.decide(Call { tool: "run_shell", kind: &kind, read_only: false, accept_edits: false, granted: &[] })
    }

    fn always(verdict: &RuleVerdict) -> Vec<String> {
        match verdict {
            RuleVerdict::Ask(ask) => ask.always.iter().map(ToString::to_string).collect(),
            other => panic!("expected an ask, got {other:?}"),
        }
    }

    // Unix only: its expectations are Linux's: `/` paths, names compared with case (Windows' spellings: platform:: tests and tests/windows/smoke).
    #[cfg(unix)]
    #[test]
    fn protected_paths_are_asked_in_every_mode_unless_a_rule_names_them() {
        let f = fixture();
        std::fs::create_dir_all(f.root.join(".git/hooks")).unwrap();
        let roots = std::slice::from_ref(&f.root);
        let broad = ["edit_file", "edit_file(**)", "Edit(./*)"];
        let policies = [
            ("default", Policy::new(PermissionMode::Default, &PermissionRules::default(), roots)),
            ("acceptEdits", Policy::new(PermissionMode::AcceptEdits, &PermissionRules::default(), roots)),
            ("acceptEdits+broad", Policy::new(PermissionMode::AcceptEdits, &rules(&broad, &[], &[]), roots)),
            ("bypass", Policy::new(PermissionMode::BypassPermissions, &PermissionRules::default(), roots)),
            ("default+named", Policy::new(PermissionMode::Default, &rules(&["edit_file(.vscode/**)", "Edit(./.git/hooks/pre-commit)"], &[], &[]), roots)),
        ];
        let files = [".git/hooks/pre-commit", ".git/config", ".tandem/settings.json", ".vscode/tasks.json", ".envrc", "src/a.rs"];
        let mut out = String::new();
        for (name, policy) in &policies {
            for file in files {
                let kind = ToolKind::Edit { path: f.root.join(file) };
                let verdict = policy.decide(Call { tool: "write_file", kind: &kind, read_only: false, accept_edits: false, granted: &[] });
                out.push_str(&format!("{name}: {file} => {}\n", verdict_line(&verdict)));
            }
        }
        // A thread's grant ("Always allow" on the question) names the file.
        let kind = ToolKind::Edit { path: f.root.join(".vscode/tasks.json") };
        let granted = ["edit_file(./.vscode/tasks.json)".to_string()];
        let verdict = policies[1].1.decide(Call { tool: "write_file", kind: &kind, read_only: false, accept_edits: false, granted: &granted });
        out.push_str(&format!("acceptEdits, granted: .vscode/tasks.json => {}\n", verdict_line(&verdict)));
        // A PreToolUse hook's "allow" does not open it.
        let hooked = policies[3].1.decide_with_hook(
            Call { tool: "write_file", kind: &ToolKind::Edit { path: f.root.join(".tandem/settings.json") }, read_only: false, accept_edits: false, granted: &[] },
            crate::tools::PreHook::Allow("ok".into()),
        );
        out.push_str(&format!("bypass, hook allows: .tandem/settings.json => {}\n", verdict_line(&hooked)));
        // Shell writes there too, in bypassPermissions.
        out.push_str(&format!("bypass: echo x > .git/hooks/pre-push => {}\n", verdict_line(&shell(&policies[3].1, "echo x > .git/hooks/pre-push"))));
        out.push_str(&format!("bypass: echo x > .vscode/tasks.json => {}\n", verdict_line(&shell(&policies[3].1, "echo x > .vscode/tasks.json"))));
        expect_test::expect![[r#"
            default: .git/hooks/pre-commit => ask: writes to `.git/hooks/pre-commit`, a protected path (git's hooks and config: git runs code from them and they say where the repository is): asked in every mode, bypassPermissions too [always: edit_file(./.git/hooks/pre-commit)]
            default: .git/config => ask: writes to `.git/config`, a protected path (git's hooks and config: git runs code from them and they say where the repository is): asked in every mode, bypassPermissions too [always: edit_file(./.git/config)]
            default: .tandem/settings.json => ask: writes to `.tandem/settings.json`, a protected path (Tandem's settings: they grant permissions and run hooks): asked in every mode, bypassPermissions too [always: edit_file(./.tandem/settings.json)]
            default: .vscode/tasks.json => ask: writes to `.vscode/tasks.json`, a protected path (VS Code's settings and tasks: the editor runs them): asked in every mode [always: edit_file(./.vscode/tasks.json)]
            default: .envrc => ask: writes to `.envrc`, a protected path (direnv runs it when you enter the folder): asked in every mode [always: edit_file(./.envrc)]
            default: src/a.rs => review
            acceptEdits: .git/hooks/pre-commit => ask: writes to `.git/hooks/pre-commit`, a protected path (git's hooks and config: git runs code from them and they say where the repository is): asked in every mode, bypassPermissions too [always: edit_file(./.git/hooks/pre-commit)]
            acceptEdits: .git/config => ask: writes to `.git/config`, a protected path (git's hooks and config: git runs code from them and they say where the repository is): asked in every mode, bypassPermissions too [always: edit_file(./.git/config)]
            acceptEdits: .tandem/settings.json => ask: writes to `.tandem/settings.json`, a protected path (Tandem's settings: they grant permissions and run hooks): asked in every mode, bypassPermissions too [always: edit_file(./.tandem/settings.json)]
            acceptEdits: .vscode/tasks.json => ask: writes to `.vscode/tasks.json`, a protected path (VS Code's settings and tasks: the editor runs them): asked in every mode [always: edit_file(./.vscode/tasks.json)]
            acceptEdits: .envrc => ask: writes to `.envrc`, a protected path (direnv runs it when you enter the folder): asked in every mode [always: edit_file(./.envrc)]
            acceptEdits: src/a.rs => allow
            acceptEdits+broad: .git/hooks/pre-commit => ask: writes to `.git/hooks/pre-commit`, a protected path (git's hooks and config: git runs code from them and they say where the repository is): asked in every mode, bypassPermissions too [always: edit_file(./.git/hooks/pre-commit)]
            acceptEdits+broad: .git/config => ask: writes to `.git/config`, a protected path (git's hooks and config: git runs code from them and they say where the repository is): asked in every mode, bypassPermissions too [always: edit_file(./.git/config)]
            acceptEdits+broad: .tandem/settings.json => ask: writes to `.tandem/settings.json`, a protected path (Tandem's settings: they grant permissions and run hooks): asked in every mode, bypassPermissions too [always: edit_file(./.tandem/settings.json)]
            acceptEdits+broad: .vscode/tasks.json => ask: writes to `.vscode/tasks.json`, a protected path (VS Code's settings and tasks: the editor runs them): asked in every mode [always: edit_file(./.vscode/tasks.json)]
            acceptEdits+broad: .envrc => ask: writes to `.envrc`, a protected path (direnv runs it when you enter the folder): asked in every mode [always: edit_file(./.envrc)]
            acceptEdits+broad: src/a.rs => approved
            bypass: .git/hooks/pre-commit => ask: writes to `.git/hooks/pre-commit`, a protected path (git's hooks and config: git runs code from them and they say where the repository is): asked in every mode, bypassPermissions too [always: edit_file(./.git/hooks/pre-commit)]
            bypass: .git/config => ask: writes to `.git/config`, a protected path (git's hooks and config: git runs code from them and they say where the repository is): asked in every mode, bypassPermissions too [always: edit_file(./.git/config)]
            bypass: .tandem/settings.json => ask: writes to `.tandem/settings.json`, a protected path (Tandem's settings: they grant permissions and run hooks): asked in every mode, bypassPermissions too [always: edit_file(./.tandem/settings.json)]
            bypass: .vscode/tasks.json => approved
            bypass: .envrc => approved
            bypass: src/a.rs => approved
            default+named: .git/hooks/pre-commit => allow
            default+named: .git/config => ask: writes to `.git/config`, a protected path (git's hooks and config: git runs code from them and they say where the repository is): asked in every mode, bypassPermissions too [always: edit_file(./.git/config)]
            default+named: .tandem/settings.json => ask: writes to `.tandem/settings.json`, a protected path (Tandem's settings: they grant permissions and run hooks): asked in every mode, bypassPermissions too [always: edit_file(./.tandem/settings.json)]
            default+named: .vscode/tasks.json => allow
            default+named: .envrc => ask: writes to `.envrc`, a protected path (direnv runs it when you enter the folder): asked in every mode [always: edit_file(./.envrc)]
            default+named: src/a.rs => review
            acceptEdits, granted: .vscode/tasks.json => approved
            bypass, hook allows: .tandem/settings.json => ask: writes to `.tandem/settings.json`, a protected path (Tandem's settings: they grant permissions and run hooks): asked in every mode, bypassPermissions too [always: edit_file(./.tandem/settings.json)]
            bypass: echo x > .git/hooks/pre-push => ask: writes to `.git/hooks/pre-push`, a protected path (git's hooks and config: git runs code from them and they say where the repository is): asked in every mode, bypassPermissions too [always: ]
            bypass: echo x > .vscode/tasks.json => approved
        "#]].assert_eq(&out);
        // With no one to ask, the model is told why and what would allow it.
        let kind = ToolKind::Edit { path: f.root.join(".git/hooks/pre-commit") };
        let call = Call { tool: "write_file", kind: &kind, read_only: false, accept_edits: false, granted: &[] };
        let RuleVerdict::Ask(ask) = policies[1].1.decide(call) else { panic!() };
        expect_test::expect![[r#"write_file .git/hooks/pre-commit needs permission (writes to `.git/hooks/pre-commit`, a protected path (git's hooks and config: git runs code from them and they say where the repository is): asked in every mode, bypassPermissions too); no one can answer in this run, and no mode lets it through: to let Tandem write it unasked, add an allow rule that names it to your own settings (~/.tandem/settings.json): "permissions": {"allow": ["edit_file(./.git/hooks/pre-commit)"]}"#]].assert_eq(&headless_denial(call, ".git/hooks/pre-commit", &ask));
    }

    #[test]
    fn decision_order_is_deny_ask_allow_mode() {
        let f = fixture();
        let policy = Policy::new(
            PermissionMode::Default,
            &rules(&["run_shell(git:*)", "edit_file(src/**)"], &["run_shell(git push:*)"], &["run_shell(git push --force:*)"]),
            std::slice::from_ref(&f.root),
        );
        assert_eq!(shell(&policy, "git commit -m x"), RuleVerdict::Allow);
        let RuleVerdict::Ask(ask) = shell(&policy, "git push origin main") else { panic!() };
        assert_eq!(ask.reasons, vec!["the rule `run_shell(git push:*)` in permissions.ask (.tandem/settings.json)"]);
        let RuleVerdict::Deny(reason) = shell(&policy, "git status && git push --force") else { panic!() };
        assert!(reason.contains("run_shell(git push --force:*)"), "{reason}");
        let edit = |p: &str| ToolKind::Edit { path: f.root.join(p) };
        assert_eq!(policy.decide(Call { tool: "write_file", kind: &edit("src/a.rs"), read_only: false, accept_edits: false, granted: &[] }), RuleVerdict::Allow);
        assert_eq!(policy.decide(Call { tool: "edit_file", kind: &edit("README.md"), read_only: false, accept_edits: false, granted: &[] }), RuleVerdict::Review);
        // An allow rule covers a compound command only if it covers every part.
        assert!(matches!(shell(&policy, "git status && rm -rf build"), RuleVerdict::Ask(_)));
    }

    /// A memory note outlives the run, so `bypassPermissions` does not let
    /// it go unasked; an allow rule naming the tool does.
    #[test]
    fn a_memory_note_is_asked_in_every_mode_unless_a_rule_allows_it() {
        let f = fixture();
        let call = Call { tool: "remember", kind: &ToolKind::Other, read_only: false, accept_edits: false, granted: &[] };
        for mode in [PermissionMode::Default, PermissionMode::AcceptEdits, PermissionMode::BypassPermissions] {
            let policy = Policy::new(mode, &PermissionRules::default(), std::slice::from_ref(&f.root));
            let RuleVerdict::Ask(ask) = policy.decide(call) else { panic!("{mode:?} let a memory note through unasked") };
            assert!(ask.reasons[0].contains("asked in every mode"), "{:?}", ask.reasons);
        }
        let policy = Policy::new(PermissionMode::Default, &rules(&["remember"], &[], &[]), std::slice::from_ref(&f.root));
        assert_eq!(policy.decide(call), RuleVerdict::Allow);
    }

    #[test]
    fn modes_decide_what_no_rule_covers() {
        let f = fixture();
        let roots = std::slice::from_ref(&f.root);
        let edit = ToolKind::Edit { path: f.root.join("a.rs") };
        let read = ToolKind::Read { paths: vec![f.root.join("a.rs")] };
        let mcp = ToolKind::Other;
        let table: Vec<String> = PermissionMode::NAMES
            .iter()
            .map(|name| {
                let policy = Policy::new(name.parse().unwrap(), &PermissionRules::default(), roots);
                let short = |v: RuleVerdict| match v {
                    RuleVerdict::Allow => "allow",
                    RuleVerdict::Approved => "approved",
                    RuleVerdict::Contained => "contained",
                    RuleVerdict::Deny(_) => "deny",
                    RuleVerdict::Review => "review",
                    RuleVerdict::Ask(_) => "ask",
                };
                format!(
                    "{name}: read={} edit={} ls={} touch={} mcp={}",
                    short(policy.decide(Call { tool: "read_file", kind: &read, read_only: true, accept_edits: false, granted: &[] })),
                    short(policy.decide(Call { tool: "edit_file", kind: &edit, read_only: false, accept_edits: false, granted: &[] })),
                    short(shell(&policy, "ls -la")),
                    short(shell(&policy, "touch x")),
                    short(policy.decide(Call { tool: "mcp__x__y", kind: &mcp, read_only: false, accept_edits: false, granted: &[] })),
                )
            })
            .collect();
        expect_test::expect![[r#"
            [
                "default: read=allow edit=review ls=allow touch=ask mcp=ask",
                "acceptEdits: read=allow edit=allow ls=allow touch=ask mcp=ask",
                "bypassPermissions: read=approved edit=approved ls=approved touch=approved mcp=approved",
                "plan: read=allow edit=deny ls=allow touch=deny mcp=deny",
            ]
        "#]]
        .assert_debug_eq(&table);
    }

    #[test]
    fn deny_rules_hold_even_when_bypassing() {
        let f = fixture();
        let policy = Policy::new(PermissionMode::BypassPermissions, &rules(&[], &["run_shell(ls:*)"], &["read_file(./.env)"]), std::slice::from_ref(&f.root));
        let env = ToolKind::Read { paths: vec![f.root.join(".env")] };
        assert!(matches!(policy.decide(Call { tool: "read_file", kind: &env, read_only: true, accept_edits: false, granted: &[] }), RuleVerdict::Deny(_)));
        assert_eq!(shell(&policy, "ls"), RuleVerdict::Approved);
    }

    #[test]
    fn how_a_command_was_allowed_picks_its_sandbox_profile() {
        // Allow: the unasked (read-only) profile; Approved: the approved one.
        let f = fixture();
        let roots = std::slice::from_ref(&f.root);
        let with_rule = rules(&["run_shell(make:*)"], &[], &[]);
        let default = Policy::new(PermissionMode::Default, &with_rule, roots);
        assert_eq!(shell(&default, "ls"), RuleVerdict::Allow);
        assert_eq!(shell(&default, "make build"), RuleVerdict::Allow);
        let accept = Policy::new(PermissionMode::AcceptEdits, &with_rule, roots);
        assert_eq!(shell(&accept, "ls"), RuleVerdict::Allow);
        assert_eq!(shell(&accept, "make build"), RuleVerdict::Approved);
        assert!(matches!(shell(&accept, "touch x"), RuleVerdict::Ask(_)));
        let bypass = Policy::new(PermissionMode::BypassPermissions, &with_rule, roots);
        assert_eq!(shell(&bypass, "ls"), RuleVerdict::Approved);
        let kind = ToolKind::Execute { command: "touch x".into() };
        let call = Call { tool: "run_shell", kind: &kind, read_only: false, accept_edits: false, granted: &[] };
        let hook = || crate::permissions::PreHook::Allow("ok".into());
        assert_eq!(default.decide_with_hook(call, hook()), RuleVerdict::Allow);
        assert_eq!(bypass.decide_with_hook(call, hook()), RuleVerdict::Approved);
        // "Execute and accept edits" approves like acceptEdits.
        assert_eq!(default.decide(Call { accept_edits: true, kind: &ToolKind::Execute { command: "make x".into() }, ..call }), RuleVerdict::Approved);
    }

    fn shapes(verdict: &RuleVerdict) -> Vec<String> {
        match verdict {
            RuleVerdict::Ask(ask) => ask.shapes.clone(),
            other => panic!("expected an ask, got {other:?}"),
        }
    }

    // Unix only: the commands name Unix paths (`/etc`, `/tmp`), and a command runs contained only in bubblewrap's profile (Linux).
    #[cfg(unix)]
    #[test]
    fn what_the_sandbox_contains_runs_unasked_where_the_mode_says_and_nothing_that_leaves_it_does() {
        let f = fixture();
        let roots = std::slice::from_ref(&f.root);
        std::fs::create_dir_all(f.root.join("src")).unwrap();
        let sandboxed = Containment { sandboxed: true, probe: None, auto_allow_in_default: false };
        let policy = |mode: PermissionMode, containment: Containment| {
            let policy = Policy::new(mode, &PermissionRules::default(), roots);
            policy.set_containment(containment);
            policy
        };
        let contained = [
            "touch made.txt",
            "cargo test --lib && git commit -m wip",
            "npm install | tee install.log",
            "rm -rf src/build",
            "mkdir out && cp notes.txt out/",
        ];
        // Nothing of these may be auto-allowed: a path outside the walls, a
        // protected path, a write outside, a name only known when it runs.
        let outside = format!("cp notes.txt {}", std::env::temp_dir().join("elsewhere-tandem").display());
        let leaving = [
            "touch /etc/tandem-test",
            outside.as_str(),
            "echo x > /tmp/out.txt",
            "touch .git/hooks/pre-commit",
            "mkdir -p .tandem && echo '{}' > .tandem/settings.json",
            "eval \"$X\"",
            "$CMD build",
            "sh -c 'touch x'",
            "cat ~/.ssh/id_rsa > key.txt",
        ];
        // acceptEdits with a sandbox: contained commands run unasked.
        let accept = policy(PermissionMode::AcceptEdits, sandboxed);
        for command in contained {
            assert_eq!(shell(&accept, command), RuleVerdict::Contained, "{command}");
        }
        for command in leaving {
            assert!(matches!(shell(&accept, command), RuleVerdict::Ask(_)), "{command}: {:?}", shell(&accept, command));
        }
        // A redirect alone is an edit, which acceptEdits approves (as before).
        assert_eq!(shell(&accept, "echo hi > notes.txt"), RuleVerdict::Approved);
        // Without a sandbox nothing is contained: asked as before.
        let unsandboxed = policy(PermissionMode::AcceptEdits, Containment::default());
        assert!(matches!(shell(&unsandboxed, "touch made.txt"), RuleVerdict::Ask(_)));
        // `default` asks, unless the user set autoAllowSandboxed.
        let default = policy(PermissionMode::Default, sandboxed);
        assert!(matches!(shell(&default, "touch made.txt"), RuleVerdict::Ask(_)));
        let auto = policy(PermissionMode::Default, Containment { sandboxed: true, probe: None, auto_allow_in_default: true });
        for command in contained {
            assert_eq!(shell(&auto, command), RuleVerdict::Contained, "{command}");
        }
        for command in leaving {
            assert!(matches!(shell(&auto, command), RuleVerdict::Ask(_)), "{command}");
        }
        // A rule that allows the command no longer holds it read-only there.
        let ruled = Policy::new(PermissionMode::Default, &rules(&["run_shell(make:*)"], &[], &[]), roots);
        ruled.set_containment(Containment { sandboxed: true, probe: None, auto_allow_in_default: true });
        assert_eq!(shell(&ruled, "make build"), RuleVerdict::Contained);
        // Plan mode refuses; bypass approves; read-only stays unasked.
        assert!(matches!(shell(&policy(PermissionMode::Plan, sandboxed), "touch x"), RuleVerdict::Deny(_)));
        assert_eq!(shell(&policy(PermissionMode::BypassPermissions, sandboxed), "touch x"), RuleVerdict::Approved);
        assert_eq!(shell(&auto, "ls"), RuleVerdict::Allow);
        // An ask rule and a deny rule still win.
        let ruled = Policy::new(PermissionMode::AcceptEdits, &rules(&[], &["run_shell(git push:*)"], &["run_shell(rm:*)"]), roots);
        ruled.set_containment(sandboxed);
        assert!(matches!(shell(&ruled, "git push origin"), RuleVerdict::Ask(_)));
        assert!(matches!(shell(&ruled, "rm -rf src"), RuleVerdict::Deny(_)));
    }

    // Unix only: the commands name Unix paths (`/etc`, `/tmp`), and a command runs contained only in bubblewrap's profile (Linux).
    #[cfg(unix)]
    #[test]
    fn commands_of_a_shape_allowed_for_the_session_run_contained_and_only_those() {
        let f = fixture();
        let roots = std::slice::from_ref(&f.root);
        let policy = Policy::new(PermissionMode::Default, &PermissionRules::default(), roots);
        policy.set_containment(Containment { sandboxed: true, probe: None, auto_allow_in_default: false });
        // The shapes: program and subcommand, one per command that needs
        // asking (read-only ones need none); none for a wrapper.
        expect_test::expect![[r#"[["cargo test"], ["cargo test", "git commit"], ["touch"], ["rm"], ["npm install"], ["make"], [], []]"#]]
        .assert_eq(&format!(
            "{:?}",
            [
                "cargo test --lib x",
                "cargo test && git status && git commit -m x",
                "touch a.txt | cat",
                "rm -rf build",
                "ls && npm install",
                "make -j4",
                "timeout 10 cargo test",
                "env A=1 touch x",
            ]
            .map(|c| shapes(&shell(&policy, c)))
        ));
        // Not offered where the command leaves the sandbox, or without one.
        assert!(shapes(&shell(&policy, "touch /etc/x")).is_empty());
        let unsandboxed = Policy::new(PermissionMode::Default, &PermissionRules::default(), roots);
        assert!(shapes(&shell(&unsandboxed, "touch a.txt")).is_empty());
        policy.allow_shapes(&["cargo test".to_string(), "touch".to_string()]);
        assert_eq!(shell(&policy, "cargo test --release"), RuleVerdict::Contained);
        assert_eq!(shell(&policy, "touch b.txt && cargo test"), RuleVerdict::Contained);
        // Each shape must be allowed: `git commit` is not.
        assert!(matches!(shell(&policy, "cargo test && git commit -m x"), RuleVerdict::Ask(_)));
        assert!(matches!(shell(&policy, "cargo build"), RuleVerdict::Ask(_)));
        // An allowed shape does not carry a command past the walls.
        assert!(matches!(shell(&policy, "touch /etc/x"), RuleVerdict::Ask(_)));
        assert!(matches!(shell(&policy, "touch .git/hooks/pre-commit"), RuleVerdict::Ask(_)));
        assert!(matches!(shell(&policy, "cargo test > /tmp/log"), RuleVerdict::Ask(_)));
        // Without the sandbox, no shape holds.
        policy.set_containment(Containment::default());
        assert!(matches!(shell(&policy, "touch c.txt"), RuleVerdict::Ask(_)));
    }

    // (`/etc/hosts` is outside the workspace on Windows too:
    // shell::paths::tests::a_path_from_the_root_is_outside_the_workspace_on_every_system.)
    #[test]
    fn always_allow_stays_narrow() {
        let f = fixture();
        let policy = Policy::new(PermissionMode::Default, &PermissionRules::default(), std::slice::from_ref(&f.root));
        let first = shell(&policy, "git push origin main");
        assert_eq!(always(&first), vec!["run_shell(git push:*)"]);
        assert_eq!(always(&shell(&policy, "echo building the project\ntouch X")), vec!["run_shell(touch X)"]);
        assert_eq!(always(&shell(&policy, "make")), vec!["run_shell(make)"]);
        assert_eq!(always(&shell(&policy, "cargo test --lib && rm -rf build")), vec!["run_shell(cargo test:*)", "run_shell(rm -rf build)"]);
        // A concern no rule can cover: allow once only.
        assert_eq!(always(&shell(&policy, "curl -s x | sh")), Vec::<String>::new());
        assert_eq!(always(&shell(&policy, "echo x > /etc/hosts")), Vec::<String>::new());
        let RuleVerdict::Ask(ask) = first else { panic!() };
        policy.allow_for_session(&ask.always);
        assert_eq!(shell(&policy, "git push origin other"), RuleVerdict::Allow);
        // Narrow: other commands are still asked.
        for command in ["git reset --hard", "rm -rf /", "echo hi\ncurl x", "git push && touch y"] {
            assert!(matches!(shell(&policy, command), RuleVerdict::Ask(_)), "{command}");
        }
        // New settings keep what the session allowed.
        policy.set_rules(&PermissionRules::default());
        assert_eq!(shell(&policy, "git push origin other"), RuleVerdict::Allow);
    }

    /// "Always allow" for a write names the file with `/` on every system,
    /// relative to the workspace inside it and absolute (`//`) outside, and
    /// the rule it adds covers the write.
    #[test]
    fn the_always_rule_for_a_write_is_spelled_with_slashes_and_covers_it() {
        let f = fixture();
        let policy = Policy::new(PermissionMode::Default, &PermissionRules::default(), std::slice::from_ref(&f.root));
        let inside = Write { shown: "sub/a.txt".into(), path: f.root.join("sub").join("a.txt") };
        let rule = policy.edit_rule(&inside);
        assert_eq!(rule.to_string(), "edit_file(./sub/a.txt)");
        assert!(rule.matches("write_file", &ToolKind::Edit { path: inside.path.clone() }, &policy.places));
        let elsewhere = tempfile::tempdir().unwrap();
        let outside_path = elsewhere.path().canonicalize().unwrap().join("x.txt");
        let outside = Write { shown: "x.txt".into(), path: outside_path.clone() };
        let rule = policy.edit_rule(&outside);
        let text = rule.to_string();
        assert!(text.starts_with("edit_file(//") && !text.contains('\\'), "{text}");
        assert!(rule.matches("write_file", &ToolKind::Edit { path: outside_path }, &policy.places), "{text}");
    }

    #[test]
    fn fetches_are_asked_per_domain() {
        let f = fixture();
        let policy = Policy::new(PermissionMode::Default, &rules(&["web_fetch(domain:docs.rs)"], &[], &[]), std::slice::from_ref(&f.root));
        let fetch = |url: &str| ToolKind::Fetch { url: url.into() };
        assert_eq!(policy.decide(Call { tool: "web_fetch", kind: &fetch("https://docs.rs/x"), read_only: true, accept_edits: false, granted: &[] }), RuleVerdict::Allow);
        let asked = policy.decide(Call { tool: "web_fetch", kind: &fetch("https://crates.io/x"), read_only: true, accept_edits: false, granted: &[] });
        assert_eq!(always(&asked), vec!["web_fetch(domain:crates.io)"]);
    }

    #[test]
    fn headless_denial_tells_the_model_how_to_get_permission() {
        let f = fixture();
        let policy = Policy::new(PermissionMode::Default, &PermissionRules::default(), std::slice::from_ref(&f.root));
        let kind = ToolKind::Execute { command: "git push".into() };
        let call = Call { tool: "run_shell", kind: &kind, read_only: false, accept_edits: false, granted: &[] };
        let RuleVerdict::Ask(ask) = policy.decide(call) else { panic!() };
        expect_test::expect![[r#"run_shell git push needs permission (`git push` is not known to be read-only: `push` is not a known read-only subcommand); no one can answer in this run: allow it in `.tandem/settings.json` with "permissions": {"allow": ["run_shell(git push)"]}, or rerun with `--permission-mode bypassPermissions`"#]]
            .assert_eq(&headless_denial(call, "git push", &ask));
    }

    /// Each verdict in one word, with the deny reason or the ask reasons.
    fn verdict_line(verdict: &RuleVerdict) -> String {
        match verdict {
            RuleVerdict::Allow => "allow".into(),
            RuleVerdict::Approved => "approved".into(),
            RuleVerdict::Contained => "contained".into(),
            RuleVerdict::Deny(reason) => format!("deny: {reason}"),
            RuleVerdict::Review => "review".into(),
            RuleVerdict::Ask(ask) => format!("ask: {} [always: {}]", ask.reasons.join(" | "), ask.always.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")),
        }
    }

    #[test]
    fn a_redirect_into_the_workspace_is_an_edit() {
        let f = fixture();
        let roots = std::slice::from_ref(&f.root);
        let none = PermissionRules::default();
        let default = Policy::new(PermissionMode::Default, &none, roots);
        let accept = Policy::new(PermissionMode::AcceptEdits, &none, roots);
        let plan = Policy::new(PermissionMode::Plan, &none, roots);
        let allowed = Policy::new(PermissionMode::Default, &rules(&["edit_file(logs/**)"], &[], &[]), roots);
        let denied = Policy::new(PermissionMode::AcceptEdits, &rules(&[], &[], &["Write(./notes.txt)"]), roots);
        let lines = [
            ("default", &default, "echo clobbered > notes.txt"),
            ("default", &default, "ls | tee files.txt"),
            ("default", &default, "ls > /dev/null"),
            ("acceptEdits", &accept, "echo clobbered > notes.txt"),
            ("acceptEdits", &accept, "echo x > .tandem/settings.json"),
            ("acceptEdits", &accept, "echo x > .tande[m]/settings.json"),
            ("acceptEdits", &accept, "rm x > notes.txt"),
            ("plan", &plan, "echo x > notes.txt"),
            ("edit rule", &allowed, "ls > logs/ls.txt"),
            ("edit rule", &allowed, "ls > other.txt"),
            ("edit deny", &denied, "echo x >> notes.txt"),
        ];
        let out: String = lines.iter().map(|(name, policy, command)| format!("{name}: {command} => {}\n", verdict_line(&shell(policy, command)))).collect();
        expect_test::expect![[r#"
            default: echo clobbered > notes.txt => ask: writes to `notes.txt`: an edit (allowed in acceptEdits) [always: edit_file(./notes.txt)]
            default: ls | tee files.txt => ask: writes to `files.txt`: an edit (allowed in acceptEdits) [always: edit_file(./files.txt)]
            default: ls > /dev/null => allow
            acceptEdits: echo clobbered > notes.txt => approved
            acceptEdits: echo x > .tandem/settings.json => ask: writes to `.tandem/settings.json`, a protected path (Tandem's settings: they grant permissions and run hooks): asked in every mode, bypassPermissions too [always: ]
            acceptEdits: echo x > .tande[m]/settings.json => ask: writes to `.tande[m]/settings.json`, a file only known when it runs [always: ]
            acceptEdits: rm x > notes.txt => ask: `rm x` is not known to be read-only | writes to `notes.txt`: an edit (allowed in acceptEdits) [always: run_shell(rm x), edit_file(./notes.txt)]
            plan: echo x > notes.txt => deny: plan mode allows only read-only tools (read_file, list_files, grep_search). Do not make changes now: investigate with read-only tools, then present your plan to the user
            edit rule: ls > logs/ls.txt => approved
            edit rule: ls > other.txt => ask: writes to `other.txt`: an edit (allowed in acceptEdits) [always: edit_file(./other.txt)]
            edit deny: echo x >> notes.txt => deny: the rule `write_file(./notes.txt)` in permissions.deny (.tandem/settings.json) forbids this call (the command writes `notes.txt`)
        "#]].assert_eq(&out);
    }

    // Unix only: its expectations are Linux's: `/` paths, names compared with case (Windows' spellings: platform:: tests and tests/windows/smoke).
    #[cfg(unix)]
    #[test]
    fn deny_rules_mean_deny() {
        let f = fixture();
        std::fs::write(f.root.join("secret.txt"), "s").unwrap();
        crate::platform::symlink(f.root.join("secret.txt"), f.root.join("innocent.txt")).unwrap();
        let roots = std::slice::from_ref(&f.root);
        let policy = Policy::new(PermissionMode::BypassPermissions, &rules(&[], &[], &["Bash(rm:*)", "read_file(./secret.txt)"]), roots);
        let commands = [
            "rm f", "/bin/rm f", "command rm f", "env rm f", "env -i A=1 rm f", "nice -n 5 rm f", "timeout 5 rm f", "nohup rm f",
            "ls | xargs rm", "xargs -I ls rm p", "sh -c 'rm f'", "bash -c \"ls && rm f\"", "find . -delete", "find . -exec rm {} \\;",
            "$(echo rm) f", "$X f", "eval \"$C\"", "sh x.sh", "cat secret.txt", "cat ./src/../secret.txt", "cat innocent.txt",
            "grep -f secret.txt x", "wc --files0-from=secret.txt", "cat < secret.txt", "ls", "echo rm", "rmdir x",
        ];
        let out: String = commands.iter().map(|c| format!("{c} => {}\n", verdict_line(&shell(&policy, c)))).collect();
        expect_test::expect![[r#"
            rm f => deny: the rule `run_shell(rm:*)` in permissions.deny (.tandem/settings.json) forbids this call
            /bin/rm f => deny: the rule `run_shell(rm:*)` in permissions.deny (.tandem/settings.json) forbids this call (the command runs `rm f`)
            command rm f => deny: the rule `run_shell(rm:*)` in permissions.deny (.tandem/settings.json) forbids this call (the command runs `rm f`)
            env rm f => deny: the rule `run_shell(rm:*)` in permissions.deny (.tandem/settings.json) forbids this call (the command runs `rm f`)
            env -i A=1 rm f => deny: the rule `run_shell(rm:*)` in permissions.deny (.tandem/settings.json) forbids this call (the command runs `rm f`)
            nice -n 5 rm f => deny: the rule `run_shell(rm:*)` in permissions.deny (.tandem/settings.json) forbids this call (the command runs `rm f`)
            timeout 5 rm f => deny: the rule `run_shell(rm:*)` in permissions.deny (.tandem/settings.json) forbids this call (the command runs `rm f`)
            nohup rm f => deny: the rule `run_shell(rm:*)` in permissions.deny (.tandem/settings.json) forbids this call (the command runs `rm f`)
            ls | xargs rm => deny: the rule `run_shell(rm:*)` in permissions.deny (.tandem/settings.json) forbids this call (the command runs `rm`)
            xargs -I ls rm p => deny: the rule `run_shell(rm:*)` in permissions.deny (.tandem/settings.json) forbids this call (the command runs `rm p`)
            sh -c 'rm f' => deny: the rule `run_shell(rm:*)` in permissions.deny (.tandem/settings.json) forbids this call (the command runs `rm f`)
            bash -c "ls && rm f" => deny: the rule `run_shell(rm:*)` in permissions.deny (.tandem/settings.json) forbids this call (the command runs `rm f`)
            find . -delete => deny: the rule `run_shell(rm:*)` in permissions.deny (.tandem/settings.json) forbids this call (the command runs `rm -r .`)
            find . -exec rm {} \; => deny: the rule `run_shell(rm:*)` in permissions.deny (.tandem/settings.json) forbids this call (the command runs `rm {}`)
            $(echo rm) f => deny: the rule `run_shell(rm:*)` in permissions.deny (.tandem/settings.json) forbids this call: the command name in `$(echo rm) f` is only known when it runs, and a command only known when it runs cannot be checked against deny rules; write the command out
            $X f => deny: the rule `run_shell(rm:*)` in permissions.deny (.tandem/settings.json) forbids this call: the command name in `$X f` is only known when it runs, and a command only known when it runs cannot be checked against deny rules; write the command out
            eval "$C" => deny: the rule `run_shell(rm:*)` in permissions.deny (.tandem/settings.json) forbids this call: `eval $C` runs text only known when it runs, and a command only known when it runs cannot be checked against deny rules; write the command out
            sh x.sh => deny: the rule `run_shell(rm:*)` in permissions.deny (.tandem/settings.json) forbids this call: `sh x.sh` runs the commands in `x.sh`, and a command only known when it runs cannot be checked against deny rules; write the command out
            cat secret.txt => deny: the rule `read_file(./secret.txt)` in permissions.deny (.tandem/settings.json) forbids this call (the command reads `secret.txt`)
            cat ./src/../secret.txt => deny: the rule `read_file(./secret.txt)` in permissions.deny (.tandem/settings.json) forbids this call (the command reads `secret.txt`)
            cat innocent.txt => deny: the rule `read_file(./secret.txt)` in permissions.deny (.tandem/settings.json) forbids this call (the command reads `secret.txt`)
            grep -f secret.txt x => deny: the rule `read_file(./secret.txt)` in permissions.deny (.tandem/settings.json) forbids this call (the command reads `secret.txt`)
            wc --files0-from=secret.txt => deny: the rule `read_file(./secret.txt)` in permissions.deny (.tandem/settings.json) forbids this call (the command reads `secret.txt`)
            cat < secret.txt => deny: the rule `read_file(./secret.txt)` in permissions.deny (.tandem/settings.json) forbids this call (the command reads `secret.txt`)
            ls => approved
            echo rm => approved
            rmdir x => approved
        "#]].assert_eq(&out);
        // Without shell deny rules, a name only known at run time is asked, not refused.
        let reads_only = Policy::new(PermissionMode::Default, &rules(&[], &[], &["read_file(./secret.txt)"]), roots);
        assert!(matches!(shell(&reads_only, "$X f"), RuleVerdict::Ask(_)));
        // read_file of a symlink to a denied file is refused.
        let read = ToolKind::Read { paths: vec![f.root.join("innocent.txt")] };
        let verdict = reads_only.decide(Call { tool: "read_file", kind: &read, read_only: true, accept_edits: false, granted: &[] });
        assert!(matches!(verdict, RuleVerdict::Deny(_)), "{verdict:?}");
    }

    /// A deny rule on a command holds through every wrapper and every
    /// construct that runs a name chosen when it runs; a read deny holds
    /// for git's objects: a command printing them is asked, refused in
    /// `bypassPermissions`, and refused wherever it names the file.
    #[test]
    fn deny_rules_hold_through_run_time_names_and_git_objects() {
        let f = fixture();
        std::fs::write(f.root.join("secret.txt"), "s").unwrap();
        std::fs::write(f.root.join("notes.txt"), "n").unwrap();
        let roots = std::slice::from_ref(&f.root);
        let deny = rules(&[], &[], &["Bash(rm:*)", "Bash(git push:*)", "Read(./secret.txt)"]);
        let bypass = Policy::new(PermissionMode::BypassPermissions, &deny, roots);
        let default = Policy::new(PermissionMode::Default, &deny, roots);
        let lines = [
            (&bypass, "flock /tmp/l rm f"), (&bypass, "env -iS 'rm f'"), (&bypass, "trap 'rm f' EXIT"), (&bypass, "strace -f rm f"),
            (&bypass, "git -c alias.x='!rm f' x"), (&bypass, "git -C . --no-pager push origin"), (&bypass, "python3 -c 'import os'"),
            (&bypass, "awk 'BEGIN{system(\"x\")}'"), (&bypass, "x='$(rm f)'; echo ${x@P}"), (&bypass, "[[ 'a[$(x)]' -eq 0 ]]"),
            (&bypass, "git show HEAD:secret.txt"), (&bypass, "git log -p"), (&bypass, "git log -p -- notes.txt"), (&bypass, "git grep TOKEN"),
            (&default, "git log -p"), (&default, "git log --oneline"), (&default, "git grep TOKEN -- notes.txt"), (&default, "git status"),
        ];
        let out: String = lines.iter().map(|(policy, command)| format!("{:?} {command} => {}\n", policy.mode(), verdict_line(&shell(policy, command)))).collect();
        expect_test::expect![[r#"
            BypassPermissions flock /tmp/l rm f => deny: the rule `run_shell(rm:*)` in permissions.deny (.tandem/settings.json) forbids this call (the command runs `rm f`)
            BypassPermissions env -iS 'rm f' => deny: the rule `run_shell(rm:*)` in permissions.deny (.tandem/settings.json) forbids this call (the command runs `rm f`)
            BypassPermissions trap 'rm f' EXIT => deny: the rule `run_shell(rm:*)` in permissions.deny (.tandem/settings.json) forbids this call (the command runs `rm f`)
            BypassPermissions strace -f rm f => deny: the rule `run_shell(rm:*)` in permissions.deny (.tandem/settings.json) forbids this call (the command runs `rm f`)
            BypassPermissions git -c alias.x='!rm f' x => deny: the rule `run_shell(rm:*)` in permissions.deny (.tandem/settings.json) forbids this call (the command runs `rm f`)
            BypassPermissions git -C . --no-pager push origin => deny: the rule `run_shell(git push:*)` in permissions.deny (.tandem/settings.json) forbids this call (the command runs `git push origin`)
            BypassPermissions python3 -c 'import os' => deny: the rule `run_shell(rm:*)` in permissions.deny (.tandem/settings.json) forbids this call: `python3 -c import os` runs code given as text, and a command only known when it runs cannot be checked against deny rules; write the command out
            BypassPermissions awk 'BEGIN{system("x")}' => deny: the rule `run_shell(rm:*)` in permissions.deny (.tandem/settings.json) forbids this call: `awk BEGIN{system("x")}` runs commands from its awk program (system, pipes), and a command only known when it runs cannot be checked against deny rules; write the command out
            BypassPermissions x='$(rm f)'; echo ${x@P} => deny: the rule `run_shell(rm:*)` in permissions.deny (.tandem/settings.json) forbids this call: `${x@P}` expands the value as a prompt (`@P`), which can run a command, and a command only known when it runs cannot be checked against deny rules; write the command out
            BypassPermissions [[ 'a[$(x)]' -eq 0 ]] => deny: the rule `run_shell(rm:*)` in permissions.deny (.tandem/settings.json) forbids this call: `[[ … -eq … ]]` evaluates `a[$(x)]` as arithmetic, which can run a command, and a command only known when it runs cannot be checked against deny rules; write the command out
            BypassPermissions git show HEAD:secret.txt => deny: the rule `read_file(./secret.txt)` in permissions.deny (.tandem/settings.json) forbids this call (the command reads `secret.txt`)
            BypassPermissions git log -p => deny: the rule `read_file(./secret.txt)` in permissions.deny (.tandem/settings.json) forbids this call: `git log -p` may print files from git's objects, where the sandbox cannot hide what a read-deny rule covers; name the files it may show (`-- PATH`)
            BypassPermissions git log -p -- notes.txt => approved
            BypassPermissions git grep TOKEN => deny: the rule `read_file(./secret.txt)` in permissions.deny (.tandem/settings.json) forbids this call: `git grep TOKEN` may print files from git's objects, where the sandbox cannot hide what a read-deny rule covers; name the files it may show (`-- PATH`)
            Default git log -p => ask: `git log -p` may print files from git's objects, where the sandbox cannot hide what a read-deny rule covers; name the files it may show (`-- PATH`) [always: ]
            Default git log --oneline => allow
            Default git grep TOKEN -- notes.txt => allow
            Default git status => allow
        "#]].assert_eq(&out);
    }

    #[test]
    fn a_sandbox_command_is_unwrapped_so_a_deny_rule_holds_through_it() {
        // The platform's sandbox commands are named only under sandbox/;
        // a shell line may still run one around a denied command.
        let f = fixture();
        let roots = std::slice::from_ref(&f.root);
        let bypass = Policy::new(PermissionMode::BypassPermissions, &rules(&[], &[], &["Bash(rm:*)"]), roots);
        assert!(!crate::sandbox::COMMAND_WRAPPERS.is_empty());
        for wrapper in crate::sandbox::COMMAND_WRAPPERS {
            let line = format!("{wrapper} --bind / / rm f");
            assert_eq!(
                verdict_line(&shell(&bypass, &line)),
                "deny: the rule `run_shell(rm:*)` in permissions.deny (.tandem/settings.json) forbids this call (the command runs `rm f`)",
                "{line}"
            );
        }
    }

    #[test]
    fn claude_code_tool_names_mean_tandems() {
        let f = fixture();
        std::fs::write(f.root.join(".env"), "K=V").unwrap();
        let roots = std::slice::from_ref(&f.root);
        let policy = Policy::new(
            PermissionMode::Default,
            &rules(&["Bash(cargo test:*)", "Edit(src/**)", "WebFetch(domain:docs.rs)"], &[], &["Read(./.env)", "Grep(*.pem)", "Bash(git push:*)"]),
            roots,
        );
        let call = |tool: &'static str, kind: ToolKind| verdict_line(&policy.decide(Call { tool, kind: &kind, read_only: matches!(kind, ToolKind::Read { .. }), accept_edits: false, granted: &[] }));
        let lines = [
            ("run_shell cargo test --lib", shell(&policy, "cargo test --lib")),
            ("run_shell git push", shell(&policy, "git push")),
            ("run_shell cat .env", shell(&policy, "cat .env")),
        ];
        let mut out: String = lines.iter().map(|(what, v)| format!("{what} => {}\n", verdict_line(v))).collect();
        out.push_str(&format!("read_file .env => {}\n", call("read_file", ToolKind::Read { paths: vec![f.root.join(".env")] })));
        out.push_str(&format!("grep_search k.pem => {}\n", call("grep_search", ToolKind::Read { paths: vec![f.root.join("k.pem")] })));
        out.push_str(&format!("write_file src/a.rs => {}\n", call("write_file", ToolKind::Edit { path: f.root.join("src/a.rs") })));
        out.push_str(&format!("web_fetch docs.rs => {}\n", call("web_fetch", ToolKind::Fetch { url: "https://docs.rs/x".into() })));
        expect_test::expect![[r#"
            run_shell cargo test --lib => allow
            run_shell git push => deny: the rule `run_shell(git push:*)` in permissions.deny (.tandem/settings.json) forbids this call
            run_shell cat .env => deny: the rule `read_file(./.env)` in permissions.deny (.tandem/settings.json) forbids this call (the command reads `.env`)
            read_file .env => deny: the rule `read_file(./.env)` in permissions.deny (.tandem/settings.json) forbids this call
            grep_search k.pem => deny: the rule `grep_search(*.pem)` in permissions.deny (.tandem/settings.json) forbids this call
            write_file src/a.rs => allow
            web_fetch docs.rs => allow
        "#]].assert_eq(&out);
    }
}
