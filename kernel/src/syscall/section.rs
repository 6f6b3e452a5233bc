//! Whether an environment holds a library lock, as the kernel vouches for
//! it (`section.rs`).

use super::Args;
use crate::env::State;
use crate::section::Hold;
use crate::state::Kernel;
use abi::exception::critical::{BROKEN, HOLDS};
use abi::Error;

pub fn section_holds(k: &mut Kernel, Args([env, ..]): Args) -> Result<u64, Error> {
    let s = k.env_slot(env)?;
    let state = k.envs[s].state();
    if state == State::Exited {
        return Ok(0);
    }
    let id = k.envs[s].id().raw();
    let awake = matches!(state, State::Runnable | State::Penalized | State::Waiting);
    let Some(frame) = k.save_area(s) else { return Ok(0) };
    match k.sections.judge(s.index(), id, frame.upcalls_off & HOLDS != 0, awake) {
        Hold::Free => Ok(0),
        Hold::Held => Ok(1),
        Hold::Broken => {
            // Told, so the holder knows its section was taken from it.
            frame.upcalls_off = frame.upcalls_off & !HOLDS | BROKEN;
            Ok(0)
        }
    }
}
