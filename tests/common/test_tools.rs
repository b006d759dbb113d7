//! Tools for loop tests: they record what happens in a shared log, so tests
//! can show concurrency by the order of events rather than by timing.

#![allow(clippy::unwrap_used)]

#![allow(dead_code)]

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};
use tandem::tools::{Tool, ToolContext, ToolError};
use tokio::sync::{watch, Notify};

pub type Log = Arc<Mutex<Vec<String>>>;

fn push(log: &Log, entry: String) {
    log.lock().unwrap().push(entry);
}

/// How long a tool waits for its partner before running alone.
pub const PARTNER_WAIT: Duration = Duration::from_secs(5);

/// Safe and read-only: logs its start, waits (bounded) until its partner has
/// started too, logs its end. Run one after the other, it says "alone".
pub struct Rendezvous {
    pub log: Log,
    pub started: watch::Sender<HashSet<String>>,
}

impl Rendezvous {
    pub fn new(log: Log) -> Self {
        Rendezvous { log, started: watch::Sender::new(HashSet::new()) }
    }
}

/// Meet a partner call.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct RendezvousArgs {
    pub name: String,
    pub partner: Option<String>,
}

#[async_trait]
impl Tool for Rendezvous {
    type Args = RendezvousArgs;
    type Plan = ();
    const NAME: &'static str = "rendezvous";


    async fn plan(&self, _: &Self::Args, _: &ToolContext) -> Result<(), ToolError> {
        Ok(())
    }

    fn is_read_only(&self, _: &Self::Args) -> bool {
        true
    }

    fn is_concurrency_safe(&self, _: &Self::Args) -> bool {
        true
    }

    fn summary(&self, args: &Self::Args) -> String {
        args.name.clone()
    }

    async fn call(&self, args: Self::Args, _plan: (), _ctx: &ToolContext) -> Result<String, ToolError> {
        push(&self.log, format!("start {}", args.name));
        self.started.send_modify(|set| {
            set.insert(args.name.clone());
        });
        let Some(partner) = args.partner else {
            push(&self.log, format!("end {}", args.name));
            return Ok(format!("{} ran", args.name));
        };
        let mut rx = self.started.subscribe();
        let met = tokio::time::timeout(PARTNER_WAIT, rx.wait_for(|set| set.contains(&partner))).await.is_ok();
        push(&self.log, format!("end {}", args.name));
        Ok(if met { format!("{} met {partner}", args.name) } else { format!("{} ran alone", args.name) })
    }
}

/// Not concurrency-safe: logs start and end.
pub struct Mutate {
    pub log: Log,
}

/// Change something.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct MutateArgs {
    pub name: String,
}

#[async_trait]
impl Tool for Mutate {
    type Args = MutateArgs;
    type Plan = ();
    const NAME: &'static str = "mutate";


    async fn plan(&self, _: &Self::Args, _: &ToolContext) -> Result<(), ToolError> {
        Ok(())
    }

    fn summary(&self, args: &Self::Args) -> String {
        args.name.clone()
    }

    async fn call(&self, args: Self::Args, _plan: (), _ctx: &ToolContext) -> Result<String, ToolError> {
        push(&self.log, format!("start {}", args.name));
        tokio::task::yield_now().await;
        push(&self.log, format!("end {}", args.name));
        Ok(format!("{} done", args.name))
    }
}

/// Safe: logs that it ran and fires `notify`, which the mock server may be
/// waiting on before it sends the rest of the stream.
pub struct Signal {
    pub log: Log,
    pub notify: Arc<Notify>,
}

/// Send a signal.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SignalArgs {
    pub name: String,
}

#[async_trait]
impl Tool for Signal {
    type Args = SignalArgs;
    type Plan = ();
    const NAME: &'static str = "signal";


    async fn plan(&self, _: &Self::Args, _: &ToolContext) -> Result<(), ToolError> {
        Ok(())
    }

    fn is_read_only(&self, _: &Self::Args) -> bool {
        true
    }

    fn is_concurrency_safe(&self, _: &Self::Args) -> bool {
        true
    }

    fn summary(&self, args: &Self::Args) -> String {
        args.name.clone()
    }

    async fn call(&self, args: Self::Args, _plan: (), _ctx: &ToolContext) -> Result<String, ToolError> {
        push(&self.log, format!("tool: signal {}", args.name));
        self.notify.notify_one();
        Ok(format!("signalled {}", args.name))
    }
}

/// Waits for the run's cancellation (bounded), logging what it saw.
pub struct WaitForCancel {
    pub log: Log,
}

/// Wait.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WaitForCancelArgs {}

#[async_trait]
impl Tool for WaitForCancel {
    type Args = WaitForCancelArgs;
    type Plan = ();
    const NAME: &'static str = "wait_for_cancel";


    async fn plan(&self, _: &Self::Args, _: &ToolContext) -> Result<(), ToolError> {
        Ok(())
    }

    async fn call(&self, _args: Self::Args, _plan: (), ctx: &ToolContext) -> Result<String, ToolError> {
        push(&self.log, "tool: waiting".into());
        let cancelled = tokio::time::timeout(Duration::from_secs(30), ctx.cancel.cancelled()).await.is_ok();
        push(&self.log, format!("tool: cancelled={cancelled}"));
        Ok("stopped".into())
    }
}

macro_rules! echo_tool {
    ($ty:ident, $name:literal) => {
        /// Answers with its input.
        pub struct $ty;

        #[async_trait]
        impl Tool for $ty {
            type Args = Map<String, Value>;
            type Plan = ();
            const NAME: &'static str = $name;


            async fn plan(&self, _: &Self::Args, _: &ToolContext) -> Result<(), ToolError> {
                Ok(())
            }

            fn is_read_only(&self, _: &Self::Args) -> bool {
                true
            }

            fn is_concurrency_safe(&self, _: &Self::Args) -> bool {
                true
            }

            async fn call(&self, args: Self::Args, _plan: (), _ctx: &ToolContext) -> Result<String, ToolError> {
                Ok(format!("{} got {}", $name, Value::Object(args)))
            }
        }
    };
}

echo_tool!(GetWeather, "GetWeatherArgs");
echo_tool!(GetStockPrice, "get_stock_price");
echo_tool!(GetWeatherLower, "get_weather");

/// Always fails fatally (a broken invariant), which ends the run.
pub struct Broken;

/// Break.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct BrokenArgs {}

#[async_trait]
impl Tool for Broken {
    type Args = BrokenArgs;
    type Plan = ();
    const NAME: &'static str = "broken";


    async fn plan(&self, _: &Self::Args, _: &ToolContext) -> Result<(), ToolError> {
        Ok(())
    }

    async fn call(&self, _args: Self::Args, _plan: (), _ctx: &ToolContext) -> Result<String, ToolError> {
        Err(ToolError::Fatal("the ledger is corrupt".into()))
    }
}
