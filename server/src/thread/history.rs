//! A thread thread: what a follow-up continues.

use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::model::{ContentBlock, Message, Role};
use crate::model::{RunStatus, Usage};
use crate::tools::ports::tasks::TaskInfo;
use crate::tools::todo::TodoItem;
use crate::workspace::{fingerprint_scheme, ReadLedger, SavedRead};

use super::store::ThreadFile;

/// The session file format this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;

/// Title length, in characters, taken from the first prompt.
const TITLE_CHARS: usize = 60;

/// One line of a session file. Replaying the records in order rebuilds the
/// thread; nothing is ever rewritten in place.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Record {
    /// The first line.
    Meta { version: u32, thread: String, workspace: String, created_ms: u64 },
    /// The thread's title: its first prompt, shortened.
    Title { title: String },
    /// The system prompt, fixed for the thread so its prefix stays cacheable.
    System { text: String },
    /// A run starts: what the user asked (the next message is this with
    /// the editor's context). For the transcript.
    /// `attachments`: what the user attached, as they named it.
    Prompt {
        text: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        attachments: Vec<String>,
    },
    Message { message: Message },
    /// An old tool result replaced by a one-line stub.
    Stub { tool_use_id: String, content: String },
    /// The history was replaced by a summary.
    Compact { messages: Vec<Message>, before_tokens: u64, after_tokens: u64 },
    /// Deferred tools the model activated, in order.
    Tools { activated: Vec<String> },
    /// The thread's "Always allow" rules (their text), all of them.
    Grants { rules: Vec<String> },
    /// The todo list, all of it (`todo_write` replaces it whole).
    Todos { todos: Vec<TodoItem> },
    /// A review run's findings, all of them: the thread's findings now.
    /// `lines`: each one's `lines_text` (the text its lines held when it
    /// was reported; not in the finding's JSON), so a later session places
    /// it on the text as it is then, or drops it.
    Findings {
        findings: Vec<crate::protocol::Finding>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        lines: Vec<Option<String>>,
    },
    /// The thread's background tasks as they stand, all of them.
    Tasks { tasks: Vec<TaskInfo> },
    /// What the thread has read, all of it: each file's fingerprint (never
    /// its text), with the [`fingerprint_scheme`] it was taken with.
    Reads { scheme: u64, files: Vec<SavedRead> },
    /// A model turn ended.
    Turn { usage: Usage, #[serde(default, skip_serializing_if = "Option::is_none")] cost_usd: Option<f64>, at_ms: u64 },
    /// A run ended; `text` says why when it did not complete (a completed
    /// run's answer is its last message). `usage` and `cost_usd`: the
    /// run's own, its sub-agents' included, as its `end` event gave them
    /// (absent in threads saved before they were kept).
    Run {
        status: RunStatus,
        at_ms: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<Usage>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost_usd: Option<f64>,
    },
    /// What became of the run's edits, as its front end reported them
    /// (docs/protocol.md's edit objects: `{"uri", "status", "ranges", …,
    /// "toolCallId"?}`), and their summary: a transcript shows them as the
    /// run showed them.
    /// `checkpoint`: the id of the run's checkpoint when it left one,
    /// which `tandem undo` / `tandem.undo` take (a transcript view offers
    /// the run's Undo with it).
    Edits {
        edits: Vec<serde_json::Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        checkpoint: Option<String>,
    },
}

/// What a thread has used so far.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Totals {
    pub runs: usize,
    pub turns: usize,
    pub usage: Usage,
    /// Summed estimates; `None` while no turn had a known price.
    pub cost_usd: Option<f64>,
}

/// One thread thread.
pub struct Thread {
    pub id: String,
    /// The first prompt, shortened.
    pub title: String,
    pub workspace: PathBuf,
    pub created_ms: u64,
    pub updated_ms: u64,
    /// Set by the first run and kept: the cached prefix depends on it.
    pub system: Option<String>,
    pub messages: Vec<Message>,
    /// Deferred tools the model activated; their definitions are appended
    /// after the resident ones, so the prefix before them stays the same.
    pub activated_tools: Vec<String>,
    /// The "Always allow" rules the user gave in this thread (rule text):
    /// its later runs keep them, other threads do not have them.
    pub grants: Vec<String>,
    /// The model's todo list ([`crate::tools::todo`]).
    pub todos: Vec<TodoItem>,
    /// The findings of its last review run (`report_finding`): an editor
    /// publishes them again when the thread is resumed.
    pub findings: Vec<crate::protocol::Finding>,
    /// Its background tasks as last saved (without their live processes):
    /// a resumed thread lists them, those that were running as lost.
    pub tasks: Vec<TaskInfo>,
    /// What this thread has read, and at which version: a follow-up may edit
    /// a file read earlier if it is unchanged. Saved as fingerprints (file
    /// contents stay out of the session file): a thread continued by another
    /// process judges a file by its fingerprint alone.
    pub ledger: Arc<ReadLedger>,
    /// The ledger as the session file last recorded it.
    saved_reads: Vec<SavedRead>,
    pub totals: Totals,
    /// The context size at the last response (its input plus output
    /// tokens), or an estimate after the history was shrunk.
    pub context_tokens: u64,
    pending: Vec<Record>,
    file: Option<ThreadFile>,
}

impl std::fmt::Debug for Thread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Thread").field("id", &self.id).field("messages", &self.messages.len()).finish_non_exhaustive()
    }
}

pub fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// A new thread id: sortable by creation time, safe as a file name.
pub fn new_thread_id() -> String {
    let now = chrono::Local::now().format("%Y%m%d-%H%M%S");
    let suffix: u32 = rand::random_range(0..0x100_0000);
    format!("{now}-{suffix:06x}")
}

/// Thread ids come from clients and name files: letters, digits, `-`, `_`.
pub fn valid_thread_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

impl Thread {
    /// A new, empty thread (not saved until a store attaches a file).
    pub fn new(id: impl Into<String>, workspace: PathBuf) -> Self {
        let created_ms = now_ms();
        let id = id.into();
        let meta = Record::Meta { version: FORMAT_VERSION, thread: id.clone(), workspace: workspace.display().to_string(), created_ms };
        Thread {
            id,
            title: String::new(),
            workspace,
            created_ms,
            updated_ms: created_ms,
            system: None,
            messages: Vec::new(),
            activated_tools: Vec::new(),
            grants: Vec::new(),
            todos: Vec::new(),
            findings: Vec::new(),
            tasks: Vec::new(),
            ledger: Arc::new(ReadLedger::default()),
            saved_reads: Vec::new(),
            totals: Totals::default(),
            context_tokens: 0,
            pending: vec![meta],
            file: None,
        }
    }

    pub(crate) fn discard_pending(&mut self) {
        self.pending.clear();
    }

    pub(crate) fn attach(&mut self, file: ThreadFile) {
        self.file = Some(file);
    }

    /// Its file's length as this process last read or wrote it (`None`: not saved).
    pub(crate) fn saved_len(&self) -> Option<u64> {
        self.file.as_ref().map(ThreadFile::len)
    }

    pub fn is_saved(&self) -> bool {
        self.file.is_some()
    }

    fn record(&mut self, record: Record) {
        self.updated_ms = now_ms();
        self.pending.push(record);
    }

    /// Rebuild from records (the store's replay); `Meta` is handled by the caller.
    pub(crate) fn apply(&mut self, record: Record) {
        match record {
            Record::Meta { .. } => {}
            Record::Title { title } => self.title = title,
            Record::Prompt { .. } => {}
            Record::System { text } => self.system = Some(text),
            Record::Message { message } => self.messages.push(message),
            Record::Stub { tool_use_id, content } => {
                replace_result(&mut self.messages, &tool_use_id, content);
            }
            Record::Compact { messages, after_tokens, .. } => {
                self.messages = messages;
                self.context_tokens = after_tokens;
            }
            Record::Tools { activated } => self.activated_tools = activated,
            Record::Grants { rules } => self.grants = rules,
            Record::Todos { todos } => self.todos = todos,
            Record::Findings { mut findings, lines } => {
                for (finding, text) in findings.iter_mut().zip(lines) {
                    finding.lines_text = text;
                }
                self.findings = findings;
            }
            Record::Tasks { tasks } => self.tasks = tasks,
            Record::Reads { scheme, files } => {
                if scheme == fingerprint_scheme() {
                    self.ledger = Arc::new(ReadLedger::restored(files.clone()));
                } else {
                    // Saved by a build that hashes differently: its numbers
                    // say nothing here, so the files are read again.
                    tracing::info!(thread = %self.id, "the saved reads were fingerprinted differently; files will be read again");
                    self.ledger = Arc::new(ReadLedger::default());
                }
                self.saved_reads = files;
            }
            Record::Turn { usage, cost_usd, at_ms } => {
                self.add_turn_totals(&usage, cost_usd);
                self.context_tokens = usage.input_tokens + usage.output_tokens;
                self.updated_ms = at_ms;
            }
            Record::Run { at_ms, .. } => {
                self.totals.runs += 1;
                self.updated_ms = at_ms;
            }
            Record::Edits { .. } => {}
        }
    }

    fn add_turn_totals(&mut self, usage: &Usage, cost_usd: Option<f64>) {
        self.totals.turns += 1;
        self.totals.usage.add(usage);
        if let Some(cost) = cost_usd {
            self.totals.cost_usd = Some(self.totals.cost_usd.unwrap_or(0.0) + cost);
        }
    }

    pub fn set_system(&mut self, text: String) {
        self.system = Some(text.clone());
        self.record(Record::System { text });
    }

    /// Name the thread after its first prompt (once).
    pub fn set_title_from(&mut self, prompt: &str) {
        if self.title.is_empty() {
            self.title = shorten(prompt);
            let title = self.title.clone();
            self.record(Record::Title { title });
        }
    }

    /// A run starts with this prompt (recorded for the transcript).
    pub fn record_prompt(&mut self, text: &str, attachments: &[String]) {
        self.record(Record::Prompt { text: text.to_string(), attachments: attachments.to_vec() });
    }

    pub fn push(&mut self, message: Message) {
        self.messages.push(message.clone());
        self.record(Record::Message { message });
    }

    /// Replace a tool result's content (a stub); false when no such result.
    pub fn stub_result(&mut self, tool_use_id: &str, content: String) -> bool {
        let replaced = replace_result(&mut self.messages, tool_use_id, content.clone());
        if replaced {
            self.record(Record::Stub { tool_use_id: tool_use_id.to_string(), content });
        }
        replaced
    }

    /// Replace the whole history (compaction).
    pub fn replace_history(&mut self, messages: Vec<Message>, before_tokens: u64, after_tokens: u64) {
        self.messages = messages.clone();
        self.context_tokens = after_tokens;
        self.record(Record::Compact { messages, before_tokens, after_tokens });
    }

    pub fn activate_tool(&mut self, name: &str) {
        if !self.activated_tools.iter().any(|t| t == name) {
            self.activated_tools.push(name.to_string());
            let activated = self.activated_tools.clone();
            self.record(Record::Tools { activated });
        }
    }

    /// The thread's grants are now `rules` (recorded when they changed).
    pub fn set_grants(&mut self, rules: Vec<String>) {
        if rules != self.grants {
            self.grants = rules.clone();
            self.record(Record::Grants { rules });
        }
    }

    /// The todo list is now `todos` (recorded when it changed).
    pub fn set_todos(&mut self, todos: Vec<TodoItem>) {
        if todos != self.todos {
            self.todos = todos.clone();
            self.record(Record::Todos { todos });
        }
    }

    /// A review run reported `findings`: they are the thread's findings now.
    pub fn set_findings(&mut self, findings: Vec<crate::protocol::Finding>) {
        self.findings = findings.clone();
        let lines = findings.iter().map(|f| f.lines_text.clone()).collect();
        self.record(Record::Findings { findings, lines });
    }

    /// The thread's tasks are now `tasks` (recorded when their saved form changed).
    pub fn set_tasks(&mut self, tasks: &[TaskInfo]) {
        let saved: Vec<TaskInfo> = tasks.iter().map(TaskInfo::saved).collect();
        if saved != self.tasks {
            self.tasks = saved.clone();
            self.record(Record::Tasks { tasks: saved });
        }
    }

    /// A model turn ended with this usage (the turn's own, not a total).
    pub fn end_turn(&mut self, usage: Usage, cost_usd: Option<f64>) {
        self.add_turn_totals(&usage, cost_usd);
        self.context_tokens = usage.input_tokens + usage.output_tokens;
        self.record(Record::Turn { usage, cost_usd, at_ms: now_ms() });
    }

    /// The run ended; `text` is what the user was told when it did not
    /// complete; `usage` and `cost_usd` the run's (the totals already
    /// count them, turn by turn).
    pub fn end_run(&mut self, status: RunStatus, text: Option<String>, usage: Usage, cost_usd: Option<f64>) {
        self.totals.runs += 1;
        self.record(Record::Run { status, at_ms: now_ms(), text, usage: Some(usage), cost_usd });
    }

    /// What became of the run's edits, for the transcript (nothing when
    /// there were none).
    pub fn record_edits(&mut self, edits: Vec<serde_json::Value>, summary: Option<String>, checkpoint: Option<String>) {
        if !edits.is_empty() {
            self.record(Record::Edits { edits, summary, checkpoint });
        }
    }

    /// A run's checkpoint, for a front end that lists no edits (the
    /// terminal, ACP): a resumed thread then says whether the run was
    /// undone since.
    pub fn record_checkpoint(&mut self, checkpoint: String) {
        self.record(Record::Edits { edits: Vec::new(), summary: None, checkpoint: Some(checkpoint) });
    }

    /// Append what happened since the last commit to the session file and
    /// flush it. A failure is logged, never fatal: the run goes on unsaved.
    pub fn commit(&mut self) {
        let Some(file) = self.file.as_mut() else {
            // Unsaved threads keep no backlog.
            self.pending.clear();
            return;
        };
        let reads = self.ledger.saved();
        if reads != self.saved_reads {
            self.pending.push(Record::Reads { scheme: fingerprint_scheme(), files: reads.clone() });
            self.saved_reads = reads;
        }
        if let Err(err) = file.append(&self.pending) {
            tracing::warn!(thread = %self.id, %err, "cannot save the session; continuing without saving");
        }
        self.pending.clear();
    }

    /// The last user message that carries text (the latest prompt).
    pub fn last_prompt(&self) -> Option<&Message> {
        self.messages.iter().rev().find(|m| m.role == Role::User && m.content.iter().any(|b| matches!(b, ContentBlock::Text { .. })))
    }
}

fn shorten(prompt: &str) -> String {
    let line = prompt.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= TITLE_CHARS {
        return line;
    }
    let mut short: String = line.chars().take(TITLE_CHARS - 1).collect();
    short.push('…');
    short
}

fn replace_result(messages: &mut [Message], tool_use_id: &str, new_content: String) -> bool {
    for message in messages.iter_mut().rev() {
        for block in message.content.iter_mut() {
            if let ContentBlock::ToolResult { tool_use_id: id, content, .. } = block {
                if id == tool_use_id {
                    *content = new_content;
                    return true;
                }
            }
        }
    }
    false
}
