//! `tandem chat`: an interactive session on one thread in the terminal.
//! Each line you type is a run of the agent on the current thread, printed
//! as `tandem ask` prints it (the text streams, tools show their progress,
//! applied edits their diff); the next line continues the thread.
//!
//! Line editing and history come from rustyline (history kept in the data
//! folder). Ctrl-C during a run cancels the run, not the session; at the
//! prompt it clears the line. Commands: `/new`, `/resume [ID]`, `/undo
//! [RUN]`, `/redo [RUN]`, `/tasks`, `/stop ID`, `/model [NAME]`, `/help`,
//! `/exit` (or Ctrl-D). A line ending in `\` continues on the next.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use rustyline::error::ReadlineError;
use tandem::checkpoint::Direction;
use tandem::host::ThreadStore;
use tandem::tools::permission_mode::PermissionMode;
use tandem::workspace::Workspace;

use super::ask::{Headless, SessionOptions, ThreadChoice};
use super::terminal::{self, errln, outln};

/// What a line typed at the chat prompt asks for.
#[derive(Debug, PartialEq, Eq)]
pub enum Input {
    /// A message for the agent.
    Message(String),
    /// `/new`: the next message starts a new thread.
    New,
    /// `/resume [ID]`: continue thread ID, or list the recent ones.
    Resume(Option<String>),
    /// `/undo [RUN_ID]`: take back what the last run (or RUN_ID) changed.
    Undo(Option<String>),
    /// `/redo [RUN_ID]`: put back what was undone last (or RUN_ID).
    Redo(Option<String>),
    /// `/tasks`: the session's background tasks.
    Tasks,
    /// `/stop ID`: end background task ID and everything it started.
    Stop(Option<String>),
    /// `/model [NAME]`: the model answering and the others to choose, or
    /// switch to NAME for the next messages.
    Model(Option<String>),
    Help,
    Exit,
    /// A `/word` that is no command.
    Unknown(String),
    /// Nothing typed.
    Empty,
}

pub const HELP: &str = "\
Type a message and press Enter; the agent's answer streams below, and the next message continues the conversation.
  /new            start a new conversation
  /resume [ID]    continue conversation ID (or the one its first characters name), showing what it said (without ID: list the recent ones)
  /undo [RUN]     take back the files the last run (or RUN) changed; /redo [RUN] puts them back
  /tasks          the background tasks the agent started; /stop ID ends one (the agent is told)
  @path           in a message: attach the file's text (@path:10-20 for those lines)
  /model [NAME]   the model answering and the ones to switch to; with NAME, the next messages use it
  @shot.png       in a message attaches that image (PNG, JPEG, GIF or WebP) for the model to see
  /help           this list
  /exit           leave (or Ctrl-D)
A line ending in \\ continues on the next line. Ctrl-C cancels a running answer; at the prompt it clears the line.";

/// Read one typed line (already joined over `\` continuations).
pub fn parse(line: &str) -> Input {
    let text = line.trim();
    if text.is_empty() {
        return Input::Empty;
    }
    // "//text" sends "/text" as a message.
    if let Some(escaped) = text.strip_prefix("//") {
        return Input::Message(format!("/{escaped}"));
    }
    let Some(command) = text.strip_prefix('/') else {
        return Input::Message(line.trim_end().trim_start_matches('\n').to_string());
    };
    let mut words = command.split_whitespace();
    let name = words.next().unwrap_or_default();
    let argument = words.next().map(str::to_string);
    match name {
        "new" | "clear" => Input::New,
        "resume" => Input::Resume(argument),
        "undo" => Input::Undo(argument),
        "redo" => Input::Redo(argument),
        "tasks" => Input::Tasks,
        "stop" => Input::Stop(argument),
        "model" => Input::Model(argument),
        "help" | "?" => Input::Help,
        "exit" | "quit" | "q" => Input::Exit,
        _ => Input::Unknown(name.to_string()),
    }
}

/// Join a line that ends in `\` with the lines typed after it.
pub fn continues(line: &str) -> Option<&str> {
    line.strip_suffix('\\')
}

pub struct ChatOptions {
    pub max_turns: Option<usize>,
    pub permission_mode: Option<PermissionMode>,
    pub mcp_approve: Vec<String>,
    pub verbose: bool,
    /// `--effort`: over the settings' `effort`.
    pub effort: Option<String>,
    /// The thread the first message continues.
    pub thread: ThreadChoice,
    /// `--model`: over `TANDEM_MODEL` and the settings' `model`.
    pub model: Option<String>,
}

/// The prompt; the line editor shows it before each message.
const PROMPT: &str = "› ";

/// How many threads `/resume` without an id lists.
const RECENT_THREADS: usize = 10;

pub async fn chat(options: ChatOptions, root: PathBuf) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        std::io::stdin().is_terminal() && std::io::stderr().is_terminal(),
        "tandem chat is interactive: run it in a terminal (from a script, one run is tandem ask PROMPT)"
    );
    let store = ThreadStore::for_workspace(&root);
    let history = store.as_ref().map(|s| s.dir().join("chat_history.txt"));
    let mut editor = rustyline::DefaultEditor::new()?;
    if let Some(path) = &history {
        // No history yet is fine.
        let _ = editor.load_history(path);
    }
    // One session for the whole chat, built by the host: the provider,
    // the gate, the hooks and the MCP servers are the same for every
    // message (the servers start once).
    let session_options = SessionOptions {
        verbose: options.verbose,
        json: false,
        max_turns: options.max_turns,
        permission_mode: options.permission_mode,
        mcp_approve: options.mcp_approve.clone(),
        // Approved earlier with `tandem ask --lsp-approve` (remembered).
        lsp_approve: Vec::new(),
        effort: options.effort.clone(),
        model: options.model.clone(),
    };
    let session = Headless::open(&session_options, Workspace::new(root.clone())?).await?;
    let mut thread = options.thread;
    outln!("Tandem chat in {} — {}. /help lists the commands, /exit leaves.", root.display(), describe(&thread, store.as_ref()));
    // Continuing a conversation shows what it said before.
    let continued = match &thread {
        ThreadChoice::Resume(id) => Some(id.clone()),
        ThreadChoice::Continue => store.as_ref().and_then(ThreadStore::latest),
        ThreadChoice::New | ThreadChoice::NewWithId(_) => None,
    };
    if let (Some(id), Some(store)) = (continued, store.as_ref()) {
        terminal::out_line(&super::recap::of_thread(store, &id, colour()));
    }
    loop {
        let (line, back) = read_message(editor).await;
        editor = back;
        let line = match line {
            Ok(line) => line,
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(err) => return Err(err.into()),
        };
        let input = parse(&line);
        if !matches!(input, Input::Empty) {
            let _ = editor.add_history_entry(line.as_str());
        }
        match input {
            Input::Empty => {}
            Input::Exit => break,
            Input::Help => outln!("{HELP}"),
            Input::Unknown(name) => outln!("/{name} is not a command: /help lists them (//{name} sends it as a message)"),
            Input::New => {
                thread = ThreadChoice::New;
                outln!("New conversation: the next message starts it.");
            }
            Input::Resume(None) => list_threads(store.as_ref()),
            Input::Resume(Some(prefix)) => match store.as_ref().map(|s| (unique_thread(s, &prefix), s)) {
                Some((Err(choices), _)) => outln!("{choices}"),
                Some((Ok(id), store)) => match store.load(&id) {
                    Ok(saved) => {
                        outln!("Continuing {id} ({}).", saved.title);
                        terminal::out_line(&super::recap::of_thread(store, &id, colour()));
                        thread = ThreadChoice::Resume(id);
                    }
                    Err(err) => outln!("Cannot continue {id}: {err}"),
                },
                None => outln!("There are no saved conversations: the user's data folder is unknown (set XDG_DATA_HOME)."),
            },
            Input::Undo(run) => {
                // Its report (or why there is nothing to undo) is printed; the chat goes on.
                if let Err(err) = super::undo::undo(Workspace::new(root.clone())?, Direction::Undo, run, false).await {
                    errln!("tandem: {err:#}");
                }
            }
            Input::Redo(run) => {
                if let Err(err) = super::undo::undo(Workspace::new(root.clone())?, Direction::Redo, run, false).await {
                    errln!("tandem: {err:#}");
                }
            }
            Input::Tasks => outln!("{}", session.describe_tasks()),
            Input::Stop(None) => outln!("/stop ID ends a background task: /tasks lists them."),
            Input::Stop(Some(id)) => outln!("{}", session.stop_task(&id).await),
            Input::Model(None) => show_models(&session),
            Input::Model(Some(name)) => match session.set_model(&name) {
                Ok(endpoint) => outln!("Model: {endpoint}. The next messages use it."),
                Err(err) => outln!("Cannot use the model {name}: {err}"),
            },
            Input::Message(prompt) => {
                if prompt.trim().is_empty() {
                    continue;
                }
                let images = match mentioned_images(&prompt, &root) {
                    Ok(images) => images,
                    Err(why) => {
                        // Nothing is sent: the user fixes the mention and sends again.
                        errln!("tandem: not sent: {why}");
                        continue;
                    }
                };
                // `@path` attaches the file's text, as the editors' chats do;
                // an image mentioned so goes as the image, not as its bytes.
                let attached: Vec<_> = super::ask::mentions(&root, &prompt).into_iter().filter(|m| !images.iter().any(|(name, _)| *name == m.name)).collect();
                if !attached.is_empty() {
                    outln!("Attached: {}", attached.iter().map(|m| m.name.as_str()).collect::<Vec<_>>().join(", "));
                }
                match session.run_attached(prompt, &continuing(&thread), false, &attached, images).await {
                    Ok(outcome) if !outcome.thread_id.is_empty() => thread = ThreadChoice::Resume(outcome.thread_id),
                    Ok(_) => {}
                    Err(err) => errln!("tandem: {err:#}"),
                }
            }
        }
    }
    if let Some(path) = &history {
        if let Err(err) = editor.save_history(path) {
            tracing::warn!(%err, "cannot save the chat history");
        }
    }
    session.close().await;
    Ok(ExitCode::SUCCESS)
}

/// The images a message names with `@path` (relative to the workspace
/// root): each file whose first bytes say PNG, JPEG, GIF or WebP, checked
/// ([`super::ask::load_image_named`]). Other mentions stay text. `Err`:
/// why a mentioned image cannot be sent.
pub fn mentioned_images(message: &str, root: &std::path::Path) -> Result<Vec<(String, tandem::model::Image)>, String> {
    let mut images = Vec::new();
    for word in message.split_whitespace() {
        let Some(name) = word.strip_prefix('@') else { continue };
        // Punctuation after the mention ("look at @shot.png, then…").
        let name = name.trim_end_matches([',', ';', ':', '?', '!', ')', '"', '\'']);
        let name = name.strip_suffix('.').unwrap_or(name);
        let path = root.join(name);
        if images.iter().any(|(seen, _)| seen == name) || !path.is_file() {
            continue;
        }
        let mut head = Vec::with_capacity(12);
        let Ok(file) = std::fs::File::open(&path) else { continue };
        if std::io::Read::read_to_end(&mut std::io::Read::take(file, 12), &mut head).is_err() || tandem::model::image::Format::sniff(&head).is_none() {
            continue;
        }
        images.push(super::ask::load_image_named(&path, name)?);
    }
    Ok(images)
}

/// Read a message (joining `\` continuations) off the async runtime: the
/// line editor blocks.
async fn read_message(mut editor: rustyline::DefaultEditor) -> (Result<String, ReadlineError>, rustyline::DefaultEditor) {
    let joined = tokio::task::spawn_blocking(move || {
        let mut message = String::new();
        let mut prompt = PROMPT;
        loop {
            match editor.readline(prompt) {
                Ok(line) => match continues(&line) {
                    Some(head) => {
                        message.push_str(head);
                        message.push('\n');
                        prompt = "… ";
                    }
                    None => {
                        message.push_str(&line);
                        return (Ok(message), editor);
                    }
                },
                Err(err) => return (Err(err), editor),
            }
        }
    })
    .await;
    match joined {
        Ok(result) => result,
        Err(err) => panic_free_editor(err),
    }
}

/// A line-editor task that panicked: start a fresh editor rather than end the session.
fn panic_free_editor(err: tokio::task::JoinError) -> (Result<String, ReadlineError>, rustyline::DefaultEditor) {
    tracing::warn!(%err, "the line editor failed; starting a fresh one");
    match rustyline::DefaultEditor::new() {
        Ok(editor) => (Err(ReadlineError::Interrupted), editor),
        Err(err) => {
            // Without a line editor there is no session to go on with.
            eprintln_exit(&format!("tandem: cannot read from the terminal: {err}"))
        }
    }
}

fn eprintln_exit(message: &str) -> ! {
    errln!("{message}");
    std::process::exit(1)
}

/// Whether the recap is coloured: stdout a terminal, `NO_COLOR` unset.
fn colour() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// The choice that continues `thread` (a new thread until the first run).
fn continuing(thread: &ThreadChoice) -> ThreadChoice {
    thread.clone()
}

fn describe(thread: &ThreadChoice, store: Option<&ThreadStore>) -> String {
    match thread {
        ThreadChoice::New | ThreadChoice::NewWithId(_) => "a new conversation".to_string(),
        ThreadChoice::Continue => match store.and_then(ThreadStore::latest) {
            Some(id) => format!("continuing {id}"),
            None => "a new conversation (none saved yet)".to_string(),
        },
        ThreadChoice::Resume(id) => format!("continuing {id}"),
    }
}

/// `/model`: the model the next message goes to, and the ones to switch to.
fn show_models(session: &Headless) {
    match session.models() {
        Ok((endpoint, choices)) => {
            outln!("Model: {endpoint}.");
            if choices.len() > 1 {
                outln!("/model NAME switches to another:");
                for (index, model) in choices.iter().enumerate() {
                    outln!("  {} {model}", if index == 0 { "*" } else { " " });
                }
            } else {
                outln!("/model NAME asks this provider for another model by its name.");
            }
        }
        Err(err) => outln!("No model: {err}"),
    }
}

/// The saved conversation `/resume PREFIX` means: the one whose id is
/// PREFIX, else the only one whose id starts with it; `Err`: what to say
/// (none, or the ones it could be).
fn unique_thread(store: &ThreadStore, prefix: &str) -> Result<String, String> {
    let (threads, _) = store.list();
    if threads.iter().any(|t| t.id == prefix) {
        return Ok(prefix.to_string());
    }
    let matching: Vec<_> = threads.iter().filter(|t| t.id.starts_with(prefix)).collect();
    match matching.as_slice() {
        [] => Err(format!("No saved conversation here starts with {prefix}: /resume lists them.")),
        [one] => Ok(one.id.clone()),
        several => {
            let mut text = format!("{prefix} starts {} conversations; type more of the id:", several.len());
            for thread in several.iter().take(RECENT_THREADS) {
                text.push_str(&format!("\n  {}  {}", thread.id, thread.title));
            }
            Err(text)
        }
    }
}

fn list_threads(store: Option<&ThreadStore>) {
    let Some(store) = store else {
        outln!("There are no saved conversations: the user's data folder is unknown (set XDG_DATA_HOME).");
        return;
    };
    let (threads, _) = store.list();
    if threads.is_empty() {
        outln!("No saved conversations in this folder yet.");
        return;
    }
    outln!("Recent conversations (/resume ID continues one):");
    for thread in threads.iter().take(RECENT_THREADS) {
        let when = chrono::DateTime::from_timestamp_millis(thread.updated_ms as i64)
            .map(|d| d.with_timezone(&chrono::Local).format("%Y-%m-%d %H:%M").to_string())
            .unwrap_or_default();
        outln!("  {}  {when}  {}", thread.id, thread.title);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_become_messages_or_commands() {
        assert_eq!(parse("fix the bug in app.py"), Input::Message("fix the bug in app.py".into()));
        assert_eq!(parse("  "), Input::Empty);
        assert_eq!(parse("/new"), Input::New);
        assert_eq!(parse("/model"), Input::Model(None));
        assert_eq!(parse("/model claude-opus-5-5"), Input::Model(Some("claude-opus-5-5".into())));
        assert_eq!(parse("/resume"), Input::Resume(None));
        assert_eq!(parse("/resume 20261201-0812-ab12cd"), Input::Resume(Some("20261201-0812-ab12cd".into())));
        assert_eq!(parse("/undo"), Input::Undo(None));
        assert_eq!(parse("/redo run-3"), Input::Redo(Some("run-3".into())));
        assert_eq!(parse("/tasks"), Input::Tasks);
        assert_eq!(parse("/stop 2"), Input::Stop(Some("2".into())));
        assert_eq!(parse("/exit"), Input::Exit);
        assert_eq!(parse("/quit"), Input::Exit);
        assert_eq!(parse("/help"), Input::Help);
        assert_eq!(parse("/frobnicate"), Input::Unknown("frobnicate".into()));
        assert_eq!(parse("//etc/hosts is what?"), Input::Message("/etc/hosts is what?".into()));
        assert_eq!(continues("first line \\"), Some("first line "));
        assert_eq!(continues("no"), None);
    }
}
