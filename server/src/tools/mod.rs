//! The tool system: the [`Tool`] contract, the [`ToolRegistry`], the
//! [`Executor`] pipeline every call passes through, and one file per tool.
//!
//! A tool has two halves. The model's half is a name, a description and a
//! JSON input schema, generated from the tool's typed `…Args` struct with
//! `schemars`, so the `///` docs on that struct *are* the description the
//! model sees. The harness half is everything the model never sees: is the
//! call read-only, may it run beside others, the tool's own checks, its
//! permission decision and its result limit. Defaults fail closed.

pub mod edit_file;
pub mod executor;
pub mod grep_search;
pub mod list_files;
pub mod read_file;
pub mod run_shell;
pub mod tool_search;
#[cfg(test)]
mod test_fixture;
pub mod web_fetch;
pub mod write_file;

use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::workspace::Workspace;

pub use executor::{Executor, ToolCall, ToolResult};

/// Results longer than this many characters are cut (head and tail kept).
pub const DEFAULT_MAX_RESULT_CHARS: usize = 50_000;

/// A tool failure. `Model` becomes an `is_error` result that the model reads
/// and corrects from; `Fatal` ends the run (reserved for broken invariants,
/// never for anything the model sent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolError {
    Model(String),
    Fatal(String),
}

impl ToolError {
    pub fn model(message: impl Into<String>) -> Self {
        ToolError::Model(message.into())
    }
}

/// What the harness knows while a call runs.
#[derive(Clone)]
pub struct ToolContext {
    pub workspace: Arc<Workspace>,
    /// Cancelled when the run is cancelled; long tools must watch it.
    pub cancel: CancellationToken,
    /// What belongs to this run and to no other (clones of a context share
    /// it; a new run gets a new one).
    pub run: Arc<RunScope>,
    /// The tools of the executor running the call (set by the executor), so
    /// `tool_search` can look through the deferred ones.
    pub registry: ToolRegistry,
    /// What settings add to shell commands' environment (an allow-list
    /// otherwise; see [`crate::environment`]).
    pub child_env: Arc<crate::environment::ChildEnv>,
}

impl ToolContext {
    pub fn new(workspace: Arc<Workspace>) -> Self {
        Self::for_run(workspace, CancellationToken::new())
    }

    /// A context for a new run: a fresh [`RunScope`].
    pub fn for_run(workspace: Arc<Workspace>, cancel: CancellationToken) -> Self {
        ToolContext {
            workspace,
            cancel,
            run: Arc::new(RunScope::default()),
            registry: ToolRegistry::default(),
            child_env: Arc::default(),
        }
    }
}

/// State that lives as long as one run: deferred tools `tool_search`
/// activated, in activation order.
#[derive(Debug, Default)]
pub struct RunScope {
    activated: std::sync::Mutex<Vec<String>>,
}

impl RunScope {
    /// Activate a deferred tool for the rest of the run; false if it already was.
    pub fn activate(&self, name: &str) -> bool {
        let mut activated = self.activated.lock().unwrap_or_else(|e| e.into_inner());
        if activated.iter().any(|n| n == name) {
            return false;
        }
        activated.push(name.to_string());
        true
    }

    pub fn is_active(&self, name: &str) -> bool {
        self.activated.lock().unwrap_or_else(|e| e.into_inner()).iter().any(|n| n == name)
    }

    /// The activated tools' names, in activation order.
    pub fn activated(&self) -> Vec<String> {
        self.activated.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// A tool's own view of whether a call needs the user's permission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionCheck {
    /// Nothing to ask (read-only work inside the workspace).
    Allow,
    /// Ask the user; the string describes the action ("Run `cargo test`").
    Ask(String),
    /// Never allowed; the string is the error for the model.
    Deny(String),
}

/// The contract every tool implements. `Args` is the input: its `///` docs
/// and field docs are the description and schema the model sees.
#[async_trait]
pub trait Tool: Send + Sync + 'static {
    type Args: DeserializeOwned + JsonSchema + Send + Sync;
    const NAME: &'static str;

    /// The call changes nothing (for plan mode and permission rules).
    fn is_read_only(&self, _args: &Self::Args) -> bool {
        false
    }

    /// The call may run at the same time as other safe calls.
    fn is_concurrency_safe(&self, _args: &Self::Args) -> bool {
        false
    }

    /// The longest result, in characters, before the executor cuts it.
    fn max_result_chars(&self) -> usize {
        DEFAULT_MAX_RESULT_CHARS
    }

    /// Deferred tools are not sent to the model until it asks for them.
    fn deferred(&self) -> bool {
        false
    }

    /// A short human summary of the call: "src/app.rs", "cargo test".
    fn summary(&self, args: &Self::Args) -> String;

    /// The tool's own checks before permission (read-before-edit, …).
    async fn validate(&self, _args: &Self::Args, _ctx: &ToolContext) -> Result<(), ToolError> {
        Ok(())
    }

    /// Whether this call needs the user's permission.
    fn check_permission(&self, args: &Self::Args, _ctx: &ToolContext) -> PermissionCheck {
        if self.is_read_only(args) {
            PermissionCheck::Allow
        } else {
            PermissionCheck::Ask(format!("{} {}", Self::NAME, self.summary(args)))
        }
    }

    /// Do the work. The returned text is what the model reads.
    async fn call(&self, args: Self::Args, ctx: &ToolContext) -> Result<String, ToolError>;
}

/// A tool definition exactly as sent in the Anthropic `tools` parameter.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ToolDefinition {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

/// The object-safe face of a [`Tool`], working on raw JSON input. Every
/// method parses the input itself; parsing is cheap next to any tool's work.
#[async_trait]
pub trait DynTool: Send + Sync {
    fn name(&self) -> &str;
    fn definition(&self) -> ToolDefinition;
    fn deferred(&self) -> bool;
    fn max_result_chars(&self) -> usize;
    /// Schema validation: `Err` holds the reason, for `Invalid input for NAME: …`.
    fn parse_check(&self, input: &Value) -> Result<(), String>;
    fn is_read_only(&self, input: &Value) -> bool;
    fn is_concurrency_safe(&self, input: &Value) -> bool;
    fn summary(&self, input: &Value) -> String;
    async fn validate(&self, input: &Value, ctx: &ToolContext) -> Result<(), ToolError>;
    fn check_permission(&self, input: &Value, ctx: &ToolContext) -> PermissionCheck;
    async fn call(&self, input: Value, ctx: &ToolContext) -> Result<String, ToolError>;
}

fn parse_args<A: DeserializeOwned>(input: &Value) -> Result<A, String> {
    // serde says "missing field `old_string`"; the model reads quotes better.
    A::deserialize(input).map_err(|e| e.to_string().replace('`', "\""))
}

#[async_trait]
impl<T: Tool> DynTool for T {
    fn name(&self) -> &str {
        T::NAME
    }

    fn definition(&self) -> ToolDefinition {
        let (description, input_schema) = schema_for::<T::Args>();
        ToolDefinition { name: T::NAME.to_string(), description, input_schema }
    }

    fn deferred(&self) -> bool {
        Tool::deferred(self)
    }

    fn max_result_chars(&self) -> usize {
        Tool::max_result_chars(self)
    }

    fn parse_check(&self, input: &Value) -> Result<(), String> {
        if !input.is_object() {
            return Err(format!("expected a JSON object, got {}", json_kind(input)));
        }
        parse_args::<T::Args>(input).map(|_| ())
    }

    fn is_read_only(&self, input: &Value) -> bool {
        parse_args::<T::Args>(input).map(|a| Tool::is_read_only(self, &a)).unwrap_or(false)
    }

    fn is_concurrency_safe(&self, input: &Value) -> bool {
        parse_args::<T::Args>(input).map(|a| Tool::is_concurrency_safe(self, &a)).unwrap_or(false)
    }

    fn summary(&self, input: &Value) -> String {
        parse_args::<T::Args>(input).map(|a| Tool::summary(self, &a)).unwrap_or_default()
    }

    async fn validate(&self, input: &Value, ctx: &ToolContext) -> Result<(), ToolError> {
        let args = parse_args::<T::Args>(input).map_err(ToolError::Model)?;
        Tool::validate(self, &args, ctx).await
    }

    fn check_permission(&self, input: &Value, ctx: &ToolContext) -> PermissionCheck {
        match parse_args::<T::Args>(input) {
            Ok(args) => Tool::check_permission(self, &args, ctx),
            Err(e) => PermissionCheck::Deny(e),
        }
    }

    async fn call(&self, input: Value, ctx: &ToolContext) -> Result<String, ToolError> {
        let args = parse_args::<T::Args>(&input).map_err(ToolError::Model)?;
        Tool::call(self, args, ctx).await
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The description (the struct's doc comment) and the input schema for an
/// `Args` type, shaped as the Anthropic API takes it: a plain object schema,
/// subschemas inlined, no `$schema`/`title`, no non-standard `format`s.
pub fn schema_for<A: JsonSchema>() -> (String, Value) {
    let generator = schemars::generate::SchemaSettings::draft07()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<A>().to_value();
    let mut description = String::new();
    if let Some(object) = schema.as_object_mut() {
        object.remove("title");
        if let Some(Value::String(d)) = object.remove("description") {
            description = d;
        }
        object.entry("properties").or_insert_with(|| Value::Object(Default::default()));
    }
    strip_formats(&mut schema);
    (description, schema)
}

fn strip_formats(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(format)) = map.get("format") {
                if matches!(format.as_str(), "uint" | "uint8" | "uint16" | "uint32" | "uint64" | "int" | "int8" | "int16" | "int32" | "int64" | "double" | "float") {
                    map.remove("format");
                }
            }
            map.values_mut().for_each(strip_formats);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_formats),
        _ => {}
    }
}

/// Tools that come and go while the process runs (MCP servers start, stop
/// and change their tool lists). The registry asks for the current list
/// whenever it is consulted.
pub trait ToolSource: Send + Sync {
    fn tools(&self) -> Vec<Arc<dyn DynTool>>;
}

/// The tools a run can use, by name, in a stable order: the registered
/// tools first, then those of each source in the order sources were added.
/// A source's tool never shadows a registered one.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: Vec<Arc<dyn DynTool>>,
    sources: Vec<Arc<dyn ToolSource>>,
}

impl ToolRegistry {
    /// The built-in tools.
    pub fn builtin() -> Self {
        let mut registry = ToolRegistry::default();
        registry.register(read_file::ReadFile);
        registry.register(write_file::WriteFile);
        registry.register(edit_file::EditFile);
        registry.register(list_files::ListFiles);
        registry.register(grep_search::GrepSearch);
        registry.register(run_shell::RunShell);
        registry.register(web_fetch::WebFetch::default());
        registry.register(tool_search::ToolSearch);
        registry
    }

    pub fn register(&mut self, tool: impl DynTool + 'static) {
        self.register_arc(Arc::new(tool));
    }

    pub fn register_arc(&mut self, tool: Arc<dyn DynTool>) {
        self.tools.retain(|t| t.name() != tool.name());
        self.tools.push(tool);
    }

    /// Add a source of tools that change over time (MCP servers).
    pub fn add_source(&mut self, source: Arc<dyn ToolSource>) {
        self.sources.push(source);
    }

    /// Every tool, registered ones first; a name appears once.
    pub fn all(&self) -> Vec<Arc<dyn DynTool>> {
        let mut all = self.tools.clone();
        for source in &self.sources {
            for tool in source.tools() {
                if !all.iter().any(|t| t.name() == tool.name()) {
                    all.push(tool);
                }
            }
        }
        all
    }

    pub fn get(&self, name: &str) -> Option<Arc<dyn DynTool>> {
        if let Some(tool) = self.tools.iter().find(|t| t.name() == name) {
            return Some(Arc::clone(tool));
        }
        self.sources.iter().flat_map(|s| s.tools()).find(|t| t.name() == name)
    }

    pub fn names(&self) -> Vec<String> {
        self.all().iter().map(|t| t.name().to_string()).collect()
    }

    /// Definitions of every tool that is not deferred.
    pub fn definitions(&self) -> Vec<ToolDefinition> {
        self.all().iter().filter(|t| !t.deferred()).map(|t| t.definition()).collect()
    }

    /// The tool list of one model request in a run: the resident tools,
    /// then the deferred tools this run activated, in activation order. The
    /// order only ever grows at the end, so the prompt prefix stays cacheable.
    pub fn definitions_for(&self, run: &RunScope) -> Vec<ToolDefinition> {
        let all = self.all();
        let mut definitions: Vec<ToolDefinition> = all.iter().filter(|t| !t.deferred()).map(|t| t.definition()).collect();
        for name in run.activated() {
            if let Some(tool) = all.iter().find(|t| t.deferred() && t.name() == name) {
                definitions.push(tool.definition());
            }
        }
        definitions
    }

    /// Names of deferred tools, listed in the system prompt.
    pub fn deferred_names(&self) -> Vec<String> {
        self.all().iter().filter(|t| t.deferred()).map(|t| t.name().to_string()).collect()
    }

    /// The deferred tools themselves (for `tool_search`).
    pub fn deferred(&self) -> Vec<Arc<dyn DynTool>> {
        self.all().into_iter().filter(|t| t.deferred()).collect()
    }
}
