//! The endpoints and the merged filters: attach, detach, install,
//! consent, delivery of received frames, counters.

use super::pages::Pages;
use super::NET;
use crate::cap::CapRef;
use crate::frames::{Frame, Frames};
use abi::net::NetStats;
use abi::Error;
use alloc::vec::Vec;
use dpf::{Demux, FilterId, Grantee, InstallError};
use pktring::{Consumer, Geometry, Producer, Push};

/// Endpoints at once (all environments).
pub const MAX_ENDPOINTS: usize = 64;
/// Endpoints one environment may hold.
pub const ENDPOINTS_PER_ENV: usize = 4;
/// Filters at once (all endpoints): the kernel heap holds them.
pub const MAX_FILTERS: usize = 4096;
/// Filters one environment's endpoints may hold together, so that no
/// environment takes the table from the others.
pub const FILTERS_PER_ENV: usize = 2048;

pub struct Endpoint {
    /// The environment it is charged to (its creator's address space).
    env: u32,
    /// Who may use it: a capability dominating this one.
    guard: CapRef,
    /// The pinned frames: the receive ring's pages, then the transmit
    /// ring's.
    pins: Vec<Frame>,
    rx_pages: usize,
    pub(super) rx: Producer,
    pub(super) tx: Consumer,
    filters: usize,
    delivered: u64,
    full: u64,
    pub(super) sent: u64,
    pub(super) refused: u64,
    /// Frames checked but not sent: the driver's queue was full.
    pub(super) lost: u64,
}

impl Endpoint {
    pub(super) fn rx_mem(pins: &[Frame], rx_pages: usize) -> Pages<'_> {
        Pages(&pins[..rx_pages])
    }

    /// The transmit ring's memory.
    pub(super) fn tx_parts(&mut self) -> (&mut Consumer, Pages<'_>) {
        (&mut self.tx, Pages(&self.pins[self.rx_pages..]))
    }
}

pub struct Net {
    /// Made at the first attach, with the NIC's address.
    demux: Option<Demux>,
    eps: [Option<Endpoint>; MAX_ENDPOINTS],
    /// Each slot's generation, so a stale id names nothing.
    generation: [u8; MAX_ENDPOINTS],
    filters: usize,
}

/// An endpoint's id: slot and generation.
fn id_of(slot: usize, generation: u8) -> u32 {
    (generation as u32) << 8 | slot as u32
}

impl Net {
    pub const fn new() -> Net {
        Net { demux: None, eps: [const { None }; MAX_ENDPOINTS], generation: [1; MAX_ENDPOINTS], filters: 0 }
    }

    /// The slot of endpoint `id`, if it lives.
    fn slot(&self, id: u64) -> Result<usize, Error> {
        let slot = (id & 0xFF) as usize;
        let ok = id >> 16 == 0 && slot < MAX_ENDPOINTS && self.generation[slot] == (id >> 8) as u8;
        ok.then_some(slot).filter(|&s| self.eps[s].is_some()).ok_or(Error::BadState)
    }

    pub(super) fn ep(&mut self, id: u64) -> Result<(&mut Endpoint, &mut Demux, u32), Error> {
        let s = self.slot(id)?;
        let owner = id_of(s, self.generation[s]);
        match (self.eps[s].as_mut(), self.demux.as_mut()) {
            (Some(e), Some(d)) => Ok((e, d, owner)),
            _ => Err(Error::BadState),
        }
    }

    fn env_filters(&self, env: u32) -> usize {
        self.eps.iter().flatten().filter(|e| e.env == env).map(|e| e.filters).sum()
    }

    pub(super) fn receive(&mut self, frame: &[u8]) -> bool {
        let Some(d) = self.demux.as_mut() else { return false };
        let out = d.classify(frame);
        for del in out.as_slice() {
            let Some(e) = self.eps.get_mut(del.sink as usize).and_then(Option::as_mut) else { continue };
            let mut mem = Endpoint::rx_mem(&e.pins, e.rx_pages);
            match e.rx.push(&mut mem, frame, 0) {
                Push::Full => e.full += 1,
                Push::Stored | Push::Truncated => e.delivered += 1,
            }
        }
        !out.is_empty()
    }

    /// Each endpoint's filter count, after a withdrawal removed filters
    /// of other endpoints.
    fn recount(&mut self) {
        let Some(d) = self.demux.as_ref() else { return };
        self.filters = 0;
        for (s, e) in self.eps.iter_mut().enumerate() {
            if let Some(e) = e {
                e.filters = d.filters_of(id_of(s, self.generation[s])).len();
                self.filters += e.filters;
            }
        }
    }

    fn remove(&mut self, frames: &mut Frames, s: usize) {
        let id = id_of(s, self.generation[s]);
        if let Some(e) = self.eps[s].take() {
            if let Some(d) = self.demux.as_mut() {
                d.remove_owner(id);
            }
            self.filters -= e.filters;
            for f in e.pins {
                frames.drop_ref(f);
            }
            self.generation[s] = self.generation[s].wrapping_add(1).max(1);
        }
    }
}

/// What `net_attach` checked: the geometry and the frames under both
/// rings (receive ring's pages first), all user-writable in the caller's
/// space.
pub struct Attach {
    pub env: u32,
    pub guard: CapRef,
    pub geometry: Geometry,
    pub pins: Vec<Frame>,
}

/// Makes an endpoint; its id.
pub fn attach(frames: &mut Frames, a: Attach) -> Result<u64, Error> {
    let mac = super::super::packet::mac().ok_or(Error::NoDevice)?;
    let rx_pages = a.pins.len() / 2;
    // Each frame may appear more than once (a page mapped twice).
    if !a.pins.iter().all(|&f| frames.can_add_refs(f, a.pins.len() as u64)) {
        return Err(Error::NoMemory);
    }
    super::tx::init(frames)?;
    NET.with(|n| {
        if n.eps.iter().flatten().filter(|e| e.env == a.env).count() >= ENDPOINTS_PER_ENV {
            return Err(Error::NoMemory);
        }
        let s = n.eps.iter().position(Option::is_none).ok_or(Error::NoMemory)?;
        n.demux.get_or_insert_with(|| Demux::new(mac, seed()));
        for &f in &a.pins {
            frames.add_ref(f)?;
        }
        let rx = Producer::attach(a.geometry, &mut Pages(&a.pins[..rx_pages]));
        let tx = Consumer::attach(a.geometry, &mut Pages(&a.pins[rx_pages..]));
        n.eps[s] = Some(Endpoint {
            env: a.env,
            guard: a.guard,
            pins: a.pins,
            rx_pages,
            rx,
            tx,
            filters: 0,
            delivered: 0,
            full: 0,
            sent: 0,
            refused: 0,
            lost: 0,
        });
        Ok(id_of(s, n.generation[s]) as u64)
    })
}

/// A key for the merged tree's hash tables that the owners cannot guess.
fn seed() -> u64 {
    // SAFETY: RDTSC only reads the time-stamp counter.
    let t = unsafe { core::arch::x86_64::_rdtsc() };
    t.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (&NET as *const _ as u64).rotate_left(29)
}

/// The capability that guards endpoint `id`.
pub fn guard(id: u64) -> Result<CapRef, Error> {
    NET.with(|n| Ok(n.eps[n.slot(id)?].as_ref().map(|e| e.guard).unwrap_or(CapRef::NONE)))
}

pub fn detach(frames: &mut Frames, id: u64) -> Result<u64, Error> {
    NET.with(|n| {
        let s = n.slot(id)?;
        n.remove(frames, s);
        Ok(0)
    })
}

/// Environment `env` is gone: its endpoints go with it.
pub fn released(mem: &mut crate::memory::Memory, env: u32) {
    NET.with(|n| {
        for s in 0..MAX_ENDPOINTS {
            if n.eps[s].as_ref().is_some_and(|e| e.env == env) {
                n.remove(&mut mem.frames, s);
            }
        }
    })
}

/// Installs filter `insns` for endpoint `id`; its id.
pub fn install(id: u64, insns: &[bpf::Insn]) -> Result<u64, Error> {
    NET.with(|n| {
        let env = n.eps[n.slot(id)?].as_ref().map_or(0, |e| e.env);
        if n.filters >= MAX_FILTERS || n.env_filters(env) >= FILTERS_PER_ENV {
            return Err(Error::OverQuota);
        }
        let (e, d, owner) = n.ep(id)?;
        let f = d.install(owner, owner & 0xFF, insns).map_err(|why| {
            match why {
                InstallError::Rejected(r) => crate::kprintln!("packet filter for endpoint {id:#x} rejected: {r}"),
                InstallError::Overlap { filter, owner: o } => crate::kprintln!(
                    "packet filter for endpoint {id:#x} refused: it could claim frames filter {} of endpoint {o:#x} claims",
                    filter.0
                ),
                InstallError::TooComplex => {
                    crate::kprintln!("packet filter for endpoint {id:#x} refused: too complex to merge")
                }
                InstallError::TooMany => {}
            }
            match why {
                InstallError::Overlap { .. } => Error::Claimed,
                InstallError::TooMany => Error::OverQuota,
                _ => Error::BadProgram,
            }
        })?;
        e.filters += 1;
        n.filters += 1;
        Ok(f.0 as u64)
    })
}

fn filter_id(f: u64) -> Result<FilterId, Error> {
    u32::try_from(f).map(FilterId).map_err(|_| Error::BadLength)
}

fn filter_error(e: dpf::FilterError) -> Error {
    match e {
        dpf::FilterError::NoSuchFilter => Error::BadLength,
        dpf::FilterError::NotOwner => Error::NotPermitted,
    }
}

pub fn uninstall(id: u64, filter: u64) -> Result<u64, Error> {
    let f = filter_id(filter)?;
    NET.with(|n| {
        let (e, d, owner) = n.ep(id)?;
        d.remove(owner, f).map_err(filter_error)?;
        e.filters -= 1;
        n.filters -= 1;
        Ok(0)
    })
}

/// Lets `grantee` (an endpoint id, or `None`: anyone) overlap filter
/// `filter` of endpoint `id`; with `on` false, takes that back: how many
/// filters that removed.
pub fn consent(id: u64, filter: u64, grantee: Option<u64>, on: bool) -> Result<u64, Error> {
    let f = filter_id(filter)?;
    NET.with(|n| {
        let g = match grantee {
            None => Grantee::Anyone,
            Some(g) => {
                let s = n.slot(g)?;
                Grantee::Owner(id_of(s, n.generation[s]))
            }
        };
        let (_, d, owner) = n.ep(id)?;
        if on {
            return d.consent(owner, f, g).map(|_| 0).map_err(filter_error);
        }
        let gone = d.withdraw(owner, f, g).map_err(filter_error)?;
        n.recount();
        Ok(gone.len() as u64)
    })
}

/// The counters of the machine and of endpoint `id`.
pub fn stats(id: u64) -> Result<NetStats, Error> {
    NET.with(|n| {
        let filters = n.filters as u64;
        let (e, d, _) = n.ep(id)?;
        let s = d.stats();
        Ok(NetStats {
            frames: s.frames,
            unclaimed: s.unclaimed,
            tx_checked: s.tx_checked,
            tx_refused: s.tx_refused,
            tree_work: s.work.nodes + s.work.loads + s.work.probes,
            filters,
            tree_nodes: d.tree_nodes() as u64,
            delivered: e.delivered,
            ring_full: e.full,
            sent: e.sent,
            refused: e.refused,
            lost: e.lost,
            ep_filters: e.filters as u64,
        })
    })
}
