//! MCP prompts and resources through ACP, against the reference server
//! (`server-everything`) and the TypeScript SDK client: the server's
//! prompts are offered as `available_commands` (`/SERVER:PROMPT`, once
//! the server is ready), and a prompt's `/SERVER:PROMPT ARGS`,
//! `@SERVER:URI` words and resource links to a server's resource reach
//! the model as `tandem ask` sends them; one that cannot be had refuses
//! the prompt and nothing is sent.

use serde_json::{json, Value};

use super::Setup;
use crate::common::mock_model::MockModel;
use crate::common::turns;

const DOC: &str = "demo://resource/static/document/features.md";

#[tokio::test(flavor = "multi_thread")]
async fn mcp_prompts_are_commands_and_prompts_and_resources_reach_the_model() {
    let Some(server) = crate::mcp_content::reference_server() else { return };
    let mock = MockModel::start(vec![turns::text("One."), turns::text("Two."), turns::text("Three.")]).await;
    let setup = Setup::new(vec![]);
    let home = setup.dir.path().join("home/.tandem");
    std::fs::create_dir_all(&home).unwrap();
    let servers = json!({"mcpServers": {"everything": {"command": "node", "args": [server.display().to_string(), "stdio"]}}});
    std::fs::write(home.join("mcp.json"), servers.to_string()).unwrap();
    let scenario = json!({
        "wait_command": "everything:args-prompt",
        "prompt_blocks": [
            [{"type": "text", "text": "/everything:args-prompt Paris state=Texas"}],
            [{"type": "text", "text": "Compare @everything:demo://resource/dynamic/text/7 with this"}, {"type": "resource_link", "name": "features.md", "uri": DOC}],
            [{"type": "text", "text": "/everything:args-prompt"}],
            [{"type": "text", "text": "Read @everything:demo://no/such/thing"}],
        ],
    });
    let url = mock.url.clone();
    let run = move || {
        let env = [("TANDEM_PROVIDER", "anthropic"), ("ANTHROPIC_BASE_URL", url.as_str()), ("ANTHROPIC_API_KEY", "test-key")];
        setup.sdk_report(scenario, &env)
    };
    let Some(report) = tokio::task::spawn_blocking(run).await.unwrap() else { return };
    // The prompts are offered with their arguments (optional ones in brackets).
    let offered: Vec<&Value> = report["first"]["updates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["sessionUpdate"] == "available_commands_update")
        .flat_map(|u| u["availableCommands"].as_array().unwrap())
        .collect();
    let args_prompt = offered.iter().find(|c| c["name"] == "everything:args-prompt").unwrap_or_else(|| panic!("{offered:?}"));
    assert_eq!(args_prompt["input"]["hint"], "city [state]", "{args_prompt}");
    assert!(offered.iter().any(|c| c["name"] == "everything:simple-prompt"), "{offered:?}");
    // Two prompts ran; the other two were refused, each saying why.
    assert_eq!(report["first"]["stop_reasons"], json!(["end_turn", "end_turn"]), "{report}");
    let errors = report["first"]["errors"].to_string();
    assert!(errors.contains("/everything:args-prompt: the prompt args-prompt needs: city"), "{errors}");
    assert!(errors.contains("@everything:demo://no/such/thing: the MCP server everything answered:"), "{errors}");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "nothing is sent for a refused prompt");
    let first = requests[0].body.to_string();
    assert!(first.contains("What's weather in Paris, Texas?"), "{first}");
    assert!(!first.contains("/everything:args-prompt"), "{first}");
    let second = requests[1].body["messages"].to_string();
    assert!(second.contains("Resource 7: This is a plaintext resource"), "{second}");
    assert!(second.contains(&format!("uri=\\\"{DOC}\\\"")), "{second}");
    assert!(second.contains("Static Documents"), "the linked document's text: {second}");
}

/// An MCP server's question (elicitation) in an ACP session is the
/// client's form: its fields typed as the server asked, the server named;
/// (the call allowed first, as any MCP tool is) the user's answer reaches the server, and a form dismissed fails the
/// tool cleanly with the server's own words.
#[test]
fn an_mcp_servers_question_is_a_form_the_acp_client_answers() {
    use crate::common::script::{done, turn};
    let turns = || {
        vec![
            turn(vec![json!({"name": "tool_search", "input": {"query": "select:mcp__asker__ask"}})]),
            turn(vec![json!({"name": "mcp__asker__ask", "input": {}})]),
            done(),
        ]
    };
    let setup = Setup::new(turns());
    let home = setup.dir.path().join("home/.tandem");
    std::fs::create_dir_all(&home).unwrap();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/test_server.py");
    let servers = json!({"mcpServers": {"asker": {"command": "python3", "args": [script]}}});
    std::fs::write(home.join("mcp.json"), servers.to_string()).unwrap();
    let ada = json!({"action": "accept", "content": {"name": "Ada"}});
    let Some(report) = setup.editor(json!({"forms": true, "form_answers": [ada], "answers": ["allow_once"], "prompts": ["greet me"]})) else { return };
    assert_eq!(report["stop_reasons"], json!(["end_turn"]), "{report}");
    let result = |report: &Value| {
        let call = super::updates(report, "tool_call").last().unwrap()["toolCallId"].as_str().unwrap().to_string();
        super::result_text(report, &call)
    };
    let forms = report["forms"].as_array().unwrap();
    assert_eq!(forms.len(), 1, "{}", result(&report));
    assert_eq!(forms[0]["message"], "The MCP server asker asks: What is your name?");
    let schema = &forms[0]["mode"]["requestedSchema"];
    assert_eq!(schema["properties"]["name"], json!({"type": "string", "title": "Your name"}), "{schema}");
    assert_eq!(schema["required"], json!(["name"]), "{schema}");
    assert!(result(&report).contains("hello Ada"), "{}", result(&report));

    // Dismissed (the client's default answer here is "cancel").
    setup.script(turns());
    let Some(report) = setup.editor(json!({"forms": true, "answers": ["allow_once"], "prompts": ["greet me"]})) else { return };
    assert_eq!(report["forms"].as_array().unwrap().len(), 1, "{}", result(&report));
    assert!(result(&report).contains("the user did not answer (cancel)"), "{}", result(&report));
}
