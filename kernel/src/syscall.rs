//! The system-call table and handlers. Every handler validates every
//! argument and answers bad input with a specific `abi::Error`.

use crate::arch::{cpu, serial};
use crate::env::{user_rflags, ExcTarget};
use crate::mm::PhysTables;
use crate::pagetable::{self, NO_EXEC, PRESENT, USER, WRITABLE};
use crate::state::{kernel, Kernel};
use crate::uaccess;
use abi::exception::{vector, ExceptionFrame, Regs};
use abi::layout::{PAGE_SIZE, USER_END, USER_MIN};
use abi::syscall::{self as sc, map as mapflags, FRAME_ANY};
use abi::tables::{env_state, frame_state};
use abi::Error;

type Call = extern "sysv64" fn(u64, u64, u64, u64, u64, u64) -> i64;

/// Indexed by `number - abi::syscall::BASE`; the entry stub calls straight
/// through it.
#[unsafe(no_mangle)]
pub static TABLE: [Call; (sc::END - sc::BASE) as usize] = [
    debug_write,
    console_read,
    frame_alloc,
    frame_free,
    map,
    unmap,
    protect,
    env_create,
    env_destroy,
    env_set_regs,
    env_get_regs,
    env_run,
    set_exception_handler,
    yield_,
    exit,
    self_id,
    shutdown,
    map_from,
    slice_alloc,
    slice_free,
    yield_to,
    set_pct_entry,
    pct,
];

fn ret(r: Result<u64, Error>) -> i64 {
    match r {
        Ok(v) => v as i64,
        Err(e) => e.as_result(),
    }
}

/// Called for numbers outside the kernel's range, with every register in
/// the frame: reflected to the environment's handler as the pseudo-vector
/// `SYSCALL` (the kernel knows no other system-call ABI), or refused.
pub extern "C" fn reflect() {
    let k = kernel();
    let e = &mut k.envs[k.current];
    if e.exc.save == 0 {
        e.tf.rax = Error::NoSuchCall.as_result() as u64;
        return;
    }
    // SAFETY: `exc.save` is the kernel address of the registered save area,
    // in a frame pinned while registered.
    let frame = unsafe { &mut *(e.exc.save as *mut ExceptionFrame) };
    if frame.busy != 0 {
        crate::kprintln!(
            "env {:#x} made a system call inside its exception handler",
            e.id
        );
        return k.exit_current(abi::tables::FAULT_EXIT_BASE - vector::SYSCALL as i32);
    }
    *frame = ExceptionFrame {
        busy: 1,
        vector: vector::SYSCALL,
        error_code: 0,
        fault_addr: 0,
        regs: crate::trap::regs_of(&e.tf),
    };
    e.tf.rip = e.exc.entry;
    e.tf.rsp = e.exc.stack;
}

/// A page-aligned user address below the exposed window.
fn user_page(va: u64) -> Result<u64, Error> {
    if !va.is_multiple_of(PAGE_SIZE) || !(USER_MIN..USER_END).contains(&va) {
        return Err(Error::BadAddress);
    }
    Ok(va)
}

fn rights(flags: u64) -> Result<u64, Error> {
    if flags & !mapflags::ALL != 0 {
        return Err(Error::BadFlags);
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

impl Kernel {
    fn pml4(&self) -> u64 {
        self.envs[self.current].pml4
    }

    /// A frame the caller may act on (owned by it or a descendant): returns
    /// the owner's slot.
    fn own_frame(&self, frame: u64) -> Result<usize, Error> {
        let rec = self.frames.info(frame).ok_or(Error::BadFrame)?;
        if rec.state != frame_state::USER || rec.owner == 0 {
            return Err(Error::NotOwner);
        }
        let owner = self
            .env_slot(rec.owner as u64)
            .map_err(|_| Error::NotOwner)?;
        if !self.dominates(self.current, owner) {
            return Err(Error::NotOwner);
        }
        Ok(owner)
    }

    /// Maps `frame` at `va` in slot `s`'s space with page-table rights
    /// `pte`, counting the mapping; tables are charged to `s`.
    fn bind(&mut self, s: usize, va: u64, frame: u64, pte: u64) -> Result<u64, Error> {
        let id = self.envs[s].id;
        self.frames.add_ref(frame)?;
        let frames = &mut self.frames;
        let r = pagetable::map(
            &mut PhysTables,
            self.envs[s].pml4,
            va,
            frame << 12 | pte,
            &mut || frames.alloc(None, id, frame_state::PAGE_TABLE),
        );
        if let Err(e) = r {
            self.frames.drop_ref(frame);
            return Err(e);
        }
        self.kinfo.free_frames = self.frames.free_count();
        self.publish(s);
        Ok(0)
    }

    fn flush(&self, env: usize, va: u64) {
        if env == self.current {
            cpu::invlpg(va);
        }
    }
}

extern "sysv64" fn debug_write(ptr: u64, len: u64, _: u64, _: u64, _: u64, _: u64) -> i64 {
    let k = kernel();
    ret(uaccess::with_bytes(k.pml4(), ptr, len, crate::log::write_bytes).map(|_| len))
}

extern "sysv64" fn console_read(ptr: u64, len: u64, _: u64, _: u64, _: u64, _: u64) -> i64 {
    let k = kernel();
    let mut buf = [0u8; 64];
    let want = len.min(buf.len() as u64) as usize;
    if want == 0 {
        return Error::BadLength.as_result();
    }
    if let Err(e) = uaccess::check_writable(k.pml4(), ptr, len.min(uaccess::MAX_LEN + 1)) {
        return e.as_result();
    }
    let mut n = 0;
    while n < want {
        match serial::read_byte() {
            Some(b) => {
                buf[n] = b;
                n += 1;
            }
            None => break,
        }
    }
    ret(uaccess::write(k.pml4(), ptr, &buf[..n]).map(|_| n as u64))
}

extern "sysv64" fn frame_alloc(owner: u64, frame: u64, _: u64, _: u64, _: u64, _: u64) -> i64 {
    let k = kernel();
    ret((|| {
        let s = k.env_arg(owner)?;
        let want = if frame == FRAME_ANY {
            None
        } else {
            Some(frame)
        };
        let f = k.frames.alloc(want, k.envs[s].id, frame_state::USER)?;
        // SAFETY: a frame just allocated, in the physical window, that no
        // mapping refers to yet: cleared so no earlier contents leak.
        unsafe { core::ptr::write_bytes(crate::mm::phys::<u8>(f << 12), 0, 4096) };
        k.kinfo.free_frames = k.frames.free_count();
        k.publish(s);
        Ok(f)
    })())
}

extern "sysv64" fn frame_free(frame: u64, _: u64, _: u64, _: u64, _: u64, _: u64) -> i64 {
    let k = kernel();
    ret((|| {
        let owner = k.own_frame(frame)?;
        k.frames.free(frame)?;
        k.kinfo.free_frames = k.frames.free_count();
        k.publish(owner);
        Ok(0)
    })())
}

extern "sysv64" fn map(env: u64, va: u64, frame: u64, flags: u64, _: u64, _: u64) -> i64 {
    let k = kernel();
    ret((|| {
        let s = k.env_arg(env)?;
        let va = user_page(va)?;
        let pte = rights(flags)?;
        k.own_frame(frame)?;
        k.bind(s, va, frame, pte)
    })())
}

extern "sysv64" fn map_from(env: u64, va: u64, src: u64, flags: u64, _: u64, _: u64) -> i64 {
    let k = kernel();
    ret((|| {
        let s = k.env_arg(env)?;
        let va = user_page(va)?;
        let pte = rights(flags)?;
        let have = pagetable::lookup(&mut PhysTables, k.pml4(), user_page(src)?)
            .ok_or(Error::NotMapped)?;
        let more_write = pte & WRITABLE != 0 && have & WRITABLE == 0;
        let more_exec = pte & NO_EXEC == 0 && have & NO_EXEC != 0;
        if more_write || more_exec {
            return Err(Error::NotPermitted);
        }
        k.bind(s, va, pagetable::frame_of(have), pte)
    })())
}

extern "sysv64" fn unmap(env: u64, va: u64, _: u64, _: u64, _: u64, _: u64) -> i64 {
    let k = kernel();
    ret((|| {
        let s = k.env_arg(env)?;
        let va = user_page(va)?;
        let old = pagetable::unmap(&mut PhysTables, k.envs[s].pml4, va)?;
        k.flush(s, va);
        k.frames.drop_ref(pagetable::frame_of(old));
        k.kinfo.free_frames = k.frames.free_count();
        Ok(0)
    })())
}

extern "sysv64" fn protect(env: u64, va: u64, flags: u64, _: u64, _: u64, _: u64) -> i64 {
    let k = kernel();
    ret((|| {
        let s = k.env_arg(env)?;
        let va = user_page(va)?;
        let pte = rights(flags)?;
        pagetable::protect(&mut PhysTables, k.envs[s].pml4, va, pte)?;
        k.flush(s, va);
        Ok(0)
    })())
}

extern "sysv64" fn env_create(_: u64, _: u64, _: u64, _: u64, _: u64, _: u64) -> i64 {
    let k = kernel();
    let parent = k.envs[k.current].id;
    ret(k.env_create(parent).map(|s| {
        k.kinfo.free_frames = k.frames.free_count();
        k.envs[s].id as u64
    }))
}

extern "sysv64" fn env_destroy(env: u64, _: u64, _: u64, _: u64, _: u64, _: u64) -> i64 {
    let k = kernel();
    ret((|| {
        let s = k.reap_arg(env)?;
        if s == k.current {
            return Err(Error::NotPermitted);
        }
        k.env_destroy(s, None);
        Ok(0)
    })())
}

extern "sysv64" fn env_set_regs(env: u64, ptr: u64, _: u64, _: u64, _: u64, _: u64) -> i64 {
    let k = kernel();
    ret((|| {
        let s = k.child_arg(env)?;
        let r: Regs = uaccess::read_value(k.pml4(), ptr)?;
        if r.rip >= USER_END || r.rsp >= 1 << 47 {
            return Err(Error::BadRegs);
        }
        let tf = &mut k.envs[s].tf;
        (
            tf.rax, tf.rbx, tf.rcx, tf.rdx, tf.rsi, tf.rdi, tf.rbp, tf.rsp,
        ) = (r.rax, r.rbx, r.rcx, r.rdx, r.rsi, r.rdi, r.rbp, r.rsp);
        (tf.r8, tf.r9, tf.r10, tf.r11, tf.r12, tf.r13, tf.r14, tf.r15) =
            (r.r8, r.r9, r.r10, r.r11, r.r12, r.r13, r.r14, r.r15);
        tf.rip = r.rip;
        tf.rflags = user_rflags(r.rflags);
        tf.vector = 0; // resume with every register restored
        Ok(0)
    })())
}

extern "sysv64" fn env_get_regs(env: u64, ptr: u64, _: u64, _: u64, _: u64, _: u64) -> i64 {
    let k = kernel();
    ret((|| {
        let s = k.child_arg(env)?;
        let regs = crate::trap::regs_of(&k.envs[s].tf);
        uaccess::write_value(k.pml4(), ptr, &regs)?;
        Ok(0)
    })())
}

extern "sysv64" fn env_run(env: u64, _: u64, _: u64, _: u64, _: u64, _: u64) -> i64 {
    let k = kernel();
    ret((|| {
        let s = k.child_arg(env)?;
        if k.envs[s].state != env_state::STOPPED {
            return Err(Error::BadState);
        }
        k.envs[s].state = env_state::RUNNABLE;
        k.publish(s);
        Ok(0)
    })())
}

extern "sysv64" fn slice_alloc(env: u64, pos: u64, _: u64, _: u64, _: u64, _: u64) -> i64 {
    let k = kernel();
    ret((|| {
        let s = k.env_arg(env)?;
        k.slice_alloc(s, (pos != abi::syscall::SLICE_ANY).then_some(pos))
    })())
}

extern "sysv64" fn slice_free(pos: u64, _: u64, _: u64, _: u64, _: u64, _: u64) -> i64 {
    let k = kernel();
    ret((|| {
        let p = usize::try_from(pos)
            .ok()
            .filter(|&p| p < abi::tables::SLICES)
            .ok_or(Error::NoSlice)?;
        let owner = k.slice_env[p];
        if owner == crate::env::NONE || !k.dominates(k.current, owner as usize) {
            return Err(Error::NotPermitted);
        }
        k.slice_free(p);
        Ok(0)
    })())
}

extern "sysv64" fn yield_to(env: u64, _: u64, _: u64, _: u64, _: u64, _: u64) -> i64 {
    ret(kernel().yield_to(env))
}

extern "sysv64" fn set_pct_entry(env: u64, entry: u64, stack: u64, _: u64, _: u64, _: u64) -> i64 {
    let k = kernel();
    ret((|| {
        let s = k.env_arg(env)?;
        if entry >= USER_END || !(USER_MIN..=USER_END).contains(&stack) && entry != 0 {
            return Err(Error::BadAddress);
        }
        k.envs[s].pct_entry = entry;
        k.envs[s].pct_stack = stack;
        Ok(0)
    })())
}

extern "sysv64" fn pct(target: u64, flags: u64, rdx: u64, r10: u64, r8: u64, r9: u64) -> i64 {
    ret(kernel().pct(target, flags, [rdx, r10, r8, r9]))
}

extern "sysv64" fn set_exception_handler(
    env: u64,
    entry: u64,
    stack: u64,
    save: u64,
    _: u64,
    _: u64,
) -> i64 {
    let k = kernel();
    ret((|| {
        let s = k.env_arg(env)?;
        let target = if entry == 0 {
            None
        } else {
            if entry >= USER_END || !(USER_MIN..=USER_END).contains(&stack) {
                return Err(Error::BadAddress);
            }
            let size = core::mem::size_of::<ExceptionFrame>() as u64;
            if !save.is_multiple_of(8)
                || save / PAGE_SIZE != (save + size - 1) / PAGE_SIZE
                || save >= USER_END
            {
                return Err(Error::BadPointer);
            }
            let pte = pagetable::lookup(&mut PhysTables, k.envs[s].pml4, save & !(PAGE_SIZE - 1))
                .ok_or(Error::BadPointer)?;
            if pte & (USER | WRITABLE) != USER | WRITABLE {
                return Err(Error::BadPointer);
            }
            let frame = pagetable::frame_of(pte);
            k.frames.add_ref(frame)?;
            let kaddr = crate::mm::phys::<u8>((frame << 12) + save % PAGE_SIZE) as u64;
            Some((
                frame,
                ExcTarget {
                    save: kaddr,
                    entry,
                    stack,
                },
            ))
        };
        let e = &mut k.envs[s];
        let old = core::mem::replace(&mut e.exc_frame, target.map(|t| t.0));
        e.exc = target.map_or(
            ExcTarget {
                save: 0,
                entry: 0,
                stack: 0,
            },
            |t| t.1,
        );
        if let Some(f) = old {
            k.frames.drop_ref(f);
        }
        Ok(0)
    })())
}

extern "sysv64" fn yield_(_: u64, _: u64, _: u64, _: u64, _: u64, _: u64) -> i64 {
    kernel().schedule();
    0
}

extern "sysv64" fn exit(code: u64, _: u64, _: u64, _: u64, _: u64, _: u64) -> i64 {
    kernel().exit_current(code as i32);
    0
}

extern "sysv64" fn self_id(_: u64, _: u64, _: u64, _: u64, _: u64, _: u64) -> i64 {
    let k = kernel();
    k.envs[k.current].id as i64
}

extern "sysv64" fn shutdown(code: u64, _: u64, _: u64, _: u64, _: u64, _: u64) -> i64 {
    let k = kernel();
    if k.current != k.root {
        return Error::NotPermitted.as_result();
    }
    crate::kprintln!("shutdown requested with code {}", code as i64);
    cpu::qemu_exit(if code == 0 {
        crate::EXIT_SUCCESS
    } else {
        crate::EXIT_FAILURE
    })
}
