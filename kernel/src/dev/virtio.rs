//! What a virtio device states about itself, read by the kernel from the
//! device (virtio 1.2 §4.1.4.6, §5.2.4), to hold its driver's report to
//! it (`detect::implausible`), as the kernel reads the device's PCI
//! header itself rather than ask the driver: a driver whose init was
//! damaged can report a disk size that is possible but wrong (campaign
//! trial virtio-blk 2: 1,103,806,595,073 sectors of a 4 MiB disk), which
//! no check of possibility catches.

use super::pci::{capabilities, Bar, ConfigSpace, Device};

const VIRTIO_VENDOR: u16 = 0x1AF4;
/// A vendor-specific PCI capability: virtio's locator of its structures.
const CAP_VENDOR: u8 = 0x09;
/// `VIRTIO_PCI_CAP_DEVICE_CFG`: the device-specific configuration.
const DEVICE_CFG: u32 = 4;

/// The capacity (sectors) a virtio block device states in its device
/// configuration (its first field), if the kernel can read it: a modern
/// device whose configuration lies in a memory BAR in the uncached
/// device window.
pub fn blk_capacity(d: &Device) -> Option<u64> {
    if d.vendor != VIRTIO_VENDOR {
        return None;
    }
    let f = d.at;
    let (caps, n) = capabilities(&f).ok()?;
    let cfg_type = |c: u8| f.read32(c) >> 24;
    let cap = caps[..n].iter().find(|c| c.id == CAP_VENDOR && cfg_type(c.offset) == DEVICE_CFG)?;
    let bar = f.read32(cap.offset + 4) as u8 as usize;
    let (offset, length) = (f.read32(cap.offset + 8) as u64, f.read32(cap.offset + 12) as u64);
    let Some(Bar::Memory { addr, size, .. }) = d.bars.get(bar).copied() else { return None };
    let at = addr + offset;
    if length < 8 || offset + 8 > size || addr < 3 << 30 || at + 8 > 4 << 30 {
        return None;
    }
    let p = crate::mm::phys::<u32>(at);
    // SAFETY: the device's configuration, inside its memory BAR (checked),
    // uncached in the physical window; reading it has no side effect.
    let (lo, hi) = unsafe { (p.read_volatile(), p.add(1).read_volatile()) };
    Some(lo as u64 | (hi as u64) << 32)
}
