//! Rust `std` as a user builds it (no threads: that is the threads work):
//! arguments, environment, files and directories, a hash map (seeded from
//! getrandom), clocks, and the exit status.
use std::collections::HashMap;
use std::io::{Read, Write};
use std::time::{Instant, SystemTime};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    println!("args: {args:?}");
    println!("HOME: {:?}", std::env::var("HOME"));
    let dir = std::path::Path::new("/tmp/stdprobe");
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    for (i, name) in ["b.txt", "a.txt", "sub/c.txt"].iter().enumerate() {
        let mut f = std::fs::File::create(dir.join(name)).unwrap();
        writeln!(f, "file {i}: {name}").unwrap();
    }
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    println!("dir: {names:?}");
    let mut s = String::new();
    std::fs::File::open(dir.join("sub/c.txt")).unwrap().read_to_string(&mut s).unwrap();
    print!("read: {s}");
    println!("len: {}", std::fs::metadata(dir.join("a.txt")).unwrap().len());
    println!("missing: {:?}", std::fs::read("/tmp/stdprobe/none").map_err(|e| e.kind()));
    let mut words: HashMap<&str, usize> = HashMap::new();
    for w in "the quick the lazy the end".split(' ') {
        *words.entry(w).or_default() += 1;
    }
    let mut counts: Vec<_> = words.into_iter().collect();
    counts.sort();
    println!("counts: {counts:?}");
    let t = Instant::now();
    let after_2024 = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs() > 1_704_067_199;
    println!("clocks: {} {}", t.elapsed().as_secs() < 5, after_2024);
    std::fs::remove_dir_all(dir).unwrap();
    std::process::exit(3);
}
