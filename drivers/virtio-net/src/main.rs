//! The virtio network driver image: `virtio-drivers`' `VirtIONetRaw` over
//! the PCI transport, driven by interrupts. Received frames go to the
//! kernel's demultiplexer; a frame to transmit is copied behind the
//! virtio-net header in one of the driver's own transmit buffers.
#![cfg_attr(target_os = "none", no_std, no_main)]

#[cfg(target_os = "none")]
mod driver {
    use drvapi::{op, status, DeviceInfo, Facts, KernelApi, Request};
    use drvglue::{kernel, Global, KernelHal, Platform};
    use virtio_drivers::device::net::VirtIONetRaw;
    use virtio_drivers::transport::pci::PciTransport;

    const QUEUE: usize = 16;
    const BUF: usize = 2048;
    const RX: usize = 8;
    const TX: usize = 4;

    struct Tx {
        busy: bool,
        token: u16,
        tag: u64,
        /// Bytes in the buffer (header and frame), and of the frame.
        len: usize,
        frame: usize,
    }

    struct State {
        net: Option<VirtIONetRaw<KernelHal, Platform<PciTransport>, QUEUE>>,
        rx: [[u8; BUF]; RX],
        rx_token: [u16; RX],
        tx: [[u8; BUF]; TX],
        tx_slot: [Tx; TX],
    }

    // SAFETY: a driver runs on one CPU, only inside the kernel's crossings,
    // which do not nest: its state is never reached from two places at once
    // (`Global` checks it), whatever the device types inside hold.
    unsafe impl Send for State {}

    static STATE: Global<State> = Global::new(State {
        net: None,
        rx: [[0; BUF]; RX],
        rx_token: [0; RX],
        tx: [[0; BUF]; TX],
        tx_slot: [const { Tx { busy: false, token: 0, tag: 0, len: 0, frame: 0 } }; TX],
    });

    pub extern "C" fn init(k: &'static KernelApi, dev: &DeviceInfo, facts: &mut Facts) -> i32 {
        start(k, dev, facts).err().unwrap_or(status::OK)
    }

    fn start(k: &'static KernelApi, dev: &DeviceInfo, facts: &mut Facts) -> Result<(), i32> {
        let (device, transport) = drvglue::open(k, dev)?;
        let mut net =
            drvglue::started("device init failed", VirtIONetRaw::<KernelHal, _, QUEUE>::new(transport))?;
        STATE.with(|s| {
            for (buf, token) in s.rx.iter_mut().zip(s.rx_token.iter_mut()) {
                // SAFETY: the receive buffers are the driver's own and only
                // touched again once the device hands them back.
                match unsafe { net.receive_begin(buf) } {
                    Ok(t) => *token = t,
                    Err(_) => return Err(status::NO_SPACE),
                }
            }
            device.interrupts_on(2)?;
            facts.mac = net.mac_address();
            facts.queue_depth = TX as u32;
            s.net = Some(net);
            Ok(())
        })
    }

    pub extern "C" fn submit(r: &Request) -> i32 {
        STATE.with(|s| {
            let Some(net) = s.net.as_mut() else { return status::IO_ERROR };
            if let Some(st) = drvglue::inject(r) {
                return st;
            }
            if r.op != op::TRANSMIT {
                return status::UNSUPPORTED;
            }
            let Some(i) = s.tx_slot.iter().position(|t| !t.busy) else { return status::NO_SPACE };
            let buf = &mut s.tx[i];
            let Ok(hdr) = net.fill_buffer_header(buf) else { return status::IO_ERROR };
            if r.len == 0 || r.len > BUF - hdr {
                return status::INVALID;
            }
            // SAFETY: the kernel lent `va..va + len` for this call.
            let frame = unsafe { core::slice::from_raw_parts(r.va as *const u8, r.len) };
            buf[hdr..hdr + r.len].copy_from_slice(frame);
            // SAFETY: the transmit buffer is untouched until its completion.
            match unsafe { net.transmit_begin(&buf[..hdr + r.len]) } {
                Ok(token) => {
                    s.tx_slot[i] = Tx { busy: true, token, tag: r.tag, len: hdr + r.len, frame: r.len };
                    status::OK
                }
                Err(virtio_drivers::Error::QueueFull) => status::NO_SPACE,
                Err(_) => status::IO_ERROR,
            }
        })
    }

    pub extern "C" fn interrupt() {
        drvglue::on_interrupt();
        STATE.with(|s| {
            let Some(net) = s.net.as_mut() else { return };
            net.ack_interrupt();
            while let Some(token) = net.poll_transmit() {
                let Some(i) = s.tx_slot.iter().position(|t| t.busy && t.token == token) else {
                    panic!("device completed unknown transmit token {token}");
                };
                let t = &mut s.tx_slot[i];
                // SAFETY: the buffer `transmit_begin` was given for this token.
                let done = unsafe { net.transmit_complete(token, &s.tx[i][..t.len]) };
                t.busy = false;
                let st = if done.is_ok() { status::OK } else { status::IO_ERROR };
                drvglue::complete(t.tag, st, t.frame);
            }
            while let Some(token) = net.poll_receive() {
                let Some(i) = s.rx_token.iter().position(|&t| t == token) else {
                    panic!("device completed unknown receive token {token}");
                };
                let buf = &mut s.rx[i];
                // SAFETY: the buffer `receive_begin` was given for this token.
                if let Ok((hdr, len)) = unsafe { net.receive_complete(token, buf) } {
                    (kernel().receive)(buf[hdr..].as_ptr() as usize, len);
                }
                // SAFETY: as in `init`.
                match unsafe { net.receive_begin(buf) } {
                    Ok(t) => s.rx_token[i] = t,
                    Err(_) => panic!("cannot repost a receive buffer"),
                }
            }
        })
    }
}

#[cfg(target_os = "none")]
use driver::{init, interrupt, submit};
drvglue::driver_image!(init, submit, interrupt);
