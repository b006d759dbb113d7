//! What each editor really does with what Tandem sends, so the review path
//! (and the pacing of an early answer) is chosen from behaviour, not only
//! from advertised capabilities.
//!
//! In the default permission mode an edit to an open document is reviewed
//! either in the editor (a `ChangeAnnotation` with `needsConfirmation`: VS
//! Code's refactor preview, the Neovim plugin's diff review) or, where the
//! editor would apply an annotated edit without asking, with Tandem's own
//! `window/showMessageRequest` prompt. The table below overrides what a
//! client advertises when its behaviour is known to differ.

use tower_lsp_server::ls_types::ClientInfo;

/// How an edit that needs review is reviewed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewPath {
    /// The edit carries a `needsConfirmation` annotation; the editor asks.
    Annotation,
    /// Tandem asks with `window/showMessageRequest`, then sends a plain edit.
    Prompt,
}

/// Editors whose `clientInfo.name` is known to advertise
/// `changeAnnotationSupport` while applying annotated edits without asking.
/// kak-lsp (renamed kakoune-lsp) advertises the capability but ignores
/// `needsConfirmation`, so Kakoune users would get no review at all.
const IGNORES_NEEDS_CONFIRMATION: &[&str] = &["kak-lsp", "kakoune-lsp"];

/// The review path for a client that says it is `client_info` and
/// `advertised` change-annotation support (or not).
pub fn review_path(client_info: Option<&ClientInfo>, advertised: bool) -> ReviewPath {
    let name = client_info.map(|info| info.name.trim().to_ascii_lowercase()).unwrap_or_default();
    if !advertised || IGNORES_NEEDS_CONFIRMATION.contains(&name.as_str()) {
        ReviewPath::Prompt
    } else {
        ReviewPath::Annotation
    }
}

/// Editors whose JSON-RPC reader stops reading after the answer to its
/// synchronous request. eglot's jsonrpc.el (1.0.14, Emacs 28; eglot 1.9
/// sends no `clientInfo`) throws out of its process filter as soon as the
/// awaited answer is handled, and leaves the messages that came in the same
/// read unhandled until more output arrives; an applyEdit right behind a
/// `tandem.ask` `"wait": false` answer would then wait for ever. Newer
/// eglot names itself "Eglot".
const READS_PAST_AN_ANSWER_LATE: &[&str] = &["eglot"];

/// True when the answer to a `"wait": false` ask must reach the client
/// alone, before anything of its run is sent: for the editors above, and
/// for a client that does not say what it is (eglot 1.9 among them).
pub fn answer_goes_alone(client_info: Option<&ClientInfo>) -> bool {
    match client_info {
        None => true,
        Some(info) => READS_PAST_AN_ANSWER_LATE.contains(&info.name.trim().to_ascii_lowercase().as_str()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(name: &str) -> ClientInfo {
        ClientInfo { name: name.into(), version: Some("1".into()) }
    }

    #[test]
    fn the_table_overrides_what_kakoune_advertises() {
        assert_eq!(review_path(Some(&info("Visual Studio Code")), true), ReviewPath::Annotation);
        assert_eq!(review_path(Some(&info("Neovim")), true), ReviewPath::Annotation);
        assert_eq!(review_path(Some(&info("Neovim")), false), ReviewPath::Prompt);
        assert_eq!(review_path(Some(&info("kak-lsp")), true), ReviewPath::Prompt);
        assert_eq!(review_path(Some(&info("kakoune-lsp")), true), ReviewPath::Prompt);
        assert_eq!(review_path(Some(&info("helix")), false), ReviewPath::Prompt);
        assert_eq!(review_path(None, true), ReviewPath::Annotation);
        assert_eq!(review_path(None, false), ReviewPath::Prompt);
    }

    #[test]
    fn only_eglot_and_unnamed_clients_get_the_answer_alone() {
        assert!(answer_goes_alone(None), "eglot 1.9 sends no clientInfo");
        assert!(answer_goes_alone(Some(&info("Eglot"))));
        assert!(!answer_goes_alone(Some(&info("Neovim"))));
        assert!(!answer_goes_alone(Some(&info("Visual Studio Code"))));
        assert!(!answer_goes_alone(Some(&info("helix"))));
        assert!(!answer_goes_alone(Some(&info("kak-lsp"))));
        assert!(!answer_goes_alone(Some(&info("Zed"))));
    }
}
