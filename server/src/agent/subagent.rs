//! Sub-agents: a run inside a run, for the `agent` tool and forked skills.
//!
//! A tool asks for a child with [`run_child`]; the parent's loop serves the
//! request ([`serve`], alive as long as the parent run), because the loop
//! holds the provider. A child:
//! - uses the same provider (and its model, unless a custom agent's `model`
//!   names another: [`subagent_model`]) and the same workspace view (the user's unsaved
//!   buffers, the same edit sinks), with a read ledger of its own
//!   ([`Workspace::fork_view`](crate::workspace::Workspace::fork_view)) and a
//!   history of its own;
//! - runs through the parent's executor restricted to its tools: the same
//!   permission policy object, so it never gets more permission than its
//!   parent, and its prompts reach the same user; it never gets `agent`;
//! - is cancelled with its parent (a child token of the parent's);
//! - sends its events to the parent's transcript nested under the parent's
//!   call ([`RunEvent::Nested`]), and its tokens count in the parent's usage
//!   (priced as the model it asked for: [`ChildTotals`]).

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use futures::stream::{FuturesUnordered, StreamExt};
use tokio::sync::{mpsc, oneshot};

use super::events::{event_channel, EventSender, RunEvent, RunStatus, Usage};
use super::config::subagent_model;
use super::provider::Provider;
use super::{RunOutcome, RunRequest};
use crate::tools::{DynTool, Executor, RunScope, ToolContext};

/// Model turns a sub-agent may take.
pub const SUBAGENT_MAX_TURNS: usize = 50;

/// Tools that only read: what `explore` and `plan` sub-agents get.
pub const READ_ONLY_TOOLS: &[&str] = &["read_file", "list_files", "grep_search", "web_fetch"];

/// Which of the parent's tools a child gets (never `agent`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolChoice {
    /// [`READ_ONLY_TOOLS`].
    ReadOnly,
    /// Everything the parent has but `agent`.
    General,
    /// These names (`None`: like [`ToolChoice::General`]).
    Only(Option<Vec<String>>),
}

impl ToolChoice {
    pub fn allows(&self, name: &str) -> bool {
        if name == crate::tools::agent::AgentTool::NAME_STR {
            return false;
        }
        match self {
            ToolChoice::ReadOnly => READ_ONLY_TOOLS.contains(&name),
            ToolChoice::General | ToolChoice::Only(None) => true,
            ToolChoice::Only(Some(names)) => names.iter().any(|n| n == name),
        }
    }

    /// Every tool it allows only reads (so several such children may run at once).
    pub fn is_read_only(&self) -> bool {
        match self {
            ToolChoice::ReadOnly => true,
            ToolChoice::General | ToolChoice::Only(None) => false,
            ToolChoice::Only(Some(names)) => names.iter().all(|n| READ_ONLY_TOOLS.contains(&n.as_str())),
        }
    }
}

/// What a run's sub-agents used, each priced as the model it asked for.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ChildTotals {
    pub usage: Usage,
    /// `None` while no child ran on a model with a known price.
    pub cost_usd: Option<f64>,
}

impl ChildTotals {
    fn add(&mut self, usage: &Usage, cost_usd: Option<f64>) {
        self.usage.add(usage);
        if let Some(cost) = cost_usd {
            self.cost_usd = Some(self.cost_usd.unwrap_or(0.0) + cost);
        }
    }
}

/// What a child is asked to do.
#[derive(Debug, Clone)]
pub struct ChildSpec {
    /// For logs: "agent explore", "skill review".
    pub label: String,
    /// Its system prompt (the environment is appended).
    pub system_prompt: String,
    /// Its first user message.
    pub prompt: String,
    pub tools: ToolChoice,
    /// The model it asks for, as an agent's `model` field says it
    /// (resolved by [`subagent_model`]); `None`: the parent's.
    pub model: Option<String>,
}

/// A tool's request for a child run, served by the parent's loop.
pub struct ChildRequest {
    spec: ChildSpec,
    parent: ToolContext,
    reply: oneshot::Sender<Result<String, String>>,
}

pub type ChildSender = mpsc::UnboundedSender<ChildRequest>;

/// Run a child for the call `ctx.call_id` and wait for its final text.
/// `Err` says why it failed, for the tool's error result.
pub async fn run_child(ctx: &ToolContext, spec: ChildSpec) -> Result<String, String> {
    let sender = ctx.run.children.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let Some(sender) = sender else {
        return Err("sub-agents run only inside an agent run".to_string());
    };
    let (reply, answer) = oneshot::channel();
    sender.send(ChildRequest { spec, parent: ctx.clone(), reply }).map_err(|_| "the run has ended".to_string())?;
    tokio::select! {
        _ = ctx.cancel.cancelled() => Err("cancelled with the parent run".to_string()),
        answer = answer => answer.unwrap_or_else(|_| Err("the run ended before the sub-agent finished".to_string())),
    }
}

/// Serve child requests until the run ends (this future is then dropped,
/// and with it every child still running). Children run concurrently.
pub(crate) async fn serve(
    provider: &dyn Provider,
    executor: &Executor,
    mut requests: mpsc::UnboundedReceiver<ChildRequest>,
    events: &EventSender,
    usage: &Mutex<ChildTotals>,
) {
    let mut running = FuturesUnordered::new();
    loop {
        tokio::select! {
            request = requests.recv() => match request {
                Some(request) => running.push(run_one(provider, executor, request, events, usage)),
                None => break,
            },
            Some(()) = running.next(), if !running.is_empty() => {}
        }
    }
    while running.next().await.is_some() {}
}

type BoxedRun<'a> = Pin<Box<dyn Future<Output = RunOutcome> + Send + 'a>>;

/// The loop for a child, boxed: a run serves children that are runs.
fn boxed_run<'a>(provider: &'a dyn Provider, executor: &'a Executor, ctx: ToolContext, request: RunRequest, events: EventSender) -> BoxedRun<'a> {
    Box::pin(super::run(provider, executor, ctx, request, events))
}

async fn run_one(provider: &dyn Provider, executor: &Executor, request: ChildRequest, events: &EventSender, usage: &Mutex<ChildTotals>) {
    let ChildRequest { spec, parent, reply } = request;
    let child_executor = executor.with_registry(executor.registry().filtered(|t: &dyn DynTool| spec.tools.allows(t.name())));
    let tool_names = child_executor.registry().names().join(", ");
    let ctx = ToolContext {
        workspace: Arc::new(parent.workspace.fork_view()),
        cancel: parent.cancel.child_token(),
        editor_review: false,
        child_env: Arc::clone(&parent.child_env),
        // A sub-agent's commands run in the parent's sandbox.
        sandbox: parent.sandbox.clone(),
        shell_profile: crate::tools::ShellProfile::Unasked,
        run: Arc::new(RunScope::child_of(&parent.run)),
        call_id: String::new(),
        registry: Default::default(),
        code_intel: parent.code_intel.clone(),
    };
    let system = format!(
        "{}\n\n# Environment\n- Workspace root: {}\n- You are a sub-agent started by another agent for one task. Your tools: {}.\n- Work on your own: nobody answers questions. Your final message is all the other agent receives: make it complete and self-contained (findings with file paths, or what you changed).\n",
        spec.system_prompt.trim_end(),
        ctx.workspace.root().display(),
        if tool_names.is_empty() { "none" } else { &tool_names },
    );
    let model = subagent_model(provider.name(), provider.model(), spec.model.as_deref());
    tracing::debug!(label = %spec.label, parent = %parent.call_id, model = model.as_deref().unwrap_or(provider.model()), "sub-agent starts");
    let child_request =
        RunRequest { prompt: spec.prompt, max_turns: Some(SUBAGENT_MAX_TURNS), system: Some(system), model, sub_agent: true, ..RunRequest::default() };
    let (tx, mut rx) = event_channel();
    let run = boxed_run(provider, &child_executor, ctx, child_request, tx);
    let parent_call = parent.call_id.clone();
    let forward = async {
        while let Some(event) = rx.recv().await {
            match event {
                // The child's usage joins the parent's; its end is the parent's tool result.
                RunEvent::Status { .. } | RunEvent::End { .. } => {}
                // A grandchild's event already names its own parent call.
                nested @ RunEvent::Nested { .. } => {
                    let _ = events.send(nested);
                }
                other => {
                    let _ = events.send(RunEvent::Nested { parent: parent_call.clone(), event: Box::new(other) });
                }
            }
        }
    };
    let (outcome, ()) = tokio::join!(run, forward);
    {
        let mut total = usage.lock().unwrap_or_else(|e| e.into_inner());
        total.add(&outcome.usage, outcome.cost_usd);
    }
    let result = match outcome.status {
        RunStatus::Completed => Ok(outcome.text),
        RunStatus::TurnLimit => Ok(format!("{}\n\n[The sub-agent stopped at its turn limit ({SUBAGENT_MAX_TURNS}).]", outcome.text)),
        RunStatus::Cancelled => Err("cancelled".to_string()),
        RunStatus::Failed | RunStatus::Loop => Err(outcome.text),
    };
    let _ = reply.send(result);
}
