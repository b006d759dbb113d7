//! The ports: the small traits through which a tool asks for a service
//! that lives above `tools/` (the layers above implement them, `tools/`
//! never imports them): the shell's sandbox ([`shell_sandbox`]), the tool
//! hooks ([`tool_hooks`]), sub-agents ([`sub_agent`]), code
//! intelligence ([`code_intel`]: the editor's or Tandem's own language
//! servers), the session's background tasks ([`tasks`]) and the run's
//! questions in its event stream ([`questions`]), who reviews a plan
//! ([`plan_review`]) and the tools that come and go ([`tool_source`]); and
//! the network lists both the sandbox's proxy and `web_fetch` obey
//! ([`network`]). (`PermissionGate` is still in `tools/executor.rs`, beside
//! the request and decision it speaks.)

pub mod code_intel;
pub mod network;
pub mod plan_review;
pub mod questions;
pub mod shell_sandbox;
pub mod sub_agent;
pub mod tasks;
pub mod tool_hooks;
pub mod tool_source;
