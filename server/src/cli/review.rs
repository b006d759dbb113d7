//! `tandem review`: the agent reviews a scope of changes (the uncommitted
//! ones by default, `--last-run`, `--branch BASE`, `--range A..B`, or the
//! files named) with the read-only tools and reports findings through
//! `report_finding`; printed as a transcript, or as JSON Lines run events
//! with `--json` (each finding a `finding` event).
//!
//! Exit codes: 0 the review completed (with or without findings), 1 it
//! failed or stopped at the turn limit, 2 not started (no provider, bad
//! arguments, a scope that cannot be read), 3 nothing to review, 130
//! cancelled.

use std::process::ExitCode;

use tandem::review::{self, Level, ReviewRequest, Scope, ScopeError};
use tandem::workspace::Workspace;

use super::ask::{exit_code, Headless, SessionOptions};
use super::terminal::errln;

/// The exit code of a review with nothing to review.
pub const NOTHING_TO_REVIEW: u8 = 3;

pub struct ReviewOptions {
    pub session: SessionOptions,
    pub scope: Scope,
    pub level: Level,
}

pub async fn review(options: ReviewOptions, workspace: Workspace) -> anyhow::Result<ExitCode> {
    let session = Headless::open(&options.session, workspace).await?;
    let request = ReviewRequest { scope: options.scope, level: options.level };
    let prepared = review::prepare(session.host().workspace(), session.host().checkpoints().map(|c| &**c), &request);
    let prepared = match prepared {
        Ok(prepared) => prepared,
        Err(err) => {
            session.close().await;
            errln!("tandem review: {err}");
            return Ok(match err {
                ScopeError::NothingToReview(_) => ExitCode::from(NOTHING_TO_REVIEW),
                ScopeError::Unavailable(_) => ExitCode::from(2),
            });
        }
    };
    errln!("tandem review: {}", prepared.describe());
    let outcome = session.run_review(prepared.prompt).await;
    session.close().await;
    Ok(exit_code(outcome?.status))
}
