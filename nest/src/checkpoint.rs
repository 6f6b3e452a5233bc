//! The checkpointer (paper 003 §5.4): a held environment saved as a byte
//! image — its state record and the contents of every page it maps — and
//! restored from it into a fresh environment that goes on where it stopped.
//!
//! The image is self-contained for the pages the environment owns: their
//! bytes are in it. A page it maps but does not own (shared with its
//! parent, say) is recorded by frame number, a reference valid only while
//! that frame lives (`docs/nesting.md`).
//!
//! Layout (`u64` words little-endian): `MAGIC`, `VERSION`, the page count
//! `n`, the `EnvState` record, `n` entries (va, map flags, the frame if
//! shared or `COPIED`), then the bytes of each copied page, in order.

use abi::nest::{EnvState, Mapping};
use abi::syscall::{map as mf, ENV_SELF, FRAME_ANY};
use abi::Error;
use user::{kinfo, nest, sys};

const MAGIC: u64 = u64::from_le_bytes(*b"VNRCKPT\0");
const VERSION: u64 = 1;
/// An entry's frame word for a page whose bytes are in the image.
const COPIED: u64 = u64::MAX;
const PAGE: usize = 4096;
/// Most pages an environment may map to be saved.
pub const MAX_PAGES: usize = 512;
/// Where the checkpointer maps a page of the environment while it copies.
const WINDOW: u64 = 0x7E00_0000_0000;
const RECORD: usize = size_of::<EnvState>();

/// Writes held environment `env` into `out`; returns the image's length.
/// `BadLength` if `out` is too small or `env` maps more than `MAX_PAGES`.
pub fn save(env: u64, out: &mut [u8]) -> Result<usize, Error> {
    let mut st = EnvState::default();
    nest::env_state_get(env, &mut st)?;
    let mut maps = [Mapping::default(); MAX_PAGES];
    let mut n = 0;
    nest::for_each_mapping(env, |m| {
        *maps.get_mut(n).ok_or(Error::BadLength)? = m;
        n += 1;
        Ok(())
    })?;
    let mut w = Writer { out, at: 0 };
    w.word(MAGIC)?;
    w.word(VERSION)?;
    w.word(n as u64)?;
    // SAFETY: EnvState is plain `repr(C)` data; reading its bytes is fine.
    w.bytes(unsafe { core::slice::from_raw_parts((&raw const st).cast::<u8>(), RECORD) })?;
    let owned = |m: &Mapping| kinfo::frame(m.frame).owner as u64 == env;
    for m in &maps[..n] {
        w.word(m.va)?;
        w.word(m.flags)?;
        w.word(if owned(m) { COPIED } else { m.frame })?;
    }
    for m in maps[..n].iter().filter(|m| owned(m)) {
        let page = w.take(PAGE)?;
        with_frame(m.frame, |p| page.copy_from_slice(p))?;
    }
    Ok(w.at)
}

/// Builds a held environment (a child of the caller) from `image`, as it
/// was when saved; returns its id. Nothing is left behind if it fails.
pub fn restore(image: &[u8]) -> Result<u64, Error> {
    let mut r = Reader { image, at: 0 };
    if r.word()? != MAGIC || r.word()? != VERSION {
        return Err(Error::BadProgram);
    }
    let n = usize::try_from(r.word()?).ok().filter(|&n| n <= MAX_PAGES).ok_or(Error::BadLength)?;
    let mut st = EnvState::default();
    // SAFETY: EnvState is plain data; `env_state_set` checks every field.
    unsafe { core::slice::from_raw_parts_mut((&raw mut st).cast::<u8>(), RECORD) }
        .copy_from_slice(r.take(RECORD)?);
    let entries = r.at;
    r.take(n * 24)?;
    let new = sys::env_create()?;
    let built = (|| {
        for i in 0..n {
            let mut e = Reader { image, at: entries + i * 24 };
            let (va, flags, shared) = (e.word()?, e.word()?, e.word()?);
            let frame = if shared == COPIED {
                let f = sys::frame_alloc(new, FRAME_ANY)?;
                let page = r.take(PAGE)?;
                with_frame(f, |p| p.copy_from_slice(page)).inspect_err(|_| {
                    let _ = sys::frame_free(f);
                })?;
                f
            } else {
                shared
            };
            sys::map(new, va, frame, flags)?;
        }
        nest::env_state_set(new, &st)
    })();
    match built {
        Ok(_) => Ok(new),
        Err(e) => {
            let _ = sys::env_destroy(new);
            Err(e)
        }
    }
}

/// Runs `f` on frame `frame`'s bytes, mapped here for the while.
fn with_frame<F: FnOnce(&mut [u8])>(frame: u64, f: F) -> Result<(), Error> {
    sys::map(ENV_SELF, WINDOW, frame, mf::WRITE)?;
    // SAFETY: the page was just mapped writable at WINDOW; nothing else
    // uses WINDOW, and it is unmapped before this returns.
    f(unsafe { core::slice::from_raw_parts_mut(WINDOW as *mut u8, PAGE) });
    sys::unmap(ENV_SELF, WINDOW).map(|_| ())
}

struct Writer<'a> {
    out: &'a mut [u8],
    at: usize,
}

impl Writer<'_> {
    fn take(&mut self, n: usize) -> Result<&mut [u8], Error> {
        let s = self.out.get_mut(self.at..self.at + n).ok_or(Error::BadLength)?;
        self.at += n;
        Ok(s)
    }
    fn word(&mut self, w: u64) -> Result<(), Error> {
        self.take(8)?.copy_from_slice(&w.to_le_bytes());
        Ok(())
    }
    fn bytes(&mut self, b: &[u8]) -> Result<(), Error> {
        self.take(b.len())?.copy_from_slice(b);
        Ok(())
    }
}

struct Reader<'a> {
    image: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Error> {
        let s = self.image.get(self.at..self.at + n).ok_or(Error::BadLength)?;
        self.at += n;
        Ok(s)
    }
    fn word(&mut self) -> Result<u64, Error> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().map_err(|_| Error::BadLength)?))
    }
}
