//! HTML → readable, Markdown-like text for `web_fetch`.
//!
//! The page is parsed by html5ever (through `scraper`), which implements the
//! HTML standard's parsing algorithm: broken markup, implied tags and
//! entities come out as a browser sees them. One walk over the tree then
//! writes headings as `#`, lists as `-`/`1.` with nested indentation, links
//! as `[text](url)` (relative URLs resolved against the page), tables as
//! `| a | b |` rows, `<pre>` as fenced blocks with their line breaks, and
//! drops what a reader never sees (`<script>`, `<style>`, `<nav>`,
//! `<noscript>`, `<head>`, …).
//!
//! Bounded: past [`MAX_DEPTH`] nested elements the rest of a subtree is
//! plain text, and writing stops once the output budget is spent (the caller
//! cuts the text to its `max_length` anyway).

use std::cell::Cell;

use ego_tree::NodeRef;
use scraper::{Html, Node};
use url::Url;

/// Nested elements rendered with structure; deeper ones become plain text.
pub const MAX_DEPTH: usize = 64;

/// Elements whose content a reader never sees as text.
const DROPPED: &[&str] = &["script", "style", "nav", "noscript", "template", "head", "svg", "iframe", "object", "embed", "canvas"];

/// Convert a whole HTML document. `base` resolves relative links;
/// `max_chars` bounds the work (the output is at least that long when cut).
pub fn html_to_text(html: &str, base: Option<&Url>, max_chars: usize) -> String {
    let document = Html::parse_document(html);
    let walk = Walk { base, budget: Cell::new(max_chars.saturating_mul(4).saturating_add(1024)) };
    let mut writer = Writer::default();
    walk.children(document.tree.root(), &mut writer, 0);
    tidy(&writer.out)
}

struct Walk<'a> {
    base: Option<&'a Url>,
    /// Bytes of text still to write; at zero the walk stops.
    budget: Cell<usize>,
}

/// Text being written: whitespace collapsed, block breaks owed until the
/// next text arrives (so empty blocks leave no blank lines).
#[derive(Default)]
struct Writer {
    out: String,
    /// Line breaks owed before the next text: 1 ends the line, 2 leaves a blank line.
    breaks: usize,
    /// A space is owed before the next text.
    space: bool,
    /// Whether whitespace came before the first text (for inline wrappers).
    leading_space: Option<bool>,
}

impl Writer {
    fn block(&mut self, breaks: usize) {
        self.breaks = self.breaks.max(breaks);
        self.space = false;
    }

    fn line_break(&mut self) {
        self.breaks = (self.breaks + 1).min(2);
        self.space = false;
    }

    /// Text from the page: runs of whitespace become one space.
    fn words(&mut self, text: &str) {
        if text.starts_with(char::is_whitespace) {
            self.space = true;
        }
        for word in text.split_whitespace() {
            self.put(word);
            self.space = true;
        }
        if !text.ends_with(char::is_whitespace) {
            self.space = false;
        }
    }

    /// Literal output (markup, preformatted text).
    fn put(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        if self.leading_space.is_none() {
            self.leading_space = Some(self.space);
        }
        if self.breaks > 0 {
            if !self.out.is_empty() {
                self.out.push_str(&"\n".repeat(self.breaks));
            }
            self.breaks = 0;
        } else if self.space && !self.out.is_empty() && !self.out.ends_with([' ', '\n']) {
            self.out.push(' ');
        }
        self.space = false;
        self.out.push_str(text);
    }
}

impl Walk<'_> {
    fn spend(&self, bytes: usize) {
        self.budget.set(self.budget.get().saturating_sub(bytes));
    }

    /// The part of `text` the budget still allows (cut at a character boundary).
    fn within_budget<'t>(&self, text: &'t str) -> &'t str {
        let mut end = self.budget.get().min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        &text[..end]
    }

    fn spent(&self) -> bool {
        self.budget.get() == 0
    }

    fn children(&self, node: NodeRef<'_, Node>, w: &mut Writer, depth: usize) {
        for child in node.children() {
            if self.spent() {
                return;
            }
            self.node(child, w, depth);
        }
    }

    fn node(&self, node: NodeRef<'_, Node>, w: &mut Writer, depth: usize) {
        match node.value() {
            Node::Text(text) => {
                let text = self.within_budget(text);
                self.spend(text.len());
                w.words(text);
            }
            Node::Element(element) => {
                if depth >= MAX_DEPTH {
                    let text = text_content(node);
                    self.spend(text.len());
                    w.words(&text);
                    return;
                }
                self.element(node, element.name(), w, depth + 1);
            }
            Node::Document | Node::Fragment => self.children(node, w, depth),
            _ => {}
        }
    }

    fn element(&self, node: NodeRef<'_, Node>, name: &str, w: &mut Writer, depth: usize) {
        match name {
            _ if DROPPED.contains(&name) => {}
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                let level = name[1..].parse::<usize>().unwrap_or(1);
                let inner = one_line(&self.render(node, depth).out);
                if !inner.is_empty() {
                    w.block(2);
                    w.put(&format!("{} {inner}", "#".repeat(level)));
                }
                w.block(2);
            }
            "p" | "table" | "dl" | "figure" | "details" | "fieldset" | "form" | "address" => {
                w.block(2);
                if name == "table" {
                    self.table(node, w, depth);
                } else {
                    self.children(node, w, depth);
                }
                w.block(2);
            }
            "ul" | "ol" | "menu" | "dir" => {
                w.block(1);
                self.list(node, name == "ol", w, depth);
                w.block(1);
            }
            "li" => {
                // A stray item outside a list.
                let inner = self.render(node, depth).out;
                w.block(1);
                w.put(&prefix_lines(inner.trim(), "- ", "  "));
                w.block(1);
            }
            "blockquote" => {
                let inner = self.render(node, depth).out;
                w.block(2);
                w.put(&prefix_lines(inner.trim(), "> ", "> "));
                w.block(2);
            }
            "pre" => {
                let text = text_content(node);
                self.spend(text.len());
                let text = text.trim_end();
                if !text.trim().is_empty() {
                    let fence = fence_for(text);
                    w.block(2);
                    w.put(&format!("{fence}\n{text}\n{fence}"));
                }
                w.block(2);
            }
            "code" | "kbd" | "samp" | "tt" => {
                let text = text_content(node);
                self.spend(text.len());
                let text = one_line(&text);
                if !text.is_empty() {
                    let tick = if text.contains('`') { "``" } else { "`" };
                    w.put(&format!("{tick}{text}{tick}"));
                }
            }
            "br" => w.line_break(),
            "hr" => {
                w.block(2);
                w.put("---");
                w.block(2);
            }
            "a" => self.link(node, w, depth),
            "img" => {
                let element = node.value().as_element();
                let alt = element.and_then(|e| e.attr("alt")).map(str::trim).unwrap_or("");
                if !alt.is_empty() {
                    match element.and_then(|e| e.attr("src")).and_then(|src| self.resolve(src)) {
                        Some(src) => w.put(&format!("![{}]({src})", one_line(alt))),
                        None => w.put(&format!("![{}]", one_line(alt))),
                    }
                }
            }
            "strong" | "b" => self.wrap(node, "**", w, depth),
            "em" | "i" => self.wrap(node, "*", w, depth),
            "dt" | "tr" | "caption" | "figcaption" | "summary" | "legend" => {
                w.block(1);
                self.children(node, w, depth);
                w.block(1);
            }
            "dd" => {
                let inner = self.render(node, depth).out;
                w.block(1);
                w.put(&prefix_lines(inner.trim(), "  ", "  "));
                w.block(1);
            }
            "td" | "th" => {
                // A cell outside a table.
                self.children(node, w, depth);
                w.space = true;
            }
            _ if is_block(name) => {
                w.block(1);
                self.children(node, w, depth);
                w.block(1);
            }
            _ => self.children(node, w, depth),
        }
    }

    /// Render a node's children into a fresh writer.
    fn render(&self, node: NodeRef<'_, Node>, depth: usize) -> Writer {
        let mut inner = Writer::default();
        self.children(node, &mut inner, depth);
        inner
    }

    /// Inline markup around the children: `**bold**`, keeping the spaces
    /// around it outside the markers.
    fn wrap(&self, node: NodeRef<'_, Node>, marker: &str, w: &mut Writer, depth: usize) {
        let inner = self.render(node, depth);
        let text = one_line(&inner.out);
        if text.is_empty() {
            if inner.space || inner.leading_space == Some(true) {
                w.space = true;
            }
            return;
        }
        if inner.leading_space == Some(true) {
            w.space = true;
        }
        w.put(&format!("{marker}{text}{marker}"));
        w.space = inner.space;
    }

    fn link(&self, node: NodeRef<'_, Node>, w: &mut Writer, depth: usize) {
        let inner = self.render(node, depth);
        let text = one_line(&inner.out);
        if inner.leading_space == Some(true) {
            w.space = true;
        }
        let href = node.value().as_element().and_then(|e| e.attr("href")).map(str::trim).unwrap_or("");
        let target = if href.is_empty() || href.starts_with('#') || href.to_ascii_lowercase().starts_with("javascript:") {
            None
        } else {
            self.resolve(href)
        };
        match (text.is_empty(), target) {
            (true, _) => {}
            (false, Some(url)) => w.put(&format!("[{text}]({url})")),
            (false, None) => w.put(&text),
        }
        w.space = inner.space;
    }

    fn resolve(&self, href: &str) -> Option<String> {
        match self.base {
            Some(base) => base.join(href).ok().map(String::from),
            None => Url::parse(href).ok().map(String::from),
        }
    }

    fn list(&self, node: NodeRef<'_, Node>, ordered: bool, w: &mut Writer, depth: usize) {
        let start = node.value().as_element().and_then(|e| e.attr("start")).and_then(|s| s.trim().parse::<i64>().ok()).unwrap_or(1);
        let mut number = start;
        for child in node.children() {
            if self.spent() {
                return;
            }
            let is_item = child.value().as_element().is_some_and(|e| e.name() == "li");
            if !is_item {
                // Text between items, or a nested list written without an <li>.
                self.node(child, w, depth);
                continue;
            }
            let inner = self.render(child, depth + 1).out;
            let marker = if ordered { format!("{number}. ") } else { "- ".to_string() };
            number += 1;
            let indent = " ".repeat(marker.len());
            w.block(1);
            w.put(&prefix_lines(inner.trim(), &marker, &indent));
            w.block(1);
        }
    }

    fn table(&self, node: NodeRef<'_, Node>, w: &mut Writer, depth: usize) {
        let mut rows = Vec::new();
        collect_rows(node, &mut rows, false, 0);
        let mut first = true;
        for (row, in_head) in rows {
            if self.spent() {
                return;
            }
            let mut cells = Vec::new();
            let mut all_headers = true;
            for cell in row.children() {
                let Some(element) = cell.value().as_element() else { continue };
                if !matches!(element.name(), "td" | "th") {
                    continue;
                }
                all_headers &= element.name() == "th";
                let text = one_line(&self.render(cell, depth + 2).out).replace('|', "\\|");
                cells.push(text);
            }
            if cells.is_empty() {
                continue;
            }
            w.block(1);
            w.put(&format!("| {} |", cells.join(" | ")));
            if first && (in_head || all_headers) {
                w.block(1);
                w.put(&format!("|{}", " --- |".repeat(cells.len())));
            }
            first = false;
        }
        for child in node.children() {
            if child.value().as_element().is_some_and(|e| e.name() == "caption") {
                self.node(child, w, depth);
            }
        }
    }
}

/// A table's rows in order, through `thead`/`tbody`/`tfoot`, not descending
/// into nested tables; each with whether it sits in the `thead`.
fn collect_rows<'a>(node: NodeRef<'a, Node>, rows: &mut Vec<(NodeRef<'a, Node>, bool)>, in_head: bool, depth: usize) {
    if depth > 4 {
        return;
    }
    for child in node.children() {
        let Some(element) = child.value().as_element() else { continue };
        match element.name() {
            "tr" => rows.push((child, in_head)),
            "thead" => collect_rows(child, rows, true, depth + 1),
            "tbody" | "tfoot" => collect_rows(child, rows, in_head, depth + 1),
            _ => {}
        }
    }
}

fn is_block(name: &str) -> bool {
    matches!(
        name,
        "address" | "article" | "aside" | "body" | "center" | "dialog" | "div" | "footer" | "header" | "hgroup" | "html" | "main"
            | "section" | "search" | "thead" | "tbody" | "tfoot"
    )
}

/// Every text node under `node`, in order (iterative: no recursion limit).
fn text_content(node: NodeRef<'_, Node>) -> String {
    let mut text = String::new();
    for descendant in node.descendants() {
        match descendant.value() {
            Node::Text(t) => text.push_str(t),
            Node::Element(e) if e.name() == "br" => text.push('\n'),
            _ => {}
        }
    }
    text
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `first` before the first line, `rest` before the others (blank lines stay blank).
fn prefix_lines(text: &str, first: &str, rest: &str) -> String {
    let mut out = String::with_capacity(text.len() + first.len());
    for (i, line) in text.lines().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let prefix = if i == 0 { first } else { rest };
        if line.is_empty() && i > 0 {
            out.push_str(prefix.trim_end());
        } else {
            out.push_str(prefix);
            out.push_str(line);
        }
    }
    if out.is_empty() {
        out.push_str(first.trim_end());
    }
    out
}

/// A code fence longer than any run of backticks in the text.
fn fence_for(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    "`".repeat((longest + 1).max(3))
}

/// Trailing spaces off every line, at most one blank line in a row, no
/// blank lines at either end.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank_run = 0;
    for line in text.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            blank_run += 1;
            if blank_run > 1 {
                continue;
            }
        } else {
            blank_run = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim_matches('\n').to_string()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use expect_test::expect;

    fn convert(html: &str) -> String {
        html_to_text(html, Url::parse("https://example.com/docs/page.html").ok().as_ref(), 50_000)
    }

    #[test]
    fn a_page_with_every_kind_of_content() {
        let html = r##"<!DOCTYPE html>
<html><head><title>T</title><style>body { color: red }</style><script>var x = "<p>no</p>";</script></head>
<body>
<nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<h1>Fish &amp; Chips</h1>
<p>Caf&eacute; prices are &lt;low&gt; &mdash; see <a href="menu.html">the  menu</a>
and <a href="#top">the top</a>.</p>
<noscript>Enable JavaScript!</noscript>
<ul>
  <li>First <b>bold</b> item</li>
  <li>Second
    <ol start="3"><li>three</li><li>four<ul><li>deep</li></ul></li></ol>
  </li>
</ul>
<table>
  <thead><tr><th>Name</th><th>Price</th></tr></thead>
  <tbody><tr><td>Cod</td><td>&pound;9</td></tr><tr><td>Plaice | fresh</td><td>£11</td></tr></tbody>
</table>
<pre><code>fn main() {
    println!("&lt;hi&gt;");
}</code></pre>
<p>Use <code>cargo   run</code> now.<br>Line two.</p>
</body></html>"##;
        expect![[r#"
            # Fish & Chips

            Café prices are <low> — see [the menu](https://example.com/docs/menu.html) and the top.

            - First **bold** item
            - Second
              3. three
              4. four
                 - deep

            | Name | Price |
            | --- | --- |
            | Cod | £9 |
            | Plaice \| fresh | £11 |

            ```
            fn main() {
                println!("<hi>");
            }
            ```

            Use `cargo run` now.
            Line two."#]]
        .assert_eq(&convert(html));
    }

    #[test]
    fn broken_markup_is_read_as_a_browser_would() {
        // Unclosed <p> and <li>, a stray </div>, an unknown entity.
        expect![[r#"
            one

            two &bogus;

            - a
            - b"#]]
        .assert_eq(&convert("<p>one<p>two &bogus;</div><ul><li>a<li>b"));
    }

    #[test]
    fn deep_nesting_is_bounded_and_keeps_the_text() {
        let html = format!("{}deep text{}", "<div><span>".repeat(5000), "</span></div>".repeat(5000));
        assert_eq!(convert(&html), "deep text");
    }

    #[test]
    fn the_budget_stops_the_walk() {
        let html = format!("<p>{}</p>", "word ".repeat(100_000));
        let text = html_to_text(&html, None, 100);
        assert!(text.len() < 2000 && text.len() >= 400, "{}", text.len());
    }

    #[test]
    fn spaces_around_inline_markup_stay_outside_it() {
        expect!["a **b** c[d](https://example.com/x)e*f* g"].assert_eq(&convert(r#"<p>a <b> b </b> c<a href="/x">d</a>e<i>f</i> g</p>"#));
    }
}
