//! `sandbox.network` as lists, by effect: loopback HTTP servers stand in
//! for internet hosts, named `allowed.localhost` and `other.localhost`
//! (Tandem resolves `localhost` and its subdomains to loopback itself, as
//! RFC 6761 asks, so no hosts file is edited), with `allowLocal` on, since
//! the lists refuse local addresses otherwise. Each check counts what the
//! servers received, not only what Tandem said:
//!
//! - a listed host is reached through the proxy variables (curl over
//!   plain HTTP, CONNECT and SOCKS5, and a raw socket in python3 speaking
//!   CONNECT), an unlisted one is not, and the command prints why;
//! - a command that ignores the proxy and dials out directly (curl
//!   `--noproxy`, a raw socket) reaches nothing: the namespace has no way
//!   out but the proxy;
//! - an IP address is refused unless listed, a local one without
//!   `allowLocal`; a project's settings add `deny` but never `allow`;
//! - each refused host is told the user once per run, as a `sandbox` event,
//!   and put to them once as a question: "allow HOST" lets the next
//!   command reach it, and the next run of the session too;
//! - `web_fetch` obeys the same lists.
//!
//! Without bubblewrap the shell tests skip, unless `TANDEM_REQUIRE_BWRAP`
//! is set.

#![allow(clippy::unwrap_used)]
#![cfg(target_os = "linux")]

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};

use crate::common::lsp_client;
use crate::common::script::shell;

/// An HTTP server on loopback answering every request with `body`, and
/// counting the connections it accepted.
struct Server {
    port: u16,
    connections: Arc<AtomicUsize>,
}

impl Server {
    fn start(body: &'static str) -> Server {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let connections = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&connections);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                count.fetch_add(1, Ordering::SeqCst);
                std::thread::spawn(move || {
                    let mut head = Vec::new();
                    let mut byte = [0u8; 1];
                    while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).is_ok_and(|n| n == 1) {
                        head.push(byte[0]);
                    }
                    let answer = format!("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
                    let _ = stream.write_all(answer.as_bytes());
                });
            }
        });
        Server { port, connections }
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

struct Run {
    _temp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
}

impl Run {
    fn new(user: Value, project: Value) -> Run {
        let temp = tempfile::tempdir().unwrap();
        let base = temp.path().canonicalize().unwrap();
        let (root, home) = (base.join("work"), base.join("home"));
        std::fs::create_dir_all(root.join(".tandem")).unwrap();
        std::fs::create_dir_all(home.join(".tandem")).unwrap();
        std::fs::write(home.join(".tandem/settings.json"), user.to_string()).unwrap();
        std::fs::write(root.join(".tandem/settings.json"), project.to_string()).unwrap();
        Run { _temp: temp, root, home }
    }

    /// One call per turn, approved (`bypassPermissions`); the run's events.
    fn ask(&self, calls: Vec<Value>) -> Vec<Value> {
        let mut turns: Vec<Value> = calls.into_iter().map(|call| json!({"tool_calls": [call]})).collect();
        turns.push(json!({"text": "Done."}));
        let script = self.home.join("script.json");
        std::fs::write(&script, json!({"turns": turns}).to_string()).unwrap();
        let output = Command::new(env!("CARGO_BIN_EXE_tandem"))
            .current_dir(&self.root)
            .env("HOME", &self.home)
            .env("XDG_DATA_HOME", self.home.join("data"))
            .env("XDG_CACHE_HOME", self.home.join("cache"))
            .env("TANDEM_PROVIDER", "scripted")
            .env("TANDEM_SCRIPT", &script)
            .env_remove("HTTP_PROXY")
            .env_remove("http_proxy")
            .env_remove("ALL_PROXY")
            .env_remove("all_proxy")
            .stdin(Stdio::null())
            .args(["ask", "--json", "--trust", "--permission-mode", "bypassPermissions", "go"])
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8_lossy(&output.stdout).lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()).collect()
    }
}

fn results(events: &[Value]) -> Vec<String> {
    events.iter().filter(|e| e["type"] == "tool_result").map(|e| e["content"].as_str().unwrap().to_string()).collect()
}

fn notices(events: &[Value]) -> Vec<String> {
    events.iter().filter(|e| e["type"] == "sandbox").map(|e| e["message"].as_str().unwrap().to_string()).collect()
}

/// A python3 program that speaks CONNECT to the proxy on a raw socket and
/// prints the answer's first line and, when let through, the body.
fn raw_connect(host: &str, port: u16) -> String {
    format!(
        "/usr/bin/python3 -c 'import os,socket\nproxy=os.environ[\"HTTPS_PROXY\"].rsplit(\":\",1)\ns=socket.create_connection((proxy[0][7:],int(proxy[1])),timeout=10)\ns.sendall(b\"CONNECT {host}:{port} HTTP/1.1\\r\\n\\r\\n\")\nf=s.makefile(\"rb\")\nline=f.readline().decode().strip()\nprint(line)\nif \" 200 \" in line:\n  f.readline()\n  s.sendall(b\"GET / HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n\")\n  print(f.read().decode().split(\"\\r\\n\\r\\n\")[-1])\n'"
    )
}

/// A python3 program that dials `port` on loopback directly.
fn raw_direct(port: u16) -> String {
    format!("/usr/bin/python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), timeout=5); print(\"DIRECT-CONNECTED\")'")
}

#[test]
fn listed_hosts_are_reached_through_the_proxy_and_nothing_else_is() {
    if !crate::common::bwrap_works() {
        return;
    }
    let allowed = Server::start("ALLOWED-REACHED");
    let other = Server::start("OTHER-REACHED");
    let (a, o) = (allowed.port, other.port);
    let run = Run::new(json!({"sandbox": {"network": {"allow": ["allowed.localhost"], "allowLocal": true}}}), json!({}));
    let commands = [
        format!("curl -sS http://allowed.localhost:{a}/"),
        format!("curl -sS -p http://allowed.localhost:{a}/"),
        format!("curl -sS --proxy \"$ALL_PROXY\" http://allowed.localhost:{a}/"),
        raw_connect("allowed.localhost", a),
        format!("curl -sS http://other.localhost:{o}/"),
        format!("curl -sS -p http://other.localhost:{o}/"),
        format!("curl -sS --proxy \"$ALL_PROXY\" http://other.localhost:{o}/"),
        raw_connect("other.localhost", o),
        format!("curl -sS http://127.0.0.1:{o}/"),
        format!("curl -sS --noproxy '*' --max-time 5 http://127.0.0.1:{o}/"),
        raw_direct(o),
        raw_direct(a),
        format!("curl -sS -g http://[::1]:{o}/"),
        format!("curl -sS -g --noproxy '*' --max-time 5 http://[::1]:{a}/"),
    ];
    let events = run.ask(commands.iter().map(|c| shell(c)).collect());
    let out = results(&events);
    assert_eq!(out.len(), commands.len(), "{out:#?}");
    // Listed: reached four ways.
    for (i, text) in out[..4].iter().enumerate() {
        assert!(text.contains("ALLOWED-REACHED"), "{}: {text}", commands[i]);
    }
    assert!(out[3].starts_with("HTTP/1.1 200"), "{}", out[3]);
    assert_eq!(allowed.connections(), 4, "{out:#?}");
    // Unlisted: refused each way, with the reason printed by the command.
    assert!(out[4].contains("Tandem's sandbox refused other.localhost: other.localhost is not in sandbox.network.allow"), "{}", out[4]);
    assert!(out[5].contains("CONNECT tunnel failed, response 403"), "{}", out[5]);
    // curl does not name the host there: the note for the model does.
    assert!(out[5].contains("in this run it refused: other.localhost. Only the user can let a host through"), "{}", out[5]);
    assert!(out[6].contains("not allowed") || out[6].contains("(2)"), "{}", out[6]);
    assert!(out[7].contains("403 Forbidden by Tandem's sandbox: other.localhost is not in sandbox.network.allow"), "{}", out[7]);
    // An IP address, not listed: refused.
    assert!(out[8].contains("127.0.0.1 is an IP address"), "{}", out[8]);
    // Dialling out directly reaches nothing, the listed host's server either.
    for text in &out[9..] {
        assert!(!text.contains("REACHED") && !text.contains("DIRECT-CONNECTED"), "{text}");
    }
    assert!(out[10].contains("ConnectionRefusedError") || out[10].contains("Network is unreachable"), "{}", out[10]);
    // The model is told why, and that the proxy is the way out.
    assert!(out[10].contains("a program that ignores those variables, or looks names up itself, reaches nothing"), "{}", out[10]);
    // IPv6: a literal through the proxy is refused like any address, and a
    // direct dial reaches nothing.
    assert!(out[12].contains("::1 is an IP address"), "{}", out[12]);
    assert!(out[13].contains("curl: (7)") && !out[13].contains("REACHED"), "{}", out[13]);
    assert_eq!(other.connections(), 0, "the unlisted server was reached: {out:#?}");
    assert_eq!(allowed.connections(), 4, "the listed server was reached directly: {out:#?}");
    // The user hears of the refused hosts once each, however often refused.
    let told = notices(&events);
    assert_eq!(told.iter().filter(|m| m.contains("refused other.localhost")).count(), 1, "{told:#?}");
    assert_eq!(told.iter().filter(|m| m.contains("refused 127.0.0.1")).count(), 1, "{told:#?}");
    assert!(told.iter().all(|m| !m.contains("allowed.localhost")), "{told:#?}");
}

#[test]
fn local_addresses_need_allow_local_and_a_project_may_deny_but_not_allow() {
    if !crate::common::bwrap_works() {
        return;
    }
    let server = Server::start("REACHED");
    let port = server.port;
    let fetch = |host: &str| shell(&format!("curl -sS http://{host}:{port}/"));
    // Listed, but it resolves to loopback and allowLocal is off.
    let run = Run::new(json!({"sandbox": {"network": {"allow": ["allowed.localhost"]}}}), json!({}));
    let out = results(&run.ask(vec![fetch("allowed.localhost")]));
    assert!(out[0].contains("resolves to a local address (127.0.0.1)") && out[0].contains("allowLocal"), "{out:?}");
    assert_eq!(server.connections(), 0);
    // A (trusted) project's file lists a host and allows local addresses:
    // neither counts; its deny does.
    let run = Run::new(
        json!({"sandbox": {"network": {"allow": ["allowed.localhost", "denied.localhost"], "allowLocal": true}}}),
        json!({"sandbox": {"network": {"allow": ["other.localhost"], "deny": ["denied.localhost"]}}}),
    );
    let background = json!({"name": "run_shell", "input": {"command": format!("curl -sS http://allowed.localhost:{port}/"), "background": true}});
    let out = results(&run.ask(vec![fetch("other.localhost"), fetch("denied.localhost"), fetch("allowed.localhost"), background]));
    assert!(out[0].contains("other.localhost is not in sandbox.network.allow"), "{out:?}");
    assert!(out[1].contains("denied.localhost is denied by sandbox.network.deny"), "{out:?}");
    assert!(out[2].contains("REACHED"), "{out:?}");
    // A background task through the proxy is told its loopback is its own.
    assert!(out[3].contains("It reaches the hosts the settings' sandbox.network lists, through Tandem's proxy; its loopback is its own"), "{out:?}");
}

#[test]
fn web_fetch_obeys_the_same_lists() {
    let allowed = Server::start("ALLOWED-REACHED");
    let other = Server::start("OTHER-REACHED");
    let fetch = |host: &str, port: u16| json!({"name": "web_fetch", "input": {"url": format!("http://{host}:{port}/")}});
    let run = Run::new(json!({"sandbox": {"network": {"allow": ["allowed.localhost"], "allowLocal": true}}}), json!({"sandbox": {"network": {"deny": ["denied.localhost"]}}}));
    let events = run.ask(vec![
        fetch("allowed.localhost", allowed.port),
        fetch("other.localhost", other.port),
        fetch("127.0.0.1", other.port),
        fetch("denied.localhost", other.port),
        fetch("other.localhost", other.port),
    ]);
    let out = results(&events);
    assert_eq!(out[0], "ALLOWED-REACHED");
    assert!(out[1].contains("refuse this URL: other.localhost is not in sandbox.network.allow"), "{out:?}");
    assert!(out[2].contains("127.0.0.1 is an IP address"), "{out:?}");
    assert!(out[3].contains("denied.localhost is denied by sandbox.network.deny"), "{out:?}");
    assert_eq!((allowed.connections(), other.connections()), (1, 0));
    let told = notices(&events);
    assert_eq!(told.iter().filter(|m| m.contains("refused other.localhost")).count(), 1, "{told:#?}");
    // Without allowLocal, a listed host on loopback is refused too.
    let run = Run::new(json!({"sandbox": {"network": {"allow": ["allowed.localhost"]}}}), json!({}));
    let out = results(&run.ask(vec![fetch("allowed.localhost", allowed.port)]));
    assert!(out[0].contains("resolves to a local address"), "{out:?}");
    assert_eq!(allowed.connections(), 1);
}

#[test]
fn doctor_shows_the_lists() {
    let run = Run::new(json!({"sandbox": {"network": {"allow": ["pypi.org", "*.npmjs.org"], "allowLocal": true}}}), json!({"sandbox": {"network": {"deny": ["ads.example"]}}}));
    let doctor = |json_output: bool| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_tandem"));
        command.current_dir(&run.root).env("HOME", &run.home).env("XDG_DATA_HOME", run.home.join("data")).args(["--trust", "doctor"]);
        if json_output {
            command.arg("--json");
        }
        String::from_utf8(command.output().unwrap().stdout).unwrap()
    };
    let text = doctor(false);
    assert!(
        text.contains("network: approved commands reach only these hosts, through Tandem's proxy: pypi.org, *.npmjs.org (local addresses too: allowLocal); denied: ads.example\n"),
        "{text}"
    );
    let report: Value = serde_json::from_str(&doctor(true)).unwrap();
    assert_eq!(report["sandbox"]["network"]["allow"], json!(["pypi.org", "*.npmjs.org"]));
    assert_eq!(report["sandbox"]["network"]["deny"], json!(["ads.example"]));
    assert_eq!(report["sandbox"]["network"]["allowLocal"], json!(true));
    // With the sandbox off, nothing holds shell commands to the lists: said so.
    std::fs::write(run.home.join(".tandem/settings.json"), json!({"sandbox": {"enabled": false, "network": {"allow": ["pypi.org"]}}}).to_string()).unwrap();
    let text = doctor(false);
    assert!(text.contains("network: shell commands reach the whole network: without a sandbox, sandbox.network's lists do not hold for them (web_fetch still obeys them)\n"), "{text}");
}

/// In the editor, a refused host is a message (as the run's first notice
/// is), once per run however often it is refused.
#[test]
fn the_editor_is_told_of_a_refused_host_once_per_run() {
    if !crate::common::bwrap_works() {
        return;
    }
    let server = Server::start("REACHED");
    let f = lsp_client::Fixture::new(&[("notes.txt", "my notes\n")]);
    let home = f.root.parent().unwrap().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let curl = shell(&format!("curl -sS http://other.localhost:{}/", server.port));
    let turns = json!([{"text": "", "tool_calls": [curl.clone()]}, {"text": "", "tool_calls": [curl]}, {"text": "Done."}]);
    let home_var = home.to_string_lossy().to_string();
    let options = json!({"tandem": {"permissionMode": "bypassPermissions", "sandbox": {"network": {"allow": ["allowed.localhost"], "allowLocal": true}}}});
    let mut client = f.start_with_env(turns, json!({}), options, &[("HOME", &home_var)]);
    let id = client.send_request("workspace/executeCommand", lsp_client::ask_params("fetch it"));
    let refusal = |m: &Value| m["method"] == "window/showMessage" && m["params"]["message"].as_str().unwrap_or_default().contains("refused");
    let shown = client.wait_for("the refusal message", refusal);
    let message = shown["params"]["message"].as_str().unwrap_or_default();
    assert!(message.starts_with("Tandem: The sandbox's network refused other.localhost: other.localhost is not in sandbox.network.allow"), "{message}");
    // The host is put to the user once: "Deny" keeps it refused.
    let question = client.wait_for("the host's question", |m| m["method"] == "window/showMessageRequest");
    assert!(question["params"]["message"].as_str().unwrap().contains("Let other.localhost through?"), "{question}");
    client.respond(&question["id"], json!({"title": "Deny"}));
    assert_eq!(client.response(id)["result"]["text"], "Done.");
    assert_eq!(client.seen.iter().filter(|m| m["method"] == "window/showMessageRequest").count(), 1, "{:#?}", client.seen);
    let results = client.tool_results();
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(results.iter().all(|(_, text)| text.contains("Tandem's sandbox refused other.localhost")), "{results:?}");
    let messages = client.seen.iter().filter(|m| refusal(m)).count();
    assert_eq!(messages, 1, "{:#?}", client.seen);
    assert_eq!(server.connections(), 0);
    client.shutdown();
}

/// "Allow other.localhost for this session" in the editor: the next
/// command of the run reaches it through the proxy, and so does the next
/// run's, unasked.
#[test]
fn allow_host_in_the_editor_lets_the_next_command_through() {
    if !crate::common::bwrap_works() {
        return;
    }
    let server = Server::start("REACHED");
    let f = lsp_client::Fixture::new(&[("notes.txt", "my notes\n")]);
    let home = f.root.parent().unwrap().join("home");
    std::fs::create_dir_all(home.join(".tandem")).unwrap();
    let curl = shell(&format!("curl -sS http://other.localhost:{}/", server.port));
    let turns = json!([{"text": "", "tool_calls": [curl.clone()]}, {"text": "", "tool_calls": [curl]}, {"text": "Done."}]);
    let home_var = home.to_string_lossy().to_string();
    let options = json!({"tandem": {"permissionMode": "bypassPermissions", "sandbox": {"network": {"allow": ["allowed.localhost"], "allowLocal": true}}}});
    let mut client = f.start_with_env(turns, json!({}), options, &[("HOME", &home_var)]);
    let id = client.send_request("workspace/executeCommand", lsp_client::ask_params("fetch it"));
    let question = client.wait_for("the host's question", |m| m["method"] == "window/showMessageRequest");
    let titles: Vec<&str> = question["params"]["actions"].as_array().unwrap().iter().map(|a| a["title"].as_str().unwrap()).collect();
    assert_eq!(titles, ["Allow other.localhost for this session", "Always allow other.localhost (saved in ~/.tandem/settings.json)", "Deny"]);
    assert_eq!(server.connections(), 0);
    client.respond(&question["id"], json!({"title": "Allow other.localhost for this session"}));
    assert_eq!(client.response(id)["result"]["text"], "Done.");
    let results = client.tool_results();
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(results[0].1.contains("Tandem's sandbox refused other.localhost") && results[0].1.contains("The user allowed other.localhost"), "{results:?}");
    assert!(results[1].1.contains("REACHED"), "{results:?}");
    assert_eq!(server.connections(), 1);
    // The session's next run (the same script again) reaches it twice, unasked.
    let id = client.send_request("workspace/executeCommand", lsp_client::ask_params("again"));
    assert_eq!(client.response(id)["result"]["text"], "Done.");
    let results = client.tool_results();
    assert!(results.len() == 4 && results[2..].iter().all(|(_, text)| text.contains("REACHED")), "{results:?}");
    assert_eq!(server.connections(), 3);
    assert_eq!(client.seen.iter().filter(|m| m["method"] == "window/showMessageRequest").count(), 1, "{:#?}", client.seen);
    client.shutdown();
}
