//! The line discipline every terminal shares: the console (`console.rs`)
//! and the pseudo-terminals (`pty.rs`). It knows the kernel's `struct
//! termios` (the 36 bytes `TCGETS` copies: four flag words, the line
//! discipline, 19 control characters; glibc converts to its own 60-byte
//! layout), which input bytes are signals (`ISIG`), the input and output
//! translations (`ICRNL`, `ONLCR`), canonical line editing with echo
//! (erase, kill, end of file) and the ioctls every terminal answers the
//! same way (termios, window size, foreground group). Where the bytes come
//! from and go to is the terminal's own business: the console's input is
//! polled from the kernel, a pty's is what its master writes.

use crate::errno::Errno;
use crate::errno::EINVAL;

/// The kernel's `struct termios`: 36 bytes.
pub const TERMIOS_SIZE: usize = 36;

/// A terminal's settings, as `TCGETS` copies them.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(transparent)]
pub struct Termios(pub [u8; TERMIOS_SIZE]);

// c_lflag
const ISIG: u32 = 0o1;
const ICANON: u32 = 0o2;
const ECHO: u32 = 0o10;
const ECHOCTL: u32 = 0o1000;
// c_iflag
const INLCR: u32 = 0o100;
const IGNCR: u32 = 0o200;
const ICRNL: u32 = 0o400;
// c_oflag
const OPOST: u32 = 0o1;
const ONLCR: u32 = 0o4;
// c_cc indices
const VINTR: usize = 0;
const VQUIT: usize = 1;
const VERASE: usize = 2;
const VKILL: usize = 3;
const VEOF: usize = 4;
const VMIN: usize = 6;
const VSUSP: usize = 10;

/// Signal numbers the terminal sends, Linux's.
pub const SIGHUP: u32 = 1;
const SIGINT: u32 = 2;
const SIGQUIT: u32 = 3;
const SIGTSTP: u32 = 20;
pub const SIGWINCH: u32 = 28;

impl Termios {
    /// Settings from four flag words (input, output, control, local) and
    /// control characters (index, byte).
    const fn make(words: [u32; 4], cc: &[(usize, u8)]) -> Termios {
        let mut t = [0u8; TERMIOS_SIZE];
        let mut i = 0;
        while i < 16 {
            t[i] = (words[i / 4] >> (8 * (i % 4))) as u8;
            i += 1;
        }
        let mut j = 0;
        while j < cc.len() {
            t[17 + cc[j].0] = cc[j].1;
            j += 1;
        }
        Termios(t)
    }

    /// The console's settings at start: ICRNL; OPOST|ONLCR;
    /// B115200|CS8|CREAD; ISIG|ICANON|ECHO|ECHOE|ECHOK|IEXTEN.
    pub const CONSOLE: Termios = Termios::make(
        [0o400, 0o5, 0o10002 | 0o60 | 0o200, 0o1 | 0o2 | 0o10 | 0o20 | 0o40 | 0o100000],
        &[(VINTR, 3), (VQUIT, 0x1c), (VERASE, 0x7f), (VKILL, 0x15), (VEOF, 4), (VMIN, 1), (VSUSP, 0x1a)],
    );

    /// A new pseudo-terminal's, Linux's `tty_std_termios`: ICRNL|IXON;
    /// OPOST|ONLCR; B38400|CS8|CREAD|HUPCL; ISIG|ICANON|ECHO|ECHOE|ECHOK|
    /// ECHOCTL|ECHOKE|IEXTEN, and its control characters.
    pub const PTY: Termios = Termios::make(
        [
            0o400 | 0o2000,
            0o5,
            0o17 | 0o60 | 0o200 | 0o2000,
            0o1 | 0o2 | 0o10 | 0o20 | 0o40 | 0o1000 | 0o4000 | 0o100000,
        ],
        &[
            (VINTR, 3),
            (VQUIT, 0x1c),
            (VERASE, 0x7f),
            (VKILL, 0x15),
            (VEOF, 4),
            (VMIN, 1),
            (8, 0x11),
            (9, 0x13),
            (VSUSP, 0x1a),
            (12, 0x12),
            (13, 0x0f),
            (14, 0x17),
            (15, 0x16),
        ],
    );

    fn word(&self, i: usize) -> u32 {
        u32::from_le_bytes([self.0[4 * i], self.0[4 * i + 1], self.0[4 * i + 2], self.0[4 * i + 3]])
    }

    fn cc(&self, i: usize) -> u8 {
        self.0[17 + i]
    }

    /// Canonical mode (`ICANON`): input comes in lines.
    pub fn canonical(&self) -> bool {
        self.word(3) & ICANON != 0
    }

    /// Non-canonical reads that return at once, even with nothing
    /// (`VMIN` 0; `VTIME` is not waited for).
    pub fn polled(&self) -> bool {
        !self.canonical() && self.cc(VMIN) == 0
    }

    /// Whether input is echoed (`ECHO`).
    pub fn echoes(&self) -> bool {
        self.word(3) & ECHO != 0
    }

    /// The signal input byte `c` stands for (`ISIG`: interrupt, quit,
    /// suspend), if any.
    pub fn signal_for(&self, c: u8) -> Option<u32> {
        if self.word(3) & ISIG == 0 {
            return None;
        }
        [(VINTR, SIGINT), (VQUIT, SIGQUIT), (VSUSP, SIGTSTP)]
            .into_iter()
            .find(|&(i, _)| self.cc(i) != 0 && c == self.cc(i))
            .map(|(_, sig)| sig)
    }

    /// Input byte `c` as the reader sees it (`IGNCR`, `ICRNL`, `INLCR`);
    /// None when it is dropped.
    pub fn input(&self, c: u8) -> Option<u8> {
        let i = self.word(0);
        match c {
            b'\r' if i & IGNCR != 0 => None,
            b'\r' if i & ICRNL != 0 => Some(b'\n'),
            b'\n' if i & INLCR != 0 => Some(b'\r'),
            c => Some(c),
        }
    }

    /// Output bytes `b` as the terminal shows them (`OPOST|ONLCR`: a
    /// newline becomes CR LF), handed to `out` in pieces.
    pub fn output(&self, b: &[u8], out: &mut dyn FnMut(&[u8])) {
        if self.word(1) & (OPOST | ONLCR) != OPOST | ONLCR {
            return out(b);
        }
        for piece in b.split_inclusive(|&c| c == b'\n') {
            match piece.split_last() {
                Some((b'\n', rest)) => {
                    out(rest);
                    out(b"\r\n");
                }
                _ => out(piece),
            }
        }
    }

    /// What echoing control character `c` shows: `^C` with `ECHOCTL`,
    /// nothing without `ECHO`.
    pub fn echo_control(&self, c: u8, out: &mut dyn FnMut(&[u8])) {
        if self.echoes() && self.word(3) & ECHOCTL != 0 {
            out(&[b'^', c ^ 0x40]);
        }
    }
}

/// The line being typed in canonical mode, `N` bytes at most.
#[repr(C)]
pub struct Edit<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> Edit<N> {
    /// Edits the line with input byte `c` under settings `t`, echoing
    /// through `echo`; true when the line is finished (newline, end of
    /// file or full): take it with `line` then `clear`.
    pub fn key(&mut self, c: u8, t: &Termios, echo: &mut dyn FnMut(&[u8])) -> bool {
        let mut show = |b: &[u8]| {
            if t.echoes() {
                echo(b)
            }
        };
        if c == t.cc(VERASE) || c == 0x08 {
            if self.len > 0 {
                self.len -= 1;
                show(b"\x08 \x08");
            }
            return false;
        }
        if c == t.cc(VKILL) {
            for _ in 0..self.len {
                show(b"\x08 \x08");
            }
            self.len = 0;
            return false;
        }
        let eof = c == t.cc(VEOF);
        if !eof && self.len < N {
            self.buf[self.len] = c;
            self.len += 1;
            show(&[c]);
        }
        eof || c == b'\n' || self.len == N
    }

    /// The line so far.
    pub fn line(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// Forgets the line (taken, or dropped by a signal character).
    pub fn clear(&mut self) {
        self.len = 0;
    }
}

/// What every terminal keeps beside its settings for the common ioctls.
#[derive(Clone, Copy)]
pub struct Shared {
    /// `struct winsize`: rows, columns, x and y pixels.
    pub winsize: [u16; 4],
    /// The foreground process group (0: none set).
    pub pgrp: u32,
}

const TCGETS: u64 = 0x5401;
const TCSETS: u64 = 0x5402;
const TCSETSW: u64 = 0x5403;
const TCSETSF: u64 = 0x5404;
const TIOCGPGRP: u64 = 0x540f;
const TIOCSPGRP: u64 = 0x5410;
const TIOCGWINSZ: u64 = 0x5413;
const TIOCSWINSZ: u64 = 0x5414;

/// What a common ioctl did, for the terminal to act on.
pub enum Did {
    /// Done, answering this.
    Answer(i64),
    /// The window size changed (the foreground group gets SIGWINCH).
    Resized,
    /// The settings were replaced; with `TCSETSF`, input is to be dropped.
    Set { flush: bool },
}

/// Answers the ioctls every terminal answers alike, on settings `t` and
/// `s`; `own_group` answers `TIOCGPGRP` when no foreground group is set.
/// None: not one of them.
pub fn ioctl(
    t: &mut Termios,
    s: &mut Shared,
    req: u64,
    arg: u64,
    own_group: u32,
) -> Option<Result<Did, Errno>> {
    let r = match req {
        TCGETS => crate::uaccess::write(arg, &t.0).map(|_| Did::Answer(0)),
        TCSETS | TCSETSW | TCSETSF => crate::uaccess::bytes(arg, TERMIOS_SIZE as u64).map(|b| {
            t.0.copy_from_slice(b);
            Did::Set { flush: req == TCSETSF }
        }),
        TIOCGWINSZ => crate::uaccess::put(arg, s.winsize).map(|_| Did::Answer(0)),
        TIOCSWINSZ => crate::uaccess::get::<[u16; 4]>(arg).map(|w| {
            let changed = w != s.winsize;
            s.winsize = w;
            if changed {
                Did::Resized
            } else {
                Did::Answer(0)
            }
        }),
        TIOCGPGRP => {
            let g = if s.pgrp == 0 { own_group } else { s.pgrp };
            crate::uaccess::put(arg, g as i32).map(|_| Did::Answer(0))
        }
        TIOCSPGRP => match crate::uaccess::get::<i32>(arg) {
            Ok(g) if g < 0 => Err(EINVAL),
            Ok(g) => {
                s.pgrp = g as u32;
                Ok(Did::Answer(0))
            }
            Err(e) => Err(e),
        },
        _ => return None,
    };
    Some(r)
}

/// What the terminals ask of the process layer for job control: to send a
/// signal to a process group (0: everyone but init), or to the others of a
/// group (a session leader's exit hangs up its terminal), the caller's own
/// group, and the caller's process and session ids. Chosen at start
/// (`set_jobs`), kept across fork and exec.
pub struct Jobs {
    pub signal_group: fn(u32, u32),
    pub signal_others: fn(u32, u32),
    pub own_group: fn() -> u32,
    pub session: fn() -> (u32, u32),
}

/// Until a process layer is chosen, nobody is signalled (group 0).
static NO_JOBS: Jobs =
    Jobs { signal_group: |_, _| {}, signal_others: |_, _| {}, own_group: || 0, session: || (0, 0) };
static JOBS: crate::word::Word<&'static Jobs> = crate::word::Word::new(&NO_JOBS);

/// Chooses who answers the terminals' job control.
pub fn set_jobs(j: &'static Jobs) {
    JOBS.set(j);
}

/// The process layer's job control.
pub fn jobs() -> &'static Jobs {
    JOBS.get()
}
