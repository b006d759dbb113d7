//! Whether the editor asks us for inline completions, kept in step with
//! `inlineCompletions.enabled` while the server runs.
//!
//! A client that can register `textDocument/inlineCompletion` dynamically
//! (`capabilities.textDocument.inlineCompletion.dynamicRegistration`:
//! vscode-languageclient 9 says so) is told nothing at `initialize`; after
//! `initialized` the provider is registered with `client/registerCapability`
//! when the settings enable it, and registered or unregistered (one id,
//! [`REGISTRATION_ID`]) whenever they change. One task sends these requests,
//! one at a time, always towards the latest setting, so two quick changes
//! cannot leave the editor in the state of the older one.
//!
//! Any other client learns it only from `inlineCompletionProvider` in the
//! `initialize` answer (Neovim 0.12 says `dynamicRegistration = false`), so
//! the provider is advertised when the settings at start enable it, and a
//! later change gets one `window/showMessage` saying that the server must
//! be restarted for the editor to follow. Requests while completions are
//! off are answered `null` either way (`inline.rs`).

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::watch;
use tower_lsp_server::ls_types::{ClientCapabilities, InlineCompletionOptions, OneOf};

use super::client::{methods, request_with_timeout, ClientLink};
use crate::sync::MutexExt;

/// The id of our one registration of `textDocument/inlineCompletion`.
pub const REGISTRATION_ID: &str = "tandem-inline-completion";

const METHOD: &str = "textDocument/inlineCompletion";

/// How the client learns whether we serve inline completions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Advertising {
    /// In the `initialize` answer only: `true` when it was advertised.
    AtStart(bool),
    /// By `client/registerCapability` and `client/unregisterCapability`.
    Registered,
}

pub struct InlineProvider {
    link: Arc<dyn ClientLink>,
    /// Set by `initialize`.
    advertising: OnceLock<Advertising>,
    /// What the settings say now; the registering task follows it.
    enabled: watch::Sender<bool>,
    /// For a client told only at start: the setting the user was last told
    /// needs a restart, so each change is said once.
    told: Mutex<Option<bool>>,
}

impl InlineProvider {
    pub fn new(link: Arc<dyn ClientLink>) -> Self {
        InlineProvider { link, advertising: OnceLock::new(), enabled: watch::Sender::new(false), told: Mutex::new(None) }
    }

    /// At `initialize`: how this client is told, and what goes in the
    /// answer's `inlineCompletionProvider` (nothing when the client is told
    /// by registration, as the spec asks: a capability is registered
    /// statically or dynamically, not both).
    pub fn advertise(&self, capabilities: &ClientCapabilities, enabled: bool) -> Option<OneOf<bool, InlineCompletionOptions>> {
        let dynamic = capabilities
            .text_document
            .as_ref()
            .and_then(|t| t.inline_completion.as_ref())
            .and_then(|i| i.dynamic_registration)
            .unwrap_or(false);
        let advertising = if dynamic { Advertising::Registered } else { Advertising::AtStart(enabled) };
        let _ = self.advertising.set(advertising);
        self.enabled.send_replace(enabled);
        tracing::debug!(?advertising, "inline completions");
        (advertising == Advertising::AtStart(true)).then_some(OneOf::Left(true))
    }

    /// At `initialized`, once the client takes requests: for a client told
    /// by registration, start the task that keeps the registration in step
    /// with the settings (it registers at once when they enable it).
    pub fn start(&self, timeout: Duration) {
        if self.advertising.get() != Some(&Advertising::Registered) {
            return;
        }
        let link = Arc::clone(&self.link);
        let enabled = self.enabled.subscribe();
        tokio::spawn(keep_registered(link, enabled, timeout));
    }

    /// The settings changed (or were read again): `enabled` is what they
    /// say now. `client_ready`: `initialized` came, so a message may be
    /// shown.
    pub fn settings_changed(&self, enabled: bool, client_ready: bool) {
        self.enabled.send_if_modified(|current| std::mem::replace(current, enabled) != enabled);
        let Some(Advertising::AtStart(advertised)) = self.advertising.get().copied() else { return };
        if !client_ready {
            return;
        }
        let mut told = self.told.locked();
        if enabled == advertised {
            // Back to what the editor knows: nothing to restart for, and a
            // later change is said again.
            *told = None;
            return;
        }
        if *told == Some(enabled) {
            return;
        }
        *told = Some(enabled);
        drop(told);
        tracing::info!(enabled, "inline completions changed; the editor follows only after a restart of the server");
        let message = json!({"type": 3, "message": restart_message(enabled)});
        let link = Arc::clone(&self.link);
        tokio::spawn(async move { link.notify(methods::SHOW_MESSAGE, message).await });
    }
}

fn restart_message(enabled: bool) -> &'static str {
    if enabled {
        "Tandem: inline completions are now on in the settings. Restart the Tandem server to see them: this editor learns whether a server offers them only when it starts it."
    } else {
        "Tandem: inline completions are now off in the settings, and Tandem suggests nothing more. Restart the Tandem server so that the editor stops asking: it learns whether a server offers them only when it starts it."
    }
}

/// Register or unregister whenever the wanted state differs from the
/// editor's, one request at a time, until the server goes away. Each
/// request is for the latest setting, read when the previous one is done.
async fn keep_registered(link: Arc<dyn ClientLink>, mut enabled: watch::Receiver<bool>, timeout: Duration) {
    let mut registered = false;
    loop {
        let wanted = *enabled.borrow_and_update();
        if wanted != registered {
            let (method, params) = if wanted { (methods::REGISTER_CAPABILITY, register_params()) } else { (methods::UNREGISTER_CAPABILITY, unregister_params()) };
            match request_with_timeout(&*link, method, params, timeout).await {
                Ok(_) => {
                    registered = wanted;
                    tracing::info!(registered, "inline completions: the editor was told ({method})");
                }
                // The next change tries again; meanwhile requests are
                // answered by the settings (`null` while off).
                Err(err) => tracing::warn!(%err, "inline completions: {method} failed"),
            }
        }
        if enabled.changed().await.is_err() {
            return;
        }
    }
}

fn register_params() -> Value {
    // `documentSelector: null`: the documents the client syncs with us
    // (LSP: "the document selector provided on the client side will be
    // used"; vscode-languageclient puts its own selector in).
    json!({"registrations": [{"id": REGISTRATION_ID, "method": METHOD, "registerOptions": {"documentSelector": null}}]})
}

fn unregister_params() -> Value {
    // `unregisterations` is the spec's spelling (kept for compatibility).
    json!({"unregisterations": [{"id": REGISTRATION_ID, "method": METHOD}]})
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::lsp::client::ClientError;
    use async_trait::async_trait;
    use tokio::sync::mpsc;

    /// A client that answers each request when the test says so.
    struct SlowClient {
        requests: mpsc::UnboundedSender<(&'static str, Value, tokio::sync::oneshot::Sender<()>)>,
        notifications: mpsc::UnboundedSender<(&'static str, Value)>,
    }

    #[async_trait]
    impl ClientLink for SlowClient {
        async fn request(&self, method: &'static str, params: Value) -> Result<Value, ClientError> {
            let (answer, answered) = tokio::sync::oneshot::channel();
            self.requests.send((method, params, answer)).unwrap();
            answered.await.map_err(|_| ClientError::Failed("gone".into()))?;
            Ok(Value::Null)
        }
        async fn notify(&self, method: &'static str, params: Value) {
            self.notifications.send((method, params)).unwrap();
        }
    }

    fn capabilities(dynamic: Option<bool>) -> ClientCapabilities {
        serde_json::from_value(json!({"textDocument": {"inlineCompletion": {"dynamicRegistration": dynamic}}})).unwrap()
    }

    type Requests = mpsc::UnboundedReceiver<(&'static str, Value, tokio::sync::oneshot::Sender<()>)>;

    fn provider() -> (InlineProvider, Requests, mpsc::UnboundedReceiver<(&'static str, Value)>) {
        let (requests, requested) = mpsc::unbounded_channel();
        let (notifications, notified) = mpsc::unbounded_channel();
        (InlineProvider::new(Arc::new(SlowClient { requests, notifications })), requested, notified)
    }

    /// The settings change, and every task that can run has run (the
    /// test's runtime has one thread).
    async fn change(provider: &InlineProvider, enabled: bool) {
        provider.settings_changed(enabled, true);
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    #[tokio::test]
    async fn quick_changes_are_sent_one_at_a_time_and_end_in_the_latest_state() {
        let (provider, mut requested, _) = provider();
        assert_eq!(provider.advertise(&capabilities(Some(true)), false), None);
        provider.start(Duration::from_secs(5));
        change(&provider, true).await;
        let (method, params, answer) = requested.try_recv().unwrap();
        assert_eq!((method, params["registrations"][0]["id"].as_str()), ("client/registerCapability", Some(REGISTRATION_ID)));
        // Off and on again while the registration is unanswered: nothing
        // more is sent before the answer, and after it nothing at all (the
        // editor is already where the settings are).
        change(&provider, false).await;
        change(&provider, true).await;
        assert!(requested.try_recv().is_err(), "a request while another is unanswered");
        answer.send(()).unwrap();
        change(&provider, true).await;
        assert!(requested.try_recv().is_err(), "a request for the state the editor is in");
        // Off: one unregistration, same id.
        change(&provider, false).await;
        let (method, params, answer) = requested.try_recv().unwrap();
        assert_eq!((method, params["unregisterations"][0]["id"].as_str()), ("client/unregisterCapability", Some(REGISTRATION_ID)));
        // On, then off, while that is unanswered: the last word is off,
        // which the editor then is.
        change(&provider, true).await;
        change(&provider, false).await;
        answer.send(()).unwrap();
        change(&provider, false).await;
        assert!(requested.try_recv().is_err(), "a request for a state the settings have left");
        // On once more: registered again, with the same id.
        change(&provider, true).await;
        assert_eq!(requested.try_recv().unwrap().1["registrations"][0]["id"], REGISTRATION_ID);
    }

    #[tokio::test]
    async fn a_client_without_dynamic_registration_is_advertised_at_start_and_told_once_per_change() {
        for dynamic in [None, Some(false)] {
            let (provider, mut requested, mut notified) = provider();
            assert_eq!(provider.advertise(&capabilities(dynamic), true), Some(OneOf::Left(true)));
            provider.start(Duration::from_secs(5));
            provider.settings_changed(true, true);
            provider.settings_changed(false, true);
            provider.settings_changed(false, true);
            let (method, params) = notified.recv().await.unwrap();
            assert_eq!((method, params["type"].as_i64()), ("window/showMessage", Some(3)));
            assert!(params["message"].as_str().unwrap().contains("off"), "{params}");
            // Back on (as advertised): nothing to say; off again: said again.
            provider.settings_changed(true, true);
            provider.settings_changed(false, true);
            assert!(notified.recv().await.unwrap().1["message"].as_str().unwrap().contains("Restart the Tandem server"));
            tokio::task::yield_now().await;
            assert!(notified.try_recv().is_err());
            assert!(requested.try_recv().is_err(), "no registration for a client that cannot take one");
        }
    }
}
