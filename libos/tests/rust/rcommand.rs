//! Rust's `std::process::Command` on Veneer (built by xtask for musl and
//! for glibc; run as `cbin/rcommand-*` by `libos/tests/rcommand.sh`, output
//! compared with the host's): `output()` with both pipes (FIONBIO, poll,
//! CLOEXEC), `status()`, stdin fed through a pipe, an exit code and a
//! child killed by a signal, and a program that does not exist (glibc's
//! `posix_spawn` reports the exec error through memory its
//! `CLONE_VM|CLONE_VFORK` child shares; musl's through a pipe).
use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

fn main() {
    let out = Command::new("/bin/sh").args(["-c", "echo out; echo err >&2; exit 3"]).output().unwrap();
    println!(
        "output: {:?} {:?} code {:?}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
        out.status.code()
    );
    let st = Command::new("/bin/true").status().unwrap();
    println!("status: success {}", st.success());
    let mut child = Command::new("/bin/cat").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(b"pear\napple\nfig\n").unwrap();
    let sorted = child.wait_with_output().unwrap();
    println!("cat: {:?}", String::from_utf8_lossy(&sorted.stdout));
    let killed = Command::new("/bin/sh").args(["-c", "kill -9 $$"]).status().unwrap();
    let missing = Command::new("/no/such/program").status();
    println!("missing: {:?}", missing.map_err(|e| e.kind()));
    println!("killed: code {:?} signal {:?}", killed.code(), killed.signal());
}
