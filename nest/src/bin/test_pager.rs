//! Boot test: the demand pager (paper 003 §5.5, the virtual memory nester). A child
//! whose subtree may hold only a few frames more than it starts with
//! touches twice as many pages as its quota allows and completes: the
//! pager, its parent, receives its page faults (interposition), gives it
//! frames charged to it while the quota lasts, and then evicts the oldest
//! resident page to frames the pager holds and brings pages back from them.
#![no_std]
#![no_main]

use abi::exception::vector;
use abi::nest::{answer, event, Event};
use abi::syscall::{map as mf, ENV_SELF, FRAME_ANY};
use abi::tables::ENV_SLOTS;
use abi::Error;
use user::{kinfo, nest, println, spawn, sys};

const REGION: u64 = 0x2000_0000_0000;
/// Frames beyond what it starts with; it touches twice as many pages.
const QUOTA: u64 = 16;
const PAGES: u64 = 2 * QUOTA;
/// Where the pager sees a page of the child while filling or saving it,
/// and its backing store (one page per page of the region).
const TMP: u64 = 0x7C00_0000_0000;
const STORE: u64 = 0x7C00_0010_0000;

struct Pager {
    child: u64,
    /// Resident pages of the region, oldest first, with their frames.
    resident: [(u64, u64); PAGES as usize],
    n: usize,
    /// Which pages have contents saved in the store.
    stored: [bool; PAGES as usize],
    faults: u64,
    evictions: u64,
    most_held: u64,
}

impl Pager {
    /// Saves the oldest resident page to the store and frees its frame.
    fn evict(&mut self) -> Result<(), Error> {
        if self.n == 0 {
            return Err(Error::OverQuota);
        }
        let (va, f) = self.resident[0];
        self.resident.copy_within(1..self.n, 0);
        self.n -= 1;
        let idx = ((va - REGION) / 4096) as usize;
        let slot = STORE + idx as u64 * 4096;
        if !self.stored[idx] {
            let sf = sys::frame_alloc(ENV_SELF, FRAME_ANY)?;
            sys::map(ENV_SELF, slot, sf, mf::WRITE)?;
        }
        sys::unmap(self.child, va)?;
        sys::map(ENV_SELF, TMP, f, 0)?;
        // SAFETY: both pages are mapped here, 4096 bytes each.
        unsafe { core::ptr::copy_nonoverlapping(TMP as *const u8, slot as *mut u8, 4096) };
        sys::unmap(ENV_SELF, TMP)?;
        sys::frame_free(f)?;
        self.stored[idx] = true;
        self.evictions += 1;
        Ok(())
    }

    /// Retries `f` after evicting a page each time the quota stops it.
    fn within_quota(&mut self, mut f: impl FnMut() -> Result<u64, Error>) -> Result<u64, Error> {
        loop {
            match f() {
                Err(Error::OverQuota) => self.evict()?,
                r => return r,
            }
        }
    }

    /// Makes `va` resident with its contents.
    fn fault(&mut self, va: u64) -> Result<(), Error> {
        self.faults += 1;
        let child = self.child;
        let f = self.within_quota(|| sys::frame_alloc(child, FRAME_ANY))?;
        let idx = ((va - REGION) / 4096) as usize;
        if self.stored[idx] {
            sys::map(ENV_SELF, TMP, f, mf::WRITE)?;
            // SAFETY: both pages are mapped here, 4096 bytes each.
            unsafe {
                core::ptr::copy_nonoverlapping((STORE + idx as u64 * 4096) as *const u8, TMP as *mut u8, 4096)
            };
            sys::unmap(ENV_SELF, TMP)?;
        }
        self.within_quota(|| sys::map(child, va, f, mf::WRITE))?;
        self.resident[self.n] = (va, f);
        self.n += 1;
        self.most_held = self.most_held.max(held(child));
        Ok(())
    }
}

/// Frames held by the subtree of `top`.
fn held(top: u64) -> u64 {
    (0..ENV_SLOTS)
        .map(kinfo::env)
        .filter(|e| e.id != 0 && nest::in_subtree(e.id as u64, top))
        .map(|e| e.frames)
        .sum()
}

fn main(_: u64) -> i32 {
    let child = spawn::spawn_stopped("pagee", PAGES).unwrap();
    let quota = held(child) + QUOTA;
    nest::env_limit(child, quota, abi::syscall::NO_LIMIT).unwrap();
    nest::interpose(child, true).unwrap();
    spawn::start(child).unwrap();
    let mut pager = Pager {
        child,
        resident: [(0, 0); PAGES as usize],
        n: 0,
        stored: [false; PAGES as usize],
        faults: 0,
        evictions: 0,
        most_held: 0,
    };
    let mut failed = None;
    let code = nest::serve(child, |_, _, ev: &Event| {
        let va = ev.args[1] & !0xFFF;
        let ours = ev.kind == event::EXCEPTION
            && ev.number == vector::PAGE_FAULT
            && (REGION..REGION + PAGES * 4096).contains(&va);
        if !ours {
            return (answer::PASS, 0);
        }
        if let Err(e) = pager.fault(va) {
            failed = Some(e);
            return (answer::PASS, 0); // the child dies of the fault
        }
        (answer::RETURN, 0)
    })
    .unwrap();
    println!(
        "pager: {PAGES} pages touched under a quota of {QUOTA} more frames: {} faults, {} evictions; \
         the subtree held at most {} frames (limit {quota}); child exited with {code}; error {failed:?}",
        pager.faults, pager.evictions, pager.most_held
    );
    let ok = code == 0
        && failed.is_none()
        && pager.evictions > 0
        && pager.most_held <= quota
        && pager.faults > PAGES;
    i32::from(!ok)
}

user::entry!(main);
