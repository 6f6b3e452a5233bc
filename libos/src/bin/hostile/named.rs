//! The attack the hostile boot tests of objects opened by name share
//! (`test_fifoguard`, `test_ptyguard`): frames of their own whose address
//! and range ticket sit beside the name, in the arena.

use super::kit;
use user::sys;

/// What an attacker reports: it claimed the range.
pub const CLAIMED: u8 = 4;

/// The frames at `at`, whose range's `ticket` the arena keeps beside their
/// name: claims the range with that ticket or forged ones, maps the frames
/// by name with each capability this process holds for the purpose, or
/// with the ticket as lxrt's opener does; what any of it got (`CLAIMED`,
/// `MAPPED`, and what `scrawl` did for `secret` in frames it mapped).
pub fn range_attack(secret: &[u8], at: u64, ticket: u64) -> u8 {
    use abi::syscall::rights::{READ, WRITE};
    let mut found = 0;
    let forged = (0..64u64).map(|k| ticket & 0xffff | (k + 1) << 16);
    for t in core::iter::once(ticket).chain(forged) {
        for rights in [READ, WRITE, READ | WRITE] {
            if sys::range_claim(t, rights).is_ok() {
                found |= CLAIMED;
            }
        }
    }
    kit::map_by_name(at);
    let _ = libos::obj::pipemem::claim(at, ticket, libos::obj::pipe::GUARDED_PAGES);
    found | kit::reached(secret, at)
}
