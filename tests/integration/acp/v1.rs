//! ACP v1 as the protocol's schema has it now (issue 58), checked against
//! the schema itself (`tests/acp/schema`, vendored from the protocol's
//! repository at the tag that matches the pinned crate): every stable
//! agent method is served and no unstable one; what Tandem sends validates
//! against `schema.json` (the Python SDK editor checks each message); the
//! methods and capabilities added to the 2025 core — `session/delete`,
//! `logout`, `additionalDirectories`, message ids, `$/cancel_request`,
//! session titles — driven by the official TypeScript and Python SDKs.

use super::*;

/// The vendored schema's folder.
fn schema_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/acp/schema")
}

fn meta() -> Value {
    serde_json::from_str(&std::fs::read_to_string(schema_dir().join("meta.json")).unwrap()).unwrap()
}

/// Every agent method of the schema's `meta.json` is served (whatever the
/// params, the answer is never "method not found"), and the crate's
/// unstable ones are not: Tandem speaks stable ACP v1 only. The
/// capabilities `initialize` advertises name the methods that are served.
#[test]
fn every_stable_acp_v1_agent_method_is_served_and_no_unstable_one() {
    let meta = meta();
    assert_eq!(meta["version"], 1);
    let setup = Setup::new(vec![done()]);
    let mut raw = Raw::start(&setup);
    let id = raw.request("initialize", json!({"protocolVersion": 1, "clientCapabilities": {}}));
    let init = raw.response(id);
    let capabilities = &init["result"]["agentCapabilities"];
    let session = &capabilities["sessionCapabilities"];
    for advertised in ["list", "resume", "close", "delete", "additionalDirectories"] {
        assert_eq!(session[advertised], json!({}), "sessionCapabilities.{advertised}: {capabilities}");
    }
    assert_eq!(capabilities["auth"]["logout"], json!({}), "{capabilities}");
    assert_eq!((capabilities["loadSession"].as_bool(), capabilities["promptCapabilities"]["image"].as_bool()), (Some(true), Some(true)), "{capabilities}");

    let methods: Vec<String> = meta["agentMethods"].as_object().unwrap().values().map(|m| m.as_str().unwrap().to_string()).collect();
    assert!(methods.len() >= 13, "{methods:?}");
    let mut not_served = Vec::new();
    for method in methods.iter().filter(|m| !["initialize", "session/cancel"].contains(&m.as_str())) {
        // Params no method accepts: an error, but not "method not found".
        let id = raw.request(method, json!({"sessionId": 7}));
        let answer = raw.response(id);
        if answer["error"]["code"] == -32601 {
            not_served.push(method.clone());
        }
    }
    assert_eq!(not_served, Vec::<String>::new(), "stable ACP v1 methods Tandem does not serve");
    for unstable in ["session/fork", "session/archive", "session/set_title", "session/status", "providers/list", "auth/status", "tandem/nonsense"] {
        let id = raw.request(unstable, json!({}));
        assert_eq!(raw.response(id)["error"]["code"], -32601, "{unstable} must not be served");
    }
    drop(raw.child.stdin.take());
    assert!(raw.child.wait().unwrap().success());
}

/// `additionalDirectories` are workspace roots (a file there is read like
/// one in `cwd`); one outside the user's home, the home itself or a
/// protected path is refused with the reason. The agent's text comes in
/// messages with ids (a call between two texts starts a new message), the
/// session's title comes as `session_info_update` after its first prompt,
/// and every message validates against the vendored ACP schema.
#[test]
fn additional_directories_message_ids_and_the_title_through_the_python_sdk() {
    let setup = Setup::new(vec![]);
    let home = setup.dir.path().join("home").canonicalize().unwrap();
    let extra = home.join("notes");
    std::fs::create_dir_all(extra.join(".git")).unwrap();
    std::fs::create_dir_all(home.join(".tandem")).unwrap();
    let outside = setup.dir.path().join("elsewhere");
    std::fs::create_dir_all(&outside).unwrap();
    let note = extra.join("todo.txt");
    std::fs::write(&note, "buy milk\n").unwrap();
    setup.script(vec![json!({"text": "Reading the note.", "tool_calls": [read(note.to_str().unwrap())]}), done()]);
    let scenario = json!({
        "refused_directories": [[outside], [home], [extra.join(".git")], [home.join(".tandem")], ["relative/notes"]],
        "additional_directories": [extra],
        "prompts": ["what is on my list?"],
    });
    let Some(report) = setup.editor(scenario) else { return };
    assert_eq!(report["spec_invalid"], json!([]), "messages that do not match the ACP schema");
    assert!(report["spec_checked"].as_u64().unwrap() > 5, "{}", report["spec_checked"]);
    assert_eq!(report["errors"], json!([]));
    assert_eq!(report["stop_reasons"], json!(["end_turn"]));

    let refused: Vec<String> = report["refused_sessions"].as_array().unwrap().iter().map(|r| r.as_str().unwrap_or("(opened)").to_string()).collect();
    let home_said = format!("only a folder inside your home folder ({}) can be added", home.display());
    assert!(refused[0].contains(&home_said), "{}", refused[0]);
    assert!(refused[1].contains(&home_said), "the home itself: {}", refused[1]);
    assert!(refused[2].contains("it is a protected path (.git: git's"), "{}", refused[2]);
    assert!(refused[3].contains("it is a protected path (.tandem:"), "{}", refused[3]);
    assert!(refused[4].contains("it must be an absolute path"), "{}", refused[4]);

    // The file in the extra root was read, through the client.
    let call = updates(&report, "tool_call")[0]["toolCallId"].as_str().unwrap().to_string();
    let result = result_text(&report, &call);
    assert!(result.contains("buy milk"), "{result}");
    assert!(report["reads"].as_array().unwrap().iter().any(|r| r == note.to_str().unwrap()), "{}", report["reads"]);

    // Two messages, each with its own id.
    let chunks: Vec<(&str, &str)> = updates(&report, "agent_message_chunk")
        .iter()
        .map(|u| (u["messageId"].as_str().unwrap_or("(none)"), u["content"]["text"].as_str().unwrap_or_default()))
        .collect();
    assert_eq!(chunks.iter().map(|c| c.1).collect::<String>(), "Reading the note.Done.", "{chunks:?}");
    let ids: Vec<&str> = chunks.iter().map(|c| c.0).collect();
    assert!(ids.iter().all(|id| id.starts_with("msg-")), "{ids:?}");
    assert_ne!(ids.first(), ids.last(), "text after a call is a new message: {chunks:?}");

    let titles: Vec<&Value> = updates(&report, "session_info_update");
    assert_eq!(titles.len(), 1, "{titles:?}");
    assert_eq!(titles[0]["title"], "what is on my list?");
    assert!(titles[0]["updatedAt"].as_str().is_some_and(|t| t.contains('T')), "{}", titles[0]);

    // Loaded again, the session says its title at once.
    let Some(loaded) = setup.editor(json!({"load": report["session_id"], "additional_directories": [extra]})) else { return };
    let titles: Vec<&Value> = updates(&loaded, "session_info_update");
    assert_eq!(titles.iter().map(|t| t["title"].as_str().unwrap_or_default()).collect::<Vec<_>>(), ["what is on my list?"], "{titles:?}");
}

/// Through the TypeScript SDK: a prompt withdrawn with `$/cancel_request`
/// stops its run (and its shell command) and answers "cancelled";
/// `session/delete` removes the saved session (a second delete is
/// refused, `session/list` no longer has it); after `logout` nothing
/// opens or runs until `authenticate`.
#[test]
fn the_typescript_sdk_cancels_a_request_deletes_a_session_and_logs_out() {
    let setup = Setup::new(vec![turn(vec![shell("sleep 30 && touch late.txt")]), done()]);
    let scenario = json!({"prompts": ["wait"], "cancel_request_on_execute": true, "answers": ["allow_once"], "lifecycle": true});
    let started = std::time::Instant::now();
    let Some(report) = setup.sdk_editor(scenario) else { return };
    assert!(started.elapsed() < Duration::from_secs(25), "the command was not stopped: {:?}", started.elapsed());
    assert_eq!(report["first"]["stop_reasons"], json!(["cancelled"]), "{report}");
    assert!(!setup.root().join("late.txt").exists());

    let id = report["session_id"].as_str().unwrap();
    let steps = &report["lifecycle"];
    assert!(steps["listed_before"].as_array().unwrap().iter().any(|s| s == id), "{steps}");
    assert_eq!(steps["delete"], json!({"result": {}}), "{steps}");
    let saved = crate::common::files::walk(&setup.dir.path().join("data/tandem/threads"));
    assert!(!saved.iter().any(|p| p.to_string_lossy().ends_with(&format!("{id}.jsonl"))), "the session's file is gone: {saved:?}");
    let again = &steps["delete_again"]["error"];
    assert_eq!(again["code"], -32602, "{steps}");
    assert!(steps["listed_after"].as_array().unwrap().iter().all(|s| s != id), "{steps}");
    assert_eq!(steps["logout"], json!({"result": {}}), "{steps}");
    for refused in ["new_logged_out", "prompt_logged_out"] {
        assert_eq!(steps[refused]["error"]["code"], -32000, "{refused}: {steps}");
        assert!(steps[refused]["error"]["message"].as_str().unwrap_or_default().contains("logged out"), "{refused}: {steps}");
    }
    assert_eq!(steps["authenticate"], json!({"result": {}}), "{steps}");
    assert!(steps["new_again"]["result"]["sessionId"].is_string(), "{steps}");
}

/// Elicitation (stable in ACP v1): a client that offers forms gets plan
/// mode's review as one — the decision and, beside it, what to change —
/// instead of a permission question, and "Keep planning" carries the
/// user's words to the model; a client that fails the form is asked the
/// permission question instead.
#[test]
fn plan_review_is_a_form_for_a_client_that_offers_elicitation() {
    let turns = || {
        vec![
            turn(vec![json!({"name": "tool_search", "input": {"query": "select:exit_plan_mode"}})]),
            turn(vec![json!({"name": "exit_plan_mode", "input": {}})]),
            done(),
        ]
    };
    let setup = Setup::new(turns());
    let keep = json!({"action": "accept", "content": {"decision": "keep_planning", "feedback": "use a queue"}});
    let scenario = json!({"forms": true, "mode": "plan", "form_answers": [keep], "prompts": ["plan the cache"]});
    let Some(report) = setup.editor(scenario) else { return };
    assert_eq!(report["spec_invalid"], json!([]), "messages that do not match the ACP schema");
    assert_eq!(report["stop_reasons"], json!(["end_turn"]), "{report}");
    assert_eq!(report["asks"], json!([]), "no permission question when the form is answered: {}", report["forms"]);
    let forms = report["forms"].as_array().unwrap();
    assert_eq!(forms.len(), 1, "{forms:?}");
    assert!(forms[0]["message"].as_str().unwrap().starts_with("Tandem's plan ("), "{}", forms[0]);
    let schema = &forms[0]["mode"]["requestedSchema"];
    let decisions: Vec<&str> = schema["properties"]["decision"]["oneOf"].as_array().unwrap().iter().map(|o| o["const"].as_str().unwrap_or_default()).collect();
    assert_eq!(decisions, ["execute", "execute_accept_edits", "keep_planning"], "{schema}");
    assert_eq!(schema["required"], json!(["decision"]), "{schema}");
    let call = updates(&report, "tool_call").last().unwrap()["toolCallId"].as_str().unwrap().to_string();
    let result = result_text(&report, &call);
    assert!(result.contains("User rejected the plan and wants to keep planning.\n\nUser feedback: use a queue"), "{result}");

    // A client whose form fails: the permission question, as before.
    setup.script(turns());
    let scenario = json!({"forms": true, "mode": "plan", "form_answers": ["fail"], "answers": ["allow_once"], "prompts": ["plan the cache"]});
    let Some(report) = setup.editor(scenario) else { return };
    assert_eq!(report["forms"].as_array().unwrap().len(), 1);
    let options = &report["asks"][0]["options"];
    assert_eq!(options, &json!(["allow_once", "allow_always", "reject_once"]), "{}", report["asks"]);
    let call = updates(&report, "tool_call").last().unwrap()["toolCallId"].as_str().unwrap().to_string();
    assert!(result_text(&report, &call).contains("User approved the plan."), "{}", result_text(&report, &call));
}

/// Prompt images through the Python SDK: the capability is advertised, an
/// image block reaches the model after the prompt's text, and on a
/// text-only model the turn fails with an error that says so (nothing is
/// sent to the model).
#[tokio::test(flavor = "multi_thread")]
async fn the_python_sdk_sends_an_image_and_a_text_only_model_refuses_it_clearly() {
    const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4z8AARAwQCgAf7gP9i18U1AAAAABJRU5ErkJggg==";
    let mock = common::mock_model::MockModel::start(vec![common::mock_model::MockResponse::sse(&common::fixture("anthropic/verbatim_basic_text.sse"))]).await;
    let setup = Setup::new(vec![done()]);
    let url = mock.url.clone();
    let run = move |model: &'static str| {
        let env = [("TANDEM_PROVIDER", "anthropic"), ("ANTHROPIC_BASE_URL", url.as_str()), ("ANTHROPIC_API_KEY", "test-key"), ("TANDEM_MODEL", model)];
        setup.editor_with(json!({"prompts": ["what is this?"], "image": {"data": PNG, "mimeType": "image/png"}}), &env)
    };
    let (seen, blind) = tokio::task::spawn_blocking(move || (run("claude-sonnet-4-5"), run("claude-3-5-haiku"))).await.unwrap();
    let (Some(seen), Some(blind)) = (seen, blind) else { return };
    assert_eq!(seen["agent_capabilities"]["promptCapabilities"]["image"], true, "{}", seen["agent_capabilities"]);
    assert_eq!(seen["stop_reasons"], json!(["end_turn"]), "{seen}");
    let requests = mock.requests();
    assert_eq!(requests.len(), 1, "only the model that sees images was asked");
    assert_eq!(requests[0].body["messages"][0]["content"][1]["source"], json!({"type": "base64", "media_type": "image/png", "data": PNG}));
    let error = blind["errors"][0].as_str().unwrap_or_default();
    assert!(error.contains("The model claude-3-5-haiku does not take image input, so the prompt (with its image) was not sent."), "{blind}");
}
