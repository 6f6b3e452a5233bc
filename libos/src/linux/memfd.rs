//! `memfd_create(name, flags)`: a regular file in no directory (no links;
//! it goes when its last descriptor closes), opened for reading and
//! writing, with every permission bit as on Linux. `MFD_CLOEXEC` marks the
//! descriptor close-on-exec; `MFD_ALLOW_SEALING`, `MFD_NOEXEC_SEAL` and
//! `MFD_EXEC` are accepted (not both; `MFD_NOEXEC_SEAL` drops the execute
//! bits) (no seal is ever added: `F_ADD_SEALS` stays
//! unsupported); `MFD_HUGETLB` and unknown bits are EINVAL, and so is a
//! name over 249 bytes. The name is not kept (`/proc/self/fd` shows `/`).

use crate::errno::{LxResult, EINVAL, ENAMETOOLONG};
use crate::fs::{node, S_IFREG};
use crate::obj::{self, flags, Kind};
use crate::{fd, uaccess};

const MFD_CLOEXEC: u64 = 1;
const MFD_ALLOW_SEALING: u64 = 2;
const MFD_NOEXEC_SEAL: u64 = 8;
const MFD_EXEC: u64 = 0x10;
const NAME_MAX: usize = 249;

pub fn memfd_create(namep: u64, mfd: u64) -> LxResult {
    if mfd & !(MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_NOEXEC_SEAL | MFD_EXEC) != 0 {
        return Err(EINVAL);
    }
    let name = uaccess::cstr(namep, NAME_MAX + 1).map_err(|e| if e == ENAMETOOLONG { EINVAL } else { e })?;
    if name.len() > NAME_MAX {
        return Err(EINVAL);
    }
    if mfd & MFD_EXEC != 0 && mfd & MFD_NOEXEC_SEAL != 0 {
        return Err(EINVAL);
    }
    // A file sealed against execution has no execute bits.
    let perm = if mfd & MFD_NOEXEC_SEAL != 0 { 0o666 } else { 0o777 };
    let ino = node::alloc(S_IFREG | perm)?;
    node::update(ino, |n| n.opens += 1);
    let f = match obj::new(Kind::Regular, flags::RDWR, ino) {
        Ok(f) => f,
        Err(e) => {
            node::update(ino, |n| n.opens -= 1);
            node::release(ino);
            return Err(e);
        }
    };
    fd::open(f, mfd & MFD_CLOEXEC != 0)
}
