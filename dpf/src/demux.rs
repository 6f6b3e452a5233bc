//! The demultiplexer: installed filters, the rules that keep one owner's
//! frames from another, delivery, and the transmit check.
//!
//! Rules (each has a hostile test in `tests/protection.rs`):
//!
//! 1. **No overlap between owners.** A filter is refused if some frame
//!    could be accepted both by it and by a filter of another owner (its
//!    claim, below, intersects theirs), unless that filter's owner has
//!    consented to the newcomer. This holds whatever the specificity: a
//!    filter for one connection of a port another owner listens on is
//!    refused like a filter for the whole port or for every frame. First
//!    come, first served; a binding is never taken away by a later one.
//! 2. **Claims are sound.** A canonical filter claims exactly its cube; any
//!    other filter claims the union of its accepting paths' cubes, an
//!    over-approximation (everything when the analysis gives up), so an
//!    unusual filter can be refused but never slip past rule 1.
//! 3. **Delivery.** A frame goes to every owner with a matching filter
//!    (several only where consent allowed overlap), once per owner, to the
//!    sink of that owner's most specific match (canonical before opaque,
//!    more fixed bits first, then the older filter). A frame nobody claims
//!    is counted and dropped. Truncated frames never match by reading past
//!    their end (field loads and opaque programs are bounds-checked).
//! 4. **Transmit is a binding.** A frame may leave only with the NIC's
//!    source MAC and only if the sender's own filters accept its mirror
//!    (`mirror.rs`): a program can send from the addresses and ports whose
//!    replies are its own, and no others.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use bpf::{Insn, Memory, Reject, VerifiedProgram};

use crate::cube::{Cube, FieldTest};
use crate::mirror::mirror;
use crate::shape::{shape, Shape};
use crate::trie::{Trie, Work};

/// Who a filter belongs to (the kernel's environment or capability).
pub type Owner = u32;
/// Where its frames go (the kernel's ring), opaque here.
pub type Sink = u32;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FilterId(pub u32);

/// Whom an owner lets install filters overlapping one of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grantee {
    Owner(Owner),
    Anyone,
}

/// Most copies of one frame (owners that share it by consent).
pub const MAX_COPIES: usize = 8;
/// Most filters one owner may hold.
pub const MAX_FILTERS_PER_OWNER: usize = 4096;
/// Most field tests in one canonical filter (the tree's depth).
pub const MAX_FIELDS: usize = 32;
/// Ethernet frame sizes the transmit check accepts (no FCS).
pub const MIN_FRAME: usize = 14;
pub const MAX_FRAME: usize = 1514;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InstallError {
    /// The verifier refused the program.
    Rejected(Reject),
    /// It could accept frames that this filter of another owner claims.
    Overlap { filter: FilterId, owner: Owner },
    /// The merged tree would get too wide or too deep.
    TooComplex,
    /// The owner holds `MAX_FILTERS_PER_OWNER` filters.
    TooMany,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FilterError {
    NoSuchFilter,
    NotOwner,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxError {
    /// Shorter than an Ethernet header or longer than 1514 bytes.
    BadLength,
    /// The source MAC is not the NIC's.
    SourceMac,
    /// None of the sender's filters would accept the reply: it would send
    /// from addresses or ports it does not own.
    NotBound,
}

enum Kind {
    Canonical { tests: Vec<FieldTest>, min_len: u16 },
    Opaque { prog: VerifiedProgram },
}

struct Filter {
    owner: Owner,
    sink: Sink,
    shape: Shape,
    kind: Kind,
    /// Specificity: bits a canonical filter fixes (0 for opaque ones).
    bits: u32,
    consents: Vec<Grantee>,
    /// Some other owner's filter overlaps this one (by consent).
    shared: bool,
}

impl Filter {
    fn consents_to(&self, owner: Owner) -> bool {
        self.consents.iter().any(|g| *g == Grantee::Anyone || *g == Grantee::Owner(owner))
    }
}

fn overlap(a: &[Cube], b: &[Cube]) -> bool {
    a.iter().any(|x| b.iter().any(|y| x.intersects(y)))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivery {
    pub owner: Owner,
    pub sink: Sink,
    pub filter: FilterId,
}

/// Where one frame goes: at most one delivery per owner.
#[derive(Clone, Copy, Debug)]
pub struct Deliveries {
    n: usize,
    items: [Delivery; MAX_COPIES],
    bits: [u32; MAX_COPIES],
}

impl Deliveries {
    fn new() -> Deliveries {
        let none = Delivery { owner: 0, sink: 0, filter: FilterId(0) };
        Deliveries { n: 0, items: [none; MAX_COPIES], bits: [0; MAX_COPIES] }
    }

    pub fn as_slice(&self) -> &[Delivery] {
        &self.items[..self.n]
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    fn slot(&self, owner: Owner) -> Option<usize> {
        self.items[..self.n].iter().position(|d| d.owner == owner)
    }

    /// Offers a match; keeps the owner's most specific one. False if there
    /// was no room for another owner.
    fn offer(&mut self, d: Delivery, bits: u32) -> bool {
        match self.slot(d.owner) {
            Some(i) => {
                let better = bits > self.bits[i] || (bits == self.bits[i] && d.filter < self.items[i].filter);
                if better {
                    self.items[i] = d;
                    self.bits[i] = bits;
                }
                true
            }
            None if self.n < MAX_COPIES => {
                self.items[self.n] = d;
                self.bits[self.n] = bits;
                self.n += 1;
                true
            }
            None => false,
        }
    }
}

/// Counters. `work` is the merged tree's (nodes visited, field loads, hash
/// probes); `opaque_insns` bounds the instructions opaque filters ran.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub frames: u64,
    pub unclaimed: u64,
    pub copies_dropped: u64,
    pub opaque_runs: u64,
    pub opaque_insns: u64,
    pub tx_checked: u64,
    pub tx_refused: u64,
    pub work: Work,
}

pub struct Demux {
    filters: Vec<Option<Filter>>,
    free_ids: Vec<u32>,
    trie: Trie,
    /// Opaque filters, oldest first.
    opaque: Vec<u32>,
    mac: [u8; 6],
    scratch: Vec<u8>,
    stats: Stats,
    /// Instructions run by each owner's opaque filters (bounds).
    charges: BTreeMap<Owner, u64>,
}

/// The program description every filter is verified against: a 16-byte
/// context whose words 0 and 1 are the packet bounds (`veneer_packet_ctx`
/// in `bpf/include/veneer_bpf.h`).
pub fn filter_spec() -> bpf::ProgramSpec {
    bpf::ProgramSpec::new(16).with_packet(bpf::PacketFields { data_off: 0, data_end_off: 4, width: 4 })
}

fn run(prog: &VerifiedProgram, frame: &[u8]) -> bool {
    let ctx = [0u8; 16];
    let mem = Memory { ctx: &ctx, regions: &[], packet: frame };
    // The verifier proved every access; an error could only be its bug,
    // and then the frame is not claimed.
    bpf::run(prog, &mem).is_ok_and(|r0| r0 != 0)
}

impl Demux {
    /// A demultiplexer for the NIC with address `mac`; `seed` keys the
    /// hash tables (the kernel passes a random value).
    pub fn new(mac: [u8; 6], seed: u64) -> Demux {
        Demux {
            filters: Vec::new(),
            free_ids: Vec::new(),
            trie: Trie::new(seed),
            opaque: Vec::new(),
            mac,
            scratch: Vec::with_capacity(MAX_FRAME),
            stats: Stats::default(),
            charges: BTreeMap::new(),
        }
    }

    pub fn stats(&self) -> Stats {
        Stats { work: self.trie.work, ..self.stats }
    }

    pub fn charge(&self, owner: Owner) -> u64 {
        self.charges.get(&owner).copied().unwrap_or(0)
    }

    fn get(&self, id: FilterId) -> Option<&Filter> {
        self.filters.get(id.0 as usize)?.as_ref()
    }

    fn live(&self) -> impl Iterator<Item = (u32, &Filter)> {
        self.filters.iter().enumerate().filter_map(|(i, f)| f.as_ref().map(|f| (i as u32, f)))
    }

    /// Whether the filter is merged into the tree (canonical) or runs on
    /// its own.
    pub fn is_canonical(&self, id: FilterId) -> Option<bool> {
        self.get(id).map(|f| matches!(f.kind, Kind::Canonical { .. }))
    }

    pub fn filters_of(&self, owner: Owner) -> Vec<FilterId> {
        self.live().filter(|(_, f)| f.owner == owner).map(|(i, _)| FilterId(i)).collect()
    }

    /// Verifies, analyses and installs a filter for `owner` delivering to
    /// `sink`. A refused filter changes nothing.
    pub fn install(&mut self, owner: Owner, sink: Sink, insns: &[Insn]) -> Result<FilterId, InstallError> {
        let prog = bpf::verify(insns, &filter_spec()).map_err(InstallError::Rejected)?;
        let shape = shape(&prog);
        if self.live().filter(|(_, f)| f.owner == owner).count() >= MAX_FILTERS_PER_OWNER {
            return Err(InstallError::TooMany);
        }
        let mut shared_with = Vec::new();
        for (i, f) in self.live() {
            if f.owner != owner && overlap(shape.claim(), f.shape.claim()) {
                if !f.consents_to(owner) {
                    return Err(InstallError::Overlap { filter: FilterId(i), owner: f.owner });
                }
                shared_with.push(i);
            }
        }
        let (kind, bits) = match &shape {
            Shape::Canonical(cube) => {
                let tests = cube.fields();
                if tests.len() > MAX_FIELDS || self.trie.check(&tests).is_err() {
                    return Err(InstallError::TooComplex);
                }
                (Kind::Canonical { tests, min_len: cube.min_len }, cube.bits())
            }
            Shape::Opaque(_) => (Kind::Opaque { prog }, 0),
        };
        let id = match self.free_ids.pop() {
            Some(i) => i,
            None => {
                self.filters.push(None);
                (self.filters.len() - 1) as u32
            }
        };
        match &kind {
            Kind::Canonical { tests, .. } => self.trie.insert(tests, id),
            Kind::Opaque { .. } => self.opaque.push(id),
        }
        for &i in &shared_with {
            if let Some(f) = self.filters[i as usize].as_mut() {
                f.shared = true;
            }
        }
        let shared = !shared_with.is_empty();
        self.filters[id as usize] =
            Some(Filter { owner, sink, shape, kind, bits, consents: Vec::new(), shared });
        Ok(FilterId(id))
    }

    pub fn remove(&mut self, owner: Owner, id: FilterId) -> Result<(), FilterError> {
        let f = self.get(id).ok_or(FilterError::NoSuchFilter)?;
        if f.owner != owner {
            return Err(FilterError::NotOwner);
        }
        let f = self.filters[id.0 as usize].take().expect("checked above");
        match &f.kind {
            Kind::Canonical { tests, .. } => self.trie.remove(tests, id.0),
            Kind::Opaque { .. } => self.opaque.retain(|&o| o != id.0),
        }
        self.free_ids.push(id.0);
        if f.shared {
            self.recompute_shared();
        }
        Ok(())
    }

    /// Removes everything `owner` installed (its environment is gone).
    pub fn remove_owner(&mut self, owner: Owner) {
        for id in self.filters_of(owner) {
            let _ = self.remove(owner, id);
        }
    }

    fn recompute_shared(&mut self) {
        let flags: Vec<bool> = (0..self.filters.len())
            .map(|i| {
                let Some(f) = &self.filters[i] else { return false };
                self.live().any(|(_, g)| g.owner != f.owner && overlap(f.shape.claim(), g.shape.claim()))
            })
            .collect();
        for (f, s) in self.filters.iter_mut().zip(flags) {
            if let Some(f) = f {
                f.shared = s;
            }
        }
    }

    /// Lets `grantee` install filters that overlap filter `id`; frames in
    /// the overlap then go to both.
    pub fn consent(&mut self, owner: Owner, id: FilterId, grantee: Grantee) -> Result<(), FilterError> {
        let f =
            self.filters.get_mut(id.0 as usize).and_then(|f| f.as_mut()).ok_or(FilterError::NoSuchFilter)?;
        if f.owner != owner {
            return Err(FilterError::NotOwner);
        }
        if !f.consents.contains(&grantee) {
            f.consents.push(grantee);
        }
        Ok(())
    }

    /// Takes a consent back, visibly: the filters it allowed (those of
    /// the grantee that overlap `id`) are removed and returned.
    pub fn withdraw(
        &mut self,
        owner: Owner,
        id: FilterId,
        grantee: Grantee,
    ) -> Result<Vec<FilterId>, FilterError> {
        let f = self.get(id).ok_or(FilterError::NoSuchFilter)?;
        if f.owner != owner {
            return Err(FilterError::NotOwner);
        }
        let claim = f.shape.claim().to_vec();
        let victims: Vec<(Owner, FilterId)> = self
            .live()
            .filter(|(_, g)| g.owner != owner && overlap(&claim, g.shape.claim()))
            .filter(|(_, g)| grantee == Grantee::Anyone || grantee == Grantee::Owner(g.owner))
            .map(|(i, g)| (g.owner, FilterId(i)))
            .collect();
        if let Some(f) = self.filters[id.0 as usize].as_mut() {
            f.consents.retain(|g| *g != grantee);
        }
        for &(o, v) in &victims {
            let _ = self.remove(o, v);
        }
        Ok(victims.into_iter().map(|(_, v)| v).collect())
    }

    /// Where a received frame goes. Empty: nobody claims it (counted).
    pub fn classify(&mut self, frame: &[u8]) -> Deliveries {
        self.stats.frames += 1;
        let mut out = Deliveries::new();
        let mut dropped = 0;
        let mut shared = false;
        let filters = &self.filters;
        self.trie.lookup(frame, |id| {
            let Some(f) = &filters[id as usize] else { return };
            let Kind::Canonical { min_len, .. } = f.kind else { return };
            if frame.len() < usize::from(min_len) {
                return;
            }
            shared |= f.shared;
            if !out.offer(Delivery { owner: f.owner, sink: f.sink, filter: FilterId(id) }, f.bits + 1) {
                dropped += 1;
            }
        });
        // Without consent no two owners' claims meet, so an unshared
        // canonical match is the only owner: the opaque filters need not
        // run (this keeps demultiplexing flat beside them).
        if out.is_empty() || shared {
            for &id in &self.opaque {
                let Some(f) = &self.filters[id as usize] else { continue };
                if out.slot(f.owner).is_some() {
                    continue; // its canonical or older match wins
                }
                let Kind::Opaque { prog } = &f.kind else { continue };
                self.stats.opaque_runs += 1;
                let cost = prog.insns().len() as u64;
                self.stats.opaque_insns += cost;
                *self.charges.entry(f.owner).or_default() += cost;
                if run(prog, frame)
                    && !out.offer(Delivery { owner: f.owner, sink: f.sink, filter: FilterId(id) }, 0)
                {
                    dropped += 1;
                }
            }
        }
        self.stats.copies_dropped += dropped;
        if out.is_empty() {
            self.stats.unclaimed += 1;
        }
        out
    }

    /// Whether `owner` may send `frame` (rule 4).
    pub fn check_transmit(&mut self, owner: Owner, frame: &[u8]) -> Result<(), TxError> {
        self.stats.tx_checked += 1;
        let verdict = self.transmit_verdict(owner, frame);
        if verdict.is_err() {
            self.stats.tx_refused += 1;
        }
        verdict
    }

    fn transmit_verdict(&mut self, owner: Owner, frame: &[u8]) -> Result<(), TxError> {
        if !(MIN_FRAME..=MAX_FRAME).contains(&frame.len()) {
            return Err(TxError::BadLength);
        }
        if frame[6..12] != self.mac {
            return Err(TxError::SourceMac);
        }
        let mut reply = core::mem::take(&mut self.scratch);
        reply.clear();
        reply.extend_from_slice(frame);
        mirror(&mut reply);
        let mut owns = false;
        let filters = &self.filters;
        self.trie.lookup(&reply, |id| {
            if let Some(Filter { owner: o, kind: Kind::Canonical { min_len, .. }, .. }) =
                &filters[id as usize]
            {
                owns |= *o == owner && reply.len() >= usize::from(*min_len);
            }
        });
        if !owns {
            for &id in &self.opaque {
                match &self.filters[id as usize] {
                    Some(Filter { owner: o, kind: Kind::Opaque { prog }, .. }) if *o == owner => {
                        *self.charges.entry(owner).or_default() += prog.insns().len() as u64;
                        if run(prog, &reply) {
                            owns = true;
                            break;
                        }
                    }
                    _ => {}
                }
            }
        }
        self.scratch = reply;
        if owns {
            Ok(())
        } else {
            Err(TxError::NotBound)
        }
    }

    /// Nodes in the merged tree (tests: removal frees them).
    pub fn tree_nodes(&self) -> usize {
        self.trie.live_nodes()
    }
}
