//! Which settings layer a value came from. A leaf: the permission rules
//! and the hooks carry it (a project's hooks need consent, a rule's message
//! names its file) without reaching up to the settings loader.

/// Where a layer came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    User,
    Project,
    Local,
    Editor,
}

impl Scope {
    /// Project and local files come with the repository: what they run
    /// (hooks, MCP servers) needs the user's consent first.
    pub fn is_project(self) -> bool {
        matches!(self, Scope::Project | Scope::Local)
    }
}
