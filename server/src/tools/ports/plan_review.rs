//! Who reviews a plan (`exit_plan_mode`): the front end's port in the
//! run's scope (see `tools/plan_mode.rs` for plan mode itself).

use std::path::Path;

use async_trait::async_trait;

/// What the user answered about a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanAnswer {
    Execute,
    ExecuteAcceptEdits,
    KeepPlanning { feedback: String },
}

/// Shows a plan to the user and waits for the answer (`None`: nobody answered).
#[async_trait]
pub trait PlanReview: Send + Sync {
    async fn review(&self, plan_file: &Path, plan: &str) -> Option<PlanAnswer>;
}
