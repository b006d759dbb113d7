//! The last suggestions, least recently used first out: the same prefix
//! asked again (the user moved away and back, deleted and retyped) is
//! answered without the model, and so is a prefix that grew by the start
//! of a suggestion — the user typed what was proposed — with the rest of
//! it ("rebased").
//!
//! An entry is found by the document, the cursor's char offset and the
//! text around it (the end of the prefix, the start of the suffix), so a
//! change anywhere near the cursor misses, while one far above it only
//! shifts offsets (and misses too: cheap, and never wrong).

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use super::window::Window;

/// Entries kept.
pub const CAPACITY: usize = 64;
/// How much of the prefix (its end) and the suffix (its start) must match.
const PREFIX_KEY_CHARS: usize = 2048;
const SUFFIX_KEY_CHARS: usize = 512;

#[derive(Debug, Clone)]
struct Entry {
    document: PathBuf,
    cursor: usize,
    prefix_tail: String,
    suffix_head: String,
    completion: String,
}

#[derive(Debug, Default)]
pub struct Cache {
    /// Most recently used first.
    entries: VecDeque<Entry>,
}

fn tail(text: &str, chars: usize) -> &str {
    let start = text.char_indices().rev().nth(chars.saturating_sub(1)).map_or(0, |(i, _)| i);
    if chars == 0 { "" } else { &text[start..] }
}

fn head(text: &str, chars: usize) -> &str {
    let end = text.char_indices().nth(chars).map_or(text.len(), |(i, _)| i);
    &text[..end]
}

impl Cache {
    /// Remember what the model proposed at `window`.
    pub fn insert(&mut self, document: &Path, window: &Window, completion: &str) {
        if completion.is_empty() {
            return;
        }
        let entry = Entry {
            document: document.to_path_buf(),
            cursor: window.cursor,
            prefix_tail: tail(&window.prefix, PREFIX_KEY_CHARS).to_string(),
            suffix_head: head(&window.suffix, SUFFIX_KEY_CHARS).to_string(),
            completion: completion.to_string(),
        };
        self.entries.retain(|e| !(e.document == entry.document && e.cursor == entry.cursor && e.prefix_tail == entry.prefix_tail));
        self.entries.push_front(entry);
        self.entries.truncate(CAPACITY);
    }

    /// What is left of a remembered suggestion at `window`: the same
    /// place, or one the user reached by typing the suggestion's start.
    pub fn get(&mut self, document: &Path, window: &Window) -> Option<String> {
        let found = self.entries.iter().position(|e| {
            let Some(typed_chars) = window.cursor.checked_sub(e.cursor) else { return false };
            if e.document != document {
                return false;
            }
            let Some(typed_end) = e.completion.char_indices().nth(typed_chars).map(|(i, _)| i) else { return false };
            let typed = &e.completion[..typed_end];
            let Some(before) = window.prefix.strip_suffix(typed) else { return false };
            // The window's start may have moved down (a line more typed),
            // so the prefix as it was may reach further back than now.
            let same_prefix = before.ends_with(&e.prefix_tail) || e.prefix_tail.ends_with(before);
            same_prefix && head(&window.suffix, SUFFIX_KEY_CHARS) == e.suffix_head
        })?;
        let entry = self.entries.remove(found)?;
        let typed_chars = window.cursor - entry.cursor;
        let rest_start = entry.completion.char_indices().nth(typed_chars).map_or(entry.completion.len(), |(i, _)| i);
        let rest = entry.completion[rest_start..].to_string();
        self.entries.push_front(entry);
        Some(rest)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use ropey::Rope;

    fn window(text: &str) -> Window {
        let cursor = text[..text.find('|').unwrap()].chars().count();
        Window::around(&Rope::from_str(&text.replace('|', "")), cursor, 10)
    }

    #[test]
    fn the_same_place_is_served_again_and_typing_the_start_rebases() {
        let doc = Path::new("/w/a.py");
        let mut cache = Cache::default();
        cache.insert(doc, &window("def add(a, b):\n    |\nprint(1)\n"), "return a + b");
        assert_eq!(cache.get(doc, &window("def add(a, b):\n    |\nprint(1)\n")).as_deref(), Some("return a + b"));
        assert_eq!(cache.get(doc, &window("def add(a, b):\n    ret|\nprint(1)\n")).as_deref(), Some("urn a + b"));
        // Typed something else, another document, another suffix: a miss.
        assert_eq!(cache.get(doc, &window("def add(a, b):\n    rex|\nprint(1)\n")), None);
        assert_eq!(cache.get(Path::new("/w/b.py"), &window("def add(a, b):\n    |\nprint(1)\n")), None);
        assert_eq!(cache.get(doc, &window("def add(a, b):\n    |\nprint(2)\n")), None);
        // Typed all of it: nothing left to propose.
        assert_eq!(cache.get(doc, &window("def add(a, b):\n    return a + b|\nprint(1)\n")), None);
    }

    #[test]
    fn typing_a_new_line_of_a_multi_line_suggestion_still_rebases() {
        let doc = Path::new("/w/a.py");
        let mut cache = Cache::default();
        cache.insert(doc, &window("x = 1\n|"), "y = 2\nz = 3\n");
        assert_eq!(cache.get(doc, &window("x = 1\ny = 2\n|")).as_deref(), Some("z = 3\n"));
    }

    #[test]
    fn the_least_recently_used_entry_goes_first() {
        let doc = Path::new("/w/a.py");
        let mut cache = Cache::default();
        for i in 0..CAPACITY + 1 {
            cache.insert(doc, &window(&format!("v{i} = |")), &format!("{i}"));
        }
        assert_eq!(cache.len(), CAPACITY);
        assert_eq!(cache.get(doc, &window("v0 = |")), None);
        assert_eq!(cache.get(doc, &window(&format!("v{CAPACITY} = |"))).as_deref(), Some(&*CAPACITY.to_string()));
    }
}
