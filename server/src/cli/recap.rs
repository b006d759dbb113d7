//! What a resumed conversation said before, at the terminal: `tandem chat
//! --resume ID` / `--continue` and `/resume ID` print the thread's last
//! runs before the next message, so the user sees what they are
//! continuing. Each run is its prompt, its tool calls one a line (a failed
//! one marked), the model's reply (markdown rendered on a colour
//! terminal, long replies cut) and how it ended, and whether its changes
//! were undone since (by any front end or process: the run's checkpoint
//! says so). Built from the thread's transcript, the events an editor's
//! transcript view replays.

use serde_json::Value;

use tandem::checkpoint::Checkpoints;
use tandem::host::ThreadStore;

use super::terminal::Shown;

/// The most recent runs shown; older ones are counted.
pub const RUNS_SHOWN: usize = 5;

/// A reply's lines shown; the rest are counted.
pub const REPLY_LINES: usize = 20;

/// The recap of thread `id` in `store`, or why there is none.
pub fn of_thread(store: &ThreadStore, id: &str, colour: bool) -> Shown {
    match store.transcript(id) {
        Ok(mut transcript) => {
            // Only the checkpoints' manifests are read: no workspace root is needed.
            Checkpoints::beside(store, &[]).mark_transcript(&mut transcript.events);
            recap(transcript.events.iter(), transcript.omitted > 0, colour)
        }
        Err(err) => Shown::from(format!("(cannot show the earlier conversation: {err})")),
    }
}

/// One run's parts, gathered from its events.
#[derive(Default)]
struct Run {
    prompt: String,
    calls: Vec<(String, String)>,
    failed: Vec<String>,
    reply: String,
    status: Option<String>,
    /// Its changes were undone since (its `edits` event says so).
    undone: bool,
}

/// The recap of a transcript's events; `cut`: older events were left out
/// of it. Everything in it is the thread's content, shown visibly.
pub fn recap<'a>(events: impl Iterator<Item = &'a Value>, cut: bool, colour: bool) -> Shown {
    let mut runs: Vec<Run> = Vec::new();
    for event in events {
        let text = || event["text"].as_str().unwrap_or_default().to_string();
        match event["type"].as_str().unwrap_or_default() {
            "prompt" => runs.push(Run { prompt: text(), ..Run::default() }),
            // Events before the first prompt kept (the transcript's start was cut).
            _ if runs.is_empty() => {}
            "tool_call" => {
                let name = event["name"].as_str().unwrap_or("tool").to_string();
                let id = event["id"].as_str().unwrap_or_default().to_string();
                if let Some(run) = runs.last_mut() {
                    run.calls.push((id, call_line(&name, &event["input"])));
                }
            }
            "tool_result" if event["is_error"] == true => {
                if let (Some(run), Some(id)) = (runs.last_mut(), event["id"].as_str()) {
                    run.failed.push(id.to_string());
                }
            }
            "text" => {
                if let Some(run) = runs.last_mut() {
                    // The reply is the run's last text: what it ended with.
                    run.reply = text();
                }
            }
            "end" => {
                if let Some(run) = runs.last_mut() {
                    let ended = text();
                    if !ended.trim().is_empty() {
                        run.reply = ended;
                    }
                    run.status = event["status"].as_str().map(String::from);
                }
            }
            "edits" if event["undone"] == true => {
                if let Some(run) = runs.last_mut() {
                    run.undone = true;
                }
            }
            _ => {}
        }
    }
    let older = runs.len().saturating_sub(RUNS_SHOWN);
    let paint = |code: &str, text: &str| if colour { Shown::styled(code, text) } else { Shown::from(text) };
    let count = match (older, cut) {
        (0, false) => String::new(),
        (0, true) => " (older ones not shown)".to_string(),
        (n, _) => format!(" (the last {RUNS_SHOWN}; {n}{} older not shown)", if cut { "+" } else { "" }),
    };
    let mut out = vec![paint("2", &format!("── earlier in this conversation{count} ──"))];
    for run in runs.iter().skip(older) {
        out.push(Shown::new());
        out.push(paint("1", &format!("› {}", run.prompt.trim())));
        for (id, line) in &run.calls {
            let mark = if run.failed.contains(id) { paint("31", " ✗") } else { Shown::new() };
            out.push(paint("2", &format!("  · {line}")) + mark);
        }
        let reply = reply_lines(&run.reply, colour);
        if !reply.is_empty() {
            out.push(reply);
        }
        if let Some(status) = &run.status {
            let colour_code = if status == "completed" { "2" } else { "33" };
            out.push(paint(colour_code, &format!("── {status} ──")));
        }
        if run.undone {
            out.push(paint("33", "  ↶ its changes were undone since (/redo puts them back)"));
        }
    }
    out.push(Shown::new());
    out.push(paint("2", "── your next message continues it ──"));
    Shown::join(out, "\n")
}

/// A tool call in one line: its name and its main argument.
fn call_line(name: &str, input: &Value) -> String {
    let main = ["file_path", "path", "command", "pattern", "url", "query", "description"]
        .iter()
        .find_map(|key| input[*key].as_str())
        .map(|value| value.lines().next().unwrap_or_default().trim().to_string());
    match main {
        Some(value) if value.chars().count() > 80 => format!("{name} {}…", value.chars().take(80).collect::<String>()),
        Some(value) => format!("{name} {value}"),
        None => name.to_string(),
    }
}

/// The reply, cut after [`REPLY_LINES`] lines, rendered as markdown on a
/// colour terminal.
fn reply_lines(reply: &str, colour: bool) -> Shown {
    let lines: Vec<&str> = reply.trim_end().lines().collect();
    if lines.is_empty() {
        return Shown::new();
    }
    let shown = lines[..lines.len().min(REPLY_LINES)].join("\n");
    let mut out = if colour {
        let mut markdown = super::markdown::Markdown::new();
        (markdown.show(&format!("{shown}\n")) + markdown.show_held()).trim_end()
    } else {
        Shown::prose(&shown)
    };
    if lines.len() > REPLY_LINES {
        out.push(format!("\n… ({} more lines)", lines.len() - REPLY_LINES));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(prompt: &str, reply: &str) -> Vec<Value> {
        vec![
            json!({"type": "prompt", "text": prompt}),
            json!({"type": "text", "text": "Looking."}),
            json!({"type": "tool_call", "id": "t1", "name": "read_file", "input": {"file_path": "src/a.rs"}}),
            json!({"type": "tool_result", "id": "t1", "is_error": false, "content": "fn a() {}"}),
            json!({"type": "tool_call", "id": "t2", "name": "run_shell", "input": {"command": "cargo test\n--quiet"}}),
            json!({"type": "tool_result", "id": "t2", "is_error": true, "content": "failed"}),
            json!({"type": "text", "text": reply}),
            json!({"type": "end", "status": "completed", "text": reply}),
        ]
    }

    #[test]
    fn a_run_is_its_prompt_its_calls_its_reply_and_how_it_ended() {
        let events = run("fix the test", "Fixed `a`.");
        expect_test::expect![[r#"
            ── earlier in this conversation ──

            › fix the test
              · read_file src/a.rs
              · run_shell cargo test ✗
            Fixed `a`.
            ── completed ──

            ── your next message continues it ──"#]]
        .assert_eq(recap(events.iter(), false, false).as_str());
    }

    #[test]
    fn only_the_last_runs_are_shown_and_long_replies_are_cut() {
        let long: String = (1..=30).map(|n| format!("line {n}\n")).collect();
        let mut events: Vec<Value> = Vec::new();
        for n in 1..=7 {
            events.extend(run(&format!("question {n}"), if n == 7 { &long } else { "ok" }));
        }
        let shown = recap(events.iter(), false, false).as_str().to_string();
        assert!(shown.starts_with("── earlier in this conversation (the last 5; 2 older not shown) ──"), "{shown}");
        assert!(!shown.contains("question 2\n") && shown.contains("› question 3") && shown.contains("› question 7"), "{shown}");
        assert!(shown.contains("line 20\n… (10 more lines)") && !shown.contains("line 21"), "{shown}");
        // A cancelled run's end without text keeps the last text it said.
        let events = [json!({"type": "prompt", "text": "go"}), json!({"type": "text", "text": "Halfway."}), json!({"type": "end", "status": "cancelled", "text": ""})];
        assert!(recap(events.iter(), true, false).as_str().contains("Halfway.\n── cancelled ──"));
    }

    /// Issue 53: a run undone since (its `edits` event says so, from the
    /// run's checkpoint) is shown undone, not as the changes in place.
    #[test]
    fn a_run_undone_since_is_shown_undone() {
        let mut events = run("rename", "Renamed.");
        events.push(json!({"type": "edits", "edits": [{"uri": "file:///w/a.rs", "status": "applied"}], "checkpoint": "c1", "undone": true}));
        events.extend(run("again", "Done."));
        events.push(json!({"type": "edits", "edits": [{"uri": "file:///w/a.rs", "status": "applied"}], "checkpoint": "c2", "undone": false}));
        let shown = recap(events.iter(), false, false).as_str().to_string();
        assert!(shown.contains("Renamed.\n── completed ──\n  ↶ its changes were undone since (/redo puts them back)\n\n› again"), "{shown}");
        assert_eq!(shown.matches("undone since").count(), 1, "{shown}");
    }

    #[test]
    fn colour_renders_the_reply_as_markdown() {
        let events = run("q", "# Done\n- one");
        let shown = recap(events.iter(), false, true).as_str().to_string();
        assert!(!shown.contains("# Done") && shown.contains("Done") && shown.contains('\x1b'), "{shown:?}");
    }
}
