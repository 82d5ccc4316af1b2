//! IP fragmentation and reassembly (RFC 791; Kent & Mogul, "Fragmentation Considered Harmful",
//! SIGCOMM '87; docs/mechanisms.md#ip-fragmentation).
//!
//! A node forwarding a datagram larger than the next link's MTU splits its IP payload (the
//! transport header and data) into fragments, each with its own 20-byte IP header, the
//! original identification, the byte offset of its piece and the more-fragments flag. Two
//! offset rules, chosen per link:
//! - `rfc791`: every fragment but the last carries a multiple of 8 bytes (offsets are counted
//!   in 8-byte units on the wire): `floor((mtu − 20)/8)·8` bytes each.
//! - `unaligned`: every fragment but the last carries `mtu − 20` bytes — the arithmetic of
//!   Van Jacobson's 18 Jan 1988 email (250-byte datagrams: 210 user bytes after the TCP header
//!   in the first fragment, 230 in each further one), which real IP could not send.
//!
//! Don't-fragment flows whose path would fragment are rejected when the scenario is built.
//! Fragments are queued, delayed and dropped independently; the destination reassembles them
//! into the original datagram. A datagram any of whose fragments is lost never completes: its
//! pieces are discarded when its reassembly timer (RFC 791 suggests 15 s) expires, and
//! fragments that would exceed the host's reassembly buffer are discarded on arrival.
//! Owns the fragmentation rule and each host's reassembly buffers and counts. It splits and joins
//! the packets it is handed and schedules nothing: the world forwards the fragments and arms the
//! reassembly timer a held datagram asks for.

use crate::packet::{Fragment, NodeId, Packet, IP_HEADER};
use crate::ranges::FrontVec;
use crate::units::{Bytes, Dur, Time};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// How a link's node cuts datagrams that exceed the link's MTU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FragmentRule {
    #[default]
    Rfc791,
    Unaligned,
}

/// RFC 791: fragment offsets count 8-byte blocks.
const OFFSET_UNIT: u16 = 8;
/// RFC 791 section 3.2 suggests an initial reassembly timer of 15 s.
const DEFAULT_REASSEMBLY_TIMEOUT: Dur = Dur::from_secs(15);
/// A host's reassembly buffer: 4.3BSD bounded it by mbufs; 64 KB holds one maximal datagram.
const DEFAULT_REASSEMBLY_BUFFER: Bytes = Bytes(65_535);

/// Host IP parameters, the same for every host of a scenario.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IpConfig {
    pub reassembly_timeout: Dur,
    /// Bytes of fragments a host holds while waiting for the rest of their datagrams.
    pub reassembly_buffer: Bytes,
}

impl Default for IpConfig {
    fn default() -> Self {
        IpConfig { reassembly_timeout: DEFAULT_REASSEMBLY_TIMEOUT, reassembly_buffer: DEFAULT_REASSEMBLY_BUFFER }
    }
}

/// Bytes of IP payload (transport header + data) each non-final fragment carries.
pub fn piece_size(mtu: u16, rule: FragmentRule) -> u16 {
    let room = mtu - IP_HEADER as u16;
    match rule {
        FragmentRule::Rfc791 => room / OFFSET_UNIT * OFFSET_UNIT,
        FragmentRule::Unaligned => room,
    }
}

/// Cut `pkt` (which exceeds `mtu`) into fragments, appended to `out` in order.
pub fn fragment(pkt: &Packet, mtu: u16, rule: FragmentRule, out: &mut Vec<Packet>) {
    let piece = piece_size(mtu, rule);
    let payload = pkt.size - IP_HEADER as u16;
    let base = pkt.frag.offset;
    let mut done = 0;
    while done < payload {
        let len = piece.min(payload - done);
        let last = done + len == payload;
        let mut f = *pkt;
        f.size = IP_HEADER as u16 + len;
        f.frag.offset = base + done;
        // A piece of a fragment that was itself not the last keeps more-fragments set.
        f.frag.more = !last || pkt.frag.more;
        out.push(f);
        done += len;
    }
}

/// One datagram being reassembled.
#[derive(Clone, Debug)]
struct Partial {
    /// Received byte ranges of the IP payload, sorted and disjoint.
    ranges: FrontVec<(u16, u16)>,
    /// IP payload length, known once the last fragment has arrived.
    total: Option<u16>,
    held_bytes: u64,
    started: Time,
    template: Packet,
}

impl Partial {
    fn complete(&self) -> bool {
        self.total.is_some_and(|t| *self.ranges == [(0, t)])
    }
}

/// Counters of a host's IP layer.
#[derive(Clone, Debug, Default)]
pub struct ReassemblyStats {
    pub fragments_received: u64,
    pub datagrams_reassembled: u64,
    pub timeouts: u64,
    /// Fragments discarded because the reassembly buffer was full.
    pub overflows: u64,
    /// Fragment bytes discarded by timeouts and overflows.
    pub discarded_bytes: u64,
}

/// What happened to an arriving fragment.
pub enum Reassembled {
    /// The datagram is complete: here it is, as originally sent.
    Datagram(Packet),
    /// Held; the first fragment of a datagram also asks for a timer at this time.
    Held {
        timer: Option<Time>,
    },
    Discarded,
}

/// The reassembly state of one host.
#[derive(Default)]
pub struct Reassembler {
    pending: HashMap<(NodeId, u32), Partial>,
    held_bytes: u64,
    pub stats: ReassemblyStats,
}

impl Reassembler {
    pub fn held_bytes(&self) -> u64 {
        self.held_bytes
    }

    pub fn on_fragment(&mut self, now: Time, frag: &Packet, cfg: &IpConfig) -> Reassembled {
        self.stats.fragments_received += 1;
        let len = frag.size as u64;
        if self.held_bytes + len > cfg.reassembly_buffer.0 {
            self.stats.overflows += 1;
            self.stats.discarded_bytes += len;
            return Reassembled::Discarded;
        }
        let key = (frag.src, frag.uid);
        let mut timer = None;
        let partial = self.pending.entry(key).or_insert_with(|| {
            timer = Some(now + cfg.reassembly_timeout);
            Partial { ranges: FrontVec::default(), total: None, held_bytes: 0, started: now, template: *frag }
        });
        let start = frag.frag.offset;
        let end = start + (frag.size - IP_HEADER as u16);
        crate::ranges::insert(&mut partial.ranges, start, end);
        partial.held_bytes += len;
        self.held_bytes += len;
        if !frag.frag.more {
            partial.total = Some(end);
        }
        if !partial.complete() {
            return Reassembled::Held { timer };
        }
        let done = self.pending.remove(&key).expect("just looked up");
        self.held_bytes -= done.held_bytes;
        self.stats.datagrams_reassembled += 1;
        let mut whole = done.template;
        whole.size = IP_HEADER as u16 + done.total.expect("complete datagrams know their length");
        whole.frag = Fragment::default();
        Reassembled::Datagram(whole)
    }

    /// The reassembly timer of (src, uid), started at `started`, expired: discard what is
    /// held. A timer of a datagram that completed (or a later one with the same key) is stale.
    pub fn on_timeout(&mut self, src: NodeId, uid: u32, started: Time) {
        if self.pending.get(&(src, uid)).is_some_and(|p| p.started == started) {
            let gone = self.pending.remove(&(src, uid)).expect("just looked up");
            self.held_bytes -= gone.held_bytes;
            self.stats.timeouts += 1;
            self.stats.discarded_bytes += gone.held_bytes;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Proto, TCP_HEADER};
    use crate::qdisc::harness::packet;

    /// A TCP segment of `mss` data bytes: 40 bytes of headers + mss.
    fn segment(mss: u16) -> Packet {
        let mut p = packet(9, 1, 40 + mss);
        p.proto = Proto::Tcp;
        p.payload = mss;
        p
    }

    /// User (TCP data) bytes in each fragment: the first also carries the TCP header.
    fn user_bytes(frags: &[Packet]) -> Vec<u16> {
        frags
            .iter()
            .map(|f| f.size - IP_HEADER as u16 - if f.frag.offset == 0 { TCP_HEADER as u16 } else { 0 })
            .collect()
    }

    fn cut(mss: u16, rule: FragmentRule) -> Vec<Packet> {
        let mut out = Vec::new();
        fragment(&segment(mss), 250, rule, &mut out);
        out
    }

    #[test]
    fn jacobsons_email_arithmetic_for_250_byte_datagrams() {
        // "a 512B mss gives a frag with 20B IP, 20B TCP and 210B user, a frag with 20B IP and
        // 230B user, and a frag with 20B IP and 72B user" ... "The 246B mss gives two frags,
        // one 20/20/210 and one 20/0/36".
        assert_eq!(user_bytes(&cut(512, FragmentRule::Unaligned)), vec![210, 230, 72]);
        assert_eq!(user_bytes(&cut(246, FragmentRule::Unaligned)), vec![210, 36]);
        // mss = 210 + 230·n fills every fragment.
        assert_eq!(user_bytes(&cut(440, FragmentRule::Unaligned)), vec![210, 230]);
    }

    #[test]
    fn rfc791_offsets_are_multiples_of_eight() {
        // 230 bytes of room round down to 224: 204/224/84 user bytes for mss 512.
        let f = cut(512, FragmentRule::Rfc791);
        assert_eq!(user_bytes(&f), vec![204, 224, 84]);
        assert_eq!(f.iter().map(|p| p.frag.offset).collect::<Vec<_>>(), vec![0, 224, 448]);
        assert!(f.iter().all(|p| p.frag.offset % 8 == 0));
        assert_eq!(f.iter().map(|p| p.frag.more).collect::<Vec<_>>(), vec![true, true, false]);
        assert_eq!(user_bytes(&cut(246, FragmentRule::Rfc791)), vec![204, 42]);
        assert!(f.iter().all(|p| p.uid == 9 && p.size <= 250));
    }

    #[test]
    fn refragmenting_a_fragment_keeps_offsets_and_more_flag() {
        let first = cut(512, FragmentRule::Rfc791)[0]; // offset 0, 224 bytes, more
        let mut out = Vec::new();
        fragment(&first, 100, FragmentRule::Rfc791, &mut out);
        assert_eq!(
            out.iter().map(|p| (p.frag.offset, p.size)).collect::<Vec<_>>(),
            vec![(0, 100), (80, 100), (160, 84)]
        );
        assert!(out.iter().all(|p| p.frag.more));
    }

    #[test]
    fn reassembles_in_any_order() {
        let cfg = IpConfig::default();
        let mut r = Reassembler::default();
        let f = cut(512, FragmentRule::Rfc791);
        assert!(matches!(r.on_fragment(Time(1), &f[2], &cfg), Reassembled::Held { timer: Some(_) }));
        assert!(matches!(r.on_fragment(Time(2), &f[0], &cfg), Reassembled::Held { timer: None }));
        match r.on_fragment(Time(3), &f[1], &cfg) {
            Reassembled::Datagram(p) => assert_eq!(p, segment(512)),
            _ => panic!("should be complete"),
        }
        assert_eq!(r.held_bytes(), 0);
    }

    #[test]
    fn one_lost_fragment_discards_the_datagram_and_frees_its_buffer() {
        let cfg = IpConfig::default();
        let mut r = Reassembler::default();
        let f = cut(512, FragmentRule::Unaligned);
        let timer = match r.on_fragment(Time(5), &f[0], &cfg) {
            Reassembled::Held { timer: Some(t) } => t,
            _ => panic!("the first fragment starts the timer"),
        };
        assert_eq!(timer, Time(5) + cfg.reassembly_timeout);
        assert!(matches!(r.on_fragment(Time(6), &f[2], &cfg), Reassembled::Held { timer: None }));
        assert_eq!(r.held_bytes(), 250 + 92);
        r.on_timeout(f[0].src, f[0].uid, Time(5));
        assert_eq!((r.held_bytes(), r.stats.timeouts, r.stats.discarded_bytes), (0, 1, 342));
        // The late middle fragment starts a fresh datagram that can never complete.
        assert!(matches!(r.on_fragment(Time(7), &f[1], &cfg), Reassembled::Held { timer: Some(_) }));
        assert_eq!(r.stats.datagrams_reassembled, 0);
    }

    #[test]
    fn a_full_buffer_discards_arrivals() {
        let cfg = IpConfig { reassembly_buffer: Bytes(300), ..Default::default() };
        let mut r = Reassembler::default();
        let f = cut(512, FragmentRule::Unaligned);
        assert!(matches!(r.on_fragment(Time(0), &f[0], &cfg), Reassembled::Held { .. }));
        assert!(matches!(r.on_fragment(Time(0), &f[1], &cfg), Reassembled::Discarded));
        assert_eq!(r.stats.overflows, 1);
    }
}
