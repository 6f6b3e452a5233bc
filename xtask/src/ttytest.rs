//! The interactive boot test `tty`: busybox `sh` on lxrt's terminal, typed
//! at through QEMU's serial console. Ctrl-C must stop a loop the shell
//! itself spins in (no system calls, nobody reading the console: the
//! kernel's console notification interrupts the shell) and a spinning
//! child the shell waits for; a background job is waited for; job control
//! (Ctrl-Z, `fg`, `kill -STOP`, `bg`, `jobs`, a background reader of the
//! terminal stopped by SIGTTIN) works; `exit` powers off with success.

use crate::boottest::BootTest;
use crate::build::Image;
use crate::qemu::{self, Key};
use std::time::Duration;

const PROMPT: &str = "/ # ";
const CTRL_C: &[u8] = b"\x03";
const CTRL_Z: &[u8] = b"\x1a";
const CTRL_D: &[u8] = b"\x04";

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
        // Job control: Ctrl-Z stops the foreground job, `fg` continues it;
        // a background job stopped by signal, continued with `bg`.
        key(PROMPT, 0, b"sleep 5\n"),
        key("sleep 5\r\n", 1000, CTRL_Z),
        key(PROMPT, 0, b"fg\n"),
        key(PROMPT, 0, b"echo fg-$((6*7)) $?\n"),
        key(PROMPT, 0, b"sleep 30 &\n"),
        key(
            PROMPT,
            0,
            b"kill -STOP %1; sleep 1; jobs; bg; sleep 1; jobs; kill %1; wait; echo jobs-$((6*7))\n",
        ),
        // A background job reading the terminal stops (SIGTTIN) until `fg`.
        key(PROMPT, 0, b"cat &\n"),
        key(PROMPT, 1500, b"jobs\n"),
        key(PROMPT, 0, b"fg\n"),
        key("cat\r\n", 1000, b"typed line\n"),
        key("typed line\r\n", 1000, CTRL_D),
        key(PROMPT, 0, b"echo tty-$((6*7))\n"),
        key(PROMPT, 0, b"exit\n"),
    ];
    on_terminal(
        img,
        "tty",
        keys,
        &[
            "spin-42",
            "child-42 130",
            "bg-42",
            "^Z",
            "Stopped                    sleep 5",
            "fg-42 0",
            "Stopped (signal)           sleep 30",
            "Running                    sleep 30",
            "jobs-42",
            "Stopped (tty input)        cat",
            "tty-42",
        ],
    )
}

/// The boot test `tty_login`: busybox `login` on lxrt's terminal, as a
/// person would log in as `cargo xtask run`'s second user (issue 25). A
/// wrong password is refused; the right one gives a shell of uid 1000 that
/// cannot read `/etc/shadow`; its `exit` returns to root's shell.
pub fn login_test(img: &Image) -> BootTest {
    let keys = vec![
        key(PROMPT, 0, b"login user\n"),
        key("Password: ", 0, b"wrong\n"),
        key("login: ", 0, b"user\n"),
        key("Password: ", 0, b"veneer\n"),
        key("$ ", 0, b"echo uid-$((500*2))-$(id -u); cat /etc/shadow\n"),
        key("$ ", 0, b"exit\n"),
        key(PROMPT, 0, b"echo back-$((6*7))-$(id -u)\n"),
        key(PROMPT, 0, b"exit\n"),
    ];
    on_terminal(
        img,
        "tty_login",
        keys,
        &["Login incorrect", "uid-1000-1000", "can't open '/etc/shadow': Permission denied", "back-42-0"],
    )
}

/// A boot test of `keys` typed at busybox `sh` on lxrt's terminal, which
/// passes when the console shows every line of `expect`.
fn on_terminal(img: &Image, name: &str, keys: Vec<Key>, expect: &[&str]) -> BootTest {
    BootTest {
        keys,
        ..BootTest::new(
            name.into(),
            qemu::base_args(img, "lxrt -t /bin/sh"),
            expect.iter().map(|e| e.to_string()).collect(),
            Duration::from_secs(120),
        )
    }
}

/// The interactive boot test `erltty`: Debian's Erlang shell (`erl`, with
/// erlang-base) on lxrt's terminal: an expression evaluated, a line edited
/// before it is entered (Ctrl-A to its start, text inserted there), and
/// `q().` back to the shell. Issue 29: "the interactive erl shell on the
/// terminal with line editing".
pub fn erlang_test(img: &Image) -> Result<BootTest, String> {
    // erl's line editor needs the terminal's description (terminfo, in
    // ncurses-base: essential in Debian, so no package names it).
    let img = crate::build::with_packages(img, &["erlang-base".to_string(), "ncurses-base".to_string()])?;
    const CTRL_A: &[u8] = b"\x01";
    let keys = vec![
        key(PROMPT, 0, b"erl\n"),
        key("1> ", 0, b"X = 6 * 7.\n"),
        key("2> ", 0, b"lists:seq(1, X)) + 1."),
        key(")) + 1.", 300, CTRL_A),
        // (The editor redraws by moving the cursor: nothing new to wait for.)
        key("", 500, b"length("),
        // Each inserted character redraws the rest of the line after it.
        key("(lists:seq(1, X)) + 1.", 300, b"\n"),
        key("3> ", 0, b"q().\n"),
        key(PROMPT, 0, b"echo erl-$((6*7)) $?\n"),
        key(PROMPT, 0, b"exit\n"),
    ];
    Ok(BootTest {
        keys,
        ..BootTest::new(
            "erltty".into(),
            qemu::base_args(&img, "lxrt -t /bin/sh"),
            ["42", "43", "erl-42 0"].map(String::from).to_vec(),
            Duration::from_secs(300),
        )
    })
}
