//! The system prompt. Its text lives in `prompt.md` beside this file, so it
//! reads as a document; this file fills in the environment: the workspace
//! root, the OS, the date, whether the run is in an editor, and the names of
//! deferred tools the model can ask for.

const TEMPLATE: &str = include_str!("prompt.md");

/// What the system prompt says about where the agent runs.
#[derive(Debug, Clone)]
pub struct PromptEnv {
    pub root: String,
    pub os: String,
    /// `YYYY-MM-DD`.
    pub date: String,
    pub in_editor: bool,
    pub deferred_tools: Vec<String>,
    /// Sections appended after the template, in order: project
    /// instructions, available skills, … (empty ones are skipped).
    pub sections: Vec<String>,
}

impl PromptEnv {
    /// The current machine and date.
    pub fn current(root: &std::path::Path, in_editor: bool, deferred_tools: Vec<String>) -> Self {
        PromptEnv {
            root: root.display().to_string(),
            os: format!("{} ({})", std::env::consts::OS, std::env::consts::ARCH),
            date: chrono::Local::now().format("%Y-%m-%d").to_string(),
            in_editor,
            deferred_tools,
            sections: Vec::new(),
        }
    }
}

/// The one system-prompt line naming the deferred tools.
pub fn deferred_tools_line(names: &[String]) -> String {
    format!(
        "The following deferred tools are available via tool_search: {}. Use tool_search to fetch their full schemas when needed.",
        names.join(", ")
    )
}

pub fn system_prompt(env: &PromptEnv) -> String {
    let (place, editor) = if env.in_editor {
        (
            " inside their editor",
            "Running inside the user's editor: your edits to open files appear in their buffers for review, and the user may be typing in the same files.",
        )
    } else {
        ("", "Running headless from a terminal: edits are written to disk.")
    };
    let deferred = if env.deferred_tools.is_empty() {
        String::new()
    } else {
        format!("\n{}\n", deferred_tools_line(&env.deferred_tools))
    };
    let mut prompt = TEMPLATE
        .replace("{{where}}", place)
        .replace("{{root}}", &env.root)
        .replace("{{os}}", &env.os)
        .replace("{{date}}", &env.date)
        .replace("{{editor}}", editor)
        .replace("{{deferred}}", &deferred);
    for section in env.sections.iter().filter(|s| !s.trim().is_empty()) {
        prompt.push('\n');
        prompt.push_str(section.trim_end());
        prompt.push('\n');
    }
    prompt
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_every_placeholder() {
        let env = PromptEnv {
            root: "/work/app".into(),
            os: "linux (x86_64)".into(),
            date: "2026-01-02".into(),
            in_editor: true,
            deferred_tools: vec!["web_fetch".into(), "skill".into()],
            sections: vec!["# Project instructions\nUse tabs.".into(), String::new()],
        };
        let prompt = system_prompt(&env);
        assert!(!prompt.contains("{{"), "{prompt}");
        assert!(prompt.ends_with("\n# Project instructions\nUse tabs.\n"), "{prompt}");
        for needle in ["/work/app", "linux (x86_64)", "2026-01-02", "inside their editor", "web_fetch, skill", "grep_search instead of"] {
            assert!(prompt.contains(needle), "{needle} missing");
        }
        let headless = system_prompt(&PromptEnv { in_editor: false, deferred_tools: vec![], ..env });
        assert!(headless.contains("headless") && !headless.contains("deferred tools"));
        assert!(prompt.contains("\nThe following deferred tools are available via tool_search: web_fetch, skill. Use tool_search to fetch their full schemas when needed.\n"));
    }
}
