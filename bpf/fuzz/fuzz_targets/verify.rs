//! Arbitrary bytes -> spec + program -> verifier. Accepted programs run in
//! the guarded interpreter, which must never report a broken guarantee.
#![no_main]

use bpf::{run, verify_bytes, Memory, PacketFields, ProgramSpec};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Header: ctx size, region count and sizes, packet flag, fill byte.
    if data.len() < 8 {
        return;
    }
    let ctx_size = 8 + (data[0] as u32 % 8) * 8;
    let nregions = data[1] as usize % 4;
    let regions: Vec<u32> = data[2..2 + nregions]
        .iter()
        .map(|&b| b as u32 * 4)
        .collect();
    let mut spec = ProgramSpec::new(ctx_size)
        .with_regions(&regions)
        .with_max_steps(1 << 16);
    if data[6] & 1 == 1 {
        spec = spec.with_packet(PacketFields {
            data_off: 0,
            data_end_off: 4,
            width: 4,
        });
    }
    let fill = data[7];
    let Ok(prog) = verify_bytes(&data[8..], &spec) else {
        return;
    };
    let ctx = vec![fill; ctx_size as usize];
    let region_bytes: Vec<Vec<u8>> = regions.iter().map(|&s| vec![fill; s as usize]).collect();
    let region_slices: Vec<&[u8]> = region_bytes.iter().map(|r| r.as_slice()).collect();
    for packet_len in [0usize, 3, 64] {
        let packet = vec![fill; packet_len];
        let mem = Memory {
            ctx: &ctx,
            regions: &region_slices,
            packet: &packet,
        };
        if let Err(e) = run(&prog, &mem) {
            assert!(!e.is_verifier_bug(), "verifier accepted an unsafe program: {e:?}");
        }
    }
});
