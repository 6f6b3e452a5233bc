//! Boot test: the checkpointer (paper 003 §5.4). A program that prints
//! (`counter`) runs interposed, its output collected from its
//! `debug_write` calls; half-way it is held (on its next write, which the
//! image keeps as a call not yet made), saved to an image, destroyed,
//! restored from the image into a new environment and released. The
//! output of the two halves together equals an uninterrupted run's, byte
//! for byte. A damaged image is refused, leaving nothing behind.
#![no_std]
#![no_main]

use abi::nest::{answer, Event};
use abi::syscall::{map as mf, ENV_SELF, FRAME_ANY};
use abi::Error;
use nest::capture::Capture;
use nest::checkpoint;
use user::{kinfo, nest as calls, print, println, spawn, sys};

const LINES: u64 = 12;
/// Where the image is kept (the checkpointer's "file") and its size.
const IMAGE: u64 = 0x6000_0000_0000;
const IMAGE_PAGES: u64 = 300;

type Output = Capture<4096>;

/// Serves `env`'s events, collecting its output, until it exits or (with
/// `stop_after`) it has printed that many lines; returns the environment
/// the loop ended on, still runnable but held, or `None` when it exited.
fn run(env: u64, stop_after: Option<usize>, out: &mut Output) -> Option<u64> {
    let mut ev = Event::default();
    let mut reply = (0, 0, 0);
    loop {
        let id = calls::intercept_wait(env, &mut ev, reply.0, reply.1, reply.2).unwrap()?;
        // Held on its next write after the last line wanted: the write,
        // not yet made, is part of what is saved.
        if stop_after == Some(out.lines()) {
            calls::env_stop(id).unwrap();
            return Some(id);
        }
        reply = match out.take(id, &ev) {
            Some((mode, value)) => (id, mode, value),
            None => (id, answer::PASS, 0),
        };
    }
}

fn started(name: &str, arg: u64) -> u64 {
    let child = spawn::spawn_stopped(name, arg).unwrap();
    calls::interpose(child, true).unwrap();
    spawn::start(child).unwrap();
    child
}

fn main(_: u64) -> i32 {
    let mut failures = 0;
    let mut check = |what: &str, ok: bool| {
        println!("{what}: {}", if ok { "ok" } else { "FAILED" });
        failures += !ok as i32;
    };
    let mut reference = Output::default();
    let child = started("counter", LINES);
    check("uninterrupted run ends", run(child, None, &mut reference).is_none());
    sys::env_destroy(child).unwrap();

    for p in 0..IMAGE_PAGES {
        let f = sys::frame_alloc(ENV_SELF, FRAME_ANY).unwrap();
        sys::map(ENV_SELF, IMAGE + p * 4096, f, mf::WRITE).unwrap();
    }
    // SAFETY: IMAGE_PAGES pages were just mapped writable there.
    let image = unsafe { core::slice::from_raw_parts_mut(IMAGE as *mut u8, (IMAGE_PAGES * 4096) as usize) };
    let mut out = Output::default();
    let child = started("counter", LINES);
    let held = run(child, Some(LINES as usize / 2), &mut out).expect("held half-way");
    let len = checkpoint::save(held, image).unwrap();
    println!("checkpoint: saved {len} bytes after {} bytes of output", out.text().len());
    sys::env_destroy(held).unwrap();
    check("the saved environment is gone", kinfo::env_by_id(held).is_none());

    // A damaged image: refused, nothing left behind.
    let free = kinfo::free_plus_own();
    image[8] ^= 1;
    check("an image of another version refused", checkpoint::restore(image, false) == Err(Error::BadProgram));
    image[8] ^= 1;
    check(
        "a truncated image refused",
        checkpoint::restore(&image[..len - 1], false) == Err(Error::BadLength),
    );
    check("nothing left behind", kinfo::free_plus_own() == free);

    let restored = checkpoint::restore(&image[..len], false).unwrap();
    calls::interpose(restored, true).unwrap();
    checkpoint::release(restored).unwrap();
    check("the restored one ends", run(restored, None, &mut out).is_none());
    let code = kinfo::env_by_id(restored).map(|e| e.exit_code);
    check("with code 0", code == Some(0));
    sys::env_destroy(restored).unwrap();

    let (a, b) = (reference.text(), out.text());
    print!("{}", core::str::from_utf8(b).unwrap_or("(not text)"));
    check("output with a checkpoint and restore equals the uninterrupted run's", a == b && !a.is_empty());
    failures
}

user::entry!(main);
