//! Text from outside Tandem made visible wherever a user reads it: a
//! command the model wants to run, a path, a diff, a command's output, a
//! file's line may hold characters that act instead of showing — an
//! escape sequence (`ESC [2K` erases a terminal's line, OSC 52 sets its
//! clipboard), a carriage return or a backspace (what follows overwrites
//! what came before), a bidi override (the line reads in another order), a
//! zero-width character (two names look the same). [`visible`] writes each
//! as a visible escape (`\x1b`, `\r`, `\u{202e}`), so what is shown is what
//! runs or applies. The terminal writes everything through it
//! (`cli::terminal`), and so does the editor front end for the messages
//! an editor shows as they are (`window/showMessage`, `logMessage`,
//! `showMessageRequest`: VS Code's notifications, Emacs's echo area,
//! Kakoune's info box).

use std::borrow::Cow;

/// How much of the text is kept as it is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    /// Commands, paths, diffs, questions, rules, notices: every character
    /// a terminal acts on or does not show is escaped.
    Exact,
    /// The model's prose: as [`Kind::Exact`], but the zero-width joiner
    /// and non-joiner are kept (emoji sequences and some scripts are
    /// built with them; they move and erase nothing).
    Prose,
}

/// Whether `c` is written as an escape: C0 controls (but the newline and
/// the tab, which multi-line text keeps), DEL and the C1 controls, bidi
/// embeddings, overrides, isolates and marks, zero-width and other
/// invisible format characters, line and paragraph separators, and the
/// tag characters (invisible letters).
pub fn acted_on(c: char, kind: Kind) -> bool {
    match c {
        '\n' | '\t' => false,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => true,
        '\u{200c}' | '\u{200d}' => kind == Kind::Exact,
        '\u{ad}' | '\u{61c}' | '\u{180e}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{206f}' | '\u{feff}' => true,
        '\u{fff9}'..='\u{fffb}' | '\u{e0000}'..='\u{e007f}' => true,
        _ => false,
    }
}

/// `text` with every character a terminal would act on written as a
/// visible escape (`\x1b`, `\r`, `\x7f`, `\u{9b}`, `\u{202e}`). A carriage
/// return right before a newline (a CRLF line end) is kept: it moves the
/// cursor to a line about to end, so it hides nothing.
pub fn visible(text: &str, kind: Kind) -> Cow<'_, str> {
    if !text.chars().any(|c| acted_on(c, kind)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if !acted_on(c, kind) || (c == '\r' && chars.peek() == Some(&'\n')) {
            out.push(c);
            continue;
        }
        match c {
            '\r' => out.push_str("\\r"),
            '\u{0}'..='\u{7f}' => out.push_str(&format!("\\x{:02x}", c as u32)),
            _ => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
    }
    Cow::Owned(out)
}
