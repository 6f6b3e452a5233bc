//! Which instructions of a driver image run: faults go only there (a
//! fault in code that never runs shows nothing, paper 004 §4.2). A clean
//! boot runs both workloads under QEMU with `-d in_asm`, which logs every
//! block of guest code as it is translated — that is, about to run —
//! one line per instruction; the addresses inside the driver's text are
//! kept, per image (cached by the image's checksum). `--io` keeps only
//! those that a boot without workloads (the drivers' init) does not run.

use super::Boot;
use iced_x86::{Decoder, DecoderOptions};
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
/// `name`) that a clean boot with the workloads runs; with `io_only`,
/// without those a boot without workloads runs too (the driver's init):
/// its data path, interrupt handler included.
pub fn executed(boot: &Boot, name: &str, image: &[u8], io_only: bool) -> Result<Vec<u64>, String> {
    let all = traced(boot, name, image, "blk,net")?;
    if !io_only {
        return Ok(all);
    }
    let init = traced(boot, name, image, "")?;
    Ok(all.into_iter().filter(|a| init.binary_search(a).is_err()).collect())
}

/// The instructions of `image` that a clean boot with `words` runs
/// (cached by the image's checksum).
fn traced(boot: &Boot, name: &str, image: &[u8], words: &str) -> Result<Vec<u64>, String> {
    let (base, off, len) = text_segment(image)?;
    let dir = crate::build::root().join("target/faults");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let what = if words.is_empty() { "init" } else { "all" };
    let cache = dir.join(format!("executed-{name}-{what}-{:016x}.txt", checksum(image)));
    if let Ok(text) = std::fs::read_to_string(&cache) {
        return Ok(text.lines().filter_map(|l| u64::from_str_radix(l, 16).ok()).collect());
    }
    let log = dir.join(format!("in_asm-{name}.log"));
    let out = boot.run(
        &[],
        words,
        &[super::GUEST_CLOCK, &["-d", "in_asm", "-D", &log.display().to_string()]].concat(),
    )?;
    let passed = ["blk", "net"]
        .iter()
        .all(|w| !words.contains(w) || out.serial.contains(&format!("faultload {w}: ok")));
    if !passed || !out.serial.contains("hello from ring 3") {
        return Err(format!("the clean boot ({words}) did not pass:\n{}", out.serial));
    }
    let found = parse_in_asm(&log, base, base + len as u64)?;
    let _ = std::fs::remove_file(&log);
    let found = whole(&image[off..off + len], base, found);
    if found.is_empty() {
        return Err(format!("no instruction of {name} in QEMU's log"));
    }
    let text: String = found.iter().map(|a| format!("{a:x}\n")).collect();
    std::fs::write(&cache, text).map_err(|e| e.to_string())?;
    Ok(found)
}

/// `found` without any address inside the instruction before it (a
/// block translated from the middle of an instruction would be one).
fn whole(text: &[u8], base: u64, found: BTreeSet<u64>) -> Vec<u64> {
    let mut out: Vec<u64> = Vec::new();
    let mut end = 0;
    for a in found {
        let bytes = &text[(a - base) as usize..];
        let i = Decoder::with_ip(64, &bytes[..bytes.len().min(15)], a, DecoderOptions::NONE).decode();
        if a >= end && !i.is_invalid() {
            out.push(a);
            end = i.next_ip();
        }
    }
    out
}

/// Addresses in `lo..hi` at the start of `-d in_asm` lines
/// (`0xffffffffc00022f0:  55   pushq %rbp`). A long instruction's last
/// bytes come on a line of their own, with their own address and no
/// mnemonic: those are not instructions.
fn parse_in_asm(log: &Path, lo: u64, hi: u64) -> Result<BTreeSet<u64>, String> {
    let text = std::fs::read_to_string(log).map_err(|e| format!("reading {}: {e}", log.display()))?;
    Ok(text.lines().filter_map(|l| instruction_at(l, lo, hi)).collect())
}

fn instruction_at(line: &str, lo: u64, hi: u64) -> Option<u64> {
    let (a, rest) = line.strip_prefix("0x")?.split_once(':')?;
    let byte = |t: &str| t.len() == 2 && t.bytes().all(|b| b.is_ascii_hexdigit());
    let a = u64::from_str_radix(a, 16).ok().filter(|a| (lo..hi).contains(a))?;
    rest.split_whitespace().any(|t| !byte(t)).then_some(a)
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_address_inside_an_instruction_is_dropped() {
        // mov qword [rbx+0xc6], 0 (11 bytes), then ret.
        let code = [0x48, 0xC7, 0x83, 0xC6, 0, 0, 0, 0, 0, 0, 0, 0xC3];
        let found = [0x1000, 0x1008, 0x100B].into_iter().collect();
        assert_eq!(super::whole(&code, 0x1000, found), vec![0x1000, 0x100B]);
    }

    #[test]
    fn only_lines_with_a_mnemonic_are_instructions() {
        let at = |l| super::instruction_at(l, 0x1000, 0x2000);
        assert_eq!(at("0x00001ddc:  48 c7 83 c6 00 00 00 00  movq     $0, 0xc6(%rbx)"), Some(0x1ddc));
        assert_eq!(at("0x00001de4:  00 00 00"), None);
        assert_eq!(at("0x00002000:  55   pushq %rbp"), None);
        assert_eq!(at("IN: "), None);
    }
}
