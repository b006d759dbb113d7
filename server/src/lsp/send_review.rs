//! "Send review to agent" (`tandem.sendReview`): the user's comments on a
//! run's changes, made after it ended (each on a file's lines), start the
//! next turn of the thread: they become its prompt, one line per comment
//! naming the file and lines, and the run is a `tandem.ask` with the
//! other arguments as given (`threadId`, `wait`, …).

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::protocol::{LineSpan, MAX_COMMENT_CHARS};

/// One comment of `tandem.sendReview`'s `comments`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewNote {
    pub uri: String,
    /// The lines it is about (1-based), when it is about some.
    #[serde(default)]
    pub start_line: Option<usize>,
    #[serde(default)]
    pub end_line: Option<usize>,
    pub comment: String,
}

/// The `tandem.ask` arguments for `args` (a `tandem.sendReview` argument
/// object): its `comments` turned into the prompt, a `prompt` given too put
/// after them. `display` names a comment's file for the model. `Err` says
/// what is wrong with the arguments, for an InvalidParams answer.
pub fn ask_arguments(args: Option<&Value>, display: impl Fn(&str) -> String) -> Result<Value, String> {
    let mut args: Map<String, Value> = match args {
        Some(Value::Object(map)) => map.clone(),
        _ => return Err("tandem.sendReview: expected one argument object with `comments`".into()),
    };
    let notes: Vec<ReviewNote> = match args.remove("comments") {
        Some(list) => serde_json::from_value(list).map_err(|err| format!("tandem.sendReview: `comments` is not a list of {{uri, startLine?, endLine?, comment}}: {err}"))?,
        None => Vec::new(),
    };
    let lines: Vec<String> = notes
        .iter()
        .filter(|n| !n.comment.trim().is_empty())
        .map(|n| {
            let text = n.comment.trim();
            let text = match text.char_indices().nth(MAX_COMMENT_CHARS) {
                Some((cut, _)) => format!("{} [...]", &text[..cut]),
                None => text.to_string(),
            };
            let place = match (n.start_line, n.end_line) {
                (Some(start), end) => format!(" {}", LineSpan { start, end: end.unwrap_or(start).max(start) }),
                (None, _) => String::new(),
            };
            format!("- {}{place}: {text}", display(&n.uri))
        })
        .collect();
    if lines.is_empty() {
        return Err("tandem.sendReview: there are no comments to send (comment on the run's changes first)".into());
    }
    let mut prompt = format!(
        "Review of your changes: the user left these comments on them. Address each one (change the code where a comment asks for it), then say what you did about each.\n{}",
        lines.join("\n")
    );
    if let Some(more) = args.get("prompt").and_then(Value::as_str).map(str::trim).filter(|p| !p.is_empty()) {
        prompt.push_str(&format!("\n\n{more}"));
    }
    args.insert("prompt".into(), Value::String(prompt));
    Ok(Value::Object(args))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_comments_become_the_prompt_and_the_rest_stays() {
        let args = json!({"threadId": "t1", "wait": false, "comments": [
            {"uri": "file:///w/a.rs", "startLine": 3, "endLine": 4, "comment": " use a match "},
            {"uri": "file:///w/b.rs", "startLine": 7, "comment": "rename x"},
            {"uri": "file:///w/c.rs", "comment": "add a test"},
            {"uri": "file:///w/d.rs", "comment": "  "}
        ]});
        let ask = ask_arguments(Some(&args), |uri| uri.trim_start_matches("file:///w/").to_string()).unwrap();
        assert_eq!((&ask["threadId"], &ask["wait"], ask.get("comments")), (&json!("t1"), &json!(false), None));
        expect_test::expect![[r#"
            Review of your changes: the user left these comments on them. Address each one (change the code where a comment asks for it), then say what you did about each.
            - a.rs lines 3-4: use a match
            - b.rs line 7: rename x
            - c.rs: add a test"#]]
        .assert_eq(ask["prompt"].as_str().unwrap());
    }

    #[test]
    fn no_comments_or_bad_ones_are_a_clear_error() {
        let display = |uri: &str| uri.to_string();
        assert!(ask_arguments(Some(&json!({"comments": []})), display).unwrap_err().contains("no comments to send"));
        assert!(ask_arguments(Some(&json!({"comments": [{"uri": "x"}]})), display).unwrap_err().contains("not a list of"));
        assert!(ask_arguments(None, display).unwrap_err().contains("one argument object"));
    }
}
