//! This process's environment id: the first thread's, which the library
//! charges the process's frames to and names itself by (a thread's own id
//! is the lock's, `lock::my_id`).

use crate::word::Word;

static ENV: Word<u32> = Word::new(0);

/// This process's environment id.
#[inline]
pub fn id() -> u32 {
    ENV.get()
}

/// Set at the start of the first process and of each forked child.
pub fn set(env: u32) {
    ENV.set(env);
}
