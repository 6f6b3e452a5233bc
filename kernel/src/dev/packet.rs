//! The kernel's packet interface: transmit an Ethernet frame from a frame
//! its owner holds; every received frame goes to the demultiplexer. For
//! now the demultiplexer counts frames and remembers ARP replies and ICMP
//! echo replies (what the boot tests and the fault-injection workload
//! check); the packet-filter issue puts downloaded filters here.

use super::driver::{self, Done, Span};
use super::Global;
use crate::frames::Frame;
use crate::state::Kernel;
use drvapi::{op, Request};

/// Why a transmission was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketError {
    NoDevice,
    BadRange,
    NotOwner,
    Driver(i32),
}

/// What the demultiplexer has seen.
#[derive(Clone, Copy, Default)]
pub struct Seen {
    pub frames: u64,
    /// The last ARP reply: sender IPv4 address and MAC address.
    pub arp_reply: Option<([u8; 4], [u8; 6])>,
    /// The last ICMP echo reply: its sequence number and `checksum64` of
    /// its payload.
    pub echo_reply: Option<(u16, u64)>,
}

static SEEN: Global<Seen> = Global::new(Seen { frames: 0, arp_reply: None, echo_reply: None });

pub fn seen() -> Seen {
    SEEN.with(|s| *s)
}

/// Forgets the last ARP reply (to wait for the next one).
pub fn forget_arp_reply() {
    SEEN.with(|s| s.arp_reply = None);
}

fn device() -> Option<usize> {
    driver::find("virtio-net")
}

/// The NIC's MAC address.
pub fn mac() -> Option<[u8; 6]> {
    driver::facts("virtio-net").map(|f| f.mac)
}

/// Starts sending the Ethernet frame in `buf`, a frame `owner` (0: the
/// kernel) must hold.
pub fn transmit(k: &mut Kernel, owner: u32, buf: Span, done: Done) -> Result<u64, PacketError> {
    let Span { frame, offset, len } = buf;
    let i = device().ok_or(PacketError::NoDevice)?;
    if !(14..=1514).contains(&len) || offset.checked_add(len).is_none_or(|e| e > 4096) {
        return Err(PacketError::BadRange);
    }
    if !driver::holds(k, owner, Frame::new(frame)) {
        return Err(PacketError::NotOwner);
    }
    let pa = (frame << 12) + offset as u64;
    driver::submit(k, i, Request { op: op::TRANSMIT, tag: 0, sector: 0, va: 0, len }, pa, done)
        .map_err(PacketError::Driver)
}

const ETHERTYPE_ARP: u16 = 0x0806;
const ARP_REPLY: u16 = 2;
const ETHERTYPE_IPV4: u16 = 0x0800;
const ICMP: u8 = 1;
const ECHO_REPLY: u8 = 0;

/// FNV-1a over `b`: what an echo reply's payload is compared by.
pub fn checksum64(b: &[u8]) -> u64 {
    b.iter().fold(0xCBF2_9CE4_8422_2325, |h, &x| (h ^ u64::from(x)).wrapping_mul(0x100_0000_01B3))
}

/// The sequence number and payload of an ICMP echo reply in an Ethernet
/// frame (IPv4 without options), if it is one.
fn echo_reply(frame: &[u8]) -> Option<(u16, &[u8])> {
    let be16 = |o: usize| u16::from_be_bytes([frame[o], frame[o + 1]]);
    if frame.len() < 42 || be16(12) != ETHERTYPE_IPV4 || frame[14] != 0x45 || frame[23] != ICMP {
        return None;
    }
    let end = 14 + be16(16) as usize;
    (frame[34] == ECHO_REPLY && end >= 42).then(|| frame.get(42..end).map(|p| (be16(40), p)))?
}

/// Every received frame comes here (from the driver's `receive` call).
pub fn demux(frame: &[u8]) {
    SEEN.with(|s| {
        s.frames += 1;
        let be16 = |o: usize| u16::from_be_bytes([frame[o], frame[o + 1]]);
        if frame.len() >= 42 && be16(12) == ETHERTYPE_ARP && be16(20) == ARP_REPLY {
            let mac: [u8; 6] = frame[22..28].try_into().expect("6 bytes");
            let ip: [u8; 4] = frame[28..32].try_into().expect("4 bytes");
            s.arp_reply = Some((ip, mac));
        }
        if let Some((seq, payload)) = echo_reply(frame) {
            s.echo_reply = Some((seq, checksum64(payload)));
        }
    })
}
