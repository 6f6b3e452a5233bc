//! Boot: from the trampoline's call to the first environment in ring 3.

use crate::arch::{apic, fpu, gdt, idt, percpu, serial, syscall, trap};
use crate::bootinfo::{BootInfo, Phys};
use crate::console::Console;
use crate::env::Envs;
use crate::frames::{Frame, Frames, Link};
use crate::memory::Memory;
use crate::mm::{self, EarlyAlloc};
use crate::predicate::Predicates;
use crate::revoke::Reclaims;
use crate::sched::Sched;
use crate::state::{self, Kernel};
use abi::layout::{BOOTFS_VA, CLOCK_VA, ENV_TABLE_VA, FRAME_TABLE_VA, KINFO_VA, SLICES_VA};
use abi::tables::{EnvInfo, FrameInfo, KernelInfo, ENV_SLOTS};

/// Physical memory under the boot identity map (first 4 GiB).
struct Identity;

impl Phys for Identity {
    fn bytes(&self, addr: u64, len: usize) -> Option<&[u8]> {
        let end = addr.checked_add(len as u64)?;
        if addr == 0 || end > 1 << 32 {
            return None;
        }
        // SAFETY: the boot page tables identity-map the first 4 GiB, and
        // the loader's structures are not modified while we read them.
        Some(unsafe { core::slice::from_raw_parts(addr as *const u8, len) })
    }
}

unsafe extern "C" {
    static boot_stack_top: u8;
}

fn pages(bytes: u64) -> u64 {
    bytes.div_ceil(4096)
}

/// A kernel slice of `len` elements over frames starting at `first`.
fn table<T>(first: Frame, len: usize) -> &'static mut [T] {
    // SAFETY: `first` starts a run of zeroed frames from the early
    // allocator large enough for `len` elements, used only through this
    // slice; all-zero bytes are a valid value of the table types used here.
    unsafe { core::slice::from_raw_parts_mut(mm::frame_ptr::<T>(first), len) }
}

/// The boot, one phase per line (xv6 `main.c` style).
pub extern "C" fn kmain(magic: u32, info: u32) -> ! {
    serial::init(); // the console, for every message after this one
    kprintln!("Veneer exokernel booting");
    gdt::init(); // segments and the TSS (kernel entry stacks)
    idt::init(); // every vector to its entry stub
    let boot = boot_info(magic, info); // RAM map, command line, boot module
    let mut early = EarlyAlloc::new(&boot); // frames for the kernel's own tables
    let kernel_pml4 = mm::init(&boot, &mut early); // the physical window
    percpu::init(&raw const boot_stack_top as u64); // what the stubs reach through gs
    syscall::init(); // SYSCALL's MSRs
    fpu::init(); // SSE and FSGSBASE
    crate::heap::init(); // the kernel heap (predicate compilations)
    let exposed = Exposed::map(&boot, kernel_pml4, &mut early); // principle 2
    let bootfs = BootFs::map(&boot, kernel_pml4, &mut early); // read-only for all
    let frames = frame_table(&boot, &exposed, &bootfs, &early); // who owns each frame
    state::install(kernel_state(&boot, exposed, &bootfs, frames, kernel_pml4));
    // SAFETY: boot, before user mode exists.
    unsafe { state::enter(|k| start(k, boot.cmdline(), bootfs.frame, bootfs.len)) };
    trap::enter_user()
}

/// The boot loader's information, or a panic saying why it is unreadable.
fn boot_info(magic: u32, info: u32) -> BootInfo {
    let boot = match BootInfo::parse(magic, info as u64, &Identity) {
        Ok(b) => b,
        Err(e) => panic!("cannot read the boot loader's information: {e:?}"),
    };
    let loader = match boot.loader {
        crate::bootinfo::Loader::Pvh => "PVH",
        crate::bootinfo::Loader::Multiboot2 => "multiboot2",
    };
    let ram: u64 = boot.ram().iter().map(|r| r.end - r.start).sum();
    kprintln!("booted by {loader}; {} MiB of RAM", ram >> 20);
    boot
}

/// The first frames of the tables the kernel exposes read-only to every
/// environment (frame table, kernel information, slice vector, clock,
/// environment table), and of the frame table's private companions.
struct Exposed {
    nframes: u64,
    frame_table: Frame,
    links: Frame,
    shares: Frame,
    kinfo: Frame,
    slices: Frame,
    clock: Frame,
    env_table: Frame,
}

impl Exposed {
    /// Allocates the tables and maps them at their fixed addresses.
    fn map(boot: &BootInfo, kernel_pml4: Frame, early: &mut EarlyAlloc) -> Exposed {
        let nframes = boot.ram().iter().map(|r| r.end).max().unwrap_or(0) / 4096;
        let ft_pages = pages(nframes * core::mem::size_of::<FrameInfo>() as u64);
        let et_pages = pages((ENV_SLOTS * core::mem::size_of::<EnvInfo>()) as u64);
        let t = Exposed {
            nframes,
            frame_table: early.alloc(ft_pages),
            links: early.alloc(pages(nframes * core::mem::size_of::<Link>() as u64)),
            shares: early.alloc(pages(nframes * core::mem::size_of::<crate::cap::CapRef>() as u64)),
            kinfo: early.alloc(1),
            slices: early.alloc(1),
            clock: early.alloc(1),
            env_table: early.alloc(et_pages),
        };
        crate::exposed::map(kernel_pml4, FRAME_TABLE_VA, t.frame_table, ft_pages, early);
        crate::exposed::map(kernel_pml4, KINFO_VA, t.kinfo, 1, early);
        crate::exposed::map(kernel_pml4, SLICES_VA, t.slices, 1, early);
        crate::exposed::map(kernel_pml4, CLOCK_VA, t.clock, 1, early);
        crate::exposed::map(kernel_pml4, ENV_TABLE_VA, t.env_table, et_pages, early);
        t
    }
}

/// The boot module (a cpio archive of programs), where the loader put it
/// and the frames it is mapped from.
struct BootFs {
    loaded: crate::bootinfo::Region,
    frame: Frame,
    len: u64,
}

impl BootFs {
    /// Maps the boot module read-only for everyone (copied first if the
    /// loader did not page-align it).
    fn map(boot: &BootInfo, kernel_pml4: Frame, early: &mut EarlyAlloc) -> BootFs {
        let loaded = boot.module.unwrap_or_default();
        let len = loaded.end - loaded.start;
        let frame = if loaded.start.is_multiple_of(4096) {
            Frame::containing(loaded.start)
        } else {
            let f = early.alloc(pages(len));
            // SAFETY: both ranges are RAM in the physical window and disjoint.
            unsafe {
                core::ptr::copy_nonoverlapping(
                    mm::phys::<u8>(loaded.start),
                    mm::frame_ptr::<u8>(f),
                    len as usize,
                )
            };
            f
        };
        crate::exposed::map(kernel_pml4, BOOTFS_VA, frame, pages(len), early);
        BootFs { loaded, frame, len }
    }
}

/// The frame table: RAM above 1 MiB is free except the kernel image, the
/// boot module and what the early allocator handed out.
fn frame_table(boot: &BootInfo, t: &Exposed, bootfs: &BootFs, early: &EarlyAlloc) -> Frames<'static> {
    let n = t.nframes as usize;
    let mut frames = Frames::new(table(t.frame_table, n), table(t.links, n));
    for r in boot.ram() {
        for f in Frame::containing(r.start.max(1 << 20)).number()..Frame::containing(r.end).number() {
            frames.release_reserved(Frame::new(f));
        }
    }
    let module = Frame::containing(bootfs.loaded.start).number()..pages(bootfs.loaded.end);
    let early_frames = Frame::containing(early.start).number()..Frame::containing(early.next).number();
    for f in mm::image_frames().chain(module.chain(early_frames).map(Frame::new)) {
        frames.claim_for_kernel(f);
    }
    frames
}

/// The kernel state over the tables, with the kernel information page
/// filled in.
fn kernel_state(
    boot: &BootInfo,
    t: Exposed,
    bootfs: &BootFs,
    frames: Frames<'static>,
    kernel_pml4: Frame,
) -> Kernel {
    let kinfo: &'static mut KernelInfo = &mut table(t.kinfo, 1)[0];
    kinfo.frames = t.nframes;
    kinfo.env_slots = ENV_SLOTS as u64;
    kinfo.bootfs_size = bootfs.len;
    let cmdline = boot.cmdline();
    kinfo.cmdline[..cmdline.len()].copy_from_slice(cmdline);
    kinfo.cmdline_len = cmdline.len() as u64;
    kprintln!(
        "{} frames, {} free; command line {:?}",
        t.nframes,
        frames.free_count(),
        core::str::from_utf8(cmdline).unwrap_or("?")
    );
    let once = "a boot table taken twice";
    let caps = crate::cap::TABLE.take().expect(once);
    Kernel {
        mem: Memory::new(frames, caps, table(t.shares, t.nframes as usize), kernel_pml4, kinfo),
        envs: Envs::new(
            crate::env::ENVS.take().expect(once),
            table(t.env_table, ENV_SLOTS).try_into().expect("ENV_SLOTS entries"),
        ),
        sched: Sched::new(
            &mut table(t.slices, 1)[0],
            &mut table(t.clock, 1)[0],
            crate::group::GROUPS.take().expect(once),
        ),
        preds: Predicates::new(crate::predicate::TABLE.take().expect(once)),
        reclaims: Reclaims::new(),
        console: Console::default(),
        xn: crate::xn::Xn::default(),
        idents: crate::ident::Idents::new(crate::ident::IDENTS.take().expect(once)),
        sections: crate::section::Sections::new(crate::section::SECTIONS.take().expect(once)),
        ranges: crate::ranges::Ranges::new(
            crate::ranges::TABLE.take().expect(once),
            crate::charges::Charges::new(crate::charges::TABLE.take().expect(once)),
            boot_keys(),
        ),
    }
}

/// The range-key generator (`keys.rs`): `rdrand` if the CPU has it; its
/// stream keyed from `rdrand`'s words if any and the time stamp counter
/// (stirred again once the clock is measured, `start_clock`).
fn boot_keys() -> crate::keys::Keys {
    let cpu = entropy::Rdrand::detect();
    let hw = || cpu.and_then(entropy::Rdrand::word).unwrap_or(0);
    crate::keys::Keys::new(cpu, [hw(), hw(), crate::arch::clock::rdtsc(), hw()])
}

/// Starts the clock and the first environment, and makes it current.
fn start(k: &mut Kernel, cmdline: &[u8], bootfs_frame: Frame, bootfs_len: u64) {
    start_clock(k);
    // SAFETY: the boot module is mapped in the physical window and never
    // written: it is kernel-owned and exposed read-only.
    let fs = unsafe { core::slice::from_raw_parts(mm::frame_ptr::<u8>(bootfs_frame), bootfs_len as usize) };
    crate::dev::init(&mut k.mem, fs, cmdline);
    // The interposed entry (paper 003 §3.2): its view of the kernel's half
    // is copied now, once the drivers' images are mapped in it: made
    // before, an interposed environment's calls into a driver (XN_FLUSH)
    // wrote a mailbox its view did not map (a kernel panic the stress
    // fuzzer found: INTERPOSE on a sharer of its address space, then
    // XN_FLUSH).
    k.interposition_init();
    k.xn.mount(&mut k.mem);
    if cmdline.split(|&b| b == b' ').any(|w| w == b"selftest=jit") {
        let (programs, runs) = (3000, 4);
        let accepted = crate::selftest::jit(k, programs, runs, 0x5e1f);
        kprintln!(
            "jit self-test: {accepted} of {programs} random programs verified, compiled in the kernel and run {runs} times each; all equal to the interpreter"
        );
    }
    let init = init_name(cmdline);
    let root = match k.load_init(fs, init) {
        Ok(s) => s,
        Err(why) => panic!("cannot start the first environment `{init}`: {why}"),
    };
    k.sched.set_root(root);
    // The devices are the first environment's to use and to lend on.
    let devices = k.mem.make_device_guard().expect("room for the device capability");
    k.envs[root].clist.set(abi::syscall::CRED_DEVICES, devices).expect("slot CRED_DEVICES exists");
    if let Err(e) = k.slice_alloc(root, Some(0)) {
        panic!("cannot give the first environment a time slice: {e:?}");
    }
    kprintln!("starting {init} as environment {:#x}", k.envs[root].id());
    k.switch_to(root);
}

/// Measures the TSC and the APIC timer against the PIT, publishes the TSC's
/// rate on the clock page and starts the timer (masked until the first
/// environment runs with interrupts on).
fn start_clock(k: &mut Kernel) {
    apic::init();
    let rates = crate::arch::clock::calibrate();
    k.sched.set_rates(apic::TICK_NS, rates.map_or(0, |r| r.tsc_hz));
    match rates {
        Some(r) => {
            kprintln!(
                "clock: TSC {}.{:03} MHz, APIC timer {}.{:03} MHz (measured against the PIT)",
                r.tsc_hz / 1_000_000,
                r.tsc_hz / 1000 % 1000,
                r.apic_hz / 1_000_000,
                r.apic_hz / 1000 % 1000
            );
        }
        None => kprintln!("clock: no PIT to measure the TSC against; time from timer ticks only"),
    }
    k.sched.set_wall_epoch(crate::arch::rtc::epoch_ns);
    // How long the measurement took varies from boot to boot.
    k.ranges.stir(crate::arch::clock::rdtsc() ^ rates.map_or(0, |r| r.tsc_hz).rotate_left(32));
    apic::start(rates.map_or(apic::DEFAULT_HZ, |r| r.apic_hz));
}

/// The program named by `init=` on the command line (default `shell`).
fn init_name(cmdline: &[u8]) -> &str {
    let s = core::str::from_utf8(cmdline).unwrap_or("");
    s.split_whitespace().find_map(|w| w.strip_prefix("init=")).unwrap_or("shell")
}
