//! Requests in flight across all drivers, each with what the kernel
//! needs to make it again: its `Request` and its buffer's pages. When
//! a driver fails and is to be restarted (`recover`), the requests it
//! held are *parked* rather than failed, and the restarted driver is
//! handed them again, oldest first (`driver::replay`): their clients see
//! a delay, not an error — the shadow driver's idea (paper 004 §3.5 and
//! its sequel), in its simplest form: the kernel's record of a request
//! is its shadow. Reads and writes may be made twice (a write puts the
//! same bytes on the same sectors), a flush too, and a frame sent twice
//! is a duplicate the protocols above expect; the fault-injection
//! requests are never made again (they would fail the driver again).

use super::run::Pages;
use core::sync::atomic::{AtomicU64, Ordering::Relaxed};
use drvapi::{op, status, Request};

/// Requests in flight (or parked) across all drivers.
const MAX_PENDING: usize = 64;

/// What the kernel calls when a request ends: the cookie its submitter
/// gave, a `drvapi::status` and the bytes moved. It may run inside a
/// crossing (a driver's `complete`, or its disabling in a trap), so it
/// reaches only the device layer's own state.
pub type Done = fn(cookie: u64, status: i32, len: usize);

struct Pending {
    tag: u64,
    driver: usize,
    done: Done,
    cookie: u64,
    /// When its driver took it (timer ticks), for the deadline; `None`
    /// while parked.
    since: Option<u64>,
    request: Request,
    /// Its driver reported an I/O error for it once, which was not
    /// believed (`ask_again`): the next one is.
    asked_again: bool,
}

pub struct Table {
    slots: [Option<Pending>; MAX_PENDING],
    /// Each slot's request's buffer's pages, apart: a request writes only
    /// as many as it has (a run's array, copied and cleared with every
    /// one-page request, was a tenth of its cost).
    pages: [Pages; MAX_PENDING],
    next_tag: u64,
}

/// Drivers (bit `i`) that may have parked requests: the clock hook looks
/// for them only then.
static PARKED: AtomicU64 = AtomicU64::new(0);

/// Whether driver `i` may have parked requests.
pub fn parked(i: usize) -> bool {
    PARKED.load(Relaxed) & 1 << i != 0
}

/// Whether request `r` may be made again after its driver's restart.
fn replayable(r: &Request) -> bool {
    matches!(r.op, op::READ | op::WRITE | op::TRANSMIT | op::FLUSH)
}

impl Default for Table {
    fn default() -> Table {
        Table::new()
    }
}

impl Table {
    pub const fn new() -> Table {
        Table { slots: [const { None }; MAX_PENDING], pages: [Pages::NONE; MAX_PENDING], next_tag: 1 }
    }

    /// Records request `r` (buffer in `pages`, 1 to `drvapi::MAX_PAGES`
    /// physical addresses) to driver `i`, held since
    /// `since`, or parked (`None`: its driver awaits its restart): its
    /// slot and tag.
    pub fn add(
        &mut self,
        i: usize,
        r: Request,
        pages: &[u64],
        (done, cookie): (Done, u64),
        since: Option<u64>,
    ) -> Result<(usize, u64), i32> {
        let slot = self.slots.iter().position(Option::is_none).ok_or(status::NO_SPACE)?;
        let tag = self.next_tag;
        self.next_tag += 1;
        self.slots[slot] =
            Some(Pending { tag, driver: i, done, cookie, since, request: r, asked_again: false });
        self.pages[slot].set(pages);
        if since.is_none() {
            PARKED.fetch_or(1 << i, Relaxed);
        }
        Ok((slot, tag))
    }

    /// The first request held since before `before` (timer ticks) by a
    /// driver for which `enabled` holds: its driver and tag.
    pub fn overdue(&self, before: u64, enabled: impl Fn(usize) -> bool) -> Option<(usize, u64)> {
        let late = |p: &&Pending| p.since.is_some_and(|t| t < before) && enabled(p.driver);
        self.slots.iter().flatten().find(late).map(|p| (p.driver, p.tag))
    }

    /// How many requests driver `i` holds.
    pub fn holding(&self, i: usize) -> usize {
        self.slots.iter().flatten().filter(|p| p.driver == i && p.since.is_some()).count()
    }

    /// Held request `tag` ended with `st`, `len` bytes moved: its driver.
    pub fn finish(&mut self, tag: u64, st: i32, len: usize) -> Option<usize> {
        let held = |s: &Option<Pending>| s.as_ref().is_some_and(|p| p.tag == tag && p.since.is_some());
        let slot = self.slots.iter_mut().find(|s| held(s))?;
        let (done, cookie, driver) = slot.as_ref().map(|p| (p.done, p.cookie, p.driver))?;
        *slot = None;
        done(cookie, st, len);
        Some(driver)
    }

    /// Held request `tag` was refused or ended with an I/O error: whether
    /// to have a fresh copy of its driver make it again rather than
    /// believe the error — once per request, and only if it may be made
    /// again. The kernel cannot tell a device's error from one a damaged
    /// driver made up; a restarted driver and reset device are a second
    /// witness, and an error they report too is the device's.
    pub fn ask_again(&mut self, tag: u64) -> bool {
        let held = |p: &&mut Pending| p.tag == tag && p.since.is_some();
        match self.slots.iter_mut().flatten().find(held) {
            Some(p) if replayable(&p.request) && !p.asked_again => {
                p.asked_again = true;
                true
            }
            _ => false,
        }
    }

    /// Request `tag` in `slot` did not start: forgotten if held (no
    /// completion is due; whether it was), kept if parked meanwhile (its
    /// driver failed during the call and will get it again).
    pub fn not_started(&mut self, slot: usize, tag: u64) -> Option<(Done, u64)> {
        let p = self.slots[slot].take_if(|p| p.tag == tag && p.since.is_some())?;
        Some((p.done, p.cookie))
    }

    /// Whether request `tag` in `slot` is parked.
    pub fn is_parked(&self, slot: usize, tag: u64) -> bool {
        self.slots[slot].as_ref().is_some_and(|p| p.tag == tag && p.since.is_none())
    }

    /// Driver `i` failed: the requests it held are parked for its restart
    /// (`keep`) if they may be made again; the others end with an I/O
    /// error.
    pub fn failed(&mut self, i: usize, keep: bool) {
        for slot in self.slots.iter_mut().filter(|s| s.as_ref().is_some_and(|p| p.driver == i)) {
            let p = slot.as_mut().expect("checked");
            if keep && replayable(&p.request) {
                p.since = None;
                PARKED.fetch_or(1 << i, Relaxed);
            } else {
                let p = slot.take().expect("checked");
                (p.done)(p.cookie, status::IO_ERROR, 0);
            }
        }
    }

    /// Driver `i` will not be restarted: its parked requests end with an
    /// I/O error.
    pub fn give_up(&mut self, i: usize) {
        self.failed(i, false);
        PARKED.fetch_and(!(1 << i), Relaxed);
    }

    /// The oldest request parked for driver `i`, now held from `now`: its
    /// slot, tag, request and buffer's pages.
    pub fn unpark(&mut self, i: usize, now: u64) -> Option<(usize, u64, Request, Pages)> {
        let parked = |p: &Pending| p.driver == i && p.since.is_none();
        let oldest = self.slots.iter().enumerate();
        let oldest = oldest.filter_map(|(s, p)| p.as_ref().filter(|p| parked(p)).map(|p| (p.tag, s))).min();
        let Some((tag, slot)) = oldest else {
            PARKED.fetch_and(!(1 << i), Relaxed);
            return None;
        };
        let p = self.slots[slot].as_mut()?;
        p.since = Some(now);
        Some((slot, tag, p.request, self.pages[slot]))
    }

    /// Request `tag` in `slot`, just unparked, parked again (its driver
    /// had no room for it yet).
    pub fn repark(&mut self, slot: usize, tag: u64) {
        if let Some(p) = self.slots[slot].as_mut().filter(|p| p.tag == tag) {
            p.since = None;
            PARKED.fetch_or(1 << p.driver, Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// The ends seen: (cookie, status).
    static ENDS: Mutex<Vec<(u64, i32)>> = Mutex::new(Vec::new());

    fn done(cookie: u64, st: i32, _len: usize) {
        ENDS.lock().unwrap().push((cookie, st));
    }

    /// How request `cookie` ended, if it did.
    fn end(cookie: u64) -> Option<i32> {
        ENDS.lock().unwrap().iter().find(|e| e.0 == cookie).map(|e| e.1)
    }

    /// `drvapi::op::INJECT_WILD_CALL` (behind the `inject` feature).
    const INJECTION: u32 = 0xF4;

    fn req(op: u32, sector: u64) -> Request {
        Request { op, tag: 0, sector, va: 0, len: 4096 }
    }

    #[test]
    fn a_failed_drivers_requests_are_parked_and_handed_back_oldest_first() {
        let (mut t, d) = (Table::new(), 1);
        let (_, w) = t.add(d, req(op::WRITE, 8), &[0x5000], (done, 101), Some(0)).unwrap();
        let (_, r) = t.add(d, req(op::READ, 16), &[0x6000], (done, 102), Some(0)).unwrap();
        let (_, inj) = t.add(d, req(INJECTION, 0), &[0x7000], (done, 103), Some(0)).unwrap();
        t.add(2, req(op::READ, 0), &[0x8000], (done, 104), Some(0)).unwrap();
        t.failed(d, true);
        // The injection fails; the others wait, and are no longer held.
        assert_eq!((end(101), end(102), end(103)), (None, None, Some(status::IO_ERROR)));
        assert!(parked(d));
        assert_eq!((t.holding(d), t.holding(2)), (0, 1));
        t.finish(w, status::OK, 4096);
        assert_eq!(end(101), None, "a parked request was ended by a completion");
        // Made while the driver is down: behind the others.
        let (_, late) = t.add(d, req(op::WRITE, 8), &[0x9000], (done, 105), None).unwrap();
        let order: Vec<(u64, u64, u64)> = std::iter::from_fn(|| t.unpark(d, 50))
            .map(|(_, tag, r, p)| (tag, r.sector, p.addrs()[0]))
            .collect();
        assert_eq!(order, [(w, 8, 0x5000), (r, 16, 0x6000), (late, 8, 0x9000)]);
        assert!(!parked(d));
        assert_ne!(inj, late);
        // Held again, with a fresh deadline, and ended by completions.
        assert_eq!(t.overdue(50, |_| true).map(|o| o.0), Some(2));
        assert_eq!(t.holding(d), 3);
        t.finish(r, status::OK, 4096);
        assert_eq!(end(102), Some(status::OK));
    }

    #[test]
    fn parked_requests_fail_when_the_driver_is_given_up_on_or_not_restarted() {
        let (mut t, d) = (Table::new(), 3);
        t.add(d, req(op::TRANSMIT, 0), &[0x1000], (done, 201), Some(5)).unwrap();
        t.add(d, req(op::FLUSH, 0), &[0x2000], (done, 202), Some(5)).unwrap();
        t.failed(d, true);
        assert_eq!(t.overdue(u64::MAX, |_| true), None, "a parked request has no deadline");
        t.give_up(d);
        assert_eq!((end(201), end(202)), (Some(status::IO_ERROR), Some(status::IO_ERROR)));
        assert!(t.unpark(d, 0).is_none());
        // Without a restart due, nothing is parked.
        t.add(d, req(op::READ, 0), &[0x3000], (done, 203), Some(5)).unwrap();
        t.failed(d, false);
        assert_eq!(end(203), Some(status::IO_ERROR));
    }

    #[test]
    fn an_io_error_is_doubted_once_per_request_and_never_for_an_injection() {
        let (mut t, d) = (Table::new(), 4);
        let (_, r) = t.add(d, req(op::READ, 0), &[0x1000], (done, 401), Some(0)).unwrap();
        let (_, inj) = t.add(d, req(INJECTION, 0), &[0x2000], (done, 402), Some(0)).unwrap();
        assert!(t.ask_again(r), "the first I/O error of a read was believed");
        assert!(!t.ask_again(inj), "an injection was to be made again");
        t.failed(d, true);
        assert!(!t.ask_again(r), "a parked request was asked about");
        t.unpark(d, 1).unwrap();
        assert!(!t.ask_again(r), "the fresh driver's error was doubted too");
        t.finish(r, status::IO_ERROR, 0);
        assert_eq!(end(401), Some(status::IO_ERROR));
        let (_, other) = t.add(d, req(op::WRITE, 0), &[0x3000], (done, 403), Some(2)).unwrap();
        assert!(t.ask_again(other), "another request's first error was believed");
    }

    #[test]
    fn a_request_the_driver_had_no_room_for_is_parked_again_and_one_not_started_is_forgotten() {
        let (mut t, d) = (Table::new(), 0);
        let (slot, tag) = t.add(d, req(op::READ, 0), &[0x1000], (done, 301), None).unwrap();
        assert!(t.is_parked(slot, tag));
        assert_eq!(t.unpark(d, 7).map(|u| (u.0, u.1)), Some((slot, tag)));
        t.repark(slot, tag);
        assert!(t.is_parked(slot, tag));
        t.unpark(d, 8).unwrap();
        assert_eq!(t.not_started(slot, tag).map(|n| n.1), Some(301));
        assert_eq!((t.holding(d), end(301)), (0, None));
    }
}
