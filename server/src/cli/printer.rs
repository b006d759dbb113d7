//! The terminal printer for run events: the answer as it streams, one
//! readable line per tool call (`→ edit_file src/app.rs`) with a short
//! result under it — an applied edit with its diff in colour, a refusal
//! whole —, a spinner on stderr while waiting (only on a terminal) that
//! names the running tool and its elapsed time, and a closing summary.
//! Colour only when stdout is a terminal and `NO_COLOR` is unset. `--json`
//! bypasses all of this: one event per line.
//!
//! Everything an event carries is content: it reaches the terminal only as
//! a [`Shown`] (its controls made visible), and the colours are added to
//! that.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tandem::host::{RunEvent, RunOutcome, RunStatus, TaskStatus};
use tandem::tools::todo::TodoStatus;
use tandem::sync::MutexExt;
use tandem::tools::ToolKind;
use tandem::protocol::FileEffect;
use tandem::workspace::{edits_summary, EditStatus, EditSummaryItem};

use super::terminal::{self, errln, Shown};

/// Result lines longer than this are cut in the transcript (a successful
/// result's first line; errors are shown whole).
const RESULT_PREVIEW_CHARS: usize = 160;

/// An applied edit's diff shows this many lines unless `--verbose`.
const DIFF_PREVIEW_LINES: usize = 12;

/// An error result shows this many lines (a refusal's hint is never cut
/// inside a line).
const ERROR_LINES: usize = 40;

struct Style {
    color: bool,
}

impl Style {
    fn paint(&self, code: &str, text: impl Into<Shown>) -> Shown {
        if self.color { Shown::styled(code, text) } else { text.into() }
    }
    fn dim(&self, text: impl Into<Shown>) -> Shown {
        self.paint("2", text)
    }
    fn bold(&self, text: impl Into<Shown>) -> Shown {
        self.paint("1", text)
    }
    fn green(&self, text: impl Into<Shown>) -> Shown {
        self.paint("32", text)
    }
    fn red(&self, text: impl Into<Shown>) -> Shown {
        self.paint("31", text)
    }
    fn cyan(&self, text: impl Into<Shown>) -> Shown {
        self.paint("36", text)
    }
}

pub struct Printer {
    style: Style,
    spinner: Option<Spinner>,
    /// The cursor is at the start of a line on stdout.
    at_line_start: bool,
    /// Edit calls waiting for their result: call id → the file as the call
    /// named it, for the closing summary.
    edit_calls: HashMap<String, String>,
    /// What the run's calls did to files, in order, as their results said.
    effects: Vec<FileEffect>,
    retries: u32,
    /// Call id → nesting depth (sub-agents' calls are 1 and deeper).
    depths: HashMap<String, usize>,
    /// Whose text was printed last (`None`: the run's own).
    speaker: Option<String>,
    /// A copy of every event, for callers that check them afterwards.
    tee: Option<Arc<Mutex<Vec<RunEvent>>>>,
    /// Show applied edits' whole diffs.
    verbose: bool,
    /// The `[model: …]` line said last, shared by the printers of one
    /// `tandem chat`: it says the endpoint at its first message and again
    /// only when it changed. `None`: every run says it (`tandem ask`).
    provider_said: Option<Arc<Mutex<Option<String>>>>,
    /// The run's own answer rendered as markdown (on a colour terminal).
    markdown: Option<super::markdown::Markdown>,
}

impl Printer {
    /// A printer for the terminal: colour and spinner decided by what
    /// stdout and stderr are.
    pub fn for_terminal() -> Self {
        let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
        let spinner = std::io::stderr().is_terminal().then(Spinner::start);
        Printer {
            style: Style { color },
            spinner,
            at_line_start: true,
            edit_calls: HashMap::new(),
            effects: Vec::new(),
            retries: 0,
            depths: HashMap::new(),
            speaker: None,
            tee: None,
            verbose: false,
            provider_said: None,
            markdown: color.then(super::markdown::Markdown::new),
        }
    }

    /// Say the run's `provider` event only when its line differs from the
    /// one `said` holds (the previous run's), and keep it there.
    pub fn provider_said(mut self, said: Arc<Mutex<Option<String>>>) -> Self {
        self.provider_said = Some(said);
        self
    }

    /// Show every line of an applied edit's diff (`--verbose`).
    pub fn verbose(mut self, verbose: bool) -> Self {
        self.verbose = verbose;
        self
    }

    /// Also keep every event in `tee`.
    pub fn with_tee(mut self, tee: Arc<Mutex<Vec<RunEvent>>>) -> Self {
        self.tee = Some(tee);
        self
    }

    fn out(&mut self, text: &Shown) {
        if let Some(spinner) = &self.spinner {
            spinner.pause();
        }
        terminal::out(text);
        if let Some(last) = text.as_str().chars().last() {
            self.at_line_start = last == '\n';
        }
    }

    /// Shows what the markdown renderer holds of the answer (a line not
    /// yet ended): called before anything else is printed.
    fn flush_markdown(&mut self) {
        if let Some(held) = self.markdown.as_mut().map(|m| m.show_held()).filter(|h| !h.is_empty()) {
            self.out(&held);
        }
    }

    fn line(&mut self, text: &Shown) {
        self.flush_markdown();
        let prefix = if self.at_line_start { "" } else { "\n" };
        self.out(&(Shown::from(prefix) + text + "\n"));
    }

    /// A line from the demo harness, set apart from the transcript.
    pub fn note(&mut self, text: &str) {
        let text = self.style.cyan(text);
        self.line(&text);
    }

    pub fn event(&mut self, event: &RunEvent) {
        if let Some(tee) = &self.tee {
            tee.locked().push(event.clone());
        }
        if !matches!(event, RunEvent::Text { .. }) {
            self.flush_markdown();
        }
        self.show(event, 0, None);
    }

    /// Text at `depth` (0: the run itself, 1: its sub-agents, …), indented
    /// line by line. A change of speaker starts a new line.
    fn text_at(&mut self, text: &str, depth: usize, speaker: Option<&str>) {
        if self.speaker.as_deref() != speaker {
            if !self.at_line_start {
                self.out(&Shown::from("\n"));
            }
            self.speaker = speaker.map(String::from);
        }
        if depth == 0 {
            let shown = match self.markdown.as_mut() {
                Some(markdown) => markdown.show(text),
                None => Shown::prose(text),
            };
            if !shown.is_empty() {
                self.out(&shown);
            }
            return;
        }
        let indent = indent(depth);
        let mut out = String::with_capacity(text.len() + 8);
        let mut at_start = self.at_line_start;
        for c in text.chars() {
            if at_start && c != '\n' {
                out.push_str(&indent);
            }
            out.push(c);
            at_start = c == '\n';
        }
        let out = self.style.dim(Shown::prose(&out));
        self.out(&out);
    }

    fn show(&mut self, event: &RunEvent, depth: usize, speaker: Option<&str>) {
        let pad = indent(depth);
        match event {
            RunEvent::Nested { parent, event } => {
                let depth = self.depths.get(parent).map(|d| d + 1).unwrap_or(1);
                self.show(event, depth, Some(parent));
            }
            RunEvent::Text { text } => self.text_at(text, depth, speaker),
            RunEvent::ToolCall { id, name, kind, summary, .. } => {
                self.depths.insert(id.clone(), depth);
                self.speaker = None;
                if matches!(kind, ToolKind::Edit { .. }) {
                    self.edit_calls.insert(id.clone(), summary.clone());
                }
                let arrow = self.style.cyan("→");
                let plain = if summary.is_empty() { name.to_string() } else { format!("{name} {summary}") };
                let name = self.style.bold(name);
                let line = if summary.is_empty() { Shown::from(pad) + arrow + " " + name } else { Shown::from(pad) + arrow + " " + name + " " + summary };
                self.line(&line);
                // The spinner runs while the tool does, naming it (a question
                // the call asks holds it off: `hold_spinner`).
                if let Some(spinner) = &self.spinner {
                    spinner.activity(first_line(&plain));
                }
                self.resume_spinner();
            }
            RunEvent::ToolResult { id, is_error, content, effects, .. } => {
                let edited = self.edit_calls.remove(id);
                self.effects.extend(effects.iter().cloned());
                self.speaker = None;
                let lines = if *is_error {
                    error_lines(content, &pad, &self.style)
                } else if edited.is_some() && has_diff(content) {
                    diff_lines(content, &pad, &self.style, if self.verbose { usize::MAX } else { DIFF_PREVIEW_LINES })
                } else {
                    vec![Shown::from(format!("{pad}  ")) + self.style.green("✓") + " " + self.style.dim(preview(content))]
                };
                for line in lines {
                    self.line(&line);
                }
                if let Some(spinner) = &self.spinner {
                    spinner.activity("working…".to_string());
                }
                self.resume_spinner();
            }
            RunEvent::Status { .. } => {}
            RunEvent::Thinking { text } => {
                // Collapsed: one dim line, the first words of the thought.
                let first: String = text.split_whitespace().take(12).collect::<Vec<_>>().join(" ");
                let line = self.style.dim(Shown::prose(&format!("· thinking: {first}…")));
                self.line(&line);
            }
            RunEvent::Compact { before_tokens, after_tokens, reason } => {
                let line = self.style.dim(format!(
                    "[conversation compacted ({reason}): ~{} → ~{} tokens]",
                    thousands(*before_tokens),
                    thousands(*after_tokens)
                ));
                self.line(&line);
            }
            RunEvent::Retry { attempt, delay_ms, reason } => {
                self.retries += 1;
                let line = self.style.dim(format!("[{reason}; retrying (attempt {attempt}) in {:.1}s]", *delay_ms as f64 / 1000.0));
                if let Some(spinner) = &self.spinner {
                    spinner.pause();
                }
                terminal::err_line(&line);
                self.resume_spinner();
            }
            RunEvent::Hook { name, message } => {
                let line = self.style.dim(format!("{pad}[{name} hook] {message}"));
                self.line(&line);
            }
            RunEvent::Provider { provider, model, base_url, reason } => {
                // Where the prompt goes, before it goes: on stderr, beside
                // the retries, so the transcript on stdout stays the answer.
                let at = base_url.as_deref().map(|url| format!(" at {url}")).unwrap_or_default();
                let said = format!("[model: {provider}{at}, {model}; {reason}]");
                let again = self.provider_said.as_ref().is_some_and(|last| {
                    let mut last = last.locked();
                    let same = last.as_deref() == Some(said.as_str());
                    *last = Some(said.clone());
                    same
                });
                if !again {
                    terminal::err_line(&self.style.dim(said));
                }
            }
            RunEvent::Sandbox { message } => {
                let line = self.style.dim(format!("{pad}[sandbox] {message}"));
                self.line(&line);
            }
            RunEvent::Waiting { what } => {
                let line = self.style.dim(format!("{pad}waiting for {what}…"));
                self.line(&line);
            }
            // Only an editor confirms an edit late; the end's summary
            // counts what it became.
            RunEvent::EffectChanged { .. } => {}
            // The terminal asks straight away (its runs put no question in
            // the stream: only the editors' and ACP's do).
            RunEvent::Question { .. } => {}
            RunEvent::Todo { todos } => {
                // The whole list each time, as a checklist.
                let done = todos.iter().filter(|t| t.status == TodoStatus::Completed).count();
                let head = self.style.dim(format!("{pad}todo ({done}/{}):", todos.len()));
                self.line(&head);
                for todo in todos {
                    let item = format!("{pad}  {} {}", todo.status.checkbox(), todo.content);
                    let item = match todo.status {
                        TodoStatus::Completed => self.style.dim(item),
                        TodoStatus::InProgress => self.style.bold(item),
                        TodoStatus::Pending => Shown::from(item),
                    };
                    self.line(&item);
                }
            }
            RunEvent::Finding { finding } => {
                // The finding as data: where, how much, what; the model's
                // words shown visibly (they may hold escapes).
                let head = format!("{pad}{} {} {}:{}-{} [{}]: {}", finding.id, finding.severity.as_str(), finding.file_path, finding.start_line, finding.end_line, finding.kind, finding.title);
                let head = self.style.bold(Shown::prose(&head));
                self.line(&head);
                for line in finding.body.lines() {
                    self.line(&Shown::prose(&format!("{pad}  {line}")));
                }
                if let Some(suggestion) = &finding.suggestion {
                    self.line(&self.style.dim(format!("{pad}  suggested replacement of those lines:")));
                    for line in suggestion.lines() {
                        let line = self.style.dim(Shown::prose(&format!("{pad}  | {line}")));
                        self.line(&line);
                    }
                }
            }
            RunEvent::TaskStarted { task_id, command, .. } => {
                let line = self.style.dim(format!("{pad}[task {task_id} started in the background: {}]", first_line(command)));
                self.line(&line);
            }
            RunEvent::TaskEnded { task_id, command, status, exit_code, .. } => {
                let how = match (status, exit_code) {
                    (TaskStatus::Exited, Some(code)) => format!("exited with code {code}"),
                    (status, _) => status.name().to_string(),
                };
                let line = self.style.dim(format!("{pad}[task {task_id} {how}: {}]", first_line(command)));
                self.line(&line);
            }
            RunEvent::End { .. } => {
                if let Some(spinner) = &self.spinner {
                    spinner.stop();
                }
            }
        }
    }

    pub fn resume_spinner(&self) {
        if let Some(spinner) = &self.spinner {
            spinner.resume();
        }
    }

    /// The closing summary: status, turns, tokens, and the run's edits by
    /// status with every changed range (`display`: a file as the user
    /// reads it).
    pub fn summary(&mut self, outcome: &RunOutcome, display: impl Fn(&std::path::Path) -> String) {
        let status = match outcome.status {
            RunStatus::Completed => self.style.green("completed"),
            RunStatus::Cancelled => self.style.red("cancelled"),
            RunStatus::Failed => self.style.red("failed"),
            RunStatus::TurnLimit => self.style.red("stopped at the turn limit"),
            RunStatus::Loop => self.style.red("stopped: the model was repeating itself"),
        };
        // What landed, and the edits the user declined; an edit refused
        // for another reason is the model's to retry, told in its result.
        let edits: Vec<EditSummaryItem> = self
            .effects
            .drain(..)
            .filter(|e| e.status.landed() || e.status == EditStatus::Rejected)
            .map(|e| EditSummaryItem::of_effect(&e, display(&e.path)))
            .collect();
        let files = edits_summary(&edits).unwrap_or_else(|| "no edits".to_string());
        let turns = if outcome.turns == 1 { "1 turn".to_string() } else { format!("{} turns", outcome.turns) };
        let usage = &outcome.usage;
        let cached = if usage.cache_read_input_tokens > 0 { format!(" ({} cached)", thousands(usage.cache_read_input_tokens)) } else { String::new() };
        let mut tokens = format!("{} tokens in{cached}, {} out", thousands(usage.input_tokens), thousands(usage.output_tokens));
        if let Some(cost) = outcome.cost_usd {
            tokens.push_str(&format!(" · {}", tandem::host::format_cost(cost)));
        }
        self.flush_markdown();
        if !self.at_line_start {
            self.out(&Shown::from("\n"));
        }
        let thread = if outcome.thread_id.is_empty() { String::new() } else { format!(" · thread {}", outcome.thread_id) };
        let line = self.style.dim(Shown::from("── ") + status + format!(" · {turns} · {tokens} · {files}{thread}"));
        self.line(&(Shown::from("\n") + line));
        if outcome.status == RunStatus::Failed {
            errln!("tandem: {}", outcome.text);
        }
    }
}

/// The indentation for a nesting depth.
fn indent(depth: usize) -> String {
    "    ".repeat(depth)
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_string()
}

/// A refusal or failure, whole: its first line marked, every other line
/// under it (up to [`ERROR_LINES`]), none cut.
fn error_lines(content: &str, pad: &str, style: &Style) -> Vec<Shown> {
    let mut lines = content.lines().filter(|l| !l.trim().is_empty());
    let first = lines.next().unwrap_or("(empty)");
    let mut out = vec![Shown::from(format!("{pad}  ")) + style.red("✗") + " " + style.red(first)];
    let rest: Vec<&str> = lines.collect();
    for line in rest.iter().take(ERROR_LINES) {
        out.push(Shown::from(format!("{pad}    {line}")));
    }
    if rest.len() > ERROR_LINES {
        out.push(Shown::from(format!("{pad}    ")) + style.dim(format!("… {} more lines", rest.len() - ERROR_LINES)));
    }
    out
}

/// A diff line of a tool result (`tools/text.rs` numbers them): the line
/// number, then `-`, `+` or a space, then the text.
fn diff_marker(line: &str) -> Option<char> {
    let rest = line.trim_start();
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return None;
    }
    let mut after = rest[digits..].chars();
    match (after.next(), after.next()) {
        (Some(' '), Some(marker @ ('-' | '+' | ' '))) => Some(marker),
        _ => None,
    }
}

/// A question's text for the terminal (stderr): its diff rows coloured as
/// an applied edit's are, when stderr is a terminal and `NO_COLOR` is unset.
pub fn coloured_rows(text: &str) -> Shown {
    let style = Style { color: std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none() };
    paint_rows(text, &style)
}

fn paint_rows(text: &str, style: &Style) -> Shown {
    let rows = text.lines().map(|line| match diff_marker(line) {
        Some('-') => style.red(line),
        Some('+') => style.green(line),
        Some(_) => style.dim(line),
        None if line.starts_with("@@ ") => style.cyan(line),
        None => Shown::from(line),
    });
    Shown::join(rows, "\n")
}

fn has_diff(content: &str) -> bool {
    content.lines().any(|l| l.starts_with("@@ "))
}

/// An applied edit: its first line, then its diff in colour, `-` lines red
/// and `+` lines green, cut after `limit` lines with a count.
fn diff_lines(content: &str, pad: &str, style: &Style, limit: usize) -> Vec<Shown> {
    let mut lines = content.lines();
    let first = lines.next().unwrap_or_default();
    let mut out = vec![Shown::from(format!("{pad}  ")) + style.green("✓") + " " + first];
    let body: Vec<&str> = lines.skip_while(|l| !l.starts_with("@@ ")).collect();
    for line in body.iter().take(limit) {
        let shown = match diff_marker(line) {
            Some('-') => style.red(*line),
            Some('+') => style.green(*line),
            _ if line.starts_with("@@ ") => style.cyan(*line),
            _ => style.dim(*line),
        };
        out.push(Shown::from(format!("{pad}    ")) + shown);
    }
    if body.len() > limit {
        out.push(Shown::from(format!("{pad}    ")) + style.dim(format!("… {} more diff lines (--verbose shows them all)", body.len() - limit)));
    }
    out
}

/// The first line of a result, cut to [`RESULT_PREVIEW_CHARS`], with a
/// count of the lines left out.
fn preview(content: &str) -> String {
    let mut lines = content.lines().filter(|l| !l.trim().is_empty());
    let first = lines.next().unwrap_or("(empty)");
    let mut out: String = first.chars().take(RESULT_PREVIEW_CHARS).collect();
    if first.chars().count() > RESULT_PREVIEW_CHARS {
        out.push('…');
    }
    let more = lines.count();
    match more {
        0 => {}
        1 => out.push_str(" (+1 line)"),
        n => out.push_str(&format!(" (+{n} lines)")),
    }
    out
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A spinner on stderr. Drawing and clearing share a lock, so a frame is
/// never drawn over text that was just printed.
pub struct Spinner {
    state: Arc<Mutex<SpinnerState>>,
}

struct SpinnerState {
    active: bool,
    stopped: bool,
    /// What is running ("run_shell cargo test", "working…") and since when:
    /// after a few seconds the spinner shows the elapsed time.
    activity: String,
    since: Instant,
}

/// The terminal line the spinner draws on, shared with the questions the
/// terminal asks (`hold_spinner`): a frame is drawn only while no question
/// is open, and cleared before one is printed.
struct TerminalLine {
    questions: usize,
    spinner_drawn: bool,
}

static TERMINAL_LINE: Mutex<TerminalLine> = Mutex::new(TerminalLine { questions: 0, spinner_drawn: false });

fn terminal_line() -> std::sync::MutexGuard<'static, TerminalLine> {
    TERMINAL_LINE.locked()
}

/// Clear the spinner's frame, if one is drawn.
fn clear_frame(line: &mut TerminalLine) {
    if line.spinner_drawn {
        terminal::clear_line();
        line.spinner_drawn = false;
    }
}

/// While a question is asked on the terminal, the spinner stays off.
pub struct SpinnerHold;

/// Keep the spinner from drawing over a question (and clear its frame).
pub fn hold_spinner() -> SpinnerHold {
    let mut line = terminal_line();
    line.questions += 1;
    clear_frame(&mut line);
    SpinnerHold
}

impl Drop for SpinnerHold {
    fn drop(&mut self) {
        let mut line = terminal_line();
        line.questions = line.questions.saturating_sub(1);
    }
}

/// Draws the spinner every 100 ms until it is stopped.
fn spawn_ticker(state: Arc<Mutex<SpinnerState>>) {
    tokio::spawn(async move {
        const FRAMES: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
        let mut frame = 0;
        let mut interval = tokio::time::interval(Duration::from_millis(100));
        loop {
            interval.tick().await;
            let state = state.locked();
            if state.stopped {
                break;
            }
            let mut line = terminal_line();
            if state.active && line.questions == 0 {
                terminal::clear_line();
                terminal::err(&spinner_line(FRAMES[frame % FRAMES.len()], &state.activity, state.since.elapsed()));
                line.spinner_drawn = true;
                frame += 1;
            }
        }
    });
}

/// The spinner shows the elapsed time once an activity has run this long.
const SHOW_ELAPSED_AFTER: Duration = Duration::from_secs(2);

/// The spinner's line: the frame, the activity cut to fit a narrow
/// terminal, and the elapsed time once it is long.
fn spinner_line(frame: &str, activity: &str, elapsed: Duration) -> Shown {
    let activity: String = if activity.chars().count() > 60 { activity.chars().take(59).chain(['…']).collect() } else { activity.to_string() };
    Shown::from(if elapsed >= SHOW_ELAPSED_AFTER { format!("{frame} {activity} · {}s", elapsed.as_secs()) } else { format!("{frame} {activity}") })
}

impl Spinner {
    fn start() -> Self {
        let state = Arc::new(Mutex::new(SpinnerState {
            active: true,
            stopped: false,
            activity: "working…".to_string(),
            since: Instant::now(),
        }));
        spawn_ticker(Arc::clone(&state));
        Spinner { state }
    }

    fn pause(&self) {
        let mut state = self.state.locked();
        state.active = false;
        clear_frame(&mut terminal_line());
    }

    /// A new activity starts (its elapsed time counts from now).
    fn activity(&self, activity: String) {
        let mut state = self.state.locked();
        state.activity = activity;
        state.since = Instant::now();
    }

    fn resume(&self) {
        let mut state = self.state.locked();
        state.active = !state.stopped;
    }

    fn stop(&self) {
        self.pause();
        self.state.locked().stopped = true;
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAIN: Style = Style { color: false };

    fn shown(lines: Vec<Shown>) -> Vec<String> {
        lines.iter().map(|l| l.as_str().to_string()).collect()
    }

    const EDITED: &str = "Successfully edited app.py\n@@ -1,3 +1,3 @@\n   1   def main():\n   2 -     print(\"hello\")\n   2 +     print(\"hello, world\")\n   3   main()";

    #[test]
    fn an_applied_edit_shows_its_diff_coloured_and_bounded() {
        assert_eq!(
            shown(diff_lines(EDITED, "", &PLAIN, 12)),
            [
                "  ✓ Successfully edited app.py",
                "    @@ -1,3 +1,3 @@",
                "       1   def main():",
                "       2 -     print(\"hello\")",
                "       2 +     print(\"hello, world\")",
                "       3   main()",
            ]
        );
        assert_eq!(shown(diff_lines(EDITED, "", &PLAIN, 2))[3], "    … 3 more diff lines (--verbose shows them all)");
        let coloured = shown(diff_lines(EDITED, "", &Style { color: true }, 12));
        assert_eq!(coloured[3], "    \x1b[31m   2 -     print(\"hello\")\x1b[0m", "a removed line is red");
        assert_eq!(coloured[4], "    \x1b[32m   2 +     print(\"hello, world\")\x1b[0m", "an added line is green");
        assert_eq!(coloured[2], "    \x1b[2m   1   def main():\x1b[0m", "context is dim");
    }

    #[test]
    fn a_refusal_is_shown_whole() {
        let hint = format!("Permission denied for run_shell: {} — allow it in .tandem/settings.json", "x".repeat(300));
        let lines = shown(error_lines(&format!("{hint}\nsecond line of the hint"), "", &PLAIN));
        assert_eq!(lines, [format!("  ✗ {hint}"), "    second line of the hint".to_string()], "nothing is cut");
    }

    #[test]
    fn what_an_event_carries_is_shown_visibly_under_tandems_colours() {
        let style = Style { color: true };
        // A diff row that erases itself and writes another in its place.
        let edited = "Successfully edited a.py\n@@ -1 +1 @@\n   1 - x = 1\n   1 + x = 2\x1b[2K\r   1 + x = 1";
        let rows = shown(diff_lines(edited, "", &style, 12));
        assert_eq!(rows[3], "    \x1b[32m   1 + x = 2\\x1b[2K\\r   1 + x = 1\x1b[0m");
        let question = paint_rows("Allow run_shell: rm victim.txt '\x1b[2K\rls -la'?\n   3 + \u{202e}evil", &style);
        assert_eq!(question.as_str(), "Allow run_shell: rm victim.txt '\\x1b[2K\\rls -la'?\n\x1b[32m   3 + \\u{202e}evil\x1b[0m");
        let refused = shown(error_lines("denied: rm x\u{9b}2K", "", &PLAIN));
        assert_eq!(refused[0], "  ✗ denied: rm x\\u{9b}2K");
    }

    #[test]
    fn the_spinner_names_the_tool_and_its_time_once_it_is_long() {
        assert_eq!(spinner_line("⠋", "run_shell cargo test", Duration::from_millis(500)).as_str(), "⠋ run_shell cargo test");
        assert_eq!(spinner_line("⠋", "run_shell cargo test", Duration::from_secs(12)).as_str(), "⠋ run_shell cargo test · 12s");
        assert_eq!(spinner_line("⠋", &"y".repeat(80), Duration::ZERO).as_str().chars().count(), 62, "cut to fit a narrow terminal");
        assert_eq!(spinner_line("⠋", "run_shell rm x\x1b]52;c;eA==\x07", Duration::ZERO).as_str(), "⠋ run_shell rm x\\x1b]52;c;eA==\\x07");
    }
}
