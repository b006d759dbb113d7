//! One language server process and Tandem's LSP client side of it: JSON-RPC
//! over the child's stdin/stdout (`Content-Length` framing by
//! [`crate::wire`]: a broken frame is logged and skipped, the messages
//! after it still arrive), requests with
//! ids and timeouts, the server's own requests answered (configuration,
//! progress, registrations), `textDocument/publishDiagnostics` kept per
//! document with the version it was published for.
//!
//! The reader task ends when the server exits (or its output cannot be
//! read): every pending request then fails at once, and the
//! connection reports itself dead so the next call can restart it.

use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use crate::sync::MutexExt;
use crate::wire::{frame_json, FrameReader};

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::{oneshot, watch};

/// Why a request got no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestError {
    Timeout,
    /// The server answered with an error.
    Server(String),
    /// The server exited (or its output could not be read).
    Gone(String),
}

/// The diagnostics last published for one document.
#[derive(Debug, Clone, Default)]
pub struct Published {
    pub version: Option<i64>,
    pub items: Vec<Value>,
    /// Counts every publish for any document (so a wait can tell "a new
    /// publish came" from "the same one again").
    pub seq: u64,
}

type Pending = Arc<Mutex<HashMap<i64, oneshot::Sender<Result<Value, RequestError>>>>>;

pub struct Connection {
    stdin: tokio::sync::Mutex<ChildStdin>,
    /// The server's process tree ([`crate::platform::ProcessTree`]: a
    /// process group, or a Job Object on Windows), so stopping it stops
    /// what it started too, and nothing of it outlives Tandem.
    child: Mutex<Option<crate::platform::ProcessTree>>,
    next_id: AtomicI64,
    pending: Pending,
    /// Published diagnostics by URI.
    diagnostics: Arc<Mutex<HashMap<String, Published>>>,
    /// Bumped on every publish.
    published: watch::Sender<u64>,
    alive: Arc<AtomicBool>,
    /// Why it died, once it has.
    death: Arc<Mutex<Option<String>>>,
    /// The capabilities from `initialize`.
    pub capabilities: Mutex<Value>,
}

impl Connection {
    /// Start `command` in `root`; the child's stderr goes to Tandem's log.
    pub fn spawn(command: &[String], root: &Path, env: &[(String, String)]) -> std::io::Result<Arc<Connection>> {
        let Some((program, args)) = command.split_first() else {
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "the command is empty"));
        };
        let mut cmd = tokio::process::Command::new(program);
        cmd.args(args)
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (key, value) in env {
            cmd.env(key, value);
        }
        let mut child = crate::platform::ProcessTree::spawn(cmd)?;
        let (Some(stdin), Some((stdout, stderr))) = (child.take_stdin(), child.take_output()) else {
            return Err(std::io::Error::other("the child has no stdin or stdout"));
        };
        {
            let name = program.clone();
            tokio::spawn(async move {
                let mut lines = BufReader::new(stderr).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    tracing::debug!(server = %name, "{line}");
                }
            });
        }
        let (published, _) = watch::channel(0);
        let connection = Arc::new(Connection {
            stdin: tokio::sync::Mutex::new(stdin),
            child: Mutex::new(Some(child)),
            next_id: AtomicI64::new(1),
            pending: Arc::default(),
            diagnostics: Arc::default(),
            published,
            alive: Arc::new(AtomicBool::new(true)),
            death: Arc::default(),
            capabilities: Mutex::new(Value::Null),
        });
        let reader = Arc::clone(&connection);
        tokio::spawn(async move {
            let reason = reader.read_loop(FrameReader::new(stdout)).await;
            // Its output ended: say how it exited (a process that closed
            // its stdout but lives on is stopped).
            let child = reader.child.locked().take();
            let status = match child {
                Some(mut child) => match tokio::time::timeout(Duration::from_secs(1), child.wait()).await {
                    Ok(Ok(status)) => format!(" ({status})"),
                    _ => {
                        child.kill();
                        String::new()
                    }
                },
                None => String::new(),
            };
            reader.die(format!("{reason}{status}"));
        });
        Ok(connection)
    }

    pub fn is_alive(&self) -> bool {
        self.alive.load(Ordering::SeqCst)
    }

    /// Why the server is gone ("exited with status 1"), once it is.
    pub fn death(&self) -> Option<String> {
        self.death.locked().clone()
    }

    fn die(&self, reason: String) {
        self.alive.store(false, Ordering::SeqCst);
        tracing::warn!(%reason, "a language server stopped");
        *self.death.locked() = Some(reason.clone());
        let pending: Vec<_> = self.pending.locked().drain().collect();
        for (_, reply) in pending {
            let _ = reply.send(Err(RequestError::Gone(reason.clone())));
        }
        // Wake anyone waiting for diagnostics.
        self.published.send_modify(|n| *n += 1);
    }

    async fn read_loop(&self, mut stdout: FrameReader<ChildStdout>) -> String {
        loop {
            // Bad frames and bodies that are not JSON are logged and
            // skipped by the reader; the next message still arrives.
            match stdout.next_json().await {
                Ok(Some(message)) => self.dispatch(message).await,
                Ok(None) => return "the language server exited".into(),
                Err(err) => return format!("cannot read the language server's output: {err}"),
            }
        }
    }

    async fn dispatch(&self, message: Value) {
        let method = message.get("method").and_then(Value::as_str);
        let id = message.get("id").cloned();
        match (method, id) {
            // An answer to one of ours.
            (None, Some(id)) => {
                let Some(id) = id.as_i64() else { return };
                let Some(reply) = self.pending.locked().remove(&id) else { return };
                let result = match message.get("error") {
                    Some(error) => Err(RequestError::Server(
                        error.get("message").and_then(Value::as_str).unwrap_or("an error without a message").to_string(),
                    )),
                    None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
                };
                let _ = reply.send(result);
            }
            // The server's own request: answer what a plain client would.
            (Some(method), Some(id)) => {
                let result = match method {
                    // One `null` per item: "use your defaults".
                    "workspace/configuration" => {
                        let items = message.pointer("/params/items").and_then(Value::as_array).map_or(0, Vec::len);
                        Value::Array(vec![Value::Null; items])
                    }
                    "workspace/workspaceFolders" => Value::Null,
                    _ => Value::Null,
                };
                let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
                if let Err(err) = self.write(&answer).await {
                    tracing::debug!(%err, "cannot answer a language server's request");
                }
            }
            (Some("textDocument/publishDiagnostics"), None) => {
                let Some(params) = message.get("params") else { return };
                let Some(uri) = params.get("uri").and_then(Value::as_str) else { return };
                let items = params.get("diagnostics").and_then(Value::as_array).cloned().unwrap_or_default();
                let version = params.get("version").and_then(Value::as_i64);
                let seq = *self.published.borrow() + 1;
                self.diagnostics.locked().insert(uri.to_string(), Published { version, items, seq });
                self.published.send_replace(seq);
            }
            _ => {}
        }
    }

    async fn write(&self, message: &Value) -> std::io::Result<()> {
        let mut stdin = self.stdin.lock().await;
        stdin.write_all(&frame_json(message)).await?;
        stdin.flush().await
    }

    /// Send a request and wait (at most `timeout`) for its answer.
    pub async fn request(&self, method: &str, params: Value, timeout: Duration) -> Result<Value, RequestError> {
        if let Some(reason) = self.death() {
            return Err(RequestError::Gone(reason));
        }
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let (tx, rx) = oneshot::channel();
        self.pending.locked().insert(id, tx);
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        if let Err(err) = self.write(&message).await {
            self.pending.locked().remove(&id);
            return Err(RequestError::Gone(format!("cannot write to the language server: {err}")));
        }
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(RequestError::Gone(self.death().unwrap_or_else(|| "the language server exited".into()))),
            Err(_) => {
                self.pending.locked().remove(&id);
                // Tell the server to stop working on it.
                let _ = self.notify("$/cancelRequest", json!({"id": id})).await;
                Err(RequestError::Timeout)
            }
        }
    }

    pub async fn notify(&self, method: &str, params: Value) -> std::io::Result<()> {
        self.write(&json!({"jsonrpc": "2.0", "method": method, "params": params})).await
    }

    /// The diagnostics last published for `uri`.
    pub fn published(&self, uri: &str) -> Option<Published> {
        self.diagnostics.locked().get(uri).cloned()
    }

    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.published.subscribe()
    }

    /// `shutdown`, `exit`, then kill whatever is left (bounded).
    pub async fn shutdown(&self) {
        if self.is_alive() {
            let _ = self.request("shutdown", Value::Null, Duration::from_secs(2)).await;
            let _ = self.notify("exit", Value::Null).await;
        }
        let child = self.child.locked().take();
        if let Some(mut child) = child {
            // Whatever is left of its tree ends as `child` is dropped.
            let _ = tokio::time::timeout(Duration::from_secs(2), child.wait()).await;
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The pids a process tree wrote to `file` (one a line), once `count`
    /// of them did (bounded wait).
    async fn pids_written(file: &Path, count: usize) -> Vec<u32> {
        let read = || -> Vec<u32> { std::fs::read_to_string(file).unwrap_or_default().lines().filter_map(|l| l.trim().parse().ok()).collect() };
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while read().len() < count && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        read()
    }

    async fn none_left(pids: Vec<u32>) -> Vec<u32> {
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while pids.iter().any(|pid| crate::platform::process_exists(*pid)) && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        pids.into_iter().filter(|pid| crate::platform::process_exists(*pid)).collect()
    }

    /// A language server that started processes of its own (as
    /// rust-analyzer starts cargo and proc-macro servers) is stopped with
    /// all of them: it runs in a Job Object, and the stand-in bash's
    /// `tree` (a child that starts a grandchild, all sleeping, none
    /// answering `shutdown`) leaves nothing once the connection is shut.
    #[cfg(windows)]
    #[tokio::test]
    async fn a_windows_language_server_is_stopped_with_its_whole_process_tree() {
        let dir = tempfile::tempdir().unwrap();
        let bash = crate::platform::test_fake_bash().to_string_lossy().into_owned();
        let connection = Connection::spawn(&[bash, "-c".into(), "tree lsp-tree".into()], dir.path(), &[]).unwrap();
        let pids = pids_written(&dir.path().join("lsp-tree.pids"), 3).await;
        assert_eq!(pids.len(), 3, "the server, its child and its grandchild never all ran: {pids:?}");
        connection.shutdown().await;
        let left = none_left(pids).await;
        assert!(left.is_empty(), "processes of the language server outlived it: {left:?}");
    }

    /// The same on Unix: the server leads a process group of its own,
    /// which is killed as it stops (a background `sleep` it started, which
    /// plain `kill` of the server would leave, is gone too).
    #[cfg(unix)]
    #[tokio::test]
    async fn a_language_server_is_stopped_with_the_processes_it_started() {
        let dir = tempfile::tempdir().unwrap();
        let script = "sleep 300 & echo $! > tree.pids; echo $$ >> tree.pids; sleep 300".to_string();
        let connection = Connection::spawn(&["sh".into(), "-c".into(), script], dir.path(), &[]).unwrap();
        let pids = pids_written(&dir.path().join("tree.pids"), 2).await;
        assert_eq!(pids.len(), 2, "the server and its child never both ran: {pids:?}");
        connection.shutdown().await;
        let left = none_left(pids).await;
        assert!(left.is_empty(), "processes of the language server outlived it: {left:?}");
    }
}
