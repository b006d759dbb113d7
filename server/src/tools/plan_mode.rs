//! Plan mode, which `enter_plan_mode` and `exit_plan_mode` switch: the
//! run's state ([`PlanMode`] in [`RunScope`](super::RunScope)), the gate
//! every call passes while it is on ([`plan_mode_refusal`]), and who
//! reviews a plan ([`PlanReview`]).
//!
//! In plan mode reads, searches, `web_fetch`, `skill` and read-only
//! sub-agents go on; `write_file`/`edit_file` work only on the run's plan
//! file (resolved paths compared); other changes are refused with
//! `Blocked in plan mode: TOOL`, and shell commands with `Shell commands
//! blocked in plan mode`. The plan file lives under `.tandem/plans/`, named
//! for the run.
//!
//! Who reviews a plan is the front end's [`PlanReview`] in the run's
//! scope: the editor opens the plan file (`window/showDocument`) and offers
//! "Execute", "Execute and accept edits" and "Keep planning"; a terminal on
//! a tty asks the same. With nobody to ask (`--json`, no tty, sub-agents)
//! the run leaves plan mode and the model gets the plan back.

use std::path::{Path, PathBuf};

pub use super::ports::plan_review::{PlanAnswer, PlanReview};
use super::{PermissionMode, ToolContext, ToolKind};
use crate::sync::MutexExt;
use crate::workspace::normalize_lexically;

/// A run's plan mode.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlanMode {
    pub active: bool,
    /// The plan file (absolute), chosen when the run first enters plan mode.
    pub file: Option<PathBuf>,
    /// The permission mode to restore on exit.
    pub restore_mode: PermissionMode,
    /// An approved plan said "Execute and accept edits": the rest of the
    /// run's edits are not reviewed.
    pub accept_edits: bool,
}

/// The plan file for a run: `.tandem/plans/plan-YYYYMMDD-HHMMSS-XXXX.md`.
pub fn new_plan_file(root: &Path) -> PathBuf {
    let stamp = chrono::Local::now().format("%Y%m%d-%H%M%S");
    let suffix: u16 = rand::random();
    root.join(".tandem").join("plans").join(format!("plan-{stamp}-{suffix:04x}.md"))
}

/// Start a run in plan mode (`--permission-mode plan`, the editor's `plan`
/// setting); leaving it restores `default`.
pub fn start_in_plan_mode(scope: &super::RunScope, root: &Path) {
    let mut plan = scope.plan.locked();
    let file = plan.file.clone().unwrap_or_else(|| new_plan_file(root));
    *plan = PlanMode { active: true, file: Some(file), restore_mode: PermissionMode::Default, accept_edits: false };
    *scope.permission_mode.locked() = PermissionMode::Default;
    // The way out of plan mode is loaded with it (it is deferred otherwise).
    scope.activate("exit_plan_mode");
}

impl super::RunScope {
    /// The run's section for the system prompt of its next turn: plan
    /// mode's while it is on (it comes and goes within a run), else empty.
    pub fn prompt_section(&self, workspace: &crate::workspace::Workspace) -> String {
        let plan = self.plan.locked().clone();
        match (plan.active, plan.file) {
            (true, Some(file)) => prompt_section(&workspace.display_path(&file)),
            _ => String::new(),
        }
    }
}

/// Put the run in plan mode (choosing its plan file the first time).
/// Returns the plan file; `None` when it already was in plan mode.
pub fn enter(ctx: &ToolContext, restore_mode: PermissionMode) -> Option<PathBuf> {
    let mut plan = ctx.run.plan.locked();
    if plan.active {
        return None;
    }
    // The way out of plan mode is loaded with it (it is deferred otherwise).
    ctx.run.activate("exit_plan_mode");
    let file = plan.file.clone().unwrap_or_else(|| new_plan_file(ctx.workspace.root()));
    *plan = PlanMode { active: true, file: Some(file.clone()), restore_mode, accept_edits: plan.accept_edits };
    Some(file)
}

/// Why a call may not run in plan mode, or `None` when it may (or the run
/// is not in plan mode).
pub fn plan_mode_refusal(ctx: &ToolContext, tool: &str, kind: &ToolKind, read_only: bool) -> Option<String> {
    let plan = ctx.run.plan.locked().clone();
    if !plan.active {
        return None;
    }
    match kind {
        ToolKind::Execute { .. } => Some("Shell commands blocked in plan mode".to_string()),
        ToolKind::Edit { path } if plan.file.as_deref().is_some_and(|file| same_file(file, path)) => None,
        ToolKind::Edit { .. } => Some(format!("Blocked in plan mode: {tool}")),
        _ if read_only => None,
        _ => Some(format!("Blocked in plan mode: {tool}")),
    }
}

/// Compare resolved paths: `..` folded, symlinked folders followed (the
/// file itself may not exist yet).
fn same_file(a: &Path, b: &Path) -> bool {
    resolve(a) == resolve(b)
}

fn resolve(path: &Path) -> PathBuf {
    let path = normalize_lexically(path);
    match (path.parent().and_then(|p| p.canonicalize().ok()), path.file_name()) {
        (Some(parent), Some(name)) => parent.join(name),
        _ => path,
    }
}

/// The system-prompt section while the run is in plan mode.
pub fn prompt_section(plan_file: &str) -> String {
    format!(
        "# Plan Mode Active\nYou are in plan mode: read-only. Do not change anything yet.\n1. Explore: read and search the code the task touches (read-only sub-agents may help).\n2. Design the approach.\n3. Write the plan to {plan_file}, the only file you may edit: the context (what exists and why it matters), the steps (files and functions to change), and how to verify the result (tests, commands).\n4. Call exit_plan_mode so the user can review and approve the plan.\n"
    )
}

/// Plans larger than this are cut when read back.
pub const MAX_PLAN_CHARS: usize = 40_000;

/// The run's plan mode now.
pub fn current(ctx: &ToolContext) -> PlanMode {
    ctx.run.plan.locked().clone()
}

/// The plan as the user and the model are shown it: the plan file's text
/// (cut at [`MAX_PLAN_CHARS`]), or `(No plan file found)`.
pub fn read_plan(ctx: &ToolContext, file: &Path) -> String {
    match ctx.workspace.read(file) {
        Ok(text) => match text.text.char_indices().nth(MAX_PLAN_CHARS) {
            Some((end, _)) => format!("{}\n[... plan cut at {MAX_PLAN_CHARS} characters]", &text.text[..end]),
            None => text.text.to_string(),
        },
        Err(_) => "(No plan file found)".to_string(),
    }
}

/// Leave plan mode; `accept_edits` when the approved plan said "Execute
/// and accept edits" (the run's permission mode becomes `acceptEdits`).
pub fn leave(ctx: &ToolContext, accept_edits: bool) {
    let mut plan = ctx.run.plan.locked();
    plan.active = false;
    plan.accept_edits |= accept_edits;
    if accept_edits {
        *ctx.run.permission_mode.locked() = PermissionMode::AcceptEdits;
    }
}
