//! Boot test: the checkpointer saves and restores a whole subtree (paper
//! 003 §5.4, relative references §3.2). A `counter` with a child `counter`
//! (created under it by the test, `env_create_in`) runs interposed, their
//! output collected; part-way the subtree is held, saved, destroyed and
//! restored from the image (the child recreated under the restored parent)
//! and released: each counter's output, the two halves together, equals an
//! uninterrupted run's. `env_create_in` is refused outside the caller's
//! subtree and charged to the parent it names; damaged or hostile images
//! are refused with their reason, leaving nothing behind. A `sleeper`
//! asleep on its wakeup predicate is restored asleep on it, and wakes when
//! its word is set.
#![no_std]
#![no_main]

use abi::nest::{answer, cap_kind, CapInfo, Event, PredInfo, NO_SLOT, PRED_ANY};
use abi::syscall::{map as mf, rights, CRED_SELF, ENV_SELF, FRAME_ANY, NO_LIMIT, PRED_REGIONS};
use abi::tables::{env_state, ENV_SLOTS};
use abi::Error;
use nest::capture::Capture;
use nest::checkpoint::{self, ENV_HEADER, HEADER, WAITING_ON};
use user::{kinfo, nest as calls, print, println, spawn, sys};

const LINES: u64 = 8;
/// The two counters' tags (their lines start `counter TAG:`, so the two
/// outputs differ).
const PARENT: u64 = 1 << 32;
const CHILD: u64 = 2 << 32;
/// Where the image is kept and its size.
const IMAGE: u64 = 0x6000_0000_0000;
const IMAGE_PAGES: u64 = 600;

type Output = Capture<4096>;

/// Serves the events of `root`'s subtree, collecting the output of `root`
/// and of its child apart (a line may take several writes), until `root`
/// exits or (with `stop_after`) that many lines have been printed: then
/// holds the whole subtree and returns true.
fn run(root: u64, stop_after: Option<usize>, out: &mut [Output; 2]) -> bool {
    let mut ev = Event::default();
    let mut reply = (0, 0, 0);
    while let Some(id) = calls::intercept_wait(root, &mut ev, reply.0, reply.1, reply.2).unwrap() {
        if stop_after == Some(out[0].lines() + out[1].lines()) {
            calls::env_stop(root).unwrap();
            return true;
        }
        reply = match out[(id != root) as usize].take(id, &ev) {
            Some((mode, value)) => (id, mode, value),
            None => (id, answer::PASS, 0),
        };
    }
    false
}

/// Where the parent and the child map a page the parent owns.
const SHARED: u64 = 0x5000_0000_0000;
const MARK: u64 = 0x5ea5_1de5;
/// Where the test maps a page of theirs for a while.
const SCRATCH: u64 = 0x6200_0000_0000;

/// A parent counter with a child counter under it, interposed, running;
/// they share a page the parent owns (writable in it, read-only in the
/// child), marked.
fn started() -> u64 {
    let parent = spawn::spawn_stopped("counter", PARENT | LINES).unwrap();
    let child = spawn::spawn_stopped_in(parent, "counter", CHILD | LINES).unwrap();
    let f = sys::frame_alloc(parent, FRAME_ANY).unwrap();
    sys::map(ENV_SELF, SCRATCH, f, mf::WRITE).unwrap();
    // SAFETY: just mapped writable at SCRATCH, unmapped below.
    unsafe { core::ptr::write_volatile(SCRATCH as *mut u64, MARK) };
    sys::unmap(ENV_SELF, SCRATCH).unwrap();
    sys::map(parent, SHARED, f, mf::WRITE).unwrap();
    sys::map(child, SHARED, f, 0).unwrap();
    // Two capabilities in the parent's list, one derived from the other.
    calls::env_cap_derive(parent, 5, CRED_SELF, rights::READ | rights::WRITE | rights::GRANT).unwrap();
    calls::env_cap_derive(parent, 9, 5, rights::READ).unwrap();
    calls::interpose(parent, true).unwrap();
    spawn::start(parent).unwrap();
    spawn::start(child).unwrap();
    parent
}

/// `env`'s capability list as (slot, rights, kind, from).
fn caps_of(env: u64) -> ([[u64; 4]; 8], usize) {
    let mut caps = [CapInfo::default(); 8];
    let n = calls::env_caps(env, &mut caps).unwrap_or(0);
    (core::array::from_fn(|k| [caps[k].slot, caps[k].rights, caps[k].kind, caps[k].from]), n)
}

/// Live environments in the table.
fn live() -> usize {
    (0..ENV_SLOTS).filter(|&s| kinfo::env(s).state != env_state::FREE).count()
}

fn word_at(image: &mut [u8], at: usize, w: u64) -> u64 {
    let old = u64::from_le_bytes(image[at..at + 8].try_into().unwrap());
    image[at..at + 8].copy_from_slice(&w.to_le_bytes());
    old
}

/// `env_pred_get` and `env_pred_install` on `env`, whose one predicate
/// reads `word`: what they report, and what they refuse (changing nothing).
fn pred_calls(env: u64, word: u64, check: &mut impl FnMut(&str, bool)) {
    let (mut info, mut insns) = (PredInfo::default(), [0u8; 512]);
    let got = calls::env_pred_get(env, 0, &mut info, &mut insns);
    let read = got.is_ok() && info.nregions == 1 && info.regions[0].va == word && info.insns > 0;
    check("env_pred_get reads its predicate back", read);
    let Ok(id) = got else { return };
    check(
        "  and no other",
        calls::env_pred_get(env, id + 1, &mut info.clone(), &mut insns) == Err(Error::BadState),
    );
    check(
        "  a buffer too small refused",
        calls::env_pred_get(env, 0, &mut info.clone(), &mut insns[..8]) == Err(Error::BadLength),
    );
    check(
        "  no such environment refused",
        calls::env_pred_get(0x7fff_ffff, 0, &mut info.clone(), &mut insns) == Err(Error::BadEnv),
    );
    let code = &insns[..info.insns as usize * 8];
    check(
        "env_pred_install under a taken id refused",
        calls::env_pred_install(env, &info, code) == Err(Error::BadState),
    );
    let mut other = PredInfo { id: PRED_ANY, ..info };
    other.regions[0].va = 0x5000_0000_0000;
    check(
        "  a region it has not mapped refused",
        calls::env_pred_install(env, &other, code) == Err(Error::BadPointer),
    );
    other.nregions = PRED_REGIONS as u64 + 1;
    check("  too many regions refused", calls::env_pred_install(env, &other, code) == Err(Error::BadLength));
    check(
        "  nothing installed",
        calls::env_pred_get(env, id + 1, &mut info.clone(), &mut insns) == Err(Error::BadState),
    );
}

/// A sleeper held asleep on its predicate, saved, destroyed and restored:
/// asleep again (its predicate recreated under the same id), it wakes when
/// its word is set and exits with `10 * 1 + the word`.
fn sleeper(image: &mut [u8], check: &mut impl FnMut(&str, bool)) {
    const WORD: u64 = 0x3000_0000_0000; // the sleeper's
    const MINE: u64 = 0x6100_0000_0000;
    let child = spawn::spawn_stopped("sleeper", 1 << 40).unwrap();
    let f = sys::frame_alloc(ENV_SELF, FRAME_ANY).unwrap();
    sys::map(ENV_SELF, MINE, f, mf::WRITE).unwrap();
    sys::map(child, WORD, f, 0).unwrap();
    spawn::start(child).unwrap();
    while kinfo::env_by_id(child).unwrap().state != env_state::SLEEPING {
        sys::yield_now();
    }
    calls::env_stop(child).unwrap();
    let len = checkpoint::save(child, image).unwrap();
    sys::env_destroy(child).unwrap();
    let restored = checkpoint::restore(&image[..len], false);
    check("a sleeper on a predicate restored", restored.is_ok());
    let Ok(restored) = restored else { return };
    checkpoint::release(restored).unwrap();
    for _ in 0..5 {
        sys::yield_now();
    }
    check("asleep again", kinfo::env_by_id(restored).unwrap().state == env_state::SLEEPING);
    pred_calls(restored, WORD, check);
    // SAFETY: mapped writable above.
    unsafe { core::ptr::write_volatile(MINE as *mut u64, 7) };
    check("woken by its predicate", spawn::wait(restored) == Ok(17));
    sys::unmap(ENV_SELF, MINE).unwrap();
    sys::frame_free(f).unwrap();
}

fn main(_: u64) -> i32 {
    let mut failures = 0;
    let mut check = |what: &str, ok: bool| {
        println!("{what}: {}", if ok { "ok" } else { "FAILED" });
        failures += !ok as i32;
    };

    // env_create_in: only inside the caller's subtree, charged to the parent.
    let probe = spawn::spawn("create_in", sys::self_id()).unwrap();
    check(
        "env_create_in outside the caller's subtree refused",
        spawn::wait(probe) == Ok(Error::NotPermitted as i32),
    );
    check("env_create_in under no one refused", sys::env_create_in(0x7fff_ffff) == Err(Error::BadEnv));
    let x = sys::env_create().unwrap();
    let y = sys::env_create_in(x).unwrap();
    check("created under the named parent", kinfo::env_by_id(y).map(|e| e.parent as u64) == Some(x));
    let used = kinfo::env_by_id(x).unwrap().frames + kinfo::env_by_id(y).unwrap().frames;
    calls::env_limit(x, used, NO_LIMIT).unwrap();
    check("charged to it: refused over its limit", sys::env_create_in(y) == Err(Error::OverQuota));
    sys::env_destroy(x).unwrap();
    // An id taken again only under the parent it had.
    check(
        "an id taken again under another parent refused",
        sys::env_create_again(ENV_SELF, y) == Err(Error::BadState),
    );
    check("  no id refused", sys::env_create_again(ENV_SELF, u64::MAX) == Err(Error::BadEnv));
    check("  an id never given refused", sys::env_create_again(ENV_SELF, x + 1024) == Err(Error::BadState));
    check("  taken again under the parent it had", sys::env_create_again(ENV_SELF, x) == Ok(x));
    check("  and its child too", sys::env_create_again(x, y) == Ok(y));
    check("  not while it lives", sys::env_create_again(ENV_SELF, x) == Err(Error::BadState));
    sys::env_destroy(x).unwrap();

    let mut reference = [Output::default(), Output::default()];
    let root = started();
    check("uninterrupted run ends", !run(root, None, &mut reference));
    sys::env_destroy(root).unwrap();

    for p in 0..IMAGE_PAGES {
        let f = sys::frame_alloc(ENV_SELF, FRAME_ANY).unwrap();
        sys::map(ENV_SELF, IMAGE + p * 4096, f, mf::WRITE).unwrap();
    }
    // SAFETY: IMAGE_PAGES pages were just mapped writable there.
    let image = unsafe { core::slice::from_raw_parts_mut(IMAGE as *mut u8, (IMAGE_PAGES * 4096) as usize) };
    let mut out = [Output::default(), Output::default()];
    let root = started();
    check("held part-way", run(root, Some(LINES as usize / 2), &mut out));
    let len = checkpoint::save(root, image).unwrap();
    let envs = u64::from_le_bytes(image[16..24].try_into().unwrap());
    let printed = out[0].text().len() + out[1].text().len();
    println!("checkpoint: saved {envs} environments, {len} bytes, after {printed} bytes of output");
    check("two environments saved", envs == 2);
    let old_child =
        (0..ENV_SLOTS).map(kinfo::env).find(|e| e.id != 0 && e.parent as u64 == root).unwrap().id as u64;
    sys::env_destroy(root).unwrap();
    check("the saved subtree is gone", kinfo::env_by_id(root).is_none());

    // Damaged and hostile images: each refused with its reason, and
    // nothing made (no environment, no frame).
    let (free, before) = (kinfo::free_plus_own(), live());
    let child = checkpoint::part_at(&image[..len], 1).unwrap();
    let image = &mut image[..len + 8];
    let mut refused = |what: &str, image: &[u8], want: Error| {
        let got = checkpoint::restore(image, false);
        check(what, got == Err(want) && kinfo::free_plus_own() == free && live() == before);
    };
    refused("a truncated image", &image[..len - 1], Error::BadLength);
    refused("an image with bytes after it", &image[..len + 8], Error::BadLength);
    let image = &mut image[..len];
    let old = word_at(image, HEADER + 16, 1 << 40);
    refused("a page count beyond the image", image, Error::BadLength);
    word_at(image, HEADER + 16, old);
    let old = word_at(image, 16, 1000);
    refused("an environment count beyond the limit", image, Error::BadLength);
    word_at(image, 16, old);
    let old = word_at(image, child, 1);
    refused("a parent link to itself (a loop)", image, Error::BadState);
    word_at(image, child, old);
    let old = word_at(image, HEADER, 1);
    refused("a root with a parent", image, Error::BadState);
    word_at(image, HEADER, old);
    let old = word_at(image, child + WAITING_ON, 3);
    refused("a wait on an environment outside the subtree", image, Error::BadEnv);
    word_at(image, child + WAITING_ON, old);
    // The child's first capability is its own root; call it a loan.
    let kind = child + ENV_HEADER + size_of::<abi::nest::EnvState>() + 16;
    let old = word_at(image, kind, cap_kind::LOAN);
    refused("a capability the restorer does not hold", image, Error::NotPermitted);
    word_at(image, kind, old);
    // Its first mapping (after its one capability and no predicate) said
    // to be owned by an environment the image does not have.
    let whose = kind + 16 + 16;
    let old = word_at(image, whose, 7);
    refused("a page owned outside the subtree's names", image, Error::BadEnv);
    word_at(image, whose, old);

    // The parent's capability 5 (its list's second) said to be derived
    // from 9, which is derived from 5.
    let from5 = HEADER + ENV_HEADER + size_of::<abi::nest::EnvState>() + 32 + 24;
    let old = word_at(image, from5, 9);
    refused("capabilities derived from each other (a loop)", image, Error::BadState);
    word_at(image, from5, old);

    // Under the same ids: each takes its id again (the subtree was this
    // test's child and its slots are free), and not while they are taken.
    let again = checkpoint::restore(image, true);
    let child_again = kinfo::env_by_id(old_child).map(|e| e.parent as u64);
    check("restored under the same ids", again == Ok(root) && child_again == Some(root));
    let live_now = live();
    check("  not twice (the slots are taken)", checkpoint::restore(image, true) == Err(Error::BadState));
    check("  nothing made", live() == live_now);
    sys::env_destroy(root).unwrap();

    let restored = checkpoint::restore(image, false).unwrap();
    let want = [
        [0, rights::ALL, cap_kind::OWN, NO_SLOT],
        [5, 7, cap_kind::DERIVED, 0],
        [9, rights::READ, cap_kind::DERIVED, 5],
    ];
    let (got, n) = caps_of(restored);
    check("its capability list is rebuilt", n == 3 && got[..3] == want);
    let derive = |slot, from, r| calls::env_cap_derive(restored, slot, from, r);
    check("env_cap_derive into a taken slot refused", derive(9, 5, rights::READ) == Err(Error::BadState));
    check("  beyond the list refused", derive(64, 5, rights::READ) == Err(Error::BadLength));
    check("  with rights it lacks refused", derive(11, 9, rights::READ) == Err(Error::NotPermitted));
    check("  from an empty slot refused", derive(11, 12, rights::READ).is_err());
    check("  with no such rights refused", derive(11, 5, 1 << 9) == Err(Error::BadFlags));
    check("  nothing added", caps_of(restored).1 == 3);
    let kids: usize =
        (0..ENV_SLOTS).filter(|&s| kinfo::env(s).id != 0 && kinfo::env(s).parent as u64 == restored).count();
    check("the child is restored under the restored parent", kids == 1);
    let child = (0..ENV_SLOTS).map(kinfo::env).find(|e| e.id != 0 && e.parent as u64 == restored);
    let frame_at = |env: u64| {
        let mut m = [abi::nest::Mapping::default()];
        calls::env_mappings(env, SHARED, &mut m).ok().filter(|_| m[0].va == SHARED).map(|_| m[0].frame)
    };
    let (pf, cf) = (frame_at(restored), child.and_then(|c| frame_at(c.id as u64)));
    let owner = pf.map(|f| kinfo::frame(f).owner as u64);
    check(
        "the shared page is shared again, owned by the parent",
        pf.is_some() && pf == cf && owner == Some(restored),
    );
    let mark = pf.map(|f| {
        sys::map(ENV_SELF, SCRATCH, f, 0).unwrap();
        // SAFETY: just mapped readable there.
        let v = unsafe { core::ptr::read_volatile((SCRATCH) as *const u64) };
        sys::unmap(ENV_SELF, SCRATCH).unwrap();
        v
    });
    check("  with its contents", mark == Some(MARK));
    calls::interpose(restored, true).unwrap();
    checkpoint::release(restored).unwrap();
    // Refused while it runs; a stopped environment (held on its first
    // call for us, if it got that far) may still be given one.
    let held = kinfo::env_by_id(restored).is_some_and(|e| e.state == env_state::STOPPED);
    check("  and refused once it runs", held || derive(11, 5, rights::READ) == Err(Error::BadState));
    check("the restored subtree ends", !run(restored, None, &mut out));
    check("with code 0", kinfo::env_by_id(restored).map(|e| e.exit_code) == Some(0));
    sys::env_destroy(restored).unwrap();

    for (i, name) in ["parent", "child"].iter().enumerate() {
        let (a, b) = (reference[i].text(), out[i].text());
        print!("{}", core::str::from_utf8(b).unwrap_or("(not text)"));
        println!("{name}: {} bytes uninterrupted, {} with a checkpoint", a.len(), b.len());
        check(
            "its output with a checkpoint and restore equals the uninterrupted run's",
            a == b && !a.is_empty(),
        );
    }
    sleeper(image, &mut check);
    failures
}

user::entry!(main);
