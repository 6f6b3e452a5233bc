//! Descriptors passed over a Unix socket (`SCM_RIGHTS`), for the boot
//! tests that pass them (`test_pipepass`, `test_ptyguard`).

use libos::linux::nr::{SYS_RECVMSG, SYS_SENDMSG, SYS_SOCKETPAIR};
use libos::native::linux;
use user::{println, sys};

/// A connected pair of stream sockets.
pub fn socketpair() -> [i64; 2] {
    let mut s = [0i32; 2];
    // AF_UNIX, SOCK_STREAM.
    let r = linux(SYS_SOCKETPAIR, [1, 1, 0, s.as_mut_ptr() as u64, 0, 0]);
    if r != 0 {
        println!("hostile test: socketpair: {r}");
        sys::exit(1);
    }
    [s[0] as i64, s[1] as i64]
}

/// `sendmsg` of `data` on `sock`, with descriptor `fd` (if not -1).
pub fn send(sock: i64, data: &[u8], fd: i64) -> i64 {
    // On the stack: lxrt's checks know this program's stack, not its
    // read-only data.
    let mut copy = [0u8; 24];
    copy[..data.len()].copy_from_slice(data);
    let iov = [copy.as_ptr() as u64, data.len() as u64];
    // cmsghdr: length 20, SOL_SOCKET, SCM_RIGHTS, then the descriptor.
    let mut control = [0u8; 24];
    control[..8].copy_from_slice(&20u64.to_ne_bytes());
    control[8..12].copy_from_slice(&1i32.to_ne_bytes());
    control[12..16].copy_from_slice(&1i32.to_ne_bytes());
    control[16..20].copy_from_slice(&(fd as i32).to_ne_bytes());
    let (c, clen) = if fd < 0 { (0, 0) } else { (control.as_ptr() as u64, 24) };
    let msg = [0u64, 0, iov.as_ptr() as u64, 1, c, clen, 0];
    linux(SYS_SENDMSG, [sock as u64, msg.as_ptr() as u64, 0, 0, 0, 0])
}

/// `recvmsg` into `buf` on `sock`: (bytes, the descriptor received or -1).
pub fn recv(sock: i64, buf: &mut [u8]) -> (i64, i64) {
    let iov = [buf.as_mut_ptr() as u64, buf.len() as u64];
    let mut control = [0u8; 24];
    let msg = [0u64, 0, iov.as_ptr() as u64, 1, control.as_mut_ptr() as u64, 24, 0];
    let n = linux(SYS_RECVMSG, [sock as u64, msg.as_ptr() as u64, 0, 0, 0, 0]);
    let got = msg[5] >= 20 && control[12..16] == 1i32.to_ne_bytes();
    (n, if got { i32::from_ne_bytes(control[16..20].try_into().unwrap()) as i64 } else { -1 })
}
