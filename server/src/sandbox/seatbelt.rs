//! macOS: each command runs under `/usr/bin/sandbox-exec -p PROFILE`, the
//! Seatbelt sandbox, with a profile written here for that one command from
//! the inputs bubblewrap gets ([`super::bubblewrap`]): the same workspace
//! roots, temp folders, `sandbox.allowWrite` and `allowRead`, protected
//! paths, read and edit denies, and network switch.
//!
//! The profile ([`Rules::profile`]) allows by default and then takes away,
//! later rules winning over earlier ones as Seatbelt reads them:
//!
//! - **writes**: none, then the places the profile may write (unasked: a
//!   private temp folder made for the command; approved: the roots, temp
//!   folders and `allowWrite`), then what stays read-only inside them
//!   (protected paths, what edit denies cover), also where it does not
//!   exist yet, so it cannot be created. The folders that lead to a
//!   protected path may not be renamed (`mv .git x && git init`).
//! - **reads**: unasked commands see the home folder and the temp folders
//!   as Linux's do (only the toolchain folders, `allowRead`, the workspace
//!   and their own temp folder); masked paths are denied last.
//! - **network**: none for unasked commands (unix sockets too: the agents
//!   and services behind them act for the user); approved ones keep unix
//!   sockets, and the network when it is allowed.
//! - **services**: unasked commands may not look up Mach services beyond a
//!   short list of ordinary ones, nor send Apple events (`open`,
//!   `osascript` and `launchctl` would run programs outside the sandbox);
//!   no command writes preferences or signals a process outside its own
//!   sandbox.
//!
//! Seatbelt compares paths as the kernel resolves them (`/tmp` is
//! `/private/tmp`), so every path is resolved first; a rule that takes
//! something away matches without ASCII case, as macOS's disks name files.
//! What a profile cannot do here: hide other processes (no pid namespace;
//! background tasks are refused) or keep a command from reading another
//! process's environment through `sysctl`.
//!
//! The profile is only text until macOS runs it, so the sandbox checks
//! itself before it is used ([`probe`]): commands run under it must be
//! refused a write outside the workspace, a read of a masked file, a
//! network connection, a write into `.git/hooks` and the renaming of
//! `.git`. If any gets through, or `sandbox-exec` is missing or refuses
//! the profile, this machine has no sandbox and Tandem says so.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::bubblewrap::{self, CREDENTIAL_STORES, HOME_TOOLCHAINS, PROTECTED_WHEN_THERE};
use super::{Denies, SandboxSettings};
use crate::tools::ports::shell_sandbox::{Confined, ShellLaunch, ShellProfile, ShellSandbox, Stopping};

/// Where macOS keeps `sandbox-exec`.
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// macOS's own cache folders of toolchains in the home folder, shown to
/// unasked commands beside [`HOME_TOOLCHAINS`] (Go, pip and Yarn keep their
/// caches in `~/Library/Caches` there).
const MACOS_HOME_TOOLCHAINS: &[&str] =
    &["Library/Caches/go-build", "Library/Caches/pip", "Library/Caches/pypoetry", "Library/Caches/Yarn", "Library/pnpm"];

/// The Mach services unasked commands may look up: the directory service
/// (user and group names), logging, notifications, the per-user temp and
/// cache folders, preferences (read: writing them is denied), and the
/// certificate checks. Not LaunchServices, launchd's job submission or
/// anything that runs a program for the caller.
const ORDINARY_SERVICES: &[&str] = &[
    "com.apple.system.opendirectoryd.libinfo",
    "com.apple.system.opendirectoryd.membership",
    "com.apple.system.DirectoryService.libinfo_v1",
    "com.apple.logd",
    "com.apple.system.logger",
    "com.apple.system.notification_center",
    "com.apple.bsd.dirhelper",
    "com.apple.cfprefsd.daemon",
    "com.apple.cfprefsd.agent",
    "com.apple.SecurityServer",
    "com.apple.trustd",
    "com.apple.trustd.agent",
];

/// What a command may reach over the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Network {
    /// Nothing, unix sockets included.
    None,
    /// Unix sockets only (an ssh agent, a local database), as an approved
    /// command without the network keeps them on Linux.
    LocalSockets,
    /// Everything.
    Full,
}

/// A folder a command may not read, but for what is shown of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Veil {
    pub folder: PathBuf,
    pub shown: Vec<PathBuf>,
}

/// What one command may do, with every path resolved as the kernel sees
/// it: what [`Rules::profile`] writes out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rules {
    pub profile: ShellProfile,
    /// Where the command may write (each with all it holds).
    pub writable: Vec<PathBuf>,
    /// Inside those, what stays as it is, existing or not.
    pub read_only: Vec<PathBuf>,
    /// Folders that may not be renamed or removed (beside the folders that
    /// lead to a read-only path, which the profile adds itself).
    pub pinned: Vec<PathBuf>,
    /// Folders not to be read but for what they show.
    pub veils: Vec<Veil>,
    /// Paths no command reads (masked), denied after everything else.
    pub hidden: Vec<PathBuf>,
    pub network: Network,
    /// Only [`ORDINARY_SERVICES`], and no Apple events.
    pub limit_services: bool,
}

impl Rules {
    /// The profile, in Seatbelt's profile language (SBPL). `Err` names a
    /// path that cannot be written into one (a control character, a name
    /// that is not UTF-8): the command then does not run.
    pub fn profile(&self) -> Result<String, String> {
        let mut out = String::new();
        let mut line = |text: &str| {
            out.push_str(text);
            out.push('\n');
        };
        line("(version 1)");
        line(&format!("; Tandem's sandbox for one {} command.", self.profile.name()));
        line("(allow default)");

        line("; Writes: only where the command may write.");
        line("(deny file-write*)");
        line("(allow file-write* (literal \"/dev/null\") (literal \"/dev/zero\") (literal \"/dev/tty\") (literal \"/dev/dtracehelper\") (subpath \"/dev/fd\"))");
        if !self.writable.is_empty() {
            line(&format!("(allow file-write*{})", filters(&self.writable, subpath)?));
        }
        if !self.read_only.is_empty() {
            line("; What stays as it is inside them, also when it does not exist yet.");
            line(&format!("(deny file-write*{})", filters(&self.read_only, |p| any_case(p, true))?));
        }
        let pinned = self.pinned_folders();
        if !pinned.is_empty() {
            line("; Folders that lead to those: not renamed, not removed.");
            line(&format!("(deny file-write-unlink{})", filters(&pinned, |p| any_case(p, false))?));
        }

        if !self.veils.is_empty() || !self.hidden.is_empty() {
            line("; Reads.");
        }
        for veil in &self.veils {
            line(&format!("(deny file-read*{})", filters(std::slice::from_ref(&veil.folder), |p| any_case(p, true))?));
            if !veil.shown.is_empty() {
                line(&format!("(allow file-read*{})", filters(&veil.shown, subpath)?));
            }
        }
        if !self.veils.is_empty() {
            // A folder's own metadata (not its listing): what resolving a
            // path through a veiled folder needs (`realpath`, `cd`).
            line("(allow file-read-metadata (vnode-type DIRECTORY))");
        }
        if !self.hidden.is_empty() {
            line(&format!("(deny file-read*{})", filters(&self.hidden, |p| any_case(p, true))?));
        }

        match self.network {
            Network::Full => line("; Network: allowed."),
            Network::LocalSockets => {
                line("; Network: unix sockets only.");
                line("(deny network*)");
                line("(allow network-outbound (remote unix-socket (path-regex \"^/\")))");
                line("(allow network-bind (local unix-socket (path-regex \"^/\")))");
            }
            Network::None => {
                line("; Network: none, unix sockets included.");
                line("(deny network*)");
            }
        }

        line("; Services and other processes.");
        if self.limit_services {
            line("(deny mach-lookup)");
            let names: String = ORDINARY_SERVICES.iter().map(|name| format!(" (global-name {})", string(name))).collect();
            line(&format!("(allow mach-lookup{names})"));
            line("(deny appleevent-send)");
        }
        line("(deny user-preference-write)");
        line("(deny signal)");
        line("(allow signal (target same-sandbox))");
        Ok(out)
    }

    /// The pinned folders and every folder that leads to a read-only path
    /// from inside a writable place, each once.
    fn pinned_folders(&self) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = self.pinned.clone();
        for path in &self.read_only {
            for folder in path.ancestors().skip(1) {
                if !self.writable.iter().any(|place| folder.starts_with(place) && folder != place.as_path()) {
                    break;
                }
                out.push(folder.to_path_buf());
            }
        }
        out.sort();
        out.dedup();
        out
    }
}

/// ` (FILTER path)` for each path.
fn filters(paths: &[PathBuf], filter: impl Fn(&Path) -> Result<String, String>) -> Result<String, String> {
    let mut out = String::new();
    for path in paths {
        out.push(' ');
        out.push_str(&filter(path)?);
    }
    Ok(out)
}

/// `(subpath "PATH")`: the path and all it holds.
fn subpath(path: &Path) -> Result<String, String> {
    Ok(format!("(subpath {})", string(text_of(path)?)))
}

/// A path as profile text: UTF-8, and no control character (a newline
/// would end a rule's line in the logs, and Seatbelt's strings give them
/// no escape Tandem relies on).
fn text_of(path: &Path) -> Result<&str, String> {
    let text = path.to_str().ok_or_else(|| format!("{} is not UTF-8, which a Seatbelt profile cannot name", path.display()))?;
    if text.chars().any(char::is_control) {
        return Err(format!("{text:?} holds a control character, which a Seatbelt profile cannot name"));
    }
    if !text.starts_with('/') {
        return Err(format!("{text:?} is not an absolute path"));
    }
    Ok(text)
}

/// A string literal: `\` and `"` escaped, nothing else needs it.
fn string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        if matches!(c, '\\' | '"') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// `(regex "…")` matching `path` in any ASCII case, and with `subtree`
/// all it holds: `.GIT/hooks` is `.git/hooks` on a disk that ignores case,
/// and Seatbelt compares the path as it was spelled. Letters become
/// `[gG]`; every other character that means something in a regular
/// expression is put in brackets (`[.]`, `[(]`), but `^` and `\`, escaped.
fn any_case(path: &Path, subtree: bool) -> Result<String, String> {
    let text = text_of(path)?;
    let mut regex = String::from("^");
    for c in text.chars() {
        match c {
            'a'..='z' | 'A'..='Z' => {
                regex.push('[');
                regex.push(c.to_ascii_lowercase());
                regex.push(c.to_ascii_uppercase());
                regex.push(']');
            }
            '^' | '\\' => {
                regex.push('\\');
                regex.push(c);
            }
            '.' | '(' | ')' | '[' | ']' | '{' | '}' | '*' | '+' | '?' | '|' | '$' => {
                regex.push('[');
                regex.push(c);
                regex.push(']');
            }
            _ => regex.push(c),
        }
    }
    regex.push_str(if subtree { "(/.*)?$" } else { "$" });
    Ok(format!("(regex {})", string(&regex)))
}

/// `path` as the kernel names it: resolved where it exists, else its
/// nearest existing folder resolved and the rest added (a protected path
/// that does not exist yet).
fn resolved(path: &Path) -> PathBuf {
    if let Ok(real) = path.canonicalize() {
        return real;
    }
    let mut rest: Vec<&std::ffi::OsStr> = Vec::new();
    for folder in path.ancestors() {
        if let Ok(real) = folder.canonicalize() {
            return rest.iter().rev().fold(real, |acc, name| acc.join(name));
        }
        match folder.file_name() {
            Some(name) => rest.push(name),
            None => break,
        }
    }
    path.to_path_buf()
}

/// A working `sandbox-exec` that passed the self-check.
#[derive(Debug, Clone)]
pub struct Found {
    pub path: PathBuf,
}

pub struct Seatbelt {
    found: Found,
    network: bool,
    allow_write: Vec<PathBuf>,
    /// Paths in the home folder unasked commands may read.
    home_shown: Vec<PathBuf>,
    denies: Denies,
    home: Option<PathBuf>,
}

impl Seatbelt {
    pub fn new(found: Found, settings: &SandboxSettings, denies: Denies) -> Self {
        let home = dirs::home_dir().and_then(|h| h.canonicalize().ok());
        let in_home = |p: &str| home.as_ref().map(|home| home.join(p.trim_start_matches('/')));
        let allow_write = settings
            .allow_write
            .iter()
            .filter_map(|p| match p.strip_prefix("~") {
                Some(rest) => in_home(rest),
                None => Some(PathBuf::from(p)),
            })
            .collect();
        let home_shown = HOME_TOOLCHAINS
            .iter()
            .chain(MACOS_HOME_TOOLCHAINS)
            .map(|p| p.to_string())
            .chain(settings.allow_read.iter().filter_map(|p| p.strip_prefix("~/").map(String::from)))
            .filter_map(|p| in_home(&p))
            .collect();
        // No proxy here: the lists' hosts are not reachable (stricter, said
        // in docs/platforms.md); an approved command gets the network when
        // `sandbox.network` is `true` or the user allows it for the command.
        let network = settings.network.route(false) == crate::tools::ports::network::Route::Direct;
        Seatbelt { found, network, allow_write, home_shown, denies, home }
    }

    /// What `launch` may do; `private_temp` is the unasked command's own
    /// temp folder.
    pub fn rules(&self, launch: &ShellLaunch<'_>, private_temp: &Path) -> Result<Rules, String> {
        let roots: Vec<PathBuf> = launch
            .roots
            .iter()
            .map(|root| root.canonicalize().map_err(|e| format!("the workspace folder {} cannot be resolved: {e}", root.display())))
            .collect::<Result<_, _>>()?;
        if roots.is_empty() {
            return Err("the run has no workspace folder".into());
        }
        let temps = bubblewrap::temp_dirs();
        let mut hidden: Vec<PathBuf> = (self.denies.read)().iter().map(|p| resolved(p)).collect();
        if let Some(home) = &self.home {
            hidden.extend(bubblewrap::tandem_folders(home).iter().map(|p| resolved(p)).filter(|folder| !roots.iter().any(|root| root.starts_with(folder))));
        }
        for root in &roots {
            hidden.extend(bubblewrap::LOCAL_SETTINGS.iter().map(|name| root.join(name)));
        }
        let mut rules = Rules {
            profile: launch.profile,
            writable: Vec::new(),
            read_only: Vec::new(),
            pinned: Vec::new(),
            veils: Vec::new(),
            hidden: Vec::new(),
            network: Network::None,
            limit_services: launch.profile != ShellProfile::Approved,
        };
        match launch.profile {
            // `sandbox::can_start` is false off Linux, so no command runs
            // contained here; were one to, it gets the unasked walls.
            ShellProfile::Unasked | ShellProfile::Contained => {
                let private_temp = resolved(private_temp);
                rules.writable.push(private_temp.clone());
                if let Some(home) = self.home.as_ref().filter(|home| home.as_path() != Path::new("/") && !roots.iter().any(|r| home.starts_with(r))) {
                    let mut shown: Vec<PathBuf> = self.home_shown.iter().filter(|p| p.exists()).map(|p| resolved(p)).collect();
                    shown.extend(roots.iter().filter(|root| root.starts_with(home)).cloned());
                    rules.veils.push(Veil { folder: home.clone(), shown });
                    hidden.extend(CREDENTIAL_STORES.iter().map(|store| resolved(&home.join(store))));
                }
                // Other commands' and programs' temp files, as the private
                // `/tmp` of Linux's unasked commands hides them.
                for temp in temps.iter().filter(|temp| !roots.iter().any(|root| temp.starts_with(root))) {
                    let mut shown = vec![private_temp.clone()];
                    shown.extend(roots.iter().filter(|root| root.starts_with(temp)).cloned());
                    rules.veils.push(Veil { folder: temp.clone(), shown });
                }
            }
            ShellProfile::Approved => {
                rules.network = if self.network || launch.network { Network::Full } else { Network::LocalSockets };
                let allowed: Vec<PathBuf> = self.allow_write.iter().filter_map(|p| p.canonicalize().ok()).collect();
                rules.writable.extend(roots.iter().cloned());
                rules.writable.extend(temps.iter().cloned());
                rules.writable.extend(temps.iter().filter_map(|temp| user_cache_parent(temp)));
                rules.writable.extend(allowed.iter().cloned());
                let writable = |path: &Path| rules.writable.iter().any(|place| path.starts_with(place));
                let mut read_only: Vec<PathBuf> = (self.denies.edit)().iter().map(|p| resolved(p)).filter(|p| writable(p)).collect();
                for root in &roots {
                    read_only.extend(bubblewrap::protected_in(root).into_iter().map(|(path, _)| path));
                    read_only.extend(PROTECTED_WHEN_THERE.iter().map(|name| root.join(name)));
                }
                let repositories = super::git::repositories(&roots, &writable);
                let mut git_paths = Vec::new();
                for git_dir in &repositories.git_dirs {
                    bubblewrap::git_protected(git_dir, &mut git_paths, 0);
                }
                read_only.extend(git_paths.into_iter().map(|(path, _)| path));
                read_only.extend(repositories.hooks_paths.iter().cloned());
                // A `commondir` made in a pinned `.git` would send git to
                // another repository's config.
                read_only.extend(repositories.pinned.iter().map(|dot_git| dot_git.join("commondir")));
                read_only.extend(super::git::config_files(&roots).into_iter().filter(|file| writable(file)));
                // What the user let commands write stays theirs.
                let user_allowed = |path: &Path| self.allow_write.iter().chain(&allowed).any(|place| path.starts_with(place));
                read_only.retain(|path| !user_allowed(path));
                read_only.sort();
                read_only.dedup();
                rules.read_only = read_only;
                rules.pinned = repositories.pinned;
            }
        }
        hidden.sort();
        hidden.dedup();
        rules.hidden = hidden;
        Ok(rules)
    }
}

/// The per-user folder of macOS's temp folder (`/private/var/folders/xy/
/// NAME/T`): it also holds the user's cache folder (`…/C`, `getconf
/// DARWIN_USER_CACHE_DIR`), where compilers keep module caches.
fn user_cache_parent(temp: &Path) -> Option<PathBuf> {
    let parent = temp.parent()?;
    let is_user_temp = temp.file_name().is_some_and(|name| name == "T") && parent.parent()?.parent()? == Path::new("/private/var/folders");
    is_user_temp.then(|| parent.to_path_buf())
}

/// What a confined command holds while it runs: an unasked command's own
/// temp folder (removed after it), an approved command's view of the
/// repositories before it (one it made is disarmed after it, as on Linux).
struct Guard {
    _private_temp: Option<tempfile::TempDir>,
    repositories: Option<super::git::Before>,
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(before) = self.repositories.take() {
            for done in super::git::disarm_new(&before) {
                tracing::warn!("an approved command made a repository whose git would run code later: {done}");
            }
        }
    }
}

impl ShellSandbox for Seatbelt {
    fn describe(&self) -> String {
        format!("Seatbelt: {} with a profile for each command, self-checked", self.found.path.display())
    }

    fn confine(&self, launch: &ShellLaunch<'_>) -> Result<Confined, String> {
        let private_temp = tempfile::Builder::new().prefix("tandem-command-").tempdir().map_err(|e| format!("cannot make the command's temp folder: {e}"))?;
        let rules = self.rules(launch, private_temp.path())?;
        let text = rules.profile()?;
        let network = rules.network == Network::Full;
        let mut args: Vec<OsString> = vec!["-p".into(), text.into()];
        let guard = match launch.profile {
            ShellProfile::Unasked | ShellProfile::Contained => {
                // Its temp folder is the one it may write.
                let mut tmpdir = OsString::from("TMPDIR=");
                tmpdir.push(resolved(private_temp.path()));
                args.extend(["/usr/bin/env".into(), tmpdir]);
                Guard { _private_temp: Some(private_temp), repositories: None }
            }
            ShellProfile::Approved => {
                let roots: Vec<PathBuf> = launch.roots.iter().filter_map(|root| root.canonicalize().ok()).collect();
                Guard { _private_temp: None, repositories: Some(super::git::before(&roots)) }
            }
        };
        args.extend(launch.argv.iter().cloned());
        Ok(Confined {
            program: self.found.path.clone(),
            args,
            network,
            // sandbox-exec becomes the command (it applies the profile and
            // runs it in its place): the process group's SIGTERM reaches it.
            stopping: Stopping::Gracefully,
            handed: None,
            guard: Box::new(guard),
        })
    }

    fn explain_failure(&self, profile: ShellProfile, output: &str) -> Vec<String> {
        let mut notes = Vec::new();
        if output.contains("sandbox-exec: ") {
            notes.push("The sandbox (Seatbelt, sandbox-exec) could not set up the command: see its message above.".to_string());
        }
        if output.contains("Operation not permitted") {
            notes.push(match profile {
                ShellProfile::Unasked | ShellProfile::Contained => "The command ran unasked, in a read-only sandbox (it may write only under $TMPDIR, and has no network). A command that writes files must be approved by the user: it is asked when it is not judged read-only, or runs in the acceptEdits and bypassPermissions modes.".to_string(),
                ShellProfile::Approved => format!(
                    "The sandbox lets commands write only inside the workspace, temp folders and the settings' sandbox.allowWrite; {} (and every file git reads config from, such as one .git/config includes) stay read-only. To let it write elsewhere, the user adds the folder to \"sandbox\": {{\"allowWrite\": [...]}}.",
                    bubblewrap::protected_names()
                ),
            });
        }
        notes
    }
}

/// What the self-check saw.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProbeReport {
    /// The unasked and the approved check each ran, and how each ended.
    pub unasked_ran: bool,
    pub approved_ran: bool,
    /// What `sandbox-exec` said when a check did not run.
    pub refusal: String,
    pub wrote_outside: bool,
    pub read_hidden: bool,
    pub connected: bool,
    pub wrote_workspace: bool,
    pub wrote_hooks: bool,
    pub moved_git: bool,
}

impl ProbeReport {
    /// `Ok` only when every rule the check tried held; else why not, in
    /// plain words, as the notice says it.
    pub fn verdict(&self, program: &Path) -> Result<(), String> {
        let program = program.display();
        if !self.unasked_ran || !self.approved_ran {
            let said = self.refusal.trim();
            let said = if said.is_empty() { String::new() } else { format!(": {said}") };
            return Err(format!("{program} refused Tandem's Seatbelt profile{said}"));
        }
        let mut leaks = Vec::new();
        if self.wrote_outside {
            leaks.push("a write outside the workspace");
        }
        if self.read_hidden {
            leaks.push("a read of a masked file");
        }
        if self.connected {
            leaks.push("a network connection");
        }
        if self.wrote_hooks {
            leaks.push("a write into .git/hooks");
        }
        if self.moved_git {
            leaks.push("renaming .git");
        }
        if !leaks.is_empty() {
            return Err(format!("the Seatbelt profile ({program}) did not hold on this macOS: its self-check was allowed {}", leaks.join(", ")));
        }
        if !self.wrote_workspace {
            return Err(format!("the Seatbelt profile ({program}) kept an approved command from writing the workspace on this macOS"));
        }
        Ok(())
    }
}

/// Run the self-check with `program` as `sandbox-exec` (once per process
/// for the real one: [`probe`]). `Err` says why this machine has no
/// sandbox.
pub fn probe_with(program: &Path) -> Result<Found, String> {
    if !program.is_file() {
        return Err(format!("{} is missing (it comes with macOS; a system without it has no Seatbelt sandbox)", program.display()));
    }
    let report = run_probe(program).map_err(|e| format!("the Seatbelt self-check could not run: {e}"))?;
    report.verdict(program)?;
    Ok(Found { path: program.to_path_buf() })
}

/// Find `sandbox-exec` and check that its sandbox holds here (once per
/// process).
#[cfg(target_os = "macos")]
pub fn probe() -> Result<Found, String> {
    static PROBED: std::sync::OnceLock<Result<Found, String>> = std::sync::OnceLock::new();
    PROBED.get_or_init(|| probe_with(Path::new(SANDBOX_EXEC))).clone()
}

/// What each check command prints, a word a line: what it got away with.
const UNASKED_CHECK: &str = r#"echo ran
(echo x > "$2/outside") 2>/dev/null && echo wrote-outside
cat "$3" >/dev/null 2>&1 && echo read-hidden
(exec 3<>"/dev/tcp/127.0.0.1/$4") 2>/dev/null && echo connected
exit 0"#;
const APPROVED_CHECK: &str = r#"echo ran
(echo x > "$1/written") 2>/dev/null && echo wrote-workspace
(echo x > "$1/.git/hooks/pre-commit") 2>/dev/null && echo wrote-hooks
mv "$1/.git" "$1/moved" 2>/dev/null && echo moved-git
(exec 3<>"/dev/tcp/127.0.0.1/$4") 2>/dev/null && echo connected
exit 0"#;

/// The two check commands, each under a profile made as a real command's
/// is: an unasked one in a fresh workspace, with a file there masked by a
/// read deny, and an approved one in a repository.
fn run_probe(program: &Path) -> std::io::Result<ProbeReport> {
    let dir = tempfile::Builder::new().prefix("tandem-seatbelt-check-").tempdir()?;
    let base = dir.path().canonicalize()?;
    let workspace = base.join("workspace");
    let outside = base.join("outside");
    std::fs::create_dir_all(workspace.join(".git").join("hooks"))?;
    std::fs::write(workspace.join(".git").join("HEAD"), "ref: refs/heads/main\n")?;
    std::fs::create_dir_all(&outside)?;
    let secret = workspace.join("secret");
    std::fs::write(&secret, "masked")?;
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    listener.set_nonblocking(true)?;
    let port = listener.local_addr()?.port().to_string();

    let hidden = secret.clone();
    let denies = Denies { read: Arc::new(move || vec![hidden.clone()]), edit: Arc::new(Vec::new) };
    let sandbox = Seatbelt::new(Found { path: program.to_path_buf() }, &SandboxSettings::default(), denies);
    let roots = [workspace.clone()];
    let mut report = ProbeReport::default();
    for (profile, script) in [(ShellProfile::Unasked, UNASKED_CHECK), (ShellProfile::Approved, APPROVED_CHECK)] {
        let argv: Vec<OsString> = ["/bin/bash", "-c", script, "tandem-check"]
            .into_iter()
            .map(OsString::from)
            .chain([workspace.as_os_str().to_owned(), outside.as_os_str().to_owned(), secret.as_os_str().to_owned(), OsString::from(&port)])
            .collect();
        let launch = ShellLaunch { profile, network: false, roots: &roots, argv: &argv };
        let confined = sandbox.confine(&launch).map_err(std::io::Error::other)?;
        let (stdout, stderr) = run_bounded(&confined.program, &confined.args, &workspace)?;
        drop(confined);
        let said: Vec<&str> = stdout.lines().map(str::trim).collect();
        let ran = said.contains(&"ran");
        if !ran && report.refusal.is_empty() {
            report.refusal = stderr.lines().take(3).collect::<Vec<_>>().join(" ");
        }
        match profile {
            ShellProfile::Unasked | ShellProfile::Contained => report.unasked_ran = ran,
            ShellProfile::Approved => report.approved_ran = ran,
        }
        report.wrote_outside |= said.contains(&"wrote-outside");
        report.read_hidden |= said.contains(&"read-hidden");
        report.connected |= said.contains(&"connected");
        report.wrote_workspace |= said.contains(&"wrote-workspace");
        report.wrote_hooks |= said.contains(&"wrote-hooks");
        report.moved_git |= said.contains(&"moved-git");
    }
    // What the commands said is checked against what is there.
    report.wrote_outside |= outside.join("outside").exists();
    report.wrote_hooks |= workspace.join(".git/hooks/pre-commit").exists();
    report.moved_git |= !workspace.join(".git").exists();
    report.wrote_workspace &= workspace.join("written").exists();
    report.connected |= listener.accept().is_ok();
    Ok(report)
}

/// Run a check command, killed if it has not ended in ten seconds; its
/// stdout and stderr.
fn run_bounded(program: &Path, args: &[OsString], cwd: &Path) -> std::io::Result<(String, String)> {
    use std::io::Read as _;
    let mut child = std::process::Command::new(program)
        .args(args)
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        if child.try_wait()?.is_some() {
            break;
        }
        if std::time::Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(std::io::Error::new(std::io::ErrorKind::TimedOut, "a check command did not end in 10 s"));
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let mut stdout = String::new();
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stdout.take() {
        pipe.read_to_string(&mut stdout)?;
    }
    if let Some(mut pipe) = child.stderr.take() {
        pipe.read_to_string(&mut stderr)?;
    }
    Ok((stdout, stderr))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn rules(profile: ShellProfile) -> Rules {
        Rules {
            profile,
            writable: Vec::new(),
            read_only: Vec::new(),
            pinned: Vec::new(),
            veils: Vec::new(),
            hidden: Vec::new(),
            network: Network::None,
            limit_services: profile == ShellProfile::Unasked,
        }
    }

    #[test]
    fn an_approved_profile_writes_the_workspace_but_not_its_protected_paths() {
        let mut approved = rules(ShellProfile::Approved);
        approved.writable = vec![PathBuf::from("/Users/me/My \"Repo\" (v2)"), PathBuf::from("/private/tmp")];
        approved.read_only = vec![PathBuf::from("/Users/me/My \"Repo\" (v2)/.git/hooks"), PathBuf::from("/Users/me/My \"Repo\" (v2)/.tandem")];
        approved.pinned = vec![PathBuf::from("/Users/me/My \"Repo\" (v2)/.git")];
        approved.hidden = vec![PathBuf::from("/Users/me/.tandem")];
        approved.network = Network::LocalSockets;
        expect_test::expect![[r#"
            (version 1)
            ; Tandem's sandbox for one approved command.
            (allow default)
            ; Writes: only where the command may write.
            (deny file-write*)
            (allow file-write* (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty") (literal "/dev/dtracehelper") (subpath "/dev/fd"))
            (allow file-write* (subpath "/Users/me/My \"Repo\" (v2)") (subpath "/private/tmp"))
            ; What stays as it is inside them, also when it does not exist yet.
            (deny file-write* (regex "^/[uU][sS][eE][rR][sS]/[mM][eE]/[mM][yY] \"[rR][eE][pP][oO]\" [(][vV]2[)]/[.][gG][iI][tT]/[hH][oO][oO][kK][sS](/.*)?$") (regex "^/[uU][sS][eE][rR][sS]/[mM][eE]/[mM][yY] \"[rR][eE][pP][oO]\" [(][vV]2[)]/[.][tT][aA][nN][dD][eE][mM](/.*)?$"))
            ; Folders that lead to those: not renamed, not removed.
            (deny file-write-unlink (regex "^/[uU][sS][eE][rR][sS]/[mM][eE]/[mM][yY] \"[rR][eE][pP][oO]\" [(][vV]2[)]/[.][gG][iI][tT]$"))
            ; Reads.
            (deny file-read* (regex "^/[uU][sS][eE][rR][sS]/[mM][eE]/[.][tT][aA][nN][dD][eE][mM](/.*)?$"))
            ; Network: unix sockets only.
            (deny network*)
            (allow network-outbound (remote unix-socket (path-regex "^/")))
            (allow network-bind (local unix-socket (path-regex "^/")))
            ; Services and other processes.
            (deny user-preference-write)
            (deny signal)
            (allow signal (target same-sandbox))
        "#]]
        .assert_eq(&approved.profile().unwrap());
    }

    #[test]
    fn an_unasked_profile_writes_its_temp_folder_only_and_sees_the_home_folder_as_linux_shows_it() {
        let mut unasked = rules(ShellProfile::Unasked);
        unasked.writable = vec![PathBuf::from("/private/var/folders/xy/abc/T/tandem-command-1")];
        unasked.veils = vec![Veil { folder: PathBuf::from("/Users/me"), shown: vec![PathBuf::from("/Users/me/.cargo/bin"), PathBuf::from("/Users/me/repo")] }];
        unasked.hidden = vec![PathBuf::from("/Users/me/.ssh"), PathBuf::from("/Users/me/repo/.tandem/settings.local.json")];
        expect_test::expect![[r#"
            (version 1)
            ; Tandem's sandbox for one unasked command.
            (allow default)
            ; Writes: only where the command may write.
            (deny file-write*)
            (allow file-write* (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty") (literal "/dev/dtracehelper") (subpath "/dev/fd"))
            (allow file-write* (subpath "/private/var/folders/xy/abc/T/tandem-command-1"))
            ; Reads.
            (deny file-read* (regex "^/[uU][sS][eE][rR][sS]/[mM][eE](/.*)?$"))
            (allow file-read* (subpath "/Users/me/.cargo/bin") (subpath "/Users/me/repo"))
            (allow file-read-metadata (vnode-type DIRECTORY))
            (deny file-read* (regex "^/[uU][sS][eE][rR][sS]/[mM][eE]/[.][sS][sS][hH](/.*)?$") (regex "^/[uU][sS][eE][rR][sS]/[mM][eE]/[rR][eE][pP][oO]/[.][tT][aA][nN][dD][eE][mM]/[sS][eE][tT][tT][iI][nN][gG][sS][.][lL][oO][cC][aA][lL][.][jJ][sS][oO][nN](/.*)?$"))
            ; Network: none, unix sockets included.
            (deny network*)
            ; Services and other processes.
            (deny mach-lookup)
            (allow mach-lookup (global-name "com.apple.system.opendirectoryd.libinfo") (global-name "com.apple.system.opendirectoryd.membership") (global-name "com.apple.system.DirectoryService.libinfo_v1") (global-name "com.apple.logd") (global-name "com.apple.system.logger") (global-name "com.apple.system.notification_center") (global-name "com.apple.bsd.dirhelper") (global-name "com.apple.cfprefsd.daemon") (global-name "com.apple.cfprefsd.agent") (global-name "com.apple.SecurityServer") (global-name "com.apple.trustd") (global-name "com.apple.trustd.agent"))
            (deny appleevent-send)
            (deny user-preference-write)
            (deny signal)
            (allow signal (target same-sandbox))
        "#]]
        .assert_eq(&unasked.profile().unwrap());
    }

    #[test]
    fn the_network_is_there_only_when_allowed() {
        let mut approved = rules(ShellProfile::Approved);
        approved.network = Network::Full;
        let text = approved.profile().unwrap();
        assert!(!text.contains("(deny network") && text.contains("; Network: allowed."), "{text}");
        assert!(rules(ShellProfile::Unasked).profile().unwrap().contains("\n(deny network*)\n; Services"));
    }

    #[test]
    fn paths_a_profile_cannot_name_are_refused_not_written_out() {
        for bad in ["/ws/a\nb", "/ws/tab\there", "relative/path"] {
            let mut approved = rules(ShellProfile::Approved);
            approved.writable = vec![PathBuf::from(bad)];
            let err = approved.profile().unwrap_err();
            assert!(err.contains("control character") || err.contains("not an absolute path"), "{bad:?}: {err}");
        }
        // A backslash and a quote are escaped, a regex character bracketed.
        assert_eq!(any_case(Path::new(r"/a\b^c$.d"), false).unwrap(), r#"(regex "^/[aA]\\\\[bB]\\^[cC][$][.][dD]$")"#);
        assert_eq!(subpath(Path::new(r#"/a"b\c"#)).unwrap(), r#"(subpath "/a\"b\\c")"#);
    }

    #[test]
    fn the_folders_that_lead_to_a_protected_path_are_pinned_up_to_the_writable_place() {
        let mut approved = rules(ShellProfile::Approved);
        approved.writable = vec![PathBuf::from("/ws")];
        approved.read_only = vec![PathBuf::from("/ws/sub/.git/hooks"), PathBuf::from("/ws/.tandem")];
        assert_eq!(approved.pinned_folders(), vec![PathBuf::from("/ws/sub"), PathBuf::from("/ws/sub/.git")]);
    }

    // Unix only: Seatbelt is macOS's: its paths are Unix paths, and it runs git, which the Wine prefix here does not have.
    #[cfg(unix)]
    #[test]
    fn a_repositorys_protected_paths_are_read_only_for_approved_commands_and_nothing_is_writable_unasked() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap().join("repo");
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
        let secret = root.join("secret.env");
        let denied = secret.clone();
        let denies = Denies { read: Arc::new(move || vec![denied.clone()]), edit: Arc::new(Vec::new) };
        let sandbox = Seatbelt::new(Found { path: PathBuf::from(SANDBOX_EXEC) }, &SandboxSettings::default(), denies);
        let roots = [root.clone()];
        let argv = [OsString::from("bash"), OsString::from("-c"), OsString::from("true")];
        let temp = dir.path().canonicalize().unwrap().join("own-temp");

        let approved = sandbox.rules(&ShellLaunch { profile: ShellProfile::Approved, network: false, roots: &roots, argv: &argv }, &temp).unwrap();
        assert!(approved.writable.contains(&root));
        for protected in [".git/hooks", ".git/config", ".tandem", ".vscode", ".mcp.json", ".envrc", ".git/commondir"] {
            assert!(approved.read_only.contains(&root.join(protected)), "{protected} not read-only: {:?}", approved.read_only);
        }
        assert_eq!(approved.pinned, vec![root.join(".git")]);
        assert!(approved.hidden.contains(&secret) && approved.hidden.contains(&root.join(".tandem/settings.local.json")));
        assert_eq!(approved.network, Network::LocalSockets);
        let with_network = sandbox.rules(&ShellLaunch { profile: ShellProfile::Approved, network: true, roots: &roots, argv: &argv }, &temp).unwrap();
        assert_eq!(with_network.network, Network::Full);

        let unasked = sandbox.rules(&ShellLaunch { profile: ShellProfile::Unasked, network: true, roots: &roots, argv: &argv }, &temp).unwrap();
        assert_eq!(unasked.writable, vec![temp.clone()]);
        assert!(unasked.read_only.is_empty());
        assert_eq!(unasked.network, Network::None);
        assert!(unasked.limit_services);
        assert!(unasked.hidden.contains(&secret));

        // The command line: sandbox-exec, the profile, its own TMPDIR, the command.
        let confined = sandbox.confine(&ShellLaunch { profile: ShellProfile::Unasked, network: false, roots: &roots, argv: &argv }).unwrap();
        assert_eq!(confined.program, PathBuf::from(SANDBOX_EXEC));
        assert_eq!(confined.args[0], "-p");
        assert!(confined.args[1].to_string_lossy().starts_with("(version 1)\n"));
        assert_eq!(confined.args[2], "/usr/bin/env");
        assert!(confined.args[3].to_string_lossy().starts_with("TMPDIR=/"));
        assert_eq!(&confined.args[4..], &argv[..]);
        assert!(!confined.network);
    }

    #[test]
    fn a_missing_workspace_folder_is_a_reason_not_to_run() {
        let sandbox = Seatbelt::new(Found { path: PathBuf::from(SANDBOX_EXEC) }, &SandboxSettings::default(), Denies::none());
        let dir = tempfile::tempdir().unwrap();
        let roots = [dir.path().join("gone")];
        let argv = [OsString::from("true")];
        let err = sandbox.confine(&ShellLaunch { profile: ShellProfile::Approved, network: false, roots: &roots, argv: &argv }).err().unwrap();
        assert!(err.contains("cannot be resolved"), "{err}");
    }

    #[test]
    fn the_self_check_passes_only_when_every_rule_held() {
        let program = Path::new(SANDBOX_EXEC);
        let held = ProbeReport { unasked_ran: true, approved_ran: true, wrote_workspace: true, ..ProbeReport::default() };
        assert_eq!(held.verdict(program), Ok(()));
        let leaky = ProbeReport { connected: true, moved_git: true, ..held.clone() };
        assert_eq!(
            leaky.verdict(program).unwrap_err(),
            "the Seatbelt profile (/usr/bin/sandbox-exec) did not hold on this macOS: its self-check was allowed a network connection, renaming .git"
        );
        let stuck = ProbeReport { wrote_workspace: false, ..held.clone() };
        assert!(stuck.verdict(program).unwrap_err().contains("kept an approved command from writing the workspace"));
    }

    /// A stand-in for `sandbox-exec` (a shell script) in a folder of its own.
    #[cfg(unix)]
    fn fake_sandbox_exec(dir: &Path, script: &str) -> PathBuf {
        let path = dir.join("sandbox-exec");
        std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
        crate::platform::set_mode(&path, 0o755).unwrap();
        path
    }

    #[cfg(unix)]
    #[test]
    fn a_missing_or_refusing_sandbox_exec_means_no_sandbox_and_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let missing = probe_with(&dir.path().join("sandbox-exec")).unwrap_err();
        assert!(missing.contains("sandbox-exec is missing"), "{missing}");
        let refusing = fake_sandbox_exec(dir.path(), "echo 'sandbox-exec: unbound variable: network-outbound' >&2; exit 65");
        let refused = probe_with(&refusing).unwrap_err();
        assert!(refused.contains("refused Tandem's Seatbelt profile: sandbox-exec: unbound variable: network-outbound"), "{refused}");
    }

    #[cfg(unix)]
    #[test]
    fn a_sandbox_exec_that_runs_commands_unconfined_fails_its_self_check() {
        let dir = tempfile::tempdir().unwrap();
        // Drops `-p PROFILE` and runs the command as it is.
        let unconfined = fake_sandbox_exec(dir.path(), "shift 2\nexec \"$@\"");
        let err = probe_with(&unconfined).unwrap_err();
        assert!(
            err.contains("did not hold on this macOS: its self-check was allowed a write outside the workspace, a read of a masked file, a network connection, a write into .git/hooks, renaming .git"),
            "{err}"
        );
    }
}
