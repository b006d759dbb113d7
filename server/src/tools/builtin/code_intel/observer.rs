//! The diagnostics after an edit, as a call observer: before an `Edit`
//! call to a file the provider follows, the file's diagnostics; once the
//! call is done and the servers have settled, the new set, added to the
//! call's result. After a call that read files, the provider hears of the
//! followed ones (a provider with its own servers opens them there).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;

use super::diagnostics::render_diagnostics;
use crate::tools::observer::{AfterCall, CallObserver, ObservedCall};
use crate::tools::ports::code_intel::{CodeIntel, CodeIntelError, Settle};
use crate::tools::{ToolContext, ToolKind};

/// The observer: diagnostics around every edit to a followed file, and
/// reads told to the provider.
pub struct EditDiagnostics {
    provider: Arc<dyn CodeIntel>,
}

impl EditDiagnostics {
    pub fn new(provider: Arc<dyn CodeIntel>) -> Self {
        EditDiagnostics { provider }
    }
}

#[async_trait]
impl CallObserver for EditDiagnostics {
    async fn before(&self, call: ObservedCall<'_>, ctx: &ToolContext) -> Option<Box<dyn AfterCall>> {
        match call.kind {
            ToolKind::Edit { path } => Some(Box::new(EditWatch::before(Arc::clone(&self.provider), ctx, path).await?)),
            ToolKind::Read { paths } => Some(Box::new(ReadNotice { provider: Arc::clone(&self.provider), paths: paths.clone() })),
            _ => None,
        }
    }
}

/// Diagnostics around one edit: the file's set before, then the settled set
/// after, as a note for the edit's tool result.
struct EditWatch {
    provider: Arc<dyn CodeIntel>,
    path: PathBuf,
    before: Vec<Value>,
    timeout: Duration,
}

impl EditWatch {
    /// Take the file's diagnostics before the edit (bounded by the settle
    /// timeout); `None` when nobody follows the file.
    async fn before(provider: Arc<dyn CodeIntel>, ctx: &ToolContext, path: &std::path::Path) -> Option<EditWatch> {
        let timeout = provider.settle_timeout()?;
        if !provider.follows(path) {
            return None;
        }
        let before = match ctx.workspace.read(path) {
            Ok(file) => {
                let found = tokio::time::timeout(timeout, provider.diagnostics(path, &file.text, None)).await;
                match found {
                    Ok(Ok(found)) => found.items,
                    _ => Vec::new(),
                }
            }
            // A file the edit creates has no diagnostics yet.
            Err(_) => Vec::new(),
        };
        Some(EditWatch { provider, path: path.to_path_buf(), before, timeout })
    }
}

#[async_trait]
impl AfterCall for EditWatch {
    /// The note for the tool result, once the servers have settled.
    async fn after(self: Box<Self>, ctx: &ToolContext, succeeded: bool) -> String {
        if !succeeded {
            return String::new();
        }
        let display = ctx.workspace.display_path(&self.path);
        let Ok(file) = ctx.workspace.read(&self.path) else { return String::new() };
        let settle = Settle { version: file.stamp.version, timeout: self.timeout };
        let found = tokio::select! {
            found = self.provider.diagnostics(&self.path, &file.text, Some(settle)) => found,
            () = ctx.cancel.cancelled() => return String::new(),
        };
        match found {
            Ok(found) => {
                let mut note = format!("\n\nDiagnostics after the edit: {}", render_diagnostics(&ctx.workspace, &self.path, &found.items, Some(&self.before), 2));
                if !found.settled {
                    note.push_str(&format!(
                        "\n(The language servers had not settled within {} s; these may be incomplete. Call code_intel with operation \"diagnostics\" for {display} to look again.)",
                        self.timeout.as_secs_f32()
                    ));
                }
                note
            }
            Err(CodeIntelError::NoServer(_)) => String::new(),
            Err(err) => format!("\n\n(No diagnostics after the edit: {})", err.message()),
        }
    }
}

/// After a call that read files, the followed ones are told to the
/// provider (a provider with its own servers opens them there).
struct ReadNotice {
    provider: Arc<dyn CodeIntel>,
    paths: Vec<PathBuf>,
}

#[async_trait]
impl AfterCall for ReadNotice {
    async fn after(self: Box<Self>, ctx: &ToolContext, succeeded: bool) -> String {
        if succeeded {
            for path in self.paths.iter().filter(|p| self.provider.follows(p) && p.is_file()) {
                if let Ok(file) = ctx.workspace.read(path) {
                    self.provider.file_read(path, &file.text);
                }
            }
        }
        String::new()
    }
}
