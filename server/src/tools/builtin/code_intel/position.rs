//! Where the model points: a path, a 1-based line and a symbol's name
//! (models are bad at columns), turned into an LSP position (UTF-16 code
//! units, LSP's default; the providers convert for servers that negotiated
//! another encoding).

use super::{truncate_chars, MAX_NAMES_LISTED, MAX_SNIPPET_CHARS};
use crate::tools::ports::code_intel::Position;

/// The lines of a text as LSP counts them (`\n`, `\r\n`; a lone `\r` too).
pub(super) fn lines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                lines.push(&text[start..i]);
                start = i + 1;
            }
            b'\r' => {
                lines.push(&text[start..i]);
                if bytes.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    lines.push(&text[start..]);
    lines
}

fn is_identifier_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// The identifiers on a line, each once, in order.
fn names_on(line: &str) -> Vec<&str> {
    let mut names: Vec<&str> = Vec::new();
    for word in line.split(|c: char| !is_identifier_char(c)) {
        if !word.is_empty() && !word.chars().all(|c| c.is_ascii_digit()) && !names.contains(&word) {
            names.push(word);
        }
    }
    names
}

/// Byte offsets where `symbol` occurs on `line` as a whole name (falling
/// back to any occurrence when it never stands alone, e.g. `foo.bar`).
fn occurrences(line: &str, symbol: &str) -> Vec<usize> {
    let all: Vec<usize> = line.match_indices(symbol).map(|(i, _)| i).collect();
    let whole: Vec<usize> = all
        .iter()
        .copied()
        .filter(|&i| {
            let before = line[..i].chars().next_back().is_none_or(|c| !is_identifier_char(c));
            let after = line[i + symbol.len()..].chars().next().is_none_or(|c| !is_identifier_char(c));
            before && after
        })
        .collect();
    if whole.is_empty() {
        all
    } else {
        whole
    }
}

/// The LSP position of a symbol the model named by line and name (or column).
pub fn resolve_position(text: &str, display: &str, line: Option<u32>, symbol: Option<&str>, column: Option<u32>) -> Result<Position, String> {
    let Some(line_no) = line.filter(|l| *l > 0) else {
        return Err("Error: give line (1-based) and symbol, the name as written on that line.".into());
    };
    let all = lines(text);
    let Some(line_text) = all.get(line_no as usize - 1) else {
        return Err(format!("Error: line {line_no} is past the end of {display}, which has {} lines.", all.len()));
    };
    let symbol = symbol.map(str::trim).filter(|s| !s.is_empty());
    let byte = match (symbol, column) {
        (Some(symbol), column) => {
            let found = occurrences(line_text, symbol);
            if found.is_empty() {
                let names = names_on(line_text);
                let listed = if names.is_empty() {
                    "no names".to_string()
                } else {
                    let shown: Vec<String> = names.iter().take(MAX_NAMES_LISTED).map(|n| format!("\"{n}\"")).collect();
                    shown.join(", ")
                };
                return Err(format!(
                    "Error: \"{symbol}\" is not on line {line_no} of {display}. That line has {listed}: {:?}. Check the line number (read_file shows them), or use grep_search to find the symbol.",
                    truncate_chars(line_text.trim(), MAX_SNIPPET_CHARS)
                ));
            }
            match column {
                // The occurrence that starts nearest the column the model gave.
                Some(column) => {
                    let wanted = column.saturating_sub(1) as usize;
                    found.iter().copied().min_by_key(|&b| line_text[..b].chars().count().abs_diff(wanted)).unwrap_or(found[0])
                }
                None => found[0],
            }
        }
        (None, Some(column)) if column > 0 => {
            let chars = line_text.chars().count();
            let wanted = column as usize - 1;
            if wanted > chars {
                return Err(format!("Error: column {column} is past the end of line {line_no} of {display}, which has {chars} characters."));
            }
            line_text.char_indices().nth(wanted).map_or(line_text.len(), |(b, _)| b)
        }
        _ => return Err("Error: give symbol, the name as written on the line (or column, 1-based).".into()),
    };
    let character = line_text[..byte].encode_utf16().count();
    Ok(Position { line: line_no - 1, character: u32::try_from(character).unwrap_or(u32::MAX) })
}
