//! What a trial's boot came to (paper 004 §4.2): the classes the campaign
//! counts, read from the console, QEMU's exit and, for the disk, the
//! image itself (every write the kernel acknowledged must be on it).

use crate::qemu::{Outcome, EXIT_SUCCESS};

/// A trial's outcome, mildest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// The workload passed.
    NoEffect,
    /// The workload passed, its data intact, across a restart of the
    /// failed driver (`recover=restart`): the failure was recovered.
    Recovered,
    /// A request failed or was refused (the workload saw an error).
    WorkloadError,
    /// A request never ended and nothing in the kernel noticed.
    WorkloadHang,
    /// Data read back wrong, a reply lost, or an acknowledged write not
    /// on the disk.
    DataLost,
    /// The kernel panicked or the machine reset.
    KernelCrash,
    /// The kernel stopped making progress (the trial's time ran out).
    KernelHang,
}

pub const CLASSES: [Class; 7] = [
    Class::NoEffect,
    Class::Recovered,
    Class::WorkloadError,
    Class::WorkloadHang,
    Class::DataLost,
    Class::KernelCrash,
    Class::KernelHang,
];

impl Class {
    pub fn name(self) -> &'static str {
        match self {
            Class::NoEffect => "no visible effect",
            Class::Recovered => "recovered",
            Class::WorkloadError => "workload error",
            Class::WorkloadHang => "workload hang",
            Class::DataLost => "data lost/corrupted",
            Class::KernelCrash => "kernel crash",
            Class::KernelHang => "kernel hang",
        }
    }

    pub fn short(self) -> &'static str {
        match self {
            Class::NoEffect => "ok",
            Class::Recovered => "recov",
            Class::WorkloadError => "error",
            Class::WorkloadHang => "hang",
            Class::DataLost => "data",
            Class::KernelCrash => "CRASH",
            Class::KernelHang => "KHANG",
        }
    }

    pub fn is_kernel(self) -> bool {
        matches!(self, Class::KernelCrash | Class::KernelHang)
    }
}

/// What stopped the driver, if anything did: the layer that caught the
/// fault (from the console's `driver NAME: ...` line).
pub fn detector(serial: &str, driver: &str) -> &'static str {
    let prefix = format!("driver {driver}: ");
    let start = format!("dev: {driver} at");
    let Some(line) = serial.lines().find_map(|l| l.split_once(&prefix).map(|(_, r)| r)) else {
        // No layer of the kernel's stopped it; its init may have given up.
        let refused = serial.lines().any(|l| l.contains(&start) && l.contains("not started"));
        return if refused { "init refused" } else { "-" };
    };
    let rules: [(&str, &'static str); 11] = [
        ("not believed", "I/O error doubted"),
        ("livelock with interrupts off", "NMI watchdog"),
        ("livelock", "watchdog"),
        ("refused", "wrapper check"),
        ("gave up", "driver panic"),
        ("deadline", "deadline"),
        ("reported", "report check"),
        ("not in its stack", "stack check"),
        ("page fault", "page fault"),
        ("double fault", "double fault"),
        ("", "exception"),
    ];
    rules.iter().find(|(w, _)| line.contains(w)).map_or("-", |r| r.1)
}

/// How long driver `driver` took from its first failure to a request
/// ended well (the kernel's `recovery: NAME ended a request well N TSC
/// cycles after its failure`), in microseconds by the TSC's rate the
/// kernel measured at boot (`clock: TSC M MHz`).
pub fn service_us(serial: &str, driver: &str) -> Option<f64> {
    let prefix = format!("recovery: {driver} ended a request well ");
    let cycles: f64 =
        serial.lines().find_map(|l| l.split_once(&prefix)?.1.split(' ').next()?.parse().ok())?;
    let mhz: f64 =
        serial.lines().find_map(|l| l.split_once("clock: TSC ")?.1.split(' ').next()?.parse().ok())?;
    (mhz > 0.0).then(|| cycles / mhz)
}

/// The workload's verdict line (`faultload NAME: VERDICT: why`).
fn verdict<'a>(serial: &'a str, workload: &str) -> Option<(&'a str, &'a str)> {
    let prefix = format!("faultload {workload}: ");
    serial.lines().find_map(|l| {
        let rest = l.split_once(&prefix)?.1;
        let (v, why) = rest.split_once(": ").unwrap_or((rest, ""));
        ["ok", "error", "hang", "lost", "corrupt"].contains(&v).then_some((v, why))
    })
}

/// The writes the block workload says were acknowledged (a bit per block).
pub fn acked(serial: &str) -> Option<u32> {
    let hex = serial.lines().find_map(|l| l.split_once("faultload blk: acked writes 0x"))?.1;
    u32::from_str_radix(hex.trim(), 16).ok()
}

/// The first acknowledged block of the workload that is not on `disk`.
pub fn missing_write(disk: &[u8], acked: u32) -> Option<usize> {
    (0..drvapi::WORKLOAD_BLOCKS).filter(|j| acked & 1 << j != 0).find(|&j| {
        let at = (drvapi::WORKLOAD_SECTOR as usize + j * 8) * 512;
        disk.get(at..at + 4096)
            .is_none_or(|b| b.iter().enumerate().any(|(i, &x)| x != drvapi::workload_byte(j, i)))
    })
}

/// Classifies one boot of `workload`; the reason in words.
pub fn classify(out: &Outcome, workload: &str, disk: &[u8], disk_sectors: u64) -> (Class, String) {
    let s = &out.serial;
    let alive = s.contains("hello from ring 3") && out.code == Some(EXIT_SUCCESS);
    if !alive {
        let why =
            s.lines().find(|l| l.contains("KERNEL PANIC")).unwrap_or("no first environment").to_string();
        return if out.timed_out { (Class::KernelHang, why) } else { (Class::KernelCrash, why) };
    }
    let Some((v, why)) = verdict(s, workload) else {
        return (Class::KernelCrash, "the workload never reported".into());
    };
    if workload == "blk" {
        if let Some(j) = acked(s).and_then(|a| missing_write(disk, a)) {
            return (Class::DataLost, format!("acknowledged block {j} is not on the disk"));
        }
        let want = format!("faultload blk: capacity {disk_sectors}");
        if v == "ok" && !s.contains(&want) {
            return (Class::WorkloadError, "the driver reported a wrong capacity".into());
        }
    }
    let restarted = s.lines().any(|l| l.contains(" restarted (") && l.contains("driver "));
    let class = match v {
        "ok" if restarted => Class::Recovered,
        "ok" => Class::NoEffect,
        "error" => Class::WorkloadError,
        "hang" => Class::WorkloadHang,
        // A reply that never came because the driver was stopped while it
        // was receiving is a failure seen, not data silently lost.
        "lost" if workload == "net" && detector(s, "virtio-net") != "-" => Class::WorkloadError,
        _ => Class::DataLost,
    };
    (class, why.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn out(serial: &str, code: Option<i32>, timed_out: bool) -> Outcome {
        Outcome { code, serial: serial.into(), timed_out, arrivals: vec![(Duration::ZERO, 0)] }
    }

    fn disk_with(acked: u32) -> Vec<u8> {
        let mut d = vec![0u8; 4 << 20];
        for j in (0..drvapi::WORKLOAD_BLOCKS).filter(|j| acked & 1 << j != 0) {
            let at = (drvapi::WORKLOAD_SECTOR as usize + j * 8) * 512;
            for i in 0..4096 {
                d[at + i] = drvapi::workload_byte(j, i);
            }
        }
        d
    }

    const GOOD: &str = "faultload blk: capacity 8192\nfaultload blk: acked writes 0x3\nfaultload blk: ok: all data verified\nhello from ring 3\n";

    #[test]
    fn a_clean_boot_is_no_effect_and_a_lost_acknowledged_write_is_data_lost() {
        assert_eq!(
            classify(&out(GOOD, Some(EXIT_SUCCESS), false), "blk", &disk_with(3), 8192).0,
            Class::NoEffect
        );
        let (c, why) = classify(&out(GOOD, Some(EXIT_SUCCESS), false), "blk", &disk_with(1), 8192);
        assert_eq!((c, why.as_str()), (Class::DataLost, "acknowledged block 1 is not on the disk"));
        assert_eq!(
            classify(&out(GOOD, Some(EXIT_SUCCESS), false), "blk", &disk_with(3), 4096).0,
            Class::WorkloadError
        );
    }

    #[test]
    fn a_dead_kernel_is_a_crash_or_a_hang_whatever_the_workload_said() {
        let panic =
            format!("{GOOD}KERNEL PANIC: page fault in the kernel\n").replace("hello from ring 3\n", "");
        assert_eq!(classify(&out(&panic, Some(3), false), "blk", &disk_with(3), 8192).0, Class::KernelCrash);
        assert_eq!(
            classify(&out("faultload blk: capacity 8192\n", None, true), "blk", &[], 8192).0,
            Class::KernelHang
        );
        let silent = "hello from ring 3\n";
        assert_eq!(classify(&out(silent, Some(EXIT_SUCCESS), false), "net", &[], 0).0, Class::KernelCrash);
    }

    #[test]
    fn a_pass_across_a_restart_is_recovered_but_not_with_a_lost_write() {
        let restarted = format!("driver virtio-blk disabled: it failed\ndriver virtio-blk restarted (1 of 3 restarts allowed in its window)\n{GOOD}");
        let run = |disk: &[u8]| classify(&out(&restarted, Some(EXIT_SUCCESS), false), "blk", disk, 8192).0;
        assert_eq!(run(&disk_with(3)), Class::Recovered);
        assert_eq!(run(&disk_with(2)), Class::DataLost);
        let failed = restarted.replace("ok: all data verified", "error: block 3 ended with status Some(1)");
        assert_eq!(
            classify(&out(&failed, Some(EXIT_SUCCESS), false), "blk", &disk_with(3), 8192).0,
            Class::WorkloadError
        );
    }

    #[test]
    fn the_workload_verdict_decides_otherwise() {
        let hang = "faultload net: hang: echo request: the transmission did not complete within 3 s\nhello from ring 3\n";
        assert_eq!(classify(&out(hang, Some(EXIT_SUCCESS), false), "net", &[], 0).0, Class::WorkloadHang);
        let lost = "faultload net: lost: no reply to echo request 3 within 3 s\nhello from ring 3\n";
        assert_eq!(classify(&out(lost, Some(EXIT_SUCCESS), false), "net", &[], 0).0, Class::DataLost);
        let stopped = format!("driver virtio-net: gave up: bad token\n{lost}");
        assert_eq!(
            classify(&out(&stopped, Some(EXIT_SUCCESS), false), "net", &[], 0).0,
            Class::WorkloadError
        );
    }

    #[test]
    fn the_time_to_service_is_the_kernels_cycles_by_its_clock() {
        let s = "veneer: clock: TSC 2000.000 MHz, APIC timer 62.5 MHz\nveneer: recovery: virtio-blk ended a request well 3000000 TSC cycles after its failure\n";
        assert_eq!(service_us(s, "virtio-blk"), Some(1500.0));
        assert_eq!(service_us(s, "virtio-net"), None);
        assert_eq!(service_us(&s[s.find("veneer: recovery").unwrap()..], "virtio-blk"), None);
        let doubted = "veneer: driver virtio-blk: complete(3, -3, 4096) refused: an I/O error, not believed until a fresh copy of the driver repeats it";
        assert_eq!(detector(doubted, "virtio-blk"), "I/O error doubted");
    }

    #[test]
    fn the_detector_is_the_first_driver_line() {
        let s = "veneer: driver virtio-net: dma_free(0x1, 0x2, 0x3) refused: pages it does not hold\nveneer: driver virtio-net disabled: it failed";
        assert_eq!(detector(s, "virtio-net"), "wrapper check");
        assert_eq!(detector("driver virtio-blk: invalid opcode at rip 0x1", "virtio-blk"), "exception");
        assert_eq!(
            detector("driver virtio-blk: livelock with interrupts off: ...", "virtio-blk"),
            "NMI watchdog"
        );
        assert_eq!(detector("nothing", "virtio-blk"), "-");
        let gave_up =
            "virtio-blk: no virtio transport\ndev: virtio-blk at 00:03.0 not started: its init failed";
        assert_eq!(detector(gave_up, "virtio-blk"), "init refused");
        let stopped =
            format!("driver virtio-blk: page fault at address 0x0 (rip 0x1): outside its domain\n{gave_up}");
        assert_eq!(detector(&stopped, "virtio-blk"), "page fault");
    }
}
