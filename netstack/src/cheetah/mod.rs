//! Cheetah, the HTTP server of paper 000 §7.3, as a fast path of the
//! library stack: a listening socket handed to it (`Stack::cheetah_publish`)
//! no longer gets smoltcp connections; its segments come here, to a TCP
//! that knows it serves one cached response per connection:
//!
//! - *merged file cache and retransmission pool* (`doc.rs`): the response
//!   is sent, and resent, from the file cache; no socket send buffer
//!   exists, nothing is copied but into the outgoing packet itself;
//! - *precomputed checksums*: each segment-sized chunk's sum is stored with
//!   the file; a segment's checksum is its header's sum folded into it;
//! - *knowledge-based packet merging*: the request's ACK is not sent alone,
//!   it rides on the response's first segment, which also carries the
//!   header with the first data; the FIN rides on the last data segment
//!   (one segment in all for a response that fits).
//!
//! HTTP/1.0 style: one request per connection (`Connection: close`).

mod doc;
pub mod http;
pub mod serve;
mod wire;

use alloc::collections::VecDeque;
use alloc::rc::Rc;
use alloc::vec::Vec;
use core::hash::BuildHasher;
use core::net::SocketAddrV4;

use hashbrown::HashMap;

use crate::hash::Keyed;
use crate::link::Link;
pub use doc::{Doc, CHUNK};
use wire::{Header, Path, Seg, ACK, FIN, PSH, RST, SYN};

/// Connections at once; SYNs beyond are dropped (the peer retries).
pub const MAX_CONNS: usize = 256;
/// Published files at most, and bytes per file.
pub const MAX_DOCS: usize = 1024;
pub const MAX_DOC_BYTES: usize = 16 << 20;
/// First retransmission timeout; doubled per retry.
pub const RTO_MS: i64 = 200;
/// Retransmissions of one segment before the connection is reset.
pub const MAX_RETRIES: u32 = 8;
/// How long a connection may sit without a complete request, or after the
/// response without the peer's FIN.
pub const IDLE_MS: i64 = 10_000;
/// Bytes in flight at most (no window scaling is offered).
const MAX_FLIGHT: usize = 65_535;
/// The largest segment sent: whole chunks in the largest IPv4 packet (a
/// loopback peer's MSS allows it; an Ethernet peer's caps it at one).
pub const MAX_SEGMENT: usize = (65_535 - 40) / CHUNK * CHUNK;
/// The peer's segment size when its SYN names none (RFC 9293).
const DEFAULT_MSS: usize = 536;

/// What Cheetah did, for tests and the benchmark's check.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub connections: u64,
    pub requests: u64,
    pub not_found: u64,
    pub bad_requests: u64,
    /// Segments sent (all kinds), and those that carried data.
    pub segments: u64,
    pub data_segments: u64,
    /// Data segments whose payload checksum came from the file cache, and
    /// those summed when sent.
    pub cached_sums: u64,
    pub computed_sums: u64,
    /// ACKs sent without data (the request's ACK is merged into the response).
    pub bare_acks: u64,
    /// FINs that rode on a data segment.
    pub merged_fins: u64,
    pub retransmits: u64,
    pub resets_sent: u64,
    pub resets_received: u64,
    /// Segments refused as malformed (lengths, checksums).
    pub malformed: u64,
    pub syn_dropped: u64,
    /// Connections given up (retries or idle).
    pub timed_out: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// SYN-ACK sent.
    SynReceived,
    /// Reading the request, then sending the response and our FIN.
    Open,
}

#[derive(Debug)]
struct Conn {
    path: Path,
    state: State,
    iss: u32,
    rcv_nxt: u32,
    req: Vec<u8>,
    doc: Option<Rc<Doc>>,
    /// Bytes of the response acknowledged, the next to send, and the
    /// highest sequence offset ever sent (the FIN counting one).
    acked: usize,
    sent: usize,
    top: usize,
    fin_sent: bool,
    fin_acked: bool,
    peer_fin: bool,
    wnd: usize,
    mss: usize,
    deadline: i64,
    rto: i64,
    retries: u32,
    ack_owed: bool,
}

impl Conn {
    fn snd_nxt(&self) -> u32 {
        self.iss.wrapping_add(1 + self.sent as u32 + u32::from(self.fin_sent))
    }
    fn in_flight(&self) -> bool {
        self.state == State::SynReceived || self.sent > self.acked || (self.fin_sent && !self.fin_acked)
    }
    fn more(&self) -> bool {
        self.doc.as_ref().is_some_and(|d| self.sent < d.len()) || (self.doc.is_some() && !self.fin_sent)
    }
}

/// Where the server's packets go: the interface's output, given the
/// built frame (Ethernet) or packet (loopback).
pub trait Emit {
    fn emit(&mut self, eth: bool, frame: Vec<u8>);
}

/// The listening socket Cheetah serves, its port, and the server.
pub struct Cheetah {
    pub sock: usize,
    pub port: u16,
    pub server: Server,
}

/// The stack's two outputs, for the server's packets.
pub struct Outputs<'a, L> {
    pub link: &'a mut L,
    pub lo: &'a mut VecDeque<Vec<u8>>,
}

impl<L: Link> Emit for Outputs<'_, L> {
    fn emit(&mut self, eth: bool, frame: Vec<u8>) {
        if eth {
            self.link.send(&frame);
        } else {
            self.lo.push_back(frame);
        }
    }
}

pub struct Server {
    docs: HashMap<Vec<u8>, Rc<Doc>, Keyed>,
    not_found: Rc<Doc>,
    bad: Rc<Doc>,
    nothing: Rc<Doc>,
    conns: HashMap<(SocketAddrV4, SocketAddrV4), Conn, Keyed>,
    seed: u64,
    isn_count: u32,
    ip_id: u16,
    stats: Stats,
}

impl Server {
    pub fn new(seed: u64) -> Server {
        Server {
            docs: HashMap::with_hasher(Keyed(seed ^ 0xc4ee7a4)),
            not_found: Rc::new(Doc::new("404 Not Found", "text/plain", b"not found\n")),
            bad: Rc::new(Doc::new("400 Bad Request", "text/plain", b"bad request\n")),
            nothing: Rc::new(Doc::nothing()),
            conns: HashMap::with_hasher(Keyed(seed.rotate_left(41))),
            seed,
            isn_count: 0,
            ip_id: 0,
            stats: Stats::default(),
        }
    }

    pub fn stats(&self) -> Stats {
        self.stats
    }

    pub fn connections(&self) -> usize {
        self.conns.len()
    }

    /// Caches `body` as the answer to `GET path`, its chunks' checksums
    /// computed now. A path published again is replaced (connections
    /// sending the old one finish with it).
    pub fn publish(&mut self, path: &[u8], body: &[u8]) -> Result<(), crate::Errno> {
        let ok =
            path.first() == Some(&b'/') && path.len() <= 255 && path.iter().all(|&b| b > 0x20 && b != 0x7f);
        if !ok || path.contains(&b'?') {
            return Err(crate::Errno::EINVAL);
        }
        if body.len() > MAX_DOC_BYTES {
            return Err(crate::Errno::EMSGSIZE);
        }
        if self.docs.len() >= MAX_DOCS && !self.docs.contains_key(path) {
            return Err(crate::Errno::ENOBUFS);
        }
        let ty = if path.ends_with(b".html") || path.ends_with(b".htm") {
            "text/html"
        } else {
            "application/octet-stream"
        };
        self.docs.insert(path.into(), Rc::new(Doc::new("200 OK", ty, body)));
        Ok(())
    }

    /// The earliest time `timers` has work.
    pub fn poll_at(&self) -> Option<i64> {
        self.conns.values().map(|c| c.deadline).min()
    }

    /// A frame (`eth`) or loopback packet for the server's port.
    pub fn input(&mut self, frame: &[u8], eth: bool, now: i64, out: &mut impl Emit) {
        let Some(seg) = wire::parse(frame, eth) else {
            self.stats.malformed += 1;
            return;
        };
        let key = (seg.path.local, seg.path.remote);
        if !self.conns.contains_key(&key) {
            self.new_conn(&seg, now, out);
            return;
        }
        let mut c = self.conns.remove(&key).expect("looked up");
        c.path = seg.path;
        if self.segment(&mut c, &seg, now, out) {
            self.conns.insert(key, c);
        }
    }

    fn new_conn(&mut self, seg: &Seg, now: i64, out: &mut impl Emit) {
        if seg.flags & RST != 0 {
            return;
        }
        if seg.flags & (SYN | ACK) != SYN {
            // Nothing here: reset, as TCP answers a segment for no connection.
            let h = match seg.ack {
                Some(a) => Header { seq: a, ack: 0, flags: RST, wnd: 0, mss: None, ip_id: 0 },
                None => Header {
                    seq: 0,
                    ack: seg.seq.wrapping_add(seg.space()),
                    flags: RST | ACK,
                    wnd: 0,
                    mss: None,
                    ip_id: 0,
                },
            };
            self.stats.resets_sent += 1;
            self.send(&seg.path, h, &[], 0, out);
            return;
        }
        if self.conns.len() >= MAX_CONNS {
            self.stats.syn_dropped += 1;
            return;
        }
        self.isn_count = self.isn_count.wrapping_add(1);
        let isn = Keyed(self.seed).hash_one((seg.path.local, seg.path.remote, self.isn_count));
        let mut c = Conn {
            path: seg.path,
            state: State::SynReceived,
            iss: isn as u32,
            rcv_nxt: seg.seq.wrapping_add(1),
            req: Vec::new(),
            doc: None,
            acked: 0,
            sent: 0,
            top: 0,
            fin_sent: false,
            fin_acked: false,
            peer_fin: false,
            wnd: usize::from(seg.wnd),
            mss: seg.mss.map_or(DEFAULT_MSS, usize::from).clamp(64, MAX_SEGMENT),
            deadline: 0,
            rto: RTO_MS,
            retries: 0,
            ack_owed: false,
        };
        self.stats.connections += 1;
        self.syn_ack(&c, out);
        c.deadline = now + c.rto;
        self.conns.insert((seg.path.local, seg.path.remote), c);
    }

    fn syn_ack(&mut self, c: &Conn, out: &mut impl Emit) {
        let h = Header {
            seq: c.iss,
            ack: c.rcv_nxt,
            flags: SYN | ACK,
            wnd: http::MAX_REQUEST as u16,
            mss: Some(CHUNK as u16),
            ip_id: 0,
        };
        self.send(&c.path, h, &[], 0, out);
    }

    /// One segment of a live connection; false when the connection is over.
    fn segment(&mut self, c: &mut Conn, seg: &Seg, now: i64, out: &mut impl Emit) -> bool {
        if seg.flags & RST != 0 {
            // Only a reset in the window ends it (RFC 5961's blind reset).
            let off = seg.seq.wrapping_sub(c.rcv_nxt);
            if off < http::MAX_REQUEST as u32 {
                self.stats.resets_received += 1;
                return false;
            }
            return true;
        }
        if seg.flags & SYN != 0 {
            if c.state == State::SynReceived && seg.seq.wrapping_add(1) == c.rcv_nxt {
                self.syn_ack(c, out); // the SYN again: our SYN-ACK was lost
            } else {
                c.ack_owed = true; // a stray SYN: answer with an ACK
            }
            self.flush(c, now, out);
            return true;
        }
        if let Some(a) = seg.ack {
            self.acked(c, a, now);
        }
        c.wnd = usize::from(seg.wnd);
        if c.state == State::Open {
            self.take(c, seg);
        }
        if c.state == State::Open && c.doc.is_none() {
            c.doc = match http::parse(&c.req) {
                Some(http::Request::Get(p)) => {
                    self.stats.requests += 1;
                    Some(match self.docs.get(p) {
                        Some(d) => d.clone(),
                        None => {
                            self.stats.not_found += 1;
                            self.not_found.clone()
                        }
                    })
                }
                Some(http::Request::Bad) => Some(self.bad()),
                None if c.peer_fin && c.req.is_empty() => Some(self.nothing.clone()),
                // A request cut short by the peer's FIN or grown too long.
                None if c.peer_fin || c.req.len() >= http::MAX_REQUEST => Some(self.bad()),
                None => None,
            };
            if c.doc.is_some() {
                c.req = Vec::new();
            }
        }
        self.flush(c, now, out);
        !(c.fin_acked && c.peer_fin)
    }

    fn bad(&mut self) -> Rc<Doc> {
        self.stats.bad_requests += 1;
        self.bad.clone()
    }

    /// The peer acknowledged up to `a`.
    fn acked(&mut self, c: &mut Conn, a: u32, now: i64) {
        let off = a.wrapping_sub(c.iss) as usize; // 1 = the SYN
        let top = 1 + c.top;
        if off == 0 || off > top {
            return; // old, or for what we never sent
        }
        if c.state == State::SynReceived {
            c.state = State::Open;
        }
        let len = c.doc.as_ref().map_or(0, |d| d.len());
        let data = (off - 1).min(len);
        if data > c.acked || (off == len + 2 && !c.fin_acked) {
            c.acked = data;
            c.fin_acked = off == len + 2;
            c.sent = c.sent.max(data); // acknowledged past a go-back
            c.fin_sent |= c.fin_acked;
            c.retries = 0;
            c.rto = RTO_MS;
            c.deadline = now + c.rto;
        }
    }

    /// The request's bytes in order; anything else only asks for an ACK.
    fn take(&mut self, c: &mut Conn, seg: &Seg) {
        if seg.space() == 0 {
            return; // a bare ACK
        }
        let ahead = seg.seq.wrapping_sub(c.rcv_nxt);
        let skip = c.rcv_nxt.wrapping_sub(seg.seq) as usize;
        if (ahead != 0 && ahead < 1 << 31) || skip > seg.payload.len() {
            c.ack_owed = true; // out of order (ahead), or wholly old
            return;
        }
        let data = &seg.payload[skip..];
        let room = http::MAX_REQUEST.saturating_sub(c.req.len());
        let take = data.len().min(room);
        if c.doc.is_none() {
            c.req.extend_from_slice(&data[..take]);
        }
        // Bytes after the request (a pipelined one) are acknowledged and
        // dropped: one request per connection.
        c.rcv_nxt = c.rcv_nxt.wrapping_add(data.len() as u32);
        if seg.flags & FIN != 0 && !c.peer_fin {
            c.peer_fin = true;
            c.rcv_nxt = c.rcv_nxt.wrapping_add(1);
        }
        c.ack_owed = true;
    }

    /// Sends what the window allows: the response from the cache, the FIN
    /// on its last segment; a bare ACK only if nothing else carried it.
    fn flush(&mut self, c: &mut Conn, now: i64, out: &mut impl Emit) {
        if let Some(doc) = c.doc.clone() {
            let limit = c.wnd.min(MAX_FLIGHT);
            while c.more() {
                let room = limit.saturating_sub(c.sent.saturating_sub(c.acked));
                let piece = doc.piece(c.sent, c.mss.min(room).max(c.mss.min(CHUNK)));
                // Only whole pieces go: the window's edge never cuts a
                // chunk, so every chunk keeps its stored sum. A window
                // that stays too small is probed by the timer.
                if piece.data.len() > room {
                    break;
                }
                let last = c.sent + piece.data.len() == doc.len();
                let mut flags = ACK;
                if last {
                    flags |= FIN | PSH;
                }
                let h = Header {
                    seq: c.snd_nxt(),
                    ack: c.rcv_nxt,
                    flags,
                    wnd: self.window(c),
                    mss: None,
                    ip_id: 0,
                };
                if !piece.data.is_empty() {
                    self.stats.data_segments += 1;
                    if piece.cached {
                        self.stats.cached_sums += 1;
                    } else {
                        self.stats.computed_sums += 1;
                    }
                    if last {
                        self.stats.merged_fins += 1;
                    }
                }
                self.send(&c.path, h, piece.data, piece.sum, out);
                c.sent += piece.data.len();
                c.fin_sent |= last;
                c.top = c.top.max(c.sent + usize::from(c.fin_sent));
                c.ack_owed = false;
            }
        }
        if c.ack_owed {
            let h = Header {
                seq: c.snd_nxt(),
                ack: c.rcv_nxt,
                flags: ACK,
                wnd: self.window(c),
                mss: None,
                ip_id: 0,
            };
            self.stats.bare_acks += 1;
            self.send(&c.path, h, &[], 0, out);
            c.ack_owed = false;
        }
        c.deadline = now + if c.in_flight() || c.more() { c.rto } else { IDLE_MS };
    }

    /// Room left for the request (bytes after it are taken and dropped).
    fn window(&self, c: &Conn) -> u16 {
        (http::MAX_REQUEST - c.req.len()) as u16
    }

    fn send(&mut self, path: &Path, mut h: Header, payload: &[u8], sum: u32, out: &mut impl Emit) {
        self.ip_id = self.ip_id.wrapping_add(1);
        h.ip_id = self.ip_id;
        self.stats.segments += 1;
        out.emit(path.macs.is_some(), wire::build(path, &h, payload, sum));
    }

    /// Connections whose deadline passed: retransmit from the cache, or
    /// give up.
    pub fn timers(&mut self, now: i64, out: &mut impl Emit) {
        let due: Vec<_> = self.conns.iter().filter(|(_, c)| c.deadline <= now).map(|(k, _)| *k).collect();
        for key in due {
            let mut c = self.conns.remove(&key).expect("due connection");
            if !(c.in_flight() || c.more()) || c.retries >= MAX_RETRIES {
                // Idle too long, or the peer stopped answering.
                self.stats.timed_out += 1;
                if !c.fin_acked {
                    let h = Header { seq: c.snd_nxt(), ack: 0, flags: RST, wnd: 0, mss: None, ip_id: 0 };
                    self.stats.resets_sent += 1;
                    self.send(&c.path, h, &[], 0, out);
                }
                continue;
            }
            c.retries += 1;
            c.rto = (c.rto * 2).min(60_000);
            self.stats.retransmits += 1;
            if c.state == State::SynReceived {
                self.syn_ack(&c, out);
                c.deadline = now + c.rto;
            } else {
                // Go back to the first unacknowledged chunk: the peer
                // drops what it has; the chunk's sum is still the stored one.
                let step = c.mss.min(CHUNK);
                c.sent = c.acked - c.acked % step;
                c.fin_sent = c.fin_acked;
                // A zero window is probed with one segment regardless.
                c.wnd = c.wnd.max(c.mss);
                self.flush(&mut c, now, out);
            }
            self.conns.insert(key, c);
        }
    }
}
