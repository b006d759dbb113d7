//! `web_fetch` against loopback HTTP servers: each route answers one way
//! (a page, a redirect, silence, an endless body), and every call goes
//! through the real executor.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use expect_test::expect;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::*;
use crate::tools::support::test_fixture::fixture;
use crate::tools::{Executor, ToolCall, ToolRegistry, ToolResult};

enum Reply {
    Page { status: u16, headers: Vec<(&'static str, String)>, body: Vec<u8> },
    /// 200 with this content type and a body that never ends.
    Endless(&'static str),
    /// Accept the connection and never answer.
    Silent,
}

fn page(content_type: &str, body: impl Into<Vec<u8>>) -> Reply {
    Reply::Page { status: 200, headers: vec![("content-type", content_type.to_string())], body: body.into() }
}

fn redirect(to: &str) -> Reply {
    Reply::Page { status: 302, headers: vec![("location", to.to_string())], body: Vec::new() }
}

struct Server {
    url: String,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve<P: Into<String>>(routes: Vec<(P, Reply)>) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let routes: Arc<HashMap<String, Reply>> = Arc::new(routes.into_iter().map(|(p, r)| (p.into(), r)).collect());
    let task = tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let routes = Arc::clone(&routes);
            tokio::spawn(async move {
                let _ = answer(socket, &routes).await;
            });
        }
    });
    Server { url, task }
}

async fn answer(mut socket: TcpStream, routes: &HashMap<String, Reply>) -> std::io::Result<()> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if socket.read(&mut byte).await? == 0 {
            return Ok(());
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head);
    let path = head.split(' ').nth(1).unwrap_or("/");
    match routes.get(path) {
        None => socket.write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n").await?,
        Some(Reply::Page { status, headers, body }) => {
            let mut out = format!("HTTP/1.1 {status} Whatever\r\n");
            for (name, value) in headers {
                out.push_str(&format!("{name}: {value}\r\n"));
            }
            out.push_str(&format!("content-length: {}\r\nconnection: close\r\n\r\n", body.len()));
            socket.write_all(out.as_bytes()).await?;
            socket.write_all(body).await?;
        }
        Some(Reply::Endless(content_type)) => {
            socket.write_all(format!("HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\nconnection: close\r\n\r\n").as_bytes()).await?;
            let chunk = "<p>all work and no play makes jack a dull boy</p>\n".repeat(1000);
            // Until the client hangs up: the write fails then.
            loop {
                socket.write_all(chunk.as_bytes()).await?;
            }
        }
        Some(Reply::Silent) => {
            let mut buf = [0u8; 64];
            let _ = tokio::time::timeout(Duration::from_secs(30), async {
                while socket.read(&mut buf).await.map(|n| n > 0).unwrap_or(false) {}
            })
            .await;
        }
    }
    socket.shutdown().await
}

async fn fetch_with(tool: WebFetch, input: serde_json::Value) -> ToolResult {
    let fx = fixture(&[]);
    let mut registry = ToolRegistry::default();
    registry.register(tool);
    let call = ToolCall::new("t", "web_fetch", input);
    let executor = Executor::new(registry).with_results_dir(None);
    tokio::time::timeout(Duration::from_secs(60), executor.execute(&call, &fx.ctx)).await.expect("the fetch never ended").unwrap()
}

async fn fetch_url(url: &str) -> ToolResult {
    fetch_with(WebFetch::for_tests(Duration::from_secs(20)), json!({"url": url})).await
}

const PAGE: &str = r#"<!DOCTYPE html>
<html><head><title>Menu</title>
<style>p { color: red }</style>
<script>document.write("<p>tracking</p>")</script></head>
<body>
<nav><a href="/">Home</a> <a href="/shop">Shop</a></nav>
<noscript>Please enable JavaScript.</noscript>
<h1>Fish &amp; Chips &ndash; today</h1>
<p>Prices in &euro;, &quot;fresh&quot; &lt;daily&gt;. See <a href="/about">about us</a>.</p>
<ul>
  <li>Fish
    <ul><li>Cod</li><li>Haddock</li></ul>
  </li>
  <li>Chips</li>
</ul>
<table>
  <tr><th>Dish</th><th>Price</th></tr>
  <tr><td>Cod &amp; chips</td><td>9.50</td></tr>
</table>
<pre>line one
    indented &lt;two&gt;

line four</pre>
</body></html>"#;

#[tokio::test]
async fn an_html_page_becomes_readable_text() {
    let server = serve(vec![("/menu", page("text/html; charset=utf-8", PAGE))]).await;
    let result = fetch_url(&format!("{}/menu", server.url)).await;
    assert!(!result.is_error, "{}", result.content);
    let text = result.content.replace(&server.url, "http://HOST");
    expect![[r#"
        # Fish & Chips – today

        Prices in €, "fresh" <daily>. See [about us](http://HOST/about).

        - Fish
          - Cod
          - Haddock
        - Chips

        | Dish | Price |
        | --- | --- |
        | Cod & chips | 9.50 |

        ```
        line one
            indented <two>

        line four
        ```"#]]
    .assert_eq(&text);
}

#[tokio::test]
async fn json_and_text_come_back_as_they_are() {
    let body = "{\n  \"name\": \"tandem\",\n  \"tags\": [\"<b>\", \"&amp;\"]\n}";
    let server = serve(vec![("/api", page("application/json", body)), ("/notes.txt", page("text/plain", "a <b>c</b>\n  d"))]).await;
    let result = fetch_url(&format!("{}/api", server.url)).await;
    assert_eq!((result.is_error, result.content.as_str()), (false, body));
    let result = fetch_url(&format!("{}/notes.txt", server.url)).await;
    assert_eq!((result.is_error, result.content.as_str()), (false, "a <b>c</b>\n  d"));
}

#[tokio::test]
async fn a_404_says_the_status() {
    let server = serve(Vec::<(&str, Reply)>::new()).await;
    let result = fetch_url(&format!("{}/missing", server.url)).await;
    assert!(result.is_error);
    assert_eq!(result.content, "HTTP error: 404 Not Found");
}

#[tokio::test]
async fn a_redirect_chain_is_followed_and_links_resolve_against_the_last_address() {
    let server = serve(vec![
        ("/a", redirect("/b")),
        ("/b", redirect("/c/")),
        ("/c/", redirect("page.html")),
        ("/c/page.html", page("text/html", r#"<p>Arrived. <a href="next.html">next</a></p>"#)),
    ])
    .await;
    let result = fetch_url(&format!("{}/a", server.url)).await;
    assert!(!result.is_error, "{}", result.content);
    assert_eq!(result.content, format!("Arrived. [next]({}/c/next.html)", server.url));
}

/// The permission subject is the host: a redirect to another host (here
/// 127.0.0.1 → localhost) is not followed, and the model is told to fetch
/// the new URL itself, a call whose permission is asked for that host.
#[tokio::test]
async fn a_redirect_to_another_host_is_reported_not_followed() {
    let other = serve(vec![("/page", page("text/plain", "the other host's page"))]).await;
    let other_page = other.url.replace("127.0.0.1", "localhost") + "/page";
    let server = serve(vec![("/same", redirect("/away")), ("/away", redirect(&other_page))]).await;
    let result = fetch_url(&format!("{}/same", server.url)).await;
    assert!(!result.is_error, "{}", result.content);
    let expected = format!(
        "REDIRECT DETECTED: {base}/same redirects to a different host, localhost (302 Found).\nRedirect URL: {other_page}\n\nweb_fetch follows redirects only within the host that was asked for. To get the content, fetch the new URL: call web_fetch again with url \"{other_page}\".",
        base = server.url
    );
    assert_eq!(result.content, expected);
    // The model's next call, to the URL it was given, reads the page.
    let followed = fetch_url(&other_page).await;
    assert_eq!((followed.is_error, followed.content.as_str()), (false, "the other host's page"));
}

#[tokio::test]
async fn a_redirect_loop_is_named() {
    let server = serve(vec![("/ping", redirect("/pong")), ("/pong", redirect("/ping"))]).await;
    let result = fetch_url(&format!("{}/ping", server.url)).await;
    assert!(result.is_error);
    assert_eq!(
        result.content,
        format!("Error fetching URL: redirect loop: {}/ping redirects back to an address already visited", server.url)
    );
}

#[tokio::test]
async fn more_than_ten_redirects_are_refused() {
    let mut routes: Vec<(String, Reply)> = (0..11).map(|i| (format!("/r{i}"), redirect(&format!("/r{}", i + 1)))).collect();
    routes.push(("/r11".into(), page("text/plain", "end")));
    let server = serve(routes).await;
    let result = fetch_url(&format!("{}/r0", server.url)).await;
    assert_eq!(result.content, "Error fetching URL: too many redirects (more than 10)");
    // Ten are fine.
    let result = fetch_url(&format!("{}/r1", server.url)).await;
    assert_eq!((result.is_error, result.content.as_str()), (false, "end"));
}

#[tokio::test]
async fn a_server_that_never_answers_times_out() {
    let server = serve(vec![("/slow", Reply::Silent)]).await;
    let result = fetch_with(WebFetch::for_tests(Duration::from_millis(300)), json!({"url": format!("{}/slow", server.url)})).await;
    assert!(result.is_error);
    assert_eq!(result.content, "Error: Request timed out (0.3s)");
}

#[test]
fn the_real_timeout_reads_as_thirty_seconds() {
    assert_eq!(seconds(TIMEOUT), "30s");
}

#[tokio::test]
async fn an_endless_body_stops_at_the_cap() {
    let server = serve(vec![("/text", Reply::Endless("text/plain")), ("/html", Reply::Endless("text/html"))]).await;
    let result = fetch_with(WebFetch::for_tests(Duration::from_secs(30)), json!({"url": format!("{}/text", server.url), "max_length": 1000})).await;
    assert!(!result.is_error, "{}", result.content);
    assert!(result.content.ends_with("\n\n[... truncated at 1000 characters]"), "{}", result.content);
    assert_eq!(result.content.chars().count(), 1000 + "\n\n[... truncated at 1000 characters]".len());
    // HTML reads up to the byte cap (markup is larger than its text), then stops too.
    let result = fetch_url(&format!("{}/html", server.url)).await;
    assert!(!result.is_error, "{}", result.content);
    assert!(result.content.starts_with("all work and no play makes jack a dull boy\n\nall work"), "{}", &result.content[..200]);
    assert!(result.content.ends_with("\n\n[... truncated at 50000 characters]"));
}

#[tokio::test]
async fn the_charset_comes_from_the_header_or_the_meta_tag() {
    // "Grüße, café — 10€" in windows-1252 and in ISO-8859-15 (where € is 0xA4).
    let cp1252: &[u8] = b"Gr\xfc\xdfe, caf\xe9 \x97 10\x80";
    let latin9 = b"<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; charset=iso-8859-15\"></head><body><p>Gr\xfc\xdfe, caf\xe9 10\xa4</p></body></html>".to_vec();
    let shift_jis = b"<!doctype html><meta charset=\"shift_jis\"><p>\x93\xfa\x96\x7b\x8c\xea</p>".to_vec();
    let server = serve(vec![
        ("/header", page("text/plain; charset=windows-1252", cp1252)),
        ("/meta", page("text/html", latin9)),
        ("/sjis", Reply::Page { status: 200, headers: vec![], body: shift_jis }),
    ])
    .await;
    assert_eq!(fetch_url(&format!("{}/header", server.url)).await.content, "Grüße, café — 10€");
    assert_eq!(fetch_url(&format!("{}/meta", server.url)).await.content, "Grüße, café 10€");
    // No content type at all: sniffed as HTML, charset from the meta tag.
    assert_eq!(fetch_url(&format!("{}/sjis", server.url)).await.content, "日本語");
}

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89";

#[tokio::test]
async fn images_and_binary_bodies_are_refused() {
    let server = serve(vec![
        ("/logo.png", page("image/png", PNG)),
        ("/blob", page("application/octet-stream", PNG)),
        ("/unlabelled", Reply::Page { status: 200, headers: vec![], body: PNG.to_vec() }),
    ])
    .await;
    for (path, label) in [("/logo.png", " (image/png)"), ("/blob", " (application/octet-stream)"), ("/unlabelled", "")] {
        let result = fetch_url(&format!("{}{path}", server.url)).await;
        assert!(result.is_error, "{path}");
        assert_eq!(
            result.content,
            format!(
                "Error: {}{path} returned binary content{label}. web_fetch returns only HTML, JSON and text; it cannot read images or other binary files.",
                server.url
            )
        );
    }
}

#[tokio::test]
async fn only_http_urls_are_fetched() {
    for url in ["file:///etc/passwd", "ftp://example.com/x", "data:text/plain,hi"] {
        let result = fetch_url(url).await;
        assert!(result.is_error);
        assert_eq!(result.content, "Error: only http(s) URLs are supported", "{url}");
    }
    let result = fetch_url("example.com/page").await;
    assert_eq!(result.content, "Error: \"example.com/page\" is not a full URL; give it with its scheme, e.g. https://example.com/page");
}

#[tokio::test]
async fn an_empty_body_says_so_and_a_refused_connection_is_explained() {
    let server = serve(vec![("/empty", page("text/html", "")), ("/blank", page("text/html", "<html><script>x()</script></html>"))]).await;
    assert_eq!(fetch_url(&format!("{}/empty", server.url)).await.content, "(empty response)");
    assert_eq!(fetch_url(&format!("{}/blank", server.url)).await.content, "(empty response)");
    // A port nobody listens on: bind one, then free it.
    let port = TcpListener::bind("127.0.0.1:0").await.unwrap().local_addr().unwrap().port();
    let result = fetch_url(&format!("http://127.0.0.1:{port}/")).await;
    assert!(result.is_error);
    assert!(result.content.starts_with("Error fetching URL: ") && result.content.contains("onnection refused"), "{}", result.content);
}

#[tokio::test]
async fn max_length_cuts_the_text() {
    let server = serve(vec![("/long", page("text/plain", "0123456789".repeat(10)))]).await;
    let result = fetch_with(WebFetch::for_tests(Duration::from_secs(20)), json!({"url": format!("{}/long", server.url), "max_length": 25})).await;
    assert_eq!(result.content, "0123456789012345678901234\n\n[... truncated at 25 characters]");
}

#[test]
fn the_definition_is_what_the_model_reads() {
    let definition = crate::tools::DynTool::definition(&WebFetch::default());
    assert_eq!(
        definition.description,
        "Fetch a URL and return its content as text. For HTML pages, tags are stripped to return readable text. For JSON/text responses, content is returned directly."
    );
    assert_eq!(definition.input_schema["required"], json!(["url"]));
}
