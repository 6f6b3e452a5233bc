//! The tracer as a program (paper 003 §5.3): booted as `init=tracer NAME`
//! it runs `bin/NAME` (default `tracee`) interposed and prints every
//! system call of its subtree, with arguments and result; as
//! `init=tracer /PATH ARGS...` it runs the Linux program under `lxrt`
//! (which reads the same command line), unchanged.
#![no_std]
#![no_main]

use user::{kinfo, nest, print, println, spawn};

struct Console;

impl core::fmt::Write for Console {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        print!("{s}");
        Ok(())
    }
}

fn main(arg: u64) -> i32 {
    let first = kinfo::cmdline().split_whitespace().skip_while(|w| !w.starts_with("init=")).nth(1);
    let name = match first {
        Some(w) if w.starts_with('/') => "lxrt",
        Some(w) => w,
        None => "tracee",
    };
    let Ok(child) = spawn::spawn_stopped(name, arg) else {
        println!("tracer: no program {name}");
        return 1;
    };
    nest::interpose(child, true).unwrap();
    spawn::start(child).unwrap();
    match ::nest::trace::run(child, |_, _| None, &mut Console) {
        Ok(code) => {
            println!("tracer: {name} exited with {code}");
            code
        }
        Err(e) => {
            println!("tracer: {e:?}");
            1
        }
    }
}

user::entry!(main);
