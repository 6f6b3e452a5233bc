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

use super::ldisc::{self, Edit, Termios};
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
    edit: Edit<256>,
    /// Window size and foreground process group (0: none set).
    shared: ldisc::Shared,
}

/// The terminal's shared state, in the arena.
static SHARED_TTY: crate::shared::Root<Tty> = crate::shared::Root::new(1);

/// Makes the terminal's shared state (first process, at start).
pub fn create() -> Result<(), abi::Error> {
    // SAFETY: `Tty` is bytes and counts: all zero is an empty terminal.
    unsafe { SHARED_TTY.create_zeroed()? };
    with_tty(|t| t.shared.winsize = [24, 80, 0, 0]);
    Ok(())
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
            let signal = if is_tty() { TERMIOS.get().signal_for(c) } else { None };
            if let Some(sig) = signal {
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
        t.edit.clear();
        t.shared.pgrp
    });
    (ldisc::jobs().signal_group)(pgrp, sig);
}

/// The foreground process group (0: none set).
pub fn foreground() -> u32 {
    with_tty(|t| t.shared.pgrp)
}

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
    if !is_tty() {
        return Some(if c == b'\r' { b'\n' } else { c });
    }
    TERMIOS.get().input(c)
}

/// Canonical mode: edits the line being typed with byte `c`, echoing to
/// the console; true when a line (or end of file) is ready.
fn edit(c: u8) -> bool {
    let termios = TERMIOS.get();
    with_tty(|t| {
        if !t.edit.key(c, &termios, &mut |b| crate::log::console_write(b)) {
            return false;
        }
        let line = t.edit.line();
        t.line[..line.len()].copy_from_slice(line);
        t.line_len = line.len();
        t.edit.clear();
        true
    })
}

/// Reads what the terminal has: EAGAIN when nothing yet (the caller waits,
/// `io::read`, after checking the reader is in the foreground), EINTR when
/// a control character just signalled.
fn read(_: &mut File, buf: &mut [u8]) -> Result<usize, Errno> {
    let canonical = is_tty() && TERMIOS.get().canonical();
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
                if is_tty() && TERMIOS.get().echoes() {
                    crate::log::console_write(&buf[..n]);
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

/// This process's settings of the terminal, and whether the console is a
/// terminal at all (`lxrt -t`).
static TERMIOS: Word<Termios> = Word::new(Termios::CONSOLE);
static IS_TTY: Word<bool> = Word::new(false);

fn ioctl(_: &mut File, req: u64, arg: u64) -> Result<usize, Errno> {
    if !is_tty() {
        return Err(ENOTTY);
    }
    let mut termios = TERMIOS.get();
    let mut shared = with_tty(|t| t.shared);
    let r = ldisc::ioctl(&mut termios, &mut shared, req, arg, (ldisc::jobs().own_group)());
    TERMIOS.set(termios);
    with_tty(|t| t.shared = shared);
    match r {
        None => Err(ENOTTY),
        Some(Ok(ldisc::Did::Answer(n))) => Ok(n as usize),
        Some(Ok(ldisc::Did::Set { .. })) => Ok(0),
        Some(Ok(ldisc::Did::Resized)) => {
            if shared.pgrp != 0 {
                (ldisc::jobs().signal_group)(shared.pgrp, ldisc::SIGWINCH);
            }
            Ok(0)
        }
        Some(Err(e)) => Err(e),
    }
}
