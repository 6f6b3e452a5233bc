//! Device boot tests: the ring-3 device tests (`init=devtest NAME,...`,
//! `user/src/bin/devtest.rs`, through the block and packet system calls)
//! under QEMU, each on its own fresh disk image, with the lines that prove
//! them. The persistence test boots twice on one image: the first boot
//! writes, the second reads back. The fault-injection tests boot the image
//! built with the `inject` feature (`build::inject`).

use crate::boottest::BootTest;
use crate::build::{self, Image};
use crate::{disk, qemu};
use std::time::Duration;

struct Dev {
    name: &'static str,
    /// The devices offer no MSI-X (`vectors=0`): interrupts come through
    /// the I/O APIC, both devices on one shared line.
    intx: bool,
    /// On q35 with QEMU's `intel-iommu` (`qemu::IOMMU_MACHINE`).
    iommu: bool,
    /// Injects faults: boots the `inject` image.
    inject: bool,
    /// `devtest` test names of each boot, in order, on one image.
    boots: &'static [(&'static str, &'static [&'static str])],
}

const TESTS: &[Dev] = &[
    Dev {
        name: "dev_blk_pattern",
        intx: false,
        iommu: false,
        inject: false,
        boots: &[(
            "blk-pattern",
            &[
                "devtest blk-pattern: read 8 sectors at 4096 under interrupts: the pattern xtask wrote",
                "a read past the end and a frame not the caller's are refused",
            ],
        )],
    },
    Dev {
        name: "dev_blk_persist",
        intx: false,
        iommu: false,
        inject: false,
        boots: &[
            ("blk-write", &["devtest blk-write: wrote 8 sectors at 100"]),
            (
                "blk-readback",
                &["devtest blk-readback: the 8 sectors the previous boot wrote are on the disk"],
            ),
        ],
    },
    Dev {
        name: "dev_arp",
        intx: false,
        iommu: false,
        inject: false,
        boots: &[("arp", &["devtest arp: 10.0.2.2 is at 52:55:0a:00:02:02"])],
    },
    // The block driver, isolated, writes into kernel memory with a read in
    // flight; the network driver and the first environment carry on.
    Dev {
        name: "dev_wild",
        intx: false,
        iommu: false,
        inject: true,
        boots: &[(
            "wild,arp",
            &[
                "driver virtio-blk: page fault at address 0x",
                "outside its domain",
                "driver virtio-blk disabled",
                "inject: the kernel variable at 0x",
                "holds 0x5afe",
                "devtest wild: the write to kernel memory was stopped",
                "devtest arp: 10.0.2.2 is at",
                "hello from ring 3: the first environment runs on",
            ],
        )],
    },
    // The block driver jumps where nothing is mapped (neither its code nor
    // the kernel's); the network driver and the first environment carry on.
    Dev {
        name: "dev_wildcall",
        intx: false,
        iommu: false,
        inject: true,
        boots: &[(
            "wild-call,arp",
            &[
                "driver virtio-blk: page fault at address 0x1000 (rip 0x1000)",
                "devtest wild-call: the block driver's jump to 0x1000 was stopped",
                "devtest arp: 10.0.2.2 is at",
                "hello from ring 3: the first environment runs on",
            ],
        )],
    },
    // The block driver calls an unmapped address between the kernel's
    // image and the driver regions (issue 28's first panic: the kernel
    // took it for its own code), in a second boot points its stack pointer
    // at its registers and takes an interrupt there (issue 28's second:
    // the trap's frame landed in the registers), and in a third calls the
    // kernel on that stack.
    Dev {
        name: "dev_wildcall_high",
        intx: false,
        iommu: false,
        inject: true,
        boots: &[
            (
                "wild-call-high,arp",
                &[
                    "driver virtio-blk: page fault at address 0xffffffffb0000000 (rip 0xffffffffb0000000)",
                    "devtest wild-call-high: the block driver's call to 0xffffffffb0000000 was stopped",
                    "devtest arp: 10.0.2.2 is at",
                    "hello from ring 3",
                ],
            ),
            (
                "bad-stack-irq,arp",
                &[
                    "driver virtio-blk: livelock",
                    "devtest bad-stack: the block driver took an interrupt with its stack on its registers",
                    "devtest arp: 10.0.2.2 is at",
                    "hello from ring 3",
                ],
            ),
            (
                "bad-stack-call,arp",
                &[
                    "driver virtio-blk: called the kernel with its stack pointer at 0x",
                    "devtest bad-stack: the block driver called the kernel with its stack on its registers",
                    "devtest arp: 10.0.2.2 is at",
                    "hello from ring 3",
                ],
            ),
        ],
    },
    // The block driver runs `sysret` (and traps from ring 3), the network
    // driver `int 14` (a frame shifted by a word): both panicked the kernel
    // before (fault-injection trial virtio-blk 262 --io).
    Dev {
        name: "dev_privileged",
        intx: false,
        iommu: false,
        inject: true,
        boots: &[
            (
                "sysret,arp",
                &[
                    "driver virtio-blk: page fault at address 0x1000 (rip 0x1000)",
                    "devtest privileged: virtio-blk's sysret was stopped",
                    "devtest arp: 10.0.2.2 is at",
                    "hello from ring 3",
                ],
            ),
            (
                "int14,blk-pattern",
                &[
                    "devtest privileged: virtio-net's int 14 was stopped",
                    "devtest blk-pattern: read 8 sectors",
                    "hello from ring 3",
                ],
            ),
        ],
    },
    // Alive but useless: the block driver drops a request (the deadline
    // fails it), then, in a second boot, refuses requests as if full while
    // the network driver says a frame went out whole with half its bytes
    // (each is declared failed at its first lie).
    Dev {
        name: "dev_detect",
        intx: false,
        iommu: false,
        inject: true,
        boots: &[
            (
                "deadline,arp",
                &[
                    "not ended within 1000 ms: missed its deadline",
                    "devtest deadline: the request the block driver never ended failed it",
                    "devtest arp: 10.0.2.2 is at",
                    "hello from ring 3",
                ],
            ),
            (
                "lie-full,lie-short",
                &[
                    "driver virtio-blk: reported its queue full with slots to spare",
                    "devtest lie: virtio-blk's lie was caught",
                    "a length other than the request's",
                    "devtest lie: virtio-net's lie was caught",
                    "hello from ring 3",
                ],
            ),
        ],
    },
    // Recovery (`recover=restart`): the block driver fails, is restarted
    // and reads the pattern right, the read it refused made again; it
    // fails with a write and reads in flight, which the restarted driver
    // makes again; the network driver fails and is restarted. In a second
    // boot the block driver fails again each time it is back and is left
    // disabled after its third restart.
    Dev {
        name: "dev_restart",
        intx: false,
        iommu: false,
        inject: true,
        boots: &[
            (
                "restart,replay,net-restart recover=restart",
                &[
                    "driver virtio-blk: reported its queue full with slots to spare",
                    "driver virtio-blk disabled",
                    "driver virtio-blk restarted (1 of 3",
                    "devtest blk-pattern: read 8 sectors at 4096 under interrupts: the pattern xtask wrote",
                    "devtest restart: the block driver was stopped, restarted afresh, and the disk reads right",
                    "driver virtio-blk restarted (2 of 3",
                    "after its restart each ended well, the reads with the disk's pattern, the write on the disk",
                    "driver virtio-net restarted (1 of 3",
                    "devtest net-restart: the network driver was stopped and restarted; ARP is answered again",
                    "hello from ring 3",
                ],
            ),
            // Lies no exception shows, about requests the kernel checked:
            // each read is made again by a fresh copy of the driver.
            (
                "lie-refuse,lie-error,lie-invalid,net-lie-refuse recover=restart",
                &[
                    "devtest lie-refuse: the block driver's lie about a valid read was not believed",
                    "devtest lie-error: the block driver's lie about a valid read was not believed",
                    "devtest lie-invalid: the block driver's lie about a valid read was not believed",
                    "devtest net-lie-refuse: the network driver's refusal was not believed",
                    "hello from ring 3",
                ],
            ),
            (
                "restart-loop,arp recover=restart",
                &[
                    "driver virtio-blk restarted (3 of 3",
                    "driver virtio-blk: failed 4 times within 10 s: left disabled",
                    "devtest restart-loop: the block driver failing at once was restarted 3 times, then left disabled",
                    "devtest arp: 10.0.2.2 is at",
                    "hello from ring 3",
                ],
            ),
        ],
    },
    // The network driver's stack overflows; the block driver carries on.
    Dev {
        name: "dev_overflow",
        intx: false,
        iommu: false,
        inject: true,
        boots: &[(
            "overflow,blk-pattern",
            &[
                "driver virtio-net: page fault at address 0x",
                "its stack overflowed into its guard page",
                "devtest overflow: the network driver's stack overflow was stopped",
                "devtest blk-pattern: read 8 sectors",
                "hello from ring 3: the first environment runs on",
            ],
        )],
    },
    // The block driver loops in a call, the network driver in its
    // interrupt handler: the watchdog stops both, the first environment
    // carries on.
    Dev {
        name: "dev_livelock",
        intx: false,
        iommu: false,
        inject: true,
        boots: &[(
            "livelock,irq-livelock",
            &[
                "driver virtio-blk: livelock",
                "driver virtio-blk disabled",
                "devtest livelock: the block driver looping in a call was stopped",
                "driver virtio-net: livelock",
                "devtest irq-livelock: the network driver looping in its interrupt handler was stopped",
                "hello from ring 3: the first environment runs on",
            ],
        )],
    },
    // The block driver loops with interrupts off (`cli`): the timer's
    // watchdog cannot reach it, the NMI watchdog can; the network driver
    // and the first environment carry on.
    Dev {
        name: "dev_cli_livelock",
        intx: false,
        iommu: false,
        inject: true,
        boots: &[(
            "cli-livelock,arp",
            &[
                "driver virtio-blk: livelock with interrupts off",
                "driver virtio-blk disabled",
                "devtest cli-livelock: the block driver looping with interrupts off was stopped",
                "devtest arp: 10.0.2.2 is at",
                "hello from ring 3: the first environment runs on",
            ],
        )],
    },
    // Without MSI-X; the network driver still gets its shared line's
    // interrupts after the block driver on the same line is disabled.
    Dev {
        name: "dev_intx",
        intx: true,
        iommu: false,
        inject: true,
        boots: &[(
            "blk-pattern,wild,arp",
            &[
                "I/O APIC vector",
                "devtest blk-pattern: read 8 sectors at 4096 under interrupts",
                "inject: the kernel variable at 0x",
                "holds 0x5afe",
                "devtest wild: the write to kernel memory was stopped",
                "devtest arp: 10.0.2.2 is at 52:55:0a:00:02:02",
            ],
        )],
    },
    // Under the IOMMU, the block driver reads the pattern; then it gives
    // its device a wrong DMA address (a page it was lent before and gave
    // back): the IOMMU blocks the write and reports it, the
    // driver is disabled, the page is unchanged; the network driver, under
    // the IOMMU too, carries on.
    Dev {
        name: "dev_iommu",
        intx: false,
        iommu: true,
        inject: true,
        boots: &[(
            "blk-pattern,wild-dma,arp",
            &[
                "iommu: translation on",
                "devtest blk-pattern: read 8 sectors at 4096 under interrupts: the pattern xtask wrote",
                "iommu: DMA fault: virtio-blk's device",
                "driver virtio-blk disabled",
                "devtest wild-dma: the device's write to 0x",
                "devtest arp: 10.0.2.2 is at 52:55:0a:00:02:02",
                "hello from ring 3: the first environment runs on",
            ],
        )],
    },
];

pub fn names() -> Vec<&'static str> {
    TESTS.iter().map(|t| t.name).collect()
}

/// The device tests among `names` (all when empty).
pub fn plan(img: &Image, names: &[String]) -> Result<Vec<BootTest>, String> {
    let mut out = Vec::new();
    let chosen: Vec<&Dev> =
        TESTS.iter().filter(|t| names.is_empty() || names.iter().any(|n| n == t.name)).collect();
    let inject = if chosen.iter().any(|t| t.inject) { Some(build::inject()?) } else { None };
    for t in chosen {
        let img = match (&inject, t.inject) {
            (Some(i), true) => i,
            _ => img,
        };
        let path = build::root().join("target/disks").join(format!("{}.img", t.name));
        disk::create(&path)?;
        let mut chain: Option<Box<BootTest>> = None;
        for (words, expect) in t.boots.iter().rev() {
            let mut args = qemu::base_args(img, &format!("devtest {words}"));
            let mut devices = qemu::device_args(&path, 0);
            if t.intx {
                devices = devices
                    .into_iter()
                    .map(|a| a.replace("disable-legacy=on", "disable-legacy=on,vectors=0"))
                    .collect();
            }
            if t.iommu {
                args.extend(qemu::IOMMU_MACHINE.iter().map(|s| s.to_string()));
                devices = qemu::through_iommu(devices);
            }
            args.extend(devices);
            chain = Some(Box::new(BootTest {
                then: chain,
                ..BootTest::new(
                    t.name.to_string(),
                    args,
                    expect.iter().map(|s| s.to_string()).collect(),
                    Duration::from_secs(60),
                )
            }));
        }
        out.extend(chain.map(|b| *b));
    }
    Ok(out)
}
