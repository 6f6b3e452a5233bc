//! The demand pager (paper 003 §5.5, the virtual memory nester): as the
//! interposer of a subtree it receives the page faults of a region, gives
//! the faulting environment a frame charged to it while its quota (the
//! `env_limit` of any ancestor) lasts, and otherwise evicts the oldest
//! resident page to frames the pager holds and brings pages back from
//! them. Its answer for every other event is to let it through, so it
//! stacks with any nester around or inside it.

use abi::exception::vector;
use abi::nest::{answer, event, Event};
use abi::syscall::{map as mf, ENV_SELF, FRAME_ANY};
use abi::Error;
use user::sys;

/// The most pages a region may have.
pub const MAX_PAGES: usize = 64;
/// Where the pager sees a page of the child while filling or saving it,
/// and its backing store (one page per page of the region).
const TMP: u64 = 0x7C00_0000_0000;
const STORE: u64 = 0x7C00_0010_0000;

pub struct Pager {
    region: u64,
    pages: u64,
    /// Resident pages of the region, oldest first: (environment, address,
    /// frame).
    resident: [(u64, u64, u64); MAX_PAGES],
    n: usize,
    /// Which pages have contents saved in the store.
    stored: [bool; MAX_PAGES],
    pub faults: u64,
    pub evictions: u64,
    /// The first fault it could not serve (the faulting child then dies
    /// of it).
    pub failed: Option<Error>,
}

impl Pager {
    /// A pager for the `pages` pages from `region` (at most `MAX_PAGES`).
    pub fn new(region: u64, pages: u64) -> Self {
        assert!(pages as usize <= MAX_PAGES, "region too large");
        Pager {
            region,
            pages,
            resident: [(0, 0, 0); MAX_PAGES],
            n: 0,
            stored: [false; MAX_PAGES],
            faults: 0,
            evictions: 0,
            failed: None,
        }
    }

    /// The answer to event `ev` of environment `env`: a page fault in the
    /// region is served and its instruction re-run; anything else passes.
    pub fn answer(&mut self, env: u64, ev: &Event) -> (u64, u64) {
        let va = ev.args[1] & !0xFFF;
        let ours = ev.kind == event::EXCEPTION
            && ev.number == vector::PAGE_FAULT
            && (self.region..self.region + self.pages * 4096).contains(&va);
        if !ours {
            return (answer::PASS, 0);
        }
        match self.fault(env, va) {
            Ok(()) => (answer::RETURN, 0),
            Err(e) => {
                self.failed.get_or_insert(e);
                (answer::PASS, 0)
            }
        }
    }

    /// Saves the oldest resident page to the store and frees its frame.
    fn evict(&mut self) -> Result<(), Error> {
        if self.n == 0 {
            return Err(Error::OverQuota);
        }
        let (env, va, f) = self.resident[0];
        self.resident.copy_within(1..self.n, 0);
        self.n -= 1;
        let idx = ((va - self.region) / 4096) as usize;
        let slot = STORE + idx as u64 * 4096;
        if !self.stored[idx] {
            let sf = sys::frame_alloc(ENV_SELF, FRAME_ANY)?;
            sys::map(ENV_SELF, slot, sf, mf::WRITE)?;
        }
        sys::unmap(env, va)?;
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

    /// Makes `va` resident in `env` with its contents.
    fn fault(&mut self, env: u64, va: u64) -> Result<(), Error> {
        self.faults += 1;
        let f = self.within_quota(|| sys::frame_alloc(env, FRAME_ANY))?;
        let idx = ((va - self.region) / 4096) as usize;
        if self.stored[idx] {
            sys::map(ENV_SELF, TMP, f, mf::WRITE)?;
            // SAFETY: both pages are mapped here, 4096 bytes each.
            unsafe {
                core::ptr::copy_nonoverlapping((STORE + idx as u64 * 4096) as *const u8, TMP as *mut u8, 4096)
            };
            sys::unmap(ENV_SELF, TMP)?;
        }
        self.within_quota(|| sys::map(env, va, f, mf::WRITE))?;
        self.resident[self.n] = (env, va, f);
        self.n += 1;
        Ok(())
    }
}
