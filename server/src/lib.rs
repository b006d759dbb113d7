//! # Tandem
//!
//! A coding agent that lives inside the editor. Tandem is a language server:
//! the editor starts `tandem lsp`, the user invokes "Ask agent", and the
//! agent reads, searches, edits and runs commands through a tool system.
//! Its edits reach the editor as `workspace/applyEdit` WorkspaceEdits the
//! user can review and undo. The same agent runs headless (`tandem ask`).
//!
//! ## Bird's-eye view
//!
//! The modules stand in layers; imports only go down (`tests/layers.rs`
//! reads every file's `crate::` paths and fails on an import that runs up
//! or a circle between top-level modules):
//!
//! ```text
//! editor ──LSP/stdio──▶ lsp/  ┐ front ends: documents, tandem.ask, applyEdit,
//! ACP client ─stdio──▶ acp/   │   prompts, reviews, how events are shown;
//! terminal ──▶ cli/ (binary)  ┘   a Prompter, a PlanReview, an Editor
//!                   │
//!                   ▼
//!            host  settings/      settings in, runs out, for every front end:
//!            review/                (a review's scope and prompt beside it)
//!                                   Host::open once per session (policy and gate,
//!                                   hooks, MCP, executor, threads, checkpoints),
//!                                   Host::start per run (the thread checked out with
//!                                   the one run lock, the loop driven; events out)
//!                   │
//!                   ▼
//!       agent/   completion/      the loop: provider (Anthropic | OpenAI | scripted)
//!                   │               → stream → tool calls → executor → results;
//!                   │               sub-agents, project instructions; beside it the
//!                   │               inline-completion engine (FIM and next-edit models)
//!                   ▼
//!   permissions/  hooks  mcp/  thread/      what the contract asks: the policy,
//!   checkpoint/  language_servers/          hook commands, MCP tools, threads,
//!   sandbox/  tasks/  worktree/              each run's checkpoint (undo/redo),
//!                   │                          the lspServers Tandem starts, the
//!                   │                          shell's sandbox (the only place that
//!                   │                          knows a platform's), the session's
//!                   │                          background tasks
//!                   ▼
//!                tools/           the contract (Tool, registry, executor, approval,
//!                   │               call observers, ports), the built-in tools, their
//!                   │               helpers: three rooms
//!                   ▼
//!              workspace/         open buffers overlaid on disk, the read ledger,
//!                   │               path confinement, editor and disk edit sinks
//!                   ▼
//!   model  environment  consent  scope  sync   leaves: the run's events and what
//!   json_file  confined_file  trust  diff  wire  became of its edits, messages
//!   platform  protocol  visible                   (and the model table), environment,
//!                                                 consent, settings layers, locks,
//!                                                 strict JSON files, a folder's
//!                                                 files read confined, workspace
//!                                                 trust, the one bounded diff, LSP
//!                                                 framing, what differs between
//!                                                 systems
//! ```
//!
//! ## Code map
//!
//! - [`workspace`]: what the agent sees. [`workspace::Workspace::read`] returns
//!   an open buffer's text if the editor has the file open, else the disk;
//!   [`workspace::Workspace::write`] routes a change to the editor sink
//!   ([`workspace::Editor`]) or the disk sink (atomic write after a
//!   fingerprint check). Tools never know which one they talk to. The read
//!   ledger remembers what the agent saw (buffer version or fingerprint); the
//!   file watcher marks entries changed on disk.
//! - [`tools`]: three rooms. **The contract** (`tools/` itself): the
//!   [`tools::Tool`] trait (typed `…Args` whose `///` docs are the
//!   model-facing description, a typed `Plan`, [`tools::ToolKind`]: what
//!   the call does — read these paths, edit this file, run this command,
//!   fetch this URL), the registry, the [`tools::Executor`] whose gates
//!   every call passes: find → prepare (the input parsed once into the
//!   typed `Args`) → plan (the tool's own checks: read-before-edit,
//!   unchanged-since-read; also the diff a review shows) → permission (one
//!   decision, by the [`tools::PermissionGate`], on the call's kind, after
//!   the `PreToolUse` hooks; a typed [`tools::Approval`] for the tool: the
//!   sandbox profile, the network, a review in the editor) → the call
//!   observers ([`tools::observer`]: the checkpoint's look around an
//!   approved command, the diagnostics after an edit) → call → `PostToolUse`
//!   hooks → cap; the permission and plan modes; and the **ports**
//!   (`tools/ports/`: sub-agents, tool hooks, the shell's sandbox, code
//!   intelligence), the small traits through which a tool asks the layers
//!   above for a service. **The built-in tools** (`tools/builtin/`, one
//!   file or folder per tool, none importing another; each tool's prompt
//!   text — its description, what a workspace adds to it, its system-prompt
//!   section — comes from the tool). **Their helpers** (`tools/support/`:
//!   line endings and diffs, the ignore-aware parallel walk, freshness
//!   refusals, `edit_file`'s matching ladder, front matter).
//!
//!   *To add a tool*: a file in `tools/builtin/` with its `…Args` and its
//!   `impl Tool`, and one line in `builtin::register_all`. A tool that needs
//!   a service from above also gets a port in `tools/ports/` (a trait the
//!   upper layer implements), holds it as a field (as `code_intel` holds
//!   its provider), and is added where the host builds the executor
//!   ([`host::Host::open`], with [`tools::Executor::with_tool`], and
//!   [`tools::Executor::with_observer`] if it also watches other calls);
//!   a front end that provides the service passes it in [`host::FrontEnd`].
//! - [`agent`]: the loop ([`agent::run()`]: early start, safe calls
//!   together, results in call order, turn limit, cancellation), the
//!   providers (Anthropic, OpenAI-compatible chat completions, OpenAI's
//!   Responses API, scripted) over one SSE decoder
//!   with retries and stream deadlines, the system prompt with project
//!   instructions (the root's `AGENTS.md`, `CLAUDE.md`, rules; each deeper
//!   folder's and the path-scoped rules follow the tool results that first
//!   touch them, so the cached prefix never changes) and the user's memory,
//!   sub-agents served beside the parent loop, and the run events every
//!   front end consumes.
//! - [`completion`]: inline completions and next-edit suggestions, the
//!   engine behind `textDocument/inlineCompletion`: the bounded window
//!   around the cursor, the request bodies (`/completions` with `prompt`
//!   and `suffix`, llama.cpp's `/infill`, a chat model's FIM prompt), the
//!   HTTP client bounded in size and time, the cache that serves a prefix
//!   again and rebases a suggestion the user started typing, each
//!   document's recent edits and the next-edit prompt, and the local
//!   shown/accepted counts `tandem doctor` reports. A request is stale
//!   (and answers nothing) once its document changed or a newer request
//!   came; the LSP front end only turns positions into items.
//! - [`thread`]: what the loop keeps between runs: a thread
//!   ([`thread::Thread`]) per follow-up chain, saved as JSON Lines (a run
//!   holds its thread's lock, so two processes on one workspace — two
//!   editor windows — never run one thread at once), with context
//!   management (stubbing old results, compaction), Anthropic prompt-cache
//!   breakpoints, loop detection, and token cost.
//! - [`checkpoint`]: what every run changed, for `tandem undo`/`redo`:
//!   the run's recorder hears of each write from the workspace
//!   ([`workspace::ChangeRecorder`]) and looks at the tree around each
//!   shell command (only what its inotify watcher named since the last
//!   look; the whole tree when events were lost or there is no watcher;
//!   only what moved is hashed); contents go to a content-addressed store beside the
//!   thread, one manifest per run. Undo and redo restore each file whole,
//!   open documents through the editor, and leave a file changed since in
//!   the run's lines as it is (`conflict`).
//! - [`tasks`]: the background tasks of one front-end session (the host
//!   owns the registry; it implements [`tools::ports::tasks::Tasks`]):
//!   commands `run_shell` started with `"background": true` in the
//!   sandbox's pid namespace, their output in a bounded ring (the start and
//!   the end kept), their processes read from `/proc`, stopped with the
//!   session. *Architecture Invariant:* a task never outlives its session,
//!   nor Tandem (`--die-with-parent`, the namespace ends with its first
//!   process); its status is what the machine says, never a guess.
//! - [`worktree`]: runs in their own git worktree: a detached worktree of
//!   `HEAD` plus the user's uncommitted files and unsaved buffers, outside
//!   the workspace (no commit, no branch, the user's index and hooks
//!   untouched), and the merge back: each file three-way merged against the
//!   buffer or disk as it is now and written through the workspace's review
//!   path; hunks over lines the user changed are conflicts, never applied.
//! - [`mcp`]: Model Context Protocol servers (stdio, streamable HTTP) through
//!   `rmcp`; their tools join the registry as deferred `mcp__SERVER__TOOL`
//!   tools that `tool_search` activates per run. The manager is a
//!   [`tools::ToolSource`] that can be still starting: the loop waits for it
//!   before a run's first turn, `tool_search` and the executor before they
//!   would answer that a tool is not there.
//! - [`language_servers`]: language servers Tandem starts itself
//!   (`lspServers`) where no editor answers code intelligence questions:
//!   an LSP client over each server's stdio, lazily started, shared by the
//!   workspace's runs, restarted (bounded) after a crash; it implements
//!   the tools' [`tools::ports::code_intel::CodeIntel`], as the LSP front end's
//!   `tandem/codeIntel` request to the editor plugin does.
//! - [`host`]: settings in, runs out, for every front end.
//!   [`host::Host::open`] builds, once per front-end session, what the
//!   runs of a workspace share from what the front end brings
//!   ([`host::FrontEnd`]: its workspace view, its settings, its
//!   [`host::Prompter`], its mode, the hooks the user consented to): the
//!   permission policy and the one gate (the front end's mode changes go
//!   through [`host::Host::set_mode`], its settings changes through
//!   [`host::Host::settings_changed`]), the executor (the built-in tools,
//!   the MCP servers', code intelligence from the editor or `lspServers`,
//!   the gate, the tool hooks — wired once), the threads and the
//!   checkpoints. [`host::Host::start`] runs one prompt: it checks the
//!   thread out with the one cross-process run lock (another window,
//!   another `tandem acp`, a `tandem chat` on the thread is refused), builds
//!   the run (the provider and its context configuration, the run's scope
//!   with plan mode, the sandbox, the checkpoint recorder, the request) and
//!   drives the loop in its own task; the front end gets a
//!   [`host::RunHandle`] (the events to show, the ending to await). The
//!   loop is the host's: no front end calls it. `tandem demo` hands its
//!   own scripted model to the host ([`host::RunParts::provider`]);
//!   `tandem tool` takes only the tool context ([`host::Host::prepare`]).
//! - [`review`]: what a review looks at and asks: the scope (the
//!   uncommitted changes, the last run's, a branch, a range, files named)
//!   as one bounded diff per file from git or the checkpoint, binary and
//!   generated files skipped and said, and the prompt with the level and
//!   the project's `.tandem/REVIEW.md`. The host runs it as a review run
//!   ([`host::RunParts::review`]: the read-only tools and
//!   `report_finding`), whose findings ([`protocol::Finding`]) are run
//!   events, kept in the thread, and the LSP front end's diagnostics.
//! - [`protocol`]: the run as every front end sees it, plain data with its
//!   JSON shape: the run events, how a run ended, token usage, what a call
//!   does ([`protocol::ToolKind`]), the todo list and the tasks, what one
//!   call did to one file ([`protocol::FileEffect`]) and each edit's
//!   [`protocol::EditStatus`] (whether it landed is the status's, not each
//!   front end's guess), the `tandem.ask` answer. *Architecture Invariant:*
//!   it imports nothing from the crate; the editor plugins' TypeScript and
//!   Lua types are generated from it.
//! - [`model`]: the conversation's data every layer shares: messages,
//!   content blocks, the model table.
//! - [`diff`]: every diff Tandem computes (review hunks, the editor's
//!   replacements, freshness refusals, previews, merges): the common prefix
//!   and suffix trimmed in one pass, the middle diffed with a deadline and
//!   replaced whole by lines past it, so a rewrite of any size costs linear
//!   time; [`diff::off_runtime`] runs such work off the async runtime.
//! - [`scope`]: which settings layer a value came from (user, project,
//!   local, editor).
//! - [`consent`]: what the user approved that a project would run (project
//!   MCP servers, project hooks), remembered per workspace; which project
//!   programs are approved ([`consent::Approvals`]: the store and the
//!   command line's `--mcp-approve`/`--lsp-approve`).
//! - [`trust`]: whether the user trusts a folder's own settings files, per
//!   folder and per content of each file (`tandem trust`); until then the
//!   settings and MCP loaders take from them only what tightens.
//! - [`json_file`]: a hand-written JSON file read strictly (a regular file
//!   only, bounded, no duplicate keys, no link out of its folder), so the
//!   settings fail closed instead of running with half of what they say.
//! - [`confined_file`]: the one way Tandem reads a file for itself that a
//!   folder may have brought (settings, instructions, skills, agents, what
//!   trust fingerprints): a regular file only, opened without blocking,
//!   bounded, and — for a project's own file — only when it resolves
//!   inside the workspace after symlinks. *Architecture Invariant:*
//!   nothing outside the workspace reaches the model because of a file
//!   the repository contains.
//! - [`wire`]: the one `Content-Length` framing of every LSP-style wire
//!   (the server's guard, the language servers' client, the demo's editor,
//!   the tests' client): a decoder without I/O that says why a frame is
//!   bad and finds the next message, and the readers around it.
//! - [`visible`]: text from outside Tandem with every character that acts
//!   instead of showing (escapes, carriage returns, bidi overrides,
//!   zero-width characters) written visibly, for the terminal and for the
//!   messages an editor shows as they are.
//! - [`sync`]: the one way a `std::sync` lock is taken
//!   ([`sync::MutexExt::locked`], [`sync::RwLockExt::reading`]/`writing`):
//!   a panicked holder does not take the server down.
//! - [`settings`]: one loader for `~/.tandem/settings.json` <
//!   `.tandem/settings.json` < `.tandem/settings.local.json` < the editor's
//!   settings; problems name the file and field, and only unreadable
//!   permission rules are fatal. Split by phase: the layers (which files,
//!   precedence, merging), the key table (one entry per key: how it is
//!   parsed, validated and merged, the variable it stands for, the docs
//!   page naming it; a key is known exactly when it is handled), the
//!   `TANDEM_*` lookups, and the writer ("Always allow in this project").
//! - [`permissions`]: the one permission decision ([`permissions::Policy`]):
//!   deny > plan > protected paths ([`permissions::protected`]: a write to
//!   git's hooks and config, Tandem's or an editor's settings is asked in
//!   every mode) > ask > allow rules > mode, on the call's `ToolKind`, shell
//!   commands judged by their parsed structure; carried out by the one
//!   gate ([`permissions::Gate`], every run's [`tools::PermissionGate`]),
//!   generic over the front end's [`permissions::Prompter`] — the
//!   terminal's ([`permissions::headless`]), the editor's
//!   (`lsp::permission`), an ACP client's (`acp::permission`) — which
//!   only asks. One vocabulary: the executor asks the gate about a
//!   [`tools::PermissionRequest`] and acts on its
//!   [`tools::PermissionDecision`]; the policy judges the request's
//!   [`permissions::Call`] and gives a [`permissions::RuleVerdict`]; the
//!   user's reply is an [`permissions::Answer`] or a
//!   [`permissions::Review`]. Other verdicts have their own names: the
//!   loop detector's `thread::loops::LoopVerdict`, the LSP transport's
//!   check of one frame (`FrameCheck`).
//! - [`sandbox`]: every `run_shell` command runs confined (bubblewrap on
//!   Linux, a self-checked Seatbelt profile on macOS) behind [`tools::ShellSandbox`], the only place that knows a
//!   platform's sandbox (how a confined command is stopped, what its
//!   refusals look like): unasked commands write only a private `/tmp`
//!   and see of the home folder only the toolchains, approved ones write
//!   the workspace (Tandem's, git's and the editor's config stay
//!   read-only); no network unless settings allow it (all of it, or the
//!   listed hosts through Tandem's proxy, whose lists `web_fetch` obeys
//!   too: [`tools::ports::network`]), a pid namespace,
//!   read-deny paths masked and edit-deny paths read-only for every
//!   command (found as it starts: [`permissions::masks`]), Tandem's own
//!   folders never shown. The front end hands the run its sandbox and
//!   says once when there is none.
//! - [`hooks`]: commands in Claude Code's format: `PreToolUse`/`PostToolUse`
//!   around each call (run by the executor through [`tools::ToolHooks`];
//!   the `PreToolUse` answer reaches the policy in the permission request),
//!   `UserPromptSubmit` and `Stop` around each user run (run by the agent
//!   loop, from the run request).
//! - [`lsp`]: the only module that imports LSP types: documents in ropey
//!   (applied in arrival order), the position bridge, minimal edits, the
//!   verified `workspace/applyEdit` editor sink (it checks the version at
//!   the moment of sending and never decides on permission),
//!   `tandem.ask`/`tandem.cancel`, the editor's prompter (prompts,
//!   edit reviews with their diff, or the editor's own preview), code
//!   actions, and the in-process editor demo. It knows calls by their
//!   [`tools::ToolKind`] and summary, never by a tool's name or fields.
//! - [`environment`]: credentials kept in memory, out of the process
//!   environment (`/proc/PID/environ`) and out of shell commands, whose
//!   environment is an allow-list; the process not dumpable and its
//!   inherited descriptors kept from its children.
//! - [`platform`]: what differs between Linux, Windows and macOS, behind
//!   one call each: file modes, whether a pid runs, the shell (Git for
//!   Windows' `bash.exe` there), the process tree a command runs in (a
//!   process group, a Windows Job Object), Windows' file-name rules.
//! - `server/src/main.rs` and `server/src/cli/` (the binary): argument
//!   parsing, `tandem ask` with its terminal printer, `tandem demo`,
//!   `tandem tool(s)`.
//!
//! Tests live beside the code (unit, data-driven with snapshots) and in
//! `tests/`: edit scenarios as data, the real binary over the CLI, the agent
//! against a loopback model that speaks the recorded SSE, `tandem lsp` over
//! stdio with a test client, and real editors: headless Neovim 0.11 and
//! 0.12 driving the plugin, Emacs with eglot and Kakoune with kak-lsp in
//! tmux, and the packaged VS Code extension in code-server.
//!
//! ## Invariants
//!
//! 1. **No unsaved user edit is ever lost or overwritten.** A file open in
//!    the editor is never written to disk by Tandem; it changes only through
//!    `workspace/applyEdit` with a `TextDocumentEdit` carrying the version the
//!    agent last read.
//! 2. **The server checks versions itself; editors do not protect us.** The
//!    current version must equal the read ledger's before an edit is sent,
//!    and after `applied: true` the following `didChange` must show the
//!    expected text (Neovim says `applied: true` for a skipped stale edit).
//! 3. **Read before edit.** Editing or overwriting a file not read in this
//!    run is refused; a closed file's read stamp is a content fingerprint,
//!    and the file watcher marks entries changed on disk early.
//! 4. **Tools see what the user sees.** `read_file` and `grep_search` read an
//!    open document's buffer, unsaved changes included.
//! 5. **Ordered document sync.** `didOpen`/`didChange`/`didClose` are
//!    applied before any `.await`.
//! 6. **Paths are confined** to the workspace roots after resolving `..` and
//!    symlinks.
//! 7. **Long work never blocks the protocol.** A run is a spawned task;
//!    requests to the client have timeouts and honour cancellation.
//! 8. **No network in tests.** Model APIs are loopback mocks speaking the
//!    real wire format.
//!
//! 9. **Layers.** Imports only go down the layers above, never in a circle;
//!    `tools/` imports only `workspace/` and the leaves. A lower layer that
//!    needs something from above owns a small trait the upper one
//!    implements: [`tools::ports::sub_agent::SubAgents`] (the loop),
//!    [`tools::ToolHooks`] (hooks), [`tools::PermissionGate`]
//!    (permissions), [`permissions::ProjectRules`] (settings).
//!
//! Deliberately absent: tools never write to disk directly (only through
//! [`workspace::Workspace::write`]); nothing prints to stdout in the library
//! (stdout is the LSP channel).

pub mod acp;
pub mod agent;
pub mod checkpoint;
pub mod completion;
pub mod confined_file;
pub mod consent;
pub mod diff;
pub mod environment;
pub mod hooks;
pub mod json_file;
pub mod language_servers;
pub mod host;
pub mod lsp;
pub mod mcp;
pub mod model;
pub mod permissions;
pub mod platform;
pub mod protocol;
pub mod review;
pub mod sandbox;
pub mod scope;
pub mod settings;
pub mod sync;
pub mod tasks;
pub mod thread;
pub mod tools;
pub mod trust;
pub mod visible;
pub mod wire;
pub mod workspace;
pub mod worktree;
