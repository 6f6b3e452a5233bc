//! The virtio block driver image: a `virtio-drivers` `VirtQueue` over the
//! PCI transport, driven by interrupts. The kernel lends it the buffer of
//! each request, one or several pages (each a frame of its own, anywhere
//! in memory); the driver hands the device the request as one descriptor
//! chain — header, each page's part, status — so a run of sectors is one
//! request however its frames lie (virtio 1.2 §5.2.6). The header and
//! status live in its own slots.
#![cfg_attr(target_os = "none", no_std, no_main)]

#[cfg(target_os = "none")]
mod driver {
    use bitflags::bitflags;
    use drvapi::{op, status, DeviceInfo, Facts, KernelApi, Request, MAX_PAGES};
    use drvglue::{Global, KernelHal, Platform};
    use virtio_drivers::queue::VirtQueue;
    use virtio_drivers::transport::pci::PciTransport;
    use virtio_drivers::transport::Transport;

    const SECTOR: usize = 512;
    const QUEUE: u16 = 0;
    /// Descriptors in the queue: every slot's longest chain fits at once
    /// (QEMU's virtio-blk offers 256).
    const QUEUE_SIZE: usize = 256;
    /// As many requests in flight as the queue has descriptors for (each
    /// takes its pages and two).
    const SLOTS: usize = 5;
    const _: () = assert!(SLOTS * (MAX_PAGES + 2) <= QUEUE_SIZE);

    bitflags! {
        /// The features it takes (virtio 1.2 §5.2.3).
        #[derive(Clone, Copy, Debug)]
        struct Features: u64 {
            /// `seg_max` in the configuration: the most data segments a
            /// request may have.
            const SEG_MAX = 1 << 2;
            /// A write cache, flushed on request.
            const FLUSH = 1 << 9;
            /// Notifications and interrupts only past the index the other
            /// side names (virtio 1.2 §2.7.10): fewer of both.
            const RING_EVENT_IDX = 1 << 29;
            const VERSION_1 = 1 << 32;
        }
    }

    /// Configuration offsets: capacity (sectors, 64 bits), `seg_max`.
    const CAPACITY: usize = 0;
    const SEG_MAX: usize = 12;

    /// Request types (virtio 1.2 §5.2.6).
    const IN: u32 = 0;
    const OUT: u32 = 1;
    const FLUSH: u32 = 4;

    type Queue = VirtQueue<KernelHal, QUEUE_SIZE>;

    struct Slot {
        busy: bool,
        token: u16,
        request: Request,
        /// The request header the device reads: type, reserved, sector.
        header: [u8; 16],
        /// The status byte the device writes.
        status: [u8; 1],
    }

    struct State {
        dev: Option<(Platform<PciTransport>, Queue)>,
        /// `FLUSH` was negotiated.
        flush: bool,
        slots: [Slot; SLOTS],
    }

    // SAFETY: a driver runs on one CPU, only inside the kernel's crossings,
    // which do not nest: its state is never reached from two places at once
    // (`Global` checks it), whatever the device types inside hold.
    unsafe impl Send for State {}

    const ZERO: Request = Request { op: 0, tag: 0, sector: 0, va: 0, len: 0 };
    static STATE: Global<State> = Global::new(State {
        dev: None,
        flush: false,
        slots: [const { Slot { busy: false, token: 0, request: ZERO, header: [0; 16], status: [0] } }; SLOTS],
    });

    pub extern "C" fn init(k: &'static KernelApi, dev: &DeviceInfo, facts: &mut Facts) -> i32 {
        start(k, dev, facts).err().unwrap_or(status::OK)
    }

    fn start(k: &'static KernelApi, dev: &DeviceInfo, facts: &mut Facts) -> Result<(), i32> {
        let (device, mut transport) = drvglue::open(k, dev)?;
        let features = transport.begin_init(Features::all());
        let word =
            |t: &Platform<PciTransport>, at| drvglue::started("config", t.read_config_space::<u32>(at));
        let capacity =
            u64::from(word(&transport, CAPACITY)?) | u64::from(word(&transport, CAPACITY + 4)?) << 32;
        let seg_max = match features.contains(Features::SEG_MAX) {
            true => word(&transport, SEG_MAX)? as usize,
            false => 1,
        };
        let queue = drvglue::started(
            "queue setup failed",
            Queue::new(&mut transport, QUEUE, false, features.contains(Features::RING_EVENT_IDX)),
        )?;
        transport.finish_init();
        device.interrupts_on(1)?;
        let flush = features.contains(Features::FLUSH);
        facts.capacity = capacity;
        facts.queue_depth = SLOTS as u32;
        facts.flush = flush as u32;
        facts.max_pages = seg_max.clamp(1, MAX_PAGES) as u32;
        STATE.with(|s| (s.dev, s.flush) = (Some((transport, queue)), flush));
        Ok(())
    }

    /// The lent buffer `va..va + len` cut at page boundaries: each page is
    /// its own frame, so each part is its own descriptor.
    fn parts(va: usize, len: usize) -> impl Iterator<Item = (usize, usize)> {
        let end = va + len;
        let mut at = va;
        core::iter::from_fn(move || {
            (at < end).then(|| {
                let part = ((at & !4095) + 4096).min(end) - at;
                at += part;
                (at - part, part)
            })
        })
    }

    /// The chain of request `r` in `slot`, handed to `f` as virtio's
    /// device-readable and device-writable buffers.
    ///
    /// # Safety
    /// `r`'s buffer is lent to the driver until it completes `r`, and
    /// nothing else touches it or the slot's header and status meanwhile.
    unsafe fn chain<R>(
        slot: &mut Slot,
        r: &Request,
        f: impl for<'a> FnOnce(&'a [&'a [u8]], &'a mut [&'a mut [u8]]) -> R,
    ) -> R {
        if r.len <= 4096 - (r.va & 4095) {
            // One page (the usual request): no arrays to build.
            // SAFETY: the lent buffer (the caller's promise).
            let buf = unsafe { core::slice::from_raw_parts_mut(r.va as *mut u8, r.len) };
            return if r.op == op::READ {
                f(&[&slot.header[..]], &mut [buf, &mut slot.status[..]])
            } else {
                f(&[&slot.header[..], &*buf], &mut [&mut slot.status[..]])
            };
        }
        let mut data: [&mut [u8]; MAX_PAGES] = core::array::from_fn(|_| Default::default());
        let mut n = 0;
        for (at, len) in parts(r.va, r.len).take(MAX_PAGES) {
            // SAFETY: inside the lent buffer (the caller's promise).
            data[n] = unsafe { core::slice::from_raw_parts_mut(at as *mut u8, len) };
            n += 1;
        }
        let header: &[u8] = &slot.header;
        if r.op == op::READ {
            let mut out: [&mut [u8]; MAX_PAGES + 1] = core::array::from_fn(|_| Default::default());
            for (o, d) in out.iter_mut().zip(&mut data[..n]) {
                *o = core::mem::take(d);
            }
            out[n] = &mut slot.status;
            f(&[header], &mut out[..=n])
        } else {
            let mut inp: [&[u8]; MAX_PAGES + 1] = [&[]; MAX_PAGES + 1];
            inp[0] = header;
            for (i, d) in inp[1..].iter_mut().zip(&data[..n]) {
                *i = &**d;
            }
            f(&inp[..=n], &mut [&mut slot.status])
        }
    }

    pub extern "C" fn submit(r: &Request) -> i32 {
        STATE.with(|s| {
            let Some((transport, queue)) = s.dev.as_mut() else { return status::IO_ERROR };
            if let Some(st) = drvglue::inject(r) {
                return st;
            }
            let r = &drvglue::wild_dma(r);
            if r.op == op::FLUSH {
                return flush(s, r);
            }
            let pages = parts(r.va, r.len).count();
            if r.len == 0
                || !r.len.is_multiple_of(SECTOR)
                || !matches!(r.op, op::READ | op::WRITE)
                || pages > MAX_PAGES
            {
                return status::INVALID;
            }
            let Some(slot) = s.slots.iter_mut().find(|s| !s.busy) else { return status::NO_SPACE };
            let kind = if r.op == op::READ { IN } else { OUT };
            slot.header[..4].copy_from_slice(&kind.to_le_bytes());
            slot.header[8..].copy_from_slice(&r.sector.to_le_bytes());
            // SAFETY: the kernel lent the buffer until the request completes;
            // the slot is free, and stays put and untouched until `interrupt`
            // pops the chain.
            let started = unsafe { chain(slot, r, |i, o| queue.add(i, o)) };
            match started {
                Ok(token) => {
                    if queue.should_notify() {
                        transport.notify(QUEUE);
                    }
                    (slot.busy, slot.token, slot.request) = (true, token, *r);
                    status::OK
                }
                Err(virtio_drivers::Error::QueueFull) => status::NO_SPACE,
                Err(_) => status::IO_ERROR,
            }
        })
    }

    /// A flush waits for its device (it runs alone: the kernel gives its
    /// crossing a longer budget, `driver::FLUSH_BUDGET_TICKS`) and
    /// completes before `submit` returns.
    fn flush(s: &mut State, r: &Request) -> i32 {
        let Some((transport, queue)) = s.dev.as_mut() else { return status::IO_ERROR };
        if !s.flush {
            return status::UNSUPPORTED;
        }
        if s.slots.iter().any(|s| s.busy) {
            return status::NO_SPACE;
        }
        let slot = &mut s.slots[0];
        slot.header = [0; 16];
        slot.header[..4].copy_from_slice(&FLUSH.to_le_bytes());
        let done = queue.add_notify_wait_pop(&[&slot.header], &mut [&mut slot.status], transport);
        let st = if done.is_ok() && slot.status[0] == 0 { status::OK } else { status::IO_ERROR };
        drvglue::complete(r.tag, st, 0);
        status::OK
    }

    pub extern "C" fn interrupt() {
        drvglue::on_interrupt();
        STATE.with(|s| {
            let Some((transport, queue)) = s.dev.as_mut() else { return };
            transport.ack_interrupt();
            while let Some(token) = queue.peek_used() {
                let Some(slot) = s.slots.iter_mut().find(|s| s.busy && s.token == token) else {
                    panic!("device completed unknown token {token}");
                };
                let r = slot.request;
                // SAFETY: the chain `submit` added for this token, its buffer
                // lent until now.
                let done = unsafe { chain(slot, &r, |i, o| queue.pop_used(token, i, o)) };
                slot.busy = false;
                let st = if done.is_ok() && slot.status[0] == 0 { status::OK } else { status::IO_ERROR };
                drvglue::complete(r.tag, st, r.len);
            }
        })
    }
}

#[cfg(target_os = "none")]
use driver::{init, interrupt, submit};
drvglue::driver_image!(init, submit, interrupt);
