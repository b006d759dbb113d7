//! `read_file`: show a text file with numbered lines, one page at a time.
//!
//! The text comes from [`Workspace::read`], so an open editor buffer wins
//! over the disk (invariant 4), and the read stamp of the *whole* file goes
//! into the read ledger even when only a page is shown: the ledger guards
//! edits to the file, and a page of it is enough to have looked.
//!
//! Paging: a page ends at `limit` lines (2000 by default) or when it reaches
//! [`PAGE_BYTE_BUDGET`], whichever comes first. The budget keeps a page below
//! the executor's 50,000-character cut and its 30 KB persist threshold, so the
//! executor never cuts a page in the middle and the continuation line ("Call
//! read_file with offset=…") is always true.
//!
//! An image (a PNG, JPEG, GIF or WebP by its first bytes, whatever its
//! name) is given to the model to see, with one line of text about it;
//! past [`MAX_IMAGE_BYTES`] it is refused unread, and a cut-off or damaged
//! one is refused with what is wrong ([`Image::from_bytes`]). Whether the
//! model sees images is the provider's to say: a model that does not gets
//! a line saying the image was not sent. An SVG is text, read as text.
//!
//! Files over [`MAX_TEXT_FILE_BYTES`] are never loaded whole: they are paged
//! by streaming lines with a bounded buffer per line. No read stamp is
//! recorded for them (the ledger keeps the text it saw, and a stamp would need
//! the whole file), so `edit_file` and `write_file` refuse them; their pages
//! say so.

use std::io::{BufRead as _, BufReader, Read as _};
use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::model::image::{too_large, Format, Image, MAX_IMAGE_BYTES};
use crate::tools::support::text::{digits, numbered_line};
use crate::tools::{Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use crate::workspace::{ReadError, Workspace, MAX_TEXT_FILE_BYTES};

/// Lines shown when the call gives no `limit`.
pub const DEFAULT_LINE_LIMIT: usize = 2000;

/// Characters of one line shown before the rest is cut.
pub const MAX_LINE_CHARS: usize = 2000;

/// A page stops growing once its text reaches this many bytes (see the
/// module docs for why it sits below the executor's limits).
pub const PAGE_BYTE_BUDGET: usize = 28 * 1024;

/// Narrowest line-number column: `   1 | text`.
const MIN_NUMBER_WIDTH: usize = 4;

/// Read a text file from the workspace and show it with line numbers
/// (`   1 | text`; the number and ` | ` are not part of the file).
///
/// Use it to look at a file before changing it: `edit_file` and `write_file`
/// refuse to change an existing file that has not been read with `read_file`
/// in this session. If the file is open in the user's editor you get the
/// editor's text, unsaved changes included.
///
/// Paths are relative to the workspace root (absolute paths inside the
/// workspace also work). By default up to 2000 lines are shown, fewer when
/// the lines are long; when more remain, the last line says which `offset`
/// continues. Lines longer than 2000 characters are cut, and say so. A PNG,
/// JPEG, GIF or WebP image is shown to you as an image (offset and limit do
/// not apply). Other binary files and folders are refused (use list_files
/// for folders). Prefer reading
/// the whole file over many small pages; use `offset`/`limit` for big files or
/// to page through a saved tool result.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReadFileArgs {
    /// The file to read, relative to the workspace root.
    pub file_path: String,
    /// The line number to start at (1 is the first line). Default 1.
    pub offset: Option<usize>,
    /// The most lines to show. Default 2000.
    #[schemars(range(min = 1))]
    pub limit: Option<usize>,
}

pub struct ReadFile;

#[async_trait]
impl Tool for ReadFile {
    type Args = ReadFileArgs;
    type Plan = PageRequest;
    const NAME: &'static str = "read_file";
    const ONLY_READS: bool = true;

    fn kind(&self, args: &Self::Args, ctx: &ToolContext) -> ToolKind {
        ToolKind::Read { paths: vec![ctx.workspace.resolve_lenient(&args.file_path)] }
    }

    fn is_read_only(&self, _args: &Self::Args) -> bool {
        true
    }

    fn is_concurrency_safe(&self, _args: &Self::Args) -> bool {
        true
    }

    fn summary(&self, args: &Self::Args) -> String {
        match (args.offset, args.limit) {
            (None, None) => args.file_path.clone(),
            (offset, limit) => format!(
                "{} (from line {}{})",
                args.file_path,
                offset.unwrap_or(1).max(1),
                limit.map(|l| format!(", {l} lines")).unwrap_or_default()
            ),
        }
    }

    async fn plan(&self, args: &Self::Args, _ctx: &ToolContext) -> Result<PageRequest, ToolError> {
        PageRequest::from_args(args)
    }

    async fn call(&self, args: Self::Args, request: PageRequest, ctx: &ToolContext) -> Result<String, ToolError> {
        self.call_output(args, request, ctx).await.map(|output| output.text)
    }

    async fn call_output(&self, args: Self::Args, request: PageRequest, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let workspace = Arc::clone(&ctx.workspace);
        // A big file streams for a while; keep it off the async workers.
        tokio::task::spawn_blocking(move || read_file(&workspace, &args.file_path, request))
            .await
            .map_err(|err| ToolError::model(format!("Error: the read was interrupted ({err}). Try again.")))?
    }
}

/// An image, or a page of text.
fn read_file(workspace: &Workspace, user_path: &str, request: PageRequest) -> Result<ToolOutput, ToolError> {
    let path = workspace.resolve_for_read(user_path).map_err(|e| ToolError::model(e.message()))?;
    match image_format(&path) {
        Some(format) => read_image(&path, &workspace.display_path(&path), format),
        None => read_page(workspace, user_path, request).map(ToolOutput::from),
    }
}

/// The image format of a regular file's first bytes, if it is an image.
fn image_format(path: &Path) -> Option<Format> {
    if !std::fs::metadata(path).ok()?.is_file() {
        return None;
    }
    let mut head = Vec::with_capacity(12);
    std::fs::File::open(path).ok()?.take(12).read_to_end(&mut head).ok()?;
    Format::sniff(&head)
}

/// The image for the model to see, and a line saying what it is. Refused
/// (as text, with what to do) past the size limit, or cut off or damaged.
fn read_image(path: &Path, display: &str, format: Format) -> Result<ToolOutput, ToolError> {
    let unreadable = |e: std::io::Error| ToolError::model(format!("Error: cannot read {display}: {e}"));
    let file = std::fs::File::open(path).map_err(unreadable)?;
    let bytes = file.metadata().map_err(unreadable)?.len();
    // Refused before it is read: a 40 MB photo is never loaded.
    if bytes > MAX_IMAGE_BYTES {
        return Err(ToolError::model(format!("Error: {}", too_large(display, format, bytes))));
    }
    let mut data = Vec::with_capacity(bytes as usize);
    file.take(MAX_IMAGE_BYTES + 1).read_to_end(&mut data).map_err(unreadable)?;
    let image = Image::from_bytes(&data, display).map_err(|why| ToolError::model(format!("Error: {why}")))?;
    let size = crate::model::image::pixel_size(&data).map(|(w, h)| format!("{w}x{h} pixels, ")).unwrap_or_default();
    let text = format!("{display} is a {} image ({size}{} bytes); it is attached for you to see.", format.name(), data.len());
    Ok(ToolOutput { text, images: vec![image] })
}

/// Which lines the call asked for.
#[derive(Debug, Clone, Copy)]
pub struct PageRequest {
    /// 1-based number of the first line to show.
    first: usize,
    limit: usize,
}

impl PageRequest {
    fn from_args(args: &ReadFileArgs) -> Result<Self, ToolError> {
        let limit = args.limit.unwrap_or(DEFAULT_LINE_LIMIT);
        if limit == 0 {
            return Err(ToolError::model(
                "Error: limit must be at least 1. Leave it out to read up to 2000 lines.",
            ));
        }
        // Models count lines from 0 as often as from 1; both mean the start.
        Ok(PageRequest { first: args.offset.unwrap_or(1).max(1), limit })
    }
}

fn read_page(workspace: &Workspace, user_path: &str, request: PageRequest) -> Result<String, ToolError> {
    let path = workspace.resolve_for_read(user_path).map_err(|e| ToolError::model(e.message()))?;
    let display = workspace.display_path(&path);
    match workspace.read(&path) {
        Ok(file) => {
            let mut page = PageCollector::new(request);
            for line in file.text.lines() {
                page.offer(line.as_bytes(), line.chars().count());
            }
            let out = page.render(&display, None)?;
            workspace.record_read(&file);
            Ok(out)
        }
        Err(ReadError::TooLarge { bytes }) => {
            let page = stream_page(&path, request).map_err(|e| ToolError::model(e.message(&display)))?;
            let note = format!(
                "(This file is {bytes} bytes, over the {MAX_TEXT_FILE_BYTES}-byte limit for editing: it is shown a page at a time and edit_file/write_file cannot change it.)"
            );
            page.render(&display, Some(&note))
        }
        Err(ReadError::NotFound) => Err(ToolError::model(format!(
            "{}. Check the path (relative to the workspace root), or use list_files to find the file.",
            ReadError::NotFound.message(&display)
        ))),
        Err(err) => Err(ToolError::model(err.message(&display))),
    }
}

/// A line kept for the page: its number, its text (already cut), and its
/// full length in characters when it was cut.
struct ShownLine {
    number: usize,
    text: String,
    cut_from: Option<usize>,
}

/// Collects the requested page while every line of the file passes by, so
/// the total line count comes for free.
struct PageCollector {
    request: PageRequest,
    shown: Vec<ShownLine>,
    bytes: usize,
    /// The byte budget ended the page before `limit` lines.
    full: bool,
    total_lines: usize,
}

impl PageCollector {
    fn new(request: PageRequest) -> Self {
        PageCollector { request, shown: Vec::new(), bytes: 0, full: false, total_lines: 0 }
    }

    /// True when the next line (number `total_lines + 1`) belongs on the page.
    fn wants_next(&self) -> bool {
        let number = self.total_lines + 1;
        !self.full && number >= self.request.first && self.shown.len() < self.request.limit
    }

    /// One line of the file: `bytes` is its text (possibly only a prefix,
    /// for streamed lines), `chars` its full length in characters.
    fn offer(&mut self, bytes: &[u8], chars: usize) {
        if self.wants_next() {
            self.push(bytes, chars);
        }
        self.total_lines += 1;
    }

    fn push(&mut self, bytes: &[u8], chars: usize) {
        let decoded = String::from_utf8_lossy(bytes);
        let line = decoded.strip_suffix('\r').unwrap_or(&decoded);
        let (text, cut_from) = match line.char_indices().nth(MAX_LINE_CHARS) {
            Some((end, _)) => (line[..end].to_string(), Some(chars)),
            None => (line.to_string(), None),
        };
        // Number column, " | ", text, a possible cut note, newline.
        let number = self.total_lines + 1;
        let cost = digits(number).max(MIN_NUMBER_WIDTH) + 3 + text.len() + 1 + if cut_from.is_some() { 48 } else { 0 };
        if !self.shown.is_empty() && self.bytes + cost > PAGE_BYTE_BUDGET {
            self.full = true;
            return;
        }
        self.bytes += cost;
        self.shown.push(ShownLine { number, text, cut_from });
    }

    /// The page as the model reads it; `note` is added at the end.
    fn render(self, display: &str, note: Option<&str>) -> Result<String, ToolError> {
        let total = self.total_lines;
        if total == 0 {
            return Ok(format!("({display} is empty)"));
        }
        let (Some(first), Some(last)) = (self.shown.first(), self.shown.last()) else {
            return Err(ToolError::model(format!(
                "Error: offset {} is past the end of {display}, which has {total} {}. Use an offset from 1 to {total}.",
                self.request.first,
                if total == 1 { "line" } else { "lines" },
            )));
        };
        let (first, last) = (first.number, last.number);
        let width = digits(last).max(MIN_NUMBER_WIDTH);
        let mut out = String::with_capacity(self.bytes + 256);
        for line in &self.shown {
            out.push_str(&numbered_line(line.number, width, &line.text));
            if let Some(chars) = line.cut_from {
                out.push_str(&format!(" [line truncated: showing {MAX_LINE_CHARS} of {chars} chars]"));
            }
            out.push('\n');
        }
        if last < total {
            out.push_str(&format!(
                "... (file has {total} lines; showing lines {first}-{last}. Call read_file with offset={} to continue.)\n",
                last + 1
            ));
        }
        if let Some(note) = note {
            out.push_str(note);
            out.push('\n');
        }
        out.truncate(out.trim_end_matches('\n').len());
        Ok(out)
    }
}

/// Page a file too big to load whole: stream it, keeping at most a bounded
/// prefix of each line on the page, and count every line for the trailer.
fn stream_page(path: &Path, request: PageRequest) -> Result<PageCollector, ReadError> {
    let mut file = std::fs::File::open(path).map_err(ReadError::Io)?;
    // The same binary rule as for small files: a NUL byte near the start.
    let mut sniff = Vec::with_capacity(8192);
    (&mut file).take(8192).read_to_end(&mut sniff).map_err(ReadError::Io)?;
    if sniff.contains(&0) {
        return Err(ReadError::Binary);
    }
    let mut reader = BufReader::with_capacity(64 * 1024, std::io::Cursor::new(sniff).chain(file));
    // Enough bytes for MAX_LINE_CHARS characters of up to 4 bytes each.
    let keep_bytes = MAX_LINE_CHARS * 4 + 1;
    let mut page = PageCollector::new(request);
    let mut line: Vec<u8> = Vec::new();
    let mut line_chars = 0usize;
    let mut line_started = false;
    loop {
        let chunk = reader.fill_buf().map_err(ReadError::Io)?;
        if chunk.is_empty() {
            if line_started {
                page.offer(&line, line_chars);
            }
            return Ok(page);
        }
        let wanted = page.wants_next();
        let (part, consumed, ends_line) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (&chunk[..i], i + 1, true),
            None => (chunk, chunk.len(), false),
        };
        if wanted {
            let room = keep_bytes.saturating_sub(line.len());
            line.extend_from_slice(&part[..part.len().min(room)]);
            // UTF-8 continuation bytes do not start a character.
            line_chars += part.iter().filter(|&&b| b & 0xC0 != 0x80).count();
        }
        line_started = true;
        reader.consume(consumed);
        if ends_line {
            page.offer(&line, line_chars);
            line.clear();
            line_chars = 0;
            line_started = false;
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::tools::support::test_fixture::{fixture, Fixture};
    use expect_test::expect;

    async fn run(f: &Fixture, input: serde_json::Value) -> (bool, String) {
        let result = f.call("read_file", input).await;
        (result.is_error, result.content)
    }

    /// A PNG, JPEG, GIF or WebP (known by its bytes, whatever its name)
    /// comes back as an image with a line about it; a cut-off PNG, a
    /// file over the limit and an SVG come back as text, never as an image.
    #[tokio::test]
    async fn an_image_is_given_to_see_and_a_bad_one_is_said() {
        use crate::model::image::samples;
        let png = samples::png(3, 2);
        let cut = &png[..png.len() - 20];
        let mut big = samples::png(10, 10);
        big.resize(MAX_IMAGE_BYTES as usize + 100, 0);
        let svg = b"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\"/>\n";
        let f = fixture(&[
            ("shot.png", png.as_slice()),
            ("named-wrong.txt", samples::jpeg().as_slice()),
            ("a.gif", samples::gif().as_slice()),
            ("a.webp", samples::webp().as_slice()),
            ("cut.png", cut),
            ("huge.png", big.as_slice()),
            ("logo.svg", svg.as_slice()),
        ]);
        let mut out = String::new();
        for name in ["shot.png", "named-wrong.txt", "a.gif", "a.webp", "cut.png", "huge.png", "logo.svg"] {
            let result = f.call("read_file", serde_json::json!({"file_path": name})).await;
            let images: Vec<&str> = result.images.iter().map(|i| i.media_type.as_str()).collect();
            out.push_str(&format!("{name} -> is_error={} images={images:?}\n{}\n\n", result.is_error, result.content));
        }
        expect![[r#"
            shot.png -> is_error=false images=["image/png"]
            shot.png is a PNG image (3x2 pixels, 67 bytes); it is attached for you to see.

            named-wrong.txt -> is_error=false images=["image/jpeg"]
            named-wrong.txt is a JPEG image (64x32 pixels, 47 bytes); it is attached for you to see.

            a.gif -> is_error=false images=["image/gif"]
            a.gif is a GIF image (2x3 pixels, 29 bytes); it is attached for you to see.

            a.webp -> is_error=false images=["image/webp"]
            a.webp is a WebP image (100x50 pixels, 30 bytes); it is attached for you to see.

            cut.png -> is_error=true images=[]
            Error: cut.png is a PNG image whose data is cut off or damaged (it ends inside a chunk), so it cannot be shown.

            huge.png -> is_error=true images=[]
            Error: huge.png is a 3750100-byte PNG image, over the 3750000-byte limit for an image sent to the model. Make a smaller copy (for example `magick huge.png -resize 1568x1568 smaller.png`, or save it as JPEG) and use that.

            logo.svg -> is_error=false images=[]
               1 | <svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>

        "#]]
        .assert_eq(&out);
        let result = f.call("read_file", serde_json::json!({"file_path": "shot.png"})).await;
        use base64::Engine as _;
        assert_eq!(base64::engine::general_purpose::STANDARD.decode(&result.images[0].data).unwrap(), png);
    }

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    /// expect-test strips the common indentation of a snapshot; an unindented
    /// last line keeps the right-aligned numbers intact.
    fn show(out: &str) -> String {
        format!("{out}\n<end>")
    }

    #[tokio::test]
    async fn shows_numbered_lines_and_records_the_whole_file() {
        let f = fixture(&[("a.txt", b"alpha\r\nbeta\n\ngamma")]);
        let (err, out) = run(&f, serde_json::json!({"file_path": "a.txt"})).await;
        assert!(!err);
        expect![[r#"
               1 | alpha
               2 | beta
               3 | 
               4 | gamma
            <end>"#]]
        .assert_eq(&show(&out));
        assert!(f.ctx.workspace.ledger().get(&f.root.join("a.txt")).is_some());
    }

    #[tokio::test]
    async fn pages_with_offset_and_limit() {
        let text = numbered(12);
        let f = fixture(&[("a.txt", text.as_bytes())]);
        let (err, out) = run(&f, serde_json::json!({"file_path": "a.txt", "offset": 9, "limit": 2})).await;
        assert!(!err);
        expect![[r#"
               9 | line 9
              10 | line 10
            ... (file has 12 lines; showing lines 9-10. Call read_file with offset=11 to continue.)"#]]
        .assert_eq(&out);
        // A page still stamps the whole file: an edit anywhere is allowed.
        let entry = f.ctx.workspace.ledger().get(&f.root.join("a.txt")).unwrap();
        assert_eq!(entry.seen_text.as_deref(), Some(text.as_str()));
        let (_, last) = run(&f, serde_json::json!({"file_path": "a.txt", "offset": 11})).await;
        expect![[r#"
              11 | line 11
              12 | line 12
            <end>"#]]
        .assert_eq(&show(&last));
    }

    #[tokio::test]
    async fn default_limit_is_2000_lines_and_numbers_widen() {
        let mut text = numbered(10_000);
        text.push_str(&"x\n".repeat(500));
        let f = fixture(&[("a.txt", text.as_bytes())]);
        let (_, out) = run(&f, serde_json::json!({"file_path": "a.txt", "offset": 9999, "limit": 2})).await;
        expect![[r#"
             9999 | line 9999
            10000 | line 10000
            ... (file has 10500 lines; showing lines 9999-10000. Call read_file with offset=10001 to continue.)"#]]
        .assert_eq(&out);
        let (_, out) = run(&f, serde_json::json!({"file_path": "a.txt", "offset": 10_001})).await;
        assert_eq!(out.lines().count(), 500);

        let f = fixture(&[("short.txt", "x\n".repeat(2500).as_bytes())]);
        let (_, out) = run(&f, serde_json::json!({"file_path": "short.txt"})).await;
        assert_eq!(out.lines().count(), 2001);
        assert!(out.ends_with("... (file has 2500 lines; showing lines 1-2000. Call read_file with offset=2001 to continue.)"));
    }

    #[tokio::test]
    async fn long_lines_end_a_page_early_within_the_byte_budget() {
        let line = "x".repeat(1000);
        let text: String = (0..100).map(|_| format!("{line}\n")).collect();
        let f = fixture(&[("wide.txt", text.as_bytes())]);
        let (err, out) = run(&f, serde_json::json!({"file_path": "wide.txt"})).await;
        assert!(!err);
        assert!(out.len() <= PAGE_BYTE_BUDGET + 200, "page is {} bytes", out.len());
        let last = out.lines().last().unwrap();
        assert!(last.starts_with("... (file has 100 lines; showing lines 1-"), "{last}");
        let shown = out.lines().count() - 1;
        assert!(last.ends_with(&format!("Call read_file with offset={} to continue.)", shown + 1)), "{last}");
    }

    #[tokio::test]
    async fn cuts_very_long_lines_and_says_so() {
        let long = format!("short\n{}\n", "é".repeat(5000));
        let f = fixture(&[("long.txt", long.as_bytes())]);
        let (err, out) = run(&f, serde_json::json!({"file_path": "long.txt"})).await;
        assert!(!err);
        let second = out.lines().nth(1).unwrap();
        assert!(second.starts_with(&format!("   2 | {}", "é".repeat(MAX_LINE_CHARS))));
        assert!(second.ends_with("é [line truncated: showing 2000 of 5000 chars]"), "{}", &second[second.len() - 80..]);
    }

    #[tokio::test]
    async fn refuses_binary_files_folders_and_bad_offsets() {
        let f = fixture(&[("img.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"), ("dir/x.txt", b"x"), ("two.txt", b"a\nb\n"), ("empty.txt", b"")]);
        let cases = [
            serde_json::json!({"file_path": "img.png"}),
            serde_json::json!({"file_path": "dir"}),
            serde_json::json!({"file_path": "two.txt", "offset": 3}),
            serde_json::json!({"file_path": "two.txt", "limit": 0}),
            serde_json::json!({"file_path": "missing.txt"}),
            serde_json::json!({"file_path": "empty.txt"}),
        ];
        let mut out = String::new();
        for input in cases {
            let (err, text) = run(&f, input.clone()).await;
            out.push_str(&format!("{input} -> is_error={err}\n{text}\n\n"));
        }
        expect![[r#"
            {"file_path":"img.png"} -> is_error=true
            Error: img.png is a PNG image whose data is cut off or damaged (the header is cut off), so it cannot be shown.

            {"file_path":"dir"} -> is_error=true
            Error: dir is a directory, not a file. Use list_files to see what it contains.

            {"file_path":"two.txt","offset":3} -> is_error=true
            Error: offset 3 is past the end of two.txt, which has 2 lines. Use an offset from 1 to 2.

            {"file_path":"two.txt","limit":0} -> is_error=true
            Error: limit must be at least 1. Leave it out to read up to 2000 lines.

            {"file_path":"missing.txt"} -> is_error=true
            Error: file not found: missing.txt. Check the path (relative to the workspace root), or use list_files to find the file.

            {"file_path":"empty.txt"} -> is_error=false
            (empty.txt is empty)

        "#]]
        .assert_eq(&out);
        // Refused files are not stamped, an empty file is.
        assert!(f.ctx.workspace.ledger().get(&f.root.join("img.png")).is_none());
        assert!(f.ctx.workspace.ledger().get(&f.root.join("empty.txt")).is_some());
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn refuses_a_fifo_instead_of_blocking_on_it() {
        let f = fixture(&[]);
        let fifo = std::ffi::CString::new(f.root.join("pipe").to_string_lossy().as_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path and a plain mode.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let (err, out) = run(&f, serde_json::json!({"file_path": "pipe"})).await;
        assert!(err);
        expect!["Error: cannot read pipe: not a regular file (a pipe, socket or device)"].assert_eq(&out);
    }

    #[tokio::test]
    async fn reads_the_open_buffer_not_the_disk() {
        let f = fixture(&[("a.txt", b"on disk\n")]);
        let path = f.root.join("a.txt");
        f.editor.open(&path, "in the editor, unsaved\n", 7);
        let (err, out) = run(&f, serde_json::json!({"file_path": "a.txt"})).await;
        assert!(!err);
        expect![[r#"
               1 | in the editor, unsaved
            <end>"#]].assert_eq(&show(&out));
        assert_eq!(f.ctx.workspace.ledger().get(&path).unwrap().stamp.version, Some(7));
    }

    #[tokio::test]
    async fn pages_a_persisted_result_outside_the_workspace() {
        let results = tempfile::tempdir().unwrap();
        let saved = results.path().join("toolu_1.txt");
        std::fs::write(&saved, numbered(5000)).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut workspace = Workspace::new(dir.path()).unwrap();
        workspace.allow_reading(results.path().to_path_buf());
        let f = Fixture {
            root: dir.path().canonicalize().unwrap(),
            _dir: dir,
            ctx: ToolContext::new(Arc::new(workspace)),
            editor: Arc::new(crate::workspace::MemoryEditor::default()),
        };
        let path = saved.to_string_lossy().to_string();
        let (err, out) = run(&f, serde_json::json!({"file_path": path, "offset": 4000, "limit": 1})).await;
        assert!(!err, "{out}");
        expect!["4000 | line 4000\n... (file has 5000 lines; showing lines 4000-4000. Call read_file with offset=4001 to continue.)"].assert_eq(&out);
        // Without the allowance the same path is outside the workspace.
        let plain = fixture(&[]);
        let (err, out) = run(&plain, serde_json::json!({"file_path": path})).await;
        assert!(err);
        assert!(out.contains("outside the workspace"), "{out}");
    }

    #[test]
    fn streams_large_files_by_page_with_bounded_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.log");
        let mut text = String::new();
        for i in 1..=30 {
            text.push_str(&format!("entry {i}\r\n"));
        }
        text.push_str(&"y".repeat(20_000));
        text.push_str("\nlast without newline");
        std::fs::write(&path, &text).unwrap();
        // The streamed page must agree with the in-memory page.
        let request = PageRequest { first: 29, limit: 5 };
        let streamed = stream_page(&path, request).unwrap().render("big.log", None).unwrap();
        let mut in_memory = PageCollector::new(request);
        for line in text.lines() {
            in_memory.offer(line.as_bytes(), line.chars().count());
        }
        assert_eq!(streamed, in_memory.render("big.log", None).unwrap());
        assert!(streamed.starts_with("  29 | entry 29\n  30 | entry 30\n  31 | yyyy"));
        assert!(streamed.contains(" [line truncated: showing 2000 of 20000 chars]\n  32 | last without newline"));

        std::fs::write(&path, b"abc\0def").unwrap();
        assert!(matches!(stream_page(&path, request), Err(ReadError::Binary)));
    }

    #[tokio::test]
    async fn a_file_over_the_size_limit_is_paged_and_not_stamped() {
        let line = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n";
        let count = (MAX_TEXT_FILE_BYTES as usize / line.len()) + 10;
        let f = fixture(&[("huge.txt", line.repeat(count).as_bytes())]);
        let (err, out) = run(&f, serde_json::json!({"file_path": "huge.txt", "offset": count, "limit": 1})).await;
        assert!(!err, "{out}");
        let expected = format!(
            "{count} | {}\n(This file is {} bytes, over the {MAX_TEXT_FILE_BYTES}-byte limit for editing: it is shown a page at a time and edit_file/write_file cannot change it.)",
            line.trim_end(),
            count * line.len()
        );
        assert_eq!(out, expected);
        assert!(f.ctx.workspace.ledger().get(&f.root.join("huge.txt")).is_none());
    }
}
