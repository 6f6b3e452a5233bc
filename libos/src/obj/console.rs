//! The console as a file: output through the kernel's debug console, input
//! by polling (the kernel's console read never blocks) and yielding.
//!
//! With `lxrt -t` the console is a terminal with a small line discipline,
//! as a Linux tty has: in canonical mode (`ICANON`) input is collected into
//! lines, echoed (`ECHO`) and edited (erase, kill, end of file); otherwise
//! bytes are returned as they come (busybox's own line editing switches to
//! this and echoes itself). `ISIG`: the interrupt, quit and suspend
//! characters (`VINTR` Ctrl-C, `VQUIT` Ctrl-\, `VSUSP` Ctrl-Z) send SIGINT,
//! SIGQUIT and SIGTSTP to the foreground process group instead (set with
//! `TIOCSPGRP`; every process if none was set). Input the terminal has taken
//! from the kernel but nobody has read yet lives in the shared arena, so a
//! process that waits (`wait4`, `nanosleep`) can look for Ctrl-C
//! (`poll_interrupt`) without losing anyone's typeahead.

use super::{no_seek, File, Ops};
use crate::errno::Errno;
use crate::errno::{EAGAIN, EINTR, ENOTTY};
use crate::fs::Stat;
use crate::scoped::Scoped;
use crate::word::Word;
use user::sys;

pub static OPS: Ops = Ops { read, write, seek: no_seek, stat, ioctl, close: |_| {} };

/// The terminal's shared state (in the arena header).
#[repr(C)]
pub struct Tty {
    /// Bytes taken from the kernel, not yet read by anyone.
    typeahead: [u8; 256],
    len: usize,
    /// A finished canonical line (or part of one) not yet read.
    line: [u8; 256],
    line_len: usize,
    /// The line being typed (canonical mode).
    edit: [u8; 256],
    edit_len: usize,
    /// Foreground process group (0: none set).
    pub pgrp: u32,
}

/// The terminal's shared state, in the arena.
static SHARED_TTY: crate::shared::Root<Tty> = crate::shared::Root::new(1);

/// Makes the terminal's shared state (first process, at start).
pub fn create() -> Result<(), abi::Error> {
    // SAFETY: `Tty` is bytes and counts: all zero is an empty terminal.
    unsafe { SHARED_TTY.create_zeroed() }
}

/// Guards the only `&mut` to the terminal's shared state in this process
/// (the big lock keeps the other processes out).
static TTY: Scoped<()> = Scoped::new("the terminal", ());

/// Runs `f` on the terminal's shared state; panics if it is running
/// already.
fn with_tty<R>(f: impl FnOnce(&mut Tty) -> R) -> R {
    // SAFETY: the header's field, mapped in every process; the guard makes
    // this the only reference to it here.
    TTY.with(|_| f(unsafe { &mut *SHARED_TTY.get() }))
}

const ISIG: u32 = 0o1;
const ICANON: u32 = 0o2;
const ECHO: u32 = 0o10;
const ICRNL: u32 = 0o400;
const VINTR: usize = 0;
const VQUIT: usize = 1;
const VSUSP: usize = 10;
const VERASE: usize = 2;
const VKILL: usize = 3;
const VEOF: usize = 4;

fn flag_word(i: usize) -> u32 {
    let t = TERMIOS.get();
    u32::from_le_bytes([t[4 * i], t[4 * i + 1], t[4 * i + 2], t[4 * i + 3]])
}

fn cc(i: usize) -> u8 {
    // c_cc starts at byte 17.
    TERMIOS.get()[17 + i]
}

/// Whether the console answers terminal ioctls (`lxrt -t`); without it,
/// programs see a plain character device, like output redirected to a pipe.
pub fn is_tty() -> bool {
    IS_TTY.get()
}

/// Makes the console a terminal (`lxrt -t`), before any program runs.
pub fn set_tty() {
    IS_TTY.set(true);
}

/// Moves what the kernel has for us into the typeahead; the signal
/// characters become signals for the foreground group. Returns whether one
/// was seen.
fn fill() -> bool {
    let mut interrupted = false;
    loop {
        let mut b = [0u8; 32];
        let room = with_tty(|t| (t.typeahead.len() - t.len).min(b.len()));
        if room == 0 {
            break;
        }
        let n = sys::console_read(&mut b[..room]).unwrap_or(0) as usize;
        if n == 0 {
            break;
        }
        for &c in &b[..n] {
            let isig = is_tty() && flag_word(3) & ISIG != 0;
            let signal = [(VINTR, SIGINT), (VQUIT, SIGQUIT), (VSUSP, SIGTSTP)]
                .into_iter()
                .find(|&(i, _)| isig && cc(i) != 0 && c == cc(i));
            if let Some((_, sig)) = signal {
                signal_group(c, sig);
                interrupted = true;
                continue;
            }
            with_tty(|t| {
                t.typeahead[t.len] = c;
                t.len += 1;
            });
        }
    }
    interrupted
}

/// `sig` for the foreground process group (or everyone but the first
/// process, when no group was set), as typing control character `c` does
/// on a Linux terminal, which echoes it as `^C`.
fn signal_group(c: u8, sig: u32) {
    crate::log::console_write(&[b'^', c ^ 0x40, b'\n']);
    let pgrp = with_tty(|t| {
        t.edit_len = 0;
        t.pgrp
    });
    (JOBS.get().signal_group)(pgrp, sig);
}

/// What the terminal asks of the process layer for job control: to send
/// a signal to a process group (0: everyone but init), and the caller's
/// own group. Chosen at start (`set_jobs`), kept across fork and exec.
pub struct Jobs {
    pub signal_group: fn(u32, u32),
    pub own_group: fn() -> u32,
}

/// Until a process layer is chosen, nobody is signalled (group 0).
static NO_JOBS: Jobs = Jobs { signal_group: |_, _| {}, own_group: || 0 };
static JOBS: Word<&'static Jobs> = Word::new(&NO_JOBS);

/// Chooses who answers the terminal's job control.
pub fn set_jobs(j: &'static Jobs) {
    JOBS.set(j);
}

/// The foreground process group (0: none set).
pub fn foreground() -> u32 {
    with_tty(|t| t.pgrp)
}

/// Signal numbers the terminal sends, Linux's.
const SIGINT: u32 = 2;
const SIGQUIT: u32 = 3;
const SIGTSTP: u32 = 20;

/// For processes that wait on something else (a child, the clock): takes
/// in console input and reports whether a Ctrl-C just arrived.
pub fn poll_interrupt() -> bool {
    is_tty() && fill()
}

/// Whether a read would find input now (`poll`): takes in what the kernel
/// has for us first.
pub fn input_ready() -> bool {
    fill();
    with_tty(|t| t.len > 0 || t.line_len > 0)
}

fn take_byte() -> Option<u8> {
    let c = with_tty(|t| {
        if t.len == 0 {
            return None;
        }
        let c = t.typeahead[0];
        t.typeahead.copy_within(1..t.len, 0);
        t.len -= 1;
        Some(c)
    })?;
    Some(if c == b'\r' && (!is_tty() || flag_word(0) & ICRNL != 0) { b'\n' } else { c })
}

fn echo(b: &[u8]) {
    if flag_word(3) & ECHO != 0 {
        crate::log::console_write(b);
    }
}

/// Canonical mode: edits the line being typed with byte `c`; true when a
/// line (or end of file) is ready.
fn edit(c: u8) -> bool {
    let keys = [cc(VERASE), cc(VKILL), cc(VEOF)];
    with_tty(|t| edit_line(t, c, keys))
}

/// `edit` on `t`, with the terminal's erase, kill and end-of-file
/// characters.
fn edit_line(t: &mut Tty, c: u8, [erase, kill, end]: [u8; 3]) -> bool {
    if c == erase || c == 0x08 {
        if t.edit_len > 0 {
            t.edit_len -= 1;
            echo(b"\x08 \x08");
        }
        return false;
    }
    if c == kill {
        for _ in 0..t.edit_len {
            echo(b"\x08 \x08");
        }
        t.edit_len = 0;
        return false;
    }
    let eof = c == end;
    if !eof && t.edit_len < t.edit.len() {
        t.edit[t.edit_len] = c;
        t.edit_len += 1;
        echo(&[c]);
    }
    if eof || c == b'\n' || t.edit_len == t.edit.len() {
        t.line[..t.edit_len].copy_from_slice(&t.edit[..t.edit_len]);
        t.line_len = t.edit_len;
        t.edit_len = 0;
        return true;
    }
    false
}

/// Reads what the terminal has: EAGAIN when nothing yet (the caller waits,
/// `io::read`, after checking the reader is in the foreground), EINTR when
/// a control character just signalled.
fn read(_: &mut File, buf: &mut [u8]) -> Result<usize, Errno> {
    let canonical = is_tty() && flag_word(3) & ICANON != 0;
    loop {
        let line = with_tty(|t| {
            (canonical && t.line_len > 0).then(|| {
                let n = t.line_len.min(buf.len());
                buf[..n].copy_from_slice(&t.line[..n]);
                t.line.copy_within(n..t.line_len, 0);
                t.line_len -= n;
                n
            })
        });
        if let Some(n) = line {
            return Ok(n);
        }
        if fill() {
            return Err(EINTR);
        }
        if canonical {
            let mut ready = false;
            while let Some(c) = take_byte() {
                if edit(c) {
                    ready = true;
                    break;
                }
            }
            if ready {
                if with_tty(|t| t.line_len) == 0 {
                    return Ok(0); // end of file on an empty line
                }
                continue;
            }
        } else {
            let mut n = 0;
            while n < buf.len() {
                let Some(c) = take_byte() else { break };
                buf[n] = c;
                n += 1;
            }
            if n > 0 {
                if is_tty() {
                    echo(&buf[..n]);
                }
                return Ok(n);
            }
        }
        return Err(EAGAIN);
    }
}

fn write(_: &mut File, buf: &[u8]) -> Result<usize, Errno> {
    crate::log::console_write(buf);
    Ok(buf.len())
}

fn stat(_: &File, st: &mut Stat) -> Result<(), Errno> {
    st.mode = crate::fs::S_IFCHR | 0o620;
    st.rdev = (5, 1);
    st.ino = 1;
    Ok(())
}

const TCGETS: u64 = 0x5401;
const TCSETS: u64 = 0x5402;
const TCSETSW: u64 = 0x5403;
const TCSETSF: u64 = 0x5404;
const TIOCGWINSZ: u64 = 0x5413;
const TIOCGPGRP: u64 = 0x540f;
const TIOCSPGRP: u64 = 0x5410;

/// The termios lxrt keeps for the console: the kernel's `struct termios`
/// as `TCGETS` copies it (four flag words, the line discipline, 19 control
/// characters: 36 bytes; glibc converts to its own 60-byte layout).
/// The kernel's `struct termios`: 36 bytes.
pub const TERMIOS_SIZE: usize = 36;

/// This process's settings of the terminal, and whether the console is a
/// terminal at all (`lxrt -t`).
static TERMIOS: Word<[u8; TERMIOS_SIZE]> = Word::new(TERMIOS_DEFAULT);
static IS_TTY: Word<bool> = Word::new(false);

/// The settings a terminal starts with.
const TERMIOS_DEFAULT: [u8; TERMIOS_SIZE] = {
    let mut t = [0u8; TERMIOS_SIZE];
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
    // c_cc: VINTR ^C, VQUIT ^\\, VERASE DEL, VKILL ^U, VEOF ^D, VMIN 1,
    // VSUSP ^Z.
    t[27] = 0x1a;
    t[17] = 3;
    t[18] = 0x1c;
    t[19] = 0x7f;
    t[20] = 0x15;
    t[21] = 4;
    t[23] = 1;
    t
};

fn ioctl(_: &mut File, req: u64, arg: u64) -> Result<usize, Errno> {
    if !is_tty() {
        return Err(ENOTTY);
    }
    match req {
        TCGETS => crate::uaccess::write(arg, &TERMIOS.get()),
        TCSETS | TCSETSW | TCSETSF => crate::uaccess::bytes(arg, TERMIOS_SIZE as u64)
            .map(|b| TERMIOS.set(b.try_into().expect("TERMIOS_SIZE bytes"))),
        TIOCGWINSZ => crate::uaccess::put(arg, [24u16, 80, 0, 0]).map(|_| ()),
        TIOCGPGRP => {
            let pgrp = match with_tty(|t| t.pgrp) {
                0 => (JOBS.get().own_group)(),
                g => g,
            };
            crate::uaccess::put(arg, pgrp as i32).map(|_| ())
        }
        TIOCSPGRP => crate::uaccess::get::<i32>(arg).map(|g| with_tty(|t| t.pgrp = g as u32)),
        _ => return Err(ENOTTY),
    }?;
    Ok(0)
}
