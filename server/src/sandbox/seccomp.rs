//! The seccomp filter bubblewrap installs (`--seccomp FD`) on every
//! command it confines, whatever its profile: the system calls a contained
//! command has no need for and that reach past its namespaces answer
//! `EPERM`.
//!
//! | denied | why |
//! |---|---|
//! | `ptrace`, `process_vm_readv`, `process_vm_writev` | reading or steering another process (`strace` and `gdb` do not run in the sandbox) |
//! | `add_key`, `request_key`, `keyctl` | the kernel keyrings are not namespaced: the user's session and user keyrings (Kerberos tickets, ecryptfs keys) are the same inside |
//! | `perf_event_open` | side channels on other processes and the kernel |
//! | `bpf`, `userfaultfd`, `io_uring_setup`/`enter`/`register` | kernel attack surface no build needs (io_uring's operations also pass beside this filter) |
//! | `unshare`, `setns`, `clone` with `CLONE_NEWUSER`, the mount calls (`mount`, `umount2`, `pivot_root`, `open_tree`, `move_mount`, `fsopen`, `fsconfig`, `fsmount`, `fspick`, `mount_setattr`) | a new user namespace would give the command capabilities again over what it can see |
//! | `kexec_load`, `kexec_file_load`, `init_module`, `finit_module`, `delete_module`, `acct`, `swapon`, `swapoff`, `reboot`, `syslog`, `quotactl` | the machine's, never a command's (they need capabilities the sandbox drops; denied here too) |
//! | every call of another ABI (i386's `int 0x80`, x32) | its numbers differ: it would pass beside this list |
//!
//! `clone3` answers `ENOSYS`: its flags are in memory a filter cannot
//! read, and the C library then falls back to `clone`, whose flags it can.
//!
//! Unix sockets are not filtered: seccomp sees no path, and a command
//! needs them (a test's own server, Python's `multiprocessing`). What
//! keeps a command from the user's agents and engines is the mount
//! namespace (unasked and contained commands: every bound socket in the
//! home folder and the workspace, the runtime folder, the buses and the
//! container engines are masked) and the network namespace (abstract
//! sockets belong to it: a command without network reaches none of the
//! machine's).
//!
//! Each command gets the program in a file in memory of its own
//! ([`handed`]), put on descriptor 9 of bubblewrap as it starts (after
//! every other descriptor above 2 is closed): no file on disk, no shell
//! between Tandem and bubblewrap.

use crate::tools::ports::shell_sandbox::Handed;

/// The descriptor bubblewrap reads the program from.
const FD: i32 = 9;

/// The calls denied with `EPERM`, by number, on this architecture.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn denied() -> Vec<libc::c_long> {
    use libc::*;
    vec![
        SYS_ptrace, SYS_process_vm_readv, SYS_process_vm_writev, SYS_add_key, SYS_request_key, SYS_keyctl, SYS_perf_event_open, SYS_bpf,
        SYS_userfaultfd, SYS_io_uring_setup, SYS_io_uring_enter, SYS_io_uring_register, SYS_unshare, SYS_setns, SYS_mount, SYS_umount2,
        SYS_pivot_root, SYS_open_tree, SYS_move_mount, SYS_fsopen, SYS_fsconfig, SYS_fsmount, SYS_fspick, SYS_mount_setattr,
        SYS_kexec_load, SYS_kexec_file_load, SYS_init_module, SYS_finit_module, SYS_delete_module, SYS_acct, SYS_swapon, SYS_swapoff,
        SYS_reboot, SYS_syslog, SYS_quotactl,
    ]
}

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xc000_003e; // AUDIT_ARCH_X86_64
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xc000_00b7; // AUDIT_ARCH_AARCH64

// Classic BPF, as the kernel's `linux/filter.h` spells it.
const BPF_LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
const BPF_JMP_JEQ_K: u16 = 0x05 | 0x10;
const BPF_JMP_JGE_K: u16 = 0x05 | 0x30;
const BPF_JMP_JSET_K: u16 = 0x05 | 0x40;
const BPF_RET_K: u16 = 0x06;
const RET_ALLOW: u32 = 0x7fff_0000;
const RET_ERRNO: u32 = 0x0005_0000;
/// `struct seccomp_data`: `nr` at 0, `arch` at 4, `args[0]` at 16 (its
/// low half on these little-endian machines).
const NR: u32 = 0;
const ARCH: u32 = 4;
const ARG0_LOW: u32 = 16;
const CLONE_NEWUSER: u32 = 0x1000_0000;
/// Numbers with this bit are x32's on x86_64.
#[cfg(target_arch = "x86_64")]
const X32_BIT: u32 = 0x4000_0000;

#[derive(Clone, Copy)]
struct Op {
    code: u16,
    jt: u8,
    jf: u8,
    k: u32,
}

fn stmt(code: u16, k: u32) -> Op {
    Op { code, jt: 0, jf: 0, k }
}

/// The filter as bubblewrap reads it: `struct sock_filter` entries, in
/// the machine's byte order.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub fn program() -> Vec<u8> {
    let denied = denied();
    let mut ops: Vec<Op> = vec![
        // Another ABI: refused whole.
        stmt(BPF_LD_W_ABS, ARCH),
        Op { code: BPF_JMP_JEQ_K, jt: 1, jf: 0, k: AUDIT_ARCH },
        stmt(BPF_RET_K, RET_ERRNO | libc::EPERM as u32),
        stmt(BPF_LD_W_ABS, NR),
    ];
    #[cfg(target_arch = "x86_64")]
    {
        ops.push(Op { code: BPF_JMP_JGE_K, jt: 0, jf: 1, k: X32_BIT });
        ops.push(stmt(BPF_RET_K, RET_ERRNO | libc::EPERM as u32));
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = BPF_JMP_JGE_K;
    // clone3: "not here", so the C library uses clone.
    ops.push(Op { code: BPF_JMP_JEQ_K, jt: 0, jf: 1, k: libc::SYS_clone3 as u32 });
    ops.push(stmt(BPF_RET_K, RET_ERRNO | libc::ENOSYS as u32));
    // clone with CLONE_NEWUSER (its flags are the first argument).
    ops.push(Op { code: BPF_JMP_JEQ_K, jt: 0, jf: 3, k: libc::SYS_clone as u32 });
    ops.push(stmt(BPF_LD_W_ABS, ARG0_LOW));
    ops.push(Op { code: BPF_JMP_JSET_K, jt: 0, jf: 1, k: CLONE_NEWUSER });
    ops.push(stmt(BPF_RET_K, RET_ERRNO | libc::EPERM as u32));
    // After the clone check the accumulator may hold its flags: load the
    // number again before the list.
    ops.push(stmt(BPF_LD_W_ABS, NR));
    // Each denied call jumps to the one EPERM at the end of the list.
    let count = denied.len();
    for (index, nr) in denied.iter().enumerate() {
        let to_deny = (count - index) as u8; // past the rest and the ALLOW
        ops.push(Op { code: BPF_JMP_JEQ_K, jt: to_deny, jf: 0, k: *nr as u32 });
    }
    ops.push(stmt(BPF_RET_K, RET_ALLOW));
    ops.push(stmt(BPF_RET_K, RET_ERRNO | libc::EPERM as u32));
    let mut bytes = Vec::with_capacity(ops.len() * 8);
    for op in ops {
        bytes.extend_from_slice(&op.code.to_ne_bytes());
        bytes.push(op.jt);
        bytes.push(op.jf);
        bytes.extend_from_slice(&op.k.to_ne_bytes());
    }
    bytes
}

/// The program in a file of its own for one command, to hand to
/// bubblewrap on descriptor [`FD`] (`Err`: why it cannot be, in plain
/// words; `Ok(None)`: no filter for this architecture). Each command gets
/// its own: bubblewrap reads it to the end, and two commands starting at
/// once must not share a read position.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub fn handed() -> Result<Option<Handed>, String> {
    use std::io::{Seek, Write};
    use std::os::fd::FromRawFd;
    use std::sync::OnceLock;

    static PROGRAM: OnceLock<Vec<u8>> = OnceLock::new();
    let bytes = PROGRAM.get_or_init(program);
    // A file in memory, in no folder: nothing a command could see or
    // change, nothing left behind.
    // SAFETY: memfd_create(2) takes a NUL-terminated name and flags, and
    // returns a new descriptor or -1.
    let fd = unsafe { libc::memfd_create(c"tandem-seccomp".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(format!("cannot make a file in memory for the sandbox's seccomp filter: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: `fd` was just opened and is owned by nothing else.
    let mut file = unsafe { std::fs::File::from_raw_fd(fd) };
    file.write_all(bytes)
        .and_then(|()| file.rewind())
        .map_err(|e| format!("cannot write the sandbox's seccomp filter: {e}"))?;
    Ok(Some(Handed { file, at: FD }))
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub fn handed() -> Result<Option<Handed>, String> {
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    #[test]
    fn every_jump_lands_inside_the_program() {
        let bytes = program();
        assert_eq!(bytes.len() % 8, 0);
        let ops = bytes.len() / 8;
        for (index, op) in bytes.chunks(8).enumerate() {
            let code = u16::from_ne_bytes([op[0], op[1]]);
            if code & 0x07 == 0x05 {
                let (jt, jf) = (op[2] as usize, op[3] as usize);
                assert!(index + 1 + jt.max(jf) < ops, "op {index} jumps out");
            }
        }
        // Nothing falls off the end: the last op returns.
        assert_eq!(u16::from_ne_bytes([bytes[ops * 8 - 8], bytes[ops * 8 - 7]]), BPF_RET_K);
        // The last two: allow, then the one EPERM the list jumps to.
        let k = |op: &[u8]| u32::from_ne_bytes([op[4], op[5], op[6], op[7]]);
        assert_eq!(k(&bytes[bytes.len() - 16..]), RET_ALLOW);
        assert_eq!(k(&bytes[bytes.len() - 8..]), RET_ERRNO | libc::EPERM as u32);
    }
}
