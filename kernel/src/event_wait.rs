//! An interposer waiting for its subtree's next event (`intercept_wait`,
//! paper 003 §3.2): instead of scanning the exposed table and yielding,
//! it sleeps in the kernel (`Waiting` on nobody, `Env::event_root`) and
//! the hold of an event for it wakes it and runs it at once, in the slice
//! of the environment that made the event — the way a synchronous
//! transfer donates its caller's slice. Answering and waiting are one
//! call, so an event costs the interposer one kernel entry.

use crate::env::{EnvId, Slot, State};
use crate::state::Kernel;
use crate::uaccess;
use abi::nest::event;

/// What a scan of a subtree for events found.
enum Scan {
    /// A held environment with an event for the waiter.
    Event(Slot),
    /// Nothing yet, but something in the subtree runs or waits.
    Live,
    /// The root has ended, or everything in the subtree is held without
    /// an event: no event can come until someone else acts.
    Idle,
}

impl Kernel {
    /// `intercept_wait`'s wait, after its answer: the next event for the
    /// current environment in the subtree of `root`, written to `buf`
    /// (checked writable), as the held environment's id; 0 if none can
    /// come. `next` is the environment to run if the caller must wait.
    pub fn wait_event(&mut self, root: Slot, buf: u64, next: Option<Slot>) -> u64 {
        let me = self.current();
        match self.scan_events(root, self.envs[me].id()) {
            Scan::Event(s) => self.deliver_event(me, buf, s),
            Scan::Idle => 0,
            Scan::Live => {
                self.envs[me].event_root = Some(self.envs[root].id());
                self.envs[me].event_buf = buf;
                self.set_state(me, State::Waiting);
                match next.filter(|&n| self.envs[n].state() == State::Runnable) {
                    Some(n) => self.switch_to(n),
                    None => self.schedule(),
                }
                0 // replaced when an event wakes it
            }
        }
    }

    /// Walks `root`'s subtree (pre-order) for an event for `me`.
    fn scan_events(&self, root: Slot, me: EnvId) -> Scan {
        if self.envs[root].state() == State::Exited {
            return Scan::Idle;
        }
        let (mut at, mut live) = (Some(root), false);
        while let Some(s) = at {
            let e = &self.envs[s];
            let held = e.state() == State::Stopped && e.event.kind != event::NONE;
            if held && e.event.to == me.raw() as u64 {
                return Scan::Event(s);
            }
            live |= held || !matches!(e.state(), State::Stopped | State::Exited);
            at = self.next_in_subtree(root, s);
        }
        if live {
            Scan::Live
        } else {
            Scan::Idle
        }
    }

    /// Whether slot `w` waits for events in a subtree holding slot `s`.
    fn waits_for(&self, w: Slot, s: Slot) -> bool {
        let e = &self.envs[w];
        match e.event_root {
            Some(r) if e.state() == State::Waiting && e.waiting_on().is_none() => {
                r == self.envs[s].id() || self.is_ancestor(r, s)
            }
            _ => false,
        }
    }

    /// Slot `s` was just held (or its event passed on): if its event's
    /// interposer waits for it, wakes that one with it. Returns the woken.
    pub fn offer_event(&mut self, s: Slot) -> Option<Slot> {
        let w = self.env_slot(self.envs[s].event.to).ok().filter(|&w| w != s)?;
        if !self.waits_for(w, s) {
            return None;
        }
        let id = self.deliver_event(w, self.envs[w].event_buf, s);
        self.end_event_wait(w, id);
        Some(w)
    }

    /// Writes slot `s`'s event to waiter `w`'s buffer `buf`: `s`'s id, or
    /// the error if the buffer went away meanwhile (the event stays held).
    fn deliver_event(&self, w: Slot, buf: u64, s: Slot) -> u64 {
        match uaccess::write_value(self.envs[w].pml4, buf, &self.envs[s].event) {
            Ok(()) => self.envs[s].id().raw() as u64,
            Err(e) => e.as_result() as u64,
        }
    }

    /// Ends slot `w`'s wait with `result`.
    pub fn end_event_wait(&mut self, w: Slot, result: u64) {
        self.envs[w].event_root = None;
        self.envs[w].tf.rax = result;
        self.set_state(w, State::Runnable);
    }

    /// Slot `s` is ending: an ancestor waiting for events of the subtree it
    /// roots gets 0 (nothing more will come).
    pub fn end_event_waits_on(&mut self, s: Slot) {
        let id = self.envs[s].id();
        let mut p = self.envs[s].parent();
        while let Some(a) = p {
            let w = a.slot();
            if self.envs[w].event_root == Some(id) && self.envs[w].state() == State::Waiting {
                self.end_event_wait(w, 0);
            }
            p = self.envs[w].parent();
        }
    }
}
