//! Threads in Rust's `std` on Veneer (built the default way by xtask, for
//! musl and for glibc; run as `cbin/rthreads-*` by `libos/tests/rthreads.sh`,
//! output compared with the host's): mutexes and joins over 8 threads, a channel from 4
//! senders, a condition variable, thread-local storage, a named thread,
//! and a thread that panics.
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::thread;

fn main() {
    let counter = Arc::new(Mutex::new(0u64));
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let c = Arc::clone(&counter);
            thread::spawn(move || {
                for _ in 0..1000 {
                    *c.lock().unwrap() += 1;
                }
                i * 2
            })
        })
        .collect();
    let sum: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
    println!("mutex: {} joined sum {}", *counter.lock().unwrap(), sum);
    let (tx, rx) = mpsc::channel();
    for id in 0..4u64 {
        let tx = tx.clone();
        thread::spawn(move || {
            for k in 0..100 {
                tx.send(id * 1000 + k).unwrap();
            }
        });
    }
    drop(tx);
    let total: u64 = rx.iter().sum();
    println!("channel: total {total}");
    let pair = Arc::new((Mutex::new(false), Condvar::new()));
    let p2 = Arc::clone(&pair);
    let t = thread::spawn(move || {
        let (l, c) = &*p2;
        *l.lock().unwrap() = true;
        c.notify_one();
    });
    let (l, c) = &*pair;
    let mut ready = l.lock().unwrap();
    while !*ready {
        ready = c.wait(ready).unwrap();
    }
    drop(ready);
    t.join().unwrap();
    println!("condvar: ready");
    thread_local!(static TLS: std::cell::Cell<u32> = const { std::cell::Cell::new(1) });
    let v = thread::spawn(|| {
        TLS.with(|t| t.set(5));
        TLS.with(|t| t.get())
    })
    .join()
    .unwrap();
    println!("tls: thread {} main {}", v, TLS.with(|t| t.get()));
    let r = thread::Builder::new()
        .name("named".into())
        .spawn(|| thread::current().name().map(String::from))
        .unwrap()
        .join()
        .unwrap();
    println!("name: {:?}", r);
    // A thread that panics: its join is an error (the message is
    // silenced: it names the thread's id, which differs between systems).
    std::panic::set_hook(Box::new(|_| {}));
    let p = std::panic::catch_unwind(|| thread::spawn(|| panic!("boom")).join());
    println!("panicked thread joined as error: {}", matches!(p, Ok(Err(_))));
}
