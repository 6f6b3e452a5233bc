//! The boot row (issue 26): guest instructions from reset to the shell's
//! first prompt, Veneer (`lxrt -t /bin/sh`, as `cargo xtask run` boots)
//! beside Debian's Linux (`rdinit=/bin/bootinit`, `bench/linux/bootinit.c`:
//! devtmpfs, proc, the console, busybox's shell), both on the root of the
//! program-start rows (the same Debian packages and busybox) and the same
//! QEMU machine, firmware and loader. Instructions are counted by the
//! profile's plugin (`bench/profile/insn_count.c`), which counts executed
//! instructions only: time a guest spends halted, which `-icount` would
//! turn into time-stamp counts, is not charged. QEMU is stopped (SIGTERM,
//! after which the plugin writes its counts) as soon as the prompt
//! appears; what the guest executes between the prompt and the stop (a
//! few timer ticks in its idle loop) is the figure's noise.

use super::{linux, profile, veneer, Clock, Options, Side};
use crate::{build, qemu};
use std::path::{Path, PathBuf};

/// The row's benchmark name on both sides.
pub const NAME: &str = "boot";
/// busybox's prompt for root in `/`, on both sides.
const PROMPT: &str = "/ # ";

/// Measures `trials` boots of each side and adds them to `linux` and
/// `veneer` as the row's trials (one operation each), or says why not.
pub fn measure(opts: &Options, clock: Clock, trials: usize, linux: &mut Side, veneer: &mut Side) {
    let dir = build::root().join("target/bench/boot");
    let prepared =
        std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display())).and_then(
            |_| Ok((profile::plugin(&dir)?, linux::boot_args(opts, clock)?, veneer_args(opts, clock)?)),
        );
    let (plugin, linux_args, veneer_args) = match prepared {
        Ok(p) => p,
        Err(e) => {
            linux.problem = linux.problem.take().or(Some(format!("boot row: {e}")));
            return;
        }
    };
    let results: Vec<(bool, Result<u64, String>)> = std::thread::scope(|s| {
        let boots: Vec<_> = (0..trials)
            .flat_map(|t| [(true, t), (false, t)])
            .map(|(is_linux, t)| {
                let args = if is_linux { &linux_args } else { &veneer_args };
                let out = dir.join(format!(
                    "{}-{}-{t}.counts",
                    if is_linux { "linux" } else { "veneer" },
                    clock.name()
                ));
                let plugin = &plugin;
                (is_linux, s.spawn(move || count(opts, args, plugin, &out)))
            })
            .collect();
        boots.into_iter().map(|(l, h)| (l, h.join().unwrap_or_else(|_| Err("panicked".into())))).collect()
    });
    for (is_linux, result) in results {
        let side = if is_linux { &mut *linux } else { &mut *veneer };
        if !side.announced(NAME) {
            side.plan.get_or_insert_with(Vec::new).push(NAME.into());
        }
        match result {
            Ok(n) => side.trials.entry(NAME.into()).or_default().push((1, n)),
            Err(e) => side.failed.push(format!("{NAME} {e}")),
        }
    }
}

fn veneer_args(opts: &Options, clock: Clock) -> Result<Vec<String>, String> {
    let img = veneer::image_for(&build::all()?, veneer::START)?;
    Ok(veneer::boot_args(opts, clock, &img, "lxrt -t /bin/sh"))
}

/// One boot with the plugin, stopped at the prompt: its instructions.
fn count(opts: &Options, args: &[String], plugin: &Path, out: &PathBuf) -> Result<u64, String> {
    let _ = std::fs::remove_file(out);
    let mut args = args.to_vec();
    args.push("-plugin".into());
    args.push(format!("{},out={}", plugin.display(), out.display()));
    let stop = qemu::Key { after: PROMPT.into(), pause_ms: 0, send: Vec::new() };
    let run = qemu::headless(&args, opts.timeout(), &[stop])?;
    if !run.serial.contains(PROMPT) {
        return Err(format!("no prompt `{PROMPT}` (QEMU exit {:?}, timed out: {})", run.code, run.timed_out));
    }
    let text = std::fs::read_to_string(out).map_err(|e| format!("reading {}: {e}", out.display()))?;
    text.lines()
        .map(|l| {
            l.split(' ').nth(1).and_then(|n| n.parse::<u64>().ok()).ok_or(format!("bad count line `{l}`"))
        })
        .sum()
}
