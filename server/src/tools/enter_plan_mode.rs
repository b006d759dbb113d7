//! `enter_plan_mode` (deferred), and plan mode itself: the run's state
//! ([`PlanMode`] in [`RunScope`](super::RunScope)) and the gate every call
//! passes while it is on ([`plan_mode_refusal`]).
//!
//! In plan mode reads, searches, `web_fetch`, `skill` and read-only
//! sub-agents go on; `write_file`/`edit_file` work only on the run's plan
//! file (resolved paths compared); other changes are refused with
//! `Blocked in plan mode: TOOL`, and shell commands with `Shell commands
//! blocked in plan mode`. The plan file lives under `.tandem/plans/`, named
//! for the run.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{Tool, ToolContext, ToolError, ToolKind};
use crate::workspace::normalize_lexically;

/// A run's plan mode.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlanMode {
    pub active: bool,
    /// The plan file (absolute), chosen when the run first enters plan mode.
    pub file: Option<PathBuf>,
    /// The permission mode to restore on exit ("default", "acceptEdits", …).
    pub restore_mode: String,
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
    let mut plan = scope.plan.lock().unwrap_or_else(|e| e.into_inner());
    let file = plan.file.clone().unwrap_or_else(|| new_plan_file(root));
    *plan = PlanMode { active: true, file: Some(file), restore_mode: "default".to_string(), accept_edits: false };
    *scope.permission_mode.lock().unwrap_or_else(|e| e.into_inner()) = "default".to_string();
    // The way out of plan mode is loaded with it (it is deferred otherwise).
    scope.activate("exit_plan_mode");
}

/// The plan-mode section for the system prompt now (empty outside plan mode).
pub fn current_prompt_section(ctx: &ToolContext) -> String {
    let plan = ctx.run.plan.lock().unwrap_or_else(|e| e.into_inner()).clone();
    match (plan.active, plan.file) {
        (true, Some(file)) => prompt_section(&ctx.workspace.display_path(&file)),
        _ => String::new(),
    }
}

/// Put the run in plan mode (choosing its plan file the first time).
/// Returns the plan file; `None` when it already was in plan mode.
pub fn enter(ctx: &ToolContext, restore_mode: &str) -> Option<PathBuf> {
    let mut plan = ctx.run.plan.lock().unwrap_or_else(|e| e.into_inner());
    if plan.active {
        return None;
    }
    // The way out of plan mode is loaded with it (it is deferred otherwise).
    ctx.run.activate("exit_plan_mode");
    let file = plan.file.clone().unwrap_or_else(|| new_plan_file(ctx.workspace.root()));
    *plan = PlanMode { active: true, file: Some(file.clone()), restore_mode: restore_mode.to_string(), accept_edits: plan.accept_edits };
    Some(file)
}

/// Why a call may not run in plan mode, or `None` when it may (or the run
/// is not in plan mode).
pub fn plan_mode_refusal(ctx: &ToolContext, tool: &str, kind: &ToolKind, read_only: bool) -> Option<String> {
    let plan = ctx.run.plan.lock().unwrap_or_else(|e| e.into_inner()).clone();
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

/// Enter plan mode to switch to a read-only planning phase. In plan mode, you can only read files and write to the plan file. Use this when you need to explore the codebase and design an implementation plan before making changes.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct EnterPlanModeArgs {}

pub struct EnterPlanMode;

#[async_trait]
impl Tool for EnterPlanMode {
    type Args = EnterPlanModeArgs;
    type Plan = ();
    const NAME: &'static str = "enter_plan_mode";

    fn kind(&self, _args: &Self::Args, _ctx: &ToolContext) -> ToolKind {
        ToolKind::Other
    }

    fn is_read_only(&self, _args: &Self::Args) -> bool {
        // It only narrows what the run may do.
        true
    }

    fn deferred(&self) -> bool {
        true
    }

    fn summary(&self, _args: &Self::Args) -> String {
        String::new()
    }

    async fn plan(&self, _args: &Self::Args, _ctx: &ToolContext) -> Result<(), ToolError> {
        Ok(())
    }

    async fn call(&self, _args: Self::Args, (): (), ctx: &ToolContext) -> Result<String, ToolError> {
        let mode = ctx.run.permission_mode.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let Some(file) = enter(ctx, &mode) else {
            return Ok("Already in plan mode.".to_string());
        };
        let shown = ctx.workspace.display_path(&file);
        Ok(format!(
            "Entered plan mode. You are now in read-only mode.\n\nYour plan file is {shown}: it is the only file you can edit. Explore the code, write your plan there (context, steps, verification), then call exit_plan_mode."
        ))
    }
}
