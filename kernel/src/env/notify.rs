//! `Env::notify` bits: one byte the scheduler's fast path tests.

/// Start-of-slice upcalls wanted (`slice_upcalls`).
pub const SLICE_UPCALLS: u8 = 1;
/// Interrupt bits are queued for delivery.
pub const INTERRUPTS: u8 = 2;
/// End-of-slice upcalls wanted too: the abort protocol applies.
pub const SLICE_ENDS: u8 = 4;
/// It holds slices others run in too (`group.rs`): who runs in one
/// is the group's turn to decide.
pub const GROUP: u8 = 8;

/// A `slice_upcalls` mode as these bits: 0 none, 1 both ends of each
/// slice, 2 its start only (`None`: no such mode).
pub fn of_mode(mode: u64) -> Option<u8> {
    match mode {
        0 => Some(0),
        1 => Some(SLICE_UPCALLS | SLICE_ENDS),
        2 => Some(SLICE_UPCALLS),
        _ => None,
    }
}

/// The `slice_upcalls` mode bits `n` hold.
pub fn mode(n: u8) -> u64 {
    if n & SLICE_ENDS != 0 {
        1
    } else {
        (n & SLICE_UPCALLS != 0) as u64 * 2
    }
}
