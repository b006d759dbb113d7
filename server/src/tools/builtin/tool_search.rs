//! `tool_search`: finds deferred tools and activates them for the rest of
//! the run. A deferred tool (plan mode, every MCP tool) is sent to the model
//! only as a name in the system prompt; its schema costs nothing until the
//! model asks for it here. Activation lives in the run's
//! [`RunScope`](crate::tools::RunScope): from the next model request on, the
//! run's tool list carries the activated schemas, appended after the
//! resident tools so the prompt prefix stays cacheable.

use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::tools::{DynTool, Tool, ToolContext, ToolError};

/// The answer when nothing matches.
pub const NO_MATCH: &str = "No matching deferred tools found.";

/// Results when the query does not say.
const DEFAULT_MAX_RESULTS: usize = 5;
/// Results at most, whatever the query says.
const MAX_RESULTS_CAP: usize = 20;

/// Fetch the full schemas of deferred tools so they can be called. Deferred tools are listed by name only in the system prompt; calling one before it is fetched fails. Search with keywords matched against the tools' names and descriptions (best matches first), or load exact tools with "select:NAME" (several: "select:NAME1,NAME2"). The matching tools are returned as JSON ({name, description, input_schema}) and can be called from then on.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ToolSearchArgs {
    /// Keywords, or "select:NAME" for an exact tool name.
    pub query: String,
    /// How many tools to return at most (default 5).
    #[serde(default)]
    pub max_results: Option<usize>,
}

pub struct ToolSearch;

#[derive(Serialize)]
struct SearchHit {
    name: String,
    description: String,
    input_schema: serde_json::Value,
}

#[async_trait]
impl Tool for ToolSearch {
    type Args = ToolSearchArgs;
    type Plan = ();
    const NAME: &'static str = "tool_search";


    fn is_read_only(&self, _args: &Self::Args) -> bool {
        true
    }

    fn is_concurrency_safe(&self, _args: &Self::Args) -> bool {
        true
    }

    fn summary(&self, args: &Self::Args) -> String {
        args.query.clone()
    }

    async fn plan(&self, _args: &Self::Args, _ctx: &ToolContext) -> Result<(), ToolError> {
        Ok(())
    }

    async fn call(&self, args: Self::Args, _plan: (), ctx: &ToolContext) -> Result<String, ToolError> {
        // Tools still on their way (MCP servers starting) are waited for:
        // for exact names, only what could bring them.
        let query = args.query.trim();
        match query.strip_prefix("select:") {
            Some(names) => {
                for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                    if ctx.registry.get(name).is_none() {
                        ctx.registry.settle(Some(name), &ctx.run, &ctx.cancel).await;
                    }
                }
            }
            None => ctx.registry.settle(None, &ctx.run, &ctx.cancel).await,
        }
        let deferred = ctx.registry.deferred();
        let limit = args.max_results.unwrap_or(DEFAULT_MAX_RESULTS).clamp(1, MAX_RESULTS_CAP);
        let matches = search(&deferred, &args.query, limit);
        if matches.is_empty() {
            return Ok(NO_MATCH.to_string());
        }
        let found: Vec<SearchHit> = matches
            .iter()
            .map(|tool| {
                ctx.run.activate(tool.name());
                let definition = tool.definition();
                SearchHit { name: definition.name, description: definition.description, input_schema: definition.input_schema }
            })
            .collect();
        serde_json::to_string_pretty(&found).map_err(|e| ToolError::model(format!("Error: cannot encode the tools: {e}")))
    }
}

/// The deferred tools a query selects, best first, at most `limit`.
pub fn search(deferred: &[Arc<dyn DynTool>], query: &str, limit: usize) -> Vec<Arc<dyn DynTool>> {
    let query = query.trim();
    if let Some(names) = query.strip_prefix("select:") {
        return names
            .split(',')
            .map(str::trim)
            .filter_map(|name| deferred.iter().find(|t| t.name() == name).cloned())
            .take(limit)
            .collect();
    }
    // A bare exact name is a selection too.
    if let Some(tool) = deferred.iter().find(|t| t.name() == query) {
        return vec![Arc::clone(tool)];
    }
    let words = words(query);
    if words.is_empty() {
        return Vec::new();
    }
    let mut scored: Vec<(usize, usize, &Arc<dyn DynTool>)> = deferred
        .iter()
        .enumerate()
        .map(|(order, tool)| (score(tool.as_ref(), &words), order, tool))
        .filter(|(score, _, _)| *score > 0)
        .collect();
    // Best score first; equal scores keep the registry's order.
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().take(limit).map(|(_, _, tool)| Arc::clone(tool)).collect()
}

/// Lower-case words of a name or text: split on anything not alphanumeric,
/// so `mcp__github__create_issue` gives `mcp`, `github`, `create`, `issue`.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect()
}

/// How well a tool matches the query's words: a word equal to a part of the
/// name counts most, a part of the name that contains it less, a word of
/// the description least. Every query word adds its best match.
fn score(tool: &dyn DynTool, query_words: &[String]) -> usize {
    let name_words = words(tool.name());
    let description_words = words(&tool.definition().description);
    query_words
        .iter()
        .map(|word| {
            if name_words.iter().any(|n| n == word) {
                10
            } else if name_words.iter().any(|n| n.contains(word.as_str())) {
                5
            } else if description_words.iter().any(|d| d == word) {
                2
            } else if word.len() >= 4 && description_words.iter().any(|d| d.starts_with(word.as_str())) {
                1
            } else {
                0
            }
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::{CallBody, CallTraits, PreparedCall, ToolDefinition, ToolRegistry, ToolSource};
    use serde_json::{json, Value};

    /// A deferred tool with a given name and description.
    struct Fake(&'static str, &'static str);

    impl DynTool for Fake {
        fn name(&self) -> &str {
            self.0
        }
        fn definition(&self) -> ToolDefinition {
            ToolDefinition { name: self.0.into(), description: self.1.into(), input_schema: json!({"type": "object", "properties": {}}) }
        }
        fn deferred(&self) -> bool {
            true
        }
        fn prepare(self: Arc<Self>, _input: &Value, _ctx: &ToolContext) -> Result<PreparedCall, String> {
            let traits = CallTraits { kind: crate::tools::ToolKind::Other, read_only: true, concurrency_safe: true, summary: String::new(), max_result_chars: 100 };
            Ok(PreparedCall::new(self.0, traits, Box::new(Ran(self.0))))
        }
    }

    struct Ran(&'static str);

    #[async_trait]
    impl CallBody for Ran {
        async fn plan(&mut self, _ctx: &ToolContext) -> Result<Option<String>, ToolError> {
            Ok(None)
        }
        async fn call(self: Box<Self>, _ctx: &ToolContext) -> Result<crate::tools::ToolOutput, ToolError> {
            Ok(format!("{} ran", self.0).into())
        }
    }

    struct Fakes;

    impl ToolSource for Fakes {
        fn tools(&self) -> Vec<Arc<dyn DynTool>> {
            vec![
                Arc::new(Fake("mcp__github__create_issue", "Create a new issue in a GitHub repository.")),
                Arc::new(Fake("mcp__github__list_issues", "List issues of a repository.")),
                Arc::new(Fake("mcp__db__query", "Run a read-only SQL query against the database.")),
                Arc::new(Fake("mcp__notes__plan_outline", "Outline a plan as a read-only draft.")),
            ]
        }
    }

    fn registry() -> ToolRegistry {
        let mut registry = ToolRegistry::builtin();
        registry.add_source(Arc::new(Fakes));
        registry
    }

    fn names(found: &[Arc<dyn DynTool>]) -> Vec<String> {
        found.iter().map(|t| t.name().to_string()).collect()
    }

    #[test]
    fn ranks_name_matches_before_description_matches() {
        let deferred = registry().deferred();
        expect_test::expect![[r#"["mcp__github__create_issue", "mcp__github__list_issues"]"#]]
            .assert_eq(&format!("{:?}", names(&search(&deferred, "github issue", 5))));
        expect_test::expect![[r#"["mcp__github__create_issue", "mcp__db__query", "remember", "mcp__github__list_issues"]"#]]
            .assert_eq(&format!("{:?}", names(&search(&deferred, "create repository query", 5))));
        // "read-only" is in two descriptions; the name match on "plan" wins.
        expect_test::expect![[r#"["enter_plan_mode", "mcp__notes__plan_outline", "exit_plan_mode", "mcp__db__query"]"#]]
            .assert_eq(&format!("{:?}", names(&search(&deferred, "plan read", 5))));
        assert!(search(&deferred, "kubernetes", 5).is_empty());
        assert_eq!(names(&search(&deferred, "github", 1)), ["mcp__github__create_issue"]);
    }

    #[test]
    fn select_takes_exact_names_only() {
        let deferred = registry().deferred();
        assert_eq!(names(&search(&deferred, "select:mcp__db__query", 5)), ["mcp__db__query"]);
        assert_eq!(names(&search(&deferred, "select:mcp__notes__plan_outline, mcp__db__query", 5)), ["mcp__notes__plan_outline", "mcp__db__query"]);
        assert!(search(&deferred, "select:mcp__db", 5).is_empty());
        assert_eq!(names(&search(&deferred, "mcp__db__query", 5)), ["mcp__db__query"]);
        // Resident tools are never "found": they are always loaded.
        assert!(search(&deferred, "select:read_file", 5).is_empty());
    }

    #[tokio::test]
    async fn activation_belongs_to_the_run_and_appends_in_order() {
        let fixture = crate::tools::support::test_fixture::fixture(&[]);
        let executor = crate::tools::Executor::new(registry()).with_results_dir(None);
        let call = |input: Value| crate::tools::ToolCall::new("t", "tool_search", input);
        let one_run = fixture.ctx.clone();
        let resident = registry().definitions().len();

        let result = executor.execute(&call(json!({"query": "select:mcp__db__query"})), &one_run).await.unwrap();
        assert!(!result.is_error, "{result:?}");
        let found: Value = serde_json::from_str(&result.content).unwrap();
        assert_eq!(found, json!([{"name": "mcp__db__query", "description": "Run a read-only SQL query against the database.", "input_schema": {"type": "object", "properties": {}}}]));
        executor.execute(&call(json!({"query": "outline"})), &one_run).await.unwrap();
        let listed: Vec<String> = registry().definitions_for(&one_run.run).into_iter().map(|d| d.name).collect();
        assert_eq!(listed.len(), resident + 2);
        assert_eq!(listed[resident..], ["mcp__db__query", "mcp__notes__plan_outline"]);
        assert_eq!(listed[0], "read_file");

        let no_match = executor.execute(&call(json!({"query": "kubernetes"})), &one_run).await.unwrap();
        assert_eq!(no_match.content, NO_MATCH);

        // Another run (a new context on the same workspace) starts with nothing activated.
        let other_run = ToolContext::new(Arc::clone(&fixture.ctx.workspace));
        assert_eq!(registry().definitions_for(&other_run.run).len(), resident);
        let refused = executor
            .execute(&crate::tools::ToolCall::new("u", "mcp__db__query", json!({})), &other_run)
            .await
            .unwrap();
        assert!(refused.is_error);
        expect_test::expect![[r#"Error: mcp__db__query is a deferred tool and its schema is not loaded. Call tool_search with query "select:mcp__db__query" first, then call mcp__db__query again."#]]
            .assert_eq(&refused.content);
        let allowed = executor
            .execute(&crate::tools::ToolCall::new("v", "mcp__db__query", json!({})), &one_run)
            .await
            .unwrap();
        assert_eq!(allowed.content, "mcp__db__query ran");
    }
}
