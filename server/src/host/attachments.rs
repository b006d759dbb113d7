//! Files the user attached to a prompt (`@path` in the Neovim chat, `@file`
//! in the VS Code panel): their text goes to the model as context, as the
//! editor has it (unsaved changes included), numbered as `read_file`
//! numbers it, and bounded. An attachment passes the same permission gate
//! as a `read_file` call: a read-deny rule (`.env`, keys) keeps it out, and
//! the context says so. The model still reads a file before editing it.

use std::path::PathBuf;

use crate::tools::support::text::{digits, numbered_line};
use crate::tools::{PermissionDecision, PermissionRequest, PreHook, ToolKind};
use crate::workspace::Workspace;

/// Lines of one attachment shown before the rest is left to `read_file`.
const MAX_LINES: usize = 2_000;
/// Characters of all attachments together.
const MAX_CHARS: usize = 200_000;
/// Attachments taken from one prompt.
const MAX_FILES: usize = 20;

/// One attached file: its path and, for a part of it, the lines (1-based,
/// inclusive).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    pub path: PathBuf,
    pub lines: Option<(usize, usize)>,
}

/// The attached images (`@shot.png` in the Neovim chat), taken out of
/// `attachments`: each file whose first bytes say PNG, JPEG, GIF or WebP
/// and that the gate lets `read_file` read goes to the model as an image
/// (a denied one stays, for [`context`] to say why it was not attached).
/// `Err`: the sentence saying why an attached image cannot be sent.
pub async fn take_images(
    workspace: &Workspace,
    gate: &dyn crate::tools::PermissionGate,
    attachments: &mut Vec<Attachment>,
) -> Result<Vec<crate::model::Image>, String> {
    let mut images = Vec::new();
    let mut kept = Vec::with_capacity(attachments.len());
    for attachment in attachments.drain(..) {
        let display = workspace.display_path(&attachment.path);
        let image = match crate::model::image::read_file(&attachment.path, &display)? {
            Some(image) if !matches!(gate.decide(&read_request(&attachment, &display)).await, PermissionDecision::Deny(_) | PermissionDecision::Declined(_)) => image,
            _ => {
                kept.push(attachment);
                continue;
            }
        };
        images.push(image);
    }
    *attachments = kept;
    Ok(images)
}

/// The gate's question for reading an attachment, as `read_file` asks it.
fn read_request(attachment: &Attachment, display: &str) -> PermissionRequest {
    PermissionRequest {
        tool: "read_file".into(),
        kind: ToolKind::Read { paths: vec![attachment.path.clone()] },
        read_only: true,
        summary: display.to_string(),
        preview: None,
        input: serde_json::json!({"file_path": attachment.path}),
        accept_edits: false,
        run: None,
        grants: Default::default(),
        hook: PreHook::None,
        questions: None,
    }
}

/// The context the attachments give the model; `None` for none.
pub async fn context(workspace: &Workspace, gate: &dyn crate::tools::PermissionGate, attachments: &[Attachment]) -> Option<String> {
    if attachments.is_empty() {
        return None;
    }
    let mut out = String::from(
        "The user attached these files to the message: their text as the editor has it (unsaved changes included), numbered as read_file numbers it. Read a file with read_file before editing it.\n",
    );
    let mut budget = MAX_CHARS;
    for (index, attachment) in attachments.iter().enumerate() {
        let display = workspace.display_path(&attachment.path);
        if index == MAX_FILES {
            out.push_str(&format!("({} more attachments left out: at most {MAX_FILES} per message.)\n", attachments.len() - MAX_FILES));
            break;
        }
        if let PermissionDecision::Deny(reason) | PermissionDecision::Declined(reason) = gate.decide(&read_request(attachment, &display)).await {
            out.push_str(&format!("<attached path=\"{display}\">\n(not attached: {reason})\n</attached>\n"));
            continue;
        }
        let text = match workspace.read(&attachment.path) {
            Ok(file) => file.text,
            Err(err) => {
                out.push_str(&format!("<attached path=\"{display}\">\n(not attached: {})\n</attached>\n", err.message(&display)));
                continue;
            }
        };
        let all: Vec<&str> = text.lines().collect();
        // Lines past the end are not there: a range is clamped to the file.
        let end = all.len().max(1);
        let (first, last) = match attachment.lines {
            Some((first, last)) => {
                let first = first.clamp(1, end);
                (first, last.clamp(first, end))
            }
            None => (1, end),
        };
        let shown_last = last.min(first + MAX_LINES - 1);
        let width = digits(shown_last).max(4);
        let mut body = String::new();
        for (offset, line) in all.iter().skip(first - 1).take(shown_last + 1 - first).enumerate() {
            body.push_str(&numbered_line(first + offset, width, line.strip_suffix('\r').unwrap_or(line)));
            body.push('\n');
        }
        let cut_by_budget = body.len() > budget;
        if cut_by_budget {
            let end = body.char_indices().map(|(i, _)| i).take_while(|&i| i <= budget).last().unwrap_or(0);
            let end = body[..end].rfind('\n').map_or(0, |i| i + 1);
            body.truncate(end);
        }
        budget -= body.len();
        let range = if attachment.lines.is_some() { format!(" lines=\"{first}-{last}\"") } else { String::new() };
        out.push_str(&format!("<attached path=\"{display}\"{range}>\n{body}"));
        if cut_by_budget || shown_last < last {
            out.push_str(&format!("(cut here: read_file shows the rest, from line {})\n", first + body.lines().count()));
        }
        out.push_str("</attached>\n");
    }
    Some(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::permissions::{Gate, NoProjectRules, PermissionRules, Policy};
    use crate::tools::permission_mode::PermissionMode;
    use std::sync::Arc;

    fn gate(root: &std::path::Path, deny: &[&str]) -> Gate<Arc<dyn crate::permissions::Prompter>> {
        let deny = deny.iter().map(|rule| (crate::scope::Scope::Editor, rule.to_string())).collect();
        let rules = PermissionRules { deny, ..PermissionRules::default() };
        Gate::new(Policy::new(PermissionMode::Default, &rules, &[root.to_path_buf()]), None, Arc::new(NoProjectRules))
    }

    #[tokio::test]
    async fn attached_files_are_numbered_bounded_and_denied_ones_stay_out() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("a.rs"), "fn main() {\n    run();\n}\n").unwrap();
        std::fs::write(root.join(".env"), "KEY=secret\n").unwrap();
        let long: String = (1..=3000).map(|i| format!("line {i}\n")).collect();
        std::fs::write(root.join("long.txt"), long).unwrap();
        let workspace = Workspace::with_roots(vec![root.clone()], None).unwrap();
        let gate = gate(&root, &["read_file(./.env)"]);
        let attach = |name: &str, lines| Attachment { path: root.join(name), lines };
        let text = context(&workspace, &gate, &[attach("a.rs", None), attach("a.rs", Some((2, 2))), attach(".env", None), attach("gone.rs", None)])
            .await
            .unwrap();
        expect_test::expect![[r#"
            The user attached these files to the message: their text as the editor has it (unsaved changes included), numbered as read_file numbers it. Read a file with read_file before editing it.
            <attached path="a.rs">
               1 | fn main() {
               2 |     run();
               3 | }
            </attached>
            <attached path="a.rs" lines="2-2">
               2 |     run();
            </attached>
            <attached path=".env">
            (not attached: the rule `read_file(./.env)` in permissions.deny (editor settings) forbids this call)
            </attached>
        "#]]
        .assert_eq(&text.lines().take(12).map(|l| format!("{l}\n")).collect::<String>());
        assert!(text.contains("<attached path=\"gone.rs\">\n(not attached: "), "{text}");
        assert!(!text.contains("secret"), "{text}");
        let long = context(&workspace, &gate, &[attach("long.txt", None)]).await.unwrap();
        assert!(long.contains("2000 | line 2000\n(cut here: read_file shows the rest, from line 2001)"), "{}", &long[long.len() - 300..]);
        assert!(!long.contains("line 2001\n"));
        assert_eq!(context(&workspace, &gate, &[]).await, None);
        // A range past the end (or backwards) is clamped to the file.
        let past = context(&workspace, &gate, &[attach("a.rs", Some((9, 12))), attach("a.rs", Some((3, 1)))]).await.unwrap();
        assert!(past.contains("<attached path=\"a.rs\" lines=\"3-3\">\n   3 | }\n</attached>"), "{past}");
        std::fs::write(root.join("empty.txt"), "").unwrap();
        let empty = context(&workspace, &gate, &[attach("empty.txt", Some((5, 6)))]).await.unwrap();
        assert!(empty.contains("<attached path=\"empty.txt\" lines=\"1-1\">\n</attached>"), "{empty}");
    }
}
