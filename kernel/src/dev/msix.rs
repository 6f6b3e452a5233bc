//! Device interrupts by MSI-X (PCI 3.0 §6.8.2): table entry 0 of the
//! device's table, in its BAR, sends the kernel vector the device was
//! given to the local APIC of CPU 0. The kernel acknowledges (LAPIC EOI)
//! and calls the driver's interrupt entry (`driver::interrupt`).

use super::pci::{Bar, ConfigSpace, Device};

/// The first vector given to devices, one per device.
pub const FIRST_VECTOR: u8 = 0x40;
const MSI_ADDRESS: u32 = 0xFEE0_0000;
const ENABLE: u32 = 1 << 31;
const FUNCTION_MASK: u32 = 1 << 30;
const COMMAND_INTX_DISABLE: u32 = 1 << 10;

/// Where the device's MSI-X table is, if it has one the kernel can reach
/// (in the uncached part of the physical window).
fn table(dev: &Device) -> Result<u64, &'static str> {
    let m = dev.msix.ok_or("the device offers no MSI-X")?;
    let Some(Bar::Memory { addr, size, .. }) = dev.bars.get(m.table_bar as usize).copied() else {
        return Err("the MSI-X table's BAR is not a memory BAR");
    };
    let end = m.table_offset as u64 + m.entries as u64 * 16;
    if end > size || !(3 << 30..4 << 30).contains(&(addr + end - 1)) || addr < 3 << 30 {
        return Err("the MSI-X table lies outside its BAR or the device window");
    }
    Ok(addr + m.table_offset as u64)
}

/// Sends the device's interrupts (all through entry 0) to `vector`.
pub fn route(dev: &Device, vector: u8) -> Result<(), &'static str> {
    let t = table(dev)?;
    let m = dev.msix.ok_or("the device offers no MSI-X")?;
    let entry = crate::mm::phys::<u32>(t);
    // SAFETY: entry 0 of the device's MSI-X table (checked by `table`),
    // uncached in the physical window: address low, high, data, control.
    unsafe {
        entry.write_volatile(MSI_ADDRESS);
        entry.add(1).write_volatile(0);
        entry.add(2).write_volatile(vector as u32);
        entry.add(3).write_volatile(0);
    }
    let f = dev.at;
    f.write32(4, f.read32(4) & 0xFFFF | COMMAND_INTX_DISABLE);
    f.write32(m.cap, (f.read32(m.cap) | ENABLE) & !FUNCTION_MASK);
    Ok(())
}

/// Stops the device's interrupts (its driver is being disabled).
pub fn mask(dev: &Device) {
    if let Some(m) = dev.msix {
        let f = dev.at;
        f.write32(m.cap, f.read32(m.cap) | FUNCTION_MASK);
    }
}
