//! The wait of a nester that is not on its child's path (`limiter`,
//! `world`): in the kernel, without interposing, so no event comes for it
//! and the wait ends only when the child does (or all of it is held); the
//! nester takes no CPU meanwhile.

use abi::nest::Event;
use abi::tables::env_state;
use abi::Error;
use user::{kinfo, nest, sys};

/// Waits for `child` to end, destroys it and returns its exit code.
pub fn wait_end(child: u64) -> Result<i32, Error> {
    let mut ev = Event::default();
    loop {
        nest::intercept_wait(child, &mut ev, 0, 0, 0)?;
        match kinfo::env_by_id(child) {
            Some(e) if e.state == env_state::EXITED => {
                let code = e.exit_code;
                let _ = sys::env_destroy(child);
                return Ok(code);
            }
            // All of it is held: whoever holds it must act first.
            Some(_) => sys::yield_now(),
            None => return Err(Error::BadEnv),
        }
    }
}
