//! The console as a file: output through the kernel's debug console, input
//! by polling (the kernel's console read never blocks) and yielding.

use super::{no_seek, File, Ops};
use crate::errno::{EAGAIN, ENOTTY};
use crate::linux::stat::Stat;
use user::sys;

pub static OPS: Ops = Ops { read, write, seek: no_seek, stat, ioctl, close: |_| {} };

/// Whether the console answers terminal ioctls (`lxrt -t`); without it,
/// programs see a plain character device, like output redirected to a pipe.
pub static mut IS_TTY: bool = false;

const O_NONBLOCK: u32 = 0o4000;

fn read(f: &mut File, buf: &mut [u8]) -> i64 {
    loop {
        let want = buf.len().min(64);
        let n = sys::console_read(&mut buf[..want]).unwrap_or(0);
        if n > 0 {
            // Serial terminals send CR for Enter.
            for b in &mut buf[..n as usize] {
                if *b == b'\r' {
                    *b = b'\n';
                }
            }
            return n as i64;
        }
        if f.flags & O_NONBLOCK != 0 {
            return -EAGAIN;
        }
        crate::lock::wait();
    }
}

fn write(_: &mut File, buf: &[u8]) -> i64 {
    crate::log::console_write(buf);
    buf.len() as i64
}

fn stat(_: &File, st: &mut Stat) -> i64 {
    st.mode = crate::fs::S_IFCHR | 0o620;
    st.rdev = (5 << 8) | 1;
    st.ino = 1;
    0
}

const TCGETS: u64 = 0x5401;
const TCSETS: u64 = 0x5402;
const TCSETSW: u64 = 0x5403;
const TCSETSF: u64 = 0x5404;
const TIOCGWINSZ: u64 = 0x5413;
const TIOCGPGRP: u64 = 0x540f;
const TIOCSPGRP: u64 = 0x5410;

/// The termios lxrt keeps for the console (`struct termios`, 60 bytes).
static mut TERMIOS: [u8; 60] = {
    let mut t = [0u8; 60];
    // c_iflag ICRNL, c_oflag OPOST|ONLCR, c_cflag B115200|CS8|CREAD,
    // c_lflag ISIG|ICANON|ECHO|ECHOE|ECHOK|IEXTEN.
    let words: [u32; 4] = [0o400, 0o5, 0o10002 | 0o60 | 0o200, 0o1 | 0o2 | 0o10 | 0o20 | 0o40 | 0o100000];
    let mut i = 0;
    while i < 4 {
        let b = words[i].to_le_bytes();
        t[4 * i] = b[0];
        t[4 * i + 1] = b[1];
        t[4 * i + 2] = b[2];
        t[4 * i + 3] = b[3];
        i += 1;
    }
    t
};

fn ioctl(_: &mut File, req: u64, arg: u64) -> i64 {
    // SAFETY: set once at start-up.
    if !unsafe { IS_TTY } {
        return -ENOTTY;
    }
    let r = match req {
        // SAFETY: TERMIOS is lxrt-private; one thread.
        TCGETS => {
            crate::uaccess::bytes_mut(arg, 60).map(|b| b.copy_from_slice(unsafe { &*(&raw const TERMIOS) }))
        }
        TCSETS | TCSETSW | TCSETSF => crate::uaccess::bytes(arg, 60)
            // SAFETY: as above.
            .map(|b| unsafe { (*(&raw mut TERMIOS)).copy_from_slice(b) }),
        TIOCGWINSZ => crate::uaccess::put(arg, [24u16, 80, 0, 0]).map(|_| ()),
        TIOCGPGRP => crate::uaccess::put(arg, crate::proc::pid() as i32).map(|_| ()),
        TIOCSPGRP => Ok(()),
        _ => return -ENOTTY,
    };
    match r {
        Ok(()) => 0,
        Err(e) => -e,
    }
}
