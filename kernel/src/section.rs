//! Library locks the kernel vouches for (robust critical sections, paper
//! 000 §3.3; issue 25). A library's lock word lives in memory its
//! processes share, so a hostile one can write any id into it; the kernel
//! cannot stop that, but it can answer the one question a waiter needs:
//! does the environment the word names really hold the lock now? A holder
//! says so in its own exception save area (`critical::HOLDS`), which only
//! it writes, so nobody can claim a hold for another. The kernel vouches
//! for a claim only while the claimant can finish: it is awake (running,
//! runnable, or waiting for a reply) and has not run `SECTION_TICKS`
//! ticks in a row holding. Otherwise the hold is broken and the waiter
//! takes the lock: a dead, forged, asleep or spinning holder delays
//! others by at most that bound.

use abi::syscall::SECTION_TICKS;
use abi::tables::ENV_SLOTS;

/// How long a slot's present environment has held, as ticks saw it.
#[derive(Clone, Copy)]
pub struct Streak {
    /// The environment the count is for (a reused slot starts over).
    id: u32,
    /// Consecutive ticks that found it running with its hold claimed.
    ticks: u32,
}

impl Streak {
    pub const ZERO: Streak = Streak { id: 0, ticks: 0 };
}

/// The kernel's verdict on a claimed hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hold {
    /// No hold claimed.
    Free,
    /// Claimed and vouched for: the waiter should wait (give it the CPU).
    Held,
    /// Claimed, but its holder cannot be waited for: the claim is cleared.
    Broken,
}

/// Every slot's streak.
pub struct Sections {
    table: &'static mut [Streak; ENV_SLOTS],
}

/// The table, taken once at boot.
pub static SECTIONS: cell::Once<[Streak; ENV_SLOTS]> = cell::Once::new([Streak::ZERO; ENV_SLOTS]);

impl Sections {
    pub fn new(table: &'static mut [Streak; ENV_SLOTS]) -> Sections {
        Sections { table }
    }

    /// A tick found environment `id` (in slot `s`) running, claiming a
    /// hold or not: a tick that finds it not holding ends the streak.
    pub fn tick(&mut self, s: usize, id: u32, holds: bool) {
        let t = &mut self.table[s];
        let ticks = if holds && t.id == id { t.ticks.saturating_add(1) } else { u32::from(holds) };
        *t = Streak { id, ticks };
    }

    /// Environment `id` (in slot `s`) yielded claiming no hold: its
    /// streak ends, as at a tick that finds it not holding (a library
    /// that lets its lock go between the steps of a long call, and
    /// yields there, is not one long hold).
    pub fn let_go(&mut self, s: usize, id: u32) {
        self.tick(s, id, false);
    }

    /// Judges environment `id`'s claim (`holds`), `awake` saying whether
    /// it can go on to release it. A broken claim's streak starts over
    /// (the caller clears the claim itself).
    pub fn judge(&mut self, s: usize, id: u32, holds: bool, awake: bool) -> Hold {
        if !holds {
            return Hold::Free;
        }
        let t = &mut self.table[s];
        let ran = if t.id == id { t.ticks } else { 0 };
        if awake && ran < SECTION_TICKS {
            return Hold::Held;
        }
        *t = Streak { id, ticks: 0 };
        Hold::Broken
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sections() -> Sections {
        Sections::new(Box::leak(Box::new([Streak::ZERO; ENV_SLOTS])))
    }

    #[test]
    fn an_awake_holder_is_vouched_for_until_it_has_run_its_bound() {
        let mut s = sections();
        assert_eq!(s.judge(3, 7, false, true), Hold::Free);
        assert_eq!(s.judge(3, 7, true, true), Hold::Held);
        for _ in 0..SECTION_TICKS - 1 {
            s.tick(3, 7, true);
        }
        assert_eq!(s.judge(3, 7, true, true), Hold::Held);
        s.tick(3, 7, true);
        assert_eq!(s.judge(3, 7, true, true), Hold::Broken);
        // Broken once: the count starts over.
        assert_eq!(s.judge(3, 7, true, true), Hold::Held);
    }

    #[test]
    fn a_tick_between_holds_or_a_new_environment_starts_over() {
        let mut s = sections();
        for _ in 0..SECTION_TICKS {
            s.tick(3, 7, true);
        }
        s.tick(3, 7, false);
        s.tick(3, 7, true);
        assert_eq!(s.judge(3, 7, true, true), Hold::Held);
        for _ in 0..SECTION_TICKS {
            s.tick(3, 7, true);
        }
        // Slot 3 reused by environment 8: not charged for 7's streak.
        assert_eq!(s.judge(3, 8, true, true), Hold::Held);
    }

    #[test]
    fn a_yield_without_the_hold_starts_over() {
        let mut s = sections();
        for _ in 0..SECTION_TICKS - 1 {
            s.tick(3, 7, true);
        }
        s.let_go(3, 7);
        s.tick(3, 7, true);
        assert_eq!(s.judge(3, 7, true, true), Hold::Held);
    }

    #[test]
    fn an_asleep_holder_is_broken_at_once() {
        let mut s = sections();
        assert_eq!(s.judge(1, 2, true, false), Hold::Broken);
        assert_eq!(s.judge(1, 2, false, false), Hold::Free);
    }
}
