//! The language server (the only module that knows LSP types).
//!
//! PLACEHOLDER: being built (issue 4).

/// Serve LSP over stdin/stdout until the client exits.
pub async fn serve_stdio() -> anyhow::Result<()> {
    anyhow::bail!("the language server is not built yet")
}
