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
    /// How many slots have a streak under way (a tick found them
    /// holding): while none has, a yield has nothing to end.
    under_way: u32,
}

/// The table, taken once at boot.
pub static SECTIONS: cell::Once<[Streak; ENV_SLOTS]> = cell::Once::new([Streak::ZERO; ENV_SLOTS]);

impl Sections {
    pub fn new(table: &'static mut [Streak; ENV_SLOTS]) -> Sections {
        Sections { table, under_way: 0 }
    }

    /// Slot `s`'s streak becomes `new`, the count of streaks under way
    /// kept with it.
    fn set(&mut self, s: usize, new: Streak) {
        let t = &mut self.table[s];
        self.under_way = self.under_way - u32::from(t.ticks != 0) + u32::from(new.ticks != 0);
        *t = new;
    }

    /// A tick found environment `id` (in slot `s`) running, claiming a
    /// hold or not: a tick that finds it not holding ends the streak.
    pub fn tick(&mut self, s: usize, id: u32, holds: bool) {
        let t = self.table[s];
        let ticks = if holds && t.id == id { t.ticks.saturating_add(1) } else { u32::from(holds) };
        self.set(s, Streak { id, ticks });
    }

    /// Whether any slot has a streak under way. Without one `let_go`
    /// changes nothing a verdict reads (`tick` and `judge` give a streak
    /// of no ticks the same answer whoever it names), so the common yield
    /// reads this one word and no save area.
    #[inline(always)]
    pub fn any_under_way(&self) -> bool {
        self.under_way != 0
    }

    /// Slot `s`'s environment ended: so does its streak (else it would
    /// count as under way until the slot's next environment is ticked).
    pub fn end(&mut self, s: usize) {
        self.set(s, Streak::ZERO);
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
        let t = self.table[s];
        let ran = if t.id == id { t.ticks } else { 0 };
        if awake && ran < SECTION_TICKS {
            return Hold::Held;
        }
        self.set(s, Streak { id, ticks: 0 });
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
    fn a_yield_with_no_streak_under_way_needs_no_let_go() {
        // `yield_` calls `let_go` only while `any_under_way`: skipping it
        // must leave every later verdict as it would have been.
        let setups: [fn(&mut Sections); 4] = [
            |_| {},
            |s| s.tick(3, 9, false),
            |s| {
                s.tick(3, 7, true);
                assert_eq!(s.judge(3, 7, true, false), Hold::Broken);
            },
            |s| {
                s.tick(3, 7, true);
                s.end(3);
            },
        ];
        for setup in setups {
            let (mut skipped, mut let_go) = (sections(), sections());
            setup(&mut skipped);
            setup(&mut let_go);
            assert!(!skipped.any_under_way());
            let_go.let_go(3, 7);
            for _ in 0..=SECTION_TICKS {
                skipped.tick(3, 7, true);
                let_go.tick(3, 7, true);
                assert!(skipped.any_under_way());
                assert_eq!(skipped.judge(3, 7, true, true), let_go.judge(3, 7, true, true));
            }
        }
    }

    #[test]
    fn the_count_of_streaks_under_way_follows_every_change() {
        let mut s = sections();
        s.tick(1, 5, true);
        s.tick(2, 6, true);
        s.tick(2, 6, true);
        assert_eq!(s.under_way, 2);
        s.let_go(1, 5);
        assert_eq!(s.under_way, 1);
        s.let_go(1, 5);
        assert_eq!(s.under_way, 1);
        // A new environment in slot 2, holding: still one streak there.
        s.tick(2, 8, true);
        assert_eq!(s.under_way, 1);
        assert_eq!(s.judge(2, 8, true, false), Hold::Broken);
        assert_eq!(s.under_way, 0);
        s.tick(4, 9, true);
        s.end(4);
        assert!(!s.any_under_way());
    }

    #[test]
    fn an_asleep_holder_is_broken_at_once() {
        let mut s = sections();
        assert_eq!(s.judge(1, 2, true, false), Hold::Broken);
        assert_eq!(s.judge(1, 2, false, false), Hold::Free);
    }
}
