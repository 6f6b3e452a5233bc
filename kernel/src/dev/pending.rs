//! Requests in flight across all drivers, each with what the kernel
//! needs to make it again: its `Request` and its buffer's address. When
//! a driver fails and is to be restarted (`recover`), the requests it
//! held are *parked* rather than failed, and the restarted driver is
//! handed them again, oldest first (`driver::replay`): their clients see
//! a delay, not an error — the shadow driver's idea (paper 004 §3.5 and
//! its sequel), in its simplest form: the kernel's record of a request
//! is its shadow. Reads and writes may be made twice (a write puts the
//! same bytes on the same sectors), a flush too, and a frame sent twice
//! is a duplicate the protocols above expect; the fault-injection
//! requests are never made again (they would fail the driver again).

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
    pa: u64,
}

pub struct Table {
    slots: [Option<Pending>; MAX_PENDING],
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

impl Table {
    pub const fn new() -> Table {
        Table { slots: [const { None }; MAX_PENDING], next_tag: 1 }
    }

    /// Records request `r` (buffer at `pa`) to driver `i`, held since
    /// `since`, or parked (`None`: its driver awaits its restart): its
    /// slot and tag.
    pub fn add(
        &mut self,
        i: usize,
        r: Request,
        pa: u64,
        (done, cookie): (Done, u64),
        since: Option<u64>,
    ) -> Result<(usize, u64), i32> {
        let slot = self.slots.iter().position(Option::is_none).ok_or(status::NO_SPACE)?;
        let tag = self.next_tag;
        self.next_tag += 1;
        self.slots[slot] = Some(Pending { tag, driver: i, done, cookie, since, request: r, pa });
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

    /// Held request `tag` ended with `st`, `len` bytes moved.
    pub fn finish(&mut self, tag: u64, st: i32, len: usize) {
        let held = |p: &Pending| p.tag == tag && p.since.is_some();
        if let Some(p) = self.slots.iter_mut().find_map(|s| s.take_if(|p| held(p))) {
            (p.done)(p.cookie, st, len);
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
    /// slot, tag, request and buffer's address.
    pub fn unpark(&mut self, i: usize, now: u64) -> Option<(usize, u64, Request, u64)> {
        let parked = |p: &Pending| p.driver == i && p.since.is_none();
        let oldest = self.slots.iter().enumerate();
        let oldest = oldest.filter_map(|(s, p)| p.as_ref().filter(|p| parked(p)).map(|p| (p.tag, s))).min();
        let Some((tag, slot)) = oldest else {
            PARKED.fetch_and(!(1 << i), Relaxed);
            return None;
        };
        let p = self.slots[slot].as_mut()?;
        p.since = Some(now);
        Some((slot, tag, p.request, p.pa))
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
