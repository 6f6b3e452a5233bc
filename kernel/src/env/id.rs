//! Slots of the environment table and the ids of the environments in
//! them.

use abi::tables::{env_slot, ENV_SLOTS};

/// An index into the environment table, always below `ENV_SLOTS`: the
/// tables indexed by it need no bounds check.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Slot(pub(super) u16);

// `u16::MAX` is `Env::waiting_on`'s "none".
const _: () = assert!(ENV_SLOTS.is_power_of_two() && ENV_SLOTS < u16::MAX as usize);

impl Slot {
    /// The slot at index `i`, if there is one.
    pub fn new(i: usize) -> Option<Slot> {
        (i < ENV_SLOTS).then_some(Slot(i as u16))
    }

    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// Every slot, in order.
    pub fn all() -> impl Iterator<Item = Slot> {
        (0..ENV_SLOTS as u16).map(Slot)
    }
}

/// An environment's id: its slot plus a generation, so an id outlives
/// its environment without ever naming the next one in the slot.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct EnvId(pub(super) u32);

impl core::fmt::LowerHex for EnvId {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        core::fmt::LowerHex::fmt(&self.0, f)
    }
}

impl EnvId {
    /// The id as user space and the exposed tables see it.
    pub fn raw(self) -> u32 {
        self.0
    }

    /// The slot an environment with this id lives in (if it still does).
    pub fn slot(self) -> Slot {
        Slot(env_slot(self.0) as u16)
    }
}

/// The id slot `s` has in `generation` (one of generation 1 if that would
/// be 0 or name another slot, after the generation wraps).
pub fn id_of(generation: u32, s: Slot) -> EnvId {
    let raw = generation.wrapping_mul(ENV_SLOTS as u32).wrapping_add(s.0 as u32);
    EnvId(if raw == 0 || env_slot(raw) != s.index() { s.0 as u32 + ENV_SLOTS as u32 } else { raw })
}

/// Indexing the environment table, and the exposed one, by slot.
macro_rules! index_by_slot {
    ($($t:ty),*) => {$(
        impl core::ops::Index<Slot> for [$t; ENV_SLOTS] {
            type Output = $t;
            fn index(&self, s: Slot) -> &$t {
                &self[s.index() & (ENV_SLOTS - 1)]
            }
        }
        impl core::ops::IndexMut<Slot> for [$t; ENV_SLOTS] {
            fn index_mut(&mut self, s: Slot) -> &mut $t {
                &mut self[s.index() & (ENV_SLOTS - 1)]
            }
        }
    )*};
}
