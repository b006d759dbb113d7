//! The tool system, in three rooms: the contract here (the [`Tool`]
//! trait, the [`ToolRegistry`], the [`Executor`] pipeline every call
//! passes through with its [`Approval`] and call [`observer`]s, the
//! permission and plan modes) and its [`ports`] (the traits through which
//! tools ask the layers above for a service); the tools themselves
//! ([`builtin`], one file or folder per tool); and what they share
//! ([`support`]).
//!
//! A tool has two halves. The model's half is a name, a description and a
//! JSON input schema, generated from the tool's typed `…Args` struct with
//! `schemars`, so the `///` docs on that struct *are* the description the
//! model sees. The harness half is everything the model never sees: is the
//! call read-only, may it run beside others, the tool's own checks, its
//! permission decision and its result limit. Defaults fail closed.

pub mod builtin;
pub mod executor;
pub mod observer;
pub mod permission_mode;
pub mod plan_mode;
pub mod ports;
pub mod support;
pub mod todo;

use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::sync::MutexExt;
use crate::workspace::Workspace;

pub use executor::{Approval, Executor, PermissionDecision, PermissionGate, PermissionRequest, ToolCall, ToolResult};
pub use permission_mode::{PermissionMode, PLAN_MODE_REFUSAL};
pub use ports::shell_sandbox::{ShellProfile, ShellSandbox};
pub use ports::tool_hooks::{PreHook, ToolHooks};
pub use ports::tool_source::ToolSource;

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
    /// The state this run's calls share (activated deferred tools, …).
    pub run: Arc<RunScope>,
    /// Set by the executor for one call: how the gate permitted it — the
    /// sandbox profile and network of a shell command, the editor's own
    /// review of an edit (edit tools pass it on in their
    /// [`crate::workspace::FileChange`]).
    pub approval: Approval,
    /// Set by the executor for one edit the user took in part at the
    /// terminal: the preview's hunks to write (`true`) and to leave out.
    pub chosen_hunks: Option<Arc<[bool]>>,
    /// What settings add to shell commands' environment (an allow-list
    /// otherwise; see [`crate::environment`]).
    pub child_env: Arc<crate::environment::ChildEnv>,
    /// The sandbox shell commands run in (`None`: no sandbox, because
    /// settings switched it off or none can start here; the host says so).
    pub sandbox: Option<Arc<dyn ShellSandbox>>,
    /// The run's network lists (`sandbox.network`), which `web_fetch` obeys
    /// as the sandbox's proxy does, and the hosts refused so far.
    pub network: Arc<ports::network::Network>,
    /// The id of the call being run (set by the loop for each call; empty
    /// outside one). Sub-agents name it as their events' `parent`.
    pub call_id: String,
    /// The tools of the executor running the call (set by the executor), so
    /// `tool_search` can look through the deferred ones.
    pub registry: ToolRegistry,
    /// The session's background tasks (`None`: no session keeps them, as
    /// in one `tandem tool` call).
    pub tasks: Option<Arc<dyn ports::tasks::Tasks>>,
    /// The thread the call's run continues (set by the loop; empty outside
    /// one): background tasks are announced to their thread.
    pub thread_id: String,
}

impl ToolContext {
    pub fn new(workspace: Arc<Workspace>) -> Self {
        ToolContext {
            workspace,
            cancel: CancellationToken::new(),
            run: Arc::default(),
            approval: Approval::default(),
            chosen_hunks: None,
            child_env: Arc::default(),
            sandbox: None,
            network: Arc::default(),
            call_id: String::new(),
            registry: ToolRegistry::default(),
            tasks: None,
            thread_id: String::new(),
        }
    }
}

/// The "Always allow" answers given in one conversation thread, as rule
/// text (`run_shell(git push:*)`): the thread keeps them (and saves them
/// with itself), its runs and their sub-agents share them, and no other
/// thread sees them. (Rules saved to `.tandem/settings.local.json` are the
/// project's, for every thread.)
#[derive(Debug, Default)]
pub struct Grants {
    rules: std::sync::Mutex<Vec<String>>,
}

/// Rules one thread may hold; a longer list keeps its first ones.
const MAX_GRANTS: usize = 256;

impl Grants {
    /// Add rules (those already held are skipped); true if any was new.
    pub fn add(&self, rules: impl IntoIterator<Item = String>) -> bool {
        let mut held = self.rules.locked();
        let before = held.len();
        for rule in rules {
            if held.len() < MAX_GRANTS && !held.contains(&rule) {
                held.push(rule);
            }
        }
        held.len() != before
    }

    /// The rules, in the order they were granted.
    pub fn rules(&self) -> Vec<String> {
        self.rules.locked().clone()
    }
}

/// State that belongs to one run (never to the process): two runs in one
/// editor session do not share it.
#[derive(Default)]
pub struct RunScope {
    /// Deferred tools that `tool_search` activated in this run, in order.
    pub activated: std::sync::Mutex<Vec<String>>,
    /// Where this run's tools send sub-agent requests (`agent`, forked
    /// skills); set by the loop while the run lasts.
    pub children: std::sync::Mutex<Option<Arc<dyn ports::sub_agent::SubAgents>>>,
    /// Plan mode: on or off, the plan file, the mode to restore.
    pub plan: std::sync::Mutex<plan_mode::PlanMode>,
    /// The run's permission mode (plan mode enters and restores it), as
    /// plan mode reports it to the model.
    pub permission_mode: std::sync::Mutex<PermissionMode>,
    /// Who reviews a plan on `exit_plan_mode` (`None`: nobody can be asked).
    pub plan_review: Option<Arc<dyn plan_mode::PlanReview>>,
    /// The thread's "Always allow" grants (the loop loads them from the
    /// thread and saves new ones with it).
    pub grants: Arc<Grants>,
    /// Where the run says what it waits for before a call can go on (a
    /// tool source still starting); set by the loop while the run lasts.
    pub waiting: std::sync::Mutex<Option<WaitNotice>>,
    /// The todo list (`todo_write` replaces it whole; the loop loads it
    /// from the thread and saves it with it).
    pub todos: std::sync::Mutex<Vec<todo::TodoItem>>,
    /// Told of each new todo list; set by the loop while the run lasts.
    pub todo_notice: std::sync::Mutex<Option<todo::TodoNotice>>,
    /// A review run: it ends with its findings kept as the thread's
    /// (none found: none kept).
    pub review: bool,
    /// A review run's findings so far (`report_finding`), in report order.
    pub findings: std::sync::Mutex<Vec<crate::protocol::Finding>>,
    /// Told of each new finding; set by the loop while the run lasts.
    pub finding_notice: std::sync::Mutex<Option<FindingNotice>>,
    /// The front end answers the run's questions from its event stream
    /// (an editor's, an ACP client's): the loop then sets [`RunScope::questions`].
    pub questions_in_stream: bool,
    /// Puts a question in the run's event stream ([`ports::questions`]);
    /// set by the loop while the run lasts, when `questions_in_stream`.
    pub questions: std::sync::Mutex<Option<ports::questions::QuestionTurn>>,
}

/// Told of a review's new finding (its run events show it).
pub type FindingNotice = Arc<dyn Fn(&crate::protocol::Finding) + Send + Sync>;

/// Told what a run waits for, as the user reads it ("MCP server github").
pub type WaitNotice = Arc<dyn Fn(&str) + Send + Sync>;

impl RunScope {
    /// A run's scope in `permission_mode`, with a plan reviewer if someone can answer.
    pub fn new(permission_mode: PermissionMode, plan_review: Option<Arc<dyn plan_mode::PlanReview>>) -> Self {
        RunScope { permission_mode: std::sync::Mutex::new(permission_mode), plan_review, ..RunScope::default() }
    }

    /// A sub-agent's scope: the parent's permission mode and plan mode,
    /// nobody to review plans, nothing activated yet.
    pub fn child_of(parent: &RunScope) -> Self {
        RunScope {
            plan: std::sync::Mutex::new(parent.plan.locked().clone()),
            permission_mode: std::sync::Mutex::new(*parent.permission_mode.locked()),
            // A sub-agent works for the same conversation.
            grants: Arc::clone(&parent.grants),
            // Its events reach the same front end, nested.
            questions_in_stream: parent.questions_in_stream,
            ..RunScope::default()
        }
    }
}

impl RunScope {
    /// Activate a deferred tool for the rest of the run; false if it already was.
    pub fn activate(&self, name: &str) -> bool {
        let mut activated = self.activated.locked();
        if activated.iter().any(|n| n == name) {
            return false;
        }
        activated.push(name.to_string());
        true
    }

    pub fn is_active(&self, name: &str) -> bool {
        self.activated.locked().iter().any(|n| n == name)
    }

    /// The activated tools' names, in activation order.
    pub fn activated_names(&self) -> Vec<String> {
        self.activated.locked().clone()
    }

    /// Replace the todo list and tell whoever shows it.
    pub fn set_todos(&self, todos: Vec<todo::TodoItem>) {
        *self.todos.locked() = todos.clone();
        let notice = self.todo_notice.locked().clone();
        if let Some(notice) = notice {
            notice(&todos);
        }
    }

    /// Keep a review's finding, numbered in report order (`F1`, `F2`…),
    /// and tell whoever shows it; the finding as kept.
    pub fn add_finding(&self, mut finding: crate::protocol::Finding) -> crate::protocol::Finding {
        {
            let mut findings = self.findings.locked();
            finding.id = format!("F{}", findings.len() + 1);
            findings.push(finding.clone());
        }
        let notice = self.finding_notice.locked().clone();
        if let Some(notice) = notice {
            notice(&finding);
        }
        finding
    }

    /// Say that the run waits for `what` (nothing when no one listens).
    pub fn notify_waiting(&self, what: &str) {
        let notice = self.waiting.locked().clone();
        if let Some(notice) = notice {
            notice(what);
        }
    }
}

pub use crate::protocol::ToolKind;

/// The contract every tool implements. `Args` is the input: its `///` docs
/// and field docs are the description and schema the model sees.
///
/// A call goes through the phases parse → [`plan`](Tool::plan) (the tool's
/// own checks, before permission) → [`call`](Tool::call). The input is
/// parsed once; the plan is computed once and carried to `call`.
#[async_trait]
pub trait Tool: Send + Sync + 'static {
    type Args: DeserializeOwned + JsonSchema + Send + Sync;
    /// What `plan` computes and `call` consumes (`()` for most tools).
    type Plan: Send + Sync;
    const NAME: &'static str;
    /// Every call of this tool is a [`ToolKind::Read`] or a
    /// [`ToolKind::Fetch`] and changes nothing: read-only sub-agents
    /// (`explore`, `plan`) get exactly these tools.
    const ONLY_READS: bool = false;
    /// The tool exists to start sub-agents (`agent`): sub-agents never get
    /// it, so a child runs no children of its own.
    const STARTS_SUB_AGENTS: bool = false;

    /// What the call does (see [`ToolKind`]). The default, `Other`, fails
    /// closed: it is not read-only unless [`Tool::is_read_only`] says so.
    fn kind(&self, _args: &Self::Args, _ctx: &ToolContext) -> ToolKind {
        ToolKind::Other
    }

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

    /// A short human summary of the call: "src/app.rs", "cargo test";
    /// empty when the tool's name says it all.
    fn summary(&self, _args: &Self::Args) -> String {
        String::new()
    }

    /// What this workspace adds to the tool's description (the `agent`
    /// tool names the custom agents found there); empty: nothing.
    fn workspace_description(&self, _workspace: &Workspace) -> String {
        String::new()
    }

    /// The section this tool adds to a thread's system prompt when the
    /// thread starts (the `skill` tool lists the skills); empty: none.
    fn prompt_section(&self, _workspace: &Workspace) -> String {
        String::new()
    }

    /// The tool's own checks (read-before-edit, unchanged-since-read, …) and
    /// the work that can be done before permission is asked.
    async fn plan(&self, args: &Self::Args, ctx: &ToolContext) -> Result<Self::Plan, ToolError>;

    /// What the user reviews before allowing the call (a diff for edits).
    fn preview(&self, _args: &Self::Args, _plan: &Self::Plan) -> Option<String> {
        None
    }

    /// Do the work. The returned text is what the model reads.
    async fn call(&self, args: Self::Args, plan: Self::Plan, ctx: &ToolContext) -> Result<String, ToolError>;

    /// [`call`](Tool::call) for a tool whose result may carry images for the
    /// model to see (`read_file` of a PNG); by default `call`'s text alone.
    /// The executor calls this one.
    async fn call_output(&self, args: Self::Args, plan: Self::Plan, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        self.call(args, plan, ctx).await.map(ToolOutput::from)
    }
}

/// What a call gives the model: its text, and the images it sees beside it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolOutput {
    pub text: String,
    pub images: Vec<crate::model::Image>,
}

impl From<String> for ToolOutput {
    fn from(text: String) -> Self {
        ToolOutput { text, images: Vec::new() }
    }
}

/// A tool definition exactly as sent in the Anthropic `tools` parameter.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ToolDefinition {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

/// The object-safe face of a tool, as the registry holds it. Typed tools get
/// it from the blanket impl over [`Tool`]; tools whose names are only known
/// at run time (MCP) implement it directly, with a [`CallBody`] of their own.
pub trait DynTool: Send + Sync {
    fn name(&self) -> &str;
    fn definition(&self) -> ToolDefinition;
    /// The definition as sent in this workspace ([`Tool::workspace_description`]).
    fn definition_in(&self, _workspace: &Workspace) -> ToolDefinition {
        self.definition()
    }
    /// [`Tool::prompt_section`].
    fn prompt_section(&self, _workspace: &Workspace) -> String {
        String::new()
    }
    fn deferred(&self) -> bool;
    /// Every call only reads or fetches ([`Tool::ONLY_READS`]); tools that
    /// do not say so are not given to read-only sub-agents.
    fn only_reads(&self) -> bool {
        false
    }
    /// [`Tool::STARTS_SUB_AGENTS`].
    fn starts_sub_agents(&self) -> bool {
        false
    }
    /// Parse the input once into the tool's typed arguments. `Err` holds the
    /// reason, for `Invalid input for NAME: …`.
    fn prepare(self: Arc<Self>, input: &Value, ctx: &ToolContext) -> Result<PreparedCall, String>;
}

/// The typed half of a prepared call: plan, then run.
#[async_trait]
pub trait CallBody: Send + Sync {
    /// The tool's own checks; returns what the user reviews, if anything.
    async fn plan(&mut self, ctx: &ToolContext) -> Result<Option<String>, ToolError>;
    async fn call(self: Box<Self>, ctx: &ToolContext) -> Result<ToolOutput, ToolError>;
}

/// How a prepared call describes itself to the gates.
#[derive(Debug, Clone)]
pub struct CallTraits {
    pub kind: ToolKind,
    pub read_only: bool,
    pub concurrency_safe: bool,
    pub summary: String,
    pub max_result_chars: usize,
}

/// A call whose input was parsed once, carried through every gate.
pub struct PreparedCall {
    pub name: String,
    pub traits: CallTraits,
    body: Box<dyn CallBody>,
}

impl std::fmt::Debug for PreparedCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedCall").field("name", &self.name).field("traits", &self.traits).finish_non_exhaustive()
    }
}

impl PreparedCall {
    pub fn new(name: impl Into<String>, traits: CallTraits, body: Box<dyn CallBody>) -> Self {
        PreparedCall { name: name.into(), traits, body }
    }

    pub async fn plan(&mut self, ctx: &ToolContext) -> Result<Option<String>, ToolError> {
        self.body.plan(ctx).await
    }

    pub async fn call(self, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        self.body.call(ctx).await
    }
}

struct TypedBody<T: Tool> {
    tool: Arc<T>,
    args: T::Args,
    plan: Option<T::Plan>,
}

#[async_trait]
impl<T: Tool> CallBody for TypedBody<T> {
    async fn plan(&mut self, ctx: &ToolContext) -> Result<Option<String>, ToolError> {
        let plan = self.tool.plan(&self.args, ctx).await?;
        let preview = self.tool.preview(&self.args, &plan);
        self.plan = Some(plan);
        Ok(preview)
    }

    async fn call(self: Box<Self>, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let TypedBody { tool, args, plan } = *self;
        let plan = match plan {
            Some(plan) => plan,
            None => tool.plan(&args, ctx).await?,
        };
        tool.call_output(args, plan, ctx).await
    }
}

fn parse_args<A: DeserializeOwned>(input: &Value) -> Result<A, String> {
    if !input.is_object() {
        return Err(format!("expected a JSON object, got {}", json_kind(input)));
    }
    // serde says "missing field `old_string`"; the model reads quotes better.
    A::deserialize(input).map_err(|e| e.to_string().replace('`', "\""))
}

impl<T: Tool> DynTool for T {
    fn name(&self) -> &str {
        T::NAME
    }

    fn definition(&self) -> ToolDefinition {
        let (description, input_schema) = cached_schema::<T::Args>();
        ToolDefinition { name: T::NAME.to_string(), description, input_schema }
    }

    fn definition_in(&self, workspace: &Workspace) -> ToolDefinition {
        let mut definition = DynTool::definition(self);
        definition.description.push_str(&self.workspace_description(workspace));
        definition
    }

    fn prompt_section(&self, workspace: &Workspace) -> String {
        Tool::prompt_section(self, workspace)
    }

    fn deferred(&self) -> bool {
        Tool::deferred(self)
    }

    fn only_reads(&self) -> bool {
        T::ONLY_READS
    }

    fn starts_sub_agents(&self) -> bool {
        T::STARTS_SUB_AGENTS
    }

    fn prepare(self: Arc<Self>, input: &Value, ctx: &ToolContext) -> Result<PreparedCall, String> {
        let args = parse_args::<T::Args>(input)?;
        let traits = CallTraits {
            kind: self.kind(&args, ctx),
            read_only: self.is_read_only(&args),
            concurrency_safe: self.is_concurrency_safe(&args),
            summary: self.summary(&args),
            max_result_chars: self.max_result_chars(),
        };
        Ok(PreparedCall::new(T::NAME, traits, Box::new(TypedBody { tool: self, args, plan: None })))
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

/// [`schema_for`], made once per `Args` type in a process: the schemas are
/// fixed, and a run sends every tool's definition with each model turn.
fn cached_schema<A: JsonSchema + 'static>() -> (String, Value) {
    static SCHEMAS: std::sync::OnceLock<std::sync::Mutex<std::collections::HashMap<std::any::TypeId, (String, Value)>>> = std::sync::OnceLock::new();
    let mut schemas = SCHEMAS.get_or_init(Default::default).locked();
    schemas.entry(std::any::TypeId::of::<A>()).or_insert_with(schema_for::<A>).clone()
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
        builtin::register_all(&mut registry);
        registry
    }

    pub fn register(&mut self, tool: impl DynTool + 'static) {
        self.register_arc(Arc::new(tool));
    }

    /// Add a tool already behind an `Arc`.
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

    /// What the sources are still starting (see [`ToolSource::starting`]).
    pub fn starting(&self, tool: Option<&str>) -> Vec<String> {
        self.sources.iter().flat_map(|s| s.starting(tool)).collect()
    }

    /// Wait for what the sources are still starting (only what could bring
    /// `tool`, when given), saying so to the run first; returns at once
    /// when nothing is starting, or when the run is cancelled.
    pub async fn settle(&self, tool: Option<&str>, run: &RunScope, cancel: &CancellationToken) {
        let starting = self.starting(tool);
        if starting.is_empty() {
            return;
        }
        for what in &starting {
            run.notify_waiting(what);
        }
        let all = futures::future::join_all(self.sources.iter().map(|s| s.settle(tool)));
        tokio::select! {
            _ = all => {}
            _ = cancel.cancelled() => {}
        }
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

    /// The same, as sent in `workspace` (see [`Tool::workspace_description`]).
    pub fn definitions_in(&self, workspace: &Workspace) -> Vec<ToolDefinition> {
        self.all().iter().filter(|t| !t.deferred()).map(|t| t.definition_in(workspace)).collect()
    }

    /// The sections the tools add to a new thread's system prompt, in
    /// the tools' order (see [`Tool::prompt_section`]).
    pub fn prompt_sections(&self, workspace: &Workspace) -> Vec<String> {
        let tools = self.all().iter().map(|t| t.prompt_section(workspace)).collect::<Vec<_>>();
        let sources = self.sources.iter().flat_map(|source| source.prompt_sections());
        tools.into_iter().chain(sources).filter(|s| !s.trim().is_empty()).collect()
    }

    /// The tool list of one model request in a run: the resident tools,
    /// then the deferred tools this run activated, in activation order. The
    /// list only ever grows at the end, so the prompt prefix stays cacheable.
    pub fn definitions_for(&self, run: &RunScope) -> Vec<ToolDefinition> {
        let mut definitions = self.definitions();
        definitions.extend(self.activated_definitions(run));
        definitions
    }

    /// The deferred tools this run activated that exist now, in activation order.
    pub fn activated_definitions(&self, run: &RunScope) -> Vec<ToolDefinition> {
        let deferred = self.deferred();
        run.activated_names()
            .iter()
            .filter_map(|name| deferred.iter().find(|t| t.name() == name))
            .map(|t| t.definition())
            .collect()
    }

    /// The tools `keep` accepts, in the same order (a sub-agent's tool set).
    /// Tools from sources are taken as they are now.
    pub fn filtered(&self, keep: impl Fn(&dyn DynTool) -> bool) -> ToolRegistry {
        ToolRegistry { tools: self.all().into_iter().filter(|t| keep(t.as_ref())).collect(), sources: Vec::new() }
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

#[cfg(test)]
mod tests {
    use super::*;
    use builtin::edit_file::EditFileArgs;
    use builtin::read_file::ReadFileArgs;

    #[test]
    fn a_cached_schema_is_the_one_made_for_its_own_type() {
        // Asked in turn, twice each: every answer is its own type's.
        for _ in 0..2 {
            assert_eq!(cached_schema::<ReadFileArgs>(), schema_for::<ReadFileArgs>());
            assert_eq!(cached_schema::<EditFileArgs>(), schema_for::<EditFileArgs>());
        }
        assert_ne!(cached_schema::<ReadFileArgs>(), cached_schema::<EditFileArgs>());
    }
}
