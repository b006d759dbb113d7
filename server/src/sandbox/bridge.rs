//! The bridge: the first program in a sandbox whose network goes through
//! Tandem's proxy ([`super::proxy`]). It is Tandem's own binary, run as
//! `tandem __network-bridge SOCKET -- COMMAND...` inside the sandbox's
//! network namespace, where nothing but loopback exists: it listens on
//! [`PORT`] of loopback (IPv4 and IPv6), passes each connection to the
//! proxy's socket, runs the command and exits as it does. The proxy
//! variables the command reads point at [`PORT`].
//!
//! When the proxy is gone (Tandem ended), a connection is closed as soon
//! as it is made: the command's request fails, and there is no other way
//! out of the namespace.

use std::ffi::OsString;
use std::net::{Ipv4Addr, Ipv6Addr, Shutdown, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

/// The hidden subcommand that runs the bridge.
pub const SUBCOMMAND: &str = "__network-bridge";

/// The loopback port the bridge listens on (the sandbox's namespace is
/// empty, so any port is free; squid's, by habit).
pub const PORT: u16 = 3128;

/// Run the bridge from the program's arguments after [`SUBCOMMAND`]
/// (`SOCKET -- COMMAND...`); the exit code to end with.
pub fn main(args: &[OsString]) -> i32 {
    let Some((socket, rest)) = args.split_first() else { return usage() };
    let Some((separator, command)) = rest.split_first() else { return usage() };
    let Some((program, program_args)) = command.split_first().filter(|_| separator == "--") else { return usage() };
    let socket = PathBuf::from(socket);
    let mut listening = 0;
    for listener in [TcpListener::bind((Ipv4Addr::LOCALHOST, PORT)), TcpListener::bind((Ipv6Addr::LOCALHOST, PORT))].into_iter().flatten() {
        listening += 1;
        let socket = socket.clone();
        let _ = std::thread::Builder::new().name("tandem-network-bridge".into()).spawn(move || accept(listener, &socket));
    }
    if listening == 0 {
        eprintln!("tandem: the sandbox's network bridge cannot listen on loopback port {PORT}");
        return 125;
    }
    match std::process::Command::new(program).args(program_args).status() {
        Ok(status) => exit_code(status),
        Err(err) => {
            eprintln!("tandem: cannot start {}: {err}", program.to_string_lossy());
            127
        }
    }
}

fn usage() -> i32 {
    eprintln!("usage: tandem {SUBCOMMAND} SOCKET -- COMMAND [ARGS...] (run by Tandem's sandbox, not by hand)");
    2
}

/// The code a shell would report: the command's, or 128 + the signal.
fn exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status.code().or_else(|| status.signal().map(|signal| 128 + signal)).unwrap_or(1)
}

fn accept(listener: TcpListener, socket: &Path) {
    for client in listener.incoming() {
        let Ok(client) = client else { continue };
        let socket = socket.to_path_buf();
        let _ = std::thread::Builder::new().name("tandem-network-bridge-connection".into()).spawn(move || forward(client, &socket));
    }
}

/// One connection, to the proxy and back; closed at once if the proxy
/// cannot be reached.
fn forward(client: TcpStream, socket: &Path) {
    let Ok(proxy) = UnixStream::connect(socket) else {
        let _ = client.shutdown(Shutdown::Both);
        return;
    };
    super::proxy::pump(client, proxy);
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::io::Read;

    /// The proxy gone (Tandem ended): a connection to the bridge is closed
    /// at once, so the command's request fails instead of waiting.
    #[test]
    fn a_connection_is_closed_when_the_proxy_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let socket = dir.path().join("gone.sock");
        std::thread::spawn(move || accept(listener, &socket));
        let mut client = TcpStream::connect(address).unwrap();
        client.set_read_timeout(Some(std::time::Duration::from_secs(10))).unwrap();
        let mut buf = [0u8; 16];
        assert_eq!(client.read(&mut buf).unwrap(), 0);
    }

    #[test]
    fn the_command_s_exit_code_is_the_bridge_s() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("proxy.sock").into_os_string();
        let args = |script: &str| vec![socket.clone(), "--".into(), "/bin/sh".into(), "-c".into(), script.into()];
        // Port 3128 may be taken on the machine running the tests (outside
        // a sandbox); the bridge then says so and ends with 125.
        let code = main(&args("exit 7"));
        assert!(code == 7 || code == 125, "{code}");
        assert_eq!(main(&[socket.clone(), "sh".into()]), 2);
    }
}
