//! The interface requests (`SIOCGIF*`, `struct ifreq`) `ifconfig` makes on
//! any Internet socket: the names, addresses, flags and sizes of `lo` and
//! `eth0` as the shared stack has them (`net::stack::interfaces`).

use crate::errno::Errno;
use crate::errno::{EFAULT, EINVAL, ENODEV, ENOTTY};
use crate::net::stack::{interfaces, Interface};
use crate::uaccess;
use alloc::vec::Vec;

const SIOCGIFNAME: u64 = 0x8910;
const SIOCGIFCONF: u64 = 0x8912;
const SIOCGIFFLAGS: u64 = 0x8913;
const SIOCGIFADDR: u64 = 0x8915;
const SIOCGIFDSTADDR: u64 = 0x8917;
const SIOCGIFBRDADDR: u64 = 0x8919;
const SIOCGIFNETMASK: u64 = 0x891b;
const SIOCGIFMETRIC: u64 = 0x891d;
const SIOCGIFMTU: u64 = 0x8921;
const SIOCGIFHWADDR: u64 = 0x8927;
const SIOCGIFINDEX: u64 = 0x8933;
const SIOCGIFTXQLEN: u64 = 0x8942;
const SIOCGIFMAP: u64 = 0x8970;

const IFF_UP: u16 = 0x1;
const IFF_BROADCAST: u16 = 0x2;
const IFF_LOOPBACK: u16 = 0x8;
const IFF_RUNNING: u16 = 0x40;
const IFF_MULTICAST: u16 = 0x1000;
const ARPHRD_ETHER: u16 = 1;
const ARPHRD_LOOPBACK: u16 = 772;
/// Bytes of `struct ifreq`; the name takes the first 16.
const IFREQ: usize = 40;

fn sockaddr_in(addr: [u8; 4]) -> [u8; 16] {
    let mut b = [0u8; 16];
    b[..2].copy_from_slice(&2u16.to_ne_bytes());
    b[4..8].copy_from_slice(&addr);
    b
}

/// The network mask of a prefix length.
pub fn mask(prefix: u8) -> [u8; 4] {
    (u32::MAX.checked_shl(32 - prefix as u32).unwrap_or(0)).to_be_bytes()
}

/// Whether an interface has index `index` (what `SIOCGIFINDEX` gives).
pub fn exists(index: u32) -> bool {
    (1..=interfaces().len()).contains(&(index as usize))
}

/// Interface `i`'s flags (`IFF_*`).
pub fn flags(i: &Interface) -> u16 {
    if i.mac.is_none() {
        IFF_UP | IFF_LOOPBACK | IFF_RUNNING
    } else {
        IFF_UP | IFF_BROADCAST | IFF_RUNNING | IFF_MULTICAST
    }
}

/// Answers request `req` on the `struct ifreq` at `arg`.
pub fn ioctl(req: u64, arg: u64) -> Result<(), Errno> {
    let req = req & 0xffff_ffff;
    if req == SIOCGIFCONF {
        return conf(arg);
    }
    if req == SIOCGIFNAME {
        // By index (`ifr_ifindex`, after the name), the name.
        let index: i32 = uaccess::get(arg + 16).map_err(|_| EFAULT)?;
        let all = interfaces();
        let i = usize::try_from(index).ok().and_then(|n| all.get(n.checked_sub(1)?)).ok_or(ENODEV)?;
        let mut name = [0u8; 16];
        name[..i.name.len()].copy_from_slice(i.name);
        return uaccess::write(arg, &name).map(|_| ()).map_err(|_| EFAULT);
    }
    if !(0x8910..=0x8980).contains(&req) {
        return Err(ENOTTY);
    }
    let name: [u8; 16] = uaccess::get(arg).map_err(|_| EFAULT)?;
    let len = name.iter().position(|&c| c == 0).unwrap_or(16);
    let all = interfaces();
    let (index, i) = all.iter().enumerate().find(|(_, i)| i.name == &name[..len]).ok_or(ENODEV)?;
    let lo = i.mac.is_none();
    let mut v = [0u8; 24];
    match req {
        SIOCGIFFLAGS => v[..2].copy_from_slice(&flags(i).to_ne_bytes()),
        SIOCGIFADDR | SIOCGIFDSTADDR => v[..16].copy_from_slice(&sockaddr_in(i.addr)),
        SIOCGIFNETMASK => v[..16].copy_from_slice(&sockaddr_in(mask(i.prefix))),
        SIOCGIFBRDADDR => {
            let b = u32::from_be_bytes(i.addr) | !u32::from_be_bytes(mask(i.prefix));
            v[..16].copy_from_slice(&sockaddr_in(if lo { [0; 4] } else { b.to_be_bytes() }));
        }
        SIOCGIFMTU => v[..4].copy_from_slice(&(if lo { 65536i32 } else { 1500 }).to_ne_bytes()),
        SIOCGIFMETRIC | SIOCGIFMAP => {}
        SIOCGIFTXQLEN => v[..4].copy_from_slice(&1000i32.to_ne_bytes()),
        SIOCGIFINDEX => v[..4].copy_from_slice(&(index as i32 + 1).to_ne_bytes()),
        SIOCGIFHWADDR => {
            let family = if lo { ARPHRD_LOOPBACK } else { ARPHRD_ETHER };
            v[..2].copy_from_slice(&family.to_ne_bytes());
            v[2..8].copy_from_slice(&i.mac.unwrap_or([0; 6]));
        }
        _ => return Err(EINVAL),
    }
    uaccess::write(arg + 16, &v).map(|_| ()).map_err(|_| EFAULT)
}

/// `SIOCGIFCONF`: `struct ifconf { int len; struct ifreq *buf; }`, one
/// `ifreq` (name and address) per interface that fits.
fn conf(arg: u64) -> Result<(), Errno> {
    let c: [u64; 2] = uaccess::get(arg).map_err(|_| EFAULT)?;
    let (room, buf) = (c[0] as u32 as usize, c[1]);
    let all: Vec<Interface> = interfaces();
    let mut used = 0;
    for i in &all {
        if buf != 0 && used + IFREQ > room {
            break;
        }
        if buf != 0 {
            let mut r = [0u8; IFREQ];
            r[..i.name.len()].copy_from_slice(i.name);
            r[16..32].copy_from_slice(&sockaddr_in(i.addr));
            uaccess::write(buf + used as u64, &r).map_err(|_| EFAULT)?;
        }
        used += IFREQ;
    }
    uaccess::put(arg, used as i32).map(|_| ()).map_err(|_| EFAULT)
}
