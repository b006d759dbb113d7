//! The built-in tools, one file per tool: each is a [`Tool`](super::Tool)
//! with its typed `…Args` (whose `///` docs are what the model reads), its
//! kind, its own checks and its call. A tool file imports the contract
//! (`crate::tools`), the ports it needs (`crate::tools::ports`) and the
//! helpers (`crate::tools::support`), never another tool.

pub mod agent;
pub mod code_intel;
pub mod edit_file;
pub mod enter_plan_mode;
pub mod exit_plan_mode;
pub mod grep_search;
pub mod list_files;
pub mod read_file;
pub mod remember;
pub mod report_finding;
pub mod run_shell;
pub mod skill;
pub mod task_list;
pub mod task_output;
pub mod task_stop;
pub mod todo_write;
pub mod tool_search;
pub mod web_fetch;
pub mod write_file;

use super::ToolRegistry;

/// Register every built-in tool that needs nothing from above, in the
/// order the model is shown them. (`code_intel` holds its provider:
/// [`code_intel::install`] adds it where there is one.)
pub fn register_all(registry: &mut ToolRegistry) {
    registry.register(read_file::ReadFile);
    registry.register(write_file::WriteFile);
    registry.register(edit_file::EditFile);
    registry.register(list_files::ListFiles);
    registry.register(grep_search::GrepSearch);
    registry.register(run_shell::RunShell);
    registry.register(task_list::TaskList);
    registry.register(task_output::TaskOutput);
    registry.register(task_stop::TaskStop);
    registry.register(todo_write::TodoWrite);
    registry.register(web_fetch::WebFetch::default());
    registry.register(tool_search::ToolSearch);
    registry.register(skill::SkillTool);
    registry.register(agent::AgentTool);
    registry.register(enter_plan_mode::EnterPlanMode);
    registry.register(exit_plan_mode::ExitPlanMode);
    registry.register(remember::Remember);
}
