//! A minimal console shell, the interactive first environment until the
//! library OS brings a real one: lists and runs programs from the boot file
//! system, shows the exposed environment and frame tables.
#![no_std]
#![no_main]

use abi::tables::{env_state, ENV_SLOTS};
use user::{bootfs, kinfo, print, println, spawn, sys};

const HELP: &str = "\
commands:
  ls            programs in the boot file system
  run PROG [N]  start bin/PROG with argument N and wait for it
  ps            the environment table
  mem           frame usage
  echo TEXT     print TEXT
  exit [CODE]   power off";

fn read_line(buf: &mut [u8]) -> usize {
    let mut n = 0;
    loop {
        let mut c = [0u8; 1];
        if sys::console_read(&mut c).unwrap_or(0) == 0 {
            sys::yield_now();
            continue;
        }
        match c[0] {
            b'\r' | b'\n' => {
                println!();
                return n;
            }
            0x7f | 0x08 if n > 0 => {
                n -= 1;
                print!("\x08 \x08");
            }
            b if (0x20..0x7f).contains(&b) && n < buf.len() => {
                buf[n] = b;
                n += 1;
                let _ = sys::debug_write(&c);
            }
            _ => {}
        }
    }
}

fn ps() {
    println!("{:>8} {:>8} {:>9} {:>7}", "ID", "PARENT", "STATE", "FRAMES");
    for s in 0..ENV_SLOTS {
        let e = kinfo::env(s);
        if e.id == 0 {
            continue;
        }
        let state = match e.state {
            env_state::STOPPED => "stopped",
            env_state::RUNNABLE => "runnable",
            env_state::EXITED => "exited",
            _ => "?",
        };
        println!("{:>#8x} {:>#8x} {:>9} {:>7}", e.id, e.parent, state, e.frames);
    }
}

fn run(prog: &str, arg: u64) {
    match spawn::spawn(prog, arg) {
        Ok(id) => match spawn::wait(id) {
            Ok(code) => println!("[{prog} exited with {code}]"),
            Err(e) => println!("wait: {}", e.name()),
        },
        Err(e) => println!("{prog}: cannot start: {e:?}"),
    }
}

fn main(_: u64) -> i32 {
    println!("Veneer console shell. Type `help`.");
    let mut buf = [0u8; 128];
    loop {
        print!("veneer> ");
        let n = read_line(&mut buf);
        let line = core::str::from_utf8(&buf[..n]).unwrap_or("");
        let mut words = line.split_whitespace();
        match (words.next(), words.next()) {
            (None, _) => {}
            (Some("help"), _) => println!("{HELP}"),
            (Some("ls"), _) => {
                for e in binfmt::cpio::entries(bootfs::archive()).map_while(Result::ok) {
                    if let Some(name) = e.name.strip_prefix("bin/") {
                        println!("{name:<16} {:>8} bytes", e.data.len());
                    }
                }
            }
            (Some("run"), Some(prog)) => run(prog, words.next().and_then(|a| a.parse().ok()).unwrap_or(0)),
            (Some("ps"), _) => ps(),
            (Some("mem"), _) => {
                let k = kinfo::kernel();
                println!(
                    "{} frames, {} free ({} MiB free)",
                    k.frames,
                    kinfo::free_frames(),
                    kinfo::free_frames() / 256
                );
            }
            (Some("echo"), _) => println!("{}", line.trim_start().strip_prefix("echo").unwrap_or("").trim()),
            (Some("exit"), code) => return code.and_then(|c| c.parse().ok()).unwrap_or(0),
            (Some(cmd), _) => println!("{cmd}: unknown command (try `help`)"),
        }
    }
}

user::entry!(main);
