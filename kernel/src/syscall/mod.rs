//! The system-call table. Every handler has one shape,
//! `fn(&mut Kernel, Args) -> Result<u64, Error>`: it validates every
//! argument and answers bad input with a specific `abi::Error`, and a call
//! that fails changes nothing. The entry stub indexes [`TABLE`] by number;
//! each entry is a small generated function that takes the kernel once
//! ([`crate::state::enter`]), runs the handler and turns its result into
//! `rax` — so the error side of every call is handled in one place. Calls
//! are grouped by the resource they act on.

mod caps;
mod console;
mod cpu;
mod devices;
mod envs;
mod fresh;
mod handover;
mod ident;
mod lifetime;
mod memory;
mod nest;
mod net;
mod preds;
mod range;
mod section;
mod unmap;
mod xn;

use abi::exception::vector;
use abi::syscall as sc;
use abi::Error;

/// A call's six argument registers (`rdi rsi rdx r10 r8 r9`), in order.
/// Handlers name the ones they use with a pattern:
/// `Args([env, cred, ..]): Args`.
pub struct Args(pub [u64; 6]);

/// What the entry stub calls, with the arguments still in registers.
type Call = unsafe extern "sysv64" fn(u64, u64, u64, u64, u64, u64) -> i64;

const CALLS: usize = (sc::END - sc::BASE) as usize;

/// The result of a call as the value for `rax`.
#[inline(always)]
fn ret(r: Result<u64, Error>) -> i64 {
    match r {
        Ok(v) => v as i64,
        Err(e) => e.as_result(),
    }
}

/// The function the stub calls for `handler`: takes the kernel, runs the
/// handler on the argument registers, returns the result in `rax`.
macro_rules! entry {
    ($module:ident::$handler:ident) => {
        pub extern "sysv64" fn $handler(a0: u64, a1: u64, a2: u64, a3: u64, a4: u64, a5: u64) -> i64 {
            // SAFETY: reached only from the system-call stub, from ring 3.
            unsafe { crate::state::enter(|k| ret($module::$handler(k, Args([a0, a1, a2, a3, a4, a5])))) }
        }
    };
}

/// Builds [`TABLE`] from `NUMBER => module::handler` lines, one entry
/// function per handler (named after it, in `entries`), each placed at its
/// ABI number. It does not compile if a number is taken twice; a number
/// left without a handler (one another branch is adding: the numbers are
/// handed out ahead) answers `NoSuchCall`, as one past `END` does. The `fast` block places assembly
/// fast paths (`NUMBER => path, else module::handler`), which hands what it does not handle to `handler`.
macro_rules! calls {
    (fast { $($rnum:path => $raw:path, else $gmodule:ident::$ghandler:ident;)* }
     $($num:path => $module:ident::$handler:ident;)*) => {
        /// One `extern "sysv64"` function per handler: what the stub calls.
        mod entries {
            use super::*;
            $(entry!($gmodule::$ghandler);)*
            $(entry!($module::$handler);)*
            entry!(gap::unassigned);
        }

        /// Indexed by `number - abi::syscall::BASE`; the entry stub calls
        /// straight through it.
        #[unsafe(no_mangle)]
        pub static TABLE: [Call; CALLS] = {
            let mut at: [Option<Call>; CALLS] = [None; CALLS];
            $(place(&mut at, $rnum, $raw as Call);)*
            $(place(&mut at, $num, entries::$handler as Call);)*
            let mut table: [Call; CALLS] = [entries::debug_write as Call; CALLS];
            let mut i = 0;
            while i < CALLS {
                table[i] = match at[i] {
                    Some(call) => call,
                    None => entries::unassigned as Call,
                };
                i += 1;
            }
            table
        };
    };
}

/// A number inside the range that no call has (yet).
mod gap {
    use super::{Args, Error};
    use crate::state::Kernel;

    pub fn unassigned(_: &mut Kernel, _: Args) -> Result<u64, Error> {
        Err(Error::NoSuchCall)
    }
}

/// Puts `call` at `number` in the table being built (at compile time).
const fn place(at: &mut [Option<Call>; CALLS], number: u64, call: Call) {
    assert!(number >= sc::BASE && number < sc::END, "a handler's number is outside the kernel's range");
    let i = (number - sc::BASE) as usize;
    assert!(at[i].is_none(), "a system-call number is taken twice");
    at[i] = Some(call);
}

calls! {
    fast {
        sc::PCT => crate::arch::pct::pct_fast, else cpu::pct;
    }
    sc::DEBUG_WRITE => console::debug_write;
    sc::CONSOLE_READ => console::console_read;
    sc::SELF_ID => console::self_id;
    sc::SHUTDOWN => console::shutdown;
    sc::CONSOLE_NOTIFY => console::console_notify;
    sc::FRAME_ALLOC => memory::frame_alloc;
    sc::FRAME_FREE => memory::frame_free;
    sc::FRAME_SHARE => memory::frame_share;
    sc::MAP => memory::map;
    sc::MAP_FROM => memory::map_from;
    sc::MAP_FROM_RANGE => memory::map_from_range;
    sc::UNMAP => memory::unmap;
    sc::UNMAP_RANGE => unmap::unmap_range;
    sc::MAP_FRESH => fresh::map_fresh;
    sc::HAND_OVER => handover::hand_over;
    sc::PROTECT => memory::protect;
    sc::PROTECT_RANGE => memory::protect_range;
    sc::FRAMES_RECLAIM => memory::frames_reclaim;
    sc::SET_REPOSSESSION_VECTOR => memory::set_repossession_vector;
    sc::ENV_CREATE => envs::env_create;
    sc::ENV_CREATE_SHARED => envs::env_create_shared;
    sc::ENV_CREATE_IN => envs::env_create_in;
    sc::ENV_PRED_GET => nest::env_pred_get;
    sc::ENV_PRED_INSTALL => nest::env_pred_install;
    sc::ENV_CAP_DERIVE => nest::env_cap_derive;
    sc::ENV_DESTROY => envs::env_destroy;
    sc::ENV_MOVE => lifetime::env_move;
    sc::ENV_EXIT_BITS => lifetime::env_exit_bits;
    sc::ENV_SET_REGS => envs::env_set_regs;
    sc::ENV_GET_REGS => envs::env_get_regs;
    sc::ENV_RUN => envs::env_run;
    sc::ENV_PUBLISH => envs::env_publish;
    sc::SET_EXCEPTION_HANDLER => envs::set_exception_handler;
    sc::YIELD => cpu::yield_;
    sc::YIELD_TO => cpu::yield_to;
    sc::EXIT => cpu::exit;
    sc::SLICE_ALLOC => cpu::slice_alloc;
    sc::SLICE_FREE => cpu::slice_free;
    sc::SLICE_UPCALLS => cpu::slice_upcalls;
    sc::SET_PCT_ENTRY => cpu::set_pct_entry;
    sc::INTERRUPTS_TAKE => cpu::interrupts_take;
    sc::CAP_DERIVE => caps::cap_derive;
    sc::CAP_REVOKE => caps::cap_revoke;
    sc::CAP_GRANT => caps::cap_grant;
    sc::PRED_INSTALL => preds::pred_install;
    sc::PRED_FREE => preds::pred_free;
    sc::SLEEP => preds::sleep;
    sc::ENV_STOP => nest::env_stop;
    sc::ENV_STATE_GET => nest::env_state_get;
    sc::ENV_STATE_SET => nest::env_state_set;
    sc::ENV_MAPPINGS => nest::env_mappings;
    sc::ENV_CAPS => nest::env_caps;
    sc::INTERPOSE => nest::interpose;
    sc::INTERCEPT_ANSWER => nest::intercept_answer;
    sc::ENV_LIMIT => nest::env_limit;
    sc::INTERCEPT_WAIT => nest::intercept_wait;
    sc::ENV_CAP_COPY => nest::env_cap_copy;
    sc::DEV_INFO => devices::dev_info;
    sc::BLK_READ => devices::blk_read;
    sc::BLK_WRITE => devices::blk_write;
    sc::NET_SEND => devices::net_send;
    sc::NET_RECV => devices::net_recv;
    sc::DEV_PING => devices::dev_ping;
    sc::DEV_INJECT => devices::dev_inject;
    sc::XN_INFO => xn::xn_info;
    sc::XN_INSTALL => xn::xn_install;
    sc::XN_TEMPLATE => xn::xn_template;
    sc::XN_ROOT_ADD => xn::xn_root_add;
    sc::XN_ROOT_FIND => xn::xn_root_find;
    sc::XN_READ => xn::xn_read;
    sc::XN_INSERT => xn::xn_insert;
    sc::XN_BIND => xn::xn_bind;
    sc::XN_MODIFY => xn::xn_modify;
    sc::XN_WRITE => xn::xn_write;
    sc::XN_FLUSH => xn::xn_flush;
    sc::XN_LOCK => xn::xn_lock;
    sc::XN_UNLOCK => xn::xn_unlock;
    sc::XN_EVICT => xn::xn_evict;
    sc::XN_CLAIMS => xn::xn_claims;
    sc::XN_PARENT => xn::xn_parent;
    sc::XN_IDENTITY => xn::xn_identity;
    sc::XN_COPY => xn::xn_copy;
    sc::XN_DIRTY => xn::xn_dirty;
    sc::XN_BIND_RUN => xn::xn_bind_run;
    sc::IDENT_GET => ident::ident_get;
    sc::IDENT_SET => ident::ident_set;
    sc::SECTION_HOLDS => section::section_holds;
    sc::FRAME_DISOWN => memory::frame_disown;
    sc::FRAME_RANGE => range::frame_range;
    sc::NET_ATTACH => net::net_attach;
    sc::NET_DETACH => net::net_detach;
    sc::NET_FILTER => net::net_filter;
    sc::NET_UNFILTER => net::net_unfilter;
    sc::NET_CONSENT => net::net_consent;
    sc::NET_TX => net::net_tx;
    sc::NET_STATS => net::net_stats;
}

/// The general path of protected control transfer, where `pct_fast` sends
/// what it does not handle.
pub use entries::pct as pct_general;

/// Called for numbers outside the kernel's range, with every register in
/// the frame: reflected to the environment's handler as the pseudo-vector
/// `SYSCALL` (the kernel knows no other system-call ABI), or refused.
pub extern "C" fn reflect() {
    // SAFETY: reached only from the system-call stub, from ring 3.
    unsafe { crate::state::enter(reflect_in) }
}

fn reflect_in(k: &mut crate::state::Kernel) {
    let c = k.current();
    if k.hold_foreign() {
        return;
    }
    if k.envs[c].exc.save == 0 {
        k.envs[c].tf.rax = Error::NoSuchCall.as_result() as u64;
    } else if !k.upcall(c, vector::SYSCALL, 0) {
        crate::kprintln!("env {:#x} made a system call inside its exception handler", k.envs[c].id());
        k.exit_current(abi::tables::FAULT_EXIT_BASE - vector::SYSCALL as i32);
    }
}
