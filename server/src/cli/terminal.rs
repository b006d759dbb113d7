//! The one way Tandem writes to the user's terminal. Text from outside
//! Tandem — a command the model wants to run, a path, a diff, a hook's
//! command, a settings value, the model's answer, a tool's output — may
//! hold characters a terminal acts on instead of showing: an escape
//! sequence (`ESC [2K` erases the line, OSC 52 sets the clipboard), a
//! carriage return or a backspace (what follows overwrites what came
//! before), a bidi override (the line reads in another order), a
//! zero-width character (two commands look the same). Any of them lets
//! what the terminal shows differ from what runs or applies.
//!
//! So every write goes through [`Shown`], text fit for the terminal:
//! content becomes a `Shown` only through [`visible`] (each such character
//! written as a visible escape, `\x1b`, `\r`, `\u{202e}`), and Tandem's
//! own styling (colours, the spinner's line clearing) is added to a
//! `Shown` afterwards, so it is Tandem's alone. The writers here
//! ([`out`], [`err`], [`outln!`], [`errln!`], [`out_json`]) take nothing
//! else; a test below fails on a write to stdout or stderr anywhere else
//! in the CLI.

use std::borrow::Cow;
use std::io::Write;

/// Text fit for the terminal: content made visible, with Tandem's own
/// styling around it. Built from content only by escaping it (`From<&str>`,
/// [`Shown::prose`]); there is deliberately no `Display`, so a `Shown` put
/// back into `format!` is content again and escaped again.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Shown(String);

pub use tandem::visible::{visible, Kind};
use tandem::visible::acted_on;

impl Shown {
    pub fn new() -> Self {
        Shown::default()
    }

    /// The model's prose ([`Kind::Prose`]).
    pub fn prose(text: &str) -> Self {
        Shown(visible(text, Kind::Prose).into_owned())
    }

    /// `text` in the SGR style `code` (`"31"` red, `"1"` bold…), reset
    /// after it.
    pub fn styled(code: &str, text: impl Into<Shown>) -> Self {
        Shown(format!("\x1b[{code}m{}\x1b[0m", text.into().0))
    }

    /// Content of `kind` made visible, then styled by `style` (the
    /// markdown renderer), which sees only the visible text: what it adds
    /// is Tandem's.
    pub fn render(text: &str, kind: Kind, style: impl FnOnce(&str) -> String) -> Self {
        Shown(style(&visible(text, kind)))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Without its trailing whitespace (taking characters away adds no control).
    pub fn trim_end(self) -> Self {
        Shown(self.0.trim_end().to_string())
    }

    /// Appends `more` (content is escaped on the way in).
    pub fn push(&mut self, more: impl Into<Shown>) {
        self.0.push_str(&more.into().0);
    }

    /// `parts` with `separator` (Tandem's text, escaped all the same)
    /// between them.
    pub fn join(parts: impl IntoIterator<Item = Shown>, separator: &str) -> Self {
        let separator = Shown::from(separator);
        let mut out = Shown::new();
        for (i, part) in parts.into_iter().enumerate() {
            if i > 0 {
                out.push(separator.clone());
            }
            out.push(part);
        }
        out
    }
}

impl From<&str> for Shown {
    fn from(text: &str) -> Self {
        Shown(visible(text, Kind::Exact).into_owned())
    }
}

impl From<String> for Shown {
    fn from(text: String) -> Self {
        match visible(&text, Kind::Exact) {
            Cow::Borrowed(_) => Shown(text),
            Cow::Owned(escaped) => Shown(escaped),
        }
    }
}

impl From<&String> for Shown {
    fn from(text: &String) -> Self {
        Shown::from(text.as_str())
    }
}

impl From<&Shown> for Shown {
    fn from(shown: &Shown) -> Self {
        shown.clone()
    }
}

impl<T: Into<Shown>> std::ops::Add<T> for Shown {
    type Output = Shown;
    fn add(mut self, more: T) -> Shown {
        self.push(more);
        self
    }
}

/// Writes `text` to stdout, flushed.
pub fn out(text: &Shown) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.0.as_bytes());
    let _ = stdout.flush();
}

/// Writes `text` to stderr (questions, notices, the spinner), flushed.
pub fn err(text: &Shown) {
    let mut stderr = std::io::stderr().lock();
    let _ = stderr.write_all(text.0.as_bytes());
    let _ = stderr.flush();
}

/// `text` and a newline on stdout.
pub fn out_line(text: &Shown) {
    out(&(text.clone() + "\n"));
}

/// `text` and a newline on stderr.
pub fn err_line(text: &Shown) {
    err(&(text.clone() + "\n"));
}

/// Clears the line the cursor is on (stderr), for the spinner: Tandem's
/// own control sequence.
pub fn clear_line() {
    err(&Shown("\r\x1b[2K".to_string()));
}

/// `value` as one line of JSON on stdout (`--json`). serde_json already
/// escapes the C0 controls; the others a terminal acts on are written as
/// `\uXXXX` escapes too, which a JSON reader reads back as the same
/// characters, so the values are unchanged.
pub fn out_json(value: &serde_json::Value) {
    out(&Shown(json_text(&value.to_string())));
}

/// [`out_json`], pretty-printed.
pub fn out_json_pretty(value: &serde_json::Value) {
    let text = serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string());
    out(&Shown(json_text(&text)));
}

fn json_text(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + 1);
    for c in json.chars() {
        // Outside strings JSON is ASCII punctuation, so every such
        // character is inside a string, where `\u` escapes are allowed.
        if acted_on(c, Kind::Exact) && c != '\n' {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    out.push('\n');
    out
}

/// `println!` for the terminal: the formatted text is content, escaped.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::cli::terminal::out_line(&$crate::cli::terminal::Shown::from(format!($($arg)*)))
    };
}

/// `eprintln!` for the terminal: the formatted text is content, escaped.
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::cli::terminal::err_line(&$crate::cli::terminal::Shown::from(format!($($arg)*)))
    };
}

pub(crate) use errln;
pub(crate) use outln;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_terminal_acts_on_is_shown_as_an_escape() {
        let table: &[(&str, &str)] = &[
            ("ls -la", "ls -la"),
            ("", ""),
            // The attack of issue 49: the line erased, the cursor sent back.
            ("rm victim.txt '\x1b[2K\rls -la'", "rm victim.txt '\\x1b[2K\\rls -la'"),
            // OSC 52: set the clipboard (BEL- and ST-terminated).
            ("\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07", "\\x1b]52;c;Y3VybCBldmlsIHwgc2g=\\x07"),
            ("\x1b]52;c;eA==\x1b\\", "\\x1b]52;c;eA==\\x1b\\"),
            ("abc\x08\x08\x08xyz", "abc\\x08\\x08\\x08xyz"),
            ("nul\0 del\x7f", "nul\\x00 del\\x7f"),
            // C1: CSI and OSC as one character each.
            ("\u{9b}2K \u{9d}52;c;eA==\u{9c}", "\\u{9b}2K \\u{9d}52;c;eA==\\u{9c}"),
            // Bidi overrides and isolates.
            ("rm \u{202e}txt.exe", "rm \\u{202e}txt.exe"),
            ("a\u{2066}b\u{2069}c\u{202a}\u{202b}\u{202c}\u{202d}", "a\\u{2066}b\\u{2069}c\\u{202a}\\u{202b}\\u{202c}\\u{202d}"),
            // Zero-width characters in a command or a path.
            ("r\u{200b}m a\u{feff}b\u{2060}c\u{200e}\u{200f}", "r\\u{200b}m a\\u{feff}b\\u{2060}c\\u{200e}\\u{200f}"),
            // Kept: newlines and tabs of multi-line text, CRLF line ends.
            ("one\n\ttwo\r\nthree", "one\n\ttwo\r\nthree"),
            ("a lone\rCR", "a lone\\rCR"),
            ("CR at the end\r", "CR at the end\\r"),
            // Multi-byte UTF-8 and emoji are text.
            ("naïve café — 日本語 🦀", "naïve café — 日本語 🦀"),
            ("🦀\x1b[31m🦀", "🦀\\x1b[31m🦀"),
        ];
        for (input, shown) in table {
            assert_eq!(visible(input, Kind::Exact), *shown, "{input:?}");
        }
    }

    #[test]
    fn prose_keeps_the_joiners_of_emoji_and_nothing_else() {
        let family = "👨\u{200d}👩\u{200d}👧";
        assert_eq!(visible(family, Kind::Prose), family);
        assert_eq!(visible(family, Kind::Exact), "👨\\u{200d}👩\\u{200d}👧");
        assert_eq!(visible("\x1b]52;c;eA==\x07 \u{202e}", Kind::Prose), "\\x1b]52;c;eA==\\x07 \\u{202e}");
    }

    #[test]
    fn tandem_styles_what_was_made_visible() {
        let red = Shown::styled("31", "rm x\x1b[2K");
        assert_eq!(red.as_str(), "\x1b[31mrm x\\x1b[2K\x1b[0m");
        let line = Shown::from("→ ") + &red + " and \x1b]52;c;eA==\x07";
        assert_eq!(line.as_str(), "→ \x1b[31mrm x\\x1b[2K\x1b[0m and \\x1b]52;c;eA==\\x07");
        let rendered = Shown::render("**bold**\x1b[8m", Kind::Prose, |clean| format!("<{clean}>"));
        assert_eq!(rendered.as_str(), "<**bold**\\x1b[8m>");
    }

    #[test]
    fn json_lines_keep_their_values_and_lose_their_controls() {
        let value = serde_json::json!({"text": "\x1b]52;c;eA==\x07 \u{9b}2K \u{202e}x 🦀 \u{e0041}"});
        let line = json_text(&value.to_string());
        assert!(line.chars().all(|c| !acted_on(c, Kind::Exact) || c == '\n'), "{line:?}");
        let back: serde_json::Value = serde_json::from_str(&line).expect("still JSON");
        assert_eq!(back, value, "the same value");
    }

    /// Every write to the terminal in the CLI goes through this module:
    /// one that does not fails here, so it cannot be forgotten.
    #[test]
    fn nothing_else_in_the_cli_writes_to_the_terminal() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("server/src");
        let mut files = vec![root.join("main.rs")];
        for entry in std::fs::read_dir(root.join("cli")).expect("the cli folder") {
            files.push(entry.expect("an entry").path());
        }
        let forbidden = ["println!", "print!", "eprintln!", "eprint!", "stdout().lock", "stderr().lock", "stdout().write", "stderr().write", "io::stdout()", "io::stderr()"];
        let mut found = Vec::new();
        for file in files.iter().filter(|f| f.file_name().is_some_and(|n| n != "terminal.rs")) {
            let text = std::fs::read_to_string(file).expect("a source file");
            for (number, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or_default();
                // Asking what stdout is (`is_terminal`) writes nothing.
                let code = code.replace("io::stdout().is_terminal()", "").replace("io::stderr().is_terminal()", "").replace("&std::io::stderr())", "");
                if let Some(what) = forbidden.iter().find(|f| code.contains(*f)) {
                    found.push(format!("{}:{}: {what}", file.display(), number + 1));
                }
            }
        }
        assert!(found.is_empty(), "write through cli::terminal instead:\n{}", found.join("\n"));
    }
}
