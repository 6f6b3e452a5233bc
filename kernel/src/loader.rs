//! Loads the first environment from the boot file system. Later programs
//! are loaded by the library OS in user space; the kernel does this once
//! because nothing else is running yet.

use crate::env::{Slot, State};
use crate::frames::Frame;
use crate::mm::PhysTables;
use crate::pagetable::{self, NO_EXEC, PRESENT, USER, WRITABLE};
use crate::state::Kernel;
use abi::layout::{INIT_STACK_PAGES, INIT_STACK_TOP, USER_END, USER_MIN};
use abi::tables::frame_state;
use binfmt::elf::{Elf, PF_W, PF_X, PT_LOAD};

impl Kernel {
    /// Creates the first environment from `bin/NAME` and makes it runnable.
    pub fn load_init(&mut self, bootfs: &[u8], name: &str) -> Result<Slot, &'static str> {
        let mut path = [0u8; 64];
        let p = b"bin/";
        if name.len() + p.len() > path.len() {
            return Err("program name too long");
        }
        path[..p.len()].copy_from_slice(p);
        path[p.len()..p.len() + name.len()].copy_from_slice(name.as_bytes());
        let path = core::str::from_utf8(&path[..p.len() + name.len()]).map_err(|_| "bad name")?;
        let file = binfmt::cpio::find(bootfs, path).ok_or("no such program in the boot file system")?;
        let elf = Elf::parse(file.data, USER_MIN, USER_END, 0).map_err(|e| e.describe())?;
        let s = self.env_create(None).map_err(|e| e.name())?;
        for seg in elf.segments().filter(|s| s.kind == PT_LOAD) {
            let mut rights = PRESENT | USER;
            if seg.flags & PF_W != 0 {
                rights |= WRITABLE;
            }
            if seg.flags & PF_X == 0 {
                rights |= NO_EXEC;
            }
            let data = elf.file_bytes(&seg);
            let mut va = seg.vaddr & !4095;
            while va < seg.vaddr + seg.memsz {
                let frame = self.user_page(s, va, rights)?;
                // Copy the part of the file that falls in this page.
                let (lo, hi) = (va.max(seg.vaddr), (va + 4096).min(seg.vaddr + seg.filesz));
                if lo < hi {
                    let src = &data[(lo - seg.vaddr) as usize..(hi - seg.vaddr) as usize];
                    let dst = crate::mm::phys::<u8>(frame.addr() + (lo - va));
                    // SAFETY: dst..dst+len lies in one frame owned by the new
                    // environment, seen through the physical window.
                    unsafe { core::ptr::copy_nonoverlapping(src.as_ptr(), dst, src.len()) };
                }
                va += 4096;
            }
        }
        for i in 1..=INIT_STACK_PAGES {
            self.user_page(s, INIT_STACK_TOP - i * 4096, PRESENT | USER | WRITABLE | NO_EXEC)?;
        }
        let e = &mut self.envs[s];
        e.tf.rip = elf.entry;
        e.tf.rsp = INIT_STACK_TOP;
        self.set_state(s, State::Runnable);
        self.mem.publish_free();
        Ok(s)
    }

    /// The frame at `va` in slot `s`'s space, allocated, zeroed and mapped
    /// with `rights` if absent (rights are merged if two segments share it).
    fn user_page(&mut self, s: Slot, va: u64, rights: u64) -> Result<Frame, &'static str> {
        let pml4 = self.envs[s].pml4;
        if let Some(pte) = pagetable::lookup(&mut PhysTables, pml4, va) {
            let merged = (pte | rights) & !(NO_EXEC & !(pte & rights));
            pagetable::protect(&mut PhysTables, pml4, va, merged & !pagetable::FRAME_MASK)
                .map_err(|e| e.name())?;
            return Ok(pagetable::frame_of(pte));
        }
        let id = self.envs[s].id().raw();
        let f = self.mem.frames.alloc(None, id, frame_state::USER).map_err(|e| e.name())?;
        // SAFETY: a fresh frame seen through the physical window.
        unsafe { core::ptr::write_bytes(crate::mm::frame_ptr::<u8>(f), 0, 4096) };
        // A guard its last user set (a share, a range) is not this one's.
        self.mem.set_share_guard(f, crate::cap::CapRef::NONE);
        self.mem.frames.add_ref(f).map_err(|e| e.name())?;
        let frames = &mut self.mem.frames;
        pagetable::map(&mut PhysTables, pml4, va, pagetable::entry(f, rights), &mut || {
            frames.alloc(None, id, frame_state::PAGE_TABLE)
        })
        .map_err(|e| e.name())?;
        Ok(f)
    }
}
