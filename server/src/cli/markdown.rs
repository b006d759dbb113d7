//! Markdown for the terminal, rendered as the answer streams (`tandem ask`
//! and `tandem chat` on a colour terminal; piped or `NO_COLOR` output stays
//! the model's text, byte for byte).
//!
//! The answer arrives in pieces that split lines, words and markup
//! anywhere, so the renderer is a small state machine fed piece by piece:
//! a prose line streams as it comes (its `**bold**` and `` `code` ``
//! switched on and off as their markers pass), while a line whose kind
//! needs the whole line — a code fence, a row of a table, a rule, a line
//! of a code block (highlighted by [`highlight`]) — is held until its
//! newline. Feeding a text in any pieces gives the same output as feeding
//! it whole (a test checks every split).
//!
//! What it renders: headings (bold, the first level underlined, without
//! their `#`s), `-`/`*`/`+` list items as `•`, quotes with a bar, rules,
//! tables with their bars dimmed, fenced code with its fences dimmed and
//! its keywords, strings, numbers and comments coloured (a `diff` block's
//! added and removed lines green and red). Emphasis with one `*` or `_`
//! stays as written: in prose about code (`snake_case`, `a * b`) it is
//! wrong more often than right.
//!
//! The renderer sees the answer only once its controls are made visible
//! ([`Markdown::show`]): the escapes in what it returns are its own.

use super::terminal::{Kind, Shown};

const RESET: &str = "\x1b[0m";
const DIM: &str = "\x1b[2m";
const BOLD_ON: &str = "\x1b[1m";
const BOLD_OFF: &str = "\x1b[22m";
const CODE_ON: &str = "\x1b[36m";
const CODE_OFF: &str = "\x1b[39m";
/// Grey: dim text is lost on some terminals' themes.
const COMMENT: &str = "\x1b[90m";

pub struct Markdown {
    /// The current line's start, held until its kind is known, or all of
    /// it for a line rendered whole.
    head: String,
    /// What the current line is, once known; `None` at a line's start.
    line: Option<Line>,
    /// Inside a fenced code block: its fence and its language.
    fence: Option<Fence>,
    /// Inline state of a streaming line.
    bold: bool,
    code: bool,
    /// A `*` held to see whether the next is a second one (`**`).
    star: bool,
    /// A `**` held to see whether a word follows (it then opens bold).
    opening: bool,
    /// The last character shown of the line (a space at its start): a
    /// `**` after a space does not close bold.
    prev: char,
}

#[derive(Clone, Copy, PartialEq)]
enum Line {
    /// Streams; inline markup rendered as it passes.
    Prose,
    /// A heading: streams in bold; `**` inside it is dropped.
    Heading,
    /// Held to its newline, then rendered whole.
    Whole,
}

struct Fence {
    marker: char,
    len: usize,
    lang: String,
}

impl Default for Markdown {
    fn default() -> Self {
        Markdown { head: String::new(), line: None, fence: None, bold: false, code: false, star: false, opening: false, prev: ' ' }
    }
}

impl Markdown {
    pub fn new() -> Self {
        Markdown::default()
    }

    /// Renders `text`, the next piece of the answer, its controls made
    /// visible first: what can be shown of it now.
    pub fn show(&mut self, text: &str) -> Shown {
        Shown::render(text, Kind::Prose, |visible| self.push(visible))
    }

    /// [`Markdown::flush`], for the terminal: what it holds was made
    /// visible when it was shown.
    pub fn show_held(&mut self) -> Shown {
        Shown::render("", Kind::Prose, |_| self.flush())
    }

    /// Renders `text` (controls already made visible).
    fn push(&mut self, text: &str) -> String {
        let mut out = String::new();
        for c in text.chars() {
            self.char(c, &mut out);
        }
        out
    }

    /// The answer stops here for now (a tool call, the run's end): shows
    /// what is held and closes every style, as if the line ended — but
    /// without its newline. A code block is left too.
    fn flush(&mut self) -> String {
        let mut out = String::new();
        match self.line {
            None | Some(Line::Whole) => {
                let head = std::mem::take(&mut self.head);
                if !head.is_empty() {
                    self.whole_line(&head, &mut out);
                }
            }
            Some(kind) => self.end_inline(kind, &mut out),
        }
        *self = Markdown::default();
        out
    }

    fn char(&mut self, c: char, out: &mut String) {
        match self.line {
            None => {
                if c == '\n' {
                    let head = std::mem::take(&mut self.head);
                    self.whole_line(&head, out);
                    out.push('\n');
                    return;
                }
                self.head.push(c);
                if let Some(kind) = self.classify() {
                    self.line = Some(kind);
                    if kind != Line::Whole {
                        let head = std::mem::take(&mut self.head);
                        self.start_inline(kind, &head, out);
                    }
                }
            }
            Some(Line::Whole) => {
                if c == '\n' {
                    let head = std::mem::take(&mut self.head);
                    self.whole_line(&head, out);
                    out.push('\n');
                    self.line = None;
                } else {
                    self.head.push(c);
                }
            }
            Some(kind) => {
                if c == '\n' {
                    self.end_inline(kind, out);
                    out.push('\n');
                    self.line = None;
                } else {
                    self.inline(c, kind, out);
                }
            }
        }
    }

    /// The kind of the line begun in `head`, or `None` while its first
    /// characters could still make it another.
    fn classify(&self) -> Option<Line> {
        if self.fence.is_some() {
            return Some(Line::Whole);
        }
        let text = self.head.trim_start();
        let mut chars = text.chars();
        let first = chars.next()?;
        match first {
            '#' => {
                let hashes = text.chars().take_while(|&c| c == '#').count();
                match text[hashes..].chars().next() {
                    None => None,
                    Some(' ') if hashes <= 6 => Some(Line::Heading),
                    Some(_) => Some(Line::Prose),
                }
            }
            // Fences, tables and prose that starts with code: rendered whole.
            '`' | '~' | '|' => Some(Line::Whole),
            '-' | '*' | '+' | '_' => match chars.next() {
                None => None,
                // A list item (or a rule spelt `- - -`, rare): streams.
                Some(' ') if first != '_' => Some(Line::Prose),
                // A rule, or `**bold**` at the start: rendered whole.
                Some(_) => Some(Line::Whole),
            },
            _ => Some(Line::Prose),
        }
    }

    /// The start of a streaming line: its marker rendered, then the rest of
    /// `head` as inline text.
    fn start_inline(&mut self, kind: Line, head: &str, out: &mut String) {
        let indent = &head[..head.len() - head.trim_start().len()];
        let text = head.trim_start();
        out.push_str(indent);
        let rest = if kind == Line::Heading {
            let hashes = text.chars().take_while(|&c| c == '#').count();
            out.push_str(if hashes == 1 { "\x1b[1;4m" } else { BOLD_ON });
            &text[hashes + 1..]
        } else if let Some(item) = text.strip_prefix("- ").or_else(|| text.strip_prefix("* ")).or_else(|| text.strip_prefix("+ ")) {
            out.push_str("• ");
            item
        } else if let Some(quoted) = text.strip_prefix('>') {
            out.push_str(DIM);
            out.push('│');
            out.push_str(RESET);
            quoted
        } else {
            text
        };
        for c in rest.chars() {
            self.inline(c, kind, out);
        }
    }

    fn inline(&mut self, c: char, kind: Line, out: &mut String) {
        // In a heading the line is bold already: `**` only goes.
        let styled = kind != Line::Heading;
        if self.opening {
            // `**` opens bold only before a word, as in CommonMark
            // (`3 ** 2` stays as written).
            self.opening = false;
            if c.is_whitespace() {
                out.push_str("**");
            } else {
                self.bold = true;
                if styled {
                    out.push_str(BOLD_ON);
                }
            }
        } else if self.star {
            self.star = false;
            if c == '*' {
                if !self.bold {
                    self.opening = true;
                } else if self.prev.is_whitespace() {
                    out.push_str("**");
                } else {
                    self.bold = false;
                    if styled {
                        out.push_str(BOLD_OFF);
                    }
                }
                return;
            }
            out.push('*');
            self.prev = '*';
        }
        match c {
            '`' => {
                self.code = !self.code;
                out.push_str(if self.code { CODE_ON } else { CODE_OFF });
            }
            '*' if !self.code => self.star = true,
            _ => {
                out.push(c);
                self.prev = c;
            }
        }
    }

    /// The end of a streaming line (or of a table's cell): what is held
    /// goes out, every style is closed.
    fn end_inline(&mut self, kind: Line, out: &mut String) {
        if self.opening {
            out.push_str("**");
        } else if self.star {
            out.push('*');
        }
        if self.bold || self.code || kind == Line::Heading {
            out.push_str(RESET);
        }
        self.star = false;
        self.opening = false;
        self.bold = false;
        self.code = false;
        self.prev = ' ';
    }

    /// A line rendered whole: a fence, a line of a code block, a rule, a
    /// table's row, or a line whose start needed seeing it all.
    fn whole_line(&mut self, line: &str, out: &mut String) {
        let trimmed = line.trim();
        if let Some(fence) = &self.fence {
            let closes = trimmed.len() >= fence.len && trimmed.chars().all(|c| c == fence.marker);
            if closes {
                push_styled(out, DIM, line);
                self.fence = None;
            } else {
                out.push_str(&highlight(line, &fence.lang));
            }
            return;
        }
        let marker = trimmed.chars().next().unwrap_or(' ');
        if marker == '`' || marker == '~' {
            let len = trimmed.chars().take_while(|&c| c == marker).count();
            if len >= 3 {
                let lang = trimmed[len..].split_whitespace().next().unwrap_or("").to_ascii_lowercase();
                self.fence = Some(Fence { marker, len, lang });
                push_styled(out, DIM, line);
                return;
            }
        }
        let rule = trimmed.len() >= 3
            && matches!(marker, '-' | '*' | '_')
            && trimmed.chars().all(|c| c == marker || c == ' ');
        if rule {
            push_styled(out, DIM, &"─".repeat(40));
            return;
        }
        if marker == '|' {
            let separator = trimmed.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '));
            if separator {
                push_styled(out, DIM, line);
                return;
            }
            // Each cell's inline markup rendered; the bars dimmed.
            for (i, cell) in line.split('|').enumerate() {
                if i > 0 {
                    push_styled(out, DIM, "│");
                }
                for c in cell.chars() {
                    self.inline(c, Line::Prose, out);
                }
                self.end_inline(Line::Prose, out);
            }
            return;
        }
        // Prose that started like markup (`**bold**`, `` `code` ``…).
        let kind = self.classify_whole(line);
        self.start_inline(kind, line, out);
        self.end_inline(kind, out);
    }

    fn classify_whole(&self, line: &str) -> Line {
        let text = line.trim_start();
        let hashes = text.chars().take_while(|&c| c == '#').count();
        if (1..=6).contains(&hashes) && text[hashes..].starts_with(' ') {
            Line::Heading
        } else {
            Line::Prose
        }
    }
}

fn push_styled(out: &mut String, style: &str, text: &str) {
    out.push_str(style);
    out.push_str(text);
    out.push_str(RESET);
}

/// `text` with its escape sequences taken out: what the user reads.
pub fn without_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// How a language writes comments and strings, and its keywords.
struct Syntax {
    comment: &'static [&'static str],
    quotes: &'static [char],
    keywords: &'static [&'static str],
}

const RUST: Syntax = Syntax {
    comment: &["//"],
    quotes: &['"'],
    keywords: &[
        "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern", "false", "fn", "for", "if", "impl", "in",
        "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "self", "Self", "static", "struct", "super", "trait", "true",
        "type", "unsafe", "use", "where", "while",
    ],
};
const PYTHON: Syntax = Syntax {
    comment: &["#"],
    quotes: &['"', '\''],
    keywords: &[
        "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif", "else", "except", "False", "finally", "for",
        "from", "global", "if", "import", "in", "is", "lambda", "None", "nonlocal", "not", "or", "pass", "raise", "return", "True", "try",
        "while", "with", "yield",
    ],
};
const SCRIPT: Syntax = Syntax {
    comment: &["//"],
    quotes: &['"', '\'', '`'],
    keywords: &[
        "async", "await", "break", "case", "catch", "class", "const", "continue", "default", "delete", "do", "else", "export", "extends",
        "false", "finally", "for", "from", "function", "if", "import", "in", "instanceof", "interface", "let", "new", "null", "of", "return",
        "switch", "this", "throw", "true", "try", "type", "typeof", "undefined", "var", "void", "while", "yield",
    ],
};
const C_LIKE: Syntax = Syntax {
    comment: &["//"],
    quotes: &['"', '\''],
    keywords: &[
        "break", "case", "char", "class", "const", "continue", "default", "defer", "do", "double", "else", "enum", "false", "float", "for",
        "func", "go", "if", "import", "int", "interface", "long", "map", "new", "nil", "null", "package", "private", "public", "range",
        "return", "static", "struct", "switch", "this", "true", "type", "var", "void", "while",
    ],
};
const SHELL: Syntax = Syntax {
    comment: &["#"],
    quotes: &['"', '\''],
    keywords: &["case", "do", "done", "elif", "else", "esac", "export", "fi", "for", "function", "if", "in", "local", "return", "then", "while"],
};
const LUA: Syntax = Syntax {
    comment: &["--"],
    quotes: &['"', '\''],
    keywords: &[
        "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "if", "in", "local", "nil", "not", "or", "repeat", "return",
        "then", "true", "until", "while",
    ],
};
const DATA: Syntax = Syntax { comment: &["#"], quotes: &['"', '\''], keywords: &["false", "true", "null"] };

fn syntax(lang: &str) -> Option<&'static Syntax> {
    Some(match lang {
        "rust" | "rs" => &RUST,
        "python" | "py" => &PYTHON,
        "javascript" | "js" | "jsx" | "typescript" | "ts" | "tsx" | "json" => &SCRIPT,
        "c" | "h" | "cpp" | "c++" | "java" | "go" | "kotlin" | "swift" | "csharp" | "cs" => &C_LIKE,
        "sh" | "bash" | "shell" | "zsh" | "console" => &SHELL,
        "lua" | "sql" => &LUA,
        "toml" | "yaml" | "yml" | "ini" => &DATA,
        _ => return None,
    })
}

/// One line of a code block in `lang`, coloured: keywords magenta,
/// strings green, numbers yellow, comments grey; a `diff` block's lines by
/// their first character. A language it does not know stays plain.
pub fn highlight(line: &str, lang: &str) -> String {
    if lang == "diff" || lang == "patch" {
        let style = match line.chars().next() {
            Some('+') => "\x1b[32m",
            Some('-') => "\x1b[31m",
            Some('@') => "\x1b[36m",
            _ => return line.to_string(),
        };
        return format!("{style}{line}{RESET}");
    }
    let Some(syntax) = syntax(lang) else { return line.to_string() };
    let mut out = String::with_capacity(line.len() + 16);
    let mut rest = line;
    while let Some(c) = rest.chars().next() {
        if syntax.comment.iter().any(|m| rest.starts_with(m)) {
            push_styled(&mut out, COMMENT, rest);
            break;
        }
        if syntax.quotes.contains(&c) {
            let end = string_end(rest, c);
            push_styled(&mut out, "\x1b[32m", &rest[..end]);
            rest = &rest[end..];
            continue;
        }
        if c.is_alphanumeric() || c == '_' {
            let end = rest.find(|ch: char| !(ch.is_alphanumeric() || ch == '_')).unwrap_or(rest.len());
            let word = &rest[..end];
            if c.is_ascii_digit() {
                push_styled(&mut out, "\x1b[33m", word);
            } else if syntax.keywords.contains(&word) {
                push_styled(&mut out, "\x1b[35m", word);
            } else {
                out.push_str(word);
            }
            rest = &rest[end..];
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// Where the string opened by `quote` at the start of `text` ends (after
/// its closing quote; the line's end when it has none), past escapes.
fn string_end(text: &str, quote: char) -> usize {
    let mut escaped = false;
    for (i, c) in text.char_indices().skip(1) {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == quote {
            return i + c.len_utf8();
        }
    }
    text.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use super::without_escapes as plain;

    fn render(text: &str) -> String {
        let mut md = Markdown::new();
        let mut out = md.push(text);
        out.push_str(&md.flush());
        out
    }

    const ANSWER: &str = "# Plan\n\nI changed **two** files:\n\n- `src/lib.rs`: the *parser*\n* tests\n\n## Code\n\n```rust\nfn main() { let n = 42; // the answer\n    println!(\"hi {n}\");\n}\n```\n\n> quoted `x`\n\n| a | b |\n|---|:-:|\n| **1** | 2 |\n\n---\n```diff\n-old\n+new\n```\nsnake_case and a * b stay, 3 ** 2 too\n";

    #[test]
    fn the_answer_reads_as_markdown_without_its_markup() {
        let shown = plain(&render(ANSWER));
        assert_eq!(
            shown,
            "Plan\n\nI changed two files:\n\n• src/lib.rs: the *parser*\n• tests\n\nCode\n\n```rust\nfn main() { let n = 42; // the answer\n    println!(\"hi {n}\");\n}\n```\n\n│ quoted x\n\n│ a │ b │\n|---|:-:|\n│ 1 │ 2 │\n\n────────────────────────────────────────\n```diff\n-old\n+new\n```\nsnake_case and a * b stay, 3 ** 2 too\n"
        );
    }

    #[test]
    fn styles_where_the_markup_was() {
        let out = render(ANSWER);
        assert!(out.contains("\x1b[1;4mPlan\x1b[0m\n"), "{out:?}");
        assert!(out.contains("I changed \x1b[1mtwo\x1b[22m files"), "{out:?}");
        assert!(out.contains("• \x1b[36msrc/lib.rs\x1b[39m"), "{out:?}");
        assert!(out.contains("\x1b[35mfn\x1b[0m main() { \x1b[35mlet\x1b[0m n = \x1b[33m42\x1b[0m; \x1b[90m// the answer\x1b[0m"), "{out:?}");
        assert!(out.contains("\x1b[32m\"hi {n}\"\x1b[0m"), "{out:?}");
        assert!(out.contains("\x1b[31m-old\x1b[0m\n\x1b[32m+new\x1b[0m"), "{out:?}");
        // Nothing stays styled past a line's end.
        for line in out.lines() {
            let last_on = line.rfind("\x1b[").map(|i| &line[i..]);
            assert!(last_on.is_none_or(|s| s.starts_with(RESET) || s.starts_with(BOLD_OFF) || s.starts_with(CODE_OFF)), "{line:?}");
        }
    }

    #[test]
    fn any_split_of_the_stream_renders_as_the_whole() {
        let whole = render(ANSWER);
        let chars: Vec<(usize, char)> = ANSWER.char_indices().collect();
        for &(at, _) in &chars {
            for step in [1, 3, 7] {
                let mut md = Markdown::new();
                let mut out = md.push(&ANSWER[..at]);
                let mut rest = &ANSWER[at..];
                while !rest.is_empty() {
                    let cut = rest.char_indices().nth(step).map_or(rest.len(), |(i, _)| i);
                    out.push_str(&md.push(&rest[..cut]));
                    rest = &rest[cut..];
                }
                out.push_str(&md.flush());
                assert_eq!(out, whole, "split at {at}, then every {step} characters");
            }
        }
    }

    #[test]
    fn a_flush_shows_the_held_line_and_closes_its_styles() {
        let mut md = Markdown::new();
        assert_eq!(md.push("| a |"), "", "a table's row waits for its end");
        assert_eq!(plain(&md.flush()), "│ a │");
        let mut md = Markdown::new();
        let out = md.push("some **bold");
        assert_eq!(md.flush(), RESET);
        assert_eq!(out, "some \x1b[1mbold");
        // A code block left open ends with the flush: the next text is prose.
        let mut md = Markdown::new();
        md.push("```rust\nlet x = 1;\n");
        md.flush();
        assert_eq!(md.push("let me see\n"), "let me see\n");
    }

    #[test]
    fn a_language_it_does_not_know_stays_plain_and_strings_end_at_their_quote() {
        assert_eq!(highlight("let x = 1;", "brainfuck"), "let x = 1;");
        assert_eq!(highlight(r#"s = "a\"b" + c"#, "python"), "s = \x1b[32m\"a\\\"b\"\x1b[0m + c");
        assert_eq!(highlight("x = 'open", "python"), "x = \x1b[32m'open\x1b[0m");
        assert_eq!(highlight("héllo wörld", "rust"), "héllo wörld");
    }
}
