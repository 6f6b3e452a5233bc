//! Boot test: explicit credentials and protected sharing (paper 000 §3.3,
//! §5.1). An owner shares a frame read-only with a child through a derived
//! capability; the child can map it read-only with that capability but not
//! writable, and a "buggy child" presenting the wrong capability is
//! refused. After the owner revokes the capability the child can no longer
//! map it. A protected-control-transfer entry guarded by a capability
//! refuses a caller presenting one that does not dominate the guard.
#![no_std]
#![no_main]

use abi::syscall::{map as mf, pct_cred, pct_grant, rights, CRED_SELF, ENV_SELF, FRAME_ANY, PCT_SYNC};
use abi::Error;
use user::pct::{call, Msg};
use user::{println, spawn, sys};

fn main(_: u64) -> i32 {
    let mut ok = true;
    let f = sys::frame_alloc(ENV_SELF, FRAME_ANY).unwrap();
    sys::map(ENV_SELF, 0x3000_0000_0000, f, mf::WRITE).unwrap();
    // SAFETY: just mapped writable.
    unsafe { core::ptr::write_volatile(0x3000_0000_0000 as *mut u32, 0x5ca1_ab1e) };

    // Derive a read-only, grantable capability and guard the frame with it.
    let ro = sys::cap_derive(CRED_SELF, rights::READ | rights::GRANT).unwrap();
    sys::frame_share(f, ro).unwrap();
    let wider = sys::cap_derive(ro, rights::ALL);
    println!("deriving wider rights than the parent's: {wider:?}");
    ok &= wider == Err(Error::NotPermitted);

    let child = spawn::spawn_stopped("capchild", f).unwrap();
    let slot = sys::cap_grant(child, ro).unwrap();
    spawn::start(child).unwrap();
    let bits = spawn::wait(child).unwrap();
    println!("child with the capability in slot {slot}: result bits {bits:#x} (want 0xf)");
    ok &= slot == 1 && bits == 0xf;

    // A grant lends a capability derived from the granter's: a child that
    // revokes what it was lent loses only its own copy, and the granter
    // and every other holder keep theirs.
    let child = spawn::spawn_stopped("capchild", f | 1 << 63).unwrap();
    sys::cap_grant(child, ro).unwrap();
    spawn::start(child).unwrap();
    let bits = spawn::wait(child).unwrap();
    let kept = sys::cap_derive(ro, rights::READ);
    println!(
        "child revoked its granted copy: bits {bits:#x} (want 0x1f); the granter's still derives: {kept:?}"
    );
    ok &= bits == 0x1f && kept.is_ok();
    let child = spawn::spawn_stopped("capchild", f).unwrap();
    sys::cap_grant(child, ro).unwrap();
    spawn::start(child).unwrap();
    let bits = spawn::wait(child).unwrap();
    println!("a later child granted the same capability: bits {bits:#x} (want 0xf)");
    ok &= bits == 0xf;
    if let Ok(k) = kept {
        sys::cap_revoke(k).unwrap();
    }
    // The lender takes a loan back from the borrower's list.
    let child = spawn::spawn_stopped("capchild", f).unwrap();
    let slot = sys::cap_grant(child, ro).unwrap();
    let took = sys::cap_revoke_in(child, slot, CRED_SELF);
    spawn::start(child).unwrap();
    let bits = spawn::wait(child).unwrap();
    println!("the lender took its loan back ({took:?}): child bits {bits:#x} (want 0xe)");
    ok &= took == Ok(1) && bits == 0xe;

    // Revoke: a second child granted the same (now stale) capability
    // cannot map the frame any more.
    let child = spawn::spawn_stopped("capchild", f).unwrap();
    sys::cap_grant(child, ro).unwrap();
    let revoked = sys::cap_revoke(ro).unwrap();
    spawn::start(child).unwrap();
    let bits = spawn::wait(child).unwrap();
    println!(
        "after revoking {revoked} capabilities: result bits {bits:#x} (want 0xe: read-only map refused)"
    );
    // The granter's own and the copy it lent.
    ok &= revoked == 2 && bits == 0xe;
    let own_root = sys::cap_revoke(CRED_SELF);
    println!("revoking its own root capability: {own_root:?}");
    ok &= own_root == Err(Error::NotPermitted);

    // A guarded entry point: the server (arg 1) accepts only callers whose
    // credential dominates its own root — its parent's root does, a
    // sibling capability does not.
    let server = spawn::spawn("pct_echo", 1).unwrap();
    // Wait until its entry point is open (a call with the right credential
    // gets through).
    let (r, _) = user::pct::first_call(server, PCT_SYNC | pct_cred(CRED_SELF), &Msg::default());
    ok &= r as u64 == server;
    let stranger = sys::cap_derive(CRED_SELF, rights::READ).unwrap();
    let (r, _) = call(server, PCT_SYNC | pct_cred(stranger), &Msg::default());
    println!("transfer presenting an unrelated capability: {r}");
    ok &= r == Error::NotPermitted.as_result();
    let (r, reply) = call(server, PCT_SYNC | pct_cred(CRED_SELF), &Msg::default());
    println!("transfer presenting the parent's root: {r:#x}, reply rdx {}", reply.rdx);
    ok &= r as u64 == server && reply.rdx == 1;
    // A capability granted with the transfer lands in the callee's list;
    // the echo server sends back the slot it arrived in.
    let gift = sys::cap_derive(CRED_SELF, rights::READ | rights::GRANT).unwrap();
    let (r, reply) = call(server, PCT_SYNC | pct_cred(CRED_SELF) | pct_grant(gift), &Msg::default());
    println!("transfer granting a capability: {r:#x}, it arrived in the callee's slot {}", reply.r15);
    ok &= r as u64 == server && reply.r15 == 1;
    let (r, _) = call(server, PCT_SYNC | pct_cred(CRED_SELF) | pct_grant(stranger), &Msg::default());
    println!("granting one without the grant right: {r}");
    ok &= r == Error::NotPermitted.as_result();
    sys::env_destroy(server).unwrap();

    if ok {
        0
    } else {
        1
    }
}

user::entry!(main);
