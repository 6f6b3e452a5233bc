//! An open file description's status flags (`File::flags`): its access
//! mode and whether writes append and calls block. The bits are Linux's
//! `O_*` values, so the personality stores a program's flags as given.

/// The access-mode field: one of `RDONLY`, `WRONLY`, `RDWR`.
pub const ACCMODE: u32 = 3;
pub const RDONLY: u32 = 0;
pub const WRONLY: u32 = 1;
pub const RDWR: u32 = 2;
/// Every write goes to the end of the file.
pub const APPEND: u32 = 0o2000;
/// `O_DSYNC`: each write's data is durable when the call returns.
pub const DSYNC: u32 = 0o10000;
/// `O_SYNC` is this bit with `DSYNC`: each write's data and inode too.
pub const SYNC: u32 = 0o4000000;
/// Calls that would wait fail with EAGAIN instead.
pub const NONBLOCK: u32 = 0o4000;
/// The descriptor only names a file (`O_PATH`, `opath.rs`).
pub const PATH: u32 = 0o10000000;
/// `O_ASYNC`: recorded (`F_GETFL` shows it) but no SIGIO is sent.
pub const ASYNC: u32 = 0o20000;
