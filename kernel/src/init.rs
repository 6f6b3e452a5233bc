//! Boot: from the trampoline's call to the first environment in ring 3.

use crate::arch::{apic, fpu, gdt, idt, percpu, serial, syscall, trap};
use crate::bootinfo::{BootInfo, Phys};
use crate::frames::{Frames, Link};
use crate::mm::{self, EarlyAlloc};
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
fn table<T>(first: u64, len: usize) -> &'static mut [T] {
    // SAFETY: `first` starts a run of zeroed frames from the early
    // allocator large enough for `len` elements, used only through this
    // slice; all-zero bytes are a valid value of the table types used here.
    unsafe { core::slice::from_raw_parts_mut(mm::phys::<T>(first << 12), len) }
}

pub extern "C" fn kmain(magic: u32, info: u32) -> ! {
    serial::init();
    kprintln!("Veneer exokernel booting");
    gdt::init();
    idt::init();
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
    let mut early = EarlyAlloc::new(&boot);
    let kernel_pml4 = mm::init(&boot, &mut early);
    percpu::init(&raw const boot_stack_top as u64);
    syscall::init();
    fpu::init();
    crate::heap::init();

    // The exposed tables.
    let nframes = boot.ram().iter().map(|r| r.end).max().unwrap_or(0) / 4096;
    let ft_pages = pages(nframes * core::mem::size_of::<FrameInfo>() as u64);
    let ft = early.alloc(ft_pages);
    let links = early.alloc(pages(nframes * core::mem::size_of::<Link>() as u64));
    let shares = early.alloc(pages(nframes * core::mem::size_of::<crate::cap::CapRef>() as u64));
    let kinfo = early.alloc(1);
    let slices = early.alloc(1);
    let clock = early.alloc(1);
    let et_pages = pages((ENV_SLOTS * core::mem::size_of::<EnvInfo>()) as u64);
    let et = early.alloc(et_pages);
    crate::exposed::map(kernel_pml4, FRAME_TABLE_VA, ft, ft_pages, &mut early);
    crate::exposed::map(kernel_pml4, KINFO_VA, kinfo, 1, &mut early);
    crate::exposed::map(kernel_pml4, SLICES_VA, slices, 1, &mut early);
    crate::exposed::map(kernel_pml4, CLOCK_VA, clock, 1, &mut early);
    crate::exposed::map(kernel_pml4, ENV_TABLE_VA, et, et_pages, &mut early);
    let bootfs = boot.module.unwrap_or_default();
    let bootfs_len = bootfs.end - bootfs.start;
    let bootfs_frame = if bootfs.start % 4096 == 0 {
        bootfs.start >> 12
    } else {
        // Not page-aligned: copy it so it can be mapped.
        let f = early.alloc(pages(bootfs_len));
        // SAFETY: both ranges are RAM in the physical window and disjoint.
        unsafe {
            core::ptr::copy_nonoverlapping(
                mm::phys::<u8>(bootfs.start),
                mm::phys::<u8>(f << 12),
                bootfs_len as usize,
            )
        };
        f
    };
    crate::exposed::map(kernel_pml4, BOOTFS_VA, bootfs_frame, pages(bootfs_len), &mut early);

    // The frame table: RAM above 1 MiB is free except what is in use.
    let mut frames = Frames::new(table(ft, nframes as usize), table(links, nframes as usize));
    for r in boot.ram() {
        for f in (r.start.max(1 << 20) >> 12)..(r.end >> 12) {
            frames.release_reserved(f);
        }
    }
    let module_frames = (bootfs.start >> 12)..pages(bootfs.end);
    for f in mm::image_frames().chain(module_frames).chain((early.start >> 12)..(early.next >> 12)) {
        frames.claim_for_kernel(f);
    }
    let kinfo: &'static mut KernelInfo = &mut table(kinfo, 1)[0];
    kinfo.frames = nframes;
    kinfo.free_frames = frames.free_count();
    kinfo.env_slots = ENV_SLOTS as u64;
    kinfo.bootfs_size = bootfs_len;
    let cmdline = boot.cmdline();
    kinfo.cmdline[..cmdline.len()].copy_from_slice(cmdline);
    kinfo.cmdline_len = cmdline.len() as u64;
    kprintln!(
        "{} frames, {} free; command line {:?}",
        nframes,
        frames.free_count(),
        core::str::from_utf8(cmdline).unwrap_or("?")
    );

    state::install(Kernel {
        frames,
        caps: crate::cap::table(),
        frame_share: table(shares, nframes as usize),
        envs: crate::env::table(),
        env_info: table(et, ENV_SLOTS).try_into().expect("ENV_SLOTS entries"),
        kinfo,
        kernel_pml4,
        current: 0,
        root: 0,
        slices: &mut table(slices, 1)[0],
        clock: &mut table(clock, 1)[0],
        slice_env: [crate::env::NONE; 256],
        next_used: [crate::env::NONE as u8; 256],
        grace_env: crate::env::NONE,
        console_notify: (0, 0),
        grace_mark: 0,
        spare_next: 0,
        reclaims: [crate::revoke::Reclaim::NONE; crate::revoke::MAX_REQUESTS],
        predicates: crate::predicate::table(),
        compiled: alloc::vec::Vec::new(),
    });
    let k = state::kernel();
    start_clock(k);
    // SAFETY: the boot module is mapped in the physical window and never
    // written: it is kernel-owned and exposed read-only.
    let fs = unsafe { core::slice::from_raw_parts(mm::phys::<u8>(bootfs_frame << 12), bootfs_len as usize) };
    crate::dev::init(k, fs, cmdline);
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
    k.root = root;
    if let Err(e) = k.slice_alloc(root, Some(0)) {
        panic!("cannot give the first environment a time slice: {e:?}");
    }
    kprintln!("starting {init} as environment {:#x}", k.envs[root].id);
    k.switch_to(root);
    trap::enter_user()
}

/// Measures the TSC and the APIC timer against the PIT, publishes the TSC's
/// rate on the clock page and starts the timer (masked until the first
/// environment runs with interrupts on).
fn start_clock(k: &mut Kernel) {
    apic::init();
    let rates = crate::arch::clock::calibrate();
    k.clock.tick_ns = apic::TICK_NS;
    match rates {
        Some(r) => {
            k.clock.tsc_hz = r.tsc_hz;
            k.clock.tsc_ns_mult = ((1_000_000_000u128 << 32) / r.tsc_hz as u128) as u64;
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
    apic::start(rates.map_or(apic::DEFAULT_HZ, |r| r.apic_hz));
}

/// The program named by `init=` on the command line (default `shell`).
fn init_name(cmdline: &[u8]) -> &str {
    let s = core::str::from_utf8(cmdline).unwrap_or("");
    s.split_whitespace().find_map(|w| w.strip_prefix("init=")).unwrap_or("shell")
}
