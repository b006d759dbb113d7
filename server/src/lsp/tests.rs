//! In-process tests of the editor sink and the prompts against a fake
//! editor: documents + [`LspEditor`] + a [`ClientLink`] that plays the
//! client's part (applies an edit and sends the `didChange`, or answers
//! `applied: true` without changing anything, as Neovim does for a stale
//! edit, or lets the user type first).

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};

use async_trait::async_trait;
use proptest::prelude::*;
use ropey::Rope;
use serde_json::{json, Value};
use tower_lsp_server::ls_types::{Position, Range, TextDocumentContentChangeEvent};

use super::client::{methods, ClientError, ClientLink};
use super::config::{Settings, SettingsLayers};
use super::documents::{path_to_uri, Documents};
use super::editor::{EditCapabilities, LspEditor};
use super::edits::apply_as_editor;
use super::position::{char_to_position, PositionEncoding};
use crate::tools::executor::{PermissionDecision, PermissionGate, PermissionRequest};
use crate::tools::ToolKind;
use crate::protocol::FileEffect;
use crate::workspace::{EditStatus, FileChange, LineSpan, Splice, WriteError, WriteOutcome, Workspace};

/// What the fake client does with the next `workspace/applyEdit`.
#[derive(Debug, Clone)]
enum OnApply {
    /// Check the version like VS Code, apply, send `didChange`, answer true.
    Apply,
    /// Apply, then the user types at once.
    ApplyThenType(usize, String),
    /// The user types first; the client then sees a stale version and
    /// answers false (VS Code) or true without applying (Neovim).
    TypeFirst { at: usize, text: String, answer_true: bool },
    /// Answer `applied: true` and change nothing.
    TrueWithoutChange,
    /// Apply only the `TextEdit`s whose flag is set (a box unticked in VS
    /// Code's refactor preview), send the `didChange`, answer true.
    Only(Vec<bool>),
    /// Answer `applied: false`.
    False,
    /// Answer `applied: true` at once and apply the edit (send the
    /// `didChange`) `after_ms` later, as eglot does at the user's next
    /// idle moment.
    TrueThenApplyLater { after_ms: u64 },
    /// Apply, and the user types `text` at the end before the client reports
    /// anything: one `didChange` brings both (kak-lsp, when idle).
    ApplyAndTypeInOneChange(&'static str),
    /// While the review is open the user replaces the whole text with
    /// `text` (an empty one: deletes it all), or closes the document
    /// (`None`); the client then refuses the stale edit, as VS Code does
    /// after "Apply", with `reason`.
    UserReplacesFirst { text: Option<&'static str>, reason: &'static str },
    /// Answer with a JSON-RPC error, and send the user's pending typing
    /// `after_ms` later (eglot refusing a stale edit before its didChange
    /// is out).
    ErrorThenTypeLater { message: &'static str, after_ms: u64 },
}

struct FakeClient {
    documents: Arc<Documents>,
    on_apply: Mutex<VecDeque<OnApply>>,
    /// Answers to `window/showMessageRequest`, by action title; `None`:
    /// never answer (the request times out).
    prompt_answers: Mutex<VecDeque<Option<&'static str>>>,
    requests: Mutex<Vec<(String, Value)>>,
    /// `tandem/saveDocuments` writes the text to disk and then closes the
    /// document, no `didSave` (VS Code, when the Refactor Preview had taken
    /// the file's tab); `Some(false)`: closes it without writing.
    save_closes: Mutex<Option<bool>>,
}

impl FakeClient {
    fn new(documents: Arc<Documents>) -> Self {
        FakeClient {
            documents,
            on_apply: Mutex::new(VecDeque::new()),
            prompt_answers: Mutex::new(VecDeque::new()),
            requests: Mutex::new(Vec::new()),
            save_closes: Mutex::new(None),
        }
    }

    fn script(&self, on_apply: OnApply) {
        self.on_apply.lock().unwrap().push_back(on_apply);
    }

    fn answer_prompt(&self, title: Option<&'static str>) {
        self.prompt_answers.lock().unwrap().push_back(title);
    }

    fn requests(&self, method: &str) -> Vec<Value> {
        self.requests.lock().unwrap().iter().filter(|(m, _)| m == method).map(|(_, p)| p.clone()).collect()
    }

    /// Apply the edits of the first `TextDocumentEdit` as a client does.
    fn apply(&self, params: &Value) -> bool {
        apply_to(&self.documents, params)
    }

    fn type_into(&self, params: &Value, at: usize, text: &str) {
        let uri = serde_json::from_value(params["edit"]["documentChanges"][0]["textDocument"]["uri"].clone()).unwrap();
        type_text(&self.documents, &uri, at, text);
    }
}

/// Apply the edits of the first `TextDocumentEdit` as a client does:
/// check the version, apply, and report it with a `didChange`.
fn apply_to(documents: &Documents, params: &Value) -> bool {
    let uri = serde_json::from_value(params["edit"]["documentChanges"][0]["textDocument"]["uri"].clone()).unwrap();
    let Some(document) = documents.snapshot_uri(&uri) else { return false };
    match apply_as_editor(params, &document.text, document.version, PositionEncoding::Utf16) {
        Ok(applied) => {
            let change = TextDocumentContentChangeEvent { range: None, range_length: None, text: applied.text };
            documents.change(&uri, applied.version, &[change]).unwrap();
            true
        }
        Err(_) => false,
    }
}

/// The `at`-th (modulo) char index of `text` that is neither inside a
/// `<marker>` nor between `\r` and `\n`, so markers stay whole.
fn safe_at(text: &str, at: usize) -> usize {
    let chars: Vec<char> = text.chars().collect();
    let mut depth = 0;
    let mut candidates = Vec::new();
    for i in 0..=chars.len() {
        let between_crlf = i > 0 && i < chars.len() && chars[i - 1] == '\r' && chars[i] == '\n';
        if depth == 0 && !between_crlf {
            candidates.push(i);
        }
        match chars.get(i) {
            Some('<') => depth += 1,
            Some('>') => depth -= 1,
            _ => {}
        }
    }
    candidates[at % candidates.len()]
}

/// The user types `text` at a char index (see [`safe_at`]) of an open document.
fn type_text(documents: &Documents, uri: &tower_lsp_server::ls_types::Uri, at: usize, text: &str) {
    let document = documents.snapshot_uri(uri).unwrap();
    let rope = Rope::from_str(&document.text);
    let position: Position = char_to_position(&rope, safe_at(&document.text, at), documents.encoding());
    let change = TextDocumentContentChangeEvent {
        range: Some(Range { start: position, end: position }),
        range_length: None,
        text: text.to_string(),
    };
    documents.change(uri, document.version + 1, &[change]).unwrap();
}

#[async_trait]
impl ClientLink for FakeClient {
    async fn request(&self, method: &'static str, params: Value) -> Result<Value, ClientError> {
        self.requests.lock().unwrap().push((method.to_string(), params.clone()));
        match method {
            methods::APPLY_EDIT => {
                let on_apply = self.on_apply.lock().unwrap().pop_front().unwrap_or(OnApply::Apply);
                let applied = match on_apply {
                    OnApply::Apply => self.apply(&params),
                    OnApply::ApplyThenType(at, text) => {
                        let applied = self.apply(&params);
                        self.type_into(&params, at, &text);
                        applied
                    }
                    OnApply::TypeFirst { at, text, answer_true } => {
                        self.type_into(&params, at, &text);
                        let applied = self.apply(&params);
                        applied || answer_true
                    }
                    OnApply::TrueWithoutChange => true,
                    OnApply::ApplyAndTypeInOneChange(typed) => {
                        let uri = serde_json::from_value(params["edit"]["documentChanges"][0]["textDocument"]["uri"].clone()).unwrap();
                        let document = self.documents.snapshot_uri(&uri).unwrap();
                        let applied = apply_as_editor(&params, &document.text, document.version, PositionEncoding::Utf16).unwrap();
                        let change = TextDocumentContentChangeEvent { range: None, range_length: None, text: format!("{}{typed}", applied.text) };
                        self.documents.change(&uri, document.version + 2, &[change]).unwrap();
                        true
                    }
                    OnApply::UserReplacesFirst { text, reason } => {
                        let uri = serde_json::from_value(params["edit"]["documentChanges"][0]["textDocument"]["uri"].clone()).unwrap();
                        match text {
                            Some(text) => {
                                let version = self.documents.snapshot_uri(&uri).unwrap().version;
                                let change = TextDocumentContentChangeEvent { range: None, range_length: None, text: text.to_string() };
                                self.documents.change(&uri, version + 1, &[change]).unwrap();
                            }
                            None => self.documents.close(&uri),
                        }
                        return Ok(json!({"applied": false, "failureReason": reason}));
                    }
                    OnApply::Only(which) => {
                        let mut params = params.clone();
                        let edits = params["edit"]["documentChanges"][0]["edits"].as_array().unwrap().clone();
                        assert_eq!(edits.len(), which.len(), "{edits:?}");
                        let kept: Vec<Value> = edits.into_iter().zip(&which).filter(|(_, on)| **on).map(|(e, _)| e).collect();
                        params["edit"]["documentChanges"][0]["edits"] = json!(kept);
                        self.apply(&params)
                    }
                    OnApply::False => false,
                    OnApply::TrueThenApplyLater { after_ms } => {
                        let documents = Arc::clone(&self.documents);
                        let params = params.clone();
                        tokio::spawn(async move {
                            tokio::time::sleep(std::time::Duration::from_millis(after_ms)).await;
                            apply_to(&documents, &params);
                        });
                        true
                    }
                    OnApply::ErrorThenTypeLater { message, after_ms } => {
                        let documents = Arc::clone(&self.documents);
                        let uri = serde_json::from_value(params["edit"]["documentChanges"][0]["textDocument"]["uri"].clone()).unwrap();
                        tokio::spawn(async move {
                            tokio::time::sleep(std::time::Duration::from_millis(after_ms)).await;
                            type_text(&documents, &uri, 0, "typed ");
                        });
                        return Err(ClientError::Failed(message.to_string()));
                    }
                };
                Ok(if applied { json!({"applied": true}) } else { json!({"applied": false, "failureReason": "stale version"}) })
            }
            methods::SHOW_MESSAGE_REQUEST => {
                let answer = self.prompt_answers.lock().unwrap().pop_front().flatten();
                match answer {
                    Some(title) => Ok(json!({"title": title})),
                    None => std::future::pending().await,
                }
            }
            methods::SAVE_DOCUMENTS => {
                let closes = *self.save_closes.lock().unwrap();
                for uri in params["uris"].as_array().unwrap() {
                    let uri = serde_json::from_value(uri.clone()).unwrap();
                    match closes {
                        None => self.documents.save(&uri, None),
                        Some(write) => {
                            let document = self.documents.snapshot_uri(&uri).unwrap();
                            if write {
                                std::fs::write(crate::lsp::documents::uri_to_path(&uri).unwrap(), document.text.as_bytes()).unwrap();
                            }
                            self.documents.close(&uri);
                        }
                    }
                }
                Ok(Value::Null)
            }
            _ => Ok(Value::Null),
        }
    }

    async fn notify(&self, method: &'static str, params: Value) {
        self.requests.lock().unwrap().push((method.to_string(), params));
    }
}

struct Harness {
    _dir: tempfile::TempDir,
    path: PathBuf,
    uri: tower_lsp_server::ls_types::Uri,
    documents: Arc<Documents>,
    client: Arc<FakeClient>,
    settings: Arc<RwLock<Settings>>,
    editor: Arc<LspEditor>,
    /// Writes for the call `toolu_1` of the run `run-1`.
    workspace: Arc<Workspace>,
    /// What the call's effects became after its result (`EffectChanged`).
    changes: Arc<Mutex<Vec<(String, FileEffect)>>>,
}

fn harness(init: Value, annotations: bool, text: &str) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let path = root.join("a.txt");
    std::fs::write(&path, text).unwrap();
    let documents = Arc::new(Documents::default());
    let client = Arc::new(FakeClient::new(Arc::clone(&documents)));
    let layers = SettingsLayers { init, configuration: Value::Null };
    let settings = Arc::new(RwLock::new(layers.resolve()));
    let editor = Arc::new(LspEditor::new(
        Arc::clone(&documents),
        client.clone(),
        Arc::clone(&settings),
        EditCapabilities { change_annotations: annotations },
        vec![root.clone()],
    ));
    let changes: Arc<Mutex<Vec<(String, FileEffect)>>> = Arc::default();
    let heard = Arc::clone(&changes);
    let report: crate::workspace::EffectChanges = Arc::new(move |call: &str, effect| heard.lock().unwrap().push((call.to_string(), effect)));
    let workspace = Workspace::with_roots(vec![root], Some(editor.clone())).unwrap().for_run("run-1").reporting_changes(report).for_call("toolu_1");
    let workspace = Arc::new(workspace);
    let uri = path_to_uri(&path).unwrap();
    documents.open(&uri, text, 1).unwrap();
    Harness { _dir: dir, path, uri, documents, client, settings, editor, workspace, changes }
}

fn accept_edits() -> Value {
    json!({"permissionMode": "acceptEdits", "timeouts": {"verifyMs": 50, "promptMs": 200}})
}

impl Harness {
    fn text(&self) -> String {
        self.documents.snapshot(&self.path).unwrap().text.to_string()
    }

    /// The agent reads the file now (recording it in the ledger).
    fn read(&self) -> crate::workspace::FileText {
        let file = self.workspace.read(&self.path).unwrap();
        self.workspace.record_read(&file);
        file
    }

    /// Write what `change` makes of the text read in `file`.
    async fn write(&self, file: &crate::workspace::FileText, change: impl FnOnce(&str) -> String) -> Result<WriteOutcome, WriteError> {
        self.write_reviewed(file, false, change).await
    }

    /// [`write`](Self::write), with the review left to the editor or not.
    async fn write_reviewed(
        &self,
        file: &crate::workspace::FileText,
        review: bool,
        change: impl FnOnce(&str) -> String,
    ) -> Result<WriteOutcome, WriteError> {
        let new_text = change(&file.text).into();
        let label = "edit_file a.txt".to_string();
        self.workspace.write(FileChange { path: self.path.clone(), new_text, base: Some(file.stamp), label, review, splices: None }).await
    }

    /// Write `splices` of the text read in `file`, given as splices (as
    /// `edit_file` does), not as a whole new text.
    async fn write_splices(&self, file: &crate::workspace::FileText, splices: Vec<Splice>) -> Result<WriteOutcome, WriteError> {
        let mut new_text = String::new();
        let mut copied = 0;
        for splice in &splices {
            new_text.push_str(&file.text[copied..splice.range.start]);
            new_text.push_str(&splice.text);
            copied = splice.range.end;
        }
        new_text.push_str(&file.text[copied..]);
        let label = "edit_file a.txt".to_string();
        let change = FileChange { path: self.path.clone(), new_text: new_text.into(), base: Some(file.stamp), label, review: false, splices: Some(splices) };
        self.workspace.write(change).await
    }

    /// The editor's prompter behind the one gate, deciding by the settings.
    fn policy(&self) -> crate::host::Gate<super::permission::LspPrompter> {
        let settings = self.settings.read().unwrap().clone();
        let prompter = super::permission::prompter(self.client.clone(), Arc::clone(&self.settings), Arc::clone(&self.editor));
        crate::host::gate(&settings, None, &self.workspace, Some(prompter), true)
    }

    /// The permission request for an edit of a.txt, with its diff.
    fn edit_request(&self) -> PermissionRequest {
        PermissionRequest {
            accept_edits: false,
            run: None,
            grants: Default::default(),
            hook: Default::default(),
            questions: None,
            tool: "edit_file".into(),
            kind: ToolKind::Edit { path: self.path.clone() },
            read_only: false,
            summary: "a.txt".into(),
            preview: Some("   2 - b\n   2 + B".into()),
            input: json!({}),
        }
    }
}

#[tokio::test]
async fn an_edit_is_one_versioned_minimal_text_document_edit() {
    let h = harness(accept_edits(), false, "one\r\ntwo 😀 three\r\nfour\r\n");
    let file = h.read();
    let outcome = h.write(&file, |t| t.replace("three", "3")).await;
    assert_eq!(outcome, Ok(WriteOutcome::AppliedToBuffer { saved: false, rebased: None }));
    assert_eq!(h.text(), "one\r\ntwo 😀 3\r\nfour\r\n");
    let sent = h.client.requests(methods::APPLY_EDIT);
    let mut sent = sent[0].clone();
    sent["edit"]["documentChanges"][0]["textDocument"]["uri"] = json!("file:///ROOT/a.txt");
    expect_test::expect![[r#"
        {
          "label": "Tandem: edit_file a.txt",
          "edit": {
            "documentChanges": [
              {
                "textDocument": {
                  "uri": "file:///ROOT/a.txt",
                  "version": 1
                },
                "edits": [
                  {
                    "range": {
                      "start": {
                        "line": 1,
                        "character": 7
                      },
                      "end": {
                        "line": 1,
                        "character": 12
                      }
                    },
                    "newText": "3"
                  }
                ]
              }
            ]
          }
        }"#]]
    .assert_eq(&serde_json::to_string_pretty(&sent).unwrap());
    // The ledger now holds the applied version: a second edit needs no re-read.
    let file = h.read();
    assert_eq!(file.stamp.version, Some(2));
}

#[tokio::test]
async fn review_by_change_annotation_when_the_client_supports_it() {
    let h = harness(json!({"timeouts": {"verifyMs": 50}}), true, "a\nb\n");
    // The policy decides once: the editor's own preview reviews the edit.
    assert_eq!(h.policy().decide(&h.edit_request()).await, PermissionDecision::ReviewInEditor);
    let file = h.read();
    assert_eq!(h.write_reviewed(&file, true, |t| t.replace('b', "B")).await, Ok(WriteOutcome::AppliedToBuffer { saved: false, rebased: None }));
    let sent = &h.client.requests(methods::APPLY_EDIT)[0];
    expect_test::expect![[r#"{"tandem.review/1":{"label":"Tandem: a.txt line 2: \"b\" → \"B\"","needsConfirmation":true,"description":"change 1 of 1 of edit_file a.txt, proposed by the Tandem agent"}}"#]]
        .assert_eq(&sent["edit"]["changeAnnotations"].to_string());
    assert_eq!(sent["edit"]["documentChanges"][0]["edits"][0]["annotationId"], "tandem.review/1");
    assert!(h.client.requests(methods::SHOW_MESSAGE_REQUEST).is_empty());
    // Declined in the refactor preview: the model is told it was rejected.
    h.client.script(OnApply::False);
    let file = h.read();
    let outcome = h.write_reviewed(&file, true, |t| t.replace('a', "A")).await;
    assert!(matches!(&outcome, Err(WriteError::Rejected(m)) if m.contains("rejected")), "{outcome:?}");
    assert_eq!(h.text(), "a\nB\n");
    // Without a review request (acceptEdits, or a prompt answered before),
    // the sink sends a plain edit: it never decides on its own.
    h.client.script(OnApply::Apply);
    let file = h.read();
    assert_eq!(h.write(&file, |t| t.replace('a', "A")).await, Ok(WriteOutcome::AppliedToBuffer { saved: false, rebased: None }));
    assert!(h.client.requests(methods::APPLY_EDIT)[2]["edit"].get("changeAnnotations").is_none());
}

#[tokio::test]
async fn review_by_prompt_with_the_diff_without_annotation_support() {
    let h = harness(json!({"timeouts": {"verifyMs": 50, "promptMs": 100}}), false, "a\nb\n");
    let policy = h.policy();
    h.client.answer_prompt(Some("Reject"));
    assert_eq!(policy.decide(&h.edit_request()).await, PermissionDecision::Declined("the user chose Reject".into()));
    let prompt = &h.client.requests(methods::SHOW_MESSAGE_REQUEST)[0];
    expect_test::expect![[r#"{"type":3,"message":"Tandem: apply edit to a.txt?\n\n   2 - b\n   2 + B","actions":[{"title":"Apply"},{"title":"Reject"}]}"#]]
        .assert_eq(&prompt.to_string());
    // No answer at all is a rejection too.
    h.client.answer_prompt(None);
    assert!(matches!(policy.decide(&h.edit_request()).await, PermissionDecision::Declined(m) if m.contains("did not answer")));
    h.client.answer_prompt(Some("Apply"));
    assert_eq!(policy.decide(&h.edit_request()).await, PermissionDecision::Approved);
    assert!(h.client.requests(methods::APPLY_EDIT).is_empty());
}

/// A rename in two places, reviewed in the editor, of which the user
/// ticks only the first: the buffer is half-renamed, and the model is told
/// so at once (no wait for `verifyMs`), with both hunks' lines.
#[tokio::test]
async fn a_partly_accepted_review_is_reported_hunk_by_hunk_without_waiting() {
    let text = "def greet(name):\n    return 'hi ' + name\n\n\nprint(greet('you'))\n";
    // A verify wait of a minute: the test would time out if it were waited.
    let h = harness(json!({"timeouts": {"verifyMs": 60_000}}), true, text);
    for (which, splices) in [(vec![true, false], true), (vec![false, true], false)] {
        let file = h.read();
        let renamed = file.text.replace("greet", "welcome");
        h.client.script(OnApply::Only(which.clone()));
        let write = async {
            if splices {
                let at: Vec<usize> = file.text.match_indices("greet").map(|(i, _)| i).collect();
                let splices = at.iter().map(|&i| Splice { range: i..i + 5, text: "welcome".into() }).collect();
                let change = FileChange { path: h.path.clone(), new_text: renamed.clone().into(), base: Some(file.stamp), label: "edit_file a.txt".into(), review: true, splices: Some(splices) };
                h.workspace.write(change).await
            } else {
                h.write_reviewed(&file, true, |_| renamed.clone()).await
            }
        };
        let outcome = tokio::time::timeout(std::time::Duration::from_secs(10), write).await.expect("a known outcome is not waited for");
        let Err(WriteError::PartlyApplied(message, _)) = &outcome else { panic!("{outcome:?}") };
        let records = h.workspace.take_call_effects();
        assert_eq!(records.len(), 1, "{records:?}");
        assert_eq!(records[0].status, EditStatus::Partial);
        if which[0] {
            expect_test::expect![[r#"
                Partly applied: the user accepted 1 of the 2 hunks of the edit to a.txt in the editor's review and declined the rest.
                Applied 1: now at line 1 of a.txt.
                Declined 1 (at line 5 of a.txt): kept
                    greet
                  instead of
                    welcome
                The file may now be inconsistent (for example a rename made in one place and not the other). Do not redo the declined hunks unless the user asks; read a.txt again and make sure what landed still fits."#]]
            .assert_eq(message);
            assert_eq!(h.text(), text.replacen("greet", "welcome", 1));
            assert_eq!((records[0].ranges.clone(), records[0].declined.clone()), (vec![LineSpan { start: 1, end: 1 }], vec![LineSpan { start: 5, end: 5 }]));
        } else {
            // Only the call was ticked (and the hunks were diffed by the
            // sink, not given as splices).
            assert!(message.contains("Applied 1: now at line 5 of a.txt."), "{message}");
            assert!(message.contains("Declined 1 (at line 1 of a.txt)"), "{message}");
        }
        // What the buffer holds now is what the model was told: it may edit on.
        let again = h.workspace.read(&h.path).unwrap();
        assert!(h.workspace.check_fresh(&again, "editing").is_ok());
        // Back to the original text for the next round.
        let file = h.read();
        h.client.script(OnApply::Apply);
        h.write(&file, |_| text.to_string()).await.unwrap();
        h.workspace.take_call_effects();
    }
}

#[tokio::test]
async fn applied_true_without_did_change_is_unknown_and_applied_false_is_not_applied() {
    let h = harness(accept_edits(), false, "x\n");
    h.client.script(OnApply::TrueWithoutChange);
    let file = h.read();
    let outcome = h.write(&file, |_| "y\n".into()).await;
    expect_test::expect!["Err(Unknown(\"Error: whether the edit to a.txt was applied is unknown: the editor answered applied: true but the buffer did not change. Read a.txt again with read_file before editing it.\"))"]
        .assert_eq(&format!("{outcome:?}"));
    assert_eq!(h.workspace.take_call_effects().iter().map(|r| r.status).collect::<Vec<_>>(), [EditStatus::Unknown]);
    h.client.script(OnApply::False);
    let file = h.read();
    let outcome = h.write(&file, |_| "y\n".into()).await;
    assert!(matches!(&outcome, Err(WriteError::NotApplied(m)) if m.contains("applied: false: stale version")), "{outcome:?}");
    assert_eq!(h.text(), "x\n");
}

/// The user types after the agent's read was checked (while a prompt asks
/// about the edit, or in the moment before it is sent): in other lines,
/// the edit is applied around the typing (sent for the new version);
/// in the edit's own lines or right beside them, it is refused and
/// nothing is sent.
#[tokio::test]
async fn user_typing_between_read_and_edit_is_kept() {
    let h = harness(accept_edits(), false, "fn a() {}\n\nfn b() {}\n");
    let file = h.read();
    type_text(&h.documents, &h.uri, 0, "// typed by the user\n");
    let outcome = h.write(&file, |t| t.replace("fn b", "fn renamed")).await;
    expect_test::expect![[r#"Ok(AppliedToBuffer { saved: false, rebased: Some("1 line added after line 0") })"#]].assert_eq(&format!("{outcome:?}"));
    assert_eq!(h.text(), "// typed by the user\nfn a() {}\n\nfn renamed() {}\n");
    assert_eq!(h.client.requests(methods::APPLY_EDIT)[0]["edit"]["documentChanges"][0]["textDocument"]["version"], 2);
    // Typing on the line the edit changes: refused before anything is sent.
    let file = h.read();
    type_text(&h.documents, &h.uri, 35, "x");
    let outcome = h.write(&file, |t| t.replace("fn renamed", "fn second")).await;
    expect_test::expect!["Err(Superseded(\"Error: the edit to a.txt was not applied: the file changed in the editor while the edit waited for its review or to be sent (line 4 changed), in the lines the edit changes or right beside them, so it cannot be applied around that change. Read a.txt again with read_file before editing it.\"))"]
        .assert_eq(&format!("{outcome:?}"));
    assert_eq!(h.text(), "// typed by the user\nfn a() {}\n\nfn xrenamed() {}\n");
    assert_eq!(h.client.requests(methods::APPLY_EDIT).len(), 1);
}

#[tokio::test]
async fn user_typing_while_the_edit_is_in_flight() {
    // Neovim: the user's keystroke lands first, the client skips the stale
    // edit and still answers applied: true.
    let h = harness(accept_edits(), false, "hello\n");
    h.client.script(OnApply::TypeFirst { at: 0, text: "!".into(), answer_true: true });
    let file = h.read();
    let outcome = h.write(&file, |t| t.replace("hello", "world")).await;
    assert!(matches!(&outcome, Err(WriteError::Superseded(m)) if m.contains("superseded")), "{outcome:?}");
    assert_eq!(h.text(), "!hello\n");
    // The edit lands and the user types right after: applied, at the version
    // that held the edit; the next edit sees the user's change.
    h.client.script(OnApply::ApplyThenType(0, "?".into()));
    let file = h.read();
    assert_eq!(h.write(&file, |t| t.replace("hello", "world")).await, Ok(WriteOutcome::AppliedToBuffer { saved: false, rebased: None }));
    assert_eq!(h.text(), "?!world\n");
    assert_eq!(h.workspace.ledger().get(&h.path).unwrap().stamp.version, Some(3));
}

#[tokio::test]
async fn clean_buffers_are_saved_when_the_client_can() {
    let h = harness(json!({"permissionMode": "acceptEdits", "saveDocuments": true, "timeouts": {"verifyMs": 50}}), false, "a\n");
    let file = h.read();
    assert_eq!(h.write(&file, |_| "b\n".into()).await, Ok(WriteOutcome::AppliedToBuffer { saved: true, rebased: None }));
    assert_eq!(h.client.requests(methods::SAVE_DOCUMENTS).len(), 1);
    // A buffer with the user's unsaved changes is never saved by us.
    type_text(&h.documents, &h.uri, 0, "x");
    let file = h.read();
    assert_eq!(h.write(&file, |t| format!("{t}c\n")).await, Ok(WriteOutcome::AppliedToBuffer { saved: false, rebased: None }));
    assert_eq!(h.client.requests(methods::SAVE_DOCUMENTS).len(), 1);
}

/// Issue 53: VS Code saved the reviewed file, but the document was closed
/// before any `didSave` (the Refactor Preview had taken its tab): the model
/// was told "the change is in the editor, unsaved" while the disk held it.
/// The disk decides now, both ways.
#[tokio::test]
async fn a_save_is_judged_by_the_disk_when_the_document_closes_first() {
    let h = harness(json!({"permissionMode": "acceptEdits", "saveDocuments": true, "timeouts": {"verifyMs": 50, "requestMs": 500}}), false, "a\n");
    *h.client.save_closes.lock().unwrap() = Some(true);
    let file = h.read();
    assert_eq!(h.write(&file, |_| "b\n".into()).await, Ok(WriteOutcome::AppliedToBuffer { saved: true, rebased: None }));
    assert_eq!(std::fs::read_to_string(&h.path).unwrap(), "b\n");
    // Closed without being written: unsaved, as the disk says.
    h.documents.open(&h.uri, "b\n", 5).unwrap();
    *h.client.save_closes.lock().unwrap() = Some(false);
    let file = h.read();
    assert_eq!(h.write(&file, |_| "c\n".into()).await, Ok(WriteOutcome::AppliedToBuffer { saved: false, rebased: None }));
    assert_eq!(std::fs::read_to_string(&h.path).unwrap(), "b\n");
}

/// Counts how often a tool's input is parsed: `prepare` is the one place
/// that parses, and what it returns carries the typed arguments onward.
struct CountingPrepare<T> {
    tool: Arc<T>,
    prepared: Arc<std::sync::atomic::AtomicUsize>,
}

impl<T: crate::tools::DynTool + 'static> crate::tools::DynTool for CountingPrepare<T> {
    fn name(&self) -> &str {
        self.tool.name()
    }
    fn definition(&self) -> crate::tools::ToolDefinition {
        self.tool.definition()
    }
    fn deferred(&self) -> bool {
        self.tool.deferred()
    }
    fn prepare(self: Arc<Self>, input: &Value, ctx: &crate::tools::ToolContext) -> Result<crate::tools::PreparedCall, String> {
        self.prepared.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Arc::clone(&self.tool).prepare(input, ctx)
    }
}

/// Issue 7's count: one `edit_file` on an open document, through the agent
/// loop, parses its input once, takes the file's text from the workspace at
/// most twice (planning, writing) and sends one applyEdit.
#[tokio::test]
async fn one_edit_parses_once_reads_at_most_twice_and_sends_one_apply_edit() {
    let h = harness(accept_edits(), false, "fn main() {\n    run();\n}\n");
    let prepared = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut registry = crate::tools::ToolRegistry::builtin();
    registry.register(CountingPrepare { tool: Arc::new(crate::tools::builtin::edit_file::EditFile), prepared: Arc::clone(&prepared) });
    let policy = Arc::new(h.policy());
    let executor = crate::tools::Executor::new(registry).with_gate(policy).with_results_dir(None);
    let ctx = crate::tools::ToolContext::new(Arc::clone(&h.workspace));
    let read = crate::tools::ToolCall::new("r", "read_file", json!({"file_path": "a.txt"}));
    assert!(!executor.execute(&read, &ctx).await.unwrap().is_error);
    let reads_before = h.workspace.text_reads();
    let script = json!({"turns": [
        {"tool_calls": [{"name": "edit_file", "input": {"file_path": "a.txt", "old_string": "run();", "new_string": "run_fast();"}}]},
        {"text": "Done."}
    ]});
    let provider = crate::agent::scripted::ScriptedProvider::from_json(&script.to_string(), "test").unwrap();
    let (events, mut received) = crate::agent::event_channel();
    let request = crate::agent::RunRequest { prompt: "go".into(), ..Default::default() };
    let outcome = crate::agent::run(&provider, &executor, ctx, request, events).await;
    assert_eq!(outcome.status, crate::agent::RunStatus::Completed, "{outcome:?}");
    while let Ok(event) = received.try_recv() {
        if let crate::agent::RunEvent::ToolResult { is_error, content, .. } = event {
            assert!(!is_error, "{content}");
        }
    }
    assert_eq!(h.text(), "fn main() {\n    run_fast();\n}\n");
    assert_eq!(prepared.load(std::sync::atomic::Ordering::SeqCst), 1, "the input is parsed once");
    let reads = h.workspace.text_reads() - reads_before;
    assert!(reads <= 2, "the file's text was taken {reads} times");
    assert_eq!(h.client.requests(methods::APPLY_EDIT).len(), 1);
}

/// The byte range of the first `needle` in `text`.
fn range_of(text: &str, needle: &str) -> std::ops::Range<usize> {
    let start = text.find(needle).unwrap();
    start..start + needle.len()
}

#[tokio::test]
async fn an_edit_given_as_splices_is_sent_as_exactly_those_splices() {
    let h = harness(accept_edits(), false, "one\r\ntwo 😀 three\r\nfour\r\n");
    let file = h.read();
    // A diff of the whole text would send only the inserted "fold" and "3";
    // the splices go out as given, positioned in UTF-16 units.
    let splices = vec![
        Splice { range: range_of(&file.text, "two"), text: "twofold".into() },
        Splice { range: range_of(&file.text, "three"), text: "3".into() },
    ];
    assert_eq!(h.write_splices(&file, splices).await, Ok(WriteOutcome::AppliedToBuffer { saved: false, rebased: None }));
    assert_eq!(h.text(), "one\r\ntwofold 😀 3\r\nfour\r\n");
    let sent = h.client.requests(methods::APPLY_EDIT);
    let edits: Vec<String> = sent[0]["edit"]["documentChanges"][0]["edits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let r = &e["range"];
            format!("{}:{}-{}:{} {}", r["start"]["line"], r["start"]["character"], r["end"]["line"], r["end"]["character"], e["newText"])
        })
        .collect();
    assert_eq!(edits, ["1:0-1:3 \"twofold\"", "1:7-1:12 \"3\""]);
    assert_eq!(sent[0]["edit"]["documentChanges"][0]["textDocument"]["version"], json!(1));
}

#[tokio::test]
async fn a_splice_edit_the_editor_skipped_is_unknown() {
    // Same length before and after: only the text at the splice tells.
    let h = harness(accept_edits(), false, "let three = 3;\n");
    h.client.script(OnApply::TrueWithoutChange);
    let file = h.read();
    let splices = vec![Splice { range: range_of(&file.text, "three"), text: "THREE".into() }];
    let outcome = h.write_splices(&file, splices.clone()).await;
    assert!(matches!(&outcome, Err(WriteError::Unknown(m)) if m.contains("did not change")), "{outcome:?}");
    // Applied, then the user types at once: applied at the version that held it.
    h.client.script(OnApply::ApplyThenType(0, "?".into()));
    let file = h.read();
    assert_eq!(h.write_splices(&file, splices).await, Ok(WriteOutcome::AppliedToBuffer { saved: false, rebased: None }));
    assert_eq!(h.text(), "?let THREE = 3;\n");
    assert_eq!(h.workspace.ledger().get(&h.path).unwrap().stamp.version, Some(2));
}

#[tokio::test]
async fn the_read_after_an_edit_shares_the_edit_s_text_and_fingerprint() {
    let h = harness(accept_edits(), false, "let three = 3;\n");
    let file = h.read();
    let splices = vec![Splice { range: range_of(&file.text, "three"), text: "four".into() }];
    assert_eq!(h.write_splices(&file, splices).await, Ok(WriteOutcome::AppliedToBuffer { saved: false, rebased: None }));
    let seen = h.workspace.ledger().get(&h.path).unwrap();
    let again = h.read();
    assert_eq!(&*again.text, "let four = 3;\n");
    assert!(seen.seen_text.as_ref().is_some_and(|seen| Arc::ptr_eq(&again.text, seen)), "the read after the edit copied the document again");
    assert_eq!(again.stamp, seen.stamp);
}

#[tokio::test]
async fn splices_that_do_not_fit_the_buffer_fall_back_to_the_whole_text() {
    // Splices that do not describe the change (here: text other than the
    // buffer's under the range) are not sent as they are; the whole-text
    // path diffs old against new instead, and the result is still right.
    let h = harness(accept_edits(), false, "alpha beta\n");
    let file = h.read();
    let splices = vec![Splice { range: 0..5, text: "ALPHA".into() }];
    let mut wrong = file.clone();
    wrong.text = "xxxxx beta\n".into();
    let outcome = h.write_splices(&wrong, splices).await;
    assert_eq!(outcome, Ok(WriteOutcome::AppliedToBuffer { saved: false, rebased: None }));
    assert_eq!(h.text(), "ALPHA beta\n");
}

fn permission_request(tool: &str, kind: ToolKind) -> PermissionRequest {
    PermissionRequest { tool: tool.into(), kind, read_only: false, summary: String::new(), preview: None, input: json!({}), accept_edits: false, run: None, grants: Default::default(), hook: Default::default(), questions: None }
}

#[tokio::test]
async fn permission_prompts() {
    // Without a sandbox, as on a machine with none: "Allow commands like
    // this" is not offered (tests/integration/asks.rs has it with one).
    let h = harness(json!({"timeouts": {"promptMs": 100}, "sandbox": {"enabled": false}}), false, "a\n");
    let policy = h.policy();
    // The calls of one conversation thread share its grants.
    let thread = Arc::new(crate::tools::Grants::default());
    let shell = PermissionRequest {
        grants: Arc::clone(&thread),
        ..permission_request("run_shell", ToolKind::Execute { command: "echo building the project\ntouch X".into() })
    };
    h.client.answer_prompt(Some("Deny"));
    assert_eq!(policy.decide(&shell).await, PermissionDecision::Declined("the user denied it".into()));
    h.client.answer_prompt(None);
    assert!(matches!(policy.decide(&shell).await, PermissionDecision::Declined(m) if m.contains("did not answer")));
    h.client.answer_prompt(Some("Allow once"));
    assert_eq!(policy.decide(&shell).await, PermissionDecision::Approved);
    h.client.answer_prompt(Some("Always allow"));
    assert_eq!(policy.decide(&shell).await, PermissionDecision::Approved);
    // Remembered: no prompt this time, and it runs unasked (a grant is an allow rule).
    let asked = h.client.requests(methods::SHOW_MESSAGE_REQUEST).len();
    assert_eq!(policy.decide(&shell).await, PermissionDecision::Allow);
    assert_eq!(h.client.requests(methods::SHOW_MESSAGE_REQUEST).len(), asked);
    assert_eq!(thread.rules(), ["run_shell(touch X)"]);
    // Another thread's call is asked again: the grant is the thread's.
    h.client.answer_prompt(Some("Deny"));
    let elsewhere = PermissionRequest { grants: Arc::default(), ..shell.clone() };
    assert_eq!(policy.decide(&elsewhere).await, PermissionDecision::Declined("the user denied it".into()));
    // "Always allow" stays narrow: another command is asked again.
    let other = PermissionRequest {
        grants: Arc::clone(&thread),
        ..permission_request("run_shell", ToolKind::Execute { command: "touch X && rm -rf build".into() })
    };
    h.client.answer_prompt(Some("Deny"));
    assert_eq!(policy.decide(&other).await, PermissionDecision::Declined("the user denied it".into()));
    let last = h.client.requests(methods::SHOW_MESSAGE_REQUEST).last().unwrap().to_string();
    assert!(last.contains("rm -rf build") && !last.contains("`touch X` is not"), "{last}");
    let asked = h.client.requests(methods::SHOW_MESSAGE_REQUEST).len();
    // The prompt shows the whole command, every line, what made it asked
    // and the rule "Always allow" adds.
    expect_test::expect![[r#"{"type":2,"message":"Tandem wants to run a shell command:\necho building the project\ntouch X\n\nAsked because:\n- `touch X` is not known to be read-only\n\n\"Always allow\" adds: run_shell(touch X)","actions":[{"title":"Allow once"},{"title":"Always allow"},{"title":"Always allow in this project"},{"title":"Deny"}]}"#]]
        .assert_eq(&h.client.requests(methods::SHOW_MESSAGE_REQUEST)[0].to_string());
    // Read-only calls are not asked about.
    let read = PermissionRequest { read_only: true, ..permission_request("read_file", ToolKind::Read { paths: vec![h.path.clone()] }) };
    assert_eq!(policy.decide(&read).await, PermissionDecision::Allow);
    assert_eq!(h.client.requests(methods::SHOW_MESSAGE_REQUEST).len(), asked);
}

/// One step of a random session.
#[derive(Debug, Clone)]
enum Step {
    /// The user types a unique marker at a char index.
    Type(usize),
    /// The agent reads, then (after `typed_before` user keystrokes) edits:
    /// inserts its unique marker at a char index, as a whole new text or as
    /// a splice (`as_splices`); the client reacts.
    Agent { at: usize, typed_before: bool, on_apply: u8, type_at: usize, as_splices: bool },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (0usize..200).prop_map(Step::Type),
        (0usize..200, any::<bool>(), 0u8..6, 0usize..200, any::<bool>())
            .prop_map(|(at, typed_before, on_apply, type_at, as_splices)| Step::Agent { at, typed_before, on_apply, type_at, as_splices }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    /// Random interleavings of user changes and agent edits: every user
    /// change survives, and every agent edit is either applied exactly (its
    /// marker once) or reported as not applied (its marker absent).
    #[test]
    fn user_changes_survive_and_agent_edits_are_reported_truthfully(steps in proptest::collection::vec(step(), 1..12)) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let h = harness(json!({"permissionMode": "acceptEdits", "timeouts": {"verifyMs": 5}}), false, "start\r\nmiddle 😀\nend\n");
            let mut user_markers = Vec::new();
            let mut agent_results = Vec::new();
            let mut n = 0;
            let user_types = |h: &Harness, at: usize, markers: &mut Vec<String>, n: &mut usize| {
                *n += 1;
                let marker = format!("<u{n}>");
                type_text(&h.documents, &h.uri, at, &marker);
                markers.push(marker);
            };
            for step in steps {
                match step {
                    Step::Type(at) => user_types(&h, at, &mut user_markers, &mut n),
                    Step::Agent { at, typed_before, on_apply, type_at, as_splices } => {
                        let file = h.read();
                        if typed_before {
                            user_types(&h, type_at, &mut user_markers, &mut n);
                        }
                        n += 1;
                        let marker = format!("<a{n}>");
                        let (on_apply, typed) = match on_apply {
                            0 => (OnApply::Apply, None),
                            1 => (OnApply::ApplyThenType(type_at, format!("<u{n}x>")), Some(format!("<u{n}x>"))),
                            2 => (OnApply::TypeFirst { at: type_at, text: format!("<u{n}y>"), answer_true: true }, Some(format!("<u{n}y>"))),
                            3 => (OnApply::TypeFirst { at: type_at, text: format!("<u{n}z>"), answer_true: false }, Some(format!("<u{n}z>"))),
                            4 => (OnApply::TrueWithoutChange, None),
                            _ => (OnApply::False, None),
                        };
                        h.client.script(on_apply);
                        let outcome = if as_splices {
                            let char_at = safe_at(&file.text, at);
                            let byte_at = file.text.char_indices().nth(char_at).map_or(file.text.len(), |(b, _)| b);
                            h.write_splices(&file, vec![Splice { range: byte_at..byte_at, text: marker.clone() }]).await
                        } else {
                            h.write(&file, |t| {
                                let mut rope = Rope::from_str(t);
                                rope.insert(safe_at(t, at), &marker);
                                rope.to_string()
                            })
                            .await
                        };
                        // A write refused before reaching the client leaves
                        // the scripted reaction (and its keystroke) unused.
                        if h.client.on_apply.lock().unwrap().pop_front().is_none() {
                            if let Some(typed) = typed {
                                user_markers.push(typed);
                            }
                        }
                        agent_results.push((marker, outcome));
                    }
                }
            }
            let text = h.text();
            for marker in &user_markers {
                prop_assert_eq!(text.matches(marker.as_str()).count(), 1, "user change {} lost: {:?}", marker, text);
            }
            for (marker, outcome) in &agent_results {
                let count = text.matches(marker.as_str()).count();
                match outcome {
                    Ok(_) => prop_assert_eq!(count, 1, "agent edit {} reported applied: {:?}", marker, text),
                    Err(_) => prop_assert_eq!(count, 0, "agent edit {} reported not applied: {:?} {:?}", marker, outcome, text),
                }
            }
            Ok(())
        })?;
    }
}

#[test]
fn selection_and_diagnostics_become_context_for_the_model() {
    use super::runs::{selection_context, AskArgs, RunEnv, Runs};
    let h = harness(accept_edits(), false, "fn main() {\n    let x = 1;\n    println!(\"{y}\");\n}\n");
    let editor = Arc::new(LspEditor::new(
        Arc::clone(&h.documents),
        h.client.clone(),
        Arc::clone(&h.settings),
        EditCapabilities::default(),
        vec![h.workspace.root().to_path_buf()],
    ));
    let env = RunEnv {
        client: h.client.clone(),
        documents: Arc::clone(&h.documents),
        workspace: Arc::clone(&h.workspace),
        editor,
        host: Arc::new(
            crate::host::Host::open(crate::host::FrontEnd {
                workspace: Arc::clone(&h.workspace),
                settings: Arc::clone(&h.settings),
                prompter: None,
                mode: None,
                rules_in_project: false,
                hooks: Default::default(),
                mcp: None,
                code_intel: crate::host::CodeIntelFrom::None,
                record: false,
            })
            .0,
        ),
        runs: Arc::new(Runs::default()),
        settings: Settings::default(),
        work_done_progress: false,
        answer_goes_alone: false,
        configuration: false,
        findings: super::findings::Findings::new(Arc::clone(&h.documents), Arc::clone(&h.workspace)).0,
    };
    let args: AskArgs = serde_json::from_value(json!({
        "prompt": "Fix this error",
        "textDocument": {"uri": h.uri.as_str()},
        "range": {"start": {"line": 1, "character": 4}, "end": {"line": 2, "character": 20}},
        "diagnostics": [{
            "range": {"start": {"line": 2, "character": 15}, "end": {"line": 2, "character": 16}},
            "severity": 1, "source": "rustc", "message": "cannot find value `y` in this scope"
        }]
    }))
    .unwrap();
    expect_test::expect![[r#"
        The user is looking at a.txt (open in the editor; read_file shows its unsaved text).
        Selection (lines 2-3):
        ```
        let x = 1;
            println!("{y}");
        ```
        Diagnostics:
        - line 3: error [rustc]: cannot find value `y` in this scope
    "#]]
    .assert_eq(&selection_context(&env, &args).unwrap());
}

/// eglot answers `applied: true` and sends the `didChange` only when the
/// user is next idle: after the verification wait the edit is reported
/// unknown (the model reads the file again), but once the buffer shows it
/// the call hears it was `applied` (an `effect_changed` event of the run).
#[tokio::test(start_paused = true)]
async fn a_did_change_after_the_verification_wait_corrects_the_record() {
    let h = harness(accept_edits(), false, "alpha\nbeta\n");
    h.client.script(OnApply::TrueThenApplyLater { after_ms: 1_000 });
    let file = h.read();
    let outcome = h.write(&file, |t| t.replace("beta", "BETA")).await;
    assert!(matches!(&outcome, Err(WriteError::Unknown(reason)) if reason.contains("did not change")), "{outcome:?}");
    // The user moves on; eglot's idle timer sends the change.
    tokio::time::sleep(std::time::Duration::from_millis(2_000)).await;
    assert_eq!(h.text(), "alpha\nBETA\n");
    assert_eq!(h.workspace.take_call_effects().iter().map(|e| e.status).collect::<Vec<_>>(), [EditStatus::Unknown]);
    let applied = FileEffect { ranges: vec![LineSpan { start: 2, end: 2 }], ..FileEffect::new(h.path.clone(), EditStatus::Applied) };
    assert_eq!(*h.changes.lock().unwrap(), vec![("toolu_1".to_string(), applied)]);
}

/// eglot refuses a stale edit with a JSON-RPC error before its own
/// `didChange` is out: the sink waits for that `didChange`; the user's
/// typing is in another line, so the edit is rebased and sent again (eglot
/// asks "Proceed?" again); in the edit's line, the model is told the file
/// changed, with what eglot said.
#[tokio::test(start_paused = true)]
async fn an_editor_version_refusal_is_rebased_or_reported_in_its_words_after_the_pending_change() {
    for (text, applied) in [("alpha\n\nbeta\n", true), ("alpha\nbeta\n", false)] {
        let h = harness(json!({"permissionMode": "acceptEdits", "timeouts": {"verifyMs": 5000}}), false, text);
        h.client.script(OnApply::ErrorThenTypeLater { message: "Edits on `a.txt' require version 1, you have 2 (-32603)", after_ms: 500 });
        let file = h.read();
        let outcome = h.write(&file, |t| t.replace("beta", "BETA")).await;
        if applied {
            assert!(matches!(&outcome, Ok(WriteOutcome::AppliedToBuffer { rebased: Some(_), .. })), "{outcome:?}");
            assert_eq!(h.text(), "typed alpha\n\nBETA\n");
            assert_eq!(h.client.requests(methods::APPLY_EDIT).len(), 2);
        } else {
            let Err(WriteError::Superseded(reason)) = &outcome else { panic!("{outcome:?}") };
            assert!(reason.contains("the editor said: the editor refused the edit: Edits on `a.txt' require version 1, you have 2"), "{reason}");
            // When the sink returned, the editor's pending change was in.
            assert_eq!(h.text(), "typed alpha\nbeta\n");
        }
    }
}

/// VS Code's words when the user typed in a document while its edit was
/// in the Refactor Preview and then pressed Apply, as the extension passes
/// them on.
const CHANGED_IN_PREVIEW: &str = "the document changed while the edit was reviewed (VS Code: Cannot apply refactoring because 'a.txt' has changed in the meantime)";

/// The user types a line at the top while the edit of line 3 is in the
/// editor's review; the editor refuses the stale edit ("has changed in the
/// meantime"). The edit is rebased onto the new text and offered again,
/// for the new version and reviewed again; the user's line stays.
#[tokio::test]
async fn an_edit_refused_because_the_user_typed_during_its_review_is_rebased_and_offered_again() {
    let h = harness(accept_edits(), true, "one\ntwo\nthree\nfour\n");
    h.client.script(OnApply::TypeFirst { at: 0, text: "typed\n".into(), answer_true: false });
    let file = h.read();
    let outcome = h.write_reviewed(&file, true, |t| t.replace("three", "THREE")).await;
    expect_test::expect![[r#"Ok(AppliedToBuffer { saved: false, rebased: Some("1 line added after line 0") })"#]].assert_eq(&format!("{outcome:?}"));
    assert_eq!(h.text(), "typed\none\ntwo\nTHREE\nfour\n");
    let sent = h.client.requests(methods::APPLY_EDIT);
    assert_eq!(sent.len(), 2);
    let again = &sent[1]["edit"];
    assert_eq!(again["documentChanges"][0]["textDocument"]["version"], 2, "{again}");
    assert_eq!(again["documentChanges"][0]["edits"][0]["range"]["start"]["line"], 3, "the hunk moved down a line: {again}");
    assert!(again["changeAnnotations"]["tandem.review/1"]["needsConfirmation"] == true, "reviewed again: {again}");
    // One edit, one effect.
    let records = h.workspace.take_call_effects();
    assert_eq!(records.iter().map(|r| r.status).collect::<Vec<_>>(), [EditStatus::Applied], "{records:?}");
    assert_eq!(records[0].ranges, [LineSpan { start: 4, end: 4 }]);
    // The model may edit again without reading: the ledger has the buffer's text.
    assert_eq!(&*h.workspace.ledger().get(&h.path).unwrap().seen_text.unwrap(), h.text().as_str());
}

/// Issue 53, bad input: the user types a line between the two hunks of an
/// edit while it is in the editor's review; the editor refuses the stale
/// edit. It is rebased and offered again as two hunks, the second moved
/// down a line, and both land around the user's line.
#[tokio::test]
async fn typing_between_the_hunks_of_a_reviewed_edit_rebases_both_hunks() {
    let h = harness(accept_edits(), true, "one\ntwo\nthree\nfour\nfive\n");
    h.client.script(OnApply::TypeFirst { at: 8, text: "typed\n".into(), answer_true: false });
    let file = h.read();
    let outcome = h.write_reviewed(&file, true, |t| t.replace("one", "ONE").replace("five", "FIVE")).await;
    assert!(matches!(&outcome, Ok(WriteOutcome::AppliedToBuffer { rebased: Some(_), .. })), "{outcome:?}");
    assert_eq!(h.text(), "ONE\ntwo\ntyped\nthree\nfour\nFIVE\n");
    let sent = h.client.requests(methods::APPLY_EDIT);
    assert_eq!(sent.len(), 2);
    let lines = |edit: &serde_json::Value| -> Vec<u64> {
        edit["documentChanges"][0]["edits"].as_array().unwrap().iter().map(|e| e["range"]["start"]["line"].as_u64().unwrap()).collect()
    };
    assert_eq!(lines(&sent[0]["edit"]), [0, 4], "{}", sent[0]);
    assert_eq!(lines(&sent[1]["edit"]), [0, 5], "offered again as two hunks, the second a line down: {}", sent[1]);
    assert_eq!(sent[1]["edit"]["documentChanges"][0]["textDocument"]["version"], 2);
}

/// Typing in the reviewed lines themselves, deleting the whole buffer, or
/// closing it during the review: the edit cannot be rebased. Nothing of it
/// lands, the user's text stays, and the model reads why: the file changed
/// while the edit was reviewed, not "rejected".
#[tokio::test]
async fn an_edit_whose_lines_the_user_changed_during_its_review_is_refused_saying_why() {
    for (user, expected) in [
        (OnApply::TypeFirst { at: 11, text: "X".into(), answer_true: false }, Some("one\ntwo\nthrXee\nfour\n")),
        (OnApply::UserReplacesFirst { text: Some(""), reason: CHANGED_IN_PREVIEW }, Some("")),
        (OnApply::UserReplacesFirst { text: None, reason: CHANGED_IN_PREVIEW }, None),
    ] {
        let h = harness(accept_edits(), true, "one\ntwo\nthree\nfour\n");
        h.client.script(user.clone());
        let file = h.read();
        let outcome = h.write_reviewed(&file, true, |t| t.replace("three", "THREE")).await;
        match expected {
            Some(text) => {
                let Err(WriteError::Superseded(message)) = &outcome else { panic!("{user:?}: {outcome:?}") };
                assert!(message.contains("the file changed in the editor while the edit was in the editor's review"), "{message}");
                assert!(!message.contains("reject"), "{message}");
                assert_eq!(h.text(), text, "{user:?}");
                let records = h.workspace.take_call_effects();
                assert_eq!(records.iter().map(|r| r.status).collect::<Vec<_>>(), [EditStatus::Superseded], "{records:?}");
            }
            None => {
                let Err(WriteError::NotApplied(message)) = &outcome else { panic!("{user:?}: {outcome:?}") };
                assert!(message.contains("closed"), "{message}");
            }
        }
        assert_eq!(h.client.requests(methods::APPLY_EDIT).len(), 1, "not offered again: {user:?}");
    }
}

/// The user keeps typing above the edit at every offer: it is offered at
/// most `MAX_OFFERS` times, then refused saying so.
#[tokio::test]
async fn an_edit_is_offered_at_most_three_times_while_the_user_keeps_typing() {
    let h = harness(accept_edits(), true, "one\ntwo\nthree\nfour\n");
    for _ in 0..4 {
        h.client.script(OnApply::TypeFirst { at: 0, text: "typed\n".into(), answer_true: false });
    }
    let file = h.read();
    let outcome = h.write_reviewed(&file, true, |t| t.replace("four", "FOUR")).await;
    let Err(WriteError::Superseded(message)) = &outcome else { panic!("{outcome:?}") };
    assert!(message.contains("kept changing") && message.contains("offered 3 times"), "{message}");
    assert_eq!(h.client.requests(methods::APPLY_EDIT).len(), crate::workspace::MAX_OFFERS);
    assert_eq!(h.text(), "typed\ntyped\ntyped\none\ntwo\nthree\nfour\n");
}

/// A user's rejection is a rejection even when the user also typed: not
/// offered again.
#[tokio::test]
async fn a_rejection_after_typing_is_not_offered_again() {
    let h = harness(accept_edits(), true, "one\ntwo\nthree\n");
    h.client.script(OnApply::UserReplacesFirst { text: Some("typed\none\ntwo\nthree\n"), reason: "the user chose Reject in the Tandem review" });
    let file = h.read();
    let outcome = h.write_reviewed(&file, true, |t| t.replace("three", "THREE")).await;
    assert!(matches!(&outcome, Err(WriteError::Rejected(m)) if m.contains("the user chose Reject")), "{outcome:?}");
    assert_eq!(h.client.requests(methods::APPLY_EDIT).len(), 1);
}

/// The editor applies the edit and the user types a line below before the
/// client reports either, so one `didChange` brings both (kak-lsp sends it
/// when idle): the edit is applied, not "superseded" (typing in the edit's
/// own lines is not taken for it: `workspace::merge`'s tests).
#[tokio::test]
async fn an_edit_and_the_user_s_typing_in_one_did_change_is_applied() {
    let h = harness(json!({"permissionMode": "acceptEdits", "timeouts": {"verifyMs": 100}}), false, "one\ntwo\nthree\n");
    h.client.script(OnApply::ApplyAndTypeInOneChange("typed after\n"));
    let file = h.read();
    let outcome = h.write(&file, |t| t.replace("three", "THREE")).await;
    assert_eq!(outcome, Ok(WriteOutcome::AppliedToBuffer { saved: false, rebased: None }));
    assert_eq!(h.text(), "one\ntwo\nTHREE\ntyped after\n");
    // The model's next edit reads the user's line first.
    let again = h.workspace.read(&h.path).unwrap();
    assert!(h.workspace.check_fresh(&again, "editing").is_err());
}
