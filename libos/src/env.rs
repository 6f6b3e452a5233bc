//! This process's environment id: the first thread's, which the library
//! charges the process's frames to and names itself by (a thread's own id
//! is the lock's, `lock::my_id`); and the first process's, which every
//! process inherits and counts pids from (`proc::pid`). One word holds
//! both: `getpid` reads them with one load.

use crate::word::Word;

/// (this process's, the first process's).
static IDS: Word<(u32, u32)> = Word::new((0, 0));

/// This process's environment id.
#[inline]
pub fn id() -> u32 {
    IDS.get().0
}

/// The first process's environment id.
#[inline]
pub fn first() -> u32 {
    IDS.get().1
}

/// Set at the start of the first process and of each forked child.
pub fn set(env: u32) {
    IDS.set((env, first()));
}

/// The first process is environment `env` (set by it, at start).
pub fn set_first(env: u32) {
    IDS.set((id(), env));
}
