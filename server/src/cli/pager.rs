//! A question taller than the terminal (an edit's long diff) is shown
//! through the user's pager, so its first lines do not scroll out of
//! sight before it is answered: `$PAGER`, else `less -R` (colours kept,
//! quits at once when the text fits after all). The question's options
//! are printed after the pager ends. What goes to the pager is shown text
//! ([`Shown`]): `less -R` passes escapes through to the terminal.

use std::io::Write;
use std::process::{Command, Stdio};

use super::terminal::{errln, Shown};

/// Whether `text` and `reserved` more lines fit on the terminal stderr is
/// (`None`: stderr is not a terminal, or its size is unknown). Lines wider
/// than the terminal count as the rows they wrap onto.
pub fn fits(text: &Shown, reserved: usize) -> Option<bool> {
    let (rows, cols) = size()?;
    let needed: usize = text.as_str().lines().map(|l| display_width(l).div_ceil(cols).max(1)).sum::<usize>() + reserved;
    Some(needed <= rows)
}

/// Shows `text` through the pager; false when none could run (the caller
/// then prints it).
pub fn show(text: &Shown) -> bool {
    let pager = std::env::var("PAGER").ok().filter(|p| !p.trim().is_empty()).unwrap_or_else(|| "less -R".to_string());
    // `less` reads its keys from the terminal itself, so its input can be
    // the text; -F is not given, so a short text waits for `q` as any
    // page does, and the options come after.
    let child = Command::new("sh").arg("-c").arg(&pager).stdin(Stdio::piped()).spawn();
    let Ok(mut child) = child else {
        errln!("tandem: cannot start the pager `{pager}`; the whole question follows");
        return false;
    };
    if let Some(mut input) = child.stdin.take() {
        // A pager quit before the end closes its input: not an error.
        let _ = input.write_all(text.as_str().as_bytes());
        let _ = input.write_all(b"\n");
    }
    matches!(child.wait(), Ok(status) if status.success())
}

/// The terminal's rows and columns, from stderr (where questions go).
fn size() -> Option<(usize, usize)> {
    tandem::platform::stderr_terminal_size()
}

/// How many columns `line` takes, its escape sequences left out (every
/// character one column: close enough for diffs of code).
fn display_width(line: &str) -> usize {
    super::markdown::without_escapes(line).chars().count()
}

#[cfg(test)]
mod tests {
    use super::display_width;

    #[test]
    fn escapes_take_no_columns() {
        assert_eq!(display_width("\x1b[32m+ added\x1b[0m"), 7);
        assert_eq!(display_width("plain"), 5);
        assert_eq!(display_width(""), 0);
    }
}
