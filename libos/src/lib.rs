//! The library OS (our ExOS, paper 000 §5.2): UNIX processes, files, pipes
//! and a Linux system-call personality built entirely in user space from
//! Veneer's primitives, living in each application's address space. The
//! `lxrt` program runs a static Linux binary on top of it.
#![no_std]
// lxrt's per-process statics are reached as `&mut *(&raw mut X)`: a
// reference made from a raw pointer, which is what the static-mut rules ask
// for, though clippy sees an address-of immediately dereferenced.
#![allow(clippy::deref_addrof)]

extern crate alloc;

pub mod alarm;
pub mod copy;
pub mod entry;
pub mod env;
pub mod errno;
pub mod exec;
pub mod fd;
pub mod filemap;
pub mod fs;
pub mod futex;
pub mod heap;
pub mod io;
pub mod layout;
pub mod linux;
pub mod loader;
pub mod lock;
pub mod locks;
pub mod log;
pub mod native;
pub mod net;
pub mod obj;
pub mod oom;
pub mod predicate;
pub mod private;
pub mod proc;
pub mod random;
pub mod range;
pub mod scoped;
pub mod selfmap;
pub mod shared;
pub mod signo;
pub mod sleep;
pub mod time;
pub mod trap;
pub mod uaccess;
pub mod vdso;
pub mod vm;
pub mod wait;
pub mod word;
