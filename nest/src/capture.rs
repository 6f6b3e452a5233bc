//! What a subtree prints, collected by its interposer: each `debug_write`
//! is read from the writer's memory and answered without the kernel
//! printing it, so that a test can compare one run's output with another's.
//! The library OS's own notes (`lxrt: ...` lines, written whole by
//! `libos::log`) are not the program's output: they go on to the console.

use abi::nest::{answer, event, Event, Mapping};
use abi::syscall::{self as sc, ENV_SELF};
use abi::Error;
use user::{nest, sys};

/// How the library OS's notes begin.
const NOTE: &[u8] = b"lxrt: ";

/// Where a page of the writer's memory is mapped while it is read.
const WINDOW: u64 = 0x7E10_0000_0000;

/// The bytes a subtree wrote, up to `N`.
pub struct Capture<const N: usize> {
    bytes: [u8; N],
    len: usize,
}

impl<const N: usize> Default for Capture<N> {
    fn default() -> Self {
        Capture { bytes: [0; N], len: 0 }
    }
}

impl<const N: usize> Capture<N> {
    pub fn text(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    /// Lines written so far.
    pub fn lines(&self) -> usize {
        self.text().iter().filter(|&&b| b == b'\n').count()
    }

    /// If `ev` (of environment `env`) is a `debug_write`, collects its
    /// bytes and returns the answer to give it: its length, returned
    /// without the kernel printing it; a library-OS note is let through.
    pub fn take(&mut self, env: u64, ev: &Event) -> Option<(u64, u64)> {
        if ev.kind != event::SYSCALL || ev.number != sc::DEBUG_WRITE {
            return None;
        }
        let (va, len) = (ev.args[0], ev.args[1]);
        let start = self.len;
        match self.read(env, va, len) {
            Ok(()) if self.bytes[start..self.len].starts_with(NOTE) => {
                self.len = start;
                Some((answer::PASS, 0))
            }
            Ok(()) => Some((answer::RETURN, len)),
            Err(e) => Some((answer::RETURN, e.as_result() as u64)),
        }
    }

    /// Appends the `len` bytes at `va` in `env`.
    fn read(&mut self, env: u64, va: u64, len: u64) -> Result<(), Error> {
        let end = va.checked_add(len).ok_or(Error::BadPointer)?;
        let mut at = va;
        while at < end {
            let page = at & !4095;
            let mut m = [Mapping::default(); 1];
            if nest::env_mappings(env, page, &mut m)? != 1 || m[0].va != page {
                return Err(Error::BadPointer);
            }
            let n = (page + 4096 - at).min(end - at) as usize;
            let dst = self.bytes.get_mut(self.len..self.len + n).ok_or(Error::BadLength)?;
            sys::map(ENV_SELF, WINDOW, m[0].frame, 0)?;
            // SAFETY: the page was just mapped readable at WINDOW; the `n`
            // bytes from the offset stay within it.
            dst.copy_from_slice(unsafe {
                core::slice::from_raw_parts((WINDOW + (at - page)) as *const u8, n)
            });
            sys::unmap(ENV_SELF, WINDOW)?;
            self.len += n;
            at += n as u64;
        }
        Ok(())
    }
}
