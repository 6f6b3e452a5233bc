//! XN in the kernel (paper 000 §4.1-§4.4, `docs/xn.md`): the `xn` crate's
//! checks over the virtio disk (`disk.rs`) and frames (`pages.rs`), with
//! its registry and block states exposed read-only to everyone
//! (`view.rs`). This part holds the mounted disk and the identities XN's
//! `acl` functions see; the system calls (`syscall/xn.rs`) validate their
//! arguments and run one XN operation each through [`Xn::call`], which
//! settles the frames the operation took or let go and republishes the
//! blocks it changed.

mod disk;
mod pages;
pub mod table;
mod view;

use crate::cap::{CapRef, Caps};
use crate::frames::Frame;
use crate::memory::Memory;
use abi::tables::frame_state;
use abi::Error;
use alloc::vec::Vec;
use disk::BlockDisk;
use pages::CachePages;
use view::View;

/// The `xn` crate's state over the kernel's disk and frames.
pub type XnDisk = ::xn::Xn<BlockDisk, CachePages>;

/// Most identities (`xn_identity`) at once.
const MAX_IDS: usize = 32;
/// The uid and gid of a credential that stands for no identity.
const NOBODY: ::xn::Cred = ::xn::Cred::new(65534, 65534);

/// A capability standing for a UNIX uid and gid, for `acl` (paper 000
/// §4.5: C-FFS's access control is UNIX's).
#[derive(Clone, Copy)]
struct Identity {
    guard: CapRef,
    cred: ::xn::Cred,
}

struct Mounted {
    xn: XnDisk,
    view: View,
}

/// The kernel state's XN part.
#[derive(Default)]
pub struct Xn {
    mounted: Option<Mounted>,
    ids: [Option<Identity>; MAX_IDS],
}

impl Xn {
    /// Mounts XN on the virtio disk at boot, if it holds an XN superblock:
    /// the free map is rebuilt by walking from the root catalogue
    /// (bounded); a damaged disk is refused with the reason on the
    /// console, never a panic or a hang.
    pub fn mount(&mut self, mem: &mut Memory) {
        let sectors = crate::dev::block::capacity();
        if sectors == 0 {
            return;
        }
        if !crate::dev::block::flushes() {
            kprintln!("xn: the disk has no flush (VIRTIO_BLK_F_FLUSH not offered): XN will not use it");
            return;
        }
        let Ok(bounce) = mem.frames.alloc(None, 0, frame_state::KERNEL) else {
            kprintln!("xn: no memory for the disk's buffer");
            return;
        };
        mem.publish_free();
        let (x, report) = match XnDisk::mount(BlockDisk::new(sectors, bounce), CachePages::default()) {
            Ok(m) => m,
            Err(::xn::Error::BadSuperblock("no XN magic")) => {
                kprintln!("xn: the disk holds no XN superblock: not mounted");
                return;
            }
            Err(e) => {
                kprintln!("xn: the disk is refused: {e:?}");
                return;
            }
        };
        let mut view = match View::new(mem, x.nblocks()) {
            Ok(v) => v,
            Err(why) => {
                kprintln!("xn: not mounted: {why}");
                return;
            }
        };
        let mut x = x;
        x.track_changes();
        compile(&mut x, mem);
        view.publish_all(&x);
        kprintln!(
            "xn: mounted {} blocks; the free-map rebuild walked {} metadata blocks in {} steps: {} allocated, {} claimed twice (left to their file systems)",
            x.nblocks(),
            report.metadata_blocks,
            report.steps,
            x.allocated_count(),
            report.conflicts.len() as u64 + report.more_conflicts
        );
        self.mounted = Some(Mounted { xn: x, view });
    }

    /// The mounted XN, for the calls that only read it.
    pub fn get(&self) -> Result<&XnDisk, Error> {
        self.mounted.as_ref().map(|m| &m.xn).ok_or(Error::NoDevice)
    }

    /// What `xn_info` reports.
    pub fn info(&self) -> abi::xn::Info {
        let Some(m) = &self.mounted else { return abi::xn::Info::default() };
        let s = m.xn.stats();
        abi::xn::Info {
            nblocks: m.xn.nblocks(),
            registry_slots: view::SLOTS,
            cached: m.view.entries(),
            allocated: m.xn.allocated_count(),
            reads: s.reads,
            writes: s.writes,
            flushes: s.flushes,
        }
    }

    /// Compiles templates just installed (`compile`).
    pub fn compile_new(&mut self, mem: &mut Memory) {
        if let Some(m) = self.mounted.as_mut() {
            compile(&mut m.xn, mem);
        }
    }

    /// Whether `n` more blocks fit in the registry.
    pub fn room(&self, n: u64) -> bool {
        self.mounted.as_ref().is_some_and(|m| m.view.room(n))
    }

    /// Runs one XN operation with `offered` (frames the caller owns,
    /// mapped nowhere: checked by the system call) to cache blocks in;
    /// then hands the frames it took to the cache and gives back those it
    /// let go, and republishes what changed. XN changes nothing when it
    /// refuses, so neither does this.
    pub fn call<R>(
        &mut self,
        mem: &mut Memory,
        offered: &[(::xn::Principal, Frame)],
        op: impl FnOnce(&mut XnDisk) -> Result<R, ::xn::Error>,
    ) -> Result<R, Error> {
        let m = self.mounted.as_mut().ok_or(Error::NoDevice)?;
        m.xn.pages_mut().offer(offered);
        let r = op(&mut m.xn);
        for (frame, taken) in m.xn.pages_mut().finish() {
            if taken {
                mem.frames.to_cache(frame);
            } else {
                mem.frames.from_cache(frame);
            }
        }
        mem.publish_free();
        mem.publish_block(crate::dev::block::counts());
        for b in m.xn.take_touched() {
            m.view.publish(&m.xn, b);
        }
        r.map_err(refusal)
    }

    /// Environment `who` ended: its cached blocks stay, unowned (anyone
    /// may write them back), its bindings and locks go.
    pub fn release(&mut self, mem: &mut Memory, who: ::xn::Principal) {
        if self.mounted.is_some() {
            let _ = self.call(mem, &[], |x| {
                x.release(who);
                Ok(())
            });
        }
    }

    /// The uid and gid `acl` sees for credential `c`: 0 for one that
    /// dominates the device capability, an identity's, or nobody's.
    pub fn cred(&self, caps: &Caps, c: CapRef, devices: CapRef) -> ::xn::Cred {
        if !devices.is_none() && caps.dominates(c, devices) {
            return ::xn::Cred::new(0, 0);
        }
        let mine = |id: &&Identity| caps.valid(id.guard) && caps.dominates(c, id.guard);
        self.ids.iter().flatten().find(mine).map_or(NOBODY, |id| id.cred)
    }

    /// Records `guard` as standing for `cred` (a slot whose capability was
    /// revoked is reused).
    pub fn add_identity(&mut self, caps: &Caps, guard: CapRef, cred: ::xn::Cred) -> Result<(), Error> {
        let slot = self.ids.iter_mut().find(|s| s.is_none_or(|id| !caps.valid(id.guard)));
        *slot.ok_or(Error::NoMemory)? = Some(Identity { guard, cred });
        Ok(())
    }
}

/// Compiles the templates' functions that still run interpreted (at
/// mount, and after templates are installed): XN runs `owns` over every
/// slot of a block at each change, and the interpreter made that most of
/// a file system's cost. A function the code area has no room for stays
/// interpreted.
fn compile(x: &mut XnDisk, mem: &mut Memory) {
    let todo: Vec<(::xn::Tid, [Vec<u8>; 3])> =
        x.uncompiled().into_iter().map(|(tid, progs)| (tid, progs.map(bpf::compile))).collect();
    for (tid, code) in todo {
        let mut at = [0u64; 3];
        for (a, c) in at.iter_mut().zip(&code) {
            *a = mem.code_install(c).unwrap_or(0);
        }
        if at.contains(&0) {
            for (a, c) in at.iter().zip(&code).filter(|(a, _)| **a != 0) {
                mem.code_remove(*a, (c.len() as u64).div_ceil(4096).max(1));
            }
            continue;
        }
        // SAFETY: each address holds `bpf::compile` of the program
        // `uncompiled` gave for `tid` in that place, executable until the
        // kernel ends (templates are immutable and never removed).
        unsafe {
            let f: [bpf::JitFn; 3] = at.map(|a| core::mem::transmute::<u64, bpf::JitFn>(a));
            x.set_compiled(tid, f);
        }
    }
}

/// XN's refusal as the system call's error.
pub fn refusal(e: ::xn::Error) -> Error {
    use ::xn::Error as X;
    match e {
        X::Disk(_) => Error::IoError,
        X::DiskTooSmall | X::BadSuperblock(_) | X::BadCatalogue { .. } | X::RebuildTooLong { .. } => {
            Error::NoDevice
        }
        X::BadTemplate { .. } | X::UdfFault { .. } | X::BadClaim { .. } | X::BadSize { .. } => {
            Error::BadTemplate
        }
        X::CatalogueFull | X::RootCatalogueFull => Error::NoMemory,
        X::BadRootName | X::NoSuchRoot | X::NoSuchTemplate(_) => Error::BadName,
        X::OutOfRange { .. } => Error::BadBlock,
        X::NotCached { .. } => Error::NotCached,
        X::AlreadyCached { .. } => Error::AlreadyCached,
        X::BadPage => Error::NotOwner,
        X::NotMetadata { .. } | X::NotClaimed { .. } | X::NotAllocated { .. } => Error::NotClaimed,
        X::MetadataNotWritable { .. } => Error::ReadOnly,
        X::Denied { .. } => Error::Denied,
        X::Locked { .. } => Error::Locked,
        X::NotBound { .. } => Error::NotPermitted,
        X::NotFree { .. } | X::Overlap { .. } => Error::NotFree,
        X::Undeclared { .. } | X::NotDone { .. } => Error::Undeclared,
        X::Retype { .. } | X::Cycle { .. } => Error::BadMove,
        X::Tainted { .. } => Error::Tainted,
        X::Uninitialised { .. } | X::NotFresh { .. } | X::FreshClaims { .. } => Error::NotFresh,
        X::BadChange { .. } => Error::BadLength,
        X::Busy { .. } => Error::BadState,
    }
}
