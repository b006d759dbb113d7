//! Loop detection, as Gemini CLI does it: a small local model once asked
//! for the same `read_file` 26 times in a row. The same tool call (name and
//! input) with the same result, or the same reply text, `threshold` times
//! in a row (default 4) earns a nudge in the next tool result; doing it
//! once more stops the run with status `loop`.

use std::hash::{Hash, Hasher};

use serde_json::Value;

pub const DEFAULT_LOOP_THRESHOLD: usize = 4;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoopVerdict {
    Fine,
    /// Append this to the tool result the model reads next.
    Nudge(String),
    /// End the run; the line for the user.
    Stop(String),
}

#[derive(Debug)]
pub struct LoopDetector {
    threshold: usize,
    last_call: Option<u64>,
    call_repeats: usize,
    last_text: Option<u64>,
    text_repeats: usize,
    nudged: bool,
}

fn hash_of(parts: &[&str]) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    parts.hash(&mut hasher);
    hasher.finish()
}

impl LoopDetector {
    pub fn new(threshold: usize) -> Self {
        LoopDetector { threshold: threshold.max(2), last_call: None, call_repeats: 0, last_text: None, text_repeats: 0, nudged: false }
    }

    /// A tool call and its result, in call order.
    pub fn on_tool_result(&mut self, name: &str, input: &Value, result: &str) -> LoopVerdict {
        let key = hash_of(&[name, &input.to_string(), result]);
        if self.last_call == Some(key) {
            self.call_repeats += 1;
        } else {
            self.last_call = Some(key);
            self.call_repeats = 1;
        }
        let n = self.call_repeats;
        self.judge(n, || {
            format!("you have made this exact call {n} times with the same result; change approach or answer")
        }, || format!("Stopped: the model made the same call ({name} {input}) {n} times in a row with the same result."))
    }

    /// A turn's reply text (empty text is ignored).
    pub fn on_text(&mut self, text: &str) -> LoopVerdict {
        let text = text.trim();
        if text.is_empty() {
            return LoopVerdict::Fine;
        }
        let key = hash_of(&[text]);
        if self.last_text == Some(key) {
            self.text_repeats += 1;
        } else {
            self.last_text = Some(key);
            self.text_repeats = 1;
        }
        let n = self.text_repeats;
        self.judge(n, || format!("you have written the same reply {n} times; change approach or answer"), || {
            format!("Stopped: the model wrote the same reply {n} times in a row.")
        })
    }

    fn judge(&mut self, repeats: usize, nudge: impl FnOnce() -> String, stop: impl FnOnce() -> String) -> LoopVerdict {
        if repeats < self.threshold {
            return LoopVerdict::Fine;
        }
        if !self.nudged {
            self.nudged = true;
            return LoopVerdict::Nudge(nudge());
        }
        LoopVerdict::Stop(stop())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nudge_at_the_threshold_then_stop() {
        let mut d = LoopDetector::new(4);
        let input = json!({"file_path": "a.txt"});
        let verdicts: Vec<LoopVerdict> = (0..5).map(|_| d.on_tool_result("read_file", &input, "hello")).collect();
        assert_eq!(verdicts[..3], [LoopVerdict::Fine, LoopVerdict::Fine, LoopVerdict::Fine]);
        assert_eq!(verdicts[3], LoopVerdict::Nudge("you have made this exact call 4 times with the same result; change approach or answer".into()));
        assert!(matches!(&verdicts[4], LoopVerdict::Stop(line) if line.contains("read_file") && line.contains("5 times")));
    }

    #[test]
    fn a_different_result_or_call_resets_the_count() {
        let mut d = LoopDetector::new(3);
        let input = json!({"command": "cargo test"});
        for result in ["fail 1", "fail 2", "fail 3", "fail 4"] {
            assert_eq!(d.on_tool_result("run_shell", &input, result), LoopVerdict::Fine);
        }
        assert_eq!(d.on_text("Let me try again."), LoopVerdict::Fine);
        assert_eq!(d.on_text("Let me try again."), LoopVerdict::Fine);
        assert!(matches!(d.on_text("Let me try again."), LoopVerdict::Nudge(_)));
    }
}
