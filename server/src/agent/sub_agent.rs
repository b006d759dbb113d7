//! Sub-agents: a run inside a run, for the `agent` tool and forked skills.
//!
//! A tool asks for a child with [`crate::tools::ports::sub_agent::run_child`]; the parent's loop serves the
//! request ([`serve`], alive as long as the parent run), because the loop
//! holds the provider. A child:
//! - uses the same provider (and its model, unless a custom agent's `model`
//!   names another: [`sub_agent_model`]) and the same workspace view (the user's unsaved
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
use crate::sync::MutexExt;

use async_trait::async_trait;
use futures::stream::{FuturesUnordered, StreamExt};
use tokio::sync::{mpsc, oneshot};

use super::events::{EventSender, RunEvent, RunStatus, Usage};
use super::config::sub_agent_model;
use super::provider::Provider;
use super::{RunOutcome, RunRequest};
use crate::tools::ports::sub_agent::{ChildSpec, SubAgents};
use crate::tools::{DynTool, Executor, RunScope, ToolContext};

/// Model turns a sub-agent may take.
pub const SUB_AGENT_MAX_TURNS: usize = 50;

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

/// A tool's request for a child run, served by the parent's loop.
pub struct ChildRequest {
    spec: ChildSpec,
    parent: ToolContext,
    reply: oneshot::Sender<Result<String, String>>,
}

/// The loop's side of [`SubAgents`]: a request goes to the parent's loop,
/// which holds the provider and serves it ([`serve`]).
pub(crate) struct ChildChannel(pub(crate) mpsc::UnboundedSender<ChildRequest>);

#[async_trait]
impl SubAgents for ChildChannel {
    async fn run_child(&self, parent: &ToolContext, spec: ChildSpec) -> Result<String, String> {
        let (reply, answer) = oneshot::channel();
        self.0.send(ChildRequest { spec, parent: parent.clone(), reply }).map_err(|_| "the run has ended".to_string())?;
        answer.await.unwrap_or_else(|_| Err("the run ended before the sub-agent finished".to_string()))
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
    let child_executor = executor.with_registry(executor.registry().filtered(|t: &dyn DynTool| spec.tools.allows(t)));
    let tool_names = child_executor.registry().names().join(", ");
    let ctx = ToolContext {
        workspace: Arc::new(parent.workspace.fork_view()),
        cancel: parent.cancel.child_token(),
        approval: Default::default(),
        chosen_hunks: None,
        child_env: Arc::clone(&parent.child_env),
        // A sub-agent's commands run in the parent's sandbox.
        sandbox: parent.sandbox.clone(),
        // And its fetches obey the parent's network lists.
        network: Arc::clone(&parent.network),
        run: Arc::new(RunScope::child_of(&parent.run)),
        call_id: String::new(),
        registry: Default::default(),
        // Its background tasks are the session's, announced to the parent's thread.
        tasks: parent.tasks.clone(),
        thread_id: parent.thread_id.clone(),
    };
    let system = format!(
        "{}\n\n# Environment\n- Workspace root: {}\n- You are a sub-agent started by another agent for one task. Your tools: {}.\n- Work on your own: nobody answers questions. Your final message is all the other agent receives: make it complete and self-contained (findings with file paths, or what you changed).\n",
        spec.system_prompt.trim_end(),
        ctx.workspace.root().display(),
        if tool_names.is_empty() { "none" } else { &tool_names },
    );
    let model = sub_agent_model(provider.name(), provider.model(), spec.model.as_deref()).or_else(|| {
        // An agent that names no model runs on the small one (`inherit`
        // asks for the session's own).
        let named = spec.model.as_deref().is_some_and(|m| !m.trim().is_empty());
        provider.small_model().filter(|_| !named).map(str::to_string)
    });
    tracing::debug!(label = %spec.label, parent = %parent.call_id, model = model.as_deref().unwrap_or(provider.model()), "sub-agent starts");
    let child_request =
        RunRequest { prompt: spec.prompt, max_turns: Some(SUB_AGENT_MAX_TURNS), system: Some(system), model, ..RunRequest::default() };
    let (tx, mut rx) = events.child_channel();
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
        let mut total = usage.locked();
        total.add(&outcome.usage, outcome.cost_usd);
    }
    let result = match outcome.status {
        RunStatus::Completed => Ok(outcome.text),
        RunStatus::TurnLimit => Ok(format!("{}\n\n[The sub-agent stopped at its turn limit ({SUB_AGENT_MAX_TURNS}).]", outcome.text)),
        RunStatus::Cancelled => Err("cancelled".to_string()),
        RunStatus::Failed | RunStatus::Loop => Err(outcome.text),
    };
    let _ = reply.send(result);
}
