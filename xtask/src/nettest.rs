//! The boot test `net_host`: Veneer's network with the host's
//! (`libos/hosttests/nethost.sh`). The test serves files of 0 bytes to
//! 4 MiB over HTTP on 127.0.0.1 (the guest reaches it as 10.0.2.2:PORT
//! through QEMU's user network) and forwards a free host port to the
//! guest's port 80. The guest's busybox wget fetches every file and
//! prints its MD5 (checked against the host's), then serves the files
//! with busybox httpd; the host's curl fetches them back through the
//! forwarded port and compares them byte for byte; the guest learns the
//! outcome from the host server's `/done`. Then the guest serves them
//! with Cheetah (`/cbin/cheetah`: the library stack's HTTP fast path, over
//! the NIC, the kernel's filters and transmit check) and the host fetches
//! them again, each answer's `Server: cheetah` header checked; `/done2`.
//!
//! The boot test `net_idle`: an idle machine answers ARP and ping. Two
//! machines on a point-to-point link (QEMU's `dgram` backend over two UDP
//! ports on 127.0.0.1; QEMU's user network answers a ping of the gateway
//! itself and cannot ping the guest): on the first only `netd` runs, the
//! network responder (`init=netd SECONDS`); the second runs `netping`,
//! whose console is the test's.

use crate::boottest::BootTest;
use crate::build::Image;
use crate::qemu;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub const NAME: &str = "net_host";
pub const IDLE: &str = "net_idle";
const SIZES: &[usize] = &[0, 1, 1460, 65536, 1 << 20, 4 << 20];

/// File `n`'s bytes: not a repeating pattern a lost or doubled segment
/// could hide in.
fn content(n: usize) -> Vec<u8> {
    let mut x: u32 = 0x1234_5678 ^ n as u32;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

fn md5(data: &[u8]) -> Result<String, String> {
    let mut child = Command::new("md5sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("md5sum: {e}"))?;
    child.stdin.take().expect("piped").write_all(data).map_err(|e| format!("md5sum: {e}"))?;
    let out = child.wait_with_output().map_err(|e| format!("md5sum: {e}"))?;
    Ok(String::from_utf8_lossy(&out.stdout).split_whitespace().next().unwrap_or("").to_string())
}

/// What `/done` (busybox httpd's round) and `/done2` (Cheetah's) answer:
/// nothing yet, then "ok" or what went wrong.
type Verdict = Arc<Mutex<[Option<String>; 2]>>;

/// Serves `GET /fN` and `GET /done` on `listener`, one connection at a
/// time, for as long as the test process runs.
fn serve(listener: TcpListener, verdict: Verdict) {
    for stream in listener.incoming().flatten() {
        let _ = answer(stream, &verdict);
    }
}

fn answer(mut s: TcpStream, verdict: &Verdict) -> std::io::Result<()> {
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut req = Vec::new();
    let mut buf = [0u8; 1024];
    while !req.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = s.read(&mut buf)?;
        if n == 0 {
            break;
        }
        req.extend_from_slice(&buf[..n]);
    }
    let line = String::from_utf8_lossy(&req);
    let path = line.split_whitespace().nth(1).unwrap_or("");
    let body = match path.strip_prefix("/f").and_then(|n| n.parse::<usize>().ok()) {
        Some(n) if SIZES.contains(&n) => Some(content(n)),
        _ if path == "/done" => verdict.lock().unwrap()[0].clone().map(String::into_bytes),
        _ if path == "/done2" => verdict.lock().unwrap()[1].clone().map(String::into_bytes),
        _ => None,
    };
    match body {
        Some(b) => {
            write!(s, "HTTP/1.0 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", b.len())?;
            s.write_all(&b)?;
        }
        None => s.write_all(b"HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")?,
    }
    s.flush()
}

/// Fetches `/fN` from the guest with curl through `port`: the body, if
/// the answer was 200 from the server `cheetah` says (Cheetah, or not).
fn curl(port: u16, n: usize, cheetah: bool) -> Option<Vec<u8>> {
    let out = Command::new("curl")
        .args(["-s", "-f", "-i", "--max-time", "60", &format!("http://127.0.0.1:{port}/f{n}")])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let end = out.stdout.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&out.stdout[..end]).to_ascii_lowercase();
    (head.contains("server: cheetah") == cheetah).then(|| out.stdout[end + 4..].to_vec())
}

/// Waits for the guest's server (up to 10 minutes), then fetches and
/// checks every file; the verdict goes to `/done`, then the same with
/// Cheetah to `/done2`.
fn fetch_back(port: u16, verdict: Verdict) {
    for (round, cheetah) in [(0, false), (1, true)] {
        let mut tries = 0;
        while curl(port, 0, cheetah).is_none() {
            tries += 1;
            if tries > 600 {
                verdict.lock().unwrap()[round] = Some("the guest's server never answered".into());
                return;
            }
            std::thread::sleep(Duration::from_secs(1));
        }
        for &n in SIZES {
            let got = curl(port, n, cheetah);
            if got.as_deref() != Some(&content(n)[..]) {
                let what = got.map_or("nothing".to_string(), |g| format!("{} bytes, not the file", g.len()));
                verdict.lock().unwrap()[round] = Some(format!("curl of f{n} got {what}"));
                return;
            }
        }
        let server = if cheetah { "Cheetah" } else { "busybox httpd" };
        println!("net_host: curl on the host fetched {} files from the guest's {server} intact", SIZES.len());
        verdict.lock().unwrap()[round] = Some("ok".into());
    }
}

/// A port on 127.0.0.1 nobody listens on now.
pub fn free_port() -> Result<u16, String> {
    let l = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free port: {e}"))?;
    l.local_addr().map(|a| a.port()).map_err(|e| format!("{e}"))
}

pub fn plan(img: &Image, names: &[String]) -> Result<Vec<BootTest>, String> {
    let wanted = |name| names.is_empty() || names.iter().any(|n| n == name);
    let mut tests = Vec::new();
    if wanted(NAME) {
        tests.push(host(img)?);
    }
    if wanted(IDLE) {
        tests.push(idle(img)?);
    }
    Ok(tests)
}

/// Two different UDP ports on 127.0.0.1 nobody uses now (both held
/// while the second is chosen, so they cannot be the same one).
fn free_udp_ports() -> Result<(u16, u16), String> {
    let bind = || std::net::UdpSocket::bind("127.0.0.1:0").map_err(|e| format!("no free UDP port: {e}"));
    let port = |s: &std::net::UdpSocket| s.local_addr().map(|a| a.port()).map_err(|e| format!("{e}"));
    let (a, b) = (bind()?, bind()?);
    Ok((port(&a)?, port(&b)?))
}

/// `net_idle`: the pinging machine, the idle one its companion (whose
/// console goes to target/boottest/net_idle-companion.serial).
fn idle(img: &Image) -> Result<BootTest, String> {
    let (a, b) = free_udp_ports()?;
    let link = |local: u16, remote: u16| {
        format!(
            "dgram,id=net0,local.type=inet,local.host=127.0.0.1,local.port={local},\
             remote.type=inet,remote.host=127.0.0.1,remote.port={remote}"
        )
    };
    let idle_disk = crate::disk::scratch_path();
    crate::disk::create(&idle_disk)?;
    let mut idle_args = qemu::base_args(img, "netd");
    idle_args.extend(qemu::devices_on(&idle_disk, &link(a, b), ",mac=52:54:00:12:34:56"));
    let disk = crate::disk::scratch_path();
    crate::disk::create(&disk)?;
    let mut args = qemu::base_args(img, "netping");
    args.extend(qemu::devices_on(&disk, &link(b, a), ",mac=52:54:00:12:34:57"));
    Ok(BootTest {
        companion: Some(idle_args),
        ..BootTest::new(
            IDLE.into(),
            args,
            vec![
                "netping: the idle machine answered ARP".into(),
                "netping: 5 echo replies, data and checksums intact".into(),
                "netping: a request with a bad checksum went unanswered, the next was answered".into(),
            ],
            Duration::from_secs(300),
        )
    })
}

/// `net_host`.
fn host(img: &Image) -> Result<BootTest, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("net_host: {e}"))?;
    let port = listener.local_addr().map_err(|e| format!("{e}"))?.port();
    let forwarded = free_port()?;
    let verdict: Verdict = Arc::new(Mutex::new([None, None]));
    let v = verdict.clone();
    std::thread::spawn(move || serve(listener, v));
    std::thread::spawn(move || fetch_back(forwarded, verdict));
    let mut expect = Vec::new();
    for &n in SIZES {
        expect.push(format!("nethost: f{n} md5 {}", md5(&content(n))?));
    }
    expect.push("nethost: the host fetched every file intact".into());
    expect.push("nethost: the host fetched every file from cheetah intact".into());
    let disk = crate::disk::scratch_path();
    crate::disk::create(&disk)?;
    let mut args = qemu::base_args(img, &format!("lxrt /bin/sh /hosttests/nethost.sh {port}"));
    args.extend(qemu::device_args(&disk, forwarded));
    Ok(BootTest::new(NAME.into(), args, expect, Duration::from_secs(600)))
}
