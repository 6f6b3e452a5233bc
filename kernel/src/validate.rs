//! Checks on system-call arguments that need no kernel state: user
//! addresses and ranges, mapping flags, register values. Pure, so they are
//! unit-tested on the host.

use crate::cap::Rights;
use crate::pagetable::{NO_EXEC, PRESENT, USER, WRITABLE};
use abi::layout::{PAGE_SIZE, USER_END, USER_MIN};
use abi::syscall::{map as mapflags, RANGE_MAX};
use abi::Error;

/// A page-aligned user address below the reserved windows.
pub fn user_page(va: u64) -> Result<u64, Error> {
    if !va.is_multiple_of(PAGE_SIZE) || !(USER_MIN..USER_END).contains(&va) {
        return Err(Error::BadAddress);
    }
    Ok(va)
}

/// Page-table rights for `map` flags. `NO_ACCESS` is a present entry
/// without the user bit: the frame stays mapped and counted (so unmap,
/// revocation, fork's `map_from_range` and teardown treat it as any
/// other mapping), user mode cannot touch it, and NX keeps even the
/// kernel from running it; the kernel's copies (`uaccess`) demand the user
/// bit, so they refuse it. A widening from it (`protect`, `map_from`) is
/// checked as from a read-only page.
pub fn pte_rights(flags: u64) -> Result<u64, Error> {
    if flags & !mapflags::ALL != 0 {
        return Err(Error::BadFlags);
    }
    if flags & mapflags::NO_ACCESS != 0 {
        return match flags {
            mapflags::NO_ACCESS => Ok(PRESENT | NO_EXEC),
            _ => Err(Error::BadFlags),
        };
    }
    let mut pte = PRESENT | USER;
    if flags & mapflags::WRITE != 0 {
        pte |= WRITABLE;
    }
    if flags & mapflags::EXEC == 0 {
        pte |= NO_EXEC;
    }
    Ok(pte)
}

/// The capability rights a mapping with `pte` needs on its frame.
pub fn needed(pte: u64) -> Rights {
    if pte & WRITABLE != 0 {
        Rights::READ | Rights::WRITE
    } else {
        Rights::READ
    }
}

/// The `pages` page addresses from `va`, all below the reserved windows.
pub fn page_range(va: u64, pages: u64) -> Result<impl Iterator<Item = u64>, Error> {
    if pages == 0 || pages > RANGE_MAX {
        return Err(Error::BadLength);
    }
    user_page(va)?;
    user_page(va + (pages - 1) * PAGE_SIZE)?;
    Ok((0..pages).map(move |i| va + i * PAGE_SIZE))
}

/// rflags bits user code may hold: the arithmetic flags, TF, DF, AC, ID.
const USER_FLAGS: u64 = 0xCD5 | 0x100 | 0x400 | 0x4_0000 | 0x20_0000;
/// IF and the reserved always-one bit.
pub const FORCED_FLAGS: u64 = 0x202;

/// Sanitises rflags supplied by user code.
pub fn user_rflags(v: u64) -> u64 {
    (v & USER_FLAGS) | FORCED_FLAGS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_pages() {
        assert_eq!(user_page(0x40_0000), Ok(0x40_0000));
        for bad in [0, 0x123, 0x40_0001, USER_END, USER_END + 4096, 0xffff_8000_0000_0000, !4095] {
            assert_eq!(user_page(bad), Err(Error::BadAddress), "{bad:#x}");
        }
        assert_eq!(user_page(USER_END - 4096), Ok(USER_END - 4096));
    }

    #[test]
    fn ranges() {
        assert_eq!(page_range(0x1000, 3).unwrap().collect::<std::vec::Vec<_>>(), [0x1000, 0x2000, 0x3000]);
        assert!(matches!(page_range(0x1000, 0), Err(Error::BadLength)));
        assert!(matches!(page_range(0x1000, RANGE_MAX + 1), Err(Error::BadLength)));
        assert!(matches!(page_range(USER_END - 4096, 2), Err(Error::BadAddress)), "runs into the windows");
        assert!(matches!(page_range(!4095, 1), Err(Error::BadAddress)));
    }

    #[test]
    fn mapping_rights() {
        assert_eq!(pte_rights(0), Ok(PRESENT | USER | NO_EXEC));
        assert_eq!(pte_rights(mapflags::WRITE), Ok(PRESENT | USER | WRITABLE | NO_EXEC));
        assert_eq!(pte_rights(mapflags::EXEC), Ok(PRESENT | USER));
        assert_eq!(pte_rights(mapflags::NO_ACCESS), Ok(PRESENT | NO_EXEC));
        assert_eq!(pte_rights(mapflags::NO_ACCESS | mapflags::WRITE), Err(Error::BadFlags));
        assert_eq!(pte_rights(mapflags::NO_ACCESS | mapflags::EXEC), Err(Error::BadFlags));
        assert_eq!(pte_rights(8), Err(Error::BadFlags));
        assert_eq!(needed(PRESENT | NO_EXEC), Rights::READ);
        for flags in
            [0, mapflags::WRITE, mapflags::EXEC, mapflags::ALL & !mapflags::NO_ACCESS, mapflags::NO_ACCESS]
        {
            assert_eq!(mapflags::of_pte(pte_rights(flags).unwrap()), flags, "{flags}");
        }
        assert_eq!(needed(PRESENT | USER | WRITABLE), Rights::READ | Rights::WRITE);
        assert_eq!(needed(PRESENT | USER), Rights::READ);
    }

    #[test]
    fn rflags_are_sanitised() {
        // IOPL, NT, VM, RF and friends never reach user mode; IF always does.
        assert_eq!(user_rflags(0), FORCED_FLAGS);
        assert_eq!(user_rflags(u64::MAX) & 0x3000, 0, "IOPL");
        assert_eq!(user_rflags(u64::MAX) & (1 << 14 | 1 << 16 | 1 << 17), 0, "NT, RF, VM");
        assert_eq!(user_rflags(0x1) & 0x1, 0x1, "carry kept");
        assert_eq!(user_rflags(0) & 0x200, 0x200, "interrupts on");
    }
}
