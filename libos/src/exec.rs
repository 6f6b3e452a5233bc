//! Loading a Linux ELF executable into this address space and building the
//! initial stack the Linux ABI promises (`argc`, `argv`, `envp`, the
//! auxiliary vector), as the Linux kernel's `execve` would. A program at a
//! fixed address (ET_EXEC) stays there; a position-independent one (ET_DYN:
//! static-PIE, or a PIE with an interpreter) is placed at `PIE_BASE`; a
//! program naming an interpreter (`PT_INTERP`, glibc's `ld.so`) gets it
//! loaded at `INTERP_BASE` and started in its place, told where the program
//! is through the auxiliary vector. lxrt itself stays where it is; only the
//! program's regions are replaced.

use crate::errno::Errno;
use crate::errno::{EACCES, ELIBBAD, ELOOP, ENOEXEC, ENOMEM};
use crate::layout::{
    page_up, BRK_LIMIT, EXEC_VIEWS, EXEC_VIEW_MAX, INTERP_BASE, INTERP_END, PAGE, PIE_BASE, STACK_MAX,
    STACK_TOP,
};
use crate::loader::{map_segments, place, Placed};
use crate::proc;
use crate::{fs, uaccess, vm};
use abi::exception::Regs;
use alloc::vec::Vec;
use binfmt::elf::{ET_DYN, PT_LOAD, PT_PHDR};

const AT_NULL: u64 = 0;
const AT_PHDR: u64 = 3;
const AT_PHENT: u64 = 4;
const AT_PHNUM: u64 = 5;
const AT_PAGESZ: u64 = 6;
const AT_BASE: u64 = 7;
const AT_FLAGS: u64 = 8;
const AT_ENTRY: u64 = 9;
const AT_UID: u64 = 11;
const AT_EUID: u64 = 12;
const AT_GID: u64 = 13;
const AT_EGID: u64 = 14;
const AT_PLATFORM: u64 = 15;
const AT_HWCAP: u64 = 16;
const AT_CLKTCK: u64 = 17;
const AT_SECURE: u64 = 23;
const AT_RANDOM: u64 = 25;
const AT_HWCAP2: u64 = 26;
const AT_EXECFN: u64 = 31;
const AT_SYSINFO_EHDR: u64 = 33;

/// A checked program and, when it names one, its checked interpreter.
pub struct Image<'a> {
    prog: Placed<'a>,
    interp: Option<Placed<'a>>,
}

/// What a successful load leaves behind.
pub struct Loaded {
    pub regs: Regs,
    /// First byte past the highest segment: where `brk` starts.
    pub brk: u64,
}

/// `#!` interpreters followed before `execve` gives up with ELOOP (Linux:
/// 4 levels of interpreter).
const MAX_INTERPRETERS: usize = 4;

/// The program `execve` of `path` runs and its bytes, with `#!` scripts
/// turned into their interpreter's argument list, refused as Linux refuses
/// it: ENOENT (no such file, or no such interpreter), ENOTDIR, EACCES (not
/// a regular file, or not executable by this process: even root needs
/// some execute bit), ELOOP. Whether the bytes are a program lxrt can load
/// is for `check`, which gives ENOEXEC.
pub fn resolve(mut path: Vec<u8>, argv: &mut Vec<Vec<u8>>) -> Result<(Vec<u8>, &'static [u8]), Errno> {
    for _ in 0..=MAX_INTERPRETERS {
        if path == b"/proc/self/exe" {
            path = proc::exe();
        }
        let ino = fs::path::resolve(proc::cwd(), &path, true)?;
        if fs::node::get(ino).mode & fs::S_IFMT != fs::S_IFREG {
            return Err(EACCES);
        }
        fs::perm::check(ino, fs::perm::MAY_EXEC)?;
        let data = program_bytes(ino, 0)?;
        let Some(rest) = data.strip_prefix(b"#!") else {
            return Ok((path, data));
        };
        let line = rest.split(|&c| c == b'\n').next().unwrap_or(b"");
        let mut words = line.split(|&c| c == b' ' || c == b'\t').filter(|w| !w.is_empty());
        let interp = words.next().ok_or(ENOEXEC)?.to_vec();
        let arg = words.next().map(|w| w.to_vec());
        let mut new = Vec::new();
        new.push(interp.clone());
        new.extend(arg);
        new.push(path.clone());
        new.extend(argv.iter().skip(1).cloned());
        *argv = new;
        path = interp;
    }
    Err(ELOOP)
}

/// Regular file `ino`'s bytes, to load a program from: a file on the disk
/// seen through exec view `view` (`fs::disk::view`: its cache pages, whose
/// whole pages `loader::map_segments` maps rather than copies, as a boot
/// file's), else in one buffer of the arena (a disk file that cannot be
/// viewed copied there first). `drop_views` ends the views.
pub fn program_bytes(ino: fs::Ino, view: u64) -> Result<&'static [u8], Errno> {
    let at = EXEC_VIEWS + view * EXEC_VIEW_MAX;
    vm::drop_view(at, at + EXEC_VIEW_MAX);
    if let Some(data) = fs::disk::view(ino, at, EXEC_VIEW_MAX)? {
        return Ok(data);
    }
    fs::disk::copy_in(ino)?;
    fs::node::update(ino, fs::node::flatten)?;
    Ok(fs::node::bytes(&fs::node::get(ino)))
}

/// Unmaps exec's views (`program_bytes`): once the program is loaded, or was
/// refused.
pub fn drop_views() {
    vm::drop_view(EXEC_VIEWS, EXEC_VIEWS + 2 * EXEC_VIEW_MAX);
}

/// Checks `image` is a program lxrt can load, and finds and checks its
/// interpreter, so that `load` cannot fail for the files' sake. A bad
/// program is ENOEXEC; a missing interpreter ENOENT (or ENOTDIR, EACCES as
/// for the program); one that is not an x86-64 ELF shared object ELIBBAD;
/// one that names an interpreter itself ELOOP.
pub fn check(image: &[u8]) -> Result<Image<'_>, Errno> {
    let prog = place(image, PAGE, BRK_LIMIT, PIE_BASE).map_err(|_| ENOEXEC)?;
    let Some(path) = prog.elf.interp else {
        return Ok(Image { prog, interp: None });
    };
    let ino = fs::path::resolve(proc::cwd(), path, true)?;
    if fs::node::get(ino).mode & fs::S_IFMT != fs::S_IFREG {
        return Err(EACCES);
    }
    fs::perm::check(ino, fs::perm::MAY_EXEC)?;
    let interp = place(program_bytes(ino, 1)?, INTERP_BASE, INTERP_END, INTERP_BASE).map_err(|_| ELIBBAD)?;
    if interp.elf.kind != ET_DYN {
        return Err(ELIBBAD);
    }
    if interp.elf.interp.is_some() {
        return Err(ELOOP);
    }
    Ok(Image { prog, interp: Some(interp) })
}

/// Where the program headers are in memory (AT_PHDR): `PT_PHDR` if the
/// program has one, else where a segment loads them from the file.
fn phdr_address(p: &Placed) -> u64 {
    let phoff = p.elf.phoff();
    let at = match p.elf.segments().find(|s| s.kind == PT_PHDR) {
        Some(s) => s.vaddr,
        None => p
            .elf
            .segments()
            .find(|s| s.kind == PT_LOAD && (s.offset..s.offset + s.filesz).contains(&phoff))
            .map_or(0, |s| s.vaddr + (phoff - s.offset)),
    };
    at.wrapping_add(p.bias)
}

/// Replaces the program in this address space with `image`. Past the first
/// unmap there is no going back, so callers check the image first.
pub fn load(image: &Image, argv: &[Vec<u8>], envp: &[Vec<u8>], execfn: &[u8]) -> Result<Loaded, Errno> {
    vm::remove(0, u64::MAX);
    let brk = map_segments(&image.prog)?;
    let mut entry = image.prog.elf.entry;
    let mut base = 0;
    if let Some(interp) = &image.interp {
        map_segments(interp)?;
        entry = interp.elf.entry;
        base = interp.bias;
    }
    let vdso = crate::vdso::map();
    for r in vm::regions() {
        vm::protect(r.start, r.end, r.prot);
    }
    vm::add(STACK_TOP - STACK_MAX, STACK_TOP, vm::R | vm::W);
    let rsp = build_stack(&image.prog, base, vdso, argv, envp, execfn)?;
    let regs = Regs { rip: entry, rsp, rflags: 0x202, ..Regs::default() };
    Ok(Loaded { regs, brk: page_up(brk) })
}

/// Pushes bytes and words downwards from the top of the Linux stack.
struct Pusher {
    sp: u64,
}

impl Pusher {
    fn bytes(&mut self, b: &[u8]) -> Result<u64, Errno> {
        self.sp -= b.len() as u64;
        uaccess::write(self.sp, b).map_err(|_| ENOMEM)?;
        Ok(self.sp)
    }
    fn cstr(&mut self, s: &[u8]) -> Result<u64, Errno> {
        self.bytes(&[0])?;
        self.bytes(s)
    }
}

fn random16() -> [u8; 16] {
    let mut r = [0u8; 16];
    crate::random::fill(&mut r);
    r
}

/// The initial stack of `prog`, whose interpreter (if any) is at `base`,
/// with the vDSO at `vdso`.
fn build_stack(
    prog: &Placed,
    base: u64,
    vdso: u64,
    argv: &[Vec<u8>],
    envp: &[Vec<u8>],
    execfn: &[u8],
) -> Result<u64, Errno> {
    let elf = &prog.elf;
    let mut p = Pusher { sp: STACK_TOP };
    let execfn = p.cstr(execfn)?;
    let mut env_ptrs = Vec::new();
    for e in envp.iter().rev() {
        env_ptrs.push(p.cstr(e)?);
    }
    let mut arg_ptrs = Vec::new();
    for a in argv.iter().rev() {
        arg_ptrs.push(p.cstr(a)?);
    }
    let platform = p.cstr(b"x86_64")?;
    let random = p.bytes(&random16())?;
    let creds = crate::proc::creds();
    let auxv: [(u64, u64); 19] = [
        (AT_PHDR, phdr_address(prog)),
        (AT_PHENT, elf.phentsize as u64),
        (AT_PHNUM, elf.phnum() as u64),
        (AT_PAGESZ, PAGE),
        (AT_BASE, base),
        (AT_FLAGS, 0),
        (AT_ENTRY, elf.entry),
        (AT_UID, creds as u64),
        (AT_EUID, creds as u64),
        (AT_GID, creds as u64),
        (AT_EGID, creds as u64),
        (AT_PLATFORM, platform),
        (AT_HWCAP, hwcap()),
        (AT_CLKTCK, 100),
        (AT_SECURE, 0),
        (AT_RANDOM, random),
        (AT_HWCAP2, 0),
        (AT_EXECFN, execfn),
        (AT_SYSINFO_EHDR, vdso),
    ];
    // argc, argv[], 0, envp[], 0, auxv pairs, AT_NULL pair; rsp 16-aligned.
    let words = 1 + argv.len() + 1 + envp.len() + 1 + 2 * (auxv.len() + 1);
    p.sp = (p.sp - 8 * words as u64) & !15;
    let mut w: Vec<u64> = Vec::with_capacity(words);
    w.push(argv.len() as u64);
    w.extend(arg_ptrs.iter().rev());
    w.push(0);
    w.extend(env_ptrs.iter().rev());
    w.push(0);
    for (k, v) in auxv {
        w.push(k);
        w.push(v);
    }
    w.push(AT_NULL);
    w.push(0);
    uaccess::with_bytes_mut(p.sp, 8 * words as u64, |out| {
        for (i, v) in w.iter().enumerate() {
            out[8 * i..8 * i + 8].copy_from_slice(&v.to_le_bytes());
        }
    })
    .map_err(|_| ENOMEM)?;
    Ok(p.sp)
}

/// CPUID leaf 1 EDX, which Linux reports as AT_HWCAP on x86.
fn hwcap() -> u64 {
    core::arch::x86_64::__cpuid(1).edx as u64
}
