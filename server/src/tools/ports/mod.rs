//! The ports: the small traits through which a tool asks for a service
//! that lives above `tools/` (the layers above implement them, `tools/`
//! never imports them): the shell's sandbox ([`shell_sandbox`]), the tool
//! hooks ([`tool_hooks`]), sub-agents ([`sub_agent`]) and code
//! intelligence ([`code_intel`]: the editor's or Tandem's own language servers).

pub mod code_intel;
pub mod shell_sandbox;
pub mod sub_agent;
pub mod tool_hooks;
