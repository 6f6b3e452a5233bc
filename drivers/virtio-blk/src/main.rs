//! The virtio block driver image: `virtio-drivers`' `VirtIOBlk` over the
//! PCI transport, driven by interrupts. The kernel lends it the buffer of
//! each request; the request and response headers live in its own slots.
#![cfg_attr(target_os = "none", no_std, no_main)]

#[cfg(target_os = "none")]
mod driver {
    use drvapi::{op, status, DeviceInfo, Facts, KernelApi, Request};
    use drvglue::{Global, KernelHal, Platform};
    use virtio_drivers::device::blk::{BlkReq, BlkResp, VirtIOBlk, SECTOR_SIZE};
    use virtio_drivers::transport::pci::PciTransport;
    use virtio_drivers::transport::Transport;

    /// `VIRTIO_BLK_F_FLUSH` (virtio 1.2 §5.2.3): the device has a write
    /// cache and takes flush requests. `virtio-drivers` asks for it; its
    /// `flush()` answers success without it, so the driver checks.
    const F_FLUSH: u64 = 1 << 9;

    /// As many requests in flight as the queue has descriptors for (each
    /// takes three).
    const SLOTS: usize = 5;

    struct Slot {
        busy: bool,
        token: u16,
        request: Request,
        req: BlkReq,
        resp: BlkResp,
    }

    struct State {
        blk: Option<VirtIOBlk<KernelHal, Platform<PciTransport>>>,
        /// `F_FLUSH` was negotiated.
        flush: bool,
        slots: [Slot; SLOTS],
    }

    // SAFETY: a driver runs on one CPU, only inside the kernel's crossings,
    // which do not nest: its state is never reached from two places at once
    // (`Global` checks it), whatever the device types inside hold.
    unsafe impl Send for State {}

    static STATE: Global<State> = Global::new(State {
        blk: None,
        flush: false,
        slots: [const { Slot { busy: false, token: 0, request: ZERO, req: BLK_REQ, resp: BLK_RESP } }; SLOTS],
    });
    const ZERO: Request = Request { op: 0, tag: 0, sector: 0, va: 0, len: 0 };
    // `BlkReq`/`BlkResp` have no const constructor: all-zero is a valid
    // value of both (zerocopy `FromZeros` types).
    // SAFETY: see above.
    const BLK_REQ: BlkReq = unsafe { core::mem::zeroed() };
    // SAFETY: see above.
    const BLK_RESP: BlkResp = unsafe { core::mem::zeroed() };

    pub extern "C" fn init(k: &'static KernelApi, dev: &DeviceInfo, facts: &mut Facts) -> i32 {
        start(k, dev, facts).err().unwrap_or(status::OK)
    }

    fn start(k: &'static KernelApi, dev: &DeviceInfo, facts: &mut Facts) -> Result<(), i32> {
        let (device, mut transport) = drvglue::open(k, dev)?;
        // What `VirtIOBlk::new` negotiates is the device's offer and its
        // own list, which includes `F_FLUSH`.
        let flush = transport.read_device_features() & F_FLUSH != 0;
        let blk = drvglue::started("device init failed", VirtIOBlk::<KernelHal, _>::new(transport))?;
        device.interrupts_on(1)?;
        facts.capacity = blk.capacity();
        facts.queue_depth = SLOTS as u32;
        facts.flush = flush as u32;
        STATE.with(|s| (s.blk, s.flush) = (Some(blk), flush));
        Ok(())
    }

    pub extern "C" fn submit(r: &Request) -> i32 {
        STATE.with(|s| {
            let Some(blk) = s.blk.as_mut() else { return status::IO_ERROR };
            if let Some(st) = drvglue::inject(r) {
                return st;
            }
            let r = &drvglue::wild_dma(r);
            if r.op == op::FLUSH {
                return flush(s, r);
            }
            if r.len == 0 || !r.len.is_multiple_of(SECTOR_SIZE) || !matches!(r.op, op::READ | op::WRITE) {
                return status::INVALID;
            }
            let Some(slot) = s.slots.iter_mut().find(|s| !s.busy) else { return status::NO_SPACE };
            // SAFETY: the kernel lent `va..va + len` to this driver until it
            // completes the request; nothing else touches it meanwhile.
            let buf = unsafe { core::slice::from_raw_parts_mut(r.va as *mut u8, r.len) };
            // SAFETY: the slot's header, response and the lent buffer stay put
            // and untouched until `interrupt` completes the request.
            let started = unsafe {
                if r.op == op::READ {
                    blk.read_blocks_nb(r.sector as usize, &mut slot.req, buf, &mut slot.resp)
                } else {
                    blk.write_blocks_nb(r.sector as usize, &mut slot.req, buf, &mut slot.resp)
                }
            };
            match started {
                Ok(token) => {
                    (slot.busy, slot.token, slot.request) = (true, token, *r);
                    status::OK
                }
                Err(virtio_drivers::Error::QueueFull) => status::NO_SPACE,
                Err(_) => status::IO_ERROR,
            }
        })
    }

    /// A flush: `virtio-drivers` 0.13 has only a waiting one, which takes
    /// the next used buffer as its own, so it runs alone (the kernel gives
    /// its crossing a longer budget, `driver::FLUSH_BUDGET_TICKS`). It
    /// completes before `submit` returns.
    fn flush(s: &mut State, r: &Request) -> i32 {
        let Some(blk) = s.blk.as_mut() else { return status::IO_ERROR };
        if !s.flush {
            return status::UNSUPPORTED;
        }
        if s.slots.iter().any(|s| s.busy) {
            return status::NO_SPACE;
        }
        let st = if blk.flush().is_ok() { status::OK } else { status::IO_ERROR };
        drvglue::complete(r.tag, st, 0);
        status::OK
    }

    pub extern "C" fn interrupt() {
        drvglue::on_interrupt();
        STATE.with(|s| {
            let Some(blk) = s.blk.as_mut() else { return };
            blk.ack_interrupt();
            while let Some(token) = blk.peek_used() {
                let Some(slot) = s.slots.iter_mut().find(|s| s.busy && s.token == token) else {
                    panic!("device completed unknown token {token}");
                };
                let r = slot.request;
                // SAFETY: as in `submit`: the same buffer, lent until now.
                let buf = unsafe { core::slice::from_raw_parts_mut(r.va as *mut u8, r.len) };
                // SAFETY: the same header, buffer and response as `submit` used
                // for this token.
                let done = unsafe {
                    if r.op == op::READ {
                        blk.complete_read_blocks(token, &slot.req, buf, &mut slot.resp)
                    } else {
                        blk.complete_write_blocks(token, &slot.req, buf, &mut slot.resp)
                    }
                };
                slot.busy = false;
                let st = if done.is_ok() { status::OK } else { status::IO_ERROR };
                drvglue::complete(r.tag, st, r.len);
            }
        })
    }
}

#[cfg(target_os = "none")]
use driver::{init, interrupt, submit};
drvglue::driver_image!(init, submit, interrupt);
