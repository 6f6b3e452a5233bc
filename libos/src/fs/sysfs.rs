//! The few `/sys` files programs read to size themselves: which CPUs are
//! online and possible (one, numbered 0, until the kernel runs on more).

use super::node;
use super::{dir, ROOT, S_IFDIR, S_IFREG};
use crate::errno::Errno;

const FILES: [(&[u8], &[u8]); 2] =
    [(b"/sys/devices/system/cpu/online", b"0\n"), (b"/sys/devices/system/cpu/possible", b"0\n")];

/// Makes the files and the directories above them (at boot).
pub fn populate() -> Result<(), Errno> {
    for (p, text) in FILES {
        let mut d = ROOT;
        let at = p.iter().rposition(|&c| c == b'/').expect("absolute");
        let (parts, name) = (&p[..at], &p[at + 1..]);
        for part in parts.split(|&c| c == b'/').filter(|s| !s.is_empty()) {
            d = match dir::lookup(d, part) {
                Some(i) => i,
                None => {
                    let i = node::alloc_on(S_IFDIR | 0o755, node::FS_SYS)?;
                    dir::add(d, part, i)?;
                    i
                }
            };
        }
        let ino = node::alloc_on(S_IFREG | 0o444, node::FS_SYS)?;
        dir::add(d, name, ino)?;
        node::update(ino, |n| node::write_at(n, 0, text))?;
    }
    Ok(())
}
