//! The reply to a frame: its addresses swapped at every layer the kernel
//! can parse without knowing more than headers (Ethernet; ARP sender and
//! target; IPv4 addresses; TCP/UDP ports). Transmit is checked as a secure
//! binding by asking whether the sender's own filters would accept the
//! mirror: a program may send only what it would receive the answer to.

const ETH_ARP: u16 = 0x0806;
const ETH_IPV4: u16 = 0x0800;

fn swap(frame: &mut [u8], a: usize, b: usize, n: usize) {
    for i in 0..n {
        frame.swap(a + i, b + i);
    }
}

/// Turns `frame` into its mirror in place. Parts that are not there (a
/// truncated header) are left alone.
pub fn mirror(frame: &mut [u8]) {
    if frame.len() < 14 {
        return;
    }
    swap(frame, 0, 6, 6);
    let ethertype = u16::from_be_bytes([frame[12], frame[13]]);
    match ethertype {
        // Ethernet/IPv4 ARP: sender (hardware, protocol) <-> target.
        ETH_ARP if frame.len() >= 42 && frame[18] == 6 && frame[19] == 4 => swap(frame, 22, 32, 10),
        ETH_IPV4 if frame.len() >= 34 => {
            swap(frame, 26, 30, 4);
            let ihl = usize::from(frame[14] & 0x0f) * 4;
            let l4 = 14 + ihl;
            let proto = frame[23];
            if ihl >= 20 && (proto == 6 || proto == 17) && frame.len() >= l4 + 4 {
                swap(frame, l4, l4 + 2, 2);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mirror_twice_is_identity_and_swaps_ports() {
        let mut f = [0u8; 54];
        for (i, b) in f.iter_mut().enumerate() {
            *b = i as u8;
        }
        f[12] = 0x08;
        f[13] = 0x00;
        f[14] = 0x45;
        f[23] = 6;
        let orig = f;
        mirror(&mut f);
        assert_eq!(&f[0..6], &orig[6..12]);
        assert_eq!(&f[26..30], &orig[30..34]);
        assert_eq!(&f[34..36], &orig[36..38]);
        mirror(&mut f);
        assert_eq!(f, orig);
        let mut short = [0u8; 13];
        mirror(&mut short);
    }
}
