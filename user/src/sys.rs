//! Raw system calls (see `abi::syscall` for the convention).

use abi::exception::Regs;
use abi::syscall::{self as sc, CRED_SELF, ENV_SELF, NO_GUARD};
use abi::Error;
use core::arch::asm;
use core::sync::atomic::{AtomicU64, Ordering};

/// Counts the calls made by this environment that may take rights away
/// from pages (protect, unmap, revoke), once before and once after each:
/// a program that read the count, then found a page's rights, knows they
/// still hold while the count has not moved. It starts at 1, so a zeroed
/// record of a look never matches.
static TAKEN: AtomicU64 = AtomicU64::new(1);

/// The count of calls that may take rights from pages.
#[inline]
pub fn rights_taken() -> u64 {
    TAKEN.load(Ordering::Acquire)
}

/// Marks a call that may take rights from pages; made before and after
/// it, so that a look that read the count while it ran sees it move.
#[inline(always)]
fn taking() {
    TAKEN.fetch_add(1, Ordering::AcqRel);
}

/// Makes system call `n`. The kernel changes only rax, rcx and r11
/// (`abi::syscall`); a `PCT` that delivers a message changes its message
/// registers too, so transfers go through `user::pct`, which says so.
#[inline(always)]
pub fn call(n: u64, a: [u64; 6]) -> i64 {
    let r: i64;
    // SAFETY: SYSCALL enters the kernel, which validates every argument and
    // preserves every register but the three named here.
    unsafe {
        asm!("syscall",
            inlateout("rax") n as i64 => r,
            in("rdi") a[0], in("rsi") a[1], in("rdx") a[2],
            in("r10") a[3], in("r8") a[4], in("r9") a[5],
            lateout("rcx") _, lateout("r11") _,
            options(nostack));
    }
    r
}

/// Makes system call `n`, which takes no arguments.
#[inline(always)]
pub fn call0(n: u64) -> i64 {
    let r: i64;
    // SAFETY: as in `call`.
    unsafe {
        asm!("syscall",
            inlateout("rax") n as i64 => r,
            lateout("rcx") _, lateout("r11") _,
            options(nostack));
    }
    r
}

/// Makes system call `n` with one argument.
#[inline(always)]
pub fn call1(n: u64, a: u64) -> i64 {
    let r: i64;
    // SAFETY: as in `call`.
    unsafe {
        asm!("syscall",
            inlateout("rax") n as i64 => r,
            in("rdi") a,
            lateout("rcx") _, lateout("r11") _,
            options(nostack));
    }
    r
}

/// A raw call's result as the wrappers give it.
pub fn result(r: i64) -> Result<u64, Error> {
    if r >= 0 {
        Ok(r as u64)
    } else {
        Err(Error::from_result(r).unwrap_or(Error::NoSuchCall))
    }
}

pub fn debug_write(b: &[u8]) -> Result<u64, Error> {
    result(call(sc::DEBUG_WRITE, [b.as_ptr() as u64, b.len() as u64, 0, 0, 0, 0]))
}
pub fn console_read(b: &mut [u8]) -> Result<u64, Error> {
    result(call(sc::CONSOLE_READ, [b.as_mut_ptr() as u64, b.len() as u64, 0, 0, 0, 0]))
}
pub fn frame_alloc(owner: u64, frame: u64) -> Result<u64, Error> {
    result(call(sc::FRAME_ALLOC, [owner, frame, CRED_SELF, 0, 0, 0]))
}
pub fn frame_free(frame: u64) -> Result<u64, Error> {
    result(call(sc::FRAME_FREE, [frame, CRED_SELF, 0, 0, 0, 0]))
}
pub fn map(env: u64, va: u64, frame: u64, flags: u64) -> Result<u64, Error> {
    map_with(env, va, frame, flags, CRED_SELF, CRED_SELF)
}
pub fn map_from(env: u64, va: u64, src: u64, flags: u64) -> Result<u64, Error> {
    result(call(sc::MAP_FROM, [env, va, src, flags, CRED_SELF, 0]))
}
pub fn slice_alloc(env: u64, pos: u64) -> Result<u64, Error> {
    result(call(sc::SLICE_ALLOC, [env, pos, CRED_SELF, 0, 0, 0]))
}
pub fn slice_free(pos: u64) -> Result<u64, Error> {
    result(call(sc::SLICE_FREE, [pos, CRED_SELF, 0, 0, 0, 0]))
}
pub fn yield_to(env: u64) -> Result<u64, Error> {
    result(call1(sc::YIELD_TO, env))
}
pub fn set_pct_entry(env: u64, entry: u64, stack: u64) -> Result<u64, Error> {
    set_pct_entry_guarded(env, entry, stack, NO_GUARD)
}
/// `map` with explicit credentials for the environment and the frame.
pub fn map_with(
    env: u64,
    va: u64,
    frame: u64,
    flags: u64,
    env_cred: u64,
    frame_cred: u64,
) -> Result<u64, Error> {
    result(call(sc::MAP, [env, va, frame, flags, env_cred, frame_cred]))
}
/// Opens this (or a child's) PCT entry to callers presenting a capability
/// dominating the one in slot `guard` (`NO_GUARD`: anyone).
pub fn set_pct_entry_guarded(env: u64, entry: u64, stack: u64, guard: u64) -> Result<u64, Error> {
    result(call(sc::SET_PCT_ENTRY, [env, entry, stack, guard, CRED_SELF, 0]))
}
pub fn cap_derive(slot: u64, rights: u64) -> Result<u64, Error> {
    result(call(sc::CAP_DERIVE, [slot, rights, 0, 0, 0, 0]))
}
pub fn cap_revoke(slot: u64) -> Result<u64, Error> {
    taking();
    let r = call(sc::CAP_REVOKE, [slot, ENV_SELF, CRED_SELF, 0, 0, 0]);
    taking();
    result(r)
}
/// Revokes the capability in another environment's `slot` (a loan made to it).
pub fn cap_revoke_in(env: u64, slot: u64, cred: u64) -> Result<u64, Error> {
    taking();
    let r = call(sc::CAP_REVOKE, [slot, env, cred, 0, 0, 0]);
    taking();
    result(r)
}
pub fn cap_grant(env: u64, slot: u64) -> Result<u64, Error> {
    result(call(sc::CAP_GRANT, [env, slot, CRED_SELF, 0, 0, 0]))
}
pub fn frame_share(frame: u64, slot: u64) -> Result<u64, Error> {
    result(call(sc::FRAME_SHARE, [frame, slot, CRED_SELF, 0, 0, 0]))
}
pub fn slice_upcalls(env: u64, on: bool) -> Result<u64, Error> {
    slice_upcalls_mode(env, if on { sc::UPCALLS_BOTH } else { sc::UPCALLS_OFF })
}
/// `slice_upcalls` with a mode (`UPCALLS_STARTS`: slice starts only).
pub fn slice_upcalls_mode(env: u64, mode: u64) -> Result<u64, Error> {
    result(call(sc::SLICE_UPCALLS, [env, mode, CRED_SELF, 0, 0, 0]))
}
pub fn frames_reclaim(env: u64, n: u64) -> Result<u64, Error> {
    result(call(sc::FRAMES_RECLAIM, [env, n, CRED_SELF, 0, 0, 0]))
}
pub fn set_repossession_vector(env: u64, va: u64) -> Result<u64, Error> {
    result(call(sc::SET_REPOSSESSION_VECTOR, [env, va, CRED_SELF, 0, 0, 0]))
}
/// Installs a wakeup predicate (raw eBPF instructions) over `regions`.
pub fn pred_install(insns: &[u64], regions: &[sc::Region]) -> Result<u64, Error> {
    result(call(
        sc::PRED_INSTALL,
        [
            insns.as_ptr() as u64,
            insns.len() as u64,
            regions.as_ptr() as u64,
            regions.len() as u64,
            CRED_SELF,
            0,
        ],
    ))
}
pub fn pred_free(id: u64) -> Result<u64, Error> {
    result(call(sc::PRED_FREE, [id, 0, 0, 0, 0, 0]))
}
/// Sleeps until predicate `id` holds (1) or tick `deadline` passes (0).
/// An interrupting protected control transfer (`PCT_INTERRUPT`): ORs
/// `bits` into `target`'s queued interrupts; `cred` is presented to its
/// entry's guard. Returns 1 if its handler took them at once, else 0.
pub fn interrupt(target: u64, bits: u64, cred: u64) -> Result<u64, Error> {
    result(call(sc::PCT, [target, sc::PCT_INTERRUPT | sc::pct_cred(cred), bits, 0, 0, 0]))
}
/// `interrupt`, but the bits are only queued: the caller keeps the CPU
/// (`PCT_QUEUE`).
pub fn interrupt_queued(target: u64, bits: u64, cred: u64) -> Result<u64, Error> {
    let flags = sc::PCT_INTERRUPT | sc::PCT_QUEUE | sc::pct_cred(cred);
    result(call(sc::PCT, [target, flags, bits, 0, 0, 0]))
}
/// The caller's queued interrupt bits, now cleared.
pub fn interrupts_take() -> u64 {
    call0(sc::INTERRUPTS_TAKE) as u64
}
/// Asks that `env` get interrupt `bits` while console input waits.
pub fn console_notify(env: u64, bits: u64) -> Result<u64, Error> {
    result(call(sc::CONSOLE_NOTIFY, [env, bits, CRED_SELF, 0, 0, 0]))
}
/// Sets the word `env` shows in the exposed environment table.
pub fn env_publish(env: u64, word: u64) -> Result<u64, Error> {
    result(call(sc::ENV_PUBLISH, [env, word, CRED_SELF, 0, 0, 0]))
}
pub fn sleep(id: u64, deadline: u64) -> Result<u64, Error> {
    result(call(sc::SLEEP, [id, deadline, 0, 0, 0, 0]))
}
/// `map_from` for `pages` consecutive pages; returns how many were mapped.
pub fn map_from_range(env: u64, va: u64, src: u64, pages: u64, flags: u64) -> Result<u64, Error> {
    result(call(sc::MAP_FROM_RANGE, [env, va, src, pages, flags, CRED_SELF]))
}
/// `protect` for `pages` consecutive pages; returns how many changed.
pub fn protect_range(env: u64, va: u64, pages: u64, flags: u64) -> Result<u64, Error> {
    taking();
    let r = call(sc::PROTECT_RANGE, [env, va, pages, flags, CRED_SELF, 0]);
    taking();
    result(r)
}
pub fn unmap(env: u64, va: u64) -> Result<u64, Error> {
    taking();
    let r = call(sc::UNMAP, [env, va, CRED_SELF, 0, 0, 0]);
    taking();
    result(r)
}
/// `unmap` for `pages` consecutive pages (holes skipped); returns how
/// many were mapped.
pub fn unmap_range(env: u64, va: u64, pages: u64) -> Result<u64, Error> {
    taking();
    let r = call(sc::UNMAP_RANGE, [env, va, pages, CRED_SELF, 0, 0]);
    taking();
    result(r)
}
/// `pages` new zeroed frames charged to `env`, mapped from `va` with
/// `flags`.
pub fn map_fresh(env: u64, va: u64, pages: u64, flags: u64) -> Result<u64, Error> {
    result(call(sc::MAP_FRESH, [env, va, pages, flags, CRED_SELF, 0]))
}
/// Copies up to `len` bytes from `src` into the buffer `env`'s open
/// hand-over record for `key` names (a read waiting for them); how many.
pub fn hand_over(env: u64, src: u64, len: u64, key: u64) -> Result<u64, Error> {
    result(call(sc::HAND_OVER, [env, src, len, key, 0, 0]))
}
pub fn protect(env: u64, va: u64, flags: u64) -> Result<u64, Error> {
    taking();
    let r = call(sc::PROTECT, [env, va, flags, CRED_SELF, 0, 0]);
    taking();
    result(r)
}
pub fn env_create() -> Result<u64, Error> {
    result(call1(sc::ENV_CREATE, CRED_SELF))
}
/// A new stopped child of `parent`, the caller or a descendant
/// (`ENV_CREATE_IN`), charged to `parent`.
pub fn env_create_in(parent: u64) -> Result<u64, Error> {
    env_create_again(parent, 0)
}
/// `env_create_in` taking id `id` again (0: a new one).
pub fn env_create_again(parent: u64, id: u64) -> Result<u64, Error> {
    result(call(sc::ENV_CREATE_IN, [parent, id, CRED_SELF, 0, 0, 0]))
}
/// A new stopped environment over `space`'s page tables (`ENV_CREATE_SHARED`),
/// presenting `cred` for the tables' owner.
pub fn env_create_shared(space: u64, cred: u64) -> Result<u64, Error> {
    result(call(sc::ENV_CREATE_SHARED, [space, cred, 0, 0, 0, 0]))
}
pub fn env_destroy(env: u64) -> Result<u64, Error> {
    result(call(sc::ENV_DESTROY, [env, CRED_SELF, 0, 0, 0, 0]))
}
/// Moves `env` and its subtree under `to`, an ancestor of its parent
/// (`ENV_MOVE`).
pub fn env_move(env: u64, to: u64) -> Result<u64, Error> {
    result(call(sc::ENV_MOVE, [env, to, CRED_SELF, 0, 0, 0]))
}
/// Interrupt `bits` for us whenever child `env` ends (`ENV_EXIT_BITS`).
pub fn env_exit_bits(env: u64, bits: u64) -> Result<u64, Error> {
    result(call(sc::ENV_EXIT_BITS, [env, bits, CRED_SELF, 0, 0, 0]))
}
pub fn env_set_regs(env: u64, r: &Regs) -> Result<u64, Error> {
    result(call(sc::ENV_SET_REGS, [env, r as *const Regs as u64, CRED_SELF, 0, 0, 0]))
}
pub fn env_get_regs(env: u64, r: &mut Regs) -> Result<u64, Error> {
    result(call(sc::ENV_GET_REGS, [env, r as *mut Regs as u64, CRED_SELF, 0, 0, 0]))
}
pub fn env_run(env: u64) -> Result<u64, Error> {
    result(call(sc::ENV_RUN, [env, CRED_SELF, 0, 0, 0, 0]))
}
pub fn set_exception_handler(env: u64, entry: u64, stack: u64, save: u64) -> Result<u64, Error> {
    result(call(sc::SET_EXCEPTION_HANDLER, [env, entry, stack, save, CRED_SELF, 0]))
}
pub fn yield_now() {
    call0(sc::YIELD);
}
pub fn exit(code: i32) -> ! {
    exit_telling_parent(code, 0, CRED_SELF)
}
/// `exit`, then `parent_bits` interrupt the parent (`cred` is presented to
/// its guard).
pub fn exit_telling_parent(code: i32, parent_bits: u64, cred: u64) -> ! {
    call(sc::EXIT, [code as u64, parent_bits, cred, 0, 0, 0]);
    unreachable!("exit returned")
}
pub fn self_id() -> u64 {
    call0(sc::SELF_ID) as u64
}
pub fn shutdown(code: u64) -> Result<u64, Error> {
    result(call(sc::SHUTDOWN, [code, CRED_SELF, 0, 0, 0, 0]))
}

/// `dev_info` with the device capability (`CRED_DEVICES`).
pub fn dev_info(dev: u64) -> Result<abi::dev::DevInfo, Error> {
    let mut i = abi::dev::DevInfo::default();
    result(call(sc::DEV_INFO, [dev, &mut i as *mut _ as u64, sc::CRED_DEVICES, 0, 0, 0])).map(|_| i)
}

/// `blk_read`/`blk_write` of bytes `offset..offset + len` of `frame`, the
/// end in the word at `done`.
pub fn blk_io(write: bool, frame: u64, offset: u64, len: u64, sector: u64, done: u64) -> Result<u64, Error> {
    let n = if write { sc::BLK_WRITE } else { sc::BLK_READ };
    result(call(n, [frame, offset, len, sector, done, sc::CRED_DEVICES]))
}

/// `net_send` of bytes `offset..offset + len` of `frame`.
pub fn net_send(frame: u64, offset: u64, len: u64, done: u64) -> Result<u64, Error> {
    result(call(sc::NET_SEND, [frame, offset, len, done, sc::CRED_DEVICES, 0]))
}

/// `net_recv`: posts bytes `offset..offset + len` of `frame`.
pub fn net_recv(frame: u64, offset: u64, len: u64, done: u64) -> Result<u64, Error> {
    result(call(sc::NET_RECV, [frame, offset, len, done, sc::CRED_DEVICES, 0]))
}

/// `dev_ping`: `count` crossings into `dev`'s driver.
pub fn dev_ping(dev: u64, count: u64) -> Result<u64, Error> {
    result(call(sc::DEV_PING, [dev, count, sc::CRED_DEVICES, 0, 0, 0]))
}

/// `dev_inject` (kernels built with the `inject` feature).
pub fn dev_inject(dev: u64, fault: u64, arg: u64, frame: u64, done: u64) -> Result<u64, Error> {
    result(call(sc::DEV_INJECT, [dev, fault, arg, frame, done, sc::CRED_DEVICES]))
}

/// `net_attach`: an endpoint over the rings at `va` (`abi::net`).
pub fn net_attach(va: u64, slots: u64, slot_size: u64, guard: u64, cred: u64) -> Result<u64, Error> {
    result(call(sc::NET_ATTACH, [va, slots, slot_size, guard, cred, 0]))
}

pub fn net_detach(ep: u64, cred: u64) -> Result<u64, Error> {
    result(call(sc::NET_DETACH, [ep, cred, 0, 0, 0, 0]))
}

/// `net_filter` of the `n` instructions (8 bytes each) at `insns`.
pub fn net_filter(ep: u64, insns: u64, n: u64, cred: u64) -> Result<u64, Error> {
    result(call(sc::NET_FILTER, [ep, insns, n, cred, 0, 0]))
}

pub fn net_unfilter(ep: u64, filter: u64, cred: u64) -> Result<u64, Error> {
    result(call(sc::NET_UNFILTER, [ep, filter, cred, 0, 0, 0]))
}

pub fn net_consent(ep: u64, filter: u64, grantee: u64, on: bool, cred: u64) -> Result<u64, Error> {
    result(call(sc::NET_CONSENT, [ep, filter, grantee, on as u64, cred, 0]))
}

pub fn net_tx(ep: u64, max: u64, cred: u64) -> Result<u64, Error> {
    result(call(sc::NET_TX, [ep, max, cred, 0, 0, 0]))
}

pub fn net_stats(ep: u64, cred: u64) -> Result<abi::net::NetStats, Error> {
    let mut s = abi::net::NetStats::default();
    result(call(sc::NET_STATS, [ep, &mut s as *mut _ as u64, cred, 0, 0, 0])).map(|_| s)
}
/// Environment `env`'s identity (0: ours) (`IDENT_GET`).
pub fn ident_get(env: u64) -> Result<abi::ident::Ident, Error> {
    let mut id = abi::ident::Ident::ROOT;
    result(call(sc::IDENT_GET, [env, &raw mut id as u64, 0, 0, 0, 0]))?;
    Ok(id)
}
/// Whether the kernel vouches that `env` holds a library lock
/// (`SECTION_HOLDS`): 1 or 0.
pub fn section_holds(env: u64) -> Result<u64, Error> {
    result(call(sc::SECTION_HOLDS, [env, 0, 0, 0, 0, 0]))
}
/// Lets go of a frame we own: freed with its last mapping (`FRAME_DISOWN`).
pub fn frame_disown(frame: u64) -> Result<u64, Error> {
    result(call(sc::FRAME_DISOWN, [frame, CRED_SELF, 0, 0, 0, 0]))
}
/// A range over our `pages` frames mapped from `va`, claimable unheld by
/// whom `owner` and `mode` admit; its ticket (`FRAME_RANGE`'s `MAKE`).
pub fn range_make(va: u64, pages: u64, owner: u64, mode: u64) -> Result<u64, Error> {
    result(call(sc::FRAME_RANGE, [sc::frame_range::MAKE, va, pages, CRED_SELF, owner, mode]))
}
/// A loan of the range `ticket` names, with `rights`; its slot (`CLAIM`).
pub fn range_claim(ticket: u64, rights: u64) -> Result<u64, Error> {
    result(call(sc::FRAME_RANGE, [sc::frame_range::CLAIM, ticket, rights, 0, 0, 0]))
}
/// Maps frames `first..first + pages` of the range capability `slot` names
/// at our `va` (`MAP`).
pub fn range_map(slot: u64, va: u64, first: u64, pages: u64, flags: u64) -> Result<u64, Error> {
    result(call(sc::FRAME_RANGE, [sc::frame_range::MAP, slot, va, first, pages, flags]))
}
/// A message carrying `ticket` is in flight, sent by us, who map the
/// range's first frame at `va` (`HOLD`).
pub fn range_hold(ticket: u64, va: u64) -> Result<u64, Error> {
    result(call(sc::FRAME_RANGE, [sc::frame_range::HOLD, ticket, va, 0, 0, 0]))
}
/// A message carrying `ticket` was taken; we map the range's first frame
/// at `va` (`UNHOLD`).
pub fn range_unhold(ticket: u64, va: u64) -> Result<u64, Error> {
    result(call(sc::FRAME_RANGE, [sc::frame_range::UNHOLD, ticket, va, 0, 0, 0]))
}
/// Ends the range `ticket` names, whose first frame we map at `va`
/// (`DROP`).
pub fn range_drop(ticket: u64, va: u64) -> Result<u64, Error> {
    result(call(sc::FRAME_RANGE, [sc::frame_range::DROP, ticket, va, 0, 0, 0]))
}
/// Gives the range `ticket` names the rule (`owner`, `mode`), as `chmod`
/// changes a file's bits (`RULE`).
pub fn range_rule(ticket: u64, owner: u64, mode: u64) -> Result<u64, Error> {
    result(call(sc::FRAME_RANGE, [sc::frame_range::RULE, ticket, owner, mode, 0, 0]))
}
/// The range `ticket` names, whose first frame we map at `va`, outlives
/// every mapping until dropped, its rule still judged (`KEEP`).
pub fn range_keep(ticket: u64, va: u64) -> Result<u64, Error> {
    result(call(sc::FRAME_RANGE, [sc::frame_range::KEEP, ticket, va, 0, 0, 0]))
}
/// Makes `id` our identity, as the kernel's rules allow (`IDENT_SET`).
pub fn ident_set(id: &abi::ident::Ident) -> Result<u64, Error> {
    result(call(sc::IDENT_SET, [id as *const abi::ident::Ident as u64, 0, 0, 0, 0, 0]))
}
