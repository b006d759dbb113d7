//! What the built-in tools share, none of it a tool: line endings,
//! numbered lines and diffs ([`text`]), the ignore-aware parallel walk
//! ([`walk`]), freshness refusals ([`change`]), `edit_file`'s matching
//! ladder ([`edit_match`], a file per phase) and the front matter of skill
//! and agent files ([`front_matter`]).

pub(crate) mod change;
pub mod edit_match;
pub mod front_matter;
#[cfg(test)]
pub(crate) mod test_fixture;
pub(crate) mod text;
pub(crate) mod walk;
