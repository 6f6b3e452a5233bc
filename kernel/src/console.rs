//! The kernel state's smallest part: who is told, with which interrupt
//! bits, that console input is waiting (`console_notify`; paper 001's
//! events as interrupts, `docs/cpu.md`).

#[derive(Default)]
pub struct Console {
    /// The listener's id (0: nobody) and its bits.
    listener: u32,
    bits: u64,
}

impl Console {
    /// The listener's id and bits, if there is one.
    pub fn listener(&self) -> Option<(u32, u64)> {
        (self.listener != 0).then_some((self.listener, self.bits))
    }

    /// Environment `id` is told with `bits` from now on (`bits` 0: nobody
    /// is).
    pub fn listen(&mut self, id: u32, bits: u64) {
        (self.listener, self.bits) = if bits == 0 { (0, 0) } else { (id, bits) };
    }
}
