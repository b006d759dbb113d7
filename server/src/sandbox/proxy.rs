//! The network proxy approved commands reach hosts through when
//! `sandbox.network` lists them: HTTP (CONNECT, and plain requests with
//! an absolute URL) and SOCKS5 on one Unix socket, which the sandbox binds
//! into the command's otherwise empty network namespace; the bridge
//! ([`super::bridge`]) in there listens on loopback and passes each
//! connection to it. There is no other way out: the namespace has no
//! route, and no DNS either, so names are resolved here, after the lists
//! allowed them ([`crate::tools::ports::network`]).
//!
//! Written here rather than taken from a crate: the part needed is small
//! (two handshakes and a byte pump over blocking sockets), and the crates
//! that offer it are servers built on an async stack of their own, with
//! their own resolver, which would have to be bent to check the addresses
//! it connects to.
//!
//! One thread per connection, blocking I/O: a command opens few
//! connections, and threads keep the proxy free of the run's async
//! runtime (it serves background tasks that outlive a run, too).

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::tools::ports::network::Network;

/// The most bytes of a request's head (request line and headers).
const MAX_HEAD: usize = 64 * 1024;
/// How long a client has to say where it wants to go.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one address is tried.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// Connections served at once; past it a new one is closed (a thread
/// each: a command opening thousands must not exhaust Tandem's).
const MAX_CONNECTIONS: usize = 512;

/// A running proxy; it stops, and its socket goes, when dropped.
pub struct Proxy {
    socket: PathBuf,
    stopped: Arc<AtomicBool>,
    /// The private folder the socket is in (0700), removed on drop.
    _folder: tempfile::TempDir,
}

impl Proxy {
    /// Start a proxy that lets through what `network` allows, on a socket
    /// in a private folder of the runtime folder (else the temp folder).
    pub fn start(network: Arc<Network>) -> std::io::Result<Proxy> {
        let base = crate::environment::var("XDG_RUNTIME_DIR").map(PathBuf::from).filter(|dir| dir.is_dir()).unwrap_or_else(std::env::temp_dir);
        let folder = tempfile::Builder::new().prefix("tandem-network-").tempdir_in(base)?;
        let socket = folder.path().join("proxy.sock");
        let listener = UnixListener::bind(&socket)?;
        let stopped = Arc::new(AtomicBool::new(false));
        let stop = Arc::clone(&stopped);
        let open = Arc::new(AtomicUsize::new(0));
        std::thread::Builder::new().name("tandem-network-proxy".into()).spawn(move || {
            for client in listener.incoming() {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(client) = client else { continue };
                if open.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
                    open.fetch_sub(1, Ordering::SeqCst);
                    tracing::warn!("the network proxy has {MAX_CONNECTIONS} connections open: one more is closed");
                    continue;
                }
                let network = Arc::clone(&network);
                let served = Arc::clone(&open);
                let spawned = std::thread::Builder::new().name("tandem-network-connection".into()).spawn(move || {
                    serve(client, &network);
                    served.fetch_sub(1, Ordering::SeqCst);
                });
                if let Err(err) = spawned {
                    tracing::warn!(%err, "the network proxy cannot start a thread for a connection");
                }
            }
        })?;
        Ok(Proxy { socket, stopped, _folder: folder })
    }

    /// The socket to bind into the sandbox.
    pub fn socket(&self) -> &Path {
        &self.socket
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stopped.store(true, Ordering::SeqCst);
        // Wake the accepting thread so it sees the flag and ends.
        let _ = UnixStream::connect(&self.socket);
    }
}

/// One client: its handshake, the lists, then bytes both ways.
fn serve(mut client: UnixStream, network: &Network) {
    let _ = client.set_read_timeout(Some(HANDSHAKE_TIMEOUT));
    let mut first = [0u8; 1];
    if client.read_exact(&mut first).is_err() {
        return;
    }
    let upstream = match first[0] {
        5 => socks5(&mut client, network),
        byte => http(&mut client, byte, network),
    };
    let Some(upstream) = upstream else { return };
    let _ = client.set_read_timeout(None);
    pump(client, upstream);
}

/// Connect to the first of `addresses` that answers.
fn connect(addresses: &[SocketAddr]) -> std::io::Result<TcpStream> {
    let mut last = std::io::Error::new(std::io::ErrorKind::NotFound, "no address");
    for address in addresses {
        match TcpStream::connect_timeout(address, CONNECT_TIMEOUT) {
            Ok(stream) => return Ok(stream),
            Err(err) => last = err,
        }
    }
    Err(last)
}

/// SOCKS5 (RFC 1928), no authentication, CONNECT only. A name is sent to
/// be resolved here (`socks5h://`); an address is checked as one.
fn socks5(client: &mut UnixStream, network: &Network) -> Option<TcpStream> {
    let mut count = [0u8; 1];
    client.read_exact(&mut count).ok()?;
    let mut methods = vec![0u8; usize::from(count[0])];
    client.read_exact(&mut methods).ok()?;
    if !methods.contains(&0) {
        let _ = client.write_all(&[5, 0xff]);
        return None;
    }
    client.write_all(&[5, 0]).ok()?;
    let mut request = [0u8; 4];
    client.read_exact(&mut request).ok()?;
    let host = match request[3] {
        1 => {
            let mut ip = [0u8; 4];
            client.read_exact(&mut ip).ok()?;
            std::net::Ipv4Addr::from(ip).to_string()
        }
        3 => {
            let mut len = [0u8; 1];
            client.read_exact(&mut len).ok()?;
            let mut name = vec![0u8; usize::from(len[0])];
            client.read_exact(&mut name).ok()?;
            String::from_utf8_lossy(&name).into_owned()
        }
        4 => {
            let mut ip = [0u8; 16];
            client.read_exact(&mut ip).ok()?;
            std::net::Ipv6Addr::from(ip).to_string()
        }
        _ => {
            let _ = client.write_all(&socks_reply(8));
            return None;
        }
    };
    let mut port = [0u8; 2];
    client.read_exact(&mut port).ok()?;
    let port = u16::from_be_bytes(port);
    if request[1] != 1 {
        // BIND and UDP ASSOCIATE: not offered.
        let _ = client.write_all(&socks_reply(7));
        return None;
    }
    let addresses = match network.resolve(&host, port) {
        Ok(addresses) => addresses,
        Err(_) => {
            // 2: connection not allowed by ruleset.
            let _ = client.write_all(&socks_reply(2));
            return None;
        }
    };
    match connect(&addresses) {
        Ok(upstream) => {
            client.write_all(&socks_reply(0)).ok()?;
            Some(upstream)
        }
        Err(err) => {
            let code = match err.kind() {
                std::io::ErrorKind::ConnectionRefused => 5,
                std::io::ErrorKind::TimedOut => 6,
                _ => 4,
            };
            let _ = client.write_all(&socks_reply(code));
            None
        }
    }
}

/// A SOCKS5 reply with `code` and an unspecified bound address.
fn socks_reply(code: u8) -> [u8; 10] {
    [5, code, 0, 1, 0, 0, 0, 0, 0, 0]
}

/// HTTP: `CONNECT host:port` opens a tunnel; a request with an absolute
/// `http://` URL is sent on to its host in origin form, with the URL's
/// host as `Host` (not another site on the same server, named in a header
/// of the client's) and `Connection: close`, so the next request comes
/// through here again.
fn http(client: &mut UnixStream, first: u8, network: &Network) -> Option<TcpStream> {
    let mut head = vec![first];
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() >= MAX_HEAD || client.read_exact(&mut byte).is_err() {
            let _ = client.write_all(&status(400, "Bad Request", "the request's head is too long or cut short"));
            return None;
        }
        head.push(byte[0]);
    }
    let text = String::from_utf8_lossy(&head).into_owned();
    let mut lines = text.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split(' ');
    let (method, target, version) = (parts.next().unwrap_or_default(), parts.next().unwrap_or_default(), parts.next().unwrap_or("HTTP/1.1"));
    let (host, port, path) = if method.eq_ignore_ascii_case("CONNECT") {
        match split_host_port(target, None) {
            Some((host, port)) => (host, port, None),
            None => {
                let _ = client.write_all(&status(400, "Bad Request", "CONNECT needs host:port"));
                return None;
            }
        }
    } else {
        let Some(rest) = target.strip_prefix("http://") else {
            let _ = client.write_all(&status(400, "Bad Request", "this proxy takes CONNECT, or requests with an absolute http:// URL"));
            return None;
        };
        let (authority, path) = rest.find('/').map_or((rest, "/"), |at| (&rest[..at], &rest[at..]));
        let authority = authority.rsplit('@').next().unwrap_or(authority);
        match split_host_port(authority, Some(80)) {
            Some((host, port)) => (host, port, Some(path.to_string())),
            None => {
                let _ = client.write_all(&status(400, "Bad Request", "the URL names no host"));
                return None;
            }
        }
    };
    let addresses = match network.resolve(&host, port) {
        Ok(addresses) => addresses,
        Err(reason) => {
            let message = format!("Tandem's sandbox refused {host}: {reason}");
            let _ = client.write_all(&status(403, &format!("Forbidden by Tandem's sandbox: {reason}"), &message));
            return None;
        }
    };
    let mut upstream = match connect(&addresses) {
        Ok(upstream) => upstream,
        Err(err) => {
            let _ = client.write_all(&status(502, "Bad Gateway", &format!("cannot connect to {host}:{port}: {err}")));
            return None;
        }
    };
    match path {
        None => client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n").ok()?,
        Some(path) => {
            let mut forwarded = format!("{method} {path} {version}\r\n");
            for line in lines.filter(|line| !line.is_empty()) {
                let name = line.split(':').next().unwrap_or_default().trim().to_ascii_lowercase();
                if !matches!(name.as_str(), "host" | "proxy-connection" | "proxy-authorization" | "connection" | "keep-alive") {
                    forwarded.push_str(line);
                    forwarded.push_str("\r\n");
                }
            }
            let authority = if host.contains(':') { format!("[{host}]") } else { host.clone() };
            let authority = if port == 80 { authority } else { format!("{authority}:{port}") };
            forwarded.push_str(&format!("Host: {authority}\r\nConnection: close\r\n\r\n"));
            upstream.write_all(forwarded.as_bytes()).ok()?;
        }
    }
    Some(upstream)
}

/// `host:port`, `[v6]:port`, or a host alone with a default port.
fn split_host_port(authority: &str, default_port: Option<u16>) -> Option<(String, u16)> {
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        (host, after.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    let port = match port {
        Some(port) => port.parse().ok()?,
        None => default_port?,
    };
    (!host.is_empty()).then(|| (host.to_string(), port))
}

/// A whole response that ends the connection; the reason is kept to one
/// line of printable text (programs such as pip print it).
fn status(code: u16, reason: &str, body: &str) -> Vec<u8> {
    let reason: String = reason.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    format!("HTTP/1.1 {code} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}\n", body.len() + 1)
        .into_bytes()
}

/// A stream the pump can split: one handle reads while the other writes.
pub(super) trait Duplex: Read + Write + Send + Sized + 'static {
    fn split(&self) -> std::io::Result<Self>;
    fn done_writing(&self);
}

impl Duplex for TcpStream {
    fn split(&self) -> std::io::Result<Self> {
        self.try_clone()
    }
    fn done_writing(&self) {
        let _ = self.shutdown(Shutdown::Write);
    }
}

impl Duplex for UnixStream {
    fn split(&self) -> std::io::Result<Self> {
        self.try_clone()
    }
    fn done_writing(&self) {
        let _ = self.shutdown(Shutdown::Write);
    }
}

/// Bytes both ways until each side has said it is done; the other side
/// is told when one is (its write half shut), so a half-closed exchange
/// (a request sent, its answer still coming) goes on.
pub(super) fn pump<A: Duplex, B: Duplex>(a: A, b: B) {
    let (Ok(a_reader), Ok(b_writer)) = (a.split(), b.split()) else { return };
    let up = std::thread::Builder::new().name("tandem-network-pump".into()).spawn(move || copy(a_reader, b_writer));
    copy(b, a);
    if let Ok(up) = up {
        let _ = up.join();
    }
}

/// Copy until the end or an error, in large reads: `std::io::copy`'s 8 KiB
/// buffer made a download through the bridge and the proxy four times as
/// many system calls.
fn copy<R: Duplex, W: Duplex>(mut from: R, mut to: W) {
    let mut buffer = vec![0u8; 256 * 1024];
    loop {
        match from.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => {
                if to.write_all(&buffer[..n]).is_err() {
                    break;
                }
            }
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    to.done_writing();
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::tools::ports::network::{NetworkMode, NetworkPolicy};

    fn listed(allow: &[&str]) -> Arc<Network> {
        Arc::new(Network::new(NetworkPolicy {
            mode: NetworkMode::Listed,
            allow: allow.iter().map(|s| s.to_string()).collect(),
            deny: Vec::new(),
            allow_local: true,
        }))
    }

    /// A one-shot server on loopback that answers `reply` to whatever comes.
    fn server(reply: &'static str) -> u16 {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            if let Ok((mut stream, _)) = listener.accept() {
                let mut buf = [0u8; 1024];
                let _ = stream.read(&mut buf);
                let _ = stream.write_all(reply.as_bytes());
            }
        });
        port
    }

    fn exchange(proxy: &Proxy, send: &[u8]) -> Vec<u8> {
        let mut stream = UnixStream::connect(proxy.socket()).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        stream.write_all(send).unwrap();
        let mut out = Vec::new();
        let _ = stream.read_to_end(&mut out);
        out
    }

    #[test]
    fn connect_reaches_a_listed_host_and_refuses_another_with_a_reason() {
        let port = server("pong");
        let proxy = Proxy::start(listed(&["allowed.localhost"])).unwrap();
        let reached = exchange(&proxy, format!("CONNECT allowed.localhost:{port} HTTP/1.1\r\nHost: x\r\n\r\nping").as_bytes());
        assert_eq!(String::from_utf8_lossy(&reached), "HTTP/1.1 200 Connection established\r\n\r\npong");
        let refused = String::from_utf8(exchange(&proxy, format!("CONNECT other.localhost:{port} HTTP/1.1\r\n\r\n").as_bytes())).unwrap();
        assert!(refused.starts_with("HTTP/1.1 403 Forbidden by Tandem's sandbox: other.localhost is not in sandbox.network.allow\r\n"), "{refused}");
        let literal = String::from_utf8(exchange(&proxy, format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n").as_bytes())).unwrap();
        assert!(literal.starts_with("HTTP/1.1 403") && literal.contains("IP address"), "{literal}");
    }

    #[test]
    fn a_plain_request_goes_on_in_origin_form_and_socks5_connects_by_name() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut buf = vec![0u8; 4096];
            let n = stream.read(&mut buf).unwrap();
            stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok").unwrap();
            String::from_utf8_lossy(&buf[..n]).into_owned()
        });
        let proxy = Proxy::start(listed(&["allowed.localhost"])).unwrap();
        // The Host header the client sent (another site on the same server)
        // is not passed on: the URL's host is.
        let request = format!("GET http://allowed.localhost:{port}/simple/ HTTP/1.1\r\nHost: other.example\r\nAccept: */*\r\nProxy-Connection: keep-alive\r\n\r\n");
        let answer = exchange(&proxy, request.as_bytes());
        assert!(String::from_utf8_lossy(&answer).ends_with("\r\n\r\nok"));
        assert_eq!(seen.join().unwrap(), format!("GET /simple/ HTTP/1.1\r\nAccept: */*\r\nHost: allowed.localhost:{port}\r\nConnection: close\r\n\r\n"));

        let port = server("pong");
        let name = b"allowed.localhost";
        let mut hello = vec![5, 1, 0, 5, 1, 0, 3, name.len() as u8];
        hello.extend_from_slice(name);
        hello.extend_from_slice(&port.to_be_bytes());
        hello.extend_from_slice(b"ping");
        assert_eq!(exchange(&proxy, &hello), [&[5u8, 0][..], &socks_reply(0), b"pong"].concat());
        let mut refused = vec![5, 1, 0, 5, 1, 0, 1, 127, 0, 0, 1];
        refused.extend_from_slice(&port.to_be_bytes());
        assert_eq!(exchange(&proxy, &refused), [&[5u8, 0][..], &socks_reply(2)].concat());
    }
}
