//! Which settings layer a value came from. A leaf: the permission rules
//! and the hooks carry it (a project's hooks need consent, a rule's message
//! names its file) without reaching up to the settings loader.

/// Where a layer came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    User,
    Project,
    Local,
    /// The editor's settings as the user set them for every folder (VS
    /// Code's user settings; an LSP client's options that say nothing of
    /// where they came from).
    Editor,
    /// The editor's settings that a folder set (VS Code's workspace and
    /// folder values, a `.code-workspace` file, Neovim's exrc): they come
    /// with the repository, so they may only tighten, never trusted.
    EditorFolder,
}

impl Scope {
    /// Project and local files, and a folder's editor settings, come with
    /// the repository: what they run (hooks, MCP servers) needs the user's
    /// consent first, and they cannot loosen the sandbox.
    pub fn is_project(self) -> bool {
        matches!(self, Scope::Project | Scope::Local | Scope::EditorFolder)
    }
}
