//! Packet endpoints and filters (`dev/net`, `docs/network.md`): every
//! call but `net_attach` names an endpoint and a credential that must
//! dominate the endpoint's guard with the write right; the arguments are
//! checked here, the endpoint's state changed in `dev::net`, which changes
//! nothing when it refuses.

use super::Args;
use crate::cap::Rights;
use crate::dev::net;
use crate::mm::PhysTables;
use crate::pagetable::{self, PRESENT, USER, WRITABLE};
use crate::state::Kernel;
use crate::validate::user_page;
use abi::net::{ring_bytes, ring_pages, FILTER_MAX_INSNS, MAX_RING_BYTES, RING_SLOTS_OFFSET};
use abi::syscall::{NET_ANYONE, NO_GUARD};
use abi::Error;
use alloc::vec::Vec;

impl Kernel {
    /// The caller's credential `cred` may use endpoint `ep`.
    fn endpoint_cred(&self, ep: u64, cred: u64) -> Result<(), Error> {
        let c = self.cred(cred)?;
        self.mem.caps.check(c, net::guard(ep)?, Rights::WRITE)
    }
}

pub fn net_attach(k: &mut Kernel, Args([va, slots, slot_size, guard, cred, ..]): Args) -> Result<u64, Error> {
    let me = k.space_owner(k.current());
    k.mem.caps.check(k.cred(cred)?, k.envs[me].guard, Rights::WRITE)?;
    // Without a guard of its own an endpoint is its creator's alone.
    let guard = if guard == NO_GUARD { k.envs[me].guard } else { k.guard_arg(guard)? };
    let (slots, slot_size) = match (u32::try_from(slots), u32::try_from(slot_size)) {
        (Ok(a), Ok(b)) => (a, b),
        _ => return Err(Error::BadLength),
    };
    let bytes = ring_bytes(slots, slot_size);
    if bytes > MAX_RING_BYTES + RING_SLOTS_OFFSET {
        return Err(Error::BadLength);
    }
    let geometry = pktring::Geometry::new(slots, slot_size, bytes).map_err(|_| Error::BadLength)?;
    let va = user_page(va)?;
    let pages = 2 * ring_pages(slots, slot_size);
    let end = va.checked_add(pages * 4096).ok_or(Error::BadAddress)?;
    user_page(end - 4096)?;
    let mut pins = Vec::new();
    pins.try_reserve_exact(pages as usize).map_err(|_| Error::NoMemory)?;
    for p in 0..pages {
        let pte = pagetable::lookup(&mut PhysTables, k.pml4(), va + p * 4096).ok_or(Error::BadPointer)?;
        if pte & (PRESENT | USER | WRITABLE) != PRESENT | USER | WRITABLE {
            return Err(Error::BadPointer);
        }
        pins.push(pagetable::frame_of(pte));
    }
    let env = k.envs[me].id().raw();
    net::attach(&mut k.mem.frames, net::Attach { env, guard, geometry, pins })
}

pub fn net_detach(k: &mut Kernel, Args([ep, cred, ..]): Args) -> Result<u64, Error> {
    k.endpoint_cred(ep, cred)?;
    net::detach(&mut k.mem.frames, ep)
}

pub fn net_filter(k: &mut Kernel, Args([ep, insns, n, cred, ..]): Args) -> Result<u64, Error> {
    k.endpoint_cred(ep, cred)?;
    if n == 0 || n > FILTER_MAX_INSNS {
        return Err(Error::BadLength);
    }
    let mut code = Vec::new();
    code.try_reserve_exact(n as usize * 8).map_err(|_| Error::NoMemory)?;
    code.resize(n as usize * 8, 0);
    crate::uaccess::read(k.pml4(), insns, &mut code)?;
    let program = bpf::insn::decode(&code).map_err(|_| Error::BadLength)?;
    net::install(ep, &program)
}

pub fn net_unfilter(k: &mut Kernel, Args([ep, filter, cred, ..]): Args) -> Result<u64, Error> {
    k.endpoint_cred(ep, cred)?;
    net::uninstall(ep, filter)
}

pub fn net_consent(k: &mut Kernel, Args([ep, filter, grantee, on, cred, ..]): Args) -> Result<u64, Error> {
    k.endpoint_cred(ep, cred)?;
    if on > 1 {
        return Err(Error::BadFlags);
    }
    let grantee = (grantee != NET_ANYONE).then_some(grantee);
    net::consent(ep, filter, grantee, on == 1)
}

pub fn net_tx(k: &mut Kernel, Args([ep, max, cred, ..]): Args) -> Result<u64, Error> {
    k.endpoint_cred(ep, cred)?;
    if max == 0 {
        return Err(Error::BadLength);
    }
    net::transmit(&mut k.mem, ep, max)
}

pub fn net_stats(k: &mut Kernel, Args([ep, out, cred, ..]): Args) -> Result<u64, Error> {
    k.endpoint_cred(ep, cred)?;
    let s = net::stats(ep)?;
    crate::uaccess::write_value(k.pml4(), out, &s)?;
    Ok(0)
}
