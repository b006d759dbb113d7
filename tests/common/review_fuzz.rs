//! The check of a typing fuzzer's trials in a real editor (Neovim's
//! `tests/nvim/review_fuzz_scenario.lua`, VS Code's
//! `tests/vscode/review_fuzz.js`): in each trial the agent edits one line,
//! or one word on two lines (two hunks), the user types at random while the
//! editor's review is open and then answers it. Each trial reports the
//! agent's hunks (`{old, new}` line texts), each review's answer and the
//! text before and after the user's typing in it, the text the user left
//! (`user_text`), the buffer after the run (`after`), the `tandem.ask`
//! answer and the run's tool results.
//!
//! What must hold: the buffer is the user's text with a subset of the
//! agent's hunks applied, each exactly where its line is (nothing else:
//! no corrupted buffer); the status the answer and the edit's tool result
//! report is the one that subset means; and it is the one the user's last
//! answer asked for (an edit is never hidden: typed around, it was offered
//! again).

use serde_json::Value;

/// One trial's problems (empty: it passed).
pub fn check_trial(trial: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let hunks: Vec<(String, String)> = trial["hunks"]
        .as_array()
        .map(|hunks| hunks.iter().map(|h| (h["old"].as_str().unwrap_or_default().to_string(), h["new"].as_str().unwrap_or_default().to_string())).collect())
        .unwrap_or_default();
    let user = trial["user_text"].as_str().unwrap_or_default();
    let after = trial["after"].as_str().unwrap_or_default();
    // The subsets of hunks whose text is the buffer now.
    let mut landed = None;
    for mask in 0..(1usize << hunks.len()) {
        if apply(user, &hunks, mask).as_deref() == Some(after) {
            landed = Some(mask.count_ones() as usize);
            break;
        }
    }
    let Some(landed) = landed else {
        problems.push(format!("corrupted: the buffer is neither the user's text nor it with some of the agent's hunks:\nuser text:\n{user}\nbuffer:\n{after}"));
        return problems;
    };
    let statuses: Vec<&str> = trial["result"]["edits"].as_array().map(|e| e.iter().filter_map(|e| e["status"].as_str()).collect()).unwrap_or_default();
    let [status] = statuses[..] else {
        problems.push(format!("one edit, {} statuses in the answer: {statuses:?} ({})", statuses.len(), trial["result"]));
        return problems;
    };
    let means = if landed == hunks.len() {
        vec!["applied"]
    } else if landed > 0 {
        vec!["partial"]
    } else {
        vec!["rejected", "superseded", "not_applied"]
    };
    if !means.contains(&status) {
        problems.push(format!("the answer says {status}, the buffer holds {landed} of {} hunks", hunks.len()));
    }
    // The edit's tool result: its status and whether it is an error.
    let edit_result = trial["results"].as_array().and_then(|r| r.get(1));
    match edit_result {
        Some(result) => {
            // VS Code's trials read the model's request, which has no edit status.
            if !result["edit"].is_null() && result["edit"]["status"].as_str() != Some(status) {
                problems.push(format!("the tool result's edit says {}, the answer {status}", result["edit"]["status"]));
            }
            if result["is_error"].as_bool() != Some(status != "applied") {
                problems.push(format!("the tool result's is_error is {} for {status}: {}", result["is_error"], result["content"]));
            }
        }
        None => problems.push(format!("no tool result for the edit: {}", trial["results"])),
    }
    // What the user's last answer asked for.
    if let Some(last) = trial["reviews"].as_array().and_then(|r| r.last()) {
        let answer = last["answer"].as_str().unwrap_or_default();
        let typed = last["before"] != trial["user_text"];
        let applies = |c: char| c == 'A' || c == 'a';
        // VS Code closes the preview the same way for Discard and for an
        // Apply it refused because the document changed: after typing, both
        // are offered again (`discard_after_typing_offers_again`).
        let discard_offers_again = trial["discard_after_typing_offers_again"] == true;
        let wanted = if answer.chars().all(|c| !applies(c)) && !(typed && discard_offers_again) {
            "rejected"
        } else if typed {
            "superseded"
        } else if answer == "A" || answer.chars().all(applies) {
            "applied"
        } else {
            "partial"
        };
        if status != wanted {
            problems.push(format!("the last review was answered {answer:?} (typing in it: {typed}), so the edit should be {wanted}, not {status}"));
        }
    } else {
        problems.push("no review was opened".into());
    }
    problems
}

/// `text` with the hunks in `mask` applied: each hunk's old line must be
/// in the text exactly once (else `None`).
fn apply(text: &str, hunks: &[(String, String)], mask: usize) -> Option<String> {
    let mut out = text.to_string();
    for (index, (old, new)) in hunks.iter().enumerate() {
        if mask & (1 << index) == 0 {
            continue;
        }
        let lines: Vec<&str> = out.split('\n').collect();
        let at: Vec<usize> = lines.iter().enumerate().filter(|(_, l)| **l == old).map(|(i, _)| i).collect();
        let [line] = at[..] else { return None };
        let mut lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        lines[line] = new.clone();
        out = lines.join("\n");
    }
    Some(out)
}

/// All trials' problems, each with its trial's number and what the user
/// did, and a summary of how the trials went (so a fuzzer that never
/// exercises a path is seen).
pub fn check_trials(trials: &[Value]) -> (Vec<String>, std::collections::BTreeMap<String, usize>) {
    let mut failures = Vec::new();
    let mut counts = std::collections::BTreeMap::new();
    for trial in trials {
        let problems = check_trial(trial);
        let typed = trial["reviews"].as_array().is_some_and(|r| r.iter().any(|r| r["typed"].as_array().is_some_and(|t| !t.is_empty())));
        let status = trial["result"]["edits"][0]["status"].as_str().unwrap_or("none").to_string();
        *counts.entry(format!("{status}{}", if typed { " after typing" } else { "" })).or_default() += 1;
        if !problems.is_empty() {
            failures.push(format!("trial {}: {}\n  reviews: {}", trial["n"], problems.join("\n  "), trial["reviews"]));
        }
    }
    (failures, counts)
}

/// The seed of a fuzzer run: `TANDEM_FUZZ_SEED`, else one from the clock
/// (printed with a failure, so it can be run again).
pub fn seed() -> u64 {
    std::env::var("TANDEM_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() % 1_000_000).unwrap_or(1)
    })
}
