//! Linux: each command runs under `bwrap` (bubblewrap), started as a
//! process, in new mount, pid and IPC namespaces (and a new network
//! namespace unless network is allowed), with no capabilities (also when
//! Tandem runs as root).
//!
//! The view is built from the outside in, later mounts covering earlier
//! ones: the whole filesystem read-only, a fresh `/dev` and `/proc` (of the
//! new pid namespace, so `/proc/$PPID` is bubblewrap's own process with the
//! command's environment), then what the profile may write, then what stays
//! read-only inside it, then the masks.
//!
//! - Paths are resolved once, here, before bubblewrap starts, and the
//!   resolved paths are bound: a link swapped in afterwards points at a
//!   path that was not bound.
//! - A protected path that does not exist yet (`.tandem/` in a fresh
//!   checkout) is created empty as a mount point, bound read-only, and
//!   removed when the last command using it ends, if it is still empty:
//!   the command cannot create it.
//! - `--die-with-parent` and the pid namespace make the process-group kill
//!   of `run_shell` reach everything: when bubblewrap dies, the namespace's
//!   first process dies and the kernel kills the rest. `--new-session`
//!   keeps a command away from the terminal Tandem runs in.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use super::{Denies, SandboxSettings};
use crate::sync::MutexExt;
use crate::tools::ports::network::{Network, Route};
use crate::tools::ports::shell_sandbox::{Confined, Handed, ShellLaunch, ShellProfile, ShellSandbox, Stopping};

/// Inside each workspace root, what approved commands may not change:
/// what makes git, Tandem, Claude Code, VS Code or an MCP client run code
/// (held read-only also when missing, so it cannot be created).
pub const PROTECTED: &[(&str, Entry)] =
    &[(".git", Entry::Dir), (".tandem", Entry::Dir), (".claude", Entry::Dir), (".vscode", Entry::Dir), (".mcp.json", Entry::File)];

/// More of the protected paths ([`crate::permissions::protected`]) that
/// run code when the folder is opened or entered: read-only when they
/// exist; one an approved command creates is removed when it ends (an
/// empty placeholder `.envrc` would make direnv speak up meanwhile).
/// `.gitmodules` and `.gitattributes` stay writable: `git submodule add`
/// and `git lfs track` write them, and git runs nothing from them alone.
pub const PROTECTED_WHEN_THERE: &[&str] =
    &[".idea", ".zed", ".helix", ".devcontainer", ".envrc", ".nvim.lua", ".nvimrc", ".exrc", ".dir-locals.el"];

/// Inside a `.git` folder, what runs code: its config (`core.fsmonitor`,
/// aliases, filters) and hooks.
pub(super) const GIT_PROTECTED: &[(&str, Entry)] =
    &[("config", Entry::File), ("config.worktree", Entry::File), ("hooks", Entry::Dir), ("commondir", Entry::File), ("gitdir", Entry::File)];

/// In the home folder, where credentials live: masked for unasked commands
/// (an approved `git push` may need `~/.ssh`).
pub const CREDENTIAL_STORES: &[&str] = &[
    ".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".config/gh", ".kube", ".docker", ".netrc", ".git-credentials",
    ".npmrc", ".pypirc", ".cargo/credentials", ".cargo/credentials.toml", ".password-store", ".local/share/keyrings",
];

/// In the home folder, what unasked commands see (read-only): the folders
/// toolchains run from and the caches they read, no more. The rest of the
/// home folder is an empty, read-only folder to them: no settings with
/// keys in them (`~/.tandem`, `~/.claude`), no `~/.pgpass`, no agent
/// sockets, no credential store whatever its name. `sandbox.allowRead` in
/// the user's settings adds folders.
pub const HOME_TOOLCHAINS: &[&str] = &[
    // Rust.
    ".cargo/bin", ".cargo/registry", ".cargo/git", ".rustup",
    // Python.
    ".pyenv", ".local/bin", ".local/lib", ".local/share/uv", ".local/pipx", ".cache/pip", ".cache/uv", ".cache/pypoetry",
    ".conda", "miniconda3", "miniforge3", "anaconda3",
    // JavaScript.
    ".nvm", ".volta", ".bun/bin", ".deno", ".local/share/pnpm", ".npm/_cacache", ".cache/yarn", ".yarn/berry/cache",
    ".cache/node/corepack",
    // Go.
    "go/bin", "go/pkg/mod", ".cache/go-build",
    // Ruby, JVM, .NET, Haskell, OCaml, Lean, Julia, version managers, Nix.
    ".rbenv", ".gem", ".sdkman/candidates", ".m2/repository", ".gradle/caches", ".gradle/wrapper", ".dotnet", ".ghcup",
    ".cabal/bin", ".opam", ".elan", ".juliaup", ".asdf", ".local/share/mise", ".nix-profile",
];

/// Inside each workspace root, files every command reads as empty: the
/// local settings, where the docs say to keep keys (`env` with an API key),
/// and Claude Code's.
pub(super) const LOCAL_SETTINGS: &[&str] = &[".tandem/settings.local.json", ".claude/settings.local.json"];

/// Sockets of services that act outside the sandbox on a command's
/// behalf, masked for unasked commands: the system bus, systemd's private
/// socket, container engines (`docker run -v /:/host` writes anywhere),
/// snapd, and every user's runtime folder under `/run/user` (root could
/// reach them all). The user's runtime folder ([`runtime_dirs`], also
/// where `$XDG_RUNTIME_DIR` says) holds the session bus and
/// systemd's user manager (`systemd-run --user` starts any program
/// unconfined), the keyring and the gpg and ssh agents. An approved
/// command keeps them: `git push` may need the ssh agent or the keyring,
/// `docker build` the engine.
const SERVICE_SOCKETS: &[&str] =
    &["/run/dbus", "/var/run/dbus", "/run/systemd/private", "/run/docker.sock", "/var/run/docker.sock", "/run/podman", "/run/containerd", "/run/snapd.socket", "/run/snapd-snap.socket", "/run/user"];

/// Where the proxy's socket and the bridge are seen inside the sandbox.
const PROXY_SOCKET: &str = "/dev/tandem-network.sock";
const BRIDGE_PROGRAM: &str = "/dev/tandem-network-bridge";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    File,
    Dir,
}

/// A working bubblewrap.
#[derive(Debug, Clone)]
pub struct Found {
    pub path: PathBuf,
    pub version: String,
}

pub struct Bubblewrap {
    found: Found,
    /// The run's network lists, and the proxy that applies them, started
    /// for the first command that needs it and kept while a command (or a
    /// background task) holds it.
    network: Arc<Network>,
    proxy: OnceLock<Result<Arc<super::proxy::Proxy>, String>>,
    allow_write: Vec<PathBuf>,
    /// What unasked commands see of the home folder: [`HOME_TOOLCHAINS`]
    /// and `sandbox.allowRead`, as paths in it.
    home_shown: Vec<PathBuf>,
    denies: Denies,
    home: Option<PathBuf>,
}

impl Bubblewrap {
    pub fn new(found: Found, settings: &SandboxSettings, denies: Denies) -> Self {
        let home = dirs::home_dir().and_then(|h| h.canonicalize().ok());
        let allow_write = settings
            .allow_write
            .iter()
            .filter_map(|p| match (p.strip_prefix("~"), &home) {
                (Some(rest), Some(home)) => Some(home.join(rest.trim_start_matches('/'))),
                (Some(_), None) => None,
                (None, _) => Some(PathBuf::from(p)),
            })
            .collect();
        let home_shown = match &home {
            Some(home) => HOME_TOOLCHAINS
                .iter()
                .map(|p| p.to_string())
                .chain(settings.allow_read.iter().filter_map(|p| p.strip_prefix("~/").map(String::from)))
                .map(|p| home.join(p.trim_start_matches('/')))
                .collect(),
            None => Vec::new(),
        };
        let network = Arc::new(Network::new(settings.network.clone()));
        Bubblewrap { found, network, proxy: OnceLock::new(), allow_write, home_shown, denies, home }
    }

    /// The same, sharing the run's network lists (and their record of
    /// refused hosts) with the run's other tools.
    pub fn with_network(self, network: Arc<Network>) -> Self {
        Bubblewrap { network, proxy: OnceLock::new(), ..self }
    }

    /// How `launch` reaches the network: unasked commands never do.
    fn route(&self, launch: &ShellLaunch<'_>) -> Route {
        match launch.profile {
            // A contained command runs unasked: it reaches no network,
            // the lists' hosts included.
            ShellProfile::Unasked | ShellProfile::Contained => Route::None,
            ShellProfile::Approved => self.network.policy.route(launch.network),
        }
    }

    /// The proxy, started on first use.
    fn proxy(&self) -> Result<Arc<super::proxy::Proxy>, String> {
        self.proxy
            .get_or_init(|| {
                super::proxy::Proxy::start(Arc::clone(&self.network)).map(Arc::new).map_err(|e| format!("the sandbox's network proxy cannot start: {e}"))
            })
            .clone()
    }

    /// Route a command through the proxy: its socket and the bridge bound
    /// into `/dev` (a fresh folder of the sandbox's own, which the command
    /// cannot change), the proxy variables set, and the bridge run first.
    fn proxied(&self, args: &mut Args, proxy: &super::proxy::Proxy) -> Result<Vec<OsString>, String> {
        let bridge = std::env::current_exe().map_err(|e| format!("the sandbox's network bridge (Tandem's own program) cannot be found: {e}"))?;
        args.pair("--ro-bind", proxy.socket(), PROXY_SOCKET);
        args.pair("--ro-bind", &bridge, BRIDGE_PROGRAM);
        let http = format!("http://127.0.0.1:{}", super::bridge::PORT);
        let socks = format!("socks5h://127.0.0.1:{}", super::bridge::PORT);
        for (name, value) in [("HTTP_PROXY", &http), ("HTTPS_PROXY", &http), ("ALL_PROXY", &socks)] {
            args.flags(&["--setenv", name, value, "--setenv", &name.to_ascii_lowercase(), value]);
        }
        // A host the user's environment lets bypass a proxy has no other
        // way out here: it would only fail.
        args.flags(&["--unsetenv", "NO_PROXY", "--unsetenv", "no_proxy"]);
        Ok([BRIDGE_PROGRAM, super::bridge::SUBCOMMAND, PROXY_SOCKET, "--"].iter().map(OsString::from).collect())
    }

    /// Find `bwrap` and check that it can build a sandbox here (once per
    /// process). `Err` says why not, in plain words.
    pub fn probe() -> Result<Found, String> {
        static PROBED: OnceLock<Result<Found, String>> = OnceLock::new();
        PROBED.get_or_init(probe_now).clone()
    }

    fn arguments(&self, launch: &ShellLaunch<'_>, placeholders: &mut Placeholders) -> Result<Vec<OsString>, String> {
        let roots: Vec<PathBuf> = launch
            .roots
            .iter()
            .map(|root| root.canonicalize().map_err(|e| format!("the workspace folder {} cannot be resolved: {e}", root.display())))
            .collect::<Result<_, _>>()?;
        let Some(cwd) = roots.first().cloned() else { return Err("the run has no workspace folder".into()) };
        let route = self.route(launch);
        let proxy = match route {
            Route::Proxied => Some(self.proxy()?),
            _ => None,
        };
        let mut args = Args::default();
        // Run by root, bubblewrap keeps every capability unless told: the
        // command could remount `/` writable and write anywhere.
        args.flags(&["--die-with-parent", "--new-session", "--cap-drop", "ALL", "--unshare-pid", "--unshare-ipc", "--unshare-cgroup-try"]);
        if route != Route::Direct {
            args.flags(&["--unshare-net"]);
        }
        args.pair("--ro-bind", "/", "/");
        args.one("--dev", "/dev");
        args.one("--proc", "/proc");
        // Unasked commands: what they see of the home folder (`None`: all
        // of it, since a workspace root holds it).
        let mut home_view: Option<HomeView> = None;
        let mut edit_denied: Vec<PathBuf> = Vec::new();
        // Contained commands see the home folder and the services as
        // unasked ones do, and write the workspace as approved ones do.
        let contained = launch.profile == ShellProfile::Contained;
        match launch.profile {
            ShellProfile::Unasked | ShellProfile::Contained => {
                args.one("--tmpfs", "/tmp");
                args.flags(&["--setenv", "TMPDIR", "/tmp"]);
                // The private /tmp covers whatever lives under it: the
                // workspace comes back, read-only.
                let under_tmp = roots.iter().filter(|p| p.starts_with("/tmp") && p.as_path() != Path::new("/tmp"));
                for path in under_tmp {
                    args.pair("--ro-bind-try", path, path);
                }
                if let Some(home) = self.home.as_ref().filter(|home| home.as_path() != Path::new("/") && !roots.iter().any(|r| home.starts_with(r))) {
                    let view = HomeView::new(home, &self.home_shown, &roots, &never_shown(home));
                    view.mount(&mut args);
                    home_view = Some(view);
                }
            }
            ShellProfile::Approved => {}
        }
        match launch.profile {
            ShellProfile::Unasked => {}
            ShellProfile::Approved | ShellProfile::Contained => {
                // A contained command writes the workspace only: its /tmp
                // is the private one above, `allowWrite` is not bound.
                let allow_write: &[PathBuf] = if contained { &[] } else { &self.allow_write };
                let temps = if contained { Vec::new() } else { temp_dirs() };
                for root in &roots {
                    args.pair("--bind", root, root);
                }
                for temp in &temps {
                    args.pair("--bind-try", temp, temp);
                }
                for path in allow_write {
                    if let Ok(path) = path.canonicalize() {
                        args.pair("--bind-try", &path, &path);
                    }
                }
                // What the command may write: the roots, the temp folders,
                // allowWrite (resolved as bound above).
                let allowed: Vec<PathBuf> = allow_write.iter().filter_map(|p| p.canonicalize().ok()).collect();
                let writable = |path: &Path| roots.iter().chain(&temps).chain(&allowed).any(|w| path.starts_with(w));
                // What edit-deny rules cover stays as it is: bound read-only
                // (a file that is a mount point cannot be removed or
                // renamed either); a literal path that does not exist yet
                // in the workspace is held as a placeholder, as protected
                // paths are, so it cannot be created.
                for path in (self.denies.edit)() {
                    let inside = roots.iter().any(|root| path.starts_with(root));
                    if !inside && !writable(&path) && !allow_write.iter().any(|place| path.starts_with(place)) {
                        continue; // read-only for the command anyway
                    }
                    let exists = std::fs::symlink_metadata(&path).is_ok();
                    if !exists && inside && path.parent().is_some_and(Path::is_dir) {
                        match placeholders.hold(&path, Entry::File) {
                            Ok(()) => {}
                            Err(err) if err.kind() == std::io::ErrorKind::ReadOnlyFilesystem => continue,
                            Err(err) => return Err(format!("cannot keep {} from being created: {err}", path.display())),
                        }
                    }
                    edit_denied.push(path);
                }
                let repositories = super::git::repositories(&roots, &writable);
                placeholders.repositories = Some(super::git::before(&roots));
                // Every file git reads config from that the command could
                // write — what a repository's config includes (a shared
                // `tools/gitconfig`), conditionally or not — is held like
                // `.git/config` (below); one that is missing, too, where its
                // folder is there (else it must not appear). The folders
                // between it and the writable place it is in are pinned,
                // as `.git` is: `mv tools old && mkdir tools` would put a
                // new file where git looks. Before the `.git` folders are
                // pinned: a folder bound later would cover their mounts.
                let bases: Vec<&PathBuf> = roots.iter().chain(&temps).chain(&allowed).collect();
                let mut config_files: Vec<PathBuf> = Vec::new();
                let mut pinned_folders: Vec<PathBuf> = Vec::new();
                for file in super::git::config_files(&roots) {
                    if !writable(&file) || config_files.contains(&file) {
                        continue;
                    }
                    if std::fs::symlink_metadata(&file).is_err() && !file.parent().is_some_and(Path::is_dir) {
                        placeholders.must_not_appear(file);
                        continue;
                    }
                    let Some(base) = bases.iter().filter(|base| file.starts_with(base)).max_by_key(|base| base.as_os_str().len()) else { continue };
                    // Not a folder that holds a writable place (its bind
                    // would cover that one's).
                    let mut folders: Vec<&Path> = file
                        .ancestors()
                        .skip(1)
                        .take_while(|folder| folder != base)
                        .filter(|folder| !bases.iter().any(|place| place.starts_with(folder)))
                        .collect();
                    folders.reverse();
                    for folder in folders {
                        if !pinned_folders.iter().any(|p| p == folder) {
                            args.pair("--bind", folder, folder);
                            pinned_folders.push(folder.to_path_buf());
                        }
                    }
                    config_files.push(file);
                }
                // Each `.git` folder pinned in place (a mount point cannot be
                // renamed or removed), before what stays read-only inside it.
                for pinned in &repositories.pinned {
                    args.pair("--bind", pinned, pinned);
                    placeholders.must_not_appear(pinned.join("commondir"));
                }
                let mut protected: Vec<(PathBuf, Entry)> = roots.iter().flat_map(|root| protected_in(root)).collect();
                for root in &roots {
                    for name in PROTECTED_WHEN_THERE {
                        let path = root.join(name);
                        match std::fs::symlink_metadata(&path) {
                            Ok(meta) => protected.push((path, if meta.is_dir() { Entry::Dir } else { Entry::File })),
                            Err(_) if !allow_write.iter().any(|allowed| path.starts_with(allowed)) => placeholders.must_not_appear(path),
                            Err(_) => {}
                        }
                    }
                }
                for git_dir in &repositories.git_dirs {
                    git_protected(git_dir, &mut protected, 0);
                }
                protected.extend(repositories.hooks_paths.iter().map(|hooks| (hooks.clone(), Entry::Dir)));
                protected.dedup();
                config_files.retain(|file| !protected.iter().any(|(path, _)| path == file));
                let count = protected.len();
                protected.extend(config_files.into_iter().map(|file| (file, Entry::File)));
                for (index, (path, entry)) in protected.into_iter().enumerate() {
                    if allow_write.iter().any(|allowed| path.starts_with(allowed)) {
                        continue;
                    }
                    let entry = match std::fs::symlink_metadata(&path) {
                        Ok(meta) if index >= count && meta.is_dir() => Entry::Dir,
                        _ => entry,
                    };
                    match placeholders.hold(&path, entry) {
                        Ok(()) => args.pair("--ro-bind", &path, &path),
                        // On a read-only file system the command cannot
                        // create it either: nothing to protect.
                        Err(err) if err.kind() == std::io::ErrorKind::ReadOnlyFilesystem => {}
                        // Nor in a folder Tandem may not write: an include
                        // git names there.
                        Err(err) if index >= count && err.kind() == std::io::ErrorKind::PermissionDenied => {}
                        Err(err) => return Err(format!("cannot protect {}: {err}", path.display())),
                    }
                }
            }
        }
        let mut masked: Vec<PathBuf> = (self.denies.read)();
        // Tandem's own folders and the local settings, from every command:
        // no command needs another workspace's conversations, the consent
        // and trust stores or the keys in the settings (not a folder that
        // holds the workspace, though).
        if let Some(home) = &self.home {
            masked.extend(tandem_folders(home).into_iter().filter(|folder| !roots.iter().any(|root| root.starts_with(folder))));
        }
        for root in &roots {
            masked.extend(LOCAL_SETTINGS.iter().map(|name| root.join(name)));
        }
        if launch.profile != ShellProfile::Approved {
            if let Some(home) = &self.home {
                // Where the home folder is shown (a workspace root holds
                // it) or bound back in part, the credential stores in it.
                masked.extend(CREDENTIAL_STORES.iter().map(|store| home.join(store)));
            }
            // Not a folder that holds the workspace (a checkout on a gvfs
            // mount lives in the runtime folder).
            let services = SERVICE_SOCKETS.iter().map(PathBuf::from).chain(runtime_dirs()).filter_map(|path| path.canonicalize().ok());
            masked.extend(services.filter(|path| !roots.iter().any(|root| root.starts_with(path))));
            // Every socket a server listens on in what is shown of the
            // home folder or in the workspace: a service acting for the
            // user (an ssh or password manager's agent, a database) is not
            // a command's to talk to unasked.
            let home = self.home.as_deref();
            masked.extend(bound_sockets().into_iter().filter(|socket| {
                roots.iter().any(|root| socket.starts_with(root)) || home.is_some_and(|home| socket.starts_with(home))
            }));
        }
        for (path, _) in outermost(edit_denied) {
            args.pair("--ro-bind", &path, &path);
        }
        let mut masks = outermost(masked);
        if let Some(view) = &home_view {
            // Of the home folder only what is bound back is there: masks
            // elsewhere in it are not needed, and a mask inside a folder
            // bound from elsewhere (`~/.cargo` a link to `/opt/cargo`) is
            // also needed where the folder is seen.
            masks = view.masks_seen(masks);
        }
        for (resolved, is_dir) in masks {
            if is_dir {
                args.one("--tmpfs", &resolved);
                args.one("--remount-ro", &resolved);
            } else {
                // A socket, like a file, is covered by /dev/null.
                args.pair("--ro-bind", "/dev/null", &resolved);
            }
        }
        if let Some(view) = &home_view {
            // Last: every mount point in the empty home is made by now.
            args.one("--remount-ro", &view.home);
        }
        let bridge = match &proxy {
            Some(proxy) => self.proxied(&mut args, proxy)?,
            None => Vec::new(),
        };
        args.one("--chdir", &cwd);
        args.flags(&["--"]);
        args.0.extend(bridge);
        args.0.extend(launch.argv.iter().cloned());
        Ok(args.0)
    }
}

impl ShellSandbox for Bubblewrap {
    fn describe(&self) -> String {
        format!("bubblewrap {} at {}", self.found.version, self.found.path.display())
    }

    fn confine(&self, launch: &ShellLaunch<'_>) -> Result<Confined, String> {
        let mut placeholders = Placeholders::default();
        let args = self.arguments(launch, &mut placeholders)?;
        let route = self.route(launch);
        // The proxy lives as long as a command routed through it, a
        // background task too.
        let proxy = match route {
            Route::Proxied => self.proxy.get().and_then(|started| started.clone().ok()),
            _ => None,
        };
        let (args, handed) = with_seccomp(args)?;
        Ok(Confined {
            program: self.found.path.clone(),
            args,
            // What the machine's network is to it (a server it starts
            // is reachable from the machine): not so through the proxy,
            // whose namespace is its own.
            network: route == Route::Direct,
            // The command runs under bubblewrap's init (pid 1 of its
            // namespace), which a SIGTERM from outside does not stop:
            // waiting a grace period for it would outlast a front end
            // that exits on cancel (ACP's client gone), leaving the
            // command running. Killed, its namespace dies with it.
            stopping: Stopping::AtOnce,
            handed,
            guard: Box::new((placeholders, proxy)),
        })
    }

    fn contains_processes(&self) -> bool {
        // --unshare-pid and --die-with-parent: the command's processes
        // (double forks and setsid too) are bubblewrap's descendants in
        // the namespace, and all end when it does.
        true
    }

    fn explain_failure(&self, profile: ShellProfile, output: &str) -> Vec<String> {
        let mut notes = Vec::new();
        if output.contains("bwrap: ") {
            notes.push("The sandbox (bubblewrap) could not set up the command: see its message above.".to_string());
        }
        // A host the proxy refused: curl says only "CONNECT tunnel failed,
        // response 403", so the hosts refused so far are named.
        let refused = self.network.refused_hosts();
        let mentioned = refused.iter().any(|host| output.contains(host.as_str())) || output.contains("403") || output.contains("SOCKS5");
        if profile == ShellProfile::Approved && !refused.is_empty() && mentioned {
            notes.push(format!(
                "The sandbox lets approved commands reach only the hosts the settings' sandbox.network lists, through Tandem's proxy; in this run it refused: {}. Only the user can let a host through (\"sandbox\": {{\"network\": {{\"allow\": [...]}}}} in ~/.tandem/settings.json): tell them which host the task needs, or do without it.",
                refused.join(", ")
            ));
        }
        if output.contains("Read-only file system") {
            notes.push(match profile {
                ShellProfile::Unasked => "The command ran unasked, in a read-only sandbox (it may write only under $TMPDIR). A command that writes files must be approved by the user: it is asked when it is not judged read-only, or runs in the acceptEdits and bypassPermissions modes.".to_string(),
                ShellProfile::Contained => "The command ran without a question because the sandbox contains it: it may write only inside the workspace (and a private $TMPDIR), and sees of the home folder only the toolchains. If it must write or read elsewhere, tell the user what and where.".to_string(),
                ShellProfile::Approved => format!(
                    "The sandbox lets commands write only inside the workspace, temp folders and the settings' sandbox.allowWrite; {} (and every file git reads config from, such as one .git/config includes) stay read-only. To let it write elsewhere, the user adds the folder to \"sandbox\": {{\"allowWrite\": [...]}}.",
                    protected_names()
                ),
            });
        }
        notes
    }
}

/// bubblewrap's arguments with the seccomp filter ([`super::seccomp`]),
/// handed to it on its own descriptor, where there is one for this
/// machine.
#[cfg(target_os = "linux")]
fn with_seccomp(args: Vec<OsString>) -> Result<(Vec<OsString>, Option<Handed>), String> {
    match super::seccomp::handed()? {
        Some(handed) => {
            let mut out: Vec<OsString> = vec!["--seccomp".into(), handed.at.to_string().into()];
            out.extend(args);
            Ok((out, Some(handed)))
        }
        None => Ok((args, None)),
    }
}

#[cfg(not(target_os = "linux"))]
fn with_seccomp(args: Vec<OsString>) -> Result<(Vec<OsString>, Option<Handed>), String> {
    Ok((args, None))
}

/// The protected paths as the model is told them: ".git/config,
/// .git/hooks, .tandem/, … and .mcp.json".
pub(super) fn protected_names() -> String {
    let mut names: Vec<String> = Vec::new();
    for (name, entry) in PROTECTED {
        if *name == ".git" {
            names.extend(GIT_PROTECTED.iter().filter(|(n, _)| *n != "config.worktree").map(|(n, _)| format!(".git/{n}")));
        } else {
            names.push(if *entry == Entry::Dir { format!("{name}/") } else { (*name).to_string() });
        }
    }
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => names.join(""),
    }
}

#[derive(Default)]
struct Args(Vec<OsString>);

impl Args {
    fn flags(&mut self, flags: &[&str]) {
        self.0.extend(flags.iter().map(OsString::from));
    }
    fn one(&mut self, flag: &str, path: impl AsRef<Path>) {
        self.0.push(flag.into());
        self.0.push(path.as_ref().into());
    }
    fn pair(&mut self, flag: &str, from: impl AsRef<Path>, to: impl AsRef<Path>) {
        self.0.push(flag.into());
        self.0.push(from.as_ref().into());
        self.0.push(to.as_ref().into());
    }
}

/// What an unasked command sees of the home folder: an empty folder, with
/// the toolchain folders and the workspace roots in it bound back
/// read-only.
struct HomeView {
    home: PathBuf,
    /// Bound back: where it is seen (in the home folder), and what is
    /// bound there (the resolved folder).
    binds: Vec<(PathBuf, PathBuf)>,
}

impl HomeView {
    /// `shown`: paths in the home folder to bind back where they exist;
    /// none that resolves into a place in `never` (a link from
    /// `~/.cargo/bin` to `~/.ssh`).
    fn new(home: &Path, shown: &[PathBuf], roots: &[PathBuf], never: &[PathBuf]) -> HomeView {
        let never: Vec<PathBuf> = never.iter().filter_map(|p| p.canonicalize().ok()).collect();
        let mut binds: Vec<(PathBuf, PathBuf)> = Vec::new();
        let mut candidates: Vec<&PathBuf> = shown.iter().collect();
        // Outer folders first: a folder inside one already bound is in it.
        candidates.sort();
        for seen in candidates {
            if !seen.starts_with(home) || binds.iter().any(|(outer, _)| seen.starts_with(outer)) {
                continue;
            }
            let Ok(resolved) = seen.canonicalize() else { continue };
            if never.iter().any(|n| resolved.starts_with(n)) {
                tracing::warn!(path = %seen.display(), "not showing it to unasked commands: it leads into a folder they must not see");
                continue;
            }
            binds.push((seen.clone(), resolved));
        }
        for root in roots.iter().filter(|root| root.starts_with(home)) {
            binds.push((root.clone(), root.clone()));
        }
        HomeView { home: home.to_path_buf(), binds }
    }

    fn mount(&self, args: &mut Args) {
        args.one("--tmpfs", &self.home);
        for (seen, resolved) in &self.binds {
            args.pair("--ro-bind-try", resolved, seen);
        }
    }

    /// The masks, as the command sees them: those in the home folder only
    /// where something is bound back, and each inside a bound folder also
    /// where that folder is seen.
    fn masks_seen(&self, masks: Vec<(PathBuf, bool)>) -> Vec<(PathBuf, bool)> {
        let mut out = Vec::new();
        for (path, is_dir) in masks {
            for (seen, resolved) in &self.binds {
                if seen != resolved {
                    if let Ok(rest) = path.strip_prefix(resolved) {
                        out.push((seen.join(rest), is_dir));
                    }
                }
            }
            if !path.starts_with(&self.home) || self.binds.iter().any(|(seen, _)| path.starts_with(seen)) {
                out.push((path, is_dir));
            }
        }
        out.sort();
        out.dedup();
        out
    }
}

/// Tandem's own folders: the user's settings (`~/.tandem`), the saved
/// threads of every workspace with their checkpoints, the consent and
/// trust stores, the tool results. No command sees them.
pub(super) fn tandem_folders(home: &Path) -> Vec<PathBuf> {
    let mut out = vec![home.join(".tandem")];
    let data_home = crate::environment::var("XDG_DATA_HOME").filter(|dir| dir.starts_with('/')).map(PathBuf::from);
    let folders = [data_home, dirs::data_dir(), dirs::data_local_dir(), dirs::cache_dir(), dirs::config_dir(), dirs::state_dir()];
    out.extend(folders.into_iter().flatten().map(|dir| dir.join("tandem")));
    out
}

/// In the home folder, what unasked commands never see, even where a
/// folder of it is shown: Tandem's folders and the credential stores.
fn never_shown(home: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = CREDENTIAL_STORES.iter().map(|store| home.join(store)).collect();
    out.extend(tandem_folders(home));
    out
}

/// The paths of every bound unix socket the kernel knows in this network
/// namespace (`/proc/net/unix`): servers listening, and datagram sockets.
fn bound_sockets() -> Vec<PathBuf> {
    let Ok(table) = std::fs::read_to_string("/proc/net/unix") else { return Vec::new() };
    let mut out: Vec<PathBuf> = table.lines().skip(1).filter_map(socket_path).map(PathBuf::from).collect();
    out.sort();
    out.dedup();
    out
}

/// The path of one `/proc/net/unix` line: what follows its seven fields
/// (`Num RefCount Protocol Flags Type St Inode`), if it is a path (an
/// abstract name starts with `@`, an unbound socket has none).
fn socket_path(line: &str) -> Option<&str> {
    let mut rest = line;
    for _ in 0..7 {
        rest = rest.trim_start();
        let end = rest.find(' ')?;
        rest = &rest[end..];
    }
    let path = rest.strip_prefix(' ')?.trim_start();
    path.starts_with('/').then_some(path)
}

/// The temp folders approved commands may write: `/tmp`, `/var/tmp` and
/// `$TMPDIR`, resolved.
pub(super) fn temp_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = ["/tmp", "/var/tmp"].iter().map(PathBuf::from).collect();
    if let Some(tmp) = crate::environment::var("TMPDIR").filter(|t| t.starts_with('/')) {
        dirs.push(PathBuf::from(tmp));
    }
    let mut resolved: Vec<PathBuf> = dirs.into_iter().filter_map(|d| d.canonicalize().ok()).collect();
    resolved.dedup();
    resolved
}

/// The masks to mount, resolved, each once (`/var/run` is a link to
/// `/run`), with whether each is a folder. Masks name what exists: a
/// missing path has nothing to read. A path inside a masked folder is
/// already hidden (and the empty read-only folder has no place to mount
/// it on).
fn outermost(paths: Vec<PathBuf>) -> Vec<(PathBuf, bool)> {
    let mut resolved: Vec<(PathBuf, bool)> =
        paths.into_iter().filter_map(|path| path.canonicalize().ok()).filter_map(|path| std::fs::metadata(&path).ok().map(|m| (path, m.is_dir()))).collect();
    // Parents sort before what they hold.
    resolved.sort();
    resolved.dedup();
    let mut kept: Vec<(PathBuf, bool)> = Vec::new();
    for (path, is_dir) in resolved {
        if !kept.iter().any(|(folder, folder_is_dir)| *folder_is_dir && path.starts_with(folder)) {
            kept.push((path, is_dir));
        }
    }
    kept
}

/// The user's runtime folders: `$XDG_RUNTIME_DIR` and `/run/user/UID`
/// (usually the same folder).
fn runtime_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = crate::platform::user_id().map(|uid| PathBuf::from(format!("/run/user/{uid}"))).into_iter().collect();
    dirs.extend(crate::environment::var("XDG_RUNTIME_DIR").filter(|dir| dir.starts_with('/')).map(PathBuf::from));
    dirs
}

/// The protected paths of one root, existing or not: `.git` itself when
/// it is missing or a file (a folder's config and hooks come from
/// [`super::git::repositories`], with nested repositories'), and the
/// editors' and Tandem's folders.
pub(super) fn protected_in(root: &Path) -> Vec<(PathBuf, Entry)> {
    let mut out = Vec::new();
    for (name, entry) in PROTECTED {
        let path = root.join(name);
        if *name == ".git" && path.is_dir() {
            continue;
        }
        // `.git` as a file (a worktree or submodule) says where the
        // repository is: it stays as it is.
        let entry = match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.is_dir() => Entry::Dir,
            Ok(_) => Entry::File,
            Err(_) => *entry,
        };
        out.push((path, entry));
    }
    out
}

/// A `.git` folder's config and hooks, and those of the submodules kept
/// in `.git/modules` (nested ones too, a few levels deep).
pub(super) fn git_protected(git_dir: &Path, out: &mut Vec<(PathBuf, Entry)>, depth: usize) {
    for (name, entry) in GIT_PROTECTED {
        let path = git_dir.join(name);
        // A missing `config.worktree` is only read when the config (itself
        // protected) enables it; an empty `commondir` or `gitdir` would
        // break git, so only existing ones are held (a `commondir` created
        // in a pinned `.git` is removed when the command ends).
        if matches!(*name, "config.worktree" | "commondir" | "gitdir") && !path.exists() {
            continue;
        }
        out.push((path, *entry));
    }
    if depth >= 4 {
        return;
    }
    let Ok(modules) = std::fs::read_dir(git_dir.join("modules")) else { return };
    for module in modules.flatten().take(64) {
        let path = module.path();
        if path.join("config").is_file() || path.join("HEAD").is_file() {
            git_protected(&path, out, depth + 1);
        }
    }
}

/// Mount points this process created for protected paths that did not
/// exist, with how many commands use each; the last one out removes it.
static HELD: OnceLock<Mutex<HashMap<PathBuf, (Entry, usize)>>> = OnceLock::new();

/// Every path this process ever made a placeholder of (never forgotten:
/// one removed when its command ended was no change of the command's).
static EVER_HELD: OnceLock<Mutex<std::collections::HashSet<PathBuf>>> = OnceLock::new();

/// `path` is a placeholder of Tandem's own, or was one and is gone again:
/// a protected path that did not exist, made an empty mount point while an
/// approved command (a background task, for hours) runs. Its appearing or
/// going is no change of the command's; once it holds something, it is.
pub fn is_placeholder(path: &Path) -> bool {
    if !EVER_HELD.get_or_init(Mutex::default).locked().contains(path) {
        return false;
    }
    match std::fs::symlink_metadata(path) {
        Err(_) => true,
        Ok(meta) if meta.is_file() => meta.len() == 0,
        Ok(meta) if meta.is_dir() => std::fs::read_dir(path).is_ok_and(|mut entries| entries.next().is_none()),
        Ok(_) => false,
    }
}

/// The placeholders one command holds.
#[derive(Default)]
struct Placeholders {
    held: Vec<PathBuf>,
    /// Paths that may not appear while the command runs and are not held
    /// by an empty placeholder (git refuses an empty `commondir`; an empty
    /// `.envrc` would make direnv speak up): one the command created is
    /// removed when it ends.
    absent: Vec<PathBuf>,
    /// The repositories there when an approved command started: one it
    /// makes is disarmed when it ends ([`super::git::disarm_new`]).
    repositories: Option<super::git::Before>,
}

impl Placeholders {
    /// `path` must not exist after the command if it does not now.
    fn must_not_appear(&mut self, path: PathBuf) {
        if std::fs::symlink_metadata(&path).is_err() {
            self.absent.push(path);
        }
    }

    /// Make sure `path` exists to be bound read-only, creating an empty
    /// placeholder if it does not.
    fn hold(&mut self, path: &Path, entry: Entry) -> std::io::Result<()> {
        let mut held = HELD.get_or_init(Mutex::default).locked();
        if let Some((_, users)) = held.get_mut(path) {
            *users += 1;
            self.held.push(path.to_path_buf());
            return Ok(());
        }
        if std::fs::symlink_metadata(path).is_ok() {
            return Ok(());
        }
        let created = match entry {
            Entry::Dir => std::fs::create_dir(path),
            Entry::File => std::fs::OpenOptions::new().write(true).create_new(true).open(path).map(drop),
        };
        match created {
            Ok(()) => {
                EVER_HELD.get_or_init(Mutex::default).locked().insert(path.to_path_buf());
                held.insert(path.to_path_buf(), (entry, 1));
                self.held.push(path.to_path_buf());
                Ok(())
            }
            // Created by someone else in the meantime: bind that.
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
            Err(err) => Err(err),
        }
    }
}

/// Rename `path` to a sibling no one chose (`.envrc.tandem-moved-<time>-<n>`):
/// the same folder, so the same file system and an atomic rename.
fn move_aside(path: &Path) -> std::io::Result<PathBuf> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    for n in 0..100u32 {
        let to = path.with_file_name(format!("{name}.tandem-moved-{stamp}-{n}"));
        if std::fs::symlink_metadata(&to).is_ok() {
            continue;
        }
        std::fs::rename(path, &to)?;
        return Ok(to);
    }
    Err(std::io::Error::new(std::io::ErrorKind::AlreadyExists, "no free name beside it"))
}

impl Drop for Placeholders {
    fn drop(&mut self) {
        if let Some(before) = self.repositories.take() {
            for done in super::git::disarm_new(&before) {
                tracing::warn!("an approved command made a repository whose git would run code later: {done}");
            }
        }
        for path in self.absent.drain(..) {
            if std::fs::symlink_metadata(&path).is_err() {
                continue;
            }
            // Who made it cannot be told: the command, or the user (an
            // IDE making `.idea` while a long command or a background task
            // runs). So it is not deleted but moved aside, where nothing
            // runs it and nothing of it is lost.
            match move_aside(&path) {
                Ok(to) => tracing::warn!(
                    path = %path.display(), moved = %to.display(),
                    "a protected file appeared while an approved command ran (it would run code later): moved aside"
                ),
                Err(err) => tracing::error!(path = %path.display(), %err, "a protected file appeared while an approved command ran and cannot be moved aside"),
            }
        }
        let mut held = HELD.get_or_init(Mutex::default).locked();
        for path in self.held.drain(..) {
            let Some((entry, users)) = held.get_mut(&path) else { continue };
            *users -= 1;
            if *users > 0 {
                continue;
            }
            let entry = *entry;
            held.remove(&path);
            // Only if it is still the empty placeholder: anything written
            // into it since (by Tandem, by the user) stays.
            let _ = match entry {
                Entry::Dir => std::fs::remove_dir(&path),
                Entry::File if std::fs::metadata(&path).is_ok_and(|m| m.is_file() && m.len() == 0) => std::fs::remove_file(&path),
                Entry::File => Ok(()),
            };
        }
    }
}

fn probe_now() -> Result<Found, String> {
    let path_var = crate::environment::var("PATH").unwrap_or_default();
    let Some(path) = std::env::split_paths(&path_var).filter(|dir| dir.is_absolute()).map(|dir| dir.join("bwrap")).find(|p| p.is_file())
    else {
        return Err("bubblewrap (bwrap) is not installed; install it (Debian and Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap; Arch: pacman -S bubblewrap)".into());
    };
    let version = std::process::Command::new(&path)
        .arg("--version")
        .env_clear()
        .output()
        .ok()
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().trim_start_matches("bubblewrap").trim().to_string())
        .unwrap_or_default();
    // The same namespaces and mounts every command uses.
    let trial = std::process::Command::new(&path)
        .args(["--die-with-parent", "--new-session", "--cap-drop", "ALL", "--unshare-pid", "--unshare-ipc", "--unshare-net", "--ro-bind", "/", "/"])
        .args(["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--", "/bin/sh", "-c", ":"])
        .env_clear()
        .stdin(std::process::Stdio::null())
        .output();
    match trial {
        Ok(out) if out.status.success() => Ok(Found { path, version }),
        Ok(out) => Err(format!(
            "bubblewrap ({}) cannot build a sandbox here: {}. User namespaces may be switched off (kernel.unprivileged_userns_clone, or AppArmor's kernel.apparmor_restrict_unprivileged_userns on Ubuntu 24.04), or this runs in a container that forbids them",
            path.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        Err(err) => Err(format!("bubblewrap ({}) cannot be started: {err}", path.display())),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn masks_are_resolved_once_and_none_lies_inside_a_masked_folder() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(base.join("store/inner")).unwrap();
        std::fs::write(base.join("store/inner/key"), "k").unwrap();
        std::fs::write(base.join("secret"), "s").unwrap();
        crate::platform::symlink(base.join("store"), base.join("link")).unwrap();
        let masks = outermost(vec![
            base.join("store/inner/key"),
            base.join("link"),
            base.join("secret"),
            base.join("store"),
            base.join("missing"),
            base.join("store/inner"),
        ]);
        assert_eq!(masks, vec![(base.join("secret"), false), (base.join("store"), true)]);
    }

    #[test]
    fn a_workspace_folder_that_cannot_be_resolved_is_a_reason_not_to_run() {
        let found = Found { path: PathBuf::from("/usr/bin/bwrap"), version: "test".into() };
        let sandbox = Bubblewrap::new(found, &SandboxSettings::default(), Denies::none());
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("gone");
        for profile in [ShellProfile::Unasked, ShellProfile::Approved, ShellProfile::Contained] {
            let launch = ShellLaunch { profile, network: false, roots: std::slice::from_ref(&gone), argv: &[OsString::from("true")] };
            let err = sandbox.confine(&launch).err().unwrap();
            assert!(err.contains("cannot be resolved") && err.contains(&gone.display().to_string()), "{err}");
        }
    }

    #[test]
    fn failures_the_sandbox_caused_are_explained_by_the_sandbox_and_other_ones_are_not() {
        let found = Found { path: PathBuf::from("/usr/bin/bwrap"), version: "test".into() };
        let sandbox = Bubblewrap::new(found, &SandboxSettings::default(), Denies::none());
        let refused = "touch: cannot touch '/home/u/x': Read-only file system";
        expect_test::expect![[r#"["The sandbox lets commands write only inside the workspace, temp folders and the settings' sandbox.allowWrite; .git/config, .git/hooks, .git/commondir, .git/gitdir, .tandem/, .claude/, .vscode/ and .mcp.json (and every file git reads config from, such as one .git/config includes) stay read-only. To let it write elsewhere, the user adds the folder to \"sandbox\": {\"allowWrite\": [...]}."]"#]]
            .assert_eq(&format!("{:?}", sandbox.explain_failure(ShellProfile::Approved, refused)));
        assert!(sandbox.explain_failure(ShellProfile::Unasked, refused)[0].starts_with("The command ran unasked, in a read-only sandbox"));
        let setup = "bwrap: Can't mount proc on /newroot/proc: Operation not permitted";
        assert_eq!(sandbox.explain_failure(ShellProfile::Unasked, setup).len(), 1);
        assert!(sandbox.explain_failure(ShellProfile::Approved, "error[E0308]: mismatched types").is_empty());
    }
}
