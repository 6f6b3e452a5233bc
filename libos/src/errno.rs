//! Linux error numbers lxrt returns: `Errno`, positive inside lxrt,
//! negated only where a result goes back to a program.

pub const EPERM: Errno = Errno(1);
pub const ENOENT: Errno = Errno(2);
pub const ESRCH: Errno = Errno(3);
pub const EINTR: Errno = Errno(4);
pub const EIO: Errno = Errno(5);
pub const ENXIO: Errno = Errno(6);
pub const E2BIG: Errno = Errno(7);
pub const ENOEXEC: Errno = Errno(8);
pub const EBADF: Errno = Errno(9);
pub const ECHILD: Errno = Errno(10);
pub const EAGAIN: Errno = Errno(11);
pub const ENOMEM: Errno = Errno(12);
pub const EACCES: Errno = Errno(13);
pub const EFAULT: Errno = Errno(14);
pub const EBUSY: Errno = Errno(16);
pub const EEXIST: Errno = Errno(17);
pub const EXDEV: Errno = Errno(18);
pub const ENODEV: Errno = Errno(19);
pub const ENOTDIR: Errno = Errno(20);
pub const EISDIR: Errno = Errno(21);
pub const EINVAL: Errno = Errno(22);
pub const ENFILE: Errno = Errno(23);
pub const EMFILE: Errno = Errno(24);
pub const ENOTTY: Errno = Errno(25);
pub const ETXTBSY: Errno = Errno(26);
pub const EFBIG: Errno = Errno(27);
pub const ENOSPC: Errno = Errno(28);
pub const ESPIPE: Errno = Errno(29);
pub const EPIPE: Errno = Errno(32);
pub const ERANGE: Errno = Errno(34);
pub const ENAMETOOLONG: Errno = Errno(36);
pub const ENOLCK: Errno = Errno(37);
pub const ENOSYS: Errno = Errno(38);
pub const ETIMEDOUT: Errno = Errno(110);
pub const ENOTEMPTY: Errno = Errno(39);
pub const ELOOP: Errno = Errno(40);
pub const ENOMSG: Errno = Errno(42);
pub const EIDRM: Errno = Errno(43);
pub const EOVERFLOW: Errno = Errno(75);
pub const ELIBBAD: Errno = Errno(80);
pub const ENOTSOCK: Errno = Errno(88);
pub const EMSGSIZE: Errno = Errno(90);
pub const EDOM: Errno = Errno(33);
pub const EPROTOTYPE: Errno = Errno(91);
pub const ENOPROTOOPT: Errno = Errno(92);
pub const EPROTONOSUPPORT: Errno = Errno(93);
pub const ESOCKTNOSUPPORT: Errno = Errno(94);
pub const EOPNOTSUPP: Errno = Errno(95);
pub const EAFNOSUPPORT: Errno = Errno(97);
pub const EADDRINUSE: Errno = Errno(98);
pub const ENOBUFS: Errno = Errno(105);
pub const ETOOMANYREFS: Errno = Errno(109);
pub const EISCONN: Errno = Errno(106);
pub const ENOTCONN: Errno = Errno(107);
pub const ECONNRESET: Errno = Errno(104);
pub const ECONNREFUSED: Errno = Errno(111);

/// A Linux error number, positive as Linux numbers them: the one form an
/// error has inside lxrt, negated only where it goes back to the program
/// (`Errno::negated`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(transparent)]
pub struct Errno(i64);

impl Errno {
    /// Linux's number `n` (1..=4095: what a call can return).
    pub const fn new(n: u16) -> Errno {
        Errno(n as i64)
    }

    /// The negated number: what goes back to the program (in rax, or a
    /// native call's result), and only there.
    pub const fn negated(self) -> i64 {
        -self.0
    }
}

impl core::fmt::Display for Errno {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A Linux call's outcome: a value, or an error number.
pub type LxResult = Result<i64, Errno>;
