//! The seccomp filter of a command: the system calls a sandboxed command
//! has no business making, refused with `EPERM` — built once per
//! [`Sandbox`](super::Sandbox) with the `seccompiler` crate and installed
//! in the child, after `no_new_privs`, as the last step before exec.
//!
//! Refused:
//!
//! - `ptrace`, `process_vm_readv`, `process_vm_writev`: reading or steering
//!   another process's memory (codex refuses the same three);
//! - `io_uring_setup`, `io_uring_enter`, `io_uring_register`: io_uring makes
//!   sockets and opens files without the system calls this filter (and
//!   audit tools) see (codex too);
//! - `socket(AF_UNIX, …)`: new unix-domain sockets, the way to daemons
//!   outside the sandbox (the ssh agent, docker, a terminal multiplexer, the
//!   session bus) — unless the policy allows them
//!   ([`SandboxPolicy::allow_unix_sockets`](super::SandboxPolicy::allow_unix_sockets));
//!   `socketpair(AF_UNIX, …)` stays allowed, it reaches nothing outside;
//! - `socket(AF_VSOCK, …)` and a `socketpair` of any other family:
//!   virtual-machine sockets reach the host (codex refuses them too);
//! - `keyctl`, `add_key`, `request_key`: the kernel keyrings of the user,
//!   which hold secrets no file permission guards (not in codex's filter);
//! - on x86-64, every call of the x32 ABI (numbers with bit 30 set), which
//!   would otherwise reach the same kernel functions under other numbers.
//!
//! A program of another architecture (a 32-bit binary on x86-64) is killed
//! at its first system call: its numbers mean other calls.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// The system calls refused outright, by name (for the status and docs)
/// and number.
pub(super) const REFUSED: &[(&str, i64)] = &[
    ("ptrace", libc::SYS_ptrace),
    ("process_vm_readv", libc::SYS_process_vm_readv),
    ("process_vm_writev", libc::SYS_process_vm_writev),
    ("io_uring_setup", libc::SYS_io_uring_setup),
    ("io_uring_enter", libc::SYS_io_uring_enter),
    ("io_uring_register", libc::SYS_io_uring_register),
    ("keyctl", libc::SYS_keyctl),
    ("add_key", libc::SYS_add_key),
    ("request_key", libc::SYS_request_key),
];

/// The x32 ABI bit of x86-64 system call numbers.
#[cfg(target_arch = "x86_64")]
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// A compiled filter, ready for the child (see `sys::seccomp_install`).
#[derive(Debug)]
pub(super) struct Program {
    instructions: Vec<libc::sock_filter>,
}

impl Program {
    /// The filter for a policy that does (`allow_unix_sockets`) or does not
    /// allow new unix-domain sockets.
    pub(super) fn new(allow_unix_sockets: bool) -> Result<Program, String> {
        let arch = target_arch()?;
        let compiled: BpfProgram = SeccompFilter::new(
            rules(allow_unix_sockets).map_err(|e| e.to_string())?,
            SeccompAction::Allow,
            SeccompAction::Errno(libc::EPERM as u32),
            arch,
        )
        .and_then(BpfProgram::try_from)
        .map_err(|e| format!("the seccomp filter could not be compiled: {e}"))?;
        let mut instructions = x32_guard();
        instructions.extend(compiled.into_iter().map(|i| libc::sock_filter {
            code: i.code,
            jt: i.jt,
            jf: i.jf,
            k: i.k,
        }));
        if instructions.len() > usize::from(u16::MAX) {
            return Err("the seccomp filter is too long".to_string());
        }
        Ok(Program { instructions })
    }

    /// The instructions, for `sys::seccomp_install`.
    pub(super) fn instructions(&self) -> &[libc::sock_filter] {
        &self.instructions
    }
}

fn target_arch() -> Result<TargetArch, String> {
    if cfg!(target_arch = "x86_64") {
        Ok(TargetArch::x86_64)
    } else if cfg!(target_arch = "aarch64") {
        Ok(TargetArch::aarch64)
    } else if cfg!(target_arch = "riscv64") {
        Ok(TargetArch::riscv64)
    } else {
        Err(
            "no seccomp filter for this CPU architecture (x86-64, aarch64 and riscv64 have one)"
                .to_string(),
        )
    }
}

/// The rules: a refused call maps to an empty rule list (always refused)
/// or to the argument conditions under which it is.
fn rules(allow_unix_sockets: bool) -> Result<BTreeMap<i64, Vec<SeccompRule>>, seccompiler::Error> {
    let domain_is = |family: libc::c_int| {
        SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, family as u64)
            .and_then(|condition| SeccompRule::new(vec![condition]))
    };
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> =
        REFUSED.iter().map(|(_, nr)| (*nr, Vec::new())).collect();
    let mut socket = vec![domain_is(libc::AF_VSOCK)?];
    if !allow_unix_sockets {
        socket.push(domain_is(libc::AF_UNIX)?);
    }
    rules.insert(libc::SYS_socket, socket);
    let not_unix = SeccompRule::new(vec![SeccompCondition::new(
        0,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::Ne,
        libc::AF_UNIX as u64,
    )?])?;
    rules.insert(libc::SYS_socketpair, vec![not_unix]);
    Ok(rules)
}

/// On x86-64: refuse x32 system calls before seccompiler's program runs
/// (it matches plain numbers only). Jumps in BPF are relative and forward,
/// so prepending keeps the compiled program's own jumps intact.
#[cfg(target_arch = "x86_64")]
fn x32_guard() -> Vec<libc::sock_filter> {
    const LD_W_ABS: u16 = 0x20;
    const JMP_JSET_K: u16 = 0x45;
    const RET_K: u16 = 0x06;
    vec![
        // A = seccomp_data.nr (offset 0)
        libc::sock_filter {
            code: LD_W_ABS,
            jt: 0,
            jf: 0,
            k: 0,
        },
        // if A & X32 bit: next instruction (refuse), else skip it
        libc::sock_filter {
            code: JMP_JSET_K,
            jt: 0,
            jf: 1,
            k: X32_SYSCALL_BIT,
        },
        libc::sock_filter {
            code: RET_K,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_ERRNO | libc::EPERM as u32,
        },
    ]
}

#[cfg(not(target_arch = "x86_64"))]
fn x32_guard() -> Vec<libc::sock_filter> {
    Vec::new()
}

#[cfg(test)]
mod tests {
    //! The compiled program is run by a small classic-BPF interpreter on
    //! every refused call, the socket families, random calls and
    //! arguments, and compared with the rules written out plainly.

    use super::*;
    use proptest::prelude::*;

    const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;
    const AUDIT_ARCH_AARCH64: u32 = 0xC000_00B7;

    fn native_arch() -> u32 {
        if cfg!(target_arch = "x86_64") {
            AUDIT_ARCH_X86_64
        } else {
            AUDIT_ARCH_AARCH64
        }
    }

    /// `struct seccomp_data`, as the kernel lays it out.
    fn data(arch: u32, nr: u32, args: [u64; 6]) -> Vec<u8> {
        let mut bytes = Vec::new();
        bytes.extend(nr.to_ne_bytes());
        bytes.extend(arch.to_ne_bytes());
        bytes.extend(0u64.to_ne_bytes()); // instruction pointer
        for arg in args {
            bytes.extend(arg.to_ne_bytes());
        }
        bytes
    }

    /// Runs a seccomp BPF program (the instructions seccompiler and the
    /// x32 guard emit) on `data`; returns the action.
    fn run(program: &[libc::sock_filter], data: &[u8]) -> u32 {
        let (mut a, mut pc) = (0u32, 0usize);
        loop {
            let i = &program[pc];
            pc += 1;
            match i.code {
                0x20 => {
                    let k = i.k as usize;
                    a = u32::from_ne_bytes(data[k..k + 4].try_into().unwrap());
                }
                0x54 => a &= i.k,
                0x05 => pc += i.k as usize,
                0x15 | 0x25 | 0x35 | 0x45 => {
                    let taken = match i.code {
                        0x15 => a == i.k,
                        0x25 => a > i.k,
                        0x35 => a >= i.k,
                        _ => a & i.k != 0,
                    };
                    pc += usize::from(if taken { i.jt } else { i.jf });
                }
                0x06 => return i.k,
                code => panic!("instruction {code:#x} not handled by the test interpreter"),
            }
        }
    }

    const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;
    const EPERM: u32 = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;

    /// The rules written out plainly.
    fn expected(allow_unix: bool, nr: u32, domain: u64) -> u32 {
        let nr64 = i64::from(nr);
        let domain = domain as u32 as i32; // the Dword compare
        let refused = REFUSED.iter().any(|(_, n)| *n == nr64)
            || (nr64 == libc::SYS_socket
                && (domain == libc::AF_VSOCK || (!allow_unix && domain == libc::AF_UNIX)))
            || (nr64 == libc::SYS_socketpair && domain != libc::AF_UNIX)
            || (cfg!(target_arch = "x86_64") && nr & 0x4000_0000 != 0);
        if refused { EPERM } else { ALLOW }
    }

    #[test]
    fn refused_calls_and_socket_families() {
        for allow_unix in [false, true] {
            let program = Program::new(allow_unix).unwrap();
            let p = program.instructions();
            for (name, nr) in REFUSED {
                let verdict = run(p, &data(native_arch(), *nr as u32, [0; 6]));
                assert_eq!(verdict, EPERM, "{name}");
            }
            let socket = libc::SYS_socket as u32;
            let pair = libc::SYS_socketpair as u32;
            let unix = libc::AF_UNIX as u64;
            let inet = libc::AF_INET as u64;
            let vsock = libc::AF_VSOCK as u64;
            let want_unix = if allow_unix { ALLOW } else { EPERM };
            assert_eq!(
                run(p, &data(native_arch(), socket, [unix, 1, 0, 0, 0, 0])),
                want_unix
            );
            assert_eq!(
                run(p, &data(native_arch(), socket, [inet, 1, 0, 0, 0, 0])),
                ALLOW
            );
            assert_eq!(
                run(p, &data(native_arch(), socket, [vsock, 1, 0, 0, 0, 0])),
                EPERM
            );
            assert_eq!(
                run(p, &data(native_arch(), pair, [unix, 1, 0, 0, 0, 0])),
                ALLOW
            );
            assert_eq!(
                run(p, &data(native_arch(), pair, [vsock, 1, 0, 0, 0, 0])),
                EPERM
            );
            // High bits of the 64-bit argument do not change an int domain.
            let high = unix | (1 << 40);
            assert_eq!(
                run(p, &data(native_arch(), socket, [high, 1, 0, 0, 0, 0])),
                want_unix
            );
            assert_eq!(
                run(p, &data(native_arch(), libc::SYS_read as u32, [0; 6])),
                ALLOW
            );
            assert_eq!(
                run(p, &data(native_arch(), libc::SYS_execve as u32, [0; 6])),
                ALLOW
            );
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn x32_calls_and_foreign_architectures_are_stopped() {
        let program = Program::new(false).unwrap();
        let p = program.instructions();
        let x32_socket = 0x4000_0000 | libc::SYS_socket as u32;
        assert_eq!(
            run(p, &data(native_arch(), x32_socket, [1, 1, 0, 0, 0, 0])),
            EPERM
        );
        let i386 = 0x4000_0003;
        assert_eq!(
            run(p, &data(i386, 102, [0; 6])),
            libc::SECCOMP_RET_KILL_PROCESS
        );
    }

    proptest! {
        #[test]
        fn the_program_is_the_rules(
            allow_unix in any::<bool>(),
            nr in prop_oneof![0u32..500, any::<u32>()],
            domain in prop_oneof![0u64..64, any::<u64>()],
            rest in any::<[u64; 5]>(),
        ) {
            let program = Program::new(allow_unix).unwrap();
            let args = [domain, rest[0], rest[1], rest[2], rest[3], rest[4]];
            let verdict = run(program.instructions(), &data(native_arch(), nr, args));
            prop_assert_eq!(verdict, expected(allow_unix, nr, domain));
        }
    }
}
