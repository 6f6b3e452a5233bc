//! lxrt: the Linux runtime. Booted as `init=lxrt [-t] [-s] [-v] [-r] PROGRAM ARGS...`
//! (`-t`: the console is a terminal; `-s`: trace every call; `-v`: note
//! even the unsupported calls C libraries probe and do without; `-r`: the
//! XN disk's C-FFS is `/`, not `/data`, and the boot archive's tree is
//! left out) it
//! builds the library OS (shared arena, file system from the boot archive,
//! console descriptors), loads the static Linux executable PROGRAM (default
//! `/bin/sh`) into its own address space and jumps to it; from then on
//! lxrt only runs when the program makes a system call or faults.
#![no_std]
#![no_main]

extern crate alloc;

use alloc::vec::Vec;
use libos::{entry, exec, fs, linux, obj};
use user::{kinfo, println};

const ENV: &[&[u8]] = &[b"PATH=/bin:/usr/bin:/sbin:/usr/sbin", b"HOME=/", b"PWD=/"];

fn main(_: u64) -> i32 {
    let cmdline = || kinfo::cmdline().split_whitespace().skip_while(|w| !w.starts_with("init=")).skip(1);
    // Before the tree is built (and before there is a heap to parse into).
    if cmdline().take_while(|w| w.starts_with('-')).any(|w| w == "-r") {
        fs::boot::root_on_disk();
    }
    if let Err(e) = libos::native::init(linux::syscall) {
        println!("lxrt: {e}");
        return 1;
    }
    // The XN disk's C-FFS, if the machine has one, at /data (or at /); a
    // private mapping's fault reads a file there from the disk.
    libos::fs::disk::mount();
    libos::filemap::reads_with(fs::content::read);
    let mut words: Vec<&str> = cmdline().collect();
    while let Some(opt) = words.first().and_then(|w| w.strip_prefix('-')) {
        match opt {
            "t" => obj::console::set_tty(),
            "s" => linux::trace(),
            "v" => linux::verbose(),
            "r" => {}
            _ => break,
        }
        words.remove(0);
    }
    if words.is_empty() {
        words.push("/bin/sh");
    }
    let argv: Vec<Vec<u8>> = words.iter().map(|w| w.as_bytes().to_vec()).collect();
    let mut envp: Vec<Vec<u8>> = ENV.iter().map(|e| e.to_vec()).collect();
    // On a terminal, its type, as Linux gives init on its console (erl's
    // and other line editors look its description up).
    if obj::console::is_tty() {
        envp.push(b"TERM=linux".to_vec());
    }
    let path = argv[0].clone();
    let Ok(ino) = fs::path::resolve(fs::ROOT, &path, true) else {
        println!("lxrt: {} not found", words[0]);
        return 127;
    };
    let Ok(image) = exec::program_bytes(ino, 0) else {
        println!("lxrt: {} cannot be read", words[0]);
        return 127;
    };
    let elf = match exec::check(image) {
        Ok(e) => e,
        Err(_) => {
            println!("lxrt: {} is not an x86-64 executable lxrt can load", words[0]);
            return 126;
        }
    };
    let loaded = exec::load(&elf, &argv, &envp, &path);
    exec::drop_views();
    let loaded = match loaded {
        Ok(l) => l,
        Err(e) => {
            println!("lxrt: cannot load {}: error {e}", words[0]);
            return 1;
        }
    };
    if libos::obj::console::is_tty() {
        // The terminal's keystrokes interrupt us even while the program
        // (the shell) computes; refused unless we are the first process.
        let _ = user::sys::console_notify(0, libos::proc::signal::CONSOLE_INPUT);
    }
    let regs = {
        // SAFETY: start-up: no event is being handled, and the reference
        // ends before `enter` takes the frame over.
        let f = unsafe { entry::frame() };
        linux::process::start(f, loaded, path, &argv);
        f.regs
    };
    libos::trap::enter(&regs)
}

user::entry!(main);
