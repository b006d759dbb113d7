//! Project hooks in the editor. Hooks from the repository's
//! `.tandem/settings.json` and `.tandem/settings.local.json` would run on
//! the user's machine, so they run only once the user approved exactly
//! these hooks. The editor asks with `window/showMessageRequest`, every
//! hook command shown in full: once when the workspace opens, and again
//! before a run if the hooks changed. An approval is remembered in the
//! consent store ([`crate::consent`]): the next session does not ask, and
//! a changed hook asks again. "Not now", a dismissed prompt or no answer
//! within the prompt timeout mean the hooks do not run; the session does
//! not ask again about the same hooks.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use serde_json::Value;
use tower_lsp_server::ls_types::{MessageActionItem, MessageType, ShowMessageRequestParams};

use super::client::{methods, request_with_timeout, ClientLink};
use super::config::Settings;
use crate::consent::{ConsentStore, HOOKS, PROJECT};
use crate::host::{describe_project, project_hooks, SharedHooks};
use crate::sync::RwLockExt;

pub const RUN_THEM: &str = "Run them";
pub const NOT_NOW: &str = "Not now";

pub struct HookConsent {
    link: Arc<dyn ClientLink>,
    settings: Arc<RwLock<Settings>>,
    hooks: SharedHooks,
    root: PathBuf,
    store: Option<ConsentStore>,
    /// The project hooks (their JSON text) the user was asked about in
    /// this session. Held while the prompt is up, so a run waits for the
    /// answer instead of starting without it.
    asked: tokio::sync::Mutex<Option<String>>,
}

impl HookConsent {
    pub fn new(link: Arc<dyn ClientLink>, settings: Arc<RwLock<Settings>>, hooks: SharedHooks, root: PathBuf) -> Self {
        HookConsent { link, settings, hooks, root, store: ConsentStore::for_user(), asked: tokio::sync::Mutex::new(None) }
    }

    fn settings(&self) -> Settings {
        self.settings.reading().clone()
    }

    /// Ask about the project's hooks if they are neither approved nor
    /// already asked about in this session; on approval, remember it and
    /// use them from now on.
    pub async fn ask_if_needed(&self) {
        let Some(store) = &self.store else { return };
        let settings = self.settings();
        let Some(project) = project_hooks(&settings.hooks) else { return };
        let fingerprint = crate::consent::fingerprint_of(&project);
        let mut asked = self.asked.lock().await;
        if asked.as_deref() == Some(fingerprint.as_str()) || store.is_approved(&self.root, HOOKS, PROJECT, &fingerprint) {
            return;
        }
        *asked = Some(fingerprint.clone());
        if !self.ask(&project, &settings).await {
            tracing::info!("the project's hooks were not approved; they do not run");
            return;
        }
        if let Err(err) = store.approve(&self.root, HOOKS, PROJECT, &fingerprint) {
            let message = format!("Tandem: cannot remember the approval of the project's hooks in {}: {err}", store.path().display());
            tracing::warn!("{message}");
            self.link.notify(methods::SHOW_MESSAGE, serde_json::json!({"type": 1, "message": message})).await;
            return;
        }
        // The settings as they are now: only hooks the store approves load.
        let settings = self.settings();
        let (hooks, _) = crate::host::hooks(&settings, &self.root, Some(store));
        *self.hooks.writing() = Arc::new(hooks);
    }

    async fn ask(&self, project: &Value, settings: &Settings) -> bool {
        let action = |title: &str| MessageActionItem { title: title.to_string(), properties: Default::default() };
        let params = ShowMessageRequestParams {
            typ: MessageType::WARNING,
            message: format!(
                "Tandem: this project's settings want to run these hooks on your machine (each with `sh -c` in the workspace, on every matching event):\n\n{}\n\nRun them in this workspace? Tandem remembers the answer until the hooks change.",
                describe_project(project)
            ),
            actions: Some(vec![action(RUN_THEM), action(NOT_NOW)]),
        };
        let Ok(params) = serde_json::to_value(params) else { return false };
        match request_with_timeout(&*self.link, methods::SHOW_MESSAGE_REQUEST, params, settings.timeouts.prompt()).await {
            Ok(answer) => answer.get("title").and_then(Value::as_str) == Some(RUN_THEM),
            Err(err) => {
                tracing::info!(%err, "the project hooks prompt got no answer");
                false
            }
        }
    }
}
