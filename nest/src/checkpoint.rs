//! The checkpointer (paper 003 §5.4): a held subtree — an environment and
//! all its descendants — saved as a byte image (each one's state record,
//! capability list, wakeup predicates, time-slice count and the contents
//! of every page it maps) and restored from it into fresh environments
//! that go on where they stopped.
//!
//! Names in the image are relative to it (paper 003 §3.2): an environment
//! is named by its place in the image (parents before children), so its
//! parent link and the environment it waits on are indices, translated to
//! the new ids when restored, wherever that is; a page one of them maps
//! but another owns (a copy-on-write page a parent shares with its child)
//! is named by its owner's index and the address where the owner maps it,
//! so it is shared again, not copied. Predicates are recreated under their
//! saved ids (programs keep those in memory; a restore fails with
//! `BadState` if one is taken), over the same addresses. A page owned
//! outside the subtree is recorded by frame number, valid only while that
//! frame lives (`docs/nesting.md`).
//!
//! Layout (`u64` words little-endian): `MAGIC`, `VERSION`, the environment
//! count `m`; then per environment: its parent's index (`ROOT` for the
//! first), its slice count, its page count `n`, its capability count `c`,
//! its predicate count `q`, the id it had, the `EnvState` record (`waiting_on`,
//! `interrupt_from`: index + 1, 0 for none), `c` capabilities (slot,
//! rights, kind, the slot it was derived from), `q` predicates (a `PredInfo`, then its instructions),
//! `n` mappings (va, map flags, owner, at: owner `COPIED` for its own page,
//! whose bytes follow; `OUTSIDE` with `at` the frame number; or the
//! owner's index with `at` the address where the owner maps it), then the
//! bytes of each of its own pages, in order.

use abi::nest::{cap_kind, CapInfo, EnvState, Mapping, PredInfo};
use abi::syscall::{map as mf, CRED_SELF, ENV_SELF, FRAME_ANY, PRED_MAX_INSNS, PRED_REGIONS, SLICE_ANY};
use abi::tables::{env_state, ENV_SLOTS, SLICES};
use abi::Error;
use core::mem::offset_of;
use user::{kinfo, nest, sys};

const MAGIC: u64 = u64::from_le_bytes(*b"VNRCKPT\0");
const VERSION: u64 = 2;
/// A mapping's owner word: its own page, whose bytes are in the image.
const COPIED: u64 = u64::MAX;
/// A mapping's owner word: a frame owned outside the subtree.
const OUTSIDE: u64 = u64::MAX - 1;
/// Bytes of one mapping entry.
const ENTRY: usize = 32;
/// The parent word of the subtree's root.
const ROOT: u64 = u64::MAX;
const PAGE: usize = 4096;
/// Most pages one environment may map to be saved.
pub const MAX_PAGES: usize = 512;
/// Most environments a saved subtree may hold.
pub const MAX_ENVS: usize = 16;
/// Most capabilities one environment's list may hold to be saved.
const MAX_CAPS: usize = 16;
/// Most predicates one environment may hold (the kernel's limit).
const MAX_PREDS: usize = 8;
/// Where the checkpointer maps a page of an environment while it copies.
const WINDOW: u64 = 0x7E00_0000_0000;
const RECORD: usize = size_of::<EnvState>();
const PRED: usize = size_of::<PredInfo>();
/// Bytes of the image's header, and of an environment's words before its
/// record (parent, slices, pages, capabilities, predicates, its id).
pub const HEADER: usize = 24;
pub const ENV_HEADER: usize = 48;
/// Where, in an environment's part, the `waiting_on` word is.
pub const WAITING_ON: usize = ENV_HEADER + offset_of!(EnvState, waiting_on);

/// Writes held subtree `root` into `out`; returns the image's length.
/// `BadLength` if `out` is too small or the subtree is larger than the
/// image allows (`MAX_ENVS`, `MAX_PAGES`); `BadState` if one of it has
/// exited; `BadEnv` if one waits for a reply from outside the subtree (a
/// name the image cannot hold relatively); `NotMapped` if one maps a page
/// another of the subtree owns but does not map itself.
pub fn save(root: u64, out: &mut [u8]) -> Result<usize, Error> {
    let (ids, m) = subtree(root)?;
    let ids = &ids[..m];
    let index = |id: u64| ids.iter().position(|&x| x == id).map(|i| i as u64 + 1);
    let mut w = Writer { out, at: 0 };
    w.word(MAGIC)?;
    w.word(VERSION)?;
    w.word(m as u64)?;
    for (i, &env) in ids.iter().enumerate() {
        let info = kinfo::env_by_id(env).ok_or(Error::BadEnv)?;
        if info.state == env_state::EXITED {
            return Err(Error::BadState);
        }
        let mut st = EnvState::default();
        nest::env_state_get(env, &mut st)?;
        st.waiting_on = match st.waiting_on {
            0 => 0,
            id => index(id).ok_or(Error::BadEnv)?,
        };
        st.interrupt_from = index(st.interrupt_from).unwrap_or(0);
        let mut caps = [CapInfo::default(); MAX_CAPS];
        let c = nest::env_caps(env, &mut caps)?;
        if c == MAX_CAPS {
            return Err(Error::BadLength);
        }
        let mut maps = [Mapping::default(); MAX_PAGES];
        let mut n = 0;
        nest::for_each_mapping(env, |mp| {
            *maps.get_mut(n).ok_or(Error::BadLength)? = mp;
            n += 1;
            Ok(())
        })?;
        // Parents come first, so a child's parent has a smaller index.
        w.word(if i == 0 { ROOT } else { index(info.parent as u64).ok_or(Error::BadEnv)? - 1 })?;
        w.word(info.slices as u64)?;
        w.word(n as u64)?;
        w.word(c as u64)?;
        let preds_at = w.at;
        w.word(0)?;
        w.word(env)?;
        w.bytes(bytes_of(&st))?;
        for cap in &caps[..c] {
            for word in [cap.slot, cap.rights, cap.kind, cap.from] {
                w.word(word)?;
            }
        }
        // Each predicate's record, its instructions written straight after.
        let (mut q, mut from) = (0u64, 0);
        loop {
            let mut info = PredInfo::default();
            let info_at = w.at;
            w.take(PRED)?;
            let id = match nest::env_pred_get(env, from, &mut info, w.rest()) {
                Ok(id) => id,
                Err(Error::BadState) => break,
                Err(e) => return Err(e),
            };
            w.take(info.insns as usize * 8)?;
            w.out[info_at..info_at + PRED].copy_from_slice(bytes_of(&info));
            (q, from) = (q + 1, id + 1);
        }
        w.at -= PRED; // the record of the search that found nothing
        w.out[preds_at..preds_at + 8].copy_from_slice(&q.to_le_bytes());
        let owned = |mp: &Mapping| kinfo::frame(mp.frame).owner as u64 == env;
        for mp in &maps[..n] {
            let owner = kinfo::frame(mp.frame).owner as u64;
            let (whose, at) = match index(owner) {
                _ if owner == env => (COPIED, 0),
                Some(o) => (o - 1, va_of(owner, mp.frame)?),
                None => (OUTSIDE, mp.frame),
            };
            for word in [mp.va, mp.flags, whose, at] {
                w.word(word)?;
            }
        }
        for mp in maps[..n].iter().filter(|mp| owned(mp)) {
            let page = w.take(PAGE)?;
            with_frame(mp.frame, |p| page.copy_from_slice(p))?;
        }
    }
    Ok(w.at)
}

/// Builds the subtree saved in `image` as a new, held subtree whose root
/// is a child of the caller, as it was when saved (each environment with
/// its saved number of time slices); returns the root's id. The whole
/// image is checked before anything is made, and nothing is left behind if
/// a step fails: `BadProgram` for another format, `BadLength` for wrong
/// lengths or counts, `BadState` for a parent link that is not to an
/// earlier environment or a capability derived in a loop (or from an
/// empty slot), `BadEnv` for a name outside the subtree (an environment
/// waited on, a page's owner), `NotPermitted` for a loan (it stands for a
/// capability outside the subtree, which the image cannot name).
///
/// With `same_ids`, every environment takes the id it had again (ids kept
/// in memory stay true): the subtree must have been the caller's child,
/// and every slot free and not reused since (`BadState` otherwise,
/// `env_create_in`).
pub fn restore(image: &[u8], same_ids: bool) -> Result<u64, Error> {
    let (parts, m) = parse(image)?;
    let parts = &parts[..m];
    let mut ids = [0u64; MAX_ENVS];
    let create = |parent: u64, p: &Part| sys::env_create_again(parent, if same_ids { p.id } else { 0 });
    let root = create(ENV_SELF, &parts[0])?;
    ids[0] = root;
    let built = (|| {
        for (i, p) in parts.iter().enumerate() {
            if i > 0 {
                ids[i] = create(ids[p.parent], p)?;
            }
            own_memory(ids[i], image, p)?;
            capabilities(ids[i], image, p)?;
        }
        // Pages shared inside the subtree, once every owner has its own.
        for (i, p) in parts.iter().enumerate() {
            for e in (0..p.pages).map(|k| entry(image, p.entries + k * ENTRY)) {
                if let Some(&owner) = ids[..m].get(e.whose as usize) {
                    let mut found = [Mapping::default()];
                    if nest::env_mappings(owner, e.at, &mut found)? == 0 || found[0].va != e.at {
                        return Err(Error::NotMapped);
                    }
                    sys::map(ids[i], e.va, found[0].frame, e.flags)?;
                }
            }
        }
        for (i, p) in parts.iter().enumerate() {
            let mut r = Reader { image, at: p.preds };
            for _ in 0..p.npreds {
                let info: PredInfo = value(r.take(PRED)?);
                nest::env_pred_install(ids[i], &info, r.take(info.insns as usize * 8)?)?;
            }
            let mut st: EnvState = value(&image[p.record..p.record + RECORD]);
            let new = |rel: u64| if rel == 0 { 0 } else { ids[rel as usize - 1] };
            st.waiting_on = new(st.waiting_on);
            st.interrupt_from = new(st.interrupt_from);
            nest::env_state_set(ids[i], &st)?;
            for _ in 0..p.slices {
                sys::slice_alloc(ids[i], SLICE_ANY)?;
            }
        }
        Ok(())
    })();
    match built {
        Ok(()) => Ok(root),
        Err(e) => {
            // The whole new subtree and everything charged to it goes.
            let _ = sys::env_destroy(root);
            Err(e)
        }
    }
}

/// Releases every environment of held subtree `root` (`env_run` releases
/// one).
pub fn release(root: u64) -> Result<(), Error> {
    let (ids, m) = subtree(root)?;
    ids[..m].iter().try_for_each(|&id| sys::env_run(id).map(|_| ()))
}

/// Where environment `i`'s part of a valid `image` starts.
pub fn part_at(image: &[u8], i: usize) -> Result<usize, Error> {
    let (parts, m) = parse(image)?;
    parts[..m].get(i).map(|p| p.record - ENV_HEADER).ok_or(Error::BadLength)
}

/// `root` and its descendants by the exposed table, parents before
/// children.
fn subtree(root: u64) -> Result<([u64; MAX_ENVS], usize), Error> {
    let mut ids = [0; MAX_ENVS];
    ids[0] = root;
    let (mut m, mut i) = (1, 0);
    while i < m {
        let parent = ids[i];
        for e in (0..ENV_SLOTS).map(kinfo::env).filter(|e| e.id != 0 && e.parent as u64 == parent) {
            *ids.get_mut(m).ok_or(Error::BadLength)? = e.id as u64;
            m += 1;
        }
        i += 1;
    }
    Ok((ids, m))
}

/// One environment's part of an image, checked.
#[derive(Clone, Copy, Default)]
struct Part {
    parent: usize,
    slices: u64,
    pages: usize,
    npreds: usize,
    ncaps: usize,
    /// The id it had.
    id: u64,
    /// Offsets of its record, capabilities, predicates, mappings and page
    /// bytes.
    record: usize,
    caps: usize,
    preds: usize,
    entries: usize,
    bytes: usize,
}

/// Checks the whole image and finds each environment's part.
fn parse(image: &[u8]) -> Result<([Part; MAX_ENVS], usize), Error> {
    let mut r = Reader { image, at: 0 };
    if r.word()? != MAGIC || r.word()? != VERSION {
        return Err(Error::BadProgram);
    }
    let m = count(r.word()?, MAX_ENVS)?;
    if m == 0 {
        return Err(Error::BadLength);
    }
    let mut parts = [Part::default(); MAX_ENVS];
    for (i, part) in parts[..m].iter_mut().enumerate() {
        let parent = r.word()?;
        // The root has none; every other names an earlier one, so the
        // links cannot loop.
        let parent = match (i, parent) {
            (0, ROOT) => 0,
            (0, _) => return Err(Error::BadState),
            (_, p) if p < i as u64 => p as usize,
            _ => return Err(Error::BadState),
        };
        let slices = r.word()?;
        if slices > SLICES as u64 {
            return Err(Error::BadLength);
        }
        let pages = count(r.word()?, MAX_PAGES)?;
        let caps = count(r.word()?, MAX_CAPS)?;
        let npreds = count(r.word()?, MAX_PREDS)?;
        let id = r.word()?;
        let record_at = r.at;
        let st: EnvState = value(r.take(RECORD)?);
        let in_image = |rel: u64| rel <= m as u64;
        if !in_image(st.waiting_on) || st.waiting_on == i as u64 + 1 || !in_image(st.interrupt_from) {
            return Err(Error::BadEnv);
        }
        let caps_at = r.at;
        check_caps(r.take(caps * CAP)?)?;
        let preds = r.at;
        for _ in 0..npreds {
            let info: PredInfo = value(r.take(PRED)?);
            if info.insns == 0 || info.insns > PRED_MAX_INSNS || info.nregions > PRED_REGIONS as u64 {
                return Err(Error::BadLength);
            }
            r.take(info.insns as usize * 8)?;
        }
        let entries = r.at;
        let mut copied = 0;
        for _ in 0..pages {
            let e = entry(r.take(ENTRY)?, 0);
            match e.whose {
                COPIED => copied += 1,
                OUTSIDE => {}
                o if o < m as u64 && o != i as u64 => {}
                _ => return Err(Error::BadEnv),
            }
        }
        let bytes = r.at;
        r.take(copied * PAGE)?;
        *part = Part {
            parent,
            slices,
            pages,
            npreds,
            ncaps: caps,
            id,
            record: record_at,
            caps: caps_at,
            preds,
            entries,
            bytes,
        };
    }
    if r.at != image.len() {
        return Err(Error::BadLength);
    }
    Ok((parts, m))
}

/// `n` if it is at most `max`.
fn count(n: u64, max: usize) -> Result<usize, Error> {
    usize::try_from(n).ok().filter(|&n| n <= max).ok_or(Error::BadLength)
}

/// A plain-data record (`EnvState`, `PredInfo`) read from `bytes`, which
/// hold exactly one; the kernel checks every field where it is used.
fn value<T: Copy + Default>(bytes: &[u8]) -> T {
    let mut v = T::default();
    assert_eq!(bytes.len(), size_of::<T>());
    // SAFETY: T is a `repr(C)` record of integers (every bit pattern is a
    // value) and `bytes` holds exactly its size.
    unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), (&raw mut v).cast::<u8>(), bytes.len()) };
    v
}

/// The bytes of a plain-data record.
fn bytes_of<T: Copy>(v: &T) -> &[u8] {
    // SAFETY: reading the bytes of a `repr(C)` record of integers is fine.
    unsafe { core::slice::from_raw_parts((v as *const T).cast::<u8>(), size_of::<T>()) }
}

/// Bytes of one capability in an image.
const CAP: usize = 32;

/// The capability `k` of `caps`: (slot, rights, kind, from).
fn cap(caps: &[u8], k: usize) -> [u64; 4] {
    core::array::from_fn(|j| {
        let at = k * CAP + 8 * j;
        u64::from_le_bytes(caps[at..at + 8].try_into().unwrap_or_default())
    })
}

/// A saved capability list is one the restorer can rebuild: its own root
/// in `CRED_SELF`, and capabilities derived, through slots of the same
/// list, from it (`BadState` otherwise: a chain that loops or names an
/// empty slot); a loan stands for a capability outside the subtree
/// (`NotPermitted`: the restorer cannot hold it for the image).
fn check_caps(caps: &[u8]) -> Result<(), Error> {
    let c = caps.len() / CAP;
    let find = |slot: u64| (0..c).find(|&k| cap(caps, k)[0] == slot);
    for k in 0..c {
        let [slot, _, kind, _] = cap(caps, k);
        match kind {
            cap_kind::OWN if slot == CRED_SELF => {}
            cap_kind::DERIVED => {
                // Up the chain to the root, in at most `c` steps.
                let mut at = k;
                for _ in 0..=c {
                    if cap(caps, at)[2] == cap_kind::OWN {
                        break;
                    }
                    at = find(cap(caps, at)[3]).ok_or(Error::BadState)?;
                }
                if cap(caps, at)[2] != cap_kind::OWN {
                    return Err(Error::BadState);
                }
            }
            cap_kind::LOAN => return Err(Error::NotPermitted),
            _ => return Err(Error::BadState),
        }
    }
    Ok(())
}

/// Rebuilds `env`'s derived capabilities of part `p` (checked by
/// `check_caps`), each after the one it was derived from.
fn capabilities(env: u64, image: &[u8], p: &Part) -> Result<(), Error> {
    let caps = &image[p.caps..p.caps + p.ncaps * CAP];
    let mut made = [false; MAX_CAPS];
    let is_made = |made: &[bool; MAX_CAPS], slot: u64| {
        (0..p.ncaps).any(|k| cap(caps, k)[0] == slot && (made[k] || cap(caps, k)[2] == cap_kind::OWN))
    };
    for _ in 0..p.ncaps {
        for k in 0..p.ncaps {
            let [slot, rights, kind, from] = cap(caps, k);
            if kind == cap_kind::DERIVED && !made[k] && is_made(&made, from) {
                nest::env_cap_derive(env, slot, from, rights)?;
                made[k] = true;
            }
        }
    }
    Ok(())
}

/// One mapping entry of an image.
struct Entry {
    va: u64,
    flags: u64,
    whose: u64,
    at: u64,
}

/// The entry at `at` of `bytes`, which holds it (`parse` checked).
fn entry(bytes: &[u8], at: usize) -> Entry {
    let w = |k: usize| u64::from_le_bytes(bytes[at + 8 * k..at + 8 * k + 8].try_into().unwrap_or_default());
    Entry { va: w(0), flags: w(1), whose: w(2), at: w(3) }
}

/// Gives `env` the pages of its part `p` that are its own (new frames
/// with the saved bytes) or owned outside the subtree (by frame number),
/// at the same addresses.
fn own_memory(env: u64, image: &[u8], p: &Part) -> Result<(), Error> {
    let mut bytes = Reader { image, at: p.bytes };
    for e in (0..p.pages).map(|k| entry(image, p.entries + k * ENTRY)) {
        let frame = match e.whose {
            COPIED => {
                let f = sys::frame_alloc(env, FRAME_ANY)?;
                let page = bytes.take(PAGE)?;
                with_frame(f, |d| d.copy_from_slice(page))?;
                f
            }
            OUTSIDE => e.at,
            _ => continue,
        };
        sys::map(env, e.va, frame, e.flags)?;
    }
    Ok(())
}

/// Where `env` maps `frame` (`NotMapped` if nowhere: the image could not
/// name it).
fn va_of(env: u64, frame: u64) -> Result<u64, Error> {
    let mut at = None;
    nest::for_each_mapping(env, |mp| {
        if mp.frame == frame && at.is_none() {
            at = Some(mp.va);
        }
        Ok(())
    })?;
    at.ok_or(Error::NotMapped)
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
    /// The room left.
    fn rest(&mut self) -> &mut [u8] {
        &mut self.out[self.at..]
    }
}

struct Reader<'a> {
    image: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Error> {
        let s = self
            .image
            .get(self.at..self.at.checked_add(n).ok_or(Error::BadLength)?)
            .ok_or(Error::BadLength)?;
        self.at += n;
        Ok(s)
    }
    fn word(&mut self) -> Result<u64, Error> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().map_err(|_| Error::BadLength)?))
    }
}
