//! The interactive boot test `tty`: busybox `sh` on lxrt's terminal, typed
//! at through QEMU's serial console. Ctrl-C must stop a loop the shell
//! itself spins in (no system calls, nobody reading the console: the
//! kernel's console notification interrupts the shell) and a spinning
//! child the shell waits for; a background job is waited for; `exit`
//! powers off with success.

use crate::boottest::BootTest;
use crate::build::Image;
use crate::qemu::{self, Key};
use std::time::Duration;

const PROMPT: &str = "/ # ";
const CTRL_C: &[u8] = b"\x03";

fn key(after: &str, pause_ms: u64, send: &[u8]) -> Key {
    Key { after: after.into(), pause_ms, send: send.to_vec() }
}

pub fn boot_test(img: &Image) -> BootTest {
    // Shell arithmetic in what is typed, so the echoed command line never
    // matches what its output must show.
    let keys = vec![
        key(PROMPT, 0, b"while :; do :; done\n"),
        key("done\r\n", 1500, CTRL_C),
        key(PROMPT, 0, b"echo spin-$((6*7))\n"),
        key(PROMPT, 0, b"sh -c 'while :; do :; done'\n"),
        key("done'\r\n", 1500, CTRL_C),
        key(PROMPT, 0, b"echo child-$((6*7)) $?\n"),
        key(PROMPT, 0, b"sleep 1 & wait; echo bg-$((6*7))\n"),
        key(PROMPT, 0, b"exit\n"),
    ];
    BootTest {
        name: "tty".into(),
        args: qemu::base_args(img, "lxrt -t /bin/sh"),
        expect: vec!["spin-42".into(), "child-42 130".into(), "bg-42".into()],
        timeout: Duration::from_secs(120),
        output: None,
        keys,
    }
}
