//! Round-robin scheduling over a circular run queue, and switching the CPU
//! between environments (registers stay in place; FPU/SSE state, the TLS
//! bases and the address space are swapped).

use crate::arch::{cpu, fpu, percpu};
use crate::env::NONE;
use crate::state::Kernel;

impl Kernel {
    /// Adds slot `s` to the run queue (after the current one).
    pub fn run_insert(&mut self, s: usize) {
        let s16 = s as u16;
        if self.run_head == NONE {
            self.run_head = s16;
            self.envs[s].run_next = s16;
            self.envs[s].run_prev = s16;
            return;
        }
        let after = if self.envs[self.current].run_next != NONE {
            self.current as u16
        } else {
            self.run_head
        };
        let next = self.envs[after as usize].run_next;
        self.envs[s].run_prev = after;
        self.envs[s].run_next = next;
        self.envs[after as usize].run_next = s16;
        self.envs[next as usize].run_prev = s16;
    }

    pub fn run_remove(&mut self, s: usize) {
        let (prev, next) = (self.envs[s].run_prev, self.envs[s].run_next);
        if next == NONE {
            return;
        }
        if next == s as u16 {
            self.run_head = NONE;
        } else {
            self.envs[prev as usize].run_next = next;
            self.envs[next as usize].run_prev = prev;
            if self.run_head == s as u16 {
                self.run_head = next;
            }
        }
        self.envs[s].run_next = NONE;
        self.envs[s].run_prev = NONE;
    }

    /// Runs the next environment in the queue (the current one again if it
    /// is alone). Inlined: it is the body of `yield`, a measured fast path.
    #[inline(always)]
    pub fn schedule(&mut self) {
        let next = match self.envs[self.current].run_next {
            NONE => self.run_head,
            n => n,
        };
        if next == NONE {
            crate::kprintln!("no runnable environment left; halting");
            cpu::qemu_exit(crate::EXIT_FAILURE);
        }
        self.switch_to(next as usize);
    }

    /// Makes slot `s` the running environment.
    pub fn switch_to(&mut self, s: usize) {
        if s == self.current {
            return;
        }
        // Saved even when the old environment just ended: harmless (its slot
        // is reset before reuse) and it keeps the common path branch-free.
        let old = &mut self.envs[self.current];
        fpu::save(&mut old.fpu);
        (old.fs_base, old.gs_base) = fpu::save_bases();
        let new = &mut self.envs[s];
        fpu::restore(&new.fpu);
        fpu::restore_bases(new.fs_base, new.gs_base);
        // SAFETY: every environment's PML4 shares the kernel's upper half.
        unsafe { cpu::set_cr3(new.cr3) };
        percpu::set_current(&mut new.tf);
        self.current = s;
    }
}
