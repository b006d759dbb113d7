//! The plan review on a terminal, for `exit_plan_mode` in `tandem ask`:
//! the plan goes to stderr, then a prompt reads the answer (and, to keep
//! planning, the feedback) from stdin. Used only when stdin and stderr are
//! a terminal and the output is not `--json`.

use std::io::BufRead;
use std::path::Path;

use async_trait::async_trait;
use tandem::tools::plan_mode::{PlanAnswer, PlanReview};

use super::terminal::{self, Shown};

pub struct TerminalPlanReview;

#[async_trait]
impl PlanReview for TerminalPlanReview {
    async fn review(&self, plan_file: &Path, plan: &str) -> Option<PlanAnswer> {
        // The plan is the model's text, the file's path the workspace's.
        let shown = Shown::from(format!(
            "\n── Plan ({}) ──\n{}\n──\nExecute this plan?\n  1) Execute\n  2) Execute and accept edits\n  3) Keep planning\n> ",
            plan_file.display(),
            plan.trim_end()
        ));
        super::printed::printed_so_far().await;
        tokio::task::spawn_blocking(move || {
            let _hold = super::printer::hold_spinner();
            ask(&shown)
        })
        .await
        .ok()
        .flatten()
    }
}

fn read_line(prompt: &Shown) -> Option<String> {
    terminal::err(prompt);
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim().to_string()),
    }
}

fn ask(shown: &Shown) -> Option<PlanAnswer> {
    let mut prompt = shown.clone();
    loop {
        let answer = read_line(&prompt)?;
        match answer.to_ascii_lowercase().as_str() {
            "1" | "execute" | "y" | "yes" => return Some(PlanAnswer::Execute),
            "2" | "accept" => return Some(PlanAnswer::ExecuteAcceptEdits),
            "3" | "keep" | "keep planning" | "n" | "no" => {
                let feedback = read_line(&Shown::from("What should change in the plan? ")).unwrap_or_default();
                return Some(PlanAnswer::KeepPlanning { feedback });
            }
            _ => prompt = Shown::from("Answer 1, 2 or 3: "),
        }
    }
}
