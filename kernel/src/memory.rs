//! The kernel state's memory part: the frame table, the capability table,
//! each frame's share guard, the kernel's own page tables and the exposed
//! information page that shows how much memory is free. It is what the
//! device layer is given (`dev`), never the whole kernel.

use crate::cap::{CapRef, Caps};
use crate::frames::{Frame, Frames};
use abi::tables::KernelInfo;

pub struct Memory {
    /// The frame table and the capability table keep their own
    /// invariants (their fields are private to `frames` and `cap`).
    pub frames: Frames<'static>,
    pub caps: &'static mut Caps,
    /// Each frame's optional share guard (see `creds`).
    shares: &'static mut [CapRef],
    /// Frame of the kernel's PML4 (the template for shared slots).
    kernel_pml4: Frame,
    /// The exposed kernel information page.
    kinfo: &'static mut KernelInfo,
    /// The device capability (`CRED_DEVICES`): the block and packet calls
    /// need a credential that dominates it.
    device_guard: CapRef,
}

impl Memory {
    pub fn new(
        frames: Frames<'static>,
        caps: &'static mut Caps,
        shares: &'static mut [CapRef],
        kernel_pml4: Frame,
        kinfo: &'static mut KernelInfo,
    ) -> Memory {
        let mut m = Memory { frames, caps, shares, kernel_pml4, kinfo, device_guard: CapRef::NONE };
        m.publish_free();
        m
    }

    /// How many bytes of the boot file system the window at
    /// `abi::layout::BOOTFS_VA` shows.
    pub fn bootfs_size(&self) -> u64 {
        self.kinfo.bootfs_size
    }

    /// The kernel's top-level page table.
    pub fn kernel_pml4(&self) -> Frame {
        self.kernel_pml4
    }

    /// The device capability.
    pub fn device_guard(&self) -> CapRef {
        self.device_guard
    }

    /// Makes the device capability (boot): a root of its own, so nothing
    /// but it and what is lent from it dominates it.
    pub fn make_device_guard(&mut self) -> Result<CapRef, abi::Error> {
        self.device_guard = self.caps.create_root(crate::cap::Rights::ALL)?;
        Ok(self.device_guard)
    }

    /// Frame `f`'s share guard (`CapRef::NONE`: none).
    pub fn share_guard(&self, f: Frame) -> CapRef {
        self.shares.get(f.number() as usize).copied().unwrap_or(CapRef::NONE)
    }

    /// Sets frame `f`'s share guard (the caller checked the frame exists).
    pub fn set_share_guard(&mut self, f: Frame, g: CapRef) {
        if let Some(s) = self.shares.get_mut(f.number() as usize) {
            *s = g;
        }
    }

    /// Whether `f` is still a user frame guarded by `g` (a freed frame's
    /// guard is reset when it is allocated again): a frame of the range
    /// whose root `g` is (`crate::ranges`).
    pub fn in_range(&self, f: Frame, g: CapRef) -> bool {
        self.frames.info(f).is_some_and(|i| i.state == abi::tables::frame_state::USER)
            && self.share_guard(f) == g
    }

    /// The capability table, beside `in_range` over the frames (a range is
    /// made while both are looked at: `crate::ranges` sweeps dead ones).
    pub fn caps_and_ranges(&mut self) -> (&mut Caps, impl Fn(Frame, CapRef) -> bool + '_) {
        let (frames, shares) = (&self.frames, &*self.shares);
        (&mut *self.caps, move |f, g| in_range(frames, shares, f, g))
    }

    /// Shows the free-frame count on the information page (after any
    /// change of it).
    /// Shows how many environment slots are in use.
    pub fn publish_envs(&mut self, used: u64) {
        self.kinfo.envs_used = used;
    }

    pub fn publish_free(&mut self) {
        self.kinfo.free_frames = self.frames.free_count();
    }

    /// Timer ticks since boot, as the information page shows them.
    pub fn ticks(&self) -> u64 {
        self.kinfo.ticks
    }

    pub fn add_ticks(&mut self, n: u64) {
        self.kinfo.ticks += n;
    }

    /// Shows the block device's request counts (`dev::block::counts`).
    pub fn publish_block(&mut self, counts: abi::tables::BlockCounts) {
        self.kinfo.block = counts;
    }

    /// The kernel's command line.
    pub fn cmdline(&self) -> &[u8] {
        &self.kinfo.cmdline[..self.kinfo.cmdline_len as usize]
    }
}

fn in_range(frames: &Frames, shares: &[CapRef], f: Frame, g: CapRef) -> bool {
    frames.info(f).is_some_and(|i| i.state == abi::tables::frame_state::USER)
        && shares.get(f.number() as usize) == Some(&g)
}
