//! Code actions: the agent offered where the user is looking. On a
//! selection, "Tandem: explain this code"; on each diagnostic in range,
//! "Tandem: fix this error". Each is a `tandem.ask` command carrying the
//! prompt, the document and the range (and the diagnostic), with
//! `"wait": false`: editors run code-action commands synchronously (eglot
//! gives up after 10 s and sends no `didChange` while it waits), so the
//! command answers at once and the run reports through its events.

use serde_json::{json, Value};
use tower_lsp_server::ls_types::{CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams, Command, Diagnostic, Range};

use super::commands::ASK_COMMAND;

fn ask_action(title: String, kind: Option<CodeActionKind>, argument: Value, diagnostics: Option<Vec<Diagnostic>>) -> CodeActionOrCommand {
    CodeActionOrCommand::CodeAction(CodeAction {
        title: title.clone(),
        kind,
        diagnostics,
        command: Some(Command { title, command: ASK_COMMAND.to_string(), arguments: Some(vec![argument]) }),
        ..Default::default()
    })
}

fn is_empty(range: &Range) -> bool {
    range.start == range.end
}

pub fn actions(params: &CodeActionParams) -> Vec<CodeActionOrCommand> {
    let uri = params.text_document.uri.as_str();
    let mut actions = Vec::new();
    for diagnostic in params.context.diagnostics.iter().take(10) {
        let first_line = diagnostic.message.lines().next().unwrap_or_default();
        let short: String = first_line.chars().take(60).collect();
        let argument = json!({
            "prompt": format!("Fix this error: {}", diagnostic.message),
            "textDocument": {"uri": uri},
            "range": diagnostic.range,
            "diagnostics": [diagnostic],
            "wait": false,
        });
        actions.push(ask_action(
            format!("Tandem: fix this error ({short})"),
            Some(CodeActionKind::QUICKFIX),
            argument,
            Some(vec![diagnostic.clone()]),
        ));
    }
    if !is_empty(&params.range) {
        let argument = json!({
            "prompt": "Explain this code.",
            "textDocument": {"uri": uri},
            "range": params.range,
            "wait": false,
        });
        actions.push(ask_action("Tandem: explain this code".into(), None, argument, None));
    }
    actions
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn selection_and_diagnostic_actions() {
        let params: CodeActionParams = serde_json::from_value(json!({
            "textDocument": {"uri": "file:///w/src/main.rs"},
            "range": {"start": {"line": 1, "character": 0}, "end": {"line": 3, "character": 0}},
            "context": {"diagnostics": [{
                "range": {"start": {"line": 2, "character": 4}, "end": {"line": 2, "character": 9}},
                "severity": 1, "message": "cannot find value `x` in this scope"
            }]}
        }))
        .unwrap();
        let rendered: Vec<String> = actions(&params)
            .iter()
            .map(|action| serde_json::to_string(action).unwrap())
            .collect();
        expect_test::expect![[r#"
            {"title":"Tandem: fix this error (cannot find value `x` in this scope)","kind":"quickfix","diagnostics":[{"range":{"start":{"line":2,"character":4},"end":{"line":2,"character":9}},"severity":1,"message":"cannot find value `x` in this scope"}],"command":{"title":"Tandem: fix this error (cannot find value `x` in this scope)","command":"tandem.ask","arguments":[{"prompt":"Fix this error: cannot find value `x` in this scope","textDocument":{"uri":"file:///w/src/main.rs"},"range":{"start":{"line":2,"character":4},"end":{"line":2,"character":9}},"diagnostics":[{"range":{"start":{"line":2,"character":4},"end":{"line":2,"character":9}},"severity":1,"message":"cannot find value `x` in this scope"}],"wait":false}]}}
            {"title":"Tandem: explain this code","command":{"title":"Tandem: explain this code","command":"tandem.ask","arguments":[{"prompt":"Explain this code.","textDocument":{"uri":"file:///w/src/main.rs"},"range":{"start":{"line":1,"character":0},"end":{"line":3,"character":0}},"wait":false}]}}"#]].assert_eq(&rendered.join("\n"));
    }
}
