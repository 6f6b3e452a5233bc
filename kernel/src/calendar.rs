//! The CMOS real-time clock's date registers as seconds since 1970
//! (`arch/rtc.rs` reads them): BCD or binary, 12- or 24-hour, as status
//! register B says, with the century register when it holds one.

/// Status B: bit 2 binary (else BCD) values, bit 1 24-hour (else 12-hour
/// with bit 7 of the hour for PM).
pub const BINARY: u8 = 0x04;
pub const HOURS_24: u8 = 0x02;
const PM: u8 = 0x80;

fn bcd(v: u8) -> u8 {
    (v >> 4) * 10 + (v & 0x0f)
}

/// Days from 1970-01-01 to `y-m-d` (proleptic Gregorian).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Seconds since 1970 of the registers `r` (`[s, min, h, day, month,
/// year, century]`) in `status_b`'s format; None if they make no date.
pub fn unix_seconds(r: [u8; 7], status_b: u8) -> Option<u64> {
    let pm = r[2] & PM != 0;
    let mut v = r;
    v[2] &= !PM;
    if status_b & BINARY == 0 {
        v = v.map(bcd);
    }
    let [s, min, mut h, day, month, year, century] = v;
    if status_b & HOURS_24 == 0 {
        h = h % 12 + if pm { 12 } else { 0 };
    }
    // A century register that reads nothing sensible: this century.
    let century = if (19..=99).contains(&century) { century as i64 } else { 20 };
    if s > 59 || min > 59 || h > 23 || !(1..=31).contains(&day) || !(1..=12).contains(&month) || year > 99 {
        return None;
    }
    let days = days_from_civil(century * 100 + year as i64, month as u32, day as u32);
    let secs = days * 86_400 + h as i64 * 3600 + min as i64 * 60 + s as i64;
    u64::try_from(secs).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_become_unix_seconds() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        // 2026-11-27 21:30:05 UTC, in BCD, 24-hour.
        let r = [0x05, 0x30, 0x21, 0x27, 0x11, 0x26, 0x20];
        assert_eq!(unix_seconds(r, HOURS_24), Some(1_795_815_005));
        // The same in binary, 12-hour (9 PM).
        let r = [5, 30, 9 | PM, 27, 11, 26, 20];
        assert_eq!(unix_seconds(r, BINARY), Some(1_795_815_005));
        // 12 AM is midnight, 12 PM noon.
        assert_eq!(unix_seconds([0, 0, 0x12, 1, 1, 0x70, 0x19], 0), Some(0));
        assert_eq!(unix_seconds([0, 0, 0x12 | PM, 1, 1, 0x70, 0x19], 0), Some(43_200));
        // Leap day, and a century register that reads nothing.
        assert_eq!(unix_seconds([0, 0, 0, 0x29, 0x02, 0x24, 0xff], HOURS_24), Some(1_709_164_800));
        // Not a date.
        assert_eq!(unix_seconds([0x60, 0, 0, 1, 1, 0x24, 0x20], HOURS_24), None);
        assert_eq!(unix_seconds([0, 0, 0, 1, 0x13, 0x24, 0x20], HOURS_24), None);
    }
}
