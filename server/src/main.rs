//! The `tandem` command line: parse, set up logging (never to stdout: in
//! `lsp` mode stdout is the protocol channel), dispatch.

mod cli;

use cli::terminal::{errln, outln};

use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};

use tandem::host;
use tandem::tools::{PermissionMode, ToolCall, ToolRegistry};
use tandem::workspace::Workspace;

#[derive(Parser)]
#[command(name = "tandem", version, about = "A coding agent that lives inside the editor")]
struct Cli {
    /// Trust this folder's own settings files for this run only, without
    /// remembering it (CI, a throwaway container): see `tandem trust`.
    #[arg(long, global = true)]
    trust: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Language server over stdio.
    Lsp,
    /// Agent Client Protocol agent over stdio (Zed, JetBrains, Neovim, Emacs…).
    Acp,
    /// One headless run in the current directory (the workspace root).
    ///
    /// The provider comes from the settings files (~/.tandem/settings.json,
    /// .tandem/settings.json, .tandem/settings.local.json) and the
    /// environment: ANTHROPIC_API_KEY, OPENAI_API_KEY / OPENAI_BASE_URL, or
    /// TANDEM_PROVIDER=scripted with TANDEM_SCRIPT. The model: --model, else `model` in the
    /// settings, else TANDEM_MODEL, else the provider's default. Exit 0 when the run
    /// completed, 1 when it failed or hit the turn limit, 130 when cancelled.
    Ask {
        /// Print one JSON run event per line instead of the transcript.
        #[arg(long)]
        json: bool,
        /// Model turns allowed; tool calls past the limit are not run.
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        max_turns: Option<u64>,
        /// default | acceptEdits | bypassPermissions | plan (starts in plan mode: read-only but for the plan file).
        /// Without it: `permissionMode` from the settings files, else default.
        #[arg(long)]
        permission_mode: Option<tandem::tools::permission_mode::PermissionMode>,
        /// How hard the model works: low | medium | high | xhigh | max (Anthropic's
        /// effort, with adaptive thinking on the models that take it). Without it:
        /// `effort` from the settings.
        #[arg(long, value_parser = ["low", "medium", "high", "xhigh", "max"])]
        effort: Option<String>,
        /// Continue the most recent conversation of this folder.
        #[arg(short = 'c', long = "continue", conflicts_with = "resume")]
        continue_thread: bool,
        /// Continue the conversation with this thread id (see `tandem threads`).
        #[arg(long, value_name = "ID")]
        resume: Option<String>,
        /// Compact the conversation (summarise it) before this run.
        #[arg(long)]
        compact: bool,
        /// Start this project MCP server (from .mcp.json) without asking;
        /// `all` for every one. Remembered for this workspace. Repeatable.
        #[arg(long = "mcp-approve", value_name = "NAME|all")]
        mcp_approve: Vec<String>,
        /// Start this project language server (lspServers in
        /// .tandem/settings.json) when needed; `all` for every one.
        /// Remembered for this workspace. Repeatable.
        #[arg(long = "lsp-approve", value_name = "NAME|all")]
        lsp_approve: Vec<String>,
        /// Show applied edits' whole diffs (otherwise their first lines).
        #[arg(long)]
        verbose: bool,
        /// The model's name, over TANDEM_MODEL and the settings' `model`.
        #[arg(long)]
        model: Option<String>,
        /// An image (PNG, JPEG, GIF or WebP) sent with the prompt for the model
        /// to see. Repeatable.
        #[arg(long = "image", value_name = "FILE")]
        images: Vec<std::path::PathBuf>,
        /// Run in a git worktree of HEAD plus the uncommitted changes, outside
        /// this folder, and merge the result back when the run ends: hunks over
        /// lines changed here meanwhile are conflicts, shown and not applied.
        /// `tandem undo` takes the merge back.
        #[arg(long)]
        worktree: bool,
        /// With --worktree: keep the worktree after the merge (see `tandem runs`).
        #[arg(long, requires = "worktree")]
        keep_worktree: bool,
        /// What to ask. Without it, on a terminal, `tandem chat` starts.
        prompt: Option<String>,
    },
    /// The agent reviews changes and reports findings (file, lines, severity,
    /// what and why, a suggested replacement), with read-only tools.
    ///
    /// The scope: the uncommitted changes (default), --last-run, --branch BASE,
    /// --range A..B, or the files named. The project's own review rules come
    /// from .tandem/REVIEW.md. Binary and generated files, a file whose diff is
    /// too large and the files past the review's size are skipped and said.
    /// Exit 0 when the review completed (with or without findings), 1 when it
    /// failed, 2 when it did not start, 3 when there is nothing to review, 130
    /// when cancelled.
    Review {
        /// Print one JSON run event per line (each finding a `finding` event).
        #[arg(long)]
        json: bool,
        /// quick: the problems that matter in the changed lines; thorough: also
        /// edge cases, tests, design, reading around the changes.
        #[arg(long, default_value = "quick", value_parser = ["quick", "thorough"])]
        level: String,
        /// Review what the last run (not undone) changed.
        #[arg(long, conflicts_with_all = ["branch", "range", "files"])]
        last_run: bool,
        /// Review the changes since the current branch left BASE (the working tree included).
        #[arg(long, value_name = "BASE", conflicts_with_all = ["range", "files"])]
        branch: Option<String>,
        /// Review a commit range, A..B.
        #[arg(long, value_name = "A..B", conflicts_with = "files")]
        range: Option<String>,
        /// Model turns allowed.
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        max_turns: Option<u64>,
        /// The model's name, over TANDEM_MODEL and the settings' `model`.
        #[arg(long)]
        model: Option<String>,
        /// Review these files, whole.
        files: Vec<String>,
    },
    /// An interactive conversation in the terminal: each line you type is a
    /// run on the same thread (line editing and history; Ctrl-C cancels the
    /// running answer, not the session; /new, /resume [ID], /help, /exit).
    Chat {
        /// Model turns allowed per message.
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        max_turns: Option<u64>,
        /// default | acceptEdits | bypassPermissions | plan. Without it: the settings', else default.
        #[arg(long)]
        permission_mode: Option<tandem::tools::permission_mode::PermissionMode>,
        /// How hard the model works: low | medium | high | xhigh | max (Anthropic's
        /// effort, with adaptive thinking on the models that take it). Without it:
        /// `effort` from the settings.
        #[arg(long, value_parser = ["low", "medium", "high", "xhigh", "max"])]
        effort: Option<String>,
        /// Continue the most recent conversation of this folder.
        #[arg(short = 'c', long = "continue", conflicts_with = "resume")]
        continue_thread: bool,
        /// Continue the conversation with this thread id (see `tandem threads`).
        #[arg(long, value_name = "ID")]
        resume: Option<String>,
        /// Start this project MCP server (from .mcp.json) without asking; `all` for every one.
        #[arg(long = "mcp-approve", value_name = "NAME|all")]
        mcp_approve: Vec<String>,
        /// Show applied edits' whole diffs.
        #[arg(long)]
        verbose: bool,
        /// The model's name, over TANDEM_MODEL and the settings' `model`.
        #[arg(long)]
        model: Option<String>,
    },
    /// List this folder's saved threads (conversations) with their token and cost totals.
    #[command(alias = "sessions")]
    Threads,
    /// Worktree runs of this folder (`tandem ask --worktree`), also those a
    /// crash left behind: list them, merge one back, or discard it.
    Runs {
        #[command(subcommand)]
        action: Option<RunsAction>,
    },
    /// Undo a run: restore every file it changed (buffers, files it wrote, files its shell commands changed).
    ///
    /// Without RUN_ID, the most recent run in this folder that is not undone.
    /// A file changed since the run in the lines the run changed is a conflict
    /// and stays as it is. Exit 0 when every file was restored or unchanged, 1 on a
    /// conflict, 2 when there is nothing to undo.
    Undo {
        /// The run (as `tandem ask` printed it); default: the most recent one.
        run_id: Option<String>,
        /// Print the result as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Redo an undone run: put back what it changed. Without RUN_ID, the run undone last.
    Redo {
        /// The run; default: the one undone last.
        run_id: Option<String>,
        /// Print the result as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Offline end-to-end demo with the scripted model: no key, no network.
    Demo,
    /// Check what Tandem gets here: the model and whether its server answers
    /// with the key, whether shell commands run in a sandbox (bubblewrap),
    /// the folder's trust, the other installed copies and their versions;
    /// then what is missing, each with its fix. Exit 1 when no sandbox can start.
    Doctor {
        /// Print the report as one JSON object (what `:checkhealth tandem` reads).
        #[arg(long)]
        json: bool,
        /// Do not ask the model's server whether it answers.
        #[arg(long)]
        offline: bool,
        /// The editor's settings (a JSON object, as its `initializationOptions.tandem`):
        /// the report is then what that editor's `tandem lsp` would decide.
        #[arg(long, value_name = "JSON")]
        editor_settings: Option<String>,
    },
    /// Run one tool once and print exactly the result text the model would get.
    Tool {
        /// The tool's name, e.g. read_file.
        name: String,
        /// The tool's input as a JSON object.
        input: String,
    },
    /// Trust this folder's own settings files (.tandem/settings.json,
    /// .tandem/settings.local.json, .mcp.json) as they are now.
    ///
    /// Until a folder is trusted, the files that came with it may only
    /// tighten: add deny and ask rules, lower the mode, tighten the sandbox.
    /// Trust is remembered per folder and per content of each file: when
    /// one changes, it is ignored again until you trust the folder again.
    Trust {
        /// List the trusted folders and whether their files changed since.
        #[arg(long, conflicts_with = "revoke")]
        list: bool,
        /// Forget the trust of this folder.
        #[arg(long)]
        revoke: bool,
    },
    /// MCP servers: `tandem mcp list`, `login NAME`, `logout NAME`.
    Mcp {
        #[command(subcommand)]
        command: McpCommand,
    },
    /// Print the tool definitions as sent to the model (deferred tools are marked).
    Tools {
        /// Print the JSON sent in the Anthropic `tools` parameter.
        #[arg(long)]
        json: bool,
    },
    /// List the skills found (project .tandem/skills, .claude/skills; then ~/.tandem, ~/.claude) and any skipped.
    Skills,
    /// List the sub-agent types: built-in, and custom ones from .tandem/agents, .claude/agents (project, then user).
    Agents,
    /// Your notes for this project (in ~/.tandem/memory/), which every run's system prompt holds.
    Memory {
        #[command(subcommand)]
        command: Option<MemoryCommand>,
    },
}

#[derive(Subcommand)]
enum RunsAction {
    /// List the worktree runs (the default).
    List,
    /// Merge a worktree run into this folder, then remove it.
    Merge {
        id: String,
        /// Keep the worktree after the merge.
        #[arg(long)]
        keep: bool,
    },
    /// Remove a worktree run without merging it.
    Discard { id: String },
}

#[derive(Subcommand)]
enum MemoryCommand {
    /// Each entry's name and first line (the default).
    List,
    /// Print an entry.
    Show { name: String },
    /// Write an entry (replacing one of that name).
    Add {
        name: String,
        /// The entry's text.
        #[arg(required = true, num_args = 1..)]
        text: Vec<String>,
    },
    /// Open an entry in $VISUAL or $EDITOR (a new one is created).
    Edit { name: String },
    /// Delete an entry.
    Remove { name: String },
}

#[derive(Subcommand)]
enum McpCommand {
    /// Each configured server, its state and its tools.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Start this project server too (remembered for this workspace); `all` for every one.
        #[arg(long = "mcp-approve", value_name = "NAME|all")]
        mcp_approve: Vec<String>,
    },
    /// Sign in to a remote (HTTP) server with OAuth: prints the address to open in a browser.
    Login {
        name: String,
    },
    /// Sign out of a remote server: revoke its tokens and delete them.
    Logout {
        name: String,
    },
}

fn main() -> ExitCode {
    // Inside a sandbox whose network goes through Tandem's proxy, this
    // program is first run as its bridge: nothing else of Tandem runs there.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|arg| arg == tandem::sandbox::bridge::SUBCOMMAND) {
        let code = tandem::sandbox::bridge::main(&args[2..]);
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    // First, while this is the only thread: may start the program again
    // in place, its environment holding only what shell commands may see.
    let hide_warning = tandem::environment::hide_environment();
    // Then out of reach of its children: not dumpable (no /proc/PID/mem),
    // no inherited descriptor passed on.
    let harden_problems = tandem::environment::harden_process();
    let cli = Cli::parse();
    init_logging();
    if cli.trust {
        tandem::trust::assume_for_this_process();
    }
    if let Some(warning) = hide_warning {
        tracing::warn!("{warning}");
    }
    for problem in harden_problems {
        tracing::warn!("{problem}");
    }
    // One tool call or a listing needs no worker threads: a current-thread
    // runtime starts faster and hands work between fewer threads (the
    // search tools still walk in parallel on their own threads).
    let runtime = match &cli.command {
        Command::Tool { .. } | Command::Tools { .. } => {
            tokio::runtime::Builder::new_current_thread().enable_all().build()
        }
        _ => {
            let mut builder = tokio::runtime::Builder::new_multi_thread();
            // Tokio's own variable, read from the environment Tandem holds
            // (hide_environment took it out of the process's).
            if let Some(threads) = tandem::environment::var("TOKIO_WORKER_THREADS").and_then(|n| n.trim().parse::<usize>().ok()).filter(|&n| n > 0) {
                builder.worker_threads(threads);
            }
            builder.enable_all().build()
        }
    };
    let runtime = match runtime {
        Ok(rt) => rt,
        Err(err) => {
            errln!("tandem: cannot start the async runtime: {err}");
            return ExitCode::from(2);
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Lsp => tandem::lsp::serve_stdio().await.map(|clean| if clean { ExitCode::SUCCESS } else { ExitCode::from(1) }),
            Command::Acp => tandem::acp::serve_stdio().await.map(|()| ExitCode::SUCCESS),
            Command::Ask { json, max_turns, permission_mode, effort, continue_thread, resume, compact, mcp_approve, lsp_approve, verbose, model, images, worktree, keep_worktree, prompt } => {
                let thread = thread_choice(continue_thread, resume);
                let max_turns = max_turns.map(|n| usize::try_from(n).unwrap_or(usize::MAX));
                let Some(prompt) = prompt else {
                    let options = cli::chat::ChatOptions { max_turns, permission_mode, mcp_approve, verbose, effort, thread, model };
                    return cli::chat::chat(options, current_workspace()?.root().to_path_buf()).await;
                };
                let session = cli::ask::SessionOptions { verbose, json, max_turns, permission_mode, mcp_approve, lsp_approve, effort, model };
                let options = cli::ask::AskOptions { prompt, session, thread, compact, images };
                if worktree {
                    return cli::worktree::ask(options, current_workspace()?, keep_worktree).await;
                }
                cli::ask::ask(options, current_workspace()?).await
            }
            Command::Chat { max_turns, permission_mode, effort, continue_thread, resume, mcp_approve, verbose, model } => {
                let thread = thread_choice(continue_thread, resume);
                let max_turns = max_turns.map(|n| usize::try_from(n).unwrap_or(usize::MAX));
                let options = cli::chat::ChatOptions { max_turns, permission_mode, mcp_approve, verbose, effort, thread, model };
                cli::chat::chat(options, current_workspace()?.root().to_path_buf()).await
            }
            Command::Review { json, level, last_run, branch, range, max_turns, model, files } => {
                let scope = match (last_run, branch, range) {
                    (true, _, _) => tandem::review::Scope::LastRun,
                    (_, Some(base), _) => tandem::review::Scope::Branch(base),
                    (_, _, Some(range)) => tandem::review::Scope::Range(range),
                    _ if !files.is_empty() => tandem::review::Scope::Files(files),
                    _ => tandem::review::Scope::Uncommitted,
                };
                let max_turns = max_turns.map(|n| usize::try_from(n).unwrap_or(usize::MAX));
                let session = cli::ask::SessionOptions { json, max_turns, model, ..Default::default() };
                let level = tandem::review::Level::parse(&level).unwrap_or_default();
                cli::review::review(cli::review::ReviewOptions { session, scope, level }, current_workspace()?).await
            }
            Command::Threads => cli::ask::threads(current_workspace()?.root()),
            Command::Runs { action } => {
                let command = match action {
                    None | Some(RunsAction::List) => cli::worktree::RunsCommand::List,
                    Some(RunsAction::Merge { id, keep }) => cli::worktree::RunsCommand::Merge { id, keep },
                    Some(RunsAction::Discard { id }) => cli::worktree::RunsCommand::Discard { id },
                };
                cli::worktree::runs(current_workspace()?, command).await
            }
            Command::Undo { run_id, json } => cli::undo::undo(current_workspace()?, tandem::checkpoint::Direction::Undo, run_id, json).await,
            Command::Redo { run_id, json } => cli::undo::undo(current_workspace()?, tandem::checkpoint::Direction::Redo, run_id, json).await,
            Command::Demo => cli::demo::demo().await,
            Command::Doctor { json, offline, editor_settings } => cli::doctor::doctor(current_workspace()?.root(), json, offline, editor_settings.as_deref()).await,
            Command::Tool { name, input } => run_tool(&name, &input).await,
            Command::Tools { json } => print_tools(json),
            Command::Trust { list, revoke } => {
                let command = match (list, revoke) {
                    (true, _) => cli::trust::TrustCommand::List,
                    (_, true) => cli::trust::TrustCommand::Revoke,
                    _ => cli::trust::TrustCommand::Trust,
                };
                cli::trust::trust(current_workspace()?.root(), command)
            }
            Command::Mcp { command: McpCommand::List { json, mcp_approve } } => cli::mcp::list(json, mcp_approve).await,
            Command::Mcp { command: McpCommand::Login { name } } => cli::mcp::login(&name).await,
            Command::Mcp { command: McpCommand::Logout { name } } => cli::mcp::logout(&name).await,
            Command::Skills => print_skills(&current_workspace()?),
            Command::Agents => print_agents(&current_workspace()?),
            Command::Memory { command } => {
                let command = match command.unwrap_or(MemoryCommand::List) {
                    MemoryCommand::List => cli::memory::MemoryCommand::List,
                    MemoryCommand::Show { name } => cli::memory::MemoryCommand::Show(name),
                    MemoryCommand::Add { name, text } => cli::memory::MemoryCommand::Add(name, text.join(" ")),
                    MemoryCommand::Edit { name } => cli::memory::MemoryCommand::Edit(name),
                    MemoryCommand::Remove { name } => cli::memory::MemoryCommand::Remove(name),
                };
                cli::memory::memory(&current_workspace()?, command)
            }
        }
    });
    match result {
        Ok(code) => code,
        Err(err) => {
            errln!("tandem: {err:#}");
            ExitCode::from(2)
        }
    }
}

fn init_logging() {
    // Through `environment::var`: the process environment no longer holds it.
    let filter = tandem::environment::var("TANDEM_LOG")
        .and_then(|directives| tracing_subscriber::EnvFilter::try_new(directives).ok())
        .unwrap_or_else(|| tracing_subscriber::EnvFilter::new("warn"));
    // Colour only for a terminal: an editor shows the server's stderr as
    // its log, where escape codes are noise.
    let colour = std::io::IsTerminal::is_terminal(&std::io::stderr()) && tandem::environment::var("NO_COLOR").is_none();
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_target(false).with_ansi(colour).init();
}

/// The thread `-c`/`--resume ID` pick for `tandem ask` and `tandem chat`.
fn thread_choice(continue_thread: bool, resume: Option<String>) -> cli::ask::ThreadChoice {
    match (continue_thread, resume) {
        (_, Some(id)) => cli::ask::ThreadChoice::Resume(id),
        (true, None) => cli::ask::ThreadChoice::Continue,
        (false, None) => cli::ask::ThreadChoice::New,
    }
}

fn current_workspace() -> anyhow::Result<Workspace> {
    let cwd = std::env::current_dir()?;
    // The workspace may read its own saved large results (and no other
    // workspace's); it cleans up after interrupted writes.
    Workspace::new(cwd)
}

async fn run_tool(name: &str, input: &str) -> anyhow::Result<ExitCode> {
    let input: serde_json::Value = match serde_json::from_str(input) {
        Ok(value) => value,
        Err(err) => {
            outln!("Invalid input for {name}: not valid JSON: {err}");
            return Ok(ExitCode::from(1));
        }
    };
    let workspace = Arc::new(current_workspace()?);
    let settings = cli::ask::read_settings(workspace.root())?;
    // The user runs this one call themselves: it is approved, as in
    // bypassPermissions, but the settings' deny rules still hold and a
    // shell command runs in the sandbox like every other.
    let (tool_host, _) = host::Host::open(host::FrontEnd {
        workspace,
        settings: Arc::new(std::sync::RwLock::new(settings)),
        prompter: None,
        mode: Some(PermissionMode::BypassPermissions),
        rules_in_project: false,
        hooks: tandem::host::shared_hooks(Default::default()),
        mcp: None,
        code_intel: host::CodeIntelFrom::None,
        record: false,
    });
    let executor = tool_host.executor();
    // Only run_shell runs a command (and the agent and skill tools, whose
    // sub-runs may call it): the others need no sandbox probe.
    let no_shell = !matches!(name, "run_shell" | "agent" | "skill");
    let run = tool_host.prepare(host::RunParts { mode: Some(PermissionMode::BypassPermissions), no_shell, ..Default::default() });
    if let Some(notice) = run.sandbox_notice.as_ref().filter(|_| name == "run_shell") {
        errln!("tandem: {notice}");
    }
    // Naming a deferred tool here is asking for it: no tool_search needed.
    run.ctx.run.activate(name);
    let call = ToolCall::new("toolu_cli", name, input);
    let result = executor.execute(&call, &run.ctx).await.map_err(|e| anyhow::anyhow!(e.0))?;
    outln!("{}", result.content);
    Ok(if result.is_error { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

fn print_tools(json: bool) -> anyhow::Result<ExitCode> {
    let registry = ToolRegistry::builtin();
    let definitions = match current_workspace() {
        Ok(workspace) => registry.definitions_in(&workspace),
        Err(_) => registry.definitions(),
    };
    if json {
        cli::terminal::out_json_pretty(&serde_json::to_value(&definitions)?);
        return Ok(ExitCode::SUCCESS);
    }
    for d in definitions {
        let first_line = d.description.lines().next().unwrap_or_default();
        outln!("{:<16} {first_line}", d.name);
    }
    for name in registry.deferred_names() {
        let Some(tool) = registry.get(&name) else { continue };
        let description = tool.definition().description;
        let first_line = description.lines().next().unwrap_or_default();
        outln!("{name:<16} (deferred: load it with tool_search) {first_line}");
    }
    Ok(ExitCode::SUCCESS)
}

fn print_skipped(skipped: &[tandem::tools::builtin::skill::Skipped]) {
    if skipped.is_empty() {
        return;
    }
    outln!("\nSkipped:");
    for s in skipped {
        outln!("  {}: {}", s.path.display(), s.reason);
    }
}

fn print_skills(workspace: &Workspace) -> anyhow::Result<ExitCode> {
    let set = tandem::tools::builtin::skill::SkillSet::discover(workspace);
    if set.skills.is_empty() {
        outln!("No skills found. A skill is a folder holding a SKILL.md in .tandem/skills/ or .claude/skills/ (project or ~).");
    }
    for skill in &set.skills {
        let context = match skill.context {
            tandem::tools::builtin::skill::SkillContext::Inline => "inline",
            tandem::tools::builtin::skill::SkillContext::Fork => "fork",
        };
        outln!("{} ({}, {context}) {}", skill.name, skill.origin.as_str(), skill.dir.join("SKILL.md").display());
        outln!("    {}", skill.description);
        if let Some(when) = &skill.when_to_use {
            outln!("    when to use: {when}");
        }
        if let Some(tools) = &skill.allowed_tools {
            outln!("    allowed tools: {}", tools.join(", "));
        }
    }
    print_skipped(&set.skipped);
    Ok(ExitCode::SUCCESS)
}

fn print_agents(workspace: &Workspace) -> anyhow::Result<ExitCode> {
    let set = tandem::tools::builtin::agent::AgentSet::discover(workspace);
    outln!("explore (built-in) read-only tools: fast search");
    outln!("plan (built-in) read-only tools: structured planning");
    outln!("general (built-in) every tool but agent");
    for agent in &set.agents {
        outln!("{} ({}) {}", agent.name, agent.origin.as_str(), agent.path.display());
        if !agent.description.is_empty() {
            outln!("    {}", agent.description);
        }
        let tools = agent.tools.as_ref().map(|t| t.join(", ")).unwrap_or_else(|| "every tool but agent".to_string());
        outln!("    tools: {tools}");
        if let Some(model) = &agent.model {
            outln!("    model: {model}");
        }
        if let Some(model) = &agent.model_untrusted {
            outln!("    model: {model} left out, the session's is used: {}", tandem::trust::HOW_TO_TRUST);
        }
    }
    print_skipped(&set.skipped);
    Ok(ExitCode::SUCCESS)
}

