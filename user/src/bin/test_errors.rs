//! Boot test: every system call answers bad arguments with the specific
//! error documented in `abi::Error`, and nothing changes. Every error code
//! is produced at least once.
#![no_std]
#![no_main]

use abi::exception::Regs;
use abi::layout::{BOOTFS_VA, EXPOSED_BASE, KINFO_VA};
use abi::syscall::{self as sc, map as mf, rights, CRED_SELF, ENV_SELF, FRAME_ANY, NO_GUARD, SLICE_ANY};
use abi::Error::{self, *};
use user::{kinfo, println, spawn, sys};

static mut SEEN: [bool; 64] = [false; 64];
static mut FAILED: u32 = 0;

fn expect(what: &str, got: Result<u64, Error>, want: Error) {
    // SAFETY: single-threaded test program.
    unsafe {
        if got == Err(want) {
            SEEN[want as usize] = true;
        } else {
            println!("{what}: got {got:?}, want {want:?}");
            FAILED += 1;
        }
    }
}

/// Two packet endpoints: a filter of the second that could claim frames
/// a filter of the first claims is refused (`docs/network.md`).
fn endpoints() {
    const RINGS: u64 = 0x4400_0000_0000;
    for p in 0..4 {
        let f = sys::frame_alloc(ENV_SELF, FRAME_ANY).unwrap();
        sys::map(ENV_SELF, RINGS + p * 4096, f, mf::WRITE).unwrap();
    }
    // `r0 = 1; exit`: every frame.
    let all: [u64; 2] = [0xb7 | 1 << 32, 0x95];
    let a = sys::net_attach(RINGS, 1, 2048, NO_GUARD, CRED_SELF).unwrap();
    let b = sys::net_attach(RINGS + 2 * 4096, 1, 2048, NO_GUARD, CRED_SELF).unwrap();
    sys::net_filter(a, all.as_ptr() as u64, 2, CRED_SELF).unwrap();
    expect(
        "a filter over another endpoint's",
        sys::net_filter(b, all.as_ptr() as u64, 2, CRED_SELF),
        Claimed,
    );
    sys::net_detach(a, CRED_SELF).unwrap();
    sys::net_detach(b, CRED_SELF).unwrap();
    for p in 0..4 {
        sys::unmap(ENV_SELF, RINGS + p * 4096).unwrap();
    }
}

fn raw(n: u64, a: [u64; 6]) -> Result<u64, Error> {
    let r = sys::call(n, a);
    if r >= 0 {
        Ok(r as u64)
    } else {
        Err(Error::from_result(r).unwrap())
    }
}

#[repr(C, align(4096))]
struct Page([u8; 4096]);
static mut PAGE: Page = Page([0; 4096]);

/// `map_from_range` from the boot file system's window: read-only (a write
/// right is refused), executable if asked, nothing past the window's end,
/// and the pages show the archive's bytes.
fn boot_window(va: u64) {
    let window = BOOTFS_VA;
    let pages = kinfo::kernel().bootfs_size.div_ceil(4096);
    expect("boot pages writable", sys::map_from_range(ENV_SELF, va, window, 2, mf::WRITE), NotPermitted);
    expect(
        "boot pages past the end",
        sys::map_from_range(ENV_SELF, va, window + pages * 4096, 1, 0),
        BadAddress,
    );
    expect(
        "boot range over the end",
        sys::map_from_range(ENV_SELF, va, window + (pages - 1) * 4096, 2, 0),
        BadAddress,
    );
    expect("boot range unaligned", sys::map_from_range(ENV_SELF, va, window + 8, 1, 0), BadAddress);
    expect("boot range of no pages", sys::map_from_range(ENV_SELF, va, window, 0, 0), BadLength);
    expect("boot range onto the window", sys::map_from_range(ENV_SELF, window, window, 1, 0), BadAddress);
    expect("nothing mapped by the refusals", sys::unmap(ENV_SELF, va), NotMapped);
    let mapped = sys::map_from_range(ENV_SELF, va, window, 2, mf::EXEC);
    // SAFETY: both ranges are mapped read-only (the window for the
    // machine's lifetime, `va` just above when `mapped` is Ok(2)).
    let same = mapped == Ok(2)
        && unsafe {
            core::slice::from_raw_parts(va as *const u8, 8192)
                == core::slice::from_raw_parts(window as *const u8, 8192)
        };
    // SAFETY: the self-map shows the leaf entry of a mapped page.
    let pte = unsafe { core::ptr::read_volatile(abi::layout::pte_va(va, 0) as *const u64) };
    let rights = same.then_some((pte & abi::pte::WRITABLE != 0, pte & abi::pte::NO_EXEC != 0));
    if !same || rights != Some((false, false)) {
        println!("boot window: mapped {mapped:?}, same bytes {same}, (writable, no-exec) {rights:?}");
        // SAFETY: single-threaded test program.
        unsafe { FAILED += 1 };
    }
    for p in [va, va + 4096] {
        let _ = sys::unmap(ENV_SELF, p);
    }
}

/// Frame ranges (`FRAME_RANGE`): each bad argument refused with its own
/// error and nothing made; a loan maps its range and nothing else.
fn frame_ranges(va: u64) {
    use sc::frame_range::{DROP, MAKE, OWNER_SELF};
    let fr = |a: [u64; 6]| raw(sc::FRAME_RANGE, a);
    let f = sys::frame_alloc(ENV_SELF, FRAME_ANY).unwrap();
    sys::map(ENV_SELF, va, f, mf::WRITE).unwrap();
    expect("range: no such operation", fr([9, va, 1, CRED_SELF, 0, 0]), BadFlags);
    expect("range of no pages", fr([MAKE, va, 0, CRED_SELF, 0, 0]), BadLength);
    expect("range of too many pages", fr([MAKE, va, 33, CRED_SELF, 0, 0]), BadLength);
    expect("range at an unaligned address", fr([MAKE, va + 1, 1, CRED_SELF, 0, 0]), BadAddress);
    expect("range over an unmapped page", fr([MAKE, va + 4096, 1, CRED_SELF, 0, 0]), NotMapped);
    expect("range with an empty slot", fr([MAKE, va, 1, 40, 0, 0]), NotPermitted);
    expect("range with unknown mode bits", fr([MAKE, va, 1, CRED_SELF, OWNER_SELF, 0o700]), BadFlags);
    let t = sys::range_make(va, 1, OWNER_SELF, 0o600).unwrap();
    expect("a frame in two ranges", sys::range_make(va, 1, OWNER_SELF, 0o600), BadState);
    expect("a forged ticket", sys::range_claim(t ^ 1 << 30, rights::ALL), NotPermitted);
    expect("a ticket past the table", sys::range_claim(0xffff, rights::ALL), BadLength);
    expect("a claim with unknown rights", sys::range_claim(t, 8), BadFlags);
    expect("a rule with unknown mode bits", sys::range_rule(t, OWNER_SELF, 0o700), BadFlags);
    expect("a rule for a forged ticket", sys::range_rule(t ^ 1 << 30, OWNER_SELF, 0o666), NotPermitted);
    expect("a rule past the table", sys::range_rule(0xffff, OWNER_SELF, 0o666), BadLength);
    if sys::range_rule(t, OWNER_SELF, 0o640) != Ok(0) {
        println!("the owner could not change its range's rule");
        // SAFETY: single-threaded test program.
        unsafe { FAILED += 1 };
    }
    let read = sys::range_claim(t, rights::READ).unwrap();
    let dst = va + 8 * 4096;
    expect("a read loan mapping writable", sys::range_map(read, dst, 0, 1, mf::WRITE), NotPermitted);
    expect("pages past the range", sys::range_map(read, dst, 0, 2, 0), BadLength);
    expect("no pages of the range", sys::range_map(read, dst, 0, 0, 0), BadLength);
    expect("a first page past the range", sys::range_map(read, dst, 1, 1, 0), BadLength);
    expect("mapping over a mapped page", sys::range_map(read, va, 0, 1, 0), AlreadyMapped);
    expect("a capability that names no range", sys::range_map(CRED_SELF, dst, 0, 1, 0), NotOwner);
    expect("mapping with an empty slot", sys::range_map(40, dst, 0, 1, 0), NotPermitted);
    expect("mapping with a slot past the list", sys::range_map(64, dst, 0, 1, 0), BadLength);
    // Its own frame only: another frame is not covered by the loan.
    let g = sys::frame_alloc(ENV_SELF, FRAME_ANY).unwrap();
    expect("another frame with the loan", sys::map_with(ENV_SELF, dst, g, 0, CRED_SELF, read), NotOwner);
    if sys::range_map(read, dst, 0, 1, 0) != Ok(1)
        || sys::map_with(ENV_SELF, dst + 4096, f, 0, CRED_SELF, read) != Ok(0)
    {
        println!("a read loan did not map its range's frame read-only");
        // SAFETY: single-threaded test program.
        unsafe { FAILED += 1 };
    }
    sys::cap_revoke(read).unwrap();
    expect("a revoked loan", sys::range_map(read, dst + 2 * 4096, 0, 1, 0), NotPermitted);
    expect("let go of a range nobody holds", sys::range_unhold(t, va), BadState);
    expect("hold a forged ticket", sys::range_hold(t ^ 1 << 30, va), NotPermitted);
    expect("hold from an unaligned address", sys::range_hold(t, va + 1), BadAddress);
    expect("hold without mapping the range", sys::range_hold(t, dst + 5 * 4096), NotMapped);
    sys::map(ENV_SELF, va + 16 * 4096, g, 0).unwrap();
    expect("hold mapping another frame", sys::range_hold(t, va + 16 * 4096), Denied);
    expect("let go mapping another frame", sys::range_unhold(t, va + 16 * 4096), Denied);
    expect("drop mapping another frame", sys::range_drop(t, va + 16 * 4096), Denied);
    sys::unmap(ENV_SELF, va + 16 * 4096).unwrap();
    expect("let go without mapping the range", sys::range_unhold(t, dst + 5 * 4096), NotMapped);
    expect("drop without mapping the range", sys::range_drop(t, dst + 5 * 4096), NotMapped);
    expect("drop from an unaligned address", sys::range_drop(t, va + 1), BadAddress);
    sys::range_drop(t, va).unwrap();
    expect("drop twice", sys::range_drop(t, va), NotPermitted);
    expect("hold a dropped range", sys::range_hold(t, va), NotPermitted);
    expect("claim a dropped range", sys::range_claim(t, rights::READ), NotPermitted);
    expect("drop no such range", fr([DROP, 0xffff, 0, 0, 0, 0]), BadLength);
    sys::unmap(ENV_SELF, dst).unwrap();
    sys::unmap(ENV_SELF, dst + 4096).unwrap();
    sys::unmap(ENV_SELF, va).unwrap();
    sys::frame_free(g).unwrap();
    sys::frame_free(f).unwrap();
    // A held range keeps its frame past its last mapping, until let go.
    let h = sys::frame_alloc(ENV_SELF, FRAME_ANY).unwrap();
    sys::map(ENV_SELF, va, h, mf::WRITE).unwrap();
    let t = sys::range_make(va, 1, OWNER_SELF, 0o600).unwrap();
    sys::range_hold(t, va).unwrap();
    sys::unmap(ENV_SELF, va).unwrap();
    sys::frame_disown(h).unwrap();
    let kept = kinfo::frame(h).state == abi::tables::frame_state::USER;
    // Only a holder lets go: this process maps it again, with a loan.
    expect("let go after the last mapping", sys::range_unhold(t, va), NotMapped);
    let loan = sys::range_claim(t, rights::READ).unwrap();
    sys::range_map(loan, va, 0, 1, 0).unwrap();
    sys::range_unhold(t, va).unwrap();
    sys::range_drop(t, va).unwrap();
    sys::unmap(ENV_SELF, va).unwrap();
    if !kept || kinfo::frame(h).state != abi::tables::frame_state::FREE {
        println!("a held range's frame: kept {kept}, then freed {}", kinfo::frame(h).state);
        // SAFETY: single-threaded test program.
        unsafe { FAILED += 1 };
    }
}

fn main(_: u64) -> i32 {
    let nframes = kinfo::kernel().frames;
    let buf = [0u8; 16];
    let va = 0x3000_0000_0000u64;

    expect("unknown kernel call", raw(sc::END + 5, [0; 6]), NoSuchCall);
    expect("linux getpid, no handler", raw(39, [0; 6]), NoSuchCall);

    expect("write null", raw(sc::DEBUG_WRITE, [8, 4, 0, 0, 0, 0]), BadPointer);
    expect("write kernel", raw(sc::DEBUG_WRITE, [0xffff_8000_0000_0000, 4, 0, 0, 0, 0]), BadPointer);
    expect("write overflow", raw(sc::DEBUG_WRITE, [u64::MAX - 2, 8, 0, 0, 0, 0]), BadPointer);
    expect("write huge", raw(sc::DEBUG_WRITE, [buf.as_ptr() as u64, 1 << 30, 0, 0, 0, 0]), BadLength);
    expect("read len 0", raw(sc::CONSOLE_READ, [buf.as_ptr() as u64, 0, 0, 0, 0, 0]), BadLength);
    expect("read into exposed", raw(sc::CONSOLE_READ, [KINFO_VA, 8, 0, 0, 0, 0]), BadPointer);

    expect("alloc past end", sys::frame_alloc(ENV_SELF, nframes + 5), BadFrame);
    expect("alloc reserved frame 0", sys::frame_alloc(ENV_SELF, 0), BadFrame);
    let f = sys::frame_alloc(ENV_SELF, FRAME_ANY).unwrap();
    expect("alloc taken frame", sys::frame_alloc(ENV_SELF, f), FrameTaken);
    expect("alloc for unknown env", sys::frame_alloc(0xdead_beef, FRAME_ANY), BadEnv);
    let kernel_frame =
        (0..nframes).find(|&n| kinfo::frame(n).state == abi::tables::frame_state::KERNEL).unwrap();
    expect("free kernel frame", sys::frame_free(kernel_frame), NotOwner);
    expect("free bad frame", sys::frame_free(u64::MAX), BadFrame);
    expect("disown kernel frame", sys::frame_disown(kernel_frame), NotOwner);
    expect("disown bad frame", sys::frame_disown(u64::MAX), BadFrame);

    expect("map unaligned", sys::map(ENV_SELF, va + 12, f, 0), BadAddress);
    expect("map page 0", sys::map(ENV_SELF, 0, f, 0), BadAddress);
    expect("map exposed window", sys::map(ENV_SELF, EXPOSED_BASE, f, 0), BadAddress);
    expect(
        "map over the page-table window",
        sys::map(ENV_SELF, abi::layout::PAGE_TABLE_VA, f, 0),
        BadAddress,
    );
    expect("map kernel half", sys::map(ENV_SELF, 0xffff_8000_0000_0000, f, 0), BadAddress);
    expect("map bad flags", sys::map(ENV_SELF, va, f, 0x80), BadFlags);
    expect("map kernel frame", sys::map(ENV_SELF, va, kernel_frame, 0), NotOwner);
    expect("map bad env", sys::map(77, va, f, 0), BadEnv);
    sys::map(ENV_SELF, va, f, mf::WRITE).unwrap();
    expect("map twice", sys::map(ENV_SELF, va, f, 0), AlreadyMapped);
    expect("free mapped frame", sys::frame_free(f), FrameMapped);
    expect("map_from unmapped source", sys::map_from(ENV_SELF, va + 8192, va + 4096, 0), NotMapped);
    sys::protect(ENV_SELF, va, 0).unwrap();
    expect("map_from wider than held", sys::map_from(ENV_SELF, va + 8192, va, mf::WRITE), NotPermitted);
    sys::map_from(ENV_SELF, va + 8192, va, 0).unwrap();
    expect("free doubly mapped frame", sys::frame_free(f), FrameMapped);
    sys::unmap(ENV_SELF, va + 8192).unwrap();
    sys::protect(ENV_SELF, va, mf::WRITE).unwrap();
    expect("protect bad flags", sys::protect(ENV_SELF, va, 8), BadFlags);
    // Ranges: [va, hole, va+2p] mapped from a 3-page source with a hole.
    let g = sys::frame_alloc(ENV_SELF, FRAME_ANY).unwrap();
    sys::map(ENV_SELF, va + 2 * 4096, g, mf::WRITE).unwrap();
    let dst = va + 0x10_0000;
    expect("range of no pages", sys::map_from_range(ENV_SELF, dst, va, 0, 0), BadLength);
    expect("range too long", sys::map_from_range(ENV_SELF, dst, va, 5000, 0), BadLength);
    expect("range into the windows", sys::protect_range(ENV_SELF, EXPOSED_BASE - 4096, 2, 0), BadAddress);
    let mapped = sys::map_from_range(ENV_SELF, dst, va, 3, 0);
    expect("range onto mapped pages", sys::map_from_range(ENV_SELF, dst, va, 3, 0), AlreadyMapped);
    let changed = sys::protect_range(ENV_SELF, dst, 3, 0);
    let widened = sys::protect_range(ENV_SELF, dst, 3, mf::WRITE);
    if mapped != Ok(2) || changed != Ok(2) || widened != Ok(2) {
        println!("ranges: mapped {mapped:?}, re-protected {changed:?}, widened {widened:?} (want 2 each)");
        // SAFETY: single-threaded test program.
        unsafe { FAILED += 1 };
    }
    for p in [dst, dst + 2 * 4096, va + 2 * 4096] {
        sys::unmap(ENV_SELF, p).unwrap();
    }
    sys::frame_free(g).unwrap();
    // Source and destination overlapping in one space: the copy would read
    // entries it had just written (va's frame at va+1p, then at va+2p).
    expect("overlapping range in one space", sys::map_from_range(ENV_SELF, va + 4096, va, 2, 0), BadAddress);
    expect("the overlapping range's last page", sys::unmap(ENV_SELF, va + 2 * 4096), NotMapped);
    expect("protect unmapped", sys::protect(ENV_SELF, va + 4096, 0), NotMapped);
    expect("unmap unmapped", sys::unmap(ENV_SELF, va + 4096), NotMapped);
    expect("unmap unaligned", sys::unmap(ENV_SELF, va + 1), BadAddress);
    // Given away while mapped: ownerless, and freed with the mapping.
    sys::frame_disown(f).unwrap();
    expect("disown it again", sys::frame_disown(f), NotOwner);
    expect("free it once disowned", sys::frame_free(f), NotOwner);
    sys::unmap(ENV_SELF, va).unwrap();
    if kinfo::frame(f).state != abi::tables::frame_state::FREE {
        println!("a disowned frame was not freed with its last mapping");
        // SAFETY: single-threaded test program.
        unsafe { FAILED += 1 };
    }
    boot_window(va);
    frame_ranges(va);

    expect("destroy self", sys::env_destroy(ENV_SELF), NotPermitted);
    expect("destroy unknown", sys::env_destroy(12345), BadEnv);
    let c = sys::env_create().unwrap();
    let good = Regs { rip: 0x40_0000, rsp: 0x7000_0000, ..Regs::default() };
    expect("set regs of self", sys::env_set_regs(ENV_SELF, &good), NotPermitted);
    expect("set regs bad ptr", raw(sc::ENV_SET_REGS, [c, 0x10, 0, 0, 0, 0]), BadPointer);
    let kernel_rip = Regs { rip: 0xffff_ffff_8000_0000, ..good };
    expect("set regs kernel rip", sys::env_set_regs(c, &kernel_rip), BadRegs);
    expect("get regs into read-only", raw(sc::ENV_GET_REGS, [c, KINFO_VA, 0, 0, 0, 0]), BadPointer);
    sys::env_destroy(c).unwrap();

    let entry = main as *const () as u64;
    let page = (&raw const PAGE) as u64;
    expect(
        "handler in kernel",
        sys::set_exception_handler(ENV_SELF, EXPOSED_BASE + 8, page + 4096, page),
        BadAddress,
    );
    expect("save area unmapped", sys::set_exception_handler(ENV_SELF, entry, page + 4096, va), BadPointer);
    expect(
        "save area read-only",
        sys::set_exception_handler(ENV_SELF, entry, page + 4096, KINFO_VA),
        BadPointer,
    );
    expect(
        "save area misaligned",
        sys::set_exception_handler(ENV_SELF, entry, page + 4096, page + 3),
        BadPointer,
    );
    expect(
        "save area across pages",
        sys::set_exception_handler(ENV_SELF, entry, page + 4096, page + 4000),
        BadPointer,
    );

    // A child presenting its parent's resources is refused (faulter mode 4
    // checks NotPermitted and NotOwner from its side; exit 0 means all were).
    let child = spawn::spawn("faulter", 4).unwrap();
    let code = spawn::wait(child).unwrap();
    if code != 0 {
        println!("child probing its parent: {code} unexpected answers");
        // SAFETY: single-threaded.
        unsafe { FAILED += 1 };
    } else {
        // SAFETY: single-threaded.
        unsafe {
            SEEN[NotPermitted as usize] = true;
            SEEN[NotOwner as usize] = true;
        }
    }
    // Time slices and transfers of control.
    let me_slice =
        (0..abi::tables::SLICES).find(|&p| kinfo::slices().owner[p] as u64 == sys::self_id()).unwrap();
    expect("slice taken", sys::slice_alloc(ENV_SELF, me_slice as u64), NoSlice);
    expect("slice out of range", sys::slice_alloc(ENV_SELF, 64), NoSlice);
    expect("free a free slice", sys::slice_free(63), NotPermitted);
    expect("free bad slice", sys::slice_free(u64::MAX), NoSlice);
    let idle = sys::env_create().unwrap();
    expect("yield to a stopped env", sys::yield_to(idle), BadState);
    expect("yield to nobody", sys::yield_to(999_999), BadEnv);
    expect("section holds of nobody", sys::section_holds(999_999), BadEnv);
    // A stopped environment claiming nothing: 0 (an answer, not an error).
    let holds = sys::section_holds(idle);
    if holds != Ok(0) {
        println!("section holds of a stopped env: got {holds:?}, want Ok(0)");
        // SAFETY: single-threaded test program.
        unsafe { FAILED += 1 };
    }
    expect("pct to a stopped env", raw(sc::PCT, [idle, 0, 0, 0, 0, 0]), BadState);
    expect("pct bad flags", raw(sc::PCT, [idle, 8, 0, 0, 0, 0]), BadFlags);
    expect("pct interrupt and sync", raw(sc::PCT, [idle, 3, 1, 0, 0, 0]), BadFlags);
    expect("console notify without handler", sys::console_notify(idle, 1), BadState);
    expect("console notify to nobody", sys::console_notify(999_999, 1), BadEnv);
    expect("publish for nobody", sys::env_publish(999_999, 1), BadEnv);
    expect("pct entry in kernel", sys::set_pct_entry(idle, EXPOSED_BASE, page + 4096), BadAddress);
    // Nesting: holding, state records, interposition, limits.
    let mut st = abi::nest::EnvState::default();
    expect("hold oneself", user::nest::env_stop(ENV_SELF), NotPermitted);
    expect("state of nobody", user::nest::env_state_get(999_999, &mut st), BadEnv);
    expect(
        "state to a bad pointer",
        raw(sc::ENV_STATE_GET, [idle, KINFO_VA, CRED_SELF, 0, 0, 0]),
        BadPointer,
    );
    expect("state record of no version", user::nest::env_state_set(idle, &st), BadFlags);
    let mut maps = [abi::nest::Mapping::default(); 1];
    expect(
        "too many mappings at once",
        raw(sc::ENV_MAPPINGS, [idle, 0, maps.as_mut_ptr() as u64, 65, CRED_SELF, 0]),
        BadLength,
    );
    expect(
        "interpose, bad flag",
        user::nest::interpose(idle, false).and(raw(sc::INTERPOSE, [idle, 2, CRED_SELF, 0, 0, 0])),
        BadFlags,
    );
    expect("answer what was never asked", user::nest::intercept_answer(idle, 0, 0), BadState);
    user::nest::env_limit(idle, 1, 0).unwrap(); // its page table alone
    expect("frame beyond a subtree's quota", sys::frame_alloc(idle, FRAME_ANY), OverQuota);
    expect("slice beyond a subtree's share", sys::slice_alloc(idle, SLICE_ANY), OverQuota);
    sys::env_destroy(idle).unwrap();
    // Capabilities, slice upcalls and revocation.
    expect("derive from an empty slot", sys::cap_derive(40, 1), NotPermitted);
    expect("derive from a bad slot", sys::cap_derive(999, 1), BadLength);
    expect("derive unknown rights", sys::cap_derive(CRED_SELF, 64), BadFlags);
    let ro = sys::cap_derive(CRED_SELF, rights::READ).unwrap();
    expect("derive without grant right", sys::cap_derive(ro, rights::READ), NotPermitted);
    expect("revoke own root", sys::cap_revoke(CRED_SELF), NotPermitted);
    let idle = sys::env_create().unwrap();
    expect("grant without grant right", sys::cap_grant(idle, ro), NotPermitted);
    expect("grant to nobody", sys::cap_grant(4242, CRED_SELF), BadEnv);
    expect("revoke in nobody's list", sys::cap_revoke_in(4242, 1, CRED_SELF), BadEnv);
    expect(
        "revoke in another list without a covering credential",
        sys::cap_revoke_in(idle, 0, ro),
        NotPermitted,
    );
    expect("revoke another's root", sys::cap_revoke_in(idle, CRED_SELF, CRED_SELF), NotPermitted);
    expect("revoke an empty slot of another", sys::cap_revoke_in(idle, 5, CRED_SELF), NotPermitted);
    expect("share a kernel frame", sys::frame_share(kernel_frame, ro), NotOwner);
    expect("slice upcalls bad flag", raw(sc::SLICE_UPCALLS, [0, 3, 0, 0, 0, 0]), BadFlags);
    expect("reclaim zero frames", sys::frames_reclaim(idle, 0), BadLength);
    expect("reclaim from self", sys::frames_reclaim(ENV_SELF, 1), NotPermitted);
    expect("vector unaligned", sys::set_repossession_vector(ENV_SELF, page + 8), BadAddress);
    expect("vector unmapped", sys::set_repossession_vector(ENV_SELF, va), BadPointer);
    expect("map with a read-only credential", sys::map_with(ENV_SELF, va, 1, 0, ro, CRED_SELF), NotPermitted);
    sys::cap_revoke(ro).unwrap();
    expect("use a revoked credential", sys::map_with(ENV_SELF, va, 1, 0, ro, CRED_SELF), NotPermitted);
    sys::env_destroy(idle).unwrap();

    // Downloaded predicates.
    let bad = [user::ebpf::mov_imm(0, 0), user::ebpf::ja(-2), user::ebpf::EXIT];
    expect("predicate with a loop", sys::pred_install(&bad, &[]), BadProgram);
    expect("predicate with no instructions", sys::pred_install(&[], &[]), BadLength);
    let too_many = [abi::syscall::Region { va: page, len: 8 }; abi::syscall::PRED_REGIONS + 1];
    expect(
        "predicate with too many regions",
        sys::pred_install(&user::ebpf::WORD_NONZERO, &too_many),
        BadLength,
    );
    let across = [abi::syscall::Region { va: page + 4090, len: 8 }];
    expect("predicate region across pages", sys::pred_install(&user::ebpf::WORD_NONZERO, &across), BadLength);
    expect("free a bad predicate", sys::pred_free(100_000), BadLength);
    expect("free someone else's predicate", sys::pred_free(63), NotPermitted);
    // No environment may take the whole predicate table from the others.
    let word = [abi::syscall::Region { va: page, len: 8 }];
    let mut mine = [0u64; 16];
    let mut held = 0;
    while let Ok(id) = sys::pred_install(&user::ebpf::WORD_NONZERO, &word) {
        mine[held] = id;
        held += 1;
        if held == mine.len() {
            break;
        }
    }
    if held != 8 {
        println!("predicates one environment could install: {held}, want 8");
        // SAFETY: single-threaded test program.
        unsafe { FAILED += 1 };
    }
    expect(
        "predicate past the per-environment quota",
        sys::pred_install(&user::ebpf::WORD_NONZERO, &word),
        NoMemory,
    );
    for &id in &mine[..held] {
        sys::pred_free(id).unwrap();
    }
    expect("sleep on a bad predicate", sys::sleep(u64::MAX, 0), BadLength);
    // The device calls: a device that does not exist; the device
    // capability, which a child does not hold.
    expect("info on no such device", sys::dev_info(99).map(|_| 0), NoDevice);
    expect("block read without the device capability", raw(sc::BLK_READ, [0, 0, 512, 0, 0, 0]), NotPermitted);
    endpoints();
    let stopped = spawn::spawn("faulter", 0).unwrap();
    expect("run a running env", sys::env_run(stopped), BadState);
    spawn::wait(stopped).unwrap();

    // Exhaust the environment table, then physical memory.
    let before = kinfo::free_plus_own();
    let mut made = [0u64; abi::tables::ENV_SLOTS];
    let mut n = 0;
    let last = loop {
        match sys::env_create() {
            Ok(id) => {
                made[n] = id;
                n += 1;
            }
            Err(e) => break e,
        }
    };
    expect("env table full", Err(last), NoEnvSlots);
    for id in &made[..n] {
        sys::env_destroy(*id).unwrap();
    }
    // A range whose first page has its page table and whose last needs a
    // new one, mapped when no frame is left: it must fail whole, not after
    // mapping its first page.
    let edge = (va & !0x1f_ffff) + 0x4060_0000;
    let anchor = sys::frame_alloc(ENV_SELF, FRAME_ANY).unwrap();
    let src = edge - 0x10_0000;
    for at in [edge - 3 * 4096, src, src + 4096, src + 2 * 4096] {
        sys::map(ENV_SELF, at, anchor, 0).unwrap();
    }
    let mut frames = 0u64;
    let last = loop {
        match sys::frame_alloc(ENV_SELF, FRAME_ANY) {
            Ok(_) => frames += 1,
            Err(e) => break e,
        }
    };
    expect("memory exhausted", Err(last), NoMemory);
    expect(
        "range needing a page table when memory is exhausted",
        sys::map_from_range(ENV_SELF, edge - 2 * 4096, src, 3, 0),
        NoMemory,
    );
    expect("the failed range's first page", sys::unmap(ENV_SELF, edge - 2 * 4096), NotMapped);
    for at in [edge - 3 * 4096, src, src + 4096, src + 2 * 4096] {
        sys::unmap(ENV_SELF, at).unwrap();
    }
    for n in 0..nframes {
        let fi = kinfo::frame(n);
        if fi.owner as u64 == sys::self_id() && fi.state == abi::tables::frame_state::USER && fi.refs == 0 {
            sys::frame_free(n).unwrap();
        }
    }
    let after = kinfo::free_plus_own();
    println!("created {n} environments and {frames} frames; free+own before {before}, after {after}");
    if before != after {
        // SAFETY: single-threaded.
        unsafe { FAILED += 1 };
    }

    // SAFETY: single-threaded.
    let (failed, seen) = unsafe { (FAILED, SEEN) };
    // XN's refusals need an XN disk: `test_xn` produces each of them.
    let core = Error::ALL.iter().filter(|e| !e.is_xn());
    let missing: u32 = core
        .clone()
        .filter(|e| !seen[**e as usize])
        .map(|e| {
            println!("error never produced: {e:?}");
            1
        })
        .sum();
    println!(
        "{failed} wrong answers; {} of {} error codes produced",
        core.clone().count() as u32 - missing,
        core.count()
    );
    if failed == 0 && missing == 0 {
        0
    } else {
        1
    }
}

user::entry!(main);
