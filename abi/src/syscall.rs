//! System-call numbers and argument conventions.
//!
//! Calling convention: `syscall` with the number in `rax` and arguments in
//! `rdi, rsi, rdx, r10, r8, r9`. The result comes back in `rax`: a value
//! `>= 0` on success or `-(Error as i64)` on failure. The kernel preserves
//! every register except `rax`, `rcx` and `r11` (the last two are clobbered
//! by the SYSCALL instruction itself), with one exception: a [`PCT`] that
//! waits for a reply comes back with the reply's message registers.
//!
//! **Explicit credentials.** Every call that acts on an object names, in a
//! `cred` argument, a slot of the caller's capability list; the kernel
//! allows the call only if that capability dominates the object's guard
//! with the rights needed (see `docs/capabilities.md`). Slot
//! [`CRED_SELF`] holds every environment's root capability, which
//! dominates the environment itself and everything its descendants hold.
//! Calls that only concern the caller (yield, exit, console) take none.
//!
//! Veneer's own calls are numbered from [`BASE`] so that numbers below it
//! (a Linux binary's `syscall`s, say) are never mistaken for kernel calls:
//! the kernel reflects those to the environment's registered handler.

/// First kernel system-call number.
pub const BASE: u64 = 0x1_0000;

/// Write `len` bytes at `ptr` to the console. Returns `len`.
pub const DEBUG_WRITE: u64 = BASE;
/// Read up to `len` bytes of console input into `ptr` without blocking.
/// Returns the number of bytes read (0 when none are waiting).
pub const CONSOLE_READ: u64 = BASE + 1;
/// `frame_alloc(owner, frame, cred)`: allocate physical frame number
/// `frame` (or any free frame if `frame == FRAME_ANY`), charged to
/// environment `owner`, which `cred` must cover. Returns the frame number.
pub const FRAME_ALLOC: u64 = BASE + 2;
/// `frame_free(frame, cred)`: free a frame whose owner `cred` covers. The
/// frame must not be mapped anywhere.
pub const FRAME_FREE: u64 = BASE + 3;
/// `map(env, va, frame, flags, env_cred, frame_cred)`: map `frame` at
/// page-aligned `va` in `env`'s address space. `env_cred` must cover `env`;
/// `frame_cred` must cover the frame's owner or its share guard (with the
/// write right for a writable mapping).
pub const MAP: u64 = BASE + 4;
/// `unmap(env, va, cred)`: remove the mapping at `va` in `env`'s address
/// space.
pub const UNMAP: u64 = BASE + 5;
/// `protect(env, va, flags, cred)`: change the rights of the mapping at
/// `va`; `cred` must cover `env`, and making the page writable also needs
/// it to cover the frame with the write right (as `map` would).
pub const PROTECT: u64 = BASE + 6;
/// `env_create(cred)`: create a child environment with an empty address
/// space, not yet runnable; `cred` must cover the caller with the grant
/// right. Returns its id.
pub const ENV_CREATE: u64 = BASE + 7;
/// `env_destroy(env, cred)`: destroy `env` (not the caller) and everything
/// created under it, reclaiming all of their frames.
pub const ENV_DESTROY: u64 = BASE + 8;
/// `env_set_regs(env, &Regs, cred)`: set another environment's saved
/// registers.
pub const ENV_SET_REGS: u64 = BASE + 9;
/// `env_get_regs(env, &mut Regs, cred)`: read another environment's saved
/// registers (`cred` needs the read right).
pub const ENV_GET_REGS: u64 = BASE + 10;
/// `env_run(env, cred)`: make a stopped environment runnable.
pub const ENV_RUN: u64 = BASE + 11;
/// `set_exception_handler(env, entry, stack_top, save_area, cred)`: where
/// the kernel delivers `env`'s exceptions (see [`crate::exception`]).
/// `entry == 0` removes the handler.
pub const SET_EXCEPTION_HANDLER: u64 = BASE + 12;
/// Give up the rest of the current time slice.
pub const YIELD: u64 = BASE + 13;
/// `exit(code, parent_bits, cred)`: end the calling environment. Its frames
/// and descendants are reclaimed at once; its slot stays, with the code,
/// until the parent destroys it. Non-zero `parent_bits` are then ORed into
/// the parent's queued interrupts, as a `PCT_INTERRUPT` sent after the end
/// without taking the CPU (a UNIX child's SIGCHLD: the parent must find it
/// ended), if the parent has a handler and its entry's guard admits `cred`;
/// otherwise they are dropped.
pub const EXIT: u64 = BASE + 14;
/// Returns the caller's own environment id.
pub const SELF_ID: u64 = BASE + 15;
/// `shutdown(code, cred)`: power the machine off with an exit code; `cred`
/// must cover the first environment.
pub const SHUTDOWN: u64 = BASE + 16;

/// `map_from(env, va, src_va, flags, cred)`: map the frame the caller has
/// at its own `src_va` into `env` (which `cred` covers) at `va`, with
/// `flags` no wider than the caller's own rights there. This is how a
/// process passes on pages it can use but does not own (shared memory it
/// inherited, copy-on-write pages at fork).
pub const MAP_FROM: u64 = BASE + 17;

/// `slice_alloc(env, position, cred)`: give `env` the time slice at
/// `position` in the slice vector, or any free one if
/// `position == SLICE_ANY`. Returns the position.
pub const SLICE_ALLOC: u64 = BASE + 18;
/// `slice_free(position, cred)`: free a slice whose owner `cred` covers.
pub const SLICE_FREE: u64 = BASE + 19;
/// `yield_to(env)`: give the rest of the current slice to `env` (directed
/// yield). It must be runnable, or asleep with its predicate now true or
/// its deadline passed (it wakes, as it would at its next slice).
pub const YIELD_TO: u64 = BASE + 20;
/// `set_pct_entry(env, entry, stack, guard, cred)`: where protected
/// control transfers into `env` start (`entry == 0` closes it). Callers must
/// present a capability dominating the one in the caller's slot `guard`
/// (`NO_GUARD`: anyone may call): the callee decides who may call it.
pub const SET_PCT_ENTRY: u64 = BASE + 21;
/// `pct(target, flags)`: protected control transfer into `target`
/// (paper 001 §4.6). The registers `rdx r8 r9 r10 rbx rbp r12-r15` are the
/// message and reach the target untouched; `rax` holds the caller's id on
/// arrival. If `target` awaits a reply from the caller, it resumes where it
/// called; otherwise it starts at its entry point on its entry stack.
/// `flags & PCT_SYNC`: synchronous — the caller waits for the reply and its
/// slices run the target meanwhile; otherwise asynchronous — only the rest
/// of this slice is donated. `pct_cred(slot)` in `flags` names the
/// credential for the entry's guard; `pct_grant(slot)` copies a capability
/// into the callee's list, whose slot arrives in `rcx` (`u64::MAX` if none).
pub const PCT: u64 = BASE + 22;
/// `cap_derive(slot, rights)`: a new capability derived from the caller's
/// `slot` with a subset of its rights (it needs the grant right). Returns
/// the new slot.
pub const CAP_DERIVE: u64 = BASE + 23;
/// `cap_revoke(slot, env, cred)`: revoke the capability in `env`'s `slot`
/// (`ENV_SELF`: the caller's own list; another environment's needs `cred`
/// covering it, as a lender taking back a loan) and everything derived from
/// it, in every environment's list. Returns how many were revoked.
/// Environments' own root capabilities cannot be revoked.
pub const CAP_REVOKE: u64 = BASE + 24;
/// `cap_grant(env, slot, cred)`: lend the caller's capability `slot` (which
/// needs the grant right) to `env`: a capability derived from it, with its
/// rights and its authority, lands in `env`'s list, so the receiver can
/// revoke only that loan and the lender can take it back. Returns the slot
/// there.
pub const CAP_GRANT: u64 = BASE + 25;
/// `frame_share(frame, slot, cred)`: guard `frame` additionally with the
/// caller's capability `slot` (`NO_GUARD` removes it): whoever holds a
/// capability dominating it may map the frame with that capability's
/// rights. `cred` must cover the frame's owner.
pub const FRAME_SHARE: u64 = BASE + 26;

/// `slice_upcalls(env, mode, cred)`: deliver (or stop delivering) slice
/// upcalls to `env`'s exception handler. Mode 1 (`UPCALLS_BOTH`):
/// start-of-slice and end-of-slice upcalls; the environment saves its own
/// state and must yield when its slice ends (the abort protocol applies).
/// Mode 2 (`UPCALLS_STARTS`): start-of-slice upcalls only, a promise of
/// nothing (a library that only wants to look at its clocks when it runs).
/// Mode 0: none. Other modes: `BadFlags`.
pub const SLICE_UPCALLS: u64 = BASE + 27;
/// `slice_upcalls` modes.
pub const UPCALLS_OFF: u64 = 0;
pub const UPCALLS_BOTH: u64 = 1;
pub const UPCALLS_STARTS: u64 = 2;

/// `frames_reclaim(env, n, cred)`: ask `env` to give back `n` frames (a
/// `REVOKE_REQUEST` upcall). If it has not within two ticks, the kernel
/// repossesses what is missing by force — never below
/// `GUARANTEED_FRAMES` — and tells it (`REPOSSESSED`).
pub const FRAMES_RECLAIM: u64 = BASE + 28;
/// `set_repossession_vector(env, va, cred)`: the page-aligned, writable
/// page where the kernel lists `env`'s repossessed frames (0 removes it).
pub const SET_REPOSSESSION_VECTOR: u64 = BASE + 29;

/// `pred_install(insns, n, regions, nregions, cred)`: hand the kernel a
/// wakeup predicate (paper 000 §5.1): `n` eBPF instructions at `insns`, over
/// up to four regions of the caller's memory described by `nregions`
/// [`Region`]s at `regions` (each within one page the caller can read; the
/// kernel keeps those frames while the predicate exists). The kernel
/// verifies it (`BadProgram` if unsafe; the console says why), compiles it
/// to native code (identical predicates share one compilation), and returns
/// its id. The program gets a [`PredicateContext`] as its context (`r1`) and
/// reads region `i` with `ld_imm64 rX, i` (`src = 2`).
pub const PRED_INSTALL: u64 = BASE + 30;
/// `pred_free(id)`: remove one of the caller's predicates.
pub const PRED_FREE: u64 = BASE + 31;
/// `sleep(pred, deadline)`: do not run the caller until predicate `pred` is
/// true (evaluated when one of its slices comes round) or the clock reaches
/// tick `deadline` (0: no deadline). Returns 1 if the predicate held, 0 on
/// the deadline.
pub const SLEEP: u64 = BASE + 32;

/// `map_from_range(env, va, src, pages, flags, cred)`: `map_from` for
/// `pages` consecutive pages (at most `RANGE_MAX`); source pages the caller
/// has not mapped are skipped. Everything is checked before anything
/// changes. Returns how many pages were mapped. Source and destination may
/// not overlap in one address space (`BadAddress`). (Batching the mapping
/// calls of a library fork, paper 000 §5.2.1.) The source may also be
/// pages of the boot file system's window (`layout::BOOTFS_VA`, up to
/// `KernelInfo::bootfs_size` rounded up to a page; beyond it `BadAddress`):
/// mapped read-only (`NotPermitted` for `WRITE`), executable if asked, so
/// a library maps a boot file's pages instead of copying them.
pub const MAP_FROM_RANGE: u64 = BASE + 33;
/// `protect_range(env, va, pages, flags, cred)`: `protect` for `pages`
/// consecutive pages (at most `RANGE_MAX`); unmapped pages are skipped.
/// Everything is checked before anything changes. Returns how many pages
/// changed.
pub const PROTECT_RANGE: u64 = BASE + 34;

/// `env_publish(env, word, cred)`: set the word `env` shows everyone in its
/// entry of the exposed environment table (`EnvInfo::published`); `cred`
/// must cover `env`, so only it and its ancestors can change it. (A library
/// OS names its per-process data there, e.g. the frame holding its
/// process-table entry.)
pub const ENV_PUBLISH: u64 = BASE + 35;
/// `interrupts_take()`: returns the caller's queued interrupt bits (see
/// [`PCT_INTERRUPT`]) and clears them, for a handler that was busy when
/// they came.
pub const INTERRUPTS_TAKE: u64 = BASE + 36;
/// `console_notify(env, bits, cred)`: while console input waits unread,
/// the kernel ORs `bits` into `env`'s queued interrupts at each tick (as a
/// `PCT_INTERRUPT` from the kernel, sender id 0), so a program spinning
/// without system calls still learns of a keystroke such as Ctrl-C. The
/// console is the first environment's: `cred` must cover it. `bits == 0`
/// stops the notifications.
pub const CONSOLE_NOTIFY: u64 = BASE + 37;

/// `env_stop(env, cred)`: hold `env` and its whole subtree (paper 003
/// §3.1.2): nothing in it runs until `env_run` releases each. A held
/// environment keeps what it was doing (`EnvState::run`). Not the caller.
pub const ENV_STOP: u64 = BASE + 38;
/// `env_state_get(env, &mut EnvState, cred)`: a held environment's whole
/// state (see [`crate::nest::EnvState`]); `cred` needs the read right.
pub const ENV_STATE_GET: u64 = BASE + 39;
/// `env_state_set(env, &EnvState, cred)`: give a held environment (the
/// same or another) that state. Every field is checked before any changes.
pub const ENV_STATE_SET: u64 = BASE + 40;
/// `env_mappings(env, start_va, buf, n, cred)`: up to `n`
/// [`crate::nest::Mapping`]s of `env`'s address space at or above
/// `start_va`, in address order. Returns how many were written.
pub const ENV_MAPPINGS: u64 = BASE + 41;
/// `env_caps(env, buf, n, cred)`: up to `n` [`crate::nest::CapInfo`]s, one
/// per capability in `env`'s list. Returns how many were written.
pub const ENV_CAPS: u64 = BASE + 42;
/// `interpose(env, on, cred)`: with `on == 1`, `env`, its subtree and every
/// environment later created in it stop at each system call (kernel or
/// foreign) and each exception before the kernel acts on it, and after each
/// kernel call let through, held with the event as `EnvState::event`
/// (see [`crate::nest::event`]) until `intercept_answer`; `on == 0` ends it.
pub const INTERPOSE: u64 = BASE + 43;
/// `intercept_answer(env, mode, value, cred)`: answer the held call of an
/// interposed environment: `answer::PASS` lets the kernel carry it out,
/// `answer::RETURN` makes it return `value`. The environment runs again.
pub const INTERCEPT_ANSWER: u64 = BASE + 44;

/// `env_limit(env, frames, slices, cred)`: hierarchical resource limits.
/// The frames charged to `env`'s whole subtree (user frames, page tables,
/// its descendants' frames) may not exceed `frames`, nor the time slices
/// its subtree owns `slices` (`NO_LIMIT`: no limit); what would exceed
/// either fails with `OverQuota`. Every ancestor's limits apply too, so a
/// subtree cannot escape its parent's by setting its own. Not the caller.
pub const ENV_LIMIT: u64 = BASE + 45;

/// `intercept_wait(root, &mut Event, env, mode, value, cred)`: an
/// interposer's loop in one call (paper 003 §3.2). First, if `env` is not
/// 0, answers its held event as `intercept_answer(env, mode, value, cred)`
/// would (an error there returns at once, having changed nothing). Then
/// waits for the next event for the caller of an environment in `root`'s
/// subtree (`root` a proper descendant of the caller), writes it to the
/// buffer and returns the held environment's id; returns 0, writing
/// nothing, once `root` has ended. While it waits the caller shows
/// `WAITING` on nobody; it runs in the slice of the environment whose event
/// wakes it.
pub const INTERCEPT_WAIT: u64 = BASE + 46;

/// `env_cap_copy(from, slot, to, cred)`: recreate capability `slot` of
/// `from`'s list in the same slot of held `to`'s, relative to `to` (paper
/// 003 §3.1.3): a loan is lent again; a capability derived from `from`'s
/// own root is derived from `to`'s with the same rights, one derived from
/// another capability of `from`'s list from what `to` holds in that slot
/// (copy it first: `BadState` otherwise, as when the slot in `to` is taken
/// or `to` is not held). `from`'s own root is not copied (`NotPermitted`).
pub const ENV_CAP_COPY: u64 = BASE + 47;

/// `env_create_shared(space, cred)`: create a stopped environment that
/// runs over the page tables of `space` (or of the environment whose
/// tables `space` shares): a thread of that address space, scheduled on
/// its own, with its own registers and exception entry, acting with the
/// owner's capability list; predicates it installs are the owner's too, so
/// every thread of the space may sleep on them. It is a child of the
/// tables' owner, which `cred` must cover with the grant right, and ends
/// before the owner does; the tables go with the owner. Returns its id.
pub const ENV_CREATE_SHARED: u64 = BASE + 48;

/// `env_create_in(parent, id, cred)`: `env_create` on behalf of `parent`,
/// an environment `cred` covers with the grant right (the caller or one of
/// its descendants): a stopped child of `parent` with an empty address
/// space, charged to `parent` (and within its limits). A restorer rebuilds
/// a saved subtree with it (paper 003 §5.4). With `id` not 0 the child
/// takes that id again: it must be the last id of a slot that is free now,
/// whose environment was a child of one with `parent`'s id (`BadState`
/// otherwise; `BadEnv` if it is no id). Returns the new id.
pub const ENV_CREATE_IN: u64 = BASE + 49;

/// `env_pred_get(env, from, info, insns, n, cred)`: `env`'s first wakeup
/// predicate with id `from` or above (`cred` covering `env` with the read
/// right): its record (`abi::nest::PredInfo`) written at `info`, its
/// instructions at `insns` (room for `n`; `BadLength` if they do not fit,
/// nothing written). Returns its id, or `BadState` if it has none from
/// `from` on.
pub const ENV_PRED_GET: u64 = BASE + 50;

/// `env_pred_install(env, info, insns, cred)`: `pred_install` for `env`
/// (`cred` covering it with the write right): the predicate of
/// `info.insns` instructions at `insns` (the caller's memory) over
/// `info.regions` (in `env`'s memory), owned by `env`, with id `info.id`
/// (`BadState` if that id is taken) or any (`PRED_ANY`). Returns its id.
/// A restorer recreates a saved environment's predicates with it, under
/// the same ids, so a sleep on one and ids kept in memory stay true.
pub const ENV_PRED_INSTALL: u64 = BASE + 51;

/// `env_cap_derive(to, slot, from, rights, cred)`: in held `to`'s empty
/// `slot` (`cred` covering `to` with the write right), a capability derived
/// from the one in `to`'s own slot `from` with `rights` (a subset of its,
/// which must include grant). `BadState` if `to` is not held or `slot` is
/// taken. A restorer rebuilds a saved list with it, in the order of
/// `CapInfo::from`.
pub const ENV_CAP_DERIVE: u64 = BASE + 52;

/// `dev_info(dev, info, cred)`: what device `dev` (`dev::BLOCK`,
/// `dev::NET`) is, written to `info` (a `dev::DevInfo`); `cred` must
/// dominate the device capability (slot `CRED_DEVICES` of the first
/// environment) with the read right. `NoDevice` if there is none or its
/// driver was disabled.
pub const DEV_INFO: u64 = BASE + 53;

/// `blk_read(frame, offset, len, sector, done, cred)`: starts reading
/// `len` bytes (whole sectors) from `sector` into bytes `offset..offset +
/// len` of `frame`, which the caller holds (its own or a descendant's);
/// `done` is the address of a writable, 8-byte-aligned completion word of
/// the caller's (`dev::DONE`). `cred` must dominate the device capability
/// with the write right. Returns at once; the frame and the word stay
/// pinned until the request ends.
pub const BLK_READ: u64 = BASE + 54;

/// `blk_write(frame, offset, len, sector, done, cred)`: as `blk_read`,
/// from the frame to the disk.
pub const BLK_WRITE: u64 = BASE + 55;

/// `net_send(frame, offset, len, done, cred)`: transmits the Ethernet
/// frame in bytes `offset..offset + len` (14..1514) of `frame`.
pub const NET_SEND: u64 = BASE + 56;

/// `net_recv(frame, offset, len, done, cred)`: posts bytes
/// `offset..offset + len` (at least 1514) of `frame` for a received frame:
/// the next one the device delivers is copied there and `done` ends with
/// its length. Buffers are filled in the order they were posted.
pub const NET_RECV: u64 = BASE + 57;

/// `dev_ping(dev, count, cred)`: crosses into `dev`'s driver `count` times
/// (1..=100000) with a request it refuses at once: the driver answers (and
/// the crossing's cost, `xpc` in the benchmarks). Returns `count`.
pub const DEV_PING: u64 = BASE + 58;

/// `dev_inject(dev, fault, arg, done, cred)`: fault injection into `dev`'s
/// driver (`dev::inject`), in kernels built with the `inject` feature;
/// `NoSuchCall` in every other kernel. Returns 1 when the driver was
/// stopped, 0 when the fault is armed or in flight (then `done` ends).
pub const DEV_INJECT: u64 = BASE + 59;

/// XN, protected disk blocks for library file systems (`docs/xn.md`,
/// `crate::xn` for the argument layouts). `cred` names the capability the
/// call acts with: one dominating the device capability acts as uid 0, one
/// made by `xn_identity` as its uid and gid, any other as nobody
/// (65534); or it is `XN_SELF`, the caller's own effective uid and gid as
/// the kernel holds them (`ident_get`). Every call answers `NoDevice` when
/// no XN disk is mounted.
///
/// XN's `cred` meaning "act as my effective uid and gid" (not a slot).
/// Installing templates and roots and `xn_identity` refuse it
/// (`NotPermitted`): they need the device capability.
pub const XN_SELF: u64 = 1 << 32;
/// `xn_info(info)`: the disk's size, the registry's, request counts
/// (`xn::Info`).
pub const XN_INFO: u64 = BASE + 60;
/// `xn_install(specs, n, cred)`: installs `n` templates (`xn::TemplateSpec`)
/// as one group in the persistent type catalogue; returns the first id.
pub const XN_INSTALL: u64 = BASE + 61;
/// `xn_template(name, len)`: the id of the template named so.
pub const XN_TEMPLATE: u64 = BASE + 62;
/// `xn_root_add(req, cred)`: adds a root catalogue entry (`xn::RootAdd`);
/// the caller's frames become its cached blocks. Returns its index.
pub const XN_ROOT_ADD: u64 = BASE + 63;
/// `xn_root_find(name, len, root)`: the root's index; its extent and
/// template written to `root` (`xn::Root`).
pub const XN_ROOT_FIND: u64 = BASE + 64;
/// `xn_read(parent, start, frames, count, cred)`: read and insert: XN
/// reads `count` blocks from `start`, which `parent` claims with one
/// template, into the caller's frames (`frames` points to their numbers;
/// each unmapped), which from then on belong to the cache and are
/// reached only through `xn_bind`.
pub const XN_READ: u64 = BASE + 65;
/// `xn_insert(parent, block, frame, cred)`: installs a block allocated and
/// never written, with `frame`'s contents (write rights needed).
pub const XN_INSERT: u64 = BASE + 66;
/// `xn_bind(parent, block, va, write, cred)`: the access check (the
/// parent's `acl`), then maps the cached block at `va` in the caller
/// (writable only for a data block and `write`).
pub const XN_BIND: u64 = BASE + 67;
/// `xn_modify(req, cred)`: the checked metadata change (`xn::Modify`).
pub const XN_MODIFY: u64 = BASE + 68;
/// `xn_write(start, count)`: writes cached blocks back, one request;
/// anyone may, unless another holds a block's lock; refused if tainted.
pub const XN_WRITE: u64 = BASE + 69;
/// `xn_flush()`: flushes the disk's write cache: every write completed
/// before is durable; the will-free list is settled.
pub const XN_FLUSH: u64 = BASE + 70;
/// `xn_lock(block)`, `xn_unlock(block)`: the registry entry's lock.
pub const XN_LOCK: u64 = BASE + 71;
pub const XN_UNLOCK: u64 = BASE + 72;
/// `xn_evict(block)`: a clean, unlocked block leaves the cache; its frame
/// goes back to the environment that put it there (or is freed).
pub const XN_EVICT: u64 = BASE + 73;
/// `xn_claims(block, out, max)`: what `owns` says a cached or traversed
/// metadata block claims (`xn::Claim`s, at most `max` written); returns
/// how many there are.
pub const XN_CLAIMS: u64 = BASE + 74;
/// `xn_parent(block)`: the parent XN records for a metadata block
/// (`xn::ROOT | index`, or a block).
pub const XN_PARENT: u64 = BASE + 75;
/// `xn_identity(uid, gid, cred)`: a new capability, in the caller's list
/// (the slot is returned), that XN's calls take as `uid` and `gid`; `cred`
/// must dominate the device capability. Lend it on with `cap_grant`.
pub const XN_IDENTITY: u64 = BASE + 76;

/// `net_attach(va, slots, slot_size, guard, cred)`: makes a packet
/// endpoint (`docs/network.md`) over two packet rings in the caller's
/// memory: the receive ring at page-aligned `va`, the transmit ring at the
/// next page after it (`abi::net::ring_pages`), both with `slots` slots
/// of `slot_size` bytes. Every page must be mapped user-writable; the
/// kernel pins their frames until the endpoint goes. Whoever presents a
/// capability dominating the caller's `guard` slot may use the endpoint;
/// `cred` must cover the caller with the write right. Returns its id.
pub const NET_ATTACH: u64 = BASE + 77;
/// `net_detach(ep, cred)`: removes the endpoint, its filters, its pins.
pub const NET_DETACH: u64 = BASE + 78;
/// `net_filter(ep, insns, n, cred)`: installs the eBPF packet filter of
/// `n` instructions at `insns` for endpoint `ep`: frames it claims go into
/// `ep`'s receive ring. Refused (`Claimed`) if it could claim a frame a
/// filter of another endpoint claims, unless that one consented. Returns
/// the filter's id.
pub const NET_FILTER: u64 = BASE + 79;
/// `net_unfilter(ep, filter, cred)`: removes one of `ep`'s filters.
pub const NET_UNFILTER: u64 = BASE + 80;
/// `net_consent(ep, filter, grantee, on, cred)`: lets endpoint `grantee`
/// (`NET_ANYONE`: every endpoint) install filters overlapping `ep`'s
/// `filter` (frames in the overlap go to both); `on == 0` takes it back
/// and removes the filters it allowed (returns how many).
pub const NET_CONSENT: u64 = BASE + 81;
/// `net_tx(ep, max, cred)`: sends up to `max` frames waiting in `ep`'s
/// transmit ring. Each is copied out of the ring and checked: its source
/// MAC must be the NIC's and `ep`'s filters must claim its mirror (the
/// reply), or it is refused and counted (`RingHeader::damaged`). Returns
/// how many frames were taken (sent or refused); frames stay in the ring
/// while the driver has no room.
pub const NET_TX: u64 = BASE + 82;
/// `net_stats(ep, out, cred)`: writes an `abi::net::NetStats` (the
/// machine's counters and `ep`'s) at `out`.
pub const NET_STATS: u64 = BASE + 83;
/// The grantee of `net_consent` that means every endpoint.
pub const NET_ANYONE: u64 = u64::MAX;

/// `env_move(env, to, cred)`: moves `env` and its subtree under `to`, a
/// proper ancestor of `env`'s parent (so `to` already dominated it: no
/// authority is made; the environments between lose theirs). `cred` must
/// cover `env` with the write right. A UNIX library gives a dying
/// process's children to init with it, so the process ends at once. Its
/// guard moves under `to`'s in the capability tree, so it outlives its old
/// parent. Refused: `BadEnv` if `env` is no id, is the caller, has no
/// parent or `to` is not such an ancestor (or is exited); `NotPermitted`
/// if `env` shares another's page tables (a thread moves with its owner)
/// or an environment between `to` and `env` limits its subtree or
/// interposes on `env` (a move may not escape either).
pub const ENV_MOVE: u64 = BASE + 84;

/// `env_exit_bits(env, bits, cred)`: whenever `env` ends on its own or by
/// the kernel's hand (it calls `exit`, faults with no handler free, is
/// destroyed by the abort protocol), interrupt `bits` are queued for its
/// parent, the environment that asked, if the parent has a handler (0:
/// none, the default). `cred` must cover `env` with the write right, and
/// the caller must be `env`'s parent (`NotPermitted`). A library learns
/// that a thread it made has died however it died (and ends it as a Linux
/// thread ends), or that a child process the kernel killed is a zombie.
pub const ENV_EXIT_BITS: u64 = BASE + 85;

/// `ident_get(env, out)`: writes environment `env`'s identity (0: the
/// caller's; a thread's is its address space owner's) at `out`, an
/// `abi::ident::Ident`. Anyone may read anyone's (Linux shows every
/// process's ids in `/proc`). `BadEnv` for no live environment.
pub const IDENT_GET: u64 = BASE + 86;
/// `ident_set(new)`: makes the `abi::ident::Ident` at `new` the caller's
/// (its address space owner's, so every thread's). An effective uid 0 may
/// set anything; any other caller may only rearrange the uids and gids it
/// holds (each new one among its real, effective and saved ones, Linux's
/// `setresuid` rule) and keep its groups: else `NotPermitted`, and
/// `BadLength` for more than `NGROUPS` groups. Nothing changes on failure.
pub const IDENT_SET: u64 = BASE + 87;
/// `xn_copy(parent, dst, src, count, cred)`: XCP's write (paper 000
/// §7.2): the cache pages of blocks `src..src + count` (cached, bound to
/// the caller, not locked by another) written to the blocks `dst..dst +
/// count`, data blocks `parent` claims whose `acl` lets `cred` write them
/// and not cached, in one request; the data never passes through the
/// caller. Ordered as any write: the copies are durable after a flush.
pub const XN_COPY: u64 = BASE + 88;
/// `section_holds(env)`: whether environment `env` holds a library lock
/// as the kernel vouches for it (robust critical sections, paper 000
/// §3.3): 1 if its exception save area's `critical::HOLDS` bit is set and
/// it is running, runnable or waiting for a reply, and has not run more
/// than `SECTION_TICKS` ticks in a row holding it; else 0. A holder found
/// asleep, stopped or over its bound is *broken*: the kernel clears its
/// `HOLDS` and sets `BROKEN` in its save area. `BadEnv` for no live
/// environment (nothing changes).
pub const SECTION_HOLDS: u64 = BASE + 89;
/// `frame_disown(frame, cred)`: the owner (or an ancestor: `cred` covers
/// the owner, with the write right) lets go of `frame`: freed now if
/// nothing maps it, else ownerless, charged to no one, and freed with its
/// last mapping (as when its owner ends). A library gives away the frames
/// of an object the processes sharing it keep mapped (a pipe's, whose last
/// holder may be any of them). `NotOwner` for an ownerless frame.
pub const FRAME_DISOWN: u64 = BASE + 90;

/// `unmap_range(env, va, pages, cred)`: `unmap` for `pages` consecutive
/// pages from page-aligned `va` (1 to `RANGE_MAX`, all below the reserved
/// windows: `BadLength`, `BadAddress`); pages not mapped are skipped, as
/// Linux's `munmap` skips holes. Every argument is checked before anything
/// changes, and past the checks nothing can fail: the call removes every
/// mapping of the range or, on error, none. Returns how many pages were
/// mapped. The page tables are walked once per leaf table and the TLB is
/// flushed once. (Exec's removal of the old image and `munmap`, issue 26.)
pub const UNMAP_RANGE: u64 = BASE + 91;

/// `map_fresh(env, va, pages, flags, cred)`: `frame_alloc` and `map` for
/// `pages` consecutive pages from page-aligned `va` (1 to `RANGE_MAX`, all
/// below the reserved windows: `BadLength`, `BadAddress`): each gets a new
/// zeroed frame charged to `env`, which `cred` must cover, mapped with
/// `flags` (the tables charged as `map`'s). A page already mapped in the
/// range is `AlreadyMapped`; too few free frames for the pages and the
/// tables they need is `NoMemory` (`OverQuota` under a quota). Every
/// argument is checked before anything changes, and past the checks
/// nothing can fail. Returns `pages`. (A program's stack at spawn: 64
/// pages had cost two calls each, issue 26.)
pub const MAP_FRESH: u64 = BASE + 92;

/// `hand_over(env, src, len, key)`: copy up to `len` bytes (1 to
/// `exception::handover::MAX`: `BadLength`) from the caller's `src` straight
/// into the buffer that `env`'s hand-over record names (the
/// `exception::Handover` right after its exception save area, which its
/// owner opened: a read waiting for bytes), as many as both lengths allow;
/// the record then holds the count and is `DONE`, so nothing more goes in.
/// Refused with `BadEnv` (no such environment), `NotPermitted` (the caller
/// itself, or a caller that does not map the frame `env` maps at the
/// page of `key`: only a holder of the same pipe fills it), `BadState` (ended, no
/// save area, no open record, or one whose key is not `key`: the caller
/// writes to another pipe than the one read) and `BadPointer` (a
/// page of the buffer not mapped writable for `env`, or of `src` not
/// readable for the caller); a refusal copies nothing and leaves the
/// record as it was. Returns the bytes copied. (A pipe's write into a
/// reader blocked on its empty ring: one copy instead of two, issue 26.)
pub const HAND_OVER: u64 = BASE + 93;

/// `xn_bind_run(parent, start, count, va, write, cred)`: `xn_bind` for a
/// run: the cached blocks `start..start + count` (1 to `xn::MAX_RUN`,
/// `BadLength`), all claimed by `parent` with one template (`NotClaimed`),
/// mapped at `va`, `va + 4096`, ... (user pages, `BadAddress`; each
/// unmapped, `AlreadyMapped`); each must be cached (`NotCached`). The
/// claim is looked up and the parent's `acl` asked once per call
/// (`Denied`); writable only for data and `write` (`ReadOnly`; `write`
/// above 1: `BadFlags`). A refusal binds and maps none.
pub const XN_BIND_RUN: u64 = BASE + 94;

/// `frame_range(op, ...)`: capabilities that name frames (issue 25;
/// `frame_range::MAKE`, `CLAIM`, `MAP`, `DROP`, `HOLD`, `UNHOLD`, `RULE`, `KEEP`;
/// kernel `ranges.rs`).
pub const FRAME_RANGE: u64 = BASE + 95;

/// `frame_range`'s operations.
pub mod frame_range {
    /// `(MAKE, va, pages, cred, owner, mode)`: a range over the frames the
    /// caller maps at `pages` pages from `va` (1 to `RANGE_FRAMES`:
    /// `BadLength`; user pages: `BadAddress`; each mapped: `NotMapped`),
    /// each a user frame whose owner `cred` covers with the write right
    /// (`NotOwner`, `NotPermitted`), with no share guard yet and named once
    /// (`BadState`). Its rule: `owner` (uid in the low 32 bits, gid above;
    /// `OWNER_SELF` for the caller's effective ids) and `mode` (a file's
    /// `rw-rw-rw-` bits, `MODE_BITS`: `BadFlags`), which `CLAIM` judges.
    /// Only root names another uid, or a gid not its effective or one of
    /// its groups (`NotPermitted`, as `chown`). Each frame's share guard
    /// becomes the range's own capability root. Returns the range's ticket
    /// (index in the low `KEY_SHIFT` bits, a key the kernel chose above).
    /// `NoMemory` when the kernel holds as many live ranges as it can (one
    /// none of whose frames lives, held by no message, is swept then);
    /// `OverQuota` when the caller's effective uid, not root, is charged
    /// with its share already (a quarter of the table).
    pub const MAKE: u64 = 0;
    /// `(CLAIM, ticket, rights)`: a loan of the range's capability with
    /// `rights` (`cap` bits: `BadFlags`) in the caller's list; returns the
    /// slot. A wrong key, or a range whose frames are gone, is
    /// `NotPermitted`; an index past the table `BadLength`; a full list
    /// `NoMemory`. Unless a message holds the range (`HOLD`: the ticket
    /// travels, and whoever the message reaches may claim), the caller's
    /// identity must pass the rule for `rights` (`READ` needs the `r` bit
    /// of its class, `WRITE` the `w` bit; root passes): `Denied`.
    pub const CLAIM: u64 = 1;
    /// `(MAP, slot, va, first, pages, flags)`: maps frames `first ..
    /// first + pages` of the range that capability `slot` names at `va` in
    /// the caller's space with `flags` (`map`'s). `NotPermitted` for a
    /// stale capability, one without the rights `flags` need, or a range
    /// one of whose frames is gone; `NotOwner` for a capability that names
    /// no range; `BadLength` for pages outside the range; `BadAddress`,
    /// `AlreadyMapped` for the destination. All or nothing.
    pub const MAP: u64 = 2;
    /// `(DROP, ticket, va)`: ends the range (`CLAIM`'s errors for the
    /// ticket; the caller must map its first frame at `va`, as `HOLD`'s):
    /// its capability and every loan of it are revoked, the frames lose
    /// their share guard and the counts its holds kept (freed with their
    /// last mapping, if ownerless).
    pub const DROP: u64 = 3;
    /// `(HOLD, ticket, va)`: a message carrying the ticket is in flight:
    /// each frame counts one more mapping, so it outlives every mapping
    /// until `UNHOLD` (`CLAIM`'s errors; `NotPermitted` if a frame is gone,
    /// `NoMemory` past a frame's count). Only a holder passes a range on:
    /// the caller must map the range's first frame at `va` (`NotMapped`,
    /// or `Denied` for another frame), so a ticket read elsewhere cannot
    /// open the range to everyone.
    pub const HOLD: u64 = 4;
    /// `(UNHOLD, ticket, va)`: the message was taken: one hold's counts go
    /// (`BadState` if the range is not held). As for `HOLD`, the caller
    /// must map the range's first frame at `va` (`BadAddress`,
    /// `NotMapped`, `Denied`): a ticket read elsewhere cannot let the
    /// frames of an end in flight go.
    pub const UNHOLD: u64 = 5;
    /// `(RULE, ticket, owner, mode)`: gives the range a new rule, as
    /// `chmod` and `chown` change a file's bits (a bound socket's inbox
    /// follows its file, `obj/inbox.rs`): only root or the rule's owner
    /// (its effective uid) may (`Denied`), and the new owner and mode are
    /// judged as `MAKE`'s (`NotPermitted`, `BadFlags`; `CLAIM`'s errors for
    /// the ticket). A refused call changes nothing; loans already claimed
    /// stay.
    pub const RULE: u64 = 6;
    /// `(KEEP, ticket, va)`: the range outlives every mapping until `DROP`
    /// (each frame counts one more mapping), as if held, but `CLAIM` still
    /// judges the rule: for an object kept by name while no process maps
    /// it (a System V message queue or semaphore set). Once per range
    /// (`BadState` after); `CLAIM`'s errors for the ticket, `HOLD`'s for
    /// the caller and the frames.
    pub const KEEP: u64 = 7;
    /// Frames one range can name.
    pub const RANGE_FRAMES: usize = 32;
    /// `MAKE`'s owner: the caller's effective uid and gid.
    pub const OWNER_SELF: u64 = u64::MAX;
    /// `MAKE`'s mode bits: read and write for owner, group and others.
    pub const MODE_BITS: u64 = 0o666;
    /// A ticket's index bits.
    pub const KEY_SHIFT: u32 = 16;
}

/// `xn_dirty(start, count)`: the caller stored into the cached data
/// blocks `start..start + count` through its writable bindings (the
/// kernel does not see stores into a mapping): they become dirty in the
/// registry, so any write-back (a `sync`, the periodic one) writes them,
/// after the caller has gone too. Each must be cached (`NotCached`),
/// bound writable to the caller (`NotPermitted`: metadata never is) and
/// not locked by another (`Locked`); 1 to `xn::MAX_RUN` blocks
/// (`BadLength`). A refusal marks none.
pub const XN_DIRTY: u64 = BASE + 96;

/// One past the last kernel call.
pub const END: u64 = BASE + 97;

/// Ticks of its own running an environment may spend holding a library
/// lock in a row (`SECTION_HOLDS`): 2 s at the kernel's 2 ms tick.
pub const SECTION_TICKS: u32 = 1000;

/// `env_limit`: no limit.
pub const NO_LIMIT: u64 = u64::MAX;

/// Most pages one range call covers.
pub const RANGE_MAX: u64 = 4096;

/// A region of memory a wakeup predicate reads.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Region {
    pub va: u64,
    pub len: u64,
}

/// What a wakeup predicate's context register points to.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct PredicateContext {
    /// The clock, in ticks.
    pub ticks: u64,
    /// The sleeping environment's id.
    pub env: u64,
}

/// Most regions one predicate may read.
pub const PRED_REGIONS: usize = 5;
/// Most instructions in one predicate.
pub const PRED_MAX_INSNS: u64 = 4096;

/// User frames no environment is ever forced below.
pub const GUARANTEED_FRAMES: u64 = 16;

/// `slice_alloc` position meaning "any free slice".
pub const SLICE_ANY: u64 = u64::MAX;
/// `pct` flag: synchronous transfer.
pub const PCT_SYNC: u64 = 1;
/// `pct` flag: an interrupting transfer. Instead of starting the target at
/// its entry point (which discards what it was doing), the kernel ORs the
/// message word `rdx` (non-zero) into the target's queued interrupt bits and
/// enters its exception handler with the `INTERRUPT` upcall
/// (`error_code` = the bits, `fault_addr` = the caller's id, the
/// interrupted registers in the frame) so it resumes where it was; the rest
/// of the caller's slice goes to the target. If the handler cannot take it
/// now (busy, in a critical section, waiting for a reply) the bits stay
/// queued, shown in `EnvInfo::interrupts`, until one of the target's
/// slices starts with the handler free or it calls `interrupts_take`; a
/// sleeping target wakes (its `sleep` returns 2). The entry's guard applies
/// as for any `pct`. Returns 1 if the upcall was delivered at once, else 0.
pub const PCT_INTERRUPT: u64 = 2;
/// `pct` flag, with `PCT_INTERRUPT` only: queue the bits (waking a
/// sleeping target) but keep the CPU. A sender holding a lock the target
/// will want, or signalling many targets at once, queues; the target takes
/// the bits when one of its slices starts, when it is yielded to
/// (`yield_to` delivers queued bits as a slice start does), or from
/// `interrupts_take`. Returns 0.
pub const PCT_QUEUE: u64 = 4;

/// `pct` flags naming the credential slot presented to the entry's guard.
pub const fn pct_cred(slot: u64) -> u64 {
    (slot & 0xff) << 8
}
/// `pct` flags asking to grant the caller's capability `slot` to the callee.
pub const fn pct_grant(slot: u64) -> u64 {
    ((slot & 0xff) + 1) << 16
}
/// The credential slot holding every environment's root capability.
pub const CRED_SELF: u64 = 0;
/// The slot of the first environment's list where the kernel puts the
/// device capability at boot (it may derive from it and lend it on).
pub const CRED_DEVICES: u64 = 63;
/// "No guard" for `set_pct_entry` and `frame_share`.
pub const NO_GUARD: u64 = u64::MAX;

/// Rights a capability carries (`cap_derive`).
pub mod rights {
    pub const READ: u64 = 1;
    pub const WRITE: u64 = 2;
    /// May derive capabilities from it and hand it to others.
    pub const GRANT: u64 = 4;
    pub const ALL: u64 = 7;
}

/// Argument to `frame_alloc`: any free frame will do.
pub const FRAME_ANY: u64 = u64::MAX;
/// Environment argument meaning "the caller".
pub const ENV_SELF: u64 = 0;

/// Mapping flags for `map` and `protect`.
pub mod map {
    /// The page may be written.
    pub const WRITE: u64 = 1 << 0;
    /// Instructions may be fetched from the page.
    pub const EXEC: u64 = 1 << 1;
    /// No access from user mode at all, the frame still mapped and
    /// counted: the entry is present without the user bit and with NX, so
    /// every read, write or fetch faults with the present bit set in the
    /// error code, and the kernel's own copies refuse the page. For guard
    /// pages and Linux's `PROT_NONE` over memory that keeps its contents.
    /// Alone: with `WRITE` or `EXEC` it is `BadFlags`.
    pub const NO_ACCESS: u64 = 1 << 2;
    /// Every defined flag.
    pub const ALL: u64 = WRITE | EXEC | NO_ACCESS;

    /// The flags that give a user page-table entry `pte` its rights (what
    /// `map` with them would make): the inverse of the kernel's reading.
    pub const fn of_pte(pte: u64) -> u64 {
        use crate::pte::{NO_EXEC, USER, WRITABLE};
        if pte & USER == 0 {
            return NO_ACCESS;
        }
        let write = if pte & WRITABLE != 0 { WRITE } else { 0 };
        let exec = if pte & NO_EXEC == 0 { EXEC } else { 0 };
        write | exec
    }
}
