//! Device interrupts by the I/O APIC, for a device without MSI-X: its
//! INTx line (the interrupt line the firmware wrote into its configuration
//! space) is routed to a kernel vector on CPU 0, level-triggered and
//! active-high as QEMU's PC routes PCI lines. Lines may be shared: every
//! driver on the line's vector is called (each acknowledges its own device,
//! which lowers the line), and the local APIC's EOI comes after them.

/// Where QEMU's PC machine puts the I/O APIC (no ACPI parsing yet; the
/// version register is checked before use).
const BASE: u64 = 0xFEC0_0000;
const REDIRECTION: u32 = 0x10;
const LEVEL: u32 = 1 << 15;
const MASKED: u32 = 1 << 16;
/// Line `n` gets vector `FIRST_VECTOR + n`.
pub const FIRST_VECTOR: u8 = 0x50;

fn write(reg: u32, v: u32) {
    let sel = crate::mm::phys::<u32>(BASE);
    // SAFETY: the I/O APIC's select and window registers, uncached in
    // the physical window; interrupts are off while the kernel writes them.
    unsafe {
        sel.write_volatile(reg);
        sel.add(4).write_volatile(v);
    }
}

fn read(reg: u32) -> u32 {
    let sel = crate::mm::phys::<u32>(BASE);
    // SAFETY: as in `write`.
    unsafe {
        sel.write_volatile(reg);
        sel.add(4).read_volatile()
    }
}

/// Routes INTx line `line` to its vector: the vector.
pub fn route(line: u8) -> Result<u8, &'static str> {
    let version = read(1);
    let entries = ((version >> 16) & 0xFF) + 1;
    if version == !0 || line as u32 >= entries || line >= 16 {
        return Err("no I/O APIC pin for the device's interrupt line");
    }
    let vector = FIRST_VECTOR + line;
    write(REDIRECTION + 2 * line as u32 + 1, 0);
    write(REDIRECTION + 2 * line as u32, vector as u32 | LEVEL);
    Ok(vector)
}

/// Delivery mode NMI (edge-triggered; the vector is ignored).
const NMI: u32 = 4 << 8;

/// Sets pin `pin` to deliver an NMI to CPU 0, masked (the NMI watchdog,
/// `nmi.rs`): whether the I/O APIC has that pin.
pub fn nmi_route(pin: u8) -> bool {
    let version = read(1);
    if version == !0 || pin as u32 > (version >> 16 & 0xFF) {
        return false;
    }
    write(REDIRECTION + 2 * pin as u32 + 1, 0);
    nmi_gate(pin, false);
    true
}

/// Unmasks (`on`) or masks the NMI pin `nmi_route` set up.
pub fn nmi_gate(pin: u8, on: bool) {
    write(REDIRECTION + 2 * pin as u32, NMI | if on { 0 } else { MASKED });
}

/// Masks line `line` (until its drivers have run, or for good). The entry
/// stays level-triggered: masked in edge mode, the I/O APIC would miss the
/// line's fall and deliver a stale interrupt without end once unmasked.
pub fn mask(line: u8) {
    write(REDIRECTION + 2 * line as u32, (FIRST_VECTOR + line) as u32 | LEVEL | MASKED);
}
