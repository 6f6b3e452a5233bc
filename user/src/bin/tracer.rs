//! The tracer as a program (paper 003 §5): runs `bin/NAME` (the kernel
//! command line's `trace=NAME`, default `tracee`) interposed and prints
//! every system call of its subtree, with arguments and result.
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
    let name = kinfo::cmdline().split(' ').find_map(|w| w.strip_prefix("trace=")).unwrap_or("tracee");
    let Ok(child) = spawn::spawn_stopped(name, arg) else {
        println!("tracer: no program {name}");
        return 1;
    };
    nest::interpose(child, true).unwrap();
    spawn::start(child).unwrap();
    match user::trace::run(child, |_| None, &mut Console) {
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
