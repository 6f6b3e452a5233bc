//! `/dev`: device nodes in the ordinary file system, made at boot. A node
//! is an inode of type `S_IFCHR` whose `rdev` names the device; opening it
//! makes an open file of the kind the table below gives (`kind`), so
//! `ls -l /dev` and `stat` show what Linux shows. `/dev/fd` and
//! `/dev/std{in,out,err}` are symbolic links into `/proc/self/fd`, whose
//! entries open the descriptor they name (`procfs::fd_alias`). `/dev/shm`
//! is an ordinary directory for POSIX shared memory and semaphores.
//! `/dev/ptmx` makes a pseudo-terminal, whose slave appears in `/dev/pts`
//! while its master is open (`obj::pty`).

use super::node::{self, Ino};
use super::stat::dev;
use super::{dir, ROOT, S_IFCHR, S_IFDIR, S_IFLNK};
use crate::errno::Errno;
use crate::obj::Kind;

/// `/dev/tty`, the controlling terminal.
pub const TTY: u32 = dev(5, 0);

/// Each device: its name, number, permissions and the object it opens.
const DEVICES: [(&[u8], u32, u32, Kind); 8] = [
    (b"null", dev(1, 3), 0o666, Kind::Null),
    (b"zero", dev(1, 5), 0o666, Kind::Zero),
    (b"full", dev(1, 7), 0o666, Kind::Full),
    (b"random", dev(1, 8), 0o666, Kind::Random),
    (b"urandom", dev(1, 9), 0o666, Kind::Random),
    (b"tty", TTY, 0o666, Kind::Console),
    (b"console", dev(5, 1), 0o620, Kind::Console),
    (b"ptmx", crate::obj::pty::PTMX, 0o666, Kind::PtyMaster),
];

const LINKS: [(&[u8], &[u8]); 4] = [
    (b"fd", b"/proc/self/fd"),
    (b"stdin", b"/proc/self/fd/0"),
    (b"stdout", b"/proc/self/fd/1"),
    (b"stderr", b"/proc/self/fd/2"),
];

/// The kind of open file a device node with number `rdev` makes.
pub fn kind(rdev: u32) -> Option<Kind> {
    DEVICES.iter().find(|d| d.1 == rdev).map(|d| d.3)
}

/// Makes `/dev` and its nodes (at boot, after the archive's files).
pub fn populate() -> Result<(), Errno> {
    let d = match dir::lookup(ROOT, b"dev") {
        // (The boot archive's empty directory becomes devtmpfs's.)
        Some(d) => {
            node::update(d, |n| n.fs = node::FS_DEV);
            d
        }
        None => add(ROOT, b"dev", S_IFDIR | 0o755)?,
    };
    for (name, rdev, perm, _) in DEVICES {
        let ino = add(d, name, S_IFCHR | perm)?;
        node::update(ino, |n| n.rdev = rdev);
    }
    for (name, target) in LINKS {
        let ino = add(d, name, S_IFLNK | 0o777)?;
        node::update(ino, |n| node::write_at(n, 0, target))?;
    }
    // POSIX shared memory and named semaphores (`shm_open`, `sem_open`)
    // are files here, writable by everyone, sticky as Linux's tmpfs.
    add(d, b"shm", S_IFDIR | 0o1777)?;
    add(d, b"pts", S_IFDIR | 0o755)?;
    Ok(())
}

/// A new node `name` of `mode` in directory `d`.
fn add(d: Ino, name: &[u8], mode: u32) -> Result<Ino, Errno> {
    let ino = node::alloc_on(mode, node::FS_DEV)?;
    if let Err(e) = dir::add(d, name, ino) {
        node::release(ino);
        return Err(e);
    }
    Ok(ino)
}
