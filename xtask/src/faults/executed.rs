//! Which instructions of a driver image run: faults go only there (a
//! fault in code that never runs shows nothing, paper 004 §4.2). A clean
//! boot runs both workloads under QEMU with `-d in_asm`, which logs every
//! block of guest code as it is translated — that is, about to run —
//! one line per instruction; the addresses inside the driver's text are
//! kept, per image (cached by the image's checksum).

use super::Boot;
use std::collections::BTreeSet;
use std::path::Path;

/// The driver's text segment: (address, file offset, length).
pub fn text_segment(image: &[u8]) -> Result<(u64, usize, usize), String> {
    let elf = binfmt::elf::Elf::parse(image, 0, u64::MAX, 0)
        .map_err(|e| format!("driver image: {}", e.describe()))?;
    let seg = elf
        .segments()
        .find(|s| s.kind == binfmt::elf::PT_LOAD && s.flags & binfmt::elf::PF_X != 0)
        .ok_or("driver image has no executable segment")?;
    Ok((seg.vaddr, seg.offset as usize, seg.filesz as usize))
}

fn checksum(b: &[u8]) -> u64 {
    b.iter().fold(0xCBF2_9CE4_8422_2325, |h, &x| (h ^ u64::from(x)).wrapping_mul(0x100_0000_01B3))
}

/// The sorted start addresses of the instructions of `image` (driver
/// `name`) that a clean boot with the workloads runs.
pub fn executed(boot: &Boot, name: &str, image: &[u8]) -> Result<Vec<u64>, String> {
    let (base, _, len) = text_segment(image)?;
    let dir = crate::build::root().join("target/faults");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let cache = dir.join(format!("executed-{name}-{:016x}.txt", checksum(image)));
    if let Ok(text) = std::fs::read_to_string(&cache) {
        return Ok(text.lines().filter_map(|l| u64::from_str_radix(l, 16).ok()).collect());
    }
    let log = dir.join(format!("in_asm-{name}.log"));
    let out = boot.run(
        &[],
        "faultload=blk faultload=net",
        &[super::GUEST_CLOCK, &["-d", "in_asm", "-D", &log.display().to_string()]].concat(),
    )?;
    if !out.serial.contains("faultload blk: ok") || !out.serial.contains("faultload net: ok") {
        return Err(format!("the clean boot's workloads did not pass:\n{}", out.serial));
    }
    let found = parse_in_asm(&log, base, base + len as u64)?;
    let _ = std::fs::remove_file(&log);
    if found.is_empty() {
        return Err(format!("no instruction of {name} in QEMU's log"));
    }
    let text: String = found.iter().map(|a| format!("{a:x}\n")).collect();
    std::fs::write(&cache, text).map_err(|e| e.to_string())?;
    Ok(found.into_iter().collect())
}

/// Addresses in `lo..hi` at the start of `-d in_asm` lines
/// (`0xffffffffc00022f0:  55   pushq %rbp`).
fn parse_in_asm(log: &Path, lo: u64, hi: u64) -> Result<BTreeSet<u64>, String> {
    let text = std::fs::read_to_string(log).map_err(|e| format!("reading {}: {e}", log.display()))?;
    Ok(text
        .lines()
        .filter_map(|l| l.strip_prefix("0x")?.split_once(':'))
        .filter_map(|(a, _)| u64::from_str_radix(a, 16).ok())
        .filter(|a| (lo..hi).contains(a))
        .collect())
}
