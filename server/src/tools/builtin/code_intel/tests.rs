#![allow(clippy::unwrap_used)]
use super::answers::render_answers;
use super::diagnostics::render_diagnostics;
use super::*;
use crate::tools::ports::code_intel::Position;
use serde_json::{json, Value};

#[test]
fn positions_are_resolved_from_a_name_on_the_line() {
    let text = "fn main() {\n    let émoji = \"😀\"; parse(émoji, parse_all);\n}\r\nlast";
    // UTF-16: the emoji is two units, so "parse" after it is further right than its char index.
    assert_eq!(resolve_position(text, "a.rs", Some(2), Some("parse"), None).unwrap(), Position { line: 1, character: 22 });
    assert_eq!(resolve_position(text, "a.rs", Some(2), Some("parse_all"), None).unwrap(), Position { line: 1, character: 35 });
    // The occurrence nearest the column.
    assert_eq!(resolve_position(text, "a.rs", Some(2), Some("émoji"), Some(30)).unwrap(), Position { line: 1, character: 28 });
    assert_eq!(resolve_position(text, "a.rs", Some(4), Some("last"), None).unwrap(), Position { line: 3, character: 0 });
    assert_eq!(resolve_position(text, "a.rs", Some(1), None, Some(4)).unwrap(), Position { line: 0, character: 3 });
    expect_test::expect![[r#"Error: "parser" is not on line 2 of a.rs. That line has "let", "émoji", "parse", "parse_all": "let émoji = \"😀\"; parse(émoji, parse_all);". Check the line number (read_file shows them), or use grep_search to find the symbol."#]]
        .assert_eq(&resolve_position(text, "a.rs", Some(2), Some("parser"), None).unwrap_err());
    expect_test::expect!["Error: line 9 is past the end of a.rs, which has 4 lines."]
        .assert_eq(&resolve_position(text, "a.rs", Some(9), Some("x"), None).unwrap_err());
    expect_test::expect!["Error: column 40 is past the end of line 1 of a.rs, which has 11 characters."]
        .assert_eq(&resolve_position(text, "a.rs", Some(1), None, Some(40)).unwrap_err());
    assert!(resolve_position(text, "a.rs", None, Some("main"), None).is_err());
}

fn fixture() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.py"), "def greet(name):\n    return name\n\ngreet('x')\n").unwrap();
    let workspace = Workspace::new(dir.path().canonicalize().unwrap()).unwrap();
    (dir, workspace)
}

fn uri(workspace: &Workspace, name: &str) -> String {
    url::Url::from_file_path(workspace.root().join(name)).unwrap().to_string()
}

// Unix only: its expectations are Linux's: `/` paths, names compared with case (Windows' spellings: platform:: tests and tests/windows/smoke).
#[cfg(unix)]
#[test]
fn locations_of_every_shape_are_listed_with_snippets_and_capped() {
    let (_dir, workspace) = fixture();
    let a = uri(&workspace, "a.py");
    let args = CodeIntelArgs { operation: Operation::References, file_path: Some("a.py".into()), line: Some(1), symbol: Some("greet".into()), column: None, query: None };
    let answers = vec![
        json!([{"uri": a, "range": {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 9}}}]),
        // A second server with the same place, and a LocationLink, and a file outside the workspace.
        json!([{"uri": a, "range": {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 9}}},
               {"targetUri": a, "targetRange": {"start": {"line": 3, "character": 0}, "end": {"line": 3, "character": 5}},
                "targetSelectionRange": {"start": {"line": 3, "character": 0}, "end": {"line": 3, "character": 5}}},
               {"uri": "file:///usr/lib/python3/builtins.pyi", "range": {"start": {"line": 9, "character": 2}, "end": {"line": 9, "character": 3}}}]),
        Value::Null,
    ];
    expect_test::expect![[r#"
        a.py:1:5: def greet(name):
        a.py:4:1: greet('x')
        /usr/lib/python3/builtins.pyi:10:3"#]]
    .assert_eq(&render_answers(&workspace, &args, &answers));
    let many: Vec<Value> = (0..100_000).map(|i| json!({"uri": a, "range": {"start": {"line": i % 4, "character": i / 4}, "end": {"line": 0, "character": 0}}})).collect();
    let rendered = render_answers(&workspace, &args, &[Value::Array(many)]);
    assert_eq!(rendered.lines().count(), MAX_SHOWN_RESULTS + 1);
    assert!(rendered.ends_with("... and 99900 more matches"), "{}", rendered.lines().last().unwrap());
    assert_eq!(render_answers(&workspace, &args, &[json!([])]), "No references found.");
}

#[test]
fn symbols_hover_and_calls_are_flattened() {
    let (_dir, workspace) = fixture();
    let a = uri(&workspace, "a.py");
    let args = |operation| CodeIntelArgs { operation, file_path: Some("a.py".into()), line: Some(1), symbol: Some("greet".into()), column: None, query: None };
    let nested = json!([{"name": "greet", "kind": 12, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}},
        "selectionRange": {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 9}},
        "children": [{"name": "name", "kind": 13, "range": {"start": {"line": 0, "character": 10}, "end": {"line": 0, "character": 14}}}]}]);
    expect_test::expect![[r#"
        a.py:1:5: function greet: def greet(name):
        a.py:1:11: variable name (in greet): def greet(name):"#]]
    .assert_eq(&render_answers(&workspace, &args(Operation::DocumentSymbols), &[nested]));
    let hover = json!({"contents": {"kind": "markdown", "value": "```python\n(function) def greet(name) -> str\n```"}});
    let old_hover = json!({"contents": [{"language": "python", "value": "greet"}, "Says hello."]});
    expect_test::expect![[r#"
        ```python
        (function) def greet(name) -> str
        ```

        ---

        ```python
        greet
        ```

        Says hello."#]]
    .assert_eq(&render_answers(&workspace, &args(Operation::Hover), &[hover, old_hover]));
    let incoming = json!([{"from": {"name": "<module>", "kind": 2, "uri": a, "detail": "a",
        "range": {"start": {"line": 3, "character": 0}, "end": {"line": 3, "character": 10}},
        "selectionRange": {"start": {"line": 3, "character": 0}, "end": {"line": 3, "character": 5}}}, "fromRanges": []}]);
    expect_test::expect!["a.py:4:1: module <module> (in a): greet('x')"].assert_eq(&render_answers(&workspace, &args(Operation::IncomingCalls), &[incoming]));
}

#[test]
fn diagnostics_say_which_are_new_since_the_edit() {
    let (_dir, workspace) = fixture();
    let path = workspace.root().join("a.py");
    let d = |line: u32, severity: u8, message: &str| {
        json!({"range": {"start": {"line": line, "character": 4}, "end": {"line": line, "character": 8}}, "severity": severity,
               "source": "Pyright", "code": "reportUndefinedVariable", "message": message})
    };
    let before = vec![d(1, 1, "\"x\" is not defined"), d(3, 3, "just a note")];
    let after = vec![d(3, 2, "unused"), d(2, 1, "\"x\" is not defined"), d(0, 1, "\"y\" is not defined"), d(3, 4, "hint")];
    expect_test::expect![[r#"
        a.py: 2 errors, 1 warning (2 new)
        a.py:1:5: error [Pyright reportUndefinedVariable] (new): "y" is not defined
        a.py:3:1: error [Pyright reportUndefinedVariable]: "x" is not defined
        a.py:4:5: warning [Pyright reportUndefinedVariable] (new): unused"#]]
    .assert_eq(&render_diagnostics(&workspace, &path, &after, Some(&before), 2));
    expect_test::expect!["No errors or warnings in a.py."].assert_eq(&render_diagnostics(&workspace, &path, &[d(1, 4, "hint")], Some(&before), 2));
    // Without a "before" nothing is marked.
    expect_test::expect![[r#"
        a.py: 1 error, 0 warnings, 1 info or hint
        a.py:1:5: error [Pyright reportUndefinedVariable]: "y" is not defined
        a.py:4:5: hint [Pyright reportUndefinedVariable]: hint"#]]
    .assert_eq(&render_diagnostics(&workspace, &path, &[d(0, 1, "\"y\" is not defined"), d(3, 4, "hint")], None, usize::MAX));
}
