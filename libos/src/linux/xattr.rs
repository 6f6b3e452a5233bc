//! Extended attributes (`getxattr` and its kin): the file system keeps
//! none, and answers as Linux does for a file system without them, once
//! the path or descriptor and the name are checked: getting, setting or
//! removing one is EOPNOTSUPP, the list is empty. (GNU `ls -l` asks every
//! file for its ACL and SELinux label this way.)

use crate::errno::Errno;
use crate::errno::{LxResult, ENAMETOOLONG, EOPNOTSUPP, ERANGE};
use crate::{fd, fs, proc, uaccess};

/// Linux's longest attribute name.
const NAME_MAX: usize = 255;

/// Where the call's file is: a path (following a last symbolic link or
/// not) or a descriptor.
pub enum Target {
    Path { ptr: u64, follow: bool },
    Fd(i64),
}

fn check(target: Target) -> Result<(), Errno> {
    match target {
        Target::Path { ptr, follow } => {
            fs::path::resolve(proc::cwd(), uaccess::path(ptr)?, follow).map(|_| ())
        }
        Target::Fd(n) => fd::get(n).map(|_| ()),
    }
}

fn check_name(ptr: u64) -> Result<(), Errno> {
    match uaccess::cstr(ptr, NAME_MAX + 1) {
        Ok(n) if !n.is_empty() && n.len() <= NAME_MAX => Ok(()),
        Ok(_) | Err(ENAMETOOLONG) => Err(ERANGE),
        Err(e) => Err(e),
    }
}

/// `getxattr`, `setxattr`, `removexattr` (and their `l` and `f` forms).
pub fn one(target: Target, name: u64) -> LxResult {
    check(target)?;
    check_name(name)?;
    Err(EOPNOTSUPP)
}

/// `listxattr` (and its `l` and `f` forms): no names.
pub fn list(target: Target) -> LxResult {
    check(target)?;
    Ok(0)
}
