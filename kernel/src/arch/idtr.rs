//! The two IDT register images, for `lidt`: the kernel's table and the
//! crossing's (`idt.rs` fills them at boot). A leaf of their own because
//! the crossing's assembly (`dev::xpc`) names them, and the device layer
//! must not depend on the table's builder, which reaches the trap stubs
//! and, through them, the whole kernel.

/// An IDT register image.
#[repr(C, packed)]
pub struct Idtr {
    pub limit: u16,
    pub base: u64,
}

/// The kernel's table and the crossing's, as `lidt` takes them (reached by
/// name from the crossing's assembly).
pub static mut KERNEL_IDTR: Idtr = Idtr { limit: 0, base: 0 };
pub static mut CROSSING_IDTR: Idtr = Idtr { limit: 0, base: 0 };
