//! A debugger stub (paper 003 §5.3; issue 15): stops an interposed
//! subtree's environments on their debug exceptions, reads and changes
//! their registers, single-steps them one instruction at a time and sets
//! breakpoints in their code. It is an interposer's loop like the
//! tracer's: the child's `#DB` (the trap flag) and `#BP` (`int3`) come to
//! it as exception events before the child's own handler could see them,
//! and it keeps the child held (`answer::HOLD`) while it looks. Stepping
//! sets the trap flag in the child's registers again before every
//! instruction, so a child that clears it (`popf`) or installs its own
//! handler cannot run on unobserved (`docs/nesting.md`).

use abi::exception::{vector, Regs};
use abi::nest::{answer, event, EnvState, Event, Mapping};
use abi::syscall::{map as mf, ENV_SELF};
use abi::tables::env_state;
use abi::Error;
use user::{kinfo, nest, sys};

/// The trap flag.
const TF: u64 = 0x100;
/// Where the stub maps a page of the child while it writes a breakpoint.
const WINDOW: u64 = 0x7D00_0000_0000;
/// `int3`.
const INT3: u8 = 0xCC;

/// A held environment and why it stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stop {
    pub env: u64,
    /// `vector::DEBUG` (a step) or `vector::BREAKPOINT`.
    pub vector: u64,
    pub rip: u64,
}

/// A breakpoint: where, and the byte `int3` replaced.
#[derive(Clone, Copy, Debug)]
pub struct Breakpoint {
    pub addr: u64,
    byte: u8,
}

/// The stub over the subtree of `root`, which the caller has interposed
/// on and started.
pub struct Debugger {
    root: u64,
    ev: Event,
}

impl Debugger {
    pub fn new(root: u64) -> Self {
        Debugger { root, ev: Event::default() }
    }

    /// Lets the subtree run until one of its environments stops on a step
    /// or a breakpoint, which it holds; every call, result and other
    /// exception is shown to `on_event` (with the environment's id, which
    /// is held meanwhile) and let through. `None` once `root` has exited.
    pub fn wait(&mut self, mut on_event: impl FnMut(u64, &Event)) -> Result<Option<Stop>, Error> {
        loop {
            let Some(env) = nest::intercept_wait(self.root, &mut self.ev, 0, 0, 0)? else {
                match kinfo::env_by_id(self.root) {
                    Some(e) if e.state == env_state::EXITED => return Ok(None),
                    Some(_) => sys::yield_now(),
                    None => return Err(Error::BadEnv),
                }
                continue;
            };
            let ev = self.ev;
            if ev.kind == event::EXCEPTION && matches!(ev.number, vector::DEBUG | vector::BREAKPOINT) {
                nest::intercept_answer(env, answer::HOLD, 0)?;
                let rip = self.regs(env)?.rip;
                return Ok(Some(Stop { env, vector: ev.number, rip }));
            }
            on_event(env, &ev);
            nest::intercept_answer(env, answer::PASS, 0)?;
        }
    }

    /// Held `env`'s registers.
    pub fn regs(&self, env: u64) -> Result<Regs, Error> {
        Ok(state(env)?.regs)
    }

    /// Gives held `env` the registers `regs` (checked by the kernel).
    pub fn set_regs(&self, env: u64, regs: &Regs) -> Result<(), Error> {
        let mut st = state(env)?;
        st.regs = *regs;
        nest::env_state_set(env, &st).map(drop)
    }

    /// Runs held `env` for one instruction: `wait` returns its next stop.
    pub fn step(&self, env: u64) -> Result<(), Error> {
        self.resume(env, true)
    }

    /// Lets held `env` run on, no longer stepping.
    pub fn resume_free(&self, env: u64) -> Result<(), Error> {
        self.resume(env, false)
    }

    fn resume(&self, env: u64, stepping: bool) -> Result<(), Error> {
        let mut st = state(env)?;
        st.regs.rflags = if stepping { st.regs.rflags | TF } else { st.regs.rflags & !TF };
        nest::env_state_set(env, &st)?;
        sys::env_run(env).map(drop)
    }

    /// Writes `int3` at `addr` in held `env`'s code, through the frame its
    /// mapping names.
    pub fn set_breakpoint(&self, env: u64, addr: u64) -> Result<Breakpoint, Error> {
        let mut byte = 0;
        poke(env, addr, |b| byte = core::mem::replace(b, INT3))?;
        Ok(Breakpoint { addr, byte })
    }

    /// `env`, held at `bp` (its `rip` just after the `int3`): puts the
    /// original byte back and the `rip` on it, so it runs on as if there
    /// had been no breakpoint.
    pub fn clear_breakpoint(&self, env: u64, bp: Breakpoint) -> Result<(), Error> {
        poke(env, bp.addr, |b| *b = bp.byte)?;
        let mut regs = self.regs(env)?;
        if regs.rip == bp.addr + 1 {
            regs.rip = bp.addr;
            self.set_regs(env, &regs)?;
        }
        Ok(())
    }
}

fn state(env: u64) -> Result<EnvState, Error> {
    let mut st = EnvState::default();
    nest::env_state_get(env, &mut st)?;
    Ok(st)
}

/// Runs `f` on the byte at `addr` of `env`'s address space.
fn poke(env: u64, addr: u64, f: impl FnOnce(&mut u8)) -> Result<(), Error> {
    let page = addr & !0xFFF;
    let mut m = [Mapping::default()];
    if nest::env_mappings(env, page, &mut m)? != 1 || m[0].va != page {
        return Err(Error::BadAddress);
    }
    sys::map(ENV_SELF, WINDOW, m[0].frame, mf::WRITE)?;
    // SAFETY: the page was just mapped writable at WINDOW, which nothing
    // else uses; it is unmapped before this returns.
    f(unsafe { &mut *((WINDOW + (addr & 0xFFF)) as *mut u8) });
    sys::unmap(ENV_SELF, WINDOW).map(drop)
}
