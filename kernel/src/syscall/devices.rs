//! The block and packet interfaces for environments (`docs/drivers.md`,
//! "Device clients in ring 3"): every call names a credential that must
//! dominate the device capability the first environment gets at boot
//! (`CRED_DEVICES`), a buffer in a frame the caller holds, and a
//! completion word in its memory. XN (disk-block ownership) and the packet
//! filters (per-environment demultiplexing) will sit between these checks
//! and `dev::client` without changing what a holder of the whole device
//! capability sees.

use super::Args;
use crate::cap::Rights;
use crate::dev::client::{self, Word};
use crate::dev::Span;
use crate::frames::Frame;
use crate::mm::PhysTables;
use crate::pagetable::{self, PRESENT, USER, WRITABLE};
use crate::state::Kernel;
use abi::syscall::CRED_SELF;
use abi::Error;

impl Kernel {
    /// The caller's credential `cred` covers the devices with `need`.
    fn device_cred(&self, cred: u64, need: Rights) -> Result<(), Error> {
        self.mem.caps.check(self.cred(cred)?, self.mem.device_guard(), need)
    }

    /// Bytes `offset..offset + len` of `frame`, which the caller (or a
    /// descendant) holds with `need` (the device writes into it: `WRITE`);
    /// with its owner's id.
    fn device_buffer(&self, frame: u64, offset: u64, len: u64, need: Rights) -> Result<(u32, Span), Error> {
        let frame = Frame::new(frame);
        let owner = self.frame_arg(frame, CRED_SELF, need, false)?;
        if offset >= 4096 || len == 0 || len > 4096 - offset {
            return Err(Error::BadLength);
        }
        let span = Span { frame, offset: offset as usize, len: len as usize };
        Ok((self.envs[owner].id().raw(), span))
    }

    /// The completion word at `va`: 8 aligned bytes the caller may write.
    fn done_word(&self, va: u64) -> Result<Word, Error> {
        if !va.is_multiple_of(8) {
            return Err(Error::BadAddress);
        }
        let pte = pagetable::lookup(&mut PhysTables, self.pml4(), va & !4095).ok_or(Error::BadPointer)?;
        if pte & (PRESENT | USER | WRITABLE) != PRESENT | USER | WRITABLE {
            return Err(Error::BadPointer);
        }
        Ok(Word { frame: pagetable::frame_of(pte), offset: (va & 4095) as usize })
    }
}

pub fn dev_info(k: &mut Kernel, Args([dev, info, cred, ..]): Args) -> Result<u64, Error> {
    k.device_cred(cred, Rights::READ)?;
    let i = client::info(dev)?;
    crate::uaccess::write_value(k.pml4(), info, &i)?;
    Ok(0)
}

fn block(
    k: &mut Kernel,
    write: bool,
    [frame, offset, len, sector, done, cred]: [u64; 6],
) -> Result<u64, Error> {
    k.device_cred(cred, Rights::WRITE)?;
    // A read writes into the frame.
    let need = if write { Rights::READ } else { Rights::WRITE };
    let (owner, buf) = k.device_buffer(frame, offset, len, need)?;
    let word = k.done_word(done)?;
    client::block(&mut k.mem, write, owner, buf, sector, word).map(|_| 0)
}

pub fn blk_read(k: &mut Kernel, Args(a): Args) -> Result<u64, Error> {
    block(k, false, a)
}

pub fn blk_write(k: &mut Kernel, Args(a): Args) -> Result<u64, Error> {
    block(k, true, a)
}

pub fn net_send(k: &mut Kernel, Args([frame, offset, len, done, cred, ..]): Args) -> Result<u64, Error> {
    k.device_cred(cred, Rights::WRITE)?;
    let (owner, buf) = k.device_buffer(frame, offset, len, Rights::READ)?;
    let word = k.done_word(done)?;
    client::send(&mut k.mem, owner, buf, word).map(|_| 0)
}

pub fn net_recv(k: &mut Kernel, Args([frame, offset, len, done, cred, ..]): Args) -> Result<u64, Error> {
    k.device_cred(cred, Rights::READ)?;
    let (owner, buf) = k.device_buffer(frame, offset, len, Rights::WRITE)?;
    let word = k.done_word(done)?;
    client::post(&mut k.mem, owner, buf, word).map(|_| 0)
}

/// Most crossings one `dev_ping` makes.
const MAX_PINGS: u64 = 100_000;

pub fn dev_ping(k: &mut Kernel, Args([dev, count, cred, ..]): Args) -> Result<u64, Error> {
    k.device_cred(cred, Rights::WRITE)?;
    if count == 0 || count > MAX_PINGS {
        return Err(Error::BadLength);
    }
    client::ping(dev, count)
}

/// Kernel memory the injected wild write aims at.
#[cfg(feature = "inject")]
static CANARY: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(0x5AFE);

/// Unmapped, between the kernel's image and the first driver region:
/// where a flipped bit in a call's target sends a driver (the kernel once
/// took a fault there for its own).
#[cfg(feature = "inject")]
const UNMAPPED_HIGH: u64 = 0xFFFF_FFFF_B000_0000;

/// `dev_inject(dev, fault, arg, frame, done, cred)`: the fault `fault`
/// in `dev`'s driver, with bytes 0..512 of the caller's `frame` lent to it:
/// 1 if the driver was stopped during the call, 0 if the request is in
/// flight. The wild write aims at a kernel variable, checked afterwards
/// (`BadState` if the driver changed it).
#[cfg(feature = "inject")]
pub fn dev_inject(k: &mut Kernel, Args([dev, fault, arg, frame, done, cred]): Args) -> Result<u64, Error> {
    use abi::dev::inject as f;
    use drvapi::op;
    k.device_cred(cred, Rights::WRITE)?;
    let (owner, buf) = k.device_buffer(frame, 0, 512, Rights::WRITE)?;
    let word = k.done_word(done)?;
    let canary = CANARY.as_ptr() as u64;
    let (code, sector, len) = match fault {
        f::WILD_WRITE => (op::INJECT_WILD_WRITE, canary, 0),
        f::STACK_OVERFLOW => (op::INJECT_STACK_OVERFLOW, 0, 0),
        f::LIVELOCK => (op::INJECT_LIVELOCK, 0, 0),
        f::IRQ_LIVELOCK => (op::INJECT_IRQ_LIVELOCK, 0, 0),
        f::WILD_CALL => (op::INJECT_WILD_CALL, 0x1000, 0),
        // The device is told to write `arg`, a frame the caller holds
        // (and has not lent to the driver).
        f::WILD_DMA => (op::INJECT_WILD_DMA, Frame::new(arg).addr(), 512),
        f::CLI_LIVELOCK => (op::INJECT_CLI_LIVELOCK, 0, 0),
        f::WILD_CALL_HIGH => (op::INJECT_WILD_CALL, UNMAPPED_HIGH, 0),
        // The top of the registers' first page: what the trap or the call
        // pushes lands in the device's registers.
        f::BAD_STACK_IRQ | f::BAD_STACK_CALL => {
            let regs = client::registers(dev)?;
            (op::INJECT_BAD_STACK, regs + 0xFF8, (fault == f::BAD_STACK_CALL) as usize)
        }
        f::SYSRET => (op::INJECT_PRIVILEGED, op::PRIVILEGED_SYSRET, 0),
        f::INT14 => (op::INJECT_PRIVILEGED, op::PRIVILEGED_INT14, 0),
        f::LIE_FULL => (op::INJECT_LIE, op::LIE_FULL, 0),
        f::LIE_SHORT => (op::INJECT_LIE, op::LIE_SHORT, 0),
        f::LIE_DROP => (op::INJECT_LIE, op::LIE_DROP, 0),
        f::LIE_REFUSE => (op::INJECT_LIE, op::LIE_REFUSE, 0),
        f::LIE_ERROR => (op::INJECT_LIE, op::LIE_ERROR, 0),
        f::LIE_INVALID => (op::INJECT_LIE, op::LIE_INVALID, 0),
        _ => return Err(Error::BadFlags),
    };
    if fault == f::WILD_DMA {
        k.frame_arg(Frame::new(arg), CRED_SELF, Rights::WRITE, false)?;
    }
    let r = drvapi::Request { op: code, tag: 0, sector, va: 0, len };
    let stopped = client::inject(&mut k.mem, dev, owner, r, buf, word)?;
    if fault == f::WILD_WRITE {
        let now = CANARY.load(core::sync::atomic::Ordering::Relaxed);
        crate::kprintln!("inject: the kernel variable at {canary:#x} the driver wrote to holds {now:#x}");
        if now != 0x5AFE {
            return Err(Error::BadState);
        }
    }
    Ok(stopped as u64)
}

/// Without the `inject` feature there is no fault injection.
#[cfg(not(feature = "inject"))]
pub fn dev_inject(_: &mut Kernel, _: Args) -> Result<u64, Error> {
    Err(Error::NoSuchCall)
}
