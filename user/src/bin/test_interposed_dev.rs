//! Boot test: device calls made through the interposed view of the
//! kernel (paper 003 §3.2). Interposing on an environment that shares
//! this one's page tables puts the view into this address space too, so
//! every call below goes through the view's dispatch; calls into a
//! driver must still reach the driver's mailbox. (The view was once built
//! before the drivers' images were mapped: the first driver call through
//! it wrote an unmapped mailbox and the kernel panicked; the stress
//! fuzzer found it.)
#![no_std]
#![no_main]

use abi::dev::{status_of, BLOCK, NET};
use abi::syscall::{CRED_SELF, ENV_SELF};
use abi::Error;
use user::dev::{self, Page};
use user::{nest, println, sys, xn};

const TICKS: u64 = 2500;

/// A block read of 8 sectors into `p`: its status.
fn read(p: &Page) -> Result<u64, &'static str> {
    sys::blk_io(false, p.frame, 0, 4096, 0, dev::word(0)).map_err(|_| "block read refused")?;
    let w = dev::wait(0, TICKS).ok_or("block read never ended")?;
    status_of(w).ok_or("block read's word holds no status")
}

fn main(_: u64) -> i32 {
    let page = Page::new(0).expect("a buffer page");
    let sharer = sys::env_create_shared(ENV_SELF, CRED_SELF).expect("a sharer of this address space");
    nest::interpose(sharer, true).expect("interposing on the sharer");
    let pinged = sys::dev_ping(BLOCK, 4);
    let net = sys::dev_ping(NET, 4);
    let read = read(&page);
    // No XN disk in this boot: XN answers for itself, without the driver.
    let flushed = xn::flush();
    nest::interpose(sharer, false).expect("ending the interposition");
    sys::env_destroy(sharer).expect("destroying the sharer");
    println!("interposed: block ping {pinged:?}, net ping {net:?}, read {read:?}, xn flush {flushed:?}");
    let good = pinged == Ok(4)
        && net == Ok(4)
        && read == Ok(abi::dev::status::OK)
        && flushed == Err(Error::NoDevice);
    if good {
        println!("interposed: driver calls through the interposed view: ok");
    }
    i32::from(!good)
}

user::entry!(main);
