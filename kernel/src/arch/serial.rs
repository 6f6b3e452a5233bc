//! The 16550 UART on COM1: the kernel console.

use super::cpu::{inb, outb};

const COM1: u16 = 0x3f8;

pub fn init() {
    outb(COM1 + 1, 0x00); // no interrupts yet
    outb(COM1 + 3, 0x80); // DLAB on
    outb(COM1, 0x01); // 115200 baud
    outb(COM1 + 1, 0x00);
    outb(COM1 + 3, 0x03); // 8N1
    outb(COM1 + 2, 0xC7); // FIFOs on
    outb(COM1 + 4, 0x0B);
}

pub fn write_byte(b: u8) {
    while inb(COM1 + 5) & 0x20 == 0 {}
    outb(COM1, b);
}

/// Whether a received byte is waiting.
pub fn input_ready() -> bool {
    inb(COM1 + 5) & 1 != 0
}

/// A received byte, if one is waiting.
pub fn read_byte() -> Option<u8> {
    input_ready().then(|| inb(COM1))
}
