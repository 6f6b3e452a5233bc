//! The kernel mirrors XN's block states and registry into tables every
//! environment reads, rewriting after each call only the blocks XN says
//! changed (`Xn::take_touched`). Here a mirror kept that way through a
//! C-FFS workload (creates, writes, links, renames, truncates, unlinks,
//! syncs) must equal the states computed afresh, block by block.

mod common;

use cffs::{Options, XnClient, ROOT_INO};
use common::*;
use xn::{Disk, Entry, HostPages, Xn};

type State = (bool, bool, bool, bool, u8, Option<Entry>);

fn state<D: Disk>(x: &Xn<D, HostPages>, b: u64) -> State {
    (x.is_free(b), x.unstable(b), x.written(b), x.will_free(b), x.claimants(b), x.entry(b).copied())
}

#[test]
fn a_mirror_updated_from_the_touched_blocks_stays_exact() {
    for opts in [Options::default(), Options { embed: false, group: false }] {
        let mut fs = fresh(1024, opts);
        fs.xn.xn.track_changes();
        let n = fs.xn.xn.nblocks();
        let mut mirror: Vec<State> = (0..n).map(|b| state(&fs.xn.xn, b)).collect();
        let mut step = |fs: &mut TestFs, what: &str| {
            for b in fs.xn.xn.take_touched() {
                mirror[b as usize] = state(&fs.xn.xn, b);
            }
            for b in 0..n {
                assert_eq!(mirror[b as usize], state(&fs.xn.xn, b), "{opts:?}: block {b} after {what}");
            }
        };
        let d = fs.mkdir(ROOT_INO, b"d", 0o40755).unwrap();
        step(&mut fs, "mkdir");
        let mut files = Vec::new();
        for i in 0..20u8 {
            let f = fs.create(d, &[b'f', b'0' + i / 10, b'0' + i % 10], 0o100644).unwrap();
            fs.write(f, 0, &vec![i; 3000 + 900 * i as usize]).unwrap();
            files.push(f);
        }
        step(&mut fs, "creates and writes");
        // A write-back and a flush as separate calls (as a daemon's).
        let b = fs.xn.dirty_blocks().into_iter().find(|&b| fs.xn.taint(b).is_none()).unwrap();
        fs.xn.write(b, 1).unwrap();
        step(&mut fs, "a write-back");
        fs.xn.flush().unwrap();
        step(&mut fs, "a flush");
        fs.sync().unwrap();
        step(&mut fs, "sync");
        fs.link(files[0], ROOT_INO, b"hard").unwrap();
        fs.rename(d, b"f01", ROOT_INO, b"moved").unwrap();
        fs.truncate(files[5], 100).unwrap();
        step(&mut fs, "link, rename, truncate");
        for i in (0..20u8).step_by(3) {
            let _ = fs.unlink(d, &[b'f', b'0' + i / 10, b'0' + i % 10]);
        }
        step(&mut fs, "unlinks");
        fs.fsync(files[2]).unwrap();
        step(&mut fs, "fsync");
        fs.sync().unwrap();
        step(&mut fs, "sync");
    }
}
