//! A picture of a terminal editor's screen, for the tests that drive one in
//! tmux: the pane as tmux captures it with its colours (`capture-pane -e`),
//! drawn as HTML in a monospace grid, and photographed by headless
//! Chromium. The PNG goes to `target/test-artifacts/<folder>/`, beside the
//! text of the screen (`.txt`), so a person can look at what the user saw.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The colour of a 256-colour index (xterm's palette).
fn palette(index: u8) -> String {
    const BASE: [&str; 16] = [
        "#1e1e1e", "#cd3131", "#0dbc79", "#e5e510", "#2472c8", "#bc3fbc", "#11a8cd", "#e5e5e5", "#666666", "#f14c4c", "#23d18b", "#f5f543", "#3b8eea", "#d670d6", "#29b8db", "#ffffff",
    ];
    match index {
        0..=15 => BASE[index as usize].to_string(),
        16..=231 => {
            let i = index - 16;
            let level = |v: u8| if v == 0 { 0 } else { 55 + v as u32 * 40 };
            format!("#{:02x}{:02x}{:02x}", level(i / 36), level((i / 6) % 6), level(i % 6))
        }
        _ => {
            let grey = 8 + (index as u32 - 232) * 10;
            format!("#{grey:02x}{grey:02x}{grey:02x}")
        }
    }
}

#[derive(Clone, Default, PartialEq)]
struct Style {
    fg: Option<String>,
    bg: Option<String>,
    bold: bool,
    italic: bool,
    underline: bool,
    reverse: bool,
}

impl Style {
    /// Applies one SGR sequence's parameters.
    fn apply(&mut self, params: &str) {
        let numbers: Vec<u32> = params.split(';').map(|p| p.parse().unwrap_or(0)).collect();
        let mut i = 0;
        while i < numbers.len() {
            match numbers[i] {
                0 => *self = Style::default(),
                1 => self.bold = true,
                3 => self.italic = true,
                4 => self.underline = true,
                7 => self.reverse = true,
                22 => self.bold = false,
                23 => self.italic = false,
                24 => self.underline = false,
                27 => self.reverse = false,
                n @ 30..=37 => self.fg = Some(palette((n - 30) as u8)),
                n @ 90..=97 => self.fg = Some(palette((n - 90 + 8) as u8)),
                n @ 40..=47 => self.bg = Some(palette((n - 40) as u8)),
                n @ 100..=107 => self.bg = Some(palette((n - 100 + 8) as u8)),
                39 => self.fg = None,
                49 => self.bg = None,
                n @ (38 | 48) => {
                    let colour = match numbers.get(i + 1) {
                        Some(5) => {
                            i += 2;
                            numbers.get(i).map(|&c| palette(c.min(255) as u8))
                        }
                        Some(2) => {
                            i += 4;
                            let rgb = |k: usize| numbers.get(i + k - 3).copied().unwrap_or(0).min(255);
                            Some(format!("#{:02x}{:02x}{:02x}", rgb(1), rgb(2), rgb(3)))
                        }
                        _ => None,
                    };
                    if n == 38 {
                        self.fg = colour;
                    } else {
                        self.bg = colour;
                    }
                }
                _ => {}
            }
            i += 1;
        }
    }

    fn css(&self) -> String {
        let (mut fg, mut bg) = (self.fg.clone().unwrap_or_else(|| "#d4d4d4".into()), self.bg.clone().unwrap_or_else(|| "#1e1e1e".into()));
        if self.reverse {
            std::mem::swap(&mut fg, &mut bg);
        }
        let mut css = format!("color:{fg};background:{bg}");
        if self.bold {
            css.push_str(";font-weight:bold");
        }
        if self.italic {
            css.push_str(";font-style:italic");
        }
        if self.underline {
            css.push_str(";text-decoration:underline");
        }
        css
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// The captured pane (with its SGR escapes) as an HTML page.
pub fn html(ansi: &str) -> String {
    let mut body = String::new();
    let mut style = Style::default();
    let mut run = String::new();
    let flush = |body: &mut String, run: &mut String, style: &Style| {
        if !run.is_empty() {
            body.push_str(&format!("<span style=\"{}\">{}</span>", style.css(), escape(run)));
            run.clear();
        }
    };
    let mut chars = ansi.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            chars.next();
            let mut params = String::new();
            let mut end = None;
            for p in chars.by_ref() {
                if p.is_ascii_alphabetic() {
                    end = Some(p);
                    break;
                }
                params.push(p);
            }
            if end == Some('m') {
                let mut next = style.clone();
                next.apply(&params);
                if next != style {
                    flush(&mut body, &mut run, &style);
                    style = next;
                }
            }
            continue;
        }
        if c == '\n' {
            flush(&mut body, &mut run, &style);
            body.push('\n');
            continue;
        }
        run.push(c);
    }
    flush(&mut body, &mut run, &style);
    format!(
        "<!doctype html><meta charset=utf-8><body style=\"margin:0;background:#1e1e1e\"><pre style=\"margin:8px;font:14px/1.25 'DejaVu Sans Mono',monospace;color:#d4d4d4\">{body}</pre></body>"
    )
}

/// Photographs `ansi` (a pane `width` columns by `height` rows) into
/// `target/test-artifacts/<folder>/<name>.png`, with the text beside it;
/// the PNG's path, or why there is none (no Chromium: the text is still
/// kept).
pub fn keep(folder: &str, name: &str, ansi: &str, width: u16, height: u16) -> Result<PathBuf, String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-artifacts").join(folder);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let plain: String = {
        let mut out = String::new();
        let mut chars = ansi.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '\u{1b}' && chars.peek() == Some(&'[') {
                for p in chars.by_ref() {
                    if p.is_ascii_alphabetic() {
                        break;
                    }
                }
                continue;
            }
            out.push(c);
        }
        out
    };
    std::fs::write(dir.join(format!("{name}.txt")), plain).map_err(|e| e.to_string())?;
    let page = dir.join(format!("{name}.html"));
    std::fs::write(&page, html(ansi)).map_err(|e| e.to_string())?;
    let chromium = super::tools::which("chromium").ok_or("no chromium on PATH")?;
    let png = dir.join(format!("{name}.png"));
    let profile = tempfile::tempdir().map_err(|e| e.to_string())?;
    // A cell of 14px DejaVu Sans Mono is about 8.5 × 17.5 px.
    let size = format!("{},{}", width as u32 * 17 / 2 + 24, height as u32 * 35 / 2 + 24);
    let output = Command::new(chromium)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run"])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--window-size={size}"))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .map_err(|e| format!("chromium: {e}"))?;
    let _ = std::fs::remove_file(&page);
    if !png.is_file() {
        return Err(format!("chromium wrote no screenshot: {}", String::from_utf8_lossy(&output.stderr)));
    }
    Ok(png)
}
