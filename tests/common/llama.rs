//! A real local model for the inline-completion tests: llama.cpp's
//! `llama-server` serving Qwen2.5-Coder-0.5B on the CPU, both installed by
//! `.ci/tools` into the tools cache (`TANDEM_LLAMA_SERVER`,
//! `TANDEM_LLAMA_MODEL`). Where they are missing the test says so and skips;
//! with `TANDEM_REQUIRE_LLAMA` set (`.ci/run`) it fails instead.
#![allow(clippy::unwrap_used)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running llama-server; stopped on drop.
pub struct Llama {
    child: Child,
    pub url: String,
}

impl Drop for Llama {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The local model's server and weights, or why not.
pub fn llama_files() -> Result<(PathBuf, PathBuf), String> {
    let tools = super::tools::ci_tools();
    let server = std::env::var_os("TANDEM_LLAMA_SERVER").map(PathBuf::from).unwrap_or_else(|| tools.join("llama-cpp/bin/llama-server"));
    let model = std::env::var_os("TANDEM_LLAMA_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| tools.join("qwen2.5-coder-0.5b/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"));
    let missing: Vec<String> = [(&server, "llama.cpp's llama-server"), (&model, "the Qwen2.5-Coder-0.5B GGUF")]
        .iter()
        .filter(|(path, _)| !path.is_file())
        .map(|(path, what)| format!("{what} at {}", path.display()))
        .collect();
    if missing.is_empty() { Ok((server, model)) } else { Err(missing.join("; ")) }
}

/// Start the local model, or skip (None) with a message; with
/// `TANDEM_REQUIRE_LLAMA` set a missing model fails the test.
pub fn llama(test: &str) -> Option<Llama> {
    let (server, model) = match llama_files() {
        Ok(files) => files,
        Err(missing) => {
            super::tools::skip(test, "TANDEM_REQUIRE_LLAMA", &format!("missing {missing}"));
            return None;
        }
    };
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let log_path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("llama-server.log");
    let log = std::fs::File::create(&log_path).unwrap();
    // One thread: with two on a busy two-core machine, llama.cpp's threads
    // spin waiting for each other (5 tokens/s with one, 2 with two, seen
    // here). No weight repacking: on this machine's CPU the repacked AMX
    // path of the native build crashes (SIGSEGV in ggml_backend_amx_mul_mat).
    let child = Command::new(&server)
        .arg("-m")
        .arg(&model)
        .args(["--host", "127.0.0.1", "--port", &port.to_string(), "-c", "4096", "-t", "1", "-np", "1", "--no-webui", "--no-repack"])
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", server.display()));
    let mut llama = Llama { child, url: format!("http://127.0.0.1:{port}") };
    // Loading the model takes seconds; /health answers 200 once it is ready.
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let healthy = TcpStream::connect(("127.0.0.1", port)).ok().and_then(|mut stream| {
            stream.write_all(b"GET /health HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n").ok()?;
            let mut answer = String::new();
            stream.read_to_string(&mut answer).ok()?;
            Some(answer.starts_with("HTTP/1.1 200"))
        });
        if healthy == Some(true) {
            return Some(llama);
        }
        // Present but not working is a failure, never a skip.
        if let Some(status) = llama.child.try_wait().unwrap() {
            let log = std::fs::read_to_string(&log_path).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(20).collect::<Vec<_>>().into_iter().rev().collect();
            panic!("llama-server ({}) exited with {status} before it was ready:\n{}", server.display(), tail.join("\n"));
        }
        assert!(Instant::now() < deadline, "llama-server did not become healthy within 300 s (see {})", log_path.display());
        // Polling a server's readiness, bounded by the deadline.
        std::thread::sleep(Duration::from_millis(100));
    }
}

