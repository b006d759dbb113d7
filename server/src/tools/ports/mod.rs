//! The ports: the small traits through which a tool asks for a service
//! that lives above `tools/` (the layers above implement them, `tools/`
//! never imports them): the shell's sandbox ([`shell_sandbox`]), the tool
//! hooks ([`tool_hooks`]) and sub-agents ([`sub_agent`]).

pub mod shell_sandbox;
pub mod sub_agent;
pub mod tool_hooks;
