//! dnotify (`fcntl(F_NOTIFY)`): Linux's older directory notification. A
//! process marks an open directory with the kinds of change it wants
//! (`DN_*`); when an entry of that directory is read, written, made,
//! removed, renamed or has its attributes changed, the marking process
//! gets SIGIO, once, or each time with `DN_MULTISHOT`. The changes come
//! from the same places inotify's do (`inotify::created`, `removed`,
//! `moved`, `changed` pass them on, as `DN_*` bits). A mark lasts until its description
//! closes or `F_NOTIFY` asks for nothing. The signal is always SIGIO
//! (`F_SETSIG` is not built), sent to the process that made the mark (the
//! file's owner by Linux's rule).
//!
//! The marks hang from arena root 9, so a change costs one load when
//! nobody marked anything. Everything changes under the big lock.

use super::File;
use crate::errno::{Errno, ENOMEM, ENOSPC};
use crate::fs::Ino;
use crate::shared;
use crate::word::Word;

pub const DN_ACCESS: u32 = 0x1;
pub const DN_MODIFY: u32 = 0x2;
pub const DN_CREATE: u32 = 0x4;
pub const DN_DELETE: u32 = 0x8;
pub const DN_RENAME: u32 = 0x10;
pub const DN_ATTRIB: u32 = 0x20;
pub const DN_MULTISHOT: u32 = 0x8000_0000;

/// Marks at once in the whole system.
const MARKS: usize = 64;
const SIGIO: u32 = 29;

#[derive(Clone, Copy)]
struct Mark {
    /// The description marked (null: a free entry).
    file: *const File,
    dir: Ino,
    mask: u32,
    /// The process signalled.
    env: u32,
}

struct Marks {
    all: [Mark; MARKS],
    live: usize,
}

static MARKS_ROOT: shared::Root<Marks> = shared::Root::new(9);

fn marks() -> Option<&'static mut Marks> {
    // SAFETY: made by `mark`, it lives as long as the arena; the big lock
    // is held and no other reference to it is live.
    unsafe { MARKS_ROOT.get().as_mut() }
}

/// `F_NOTIFY` on directory `f` (inode `dir`) for the changes in `arg`
/// (nothing: the description's mark goes). ENOSPC when every mark is
/// taken.
pub fn mark(f: &File, dir: Ino, arg: u32) -> Result<(), Errno> {
    let key = f as *const File;
    if arg & !DN_MULTISHOT == 0 {
        forget(key);
        return Ok(());
    }
    // SAFETY: null pointers and zero counts are no marks; the big lock is
    // held and no other reference to them is live.
    let m = unsafe { &mut *MARKS_ROOT.get_or_create_zeroed().map_err(|_| ENOMEM)? };
    let env = crate::env::id();
    let at = match m.all.iter().position(|k| k.file == key) {
        Some(at) => at,
        None => {
            let free = m.all.iter().position(|k| k.file.is_null()).ok_or(ENOSPC)?;
            m.live += 1;
            free
        }
    };
    m.all[at] = Mark { file: key, dir, mask: arg, env };
    Ok(())
}

/// Description `f` closes: its mark goes.
pub fn closed(f: &File) {
    forget(f as *const File);
}

fn forget(key: *const File) {
    let Some(m) = marks() else { return };
    for k in m.all.iter_mut().filter(|k| k.file == key) {
        k.file = core::ptr::null();
        m.live -= 1;
    }
}

/// Whether any mark exists.
pub fn marked() -> bool {
    marks().is_some_and(|m| m.live > 0)
}

/// Calls `f` with each marked directory.
pub fn each_dir(mut f: impl FnMut(Ino)) {
    let Some(m) = marks() else { return };
    m.all.iter().filter(|k| !k.file.is_null()).for_each(|k| f(k.dir));
}

/// An entry of directory `d` changed as `dn` says (`DN_*`, from
/// inotify's event: `inotify::to_dir`): each mark on `d` asking for it
/// signals its process.
pub fn changed(d: Ino, dn: u32) {
    let Some(m) = marks() else { return };
    for k in m.all.iter_mut().filter(|k| !k.file.is_null() && k.dir == d && k.mask & dn != 0) {
        (SEND.get())(k.env, SIGIO);
        if k.mask & DN_MULTISHOT == 0 {
            k.file = core::ptr::null();
            m.live -= 1;
        }
    }
}

/// Sends a signal to a process by environment: the process layer's, set
/// at start (`set_sender`); until then nobody is signalled.
static SEND: Word<fn(u32, u32)> = Word::new(|_, _| {});

/// Chooses how a mark's process is signalled.
pub fn set_sender(f: fn(u32, u32)) {
    SEND.set(f);
}
