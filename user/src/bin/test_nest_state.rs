//! Boot test: full state visibility (paper 003 §3.1.2). Every kind of kernel
//! object a child holds has a representation a parent reads as data and
//! recreates: a child held mid-computation is rebuilt in a fresh
//! environment from its state record, its mappings (contents copied into
//! new frames) and its capability list, and finishes with the result of an
//! uninterrupted run. A sleeping child's wait and a wait for a PCT reply
//! round-trip too (the reply lands while the child is held), and bad
//! records are refused with nothing changed.
#![no_std]
#![no_main]

use abi::nest::{cap_kind, CapInfo, EnvState, ENV_STATE_VERSION};
use abi::syscall::{map as mf, rights, ENV_SELF, FRAME_ANY, SLICE_ANY};
use abi::tables::env_state;
use abi::Error;
use user::{kinfo, nest, println, spawn, sys};

const ROUNDS: u64 = 400;
/// Where this test maps a child's page and its copy while copying.
const FROM: u64 = 0x7D00_0000_0000;
const TO: u64 = FROM + 4096;

/// Every kind of object a child can hold, and where its representation
/// lives: checked one by one below.
const OBJECTS: &[&str] = &[
    "registers, in-syscall flag (EnvState.regs, in_syscall)",
    "FPU/SSE state (EnvState.fxsave)",
    "fs/gs bases (EnvState.fs_base, gs_base)",
    "exception entry, stack, save area (EnvState.exc_*)",
    "PCT entry, stack, guard (EnvState.pct_*, guard as a slot of its own list)",
    "slice upcalls, queued interrupts (EnvState.slice_upcalls, interrupts)",
    "a wait: sleeping on a predicate until a deadline (EnvState.run, sleep_pred, sleep_until)",
    "a wait: awaiting a PCT reply (EnvState.run = WAITING, waiting_on)",
    "an interposed call it is held on (EnvState.event)",
    "published word (EnvState.published)",
    "mappings: va -> frame, rights (env_mappings)",
    "frames charged to it (exposed frame table: owner)",
    "slices it owns (exposed slice vector: owner)",
    "capabilities (env_caps: slot, rights, own/loan/derived)",
];

fn bytes(s: &EnvState) -> &[u8] {
    // SAFETY: EnvState is plain `repr(C)` data; reading its bytes is fine.
    unsafe { core::slice::from_raw_parts((s as *const EnvState).cast(), core::mem::size_of::<EnvState>()) }
}

fn wait_exit(id: u64) -> i32 {
    loop {
        let e = kinfo::env_by_id(id).expect("child exists");
        if e.state == env_state::EXITED {
            return e.exit_code;
        }
        sys::yield_now();
    }
}

/// Builds a stopped copy of held `old`: its memory (into new frames), then
/// its state record. Returns the new id.
fn recreate(old: u64, st: &EnvState) -> Result<u64, Error> {
    let new = sys::env_create()?;
    nest::for_each_mapping(old, |m| {
        let owned = kinfo::frame(m.frame).owner as u64 == old;
        let frame = if owned {
            let f = sys::frame_alloc(new, FRAME_ANY)?;
            sys::map(ENV_SELF, FROM, m.frame, 0)?;
            sys::map(ENV_SELF, TO, f, mf::WRITE)?;
            // SAFETY: both pages were just mapped here, 4096 bytes each.
            unsafe { core::ptr::copy_nonoverlapping(FROM as *const u8, TO as *mut u8, 4096) };
            sys::unmap(ENV_SELF, FROM)?;
            sys::unmap(ENV_SELF, TO)?;
            f
        } else {
            m.frame // shared with someone else: shared again
        };
        sys::map(new, m.va, frame, m.flags).map(|_| ())
    })?;
    nest::env_state_set(new, st)?;
    Ok(new)
}

fn check(what: &str, ok: bool, failures: &mut u32) {
    println!("{what}: {}", if ok { "ok" } else { "FAILED" });
    if !ok {
        *failures += 1;
    }
}

/// A wait inside the kernel as data: a child asleep on its predicate is
/// held, its record (run = SLEEPING, the predicate, the deadline) read and
/// set back, and released it sleeps on until its word is set.
fn sleeping_round_trip(failures: &mut u32) {
    const WORD: u64 = 0x3000_0000_0000;
    const MINE: u64 = FROM + 2 * 4096;
    let child = spawn::spawn_stopped("sleeper", 1_000_000).unwrap();
    let f = sys::frame_alloc(ENV_SELF, FRAME_ANY).unwrap();
    sys::map(ENV_SELF, MINE, f, mf::WRITE).unwrap();
    sys::map(child, WORD, f, 0).unwrap();
    spawn::start(child).unwrap();
    while kinfo::env_by_id(child).unwrap().state != env_state::SLEEPING {
        sys::yield_now();
    }
    nest::env_stop(child).unwrap();
    let mut st = EnvState::default();
    nest::env_state_get(child, &mut st).unwrap();
    check(
        "a sleep is data (run, predicate, deadline)",
        st.run == env_state::SLEEPING && st.sleep_until > 1_000_000,
        failures,
    );
    nest::env_state_set(child, &st).unwrap();
    let mut back = EnvState::default();
    nest::env_state_get(child, &mut back).unwrap();
    check("the sleep round-trips", bytes(&st) == bytes(&back), failures);
    // SAFETY: mapped writable above.
    unsafe { core::ptr::write_volatile(MINE as *mut u64, 7) };
    for _ in 0..5 {
        sys::yield_now();
    }
    check("held, it does not wake", kinfo::env_by_id(child).unwrap().state == env_state::STOPPED, failures);
    sys::env_run(child).unwrap();
    let code = wait_exit(child);
    check("released, it sleeps on and wakes on its predicate", code == 17, failures);
    sys::env_destroy(child).unwrap();
}

/// A wait for a PCT reply as data: a child waiting on a server is held
/// (run = WAITING, waiting_on = the server), its record is set back, bad
/// waits are refused with nothing changed, the server's reply lands while
/// it is held without running it, and released it goes on with the reply.
fn pct_wait_round_trip(failures: &mut u32) {
    let server = spawn::spawn("slow_echo", 0).unwrap();
    let client = spawn::spawn("pct_client", server).unwrap();
    while kinfo::env_by_id(client).unwrap().state != env_state::WAITING {
        sys::yield_now();
    }
    nest::env_stop(client).unwrap();
    let mut st = EnvState::default();
    nest::env_state_get(client, &mut st).unwrap();
    check(
        "held in its wait for a reply (run = WAITING, waiting_on)",
        kinfo::env_by_id(client).unwrap().state == env_state::STOPPED
            && st.run == env_state::WAITING
            && st.waiting_on == server,
        failures,
    );
    let mut bad = st;
    let refusals = [
        (client, "a wait on itself refused, nothing changed"),
        (0xdead_0000, "a wait on nobody refused, nothing changed"),
        (0, "a wait on id 0 refused, nothing changed"),
    ];
    for (on, what) in refusals {
        bad.waiting_on = on;
        let refused = nest::env_state_set(client, &bad) == Err(Error::BadEnv);
        let mut now = EnvState::default();
        nest::env_state_get(client, &mut now).unwrap();
        check(what, refused && bytes(&now) == bytes(&st), failures);
    }
    nest::env_state_set(client, &st).unwrap();
    let mut back = EnvState::default();
    nest::env_state_get(client, &mut back).unwrap();
    check("the wait round-trips", bytes(&st) == bytes(&back), failures);
    // The server replies after its yields: the reply lands, held.
    let mut landed = false;
    for _ in 0..100_000 {
        nest::env_state_get(client, &mut back).unwrap();
        if back.run == env_state::RUNNABLE {
            landed = true;
            break;
        }
        sys::yield_now();
    }
    let still = kinfo::env_by_id(client).unwrap().state == env_state::STOPPED;
    check("the reply lands while it is held, and it stays held", landed && still, failures);
    sys::env_run(client).unwrap();
    check("released, it goes on with the reply", wait_exit(client) == 0, failures);
    sys::env_destroy(client).unwrap();
    sys::env_destroy(server).unwrap();
}

/// A capability list recreated in another environment, relative to it
/// (paper 003 §3.1.3): a loan is lent again, derived capabilities are
/// derived again from the new environment's own root (parents first), the
/// lists read back alike, and revoking what the loan stands for takes it
/// from both.
fn caps_round_trip(failures: &mut u32) {
    let old = spawn::spawn("capmaker", 0).unwrap();
    while kinfo::env_by_id(old).unwrap().published != 1 {
        sys::yield_now();
    }
    nest::env_stop(old).unwrap();
    let mine = sys::cap_derive(abi::syscall::CRED_SELF, rights::READ | rights::GRANT).unwrap();
    let loan = sys::cap_grant(old, mine).unwrap();
    let list = |env: u64| {
        let mut caps = [CapInfo::default(); 8];
        let n = nest::env_caps(env, &mut caps).unwrap();
        (caps, n)
    };
    let (caps, n) = list(old);
    let derived: [u64; 2] = core::array::from_fn(|i| {
        caps[..n].iter().filter(|c| c.kind == cap_kind::DERIVED).nth(i).map_or(u64::MAX, |c| c.slot)
    });
    let new = sys::env_create().unwrap();
    check(
        "a derived one before its parent refused",
        nest::env_cap_copy(old, derived[1], new) == Err(Error::BadState),
        failures,
    );
    check("its own root refused", nest::env_cap_copy(old, 0, new) == Err(Error::NotPermitted), failures);
    for slot in [derived[0], derived[1], loan] {
        nest::env_cap_copy(old, slot, new).unwrap();
    }
    check(
        "a slot already taken refused",
        nest::env_cap_copy(old, loan, new) == Err(Error::BadState),
        failures,
    );
    let (caps2, n2) = list(new);
    let same = |a: &CapInfo, b: &CapInfo| (a.slot, a.rights, a.kind) == (b.slot, b.rights, b.kind);
    let alike = n == 4 && n2 == n && caps[..n].iter().zip(&caps2[..n2]).all(|(a, b)| same(a, b));
    check("capability list recreated: own root, two derived, a loan", alike, failures);
    sys::cap_revoke(mine).unwrap();
    let (_, left_old) = list(old);
    let (_, left_new) = list(new);
    check("revoking what the loan stands for takes it from both", left_old == 3 && left_new == 3, failures);
    sys::env_destroy(new).unwrap();
    sys::env_destroy(old).unwrap();
}

fn main(_: u64) -> i32 {
    let mut failures = 0;
    println!("objects a child can hold: {}", OBJECTS.len());
    for o in OBJECTS {
        println!("  {o}");
    }
    // The result of an uninterrupted run.
    let reference = wait_exit(spawn::spawn("nestee", ROUNDS).unwrap());

    // Hold a child mid-way; give it state of every kind first.
    let old = spawn::spawn("nestee", ROUNDS).unwrap();
    for _ in 0..20 {
        sys::yield_now();
    }
    sys::env_publish(old, 0x5eed).unwrap();
    nest::env_stop(old).unwrap();
    let running = kinfo::env_by_id(old).unwrap().state;
    check("held child shows STOPPED", running == env_state::STOPPED, &mut failures);
    let mut st = EnvState::default();
    nest::env_state_get(old, &mut st).unwrap();
    check("record version", st.version == ENV_STATE_VERSION, &mut failures);
    check("mid-computation", st.run == env_state::RUNNABLE && st.regs.rip != 0, &mut failures);
    let mut caps = [CapInfo::default(); 8];
    let n = nest::env_caps(old, &mut caps).unwrap();
    check(
        "capability list: its own root in slot 0",
        n >= 1 && caps[0].slot == 0 && caps[0].kind == cap_kind::OWN,
        &mut failures,
    );
    let mut nmaps = 0;
    nest::for_each_mapping(old, |_| {
        nmaps += 1;
        Ok(())
    })
    .unwrap();
    check("mappings listed", nmaps > 4, &mut failures);

    // Bad records change nothing.
    let new_probe = sys::env_create().unwrap();
    let mut before = EnvState::default();
    nest::env_state_get(new_probe, &mut before).unwrap();
    let mut bad = st;
    bad.version = 99;
    check(
        "wrong version refused",
        nest::env_state_set(new_probe, &bad) == Err(Error::BadFlags),
        &mut failures,
    );
    bad = st;
    bad.fxsave[27] = 0xff; // MXCSR reserved bits
    check("bad MXCSR refused", nest::env_state_set(new_probe, &bad) == Err(Error::BadRegs), &mut failures);
    bad = st;
    bad.regs.rip = 0xFFFF_8000_0000_0000;
    check("kernel rip refused", nest::env_state_set(new_probe, &bad) == Err(Error::BadRegs), &mut failures);
    bad = st;
    bad.exc_entry = st.exc_entry.max(0x40_0000);
    bad.exc_stack = 0x10_2000;
    bad.exc_save = 0x10_0000; // not mapped in the probe
    check(
        "unmapped save area refused",
        nest::env_state_set(new_probe, &bad) == Err(Error::BadPointer),
        &mut failures,
    );
    bad = st;
    bad.pct_guard = 7; // an empty slot of its list
    check(
        "guard slot it does not hold refused",
        nest::env_state_set(new_probe, &bad).is_err(),
        &mut failures,
    );
    bad = st;
    bad.run = env_state::SLEEPING;
    bad.sleep_pred = 3; // not its predicate
    check(
        "sleep on a predicate not its own refused",
        nest::env_state_set(new_probe, &bad) == Err(Error::NotPermitted),
        &mut failures,
    );
    let mut after = EnvState::default();
    nest::env_state_get(new_probe, &mut after).unwrap();
    check("failed sets changed nothing", bytes(&before) == bytes(&after), &mut failures);
    check(
        "own state refused",
        nest::env_state_get(ENV_SELF, &mut after) == Err(Error::NotPermitted),
        &mut failures,
    );
    sys::env_destroy(new_probe).unwrap();

    // Recreate it elsewhere; the record reads back identical.
    let new = recreate(old, &st).unwrap();
    let mut back = EnvState::default();
    nest::env_state_get(new, &mut back).unwrap();
    check("record round-trips into another environment", bytes(&st) == bytes(&back), &mut failures);
    let mut caps2 = [CapInfo::default(); 8];
    let n2 = nest::env_caps(new, &mut caps2).unwrap();
    check("capability list recreated", n2 == n && caps2[0].kind == cap_kind::OWN, &mut failures);
    sys::env_destroy(old).unwrap();
    sys::slice_alloc(new, SLICE_ANY).unwrap();
    sys::env_run(new).unwrap();
    let moved = wait_exit(new);
    println!("uninterrupted result {reference:#x}, held and moved {moved:#x}");
    check("the moved child continues identically", moved == reference, &mut failures);
    sleeping_round_trip(&mut failures);
    pct_wait_round_trip(&mut failures);
    caps_round_trip(&mut failures);
    if failures == 0 {
        println!("state visibility: all checks passed");
    }
    failures as i32
}

user::entry!(main);
