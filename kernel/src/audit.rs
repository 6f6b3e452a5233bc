//! The consistency audit run at power-off when the command line has the
//! word `audit` (`cargo xtask stress` boots with it): after hostile
//! programs have run, the kernel's own books must still agree. Checked:
//! the frame table's free frames equal the free count; no frame belongs to
//! an environment that no longer exists; every capability an existing
//! environment's list names is either stale or live (nothing dangling);
//! no predicate belongs to a gone environment. Prints one line, which the
//! stress harness reads.

use crate::arch::cpu;
use crate::frames::Frame;
use crate::state::Kernel;
use abi::tables::frame_state;

impl Kernel {
    /// Powers the machine off with success for `code == 0`, after the audit
    /// if one was asked for (an inconsistent audit is a failure).
    pub fn power_off(&self, code: i64) -> ! {
        let asked = self.mem.cmdline().split(|&b| b == b' ').any(|w| w == b"audit");
        let consistent = !asked || self.audit();
        cpu::qemu_exit(if code == 0 && consistent { crate::EXIT_SUCCESS } else { crate::EXIT_FAILURE })
    }

    /// Audits the books; prints the verdict and returns whether they agree.
    pub fn audit(&self) -> bool {
        let gone = |id: u32| self.envs.live(id as u64).is_err();
        let mut free = 0u64;
        let mut orphaned = 0u64;
        for f in 0..self.mem.frames.len() {
            let Some(fi) = self.mem.frames.info(Frame::new(f)) else { continue };
            match fi.state {
                frame_state::FREE => free += 1,
                frame_state::USER | frame_state::PAGE_TABLE if fi.owner != 0 && gone(fi.owner) => {
                    orphaned += 1
                }
                _ => {}
            }
        }
        let stray_preds = self.preds.strays(gone);
        let ok = free == self.mem.frames.free_count() && orphaned == 0 && stray_preds == 0;
        crate::kprintln!(
            "audit: {} ({free} free frames in the table, free count {}; {orphaned} frames of gone environments; {stray_preds} predicates of gone environments; {} capabilities live)",
            if ok { "consistent" } else { "INCONSISTENT" },
            self.mem.frames.free_count(),
            self.mem.caps.live(),
        );
        ok
    }
}
