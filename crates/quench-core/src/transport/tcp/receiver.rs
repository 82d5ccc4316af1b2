//! The receiving side of a TCP connection: answers the SYN, reassembles out-of-order data,
//! advertises its window, and ACKs per RFC 1122 / RFC 5681 section 4.2: at once for
//! out-of-order segments, for segments that fill a hole, and for the FIN; otherwise every
//! `delayed_ack.segments` full-sized segments or when the delayed-ACK timer expires; with
//! `delayed_ack.quick_ack`, every segment while Linux's quick-ack mode lasts (`quickack.rs`).
//! It runs the options the handshake agreed (`options.rs`): SACK blocks and timestamps only
//! when both ends support them, ECN when its own `tcp.receiver.ecn` and the SYN agree.
//! With SACK and `tcp.dsack`, a segment that brings bytes already received (below rcv_nxt or
//! held above it) is reported in the first SACK block of the next ACK (RFC 2883 section 4,
//! Linux's `tcp_dsack_set`), the block holding it second, the usual blocks after.
//! The application reads data as soon as it is in order, so the advertised window is constant.
//! Owns the receive state (what has arrived, the delayed-ACK count, the ECN echo). It acts only
//! through its `AgentCx`, never on the world or the sender.

use super::config::TcpConfig;
use super::ecn::ReceiverEcn;
use super::quickack::{QuickAck, ECN_QUICKACKS, MAX_QUICKACKS};
use super::{Connection, TcpTimer};
use crate::cc::EcnFeedback;
use crate::packet::{tcp_flags, ts_clock, NodeId, Packet, SackBlocks};
use crate::ranges::FrontVec;
use crate::transport::{AgentCx, DeliveryCounts, Endpoint, Host, Timer, TimerSlot};
use crate::units::Time;
use std::sync::Arc;

#[derive(Clone, Debug, Default)]
pub struct ReceiverStats {
    /// Bytes delivered, segments received and completion, as every transfer counts them.
    pub delivery: DeliveryCounts,
    /// Data bytes that arrived more than once.
    pub duplicate_bytes: u64,
    /// Data segments that arrived with new data below the highest sequence number received
    /// before them (overtaken: reordered on the way, or a retransmission filling a hole).
    pub reordered_segments: u64,
    /// Data segments every byte of which had arrived before: what RFC 2883 section 4 reports
    /// in a D-SACK block (a retransmission that was not needed, or a copy).
    pub duplicate_segments: u64,
    pub acks_sent: u64,
    pub first_syn: Option<Time>,
    pub last_delivery: Option<Time>,
}

pub struct TcpReceiver {
    conn: Connection,
    /// What the handshake agreed for this end, shared with every receiver that agreed the same.
    cfg: Arc<TcpConfig>,
    established: bool,
    rcv_nxt: u64,
    /// Out-of-order data held for reassembly: sorted, disjoint [start, end) ranges.
    holes_filled_later: FrontVec<(u64, u64)>,
    /// Full-sized segments received since the last ACK.
    unacked_segments: u32,
    delack: TimerSlot,
    /// Linux's quick-ack mode (`delayed_ack.quick_ack`).
    quick: QuickAck,
    /// Start of the latest out-of-order segment (leads the SACK blocks).
    last_out_of_order: Option<u64>,
    /// The duplicate range the next ACK reports first (`tcp.dsack`), once.
    dsack: Option<(u64, u64)>,
    /// Sequence number of the peer's FIN, once seen.
    fin_seq: Option<u64>,
    /// Application transfer size, when known, to time the delivery of the last byte.
    expected_bytes: Option<u64>,
    ecn: ReceiverEcn,
    /// `tcp.timestamps` (RFC 7323 section 4.3): the TSval to echo, and the ACK field of the
    /// last ACK sent (a segment at or below it may update TS.Recent).
    ts_recent: u32,
    last_ack_sent: u64,
    /// Each ACK carries how long it was held after the data it acknowledges last advanced the
    /// window (`Packet::set_ack_delay`), for a controller that reads it (Swift).
    report_ack_delay: bool,
    pub stats: ReceiverStats,
}

impl TcpReceiver {
    /// A receiver for a sender whose controller gives `feedback` and wants ECT on every packet
    /// with `ect_on_every_packet`'s codepoint, if it does. `cfg` is what the receiver runs:
    /// what the handshake agrees with its own ECN support (`options::receiving_end` of the
    /// flow's configuration), which receivers that agree the same may share
    /// (`FlowBuild::shared`).
    pub fn new(
        conn: Connection,
        cfg: Arc<TcpConfig>,
        expected_bytes: Option<u64>,
        feedback: EcnFeedback,
        ect_on_every_packet: Option<u8>,
    ) -> Self {
        TcpReceiver {
            conn,
            quick: QuickAck::new(&cfg),
            cfg,
            established: false,
            rcv_nxt: 0,
            holes_filled_later: FrontVec::default(),
            unacked_segments: 0,
            delack: TimerSlot::default(),
            last_out_of_order: None,
            dsack: None,
            fin_seq: None,
            expected_bytes,
            ecn: ReceiverEcn::new(feedback, ect_on_every_packet),
            ts_recent: 0,
            last_ack_sent: 0,
            report_ack_delay: false,
            stats: ReceiverStats::default(),
        }
    }

    /// Report the ACK delay on every ACK (`Capabilities::ack_delay`).
    pub fn with_ack_delay(mut self, report: bool) -> Self {
        self.report_ack_delay = report;
        self
    }

    fn window(&self) -> u64 {
        self.cfg.receive_window.0
    }

    fn send_ack(&mut self, cx: &mut AgentCx<impl Host>) {
        self.delack.cancel();
        self.unacked_segments = 0;
        self.quick.ack_sent();
        let flags = tcp_flags::ACK | self.ecn.ack_flags();
        let mut ack = self.conn.segment(1, self.rcv_nxt, 0, flags, self.window());
        ack.ecn = self.ecn.codepoint();
        self.stamp_timestamp(&mut ack);
        if self.report_ack_delay {
            self.stamp_ack_delay(&mut ack, cx.now);
        }
        self.last_ack_sent = self.rcv_nxt;
        if self.cfg.sack {
            // As many blocks as the option space left holds (three beside timestamps alone).
            ack.sack = self.sack_blocks(SackBlocks::fitting(self.conn.sack_room(&self.cfg)));
            ack.size += ack.sack.option_bytes() as u16;
            self.dsack = None; // Linux's `tcp_established_options`: reported on one ACK
        }
        cx.send(ack);
        self.stats.acks_sent += 1;
    }

    fn on_syn(&mut self, syn: &Packet, cx: &mut AgentCx<impl Host>) {
        if !self.established {
            self.established = true;
            self.rcv_nxt = 1;
            self.stats.first_syn = Some(cx.now);
        }
        let flags = tcp_flags::SYN | tcp_flags::ACK | self.ecn.on_syn(self.cfg.ecn, syn);
        let mut syn_ack = self.conn.segment(0, 1, 0, flags, self.window());
        syn_ack.ecn = self.ecn.codepoint();
        if self.cfg.timestamps && syn.ts_on {
            self.ts_recent = ts_clock(syn.sent_at);
            self.last_ack_sent = 1;
        }
        // The agreed options: what the SYN offered and this end supports.
        syn_ack.size += super::options::syn_options(&self.cfg).bytes() as u16;
        if self.cfg.timestamps {
            (syn_ack.ts_on, syn_ack.ts_ecr) = (true, self.ts_recent);
        }
        self.quick.syn_ack_sent(cx.now);
        cx.send(syn_ack);
    }

    /// RFC 7323 section 4.3: TS.Recent takes the TSval of a segment that starts at or below
    /// the last ACK sent and is not older; so a delayed ACK echoes the first segment it covers
    /// (the RTT includes the delay), a duplicate ACK for out-of-order data echoes the segment
    /// that last advanced the window, and the segment that fills a hole (a retransmission) is
    /// the one echoed.
    fn note_timestamp(&mut self, pkt: &Packet) {
        let tsval = ts_clock(pkt.sent_at);
        if self.cfg.timestamps
            && pkt.ts_on
            && pkt.seq <= self.last_ack_sent
            && tsval.wrapping_sub(self.ts_recent) as i32 >= 0
        {
            self.ts_recent = tsval;
        }
    }

    fn stamp_timestamp(&self, pkt: &mut Packet) {
        if self.cfg.timestamps {
            (pkt.ts_on, pkt.ts_ecr) = (true, self.ts_recent);
            pkt.size += self.cfg.option_bytes() as u16;
        }
    }

    /// The ACK delay: the data this ACK covers last advanced the window at `last_delivery`.
    /// Out of line, so that the ACK path of a flow that does not ask stays as it was.
    #[inline(never)]
    fn stamp_ack_delay(&self, ack: &mut Packet, now: Time) {
        if let Some(arrived) = self.stats.last_delivery {
            ack.set_ack_delay(now.saturating_sub(arrived));
        }
    }

    /// RFC 2018 section 4: the first block holds the most recently received segment; the
    /// others follow, highest first (the most recently reported in a loss episode). A D-SACK
    /// block goes before them all (RFC 2883 section 4) and takes one of the slots, as in
    /// Linux's `tcp_established_options`, which sends as many as the option space left holds
    /// (`most`).
    fn sack_blocks(&self, most: usize) -> SackBlocks {
        let mut out = SackBlocks::default();
        let offset = |seq: u64| (seq as i64 - self.rcv_nxt as i64) as i32;
        let held = &self.holes_filled_later;
        let latest = self.last_out_of_order.and_then(|seq| crate::ranges::containing(held, seq));
        let order = latest.into_iter().chain((0..held.len()).rev().filter(|&i| Some(i) != latest));
        let dsack = self.dsack.map(|(s, e)| (offset(s), offset(e)));
        let blocks = dsack.into_iter().chain(order.map(|i| (offset(held[i].0), offset(held[i].1))));
        for (slot, block) in blocks.take(most).enumerate() {
            out.offsets[slot] = block;
        }
        out
    }

    /// With `tcp.dsack` (and SACK agreed), the bytes of the data [start, end) that had arrived
    /// before become the next ACK's D-SACK block, replacing any not yet sent: the part below
    /// rcv_nxt if any (Linux's `tcp_data_queue`, `tcp_dsack_set(seq, rcv_nxt)` for a partial
    /// one), else the overlap with the first held range it meets (`tcp_data_queue_ofo`). The
    /// held range keeps its place as the most recent (`last_out_of_order`), so it is the
    /// second block, as RFC 2883 section 4 asks.
    fn note_duplicate(&mut self, start: u64, end: u64) {
        if !(self.cfg.dsack && self.cfg.sack) {
            return;
        }
        let held = &self.holes_filled_later;
        let first = held.partition_point(|&(_, e)| e <= start);
        let block = if start < self.rcv_nxt {
            Some((start, end.min(self.rcv_nxt)))
        } else {
            held.get(first).filter(|&&(s, _)| s < end).map(|&(s, e)| (start.max(s), end.min(e)))
        };
        if block.is_some() {
            self.dsack = block;
        }
    }

    /// Insert [start, end) into the reassembly list, merging neighbours.
    fn hold_out_of_order(&mut self, start: u64, end: u64) {
        crate::ranges::insert(&mut self.holes_filled_later, start, end);
    }

    /// Advance rcv_nxt over held data now contiguous; true if any was pulled in.
    fn pull_in_order(&mut self) -> bool {
        let held = self.holes_filled_later.len();
        self.rcv_nxt = crate::ranges::advance(&mut self.holes_filled_later, self.rcv_nxt);
        self.holes_filled_later.len() != held
    }

    /// Account for the in-order advance from `before` to rcv_nxt (the FIN is not data).
    fn deliver(&mut self, before: u64, cx: &mut AgentCx<impl Host>) {
        let fin_inside = self.fin_seq.is_some_and(|f| (before..self.rcv_nxt).contains(&f));
        let new_bytes = self.rcv_nxt - before - fin_inside as u64;
        if new_bytes > 0 {
            self.stats.last_delivery = Some(cx.now);
        }
        self.stats.delivery.delivered(new_bytes, self.expected_bytes, cx.now);
    }

    /// Count a data segment holding sequence space [start, end) as reordered or duplicate,
    /// against what arrived before it (the in-order point and the held ranges, which are
    /// merged when they touch, so one range holds every byte of a span that has no gap).
    /// Statistics only: nothing the receiver does depends on them.
    fn count_arrival_order(&mut self, start: u64, end: u64) {
        let held = &self.holes_filled_later;
        let highest = held.last().map_or(self.rcv_nxt, |&(_, e)| e);
        let arrived =
            |lo: u64, hi: u64| lo >= hi || crate::ranges::containing(held, lo).is_some_and(|i| held[i].1 >= hi);
        let from = start.max(self.rcv_nxt);
        if arrived(from, end) {
            self.stats.duplicate_segments += 1;
        } else if !arrived(from, end.min(highest)) {
            self.stats.reordered_segments += 1;
        }
    }

    fn on_data(&mut self, pkt: &Packet, cx: &mut AgentCx<impl Host>) {
        self.stats.delivery.packets_received += 1;
        self.note_timestamp(pkt);
        if self.ecn.ce_state_changes(pkt) && self.unacked_segments > 0 {
            self.send_ack(cx); // RFC 8257 3.2: what came before, with the old CE state
        }
        if self.ecn.on_data(pkt) {
            self.quick.enter(ECN_QUICKACKS);
        }
        let fin = pkt.has_flag(tcp_flags::FIN);
        let (start, end) = (pkt.seq, pkt.seq + pkt.payload as u64 + fin as u64);
        if fin {
            self.fin_seq = Some(end - 1);
        }
        if pkt.payload > 0 {
            self.count_arrival_order(start, end);
            self.note_duplicate(start, start + pkt.payload as u64);
        }
        if end <= self.rcv_nxt {
            self.stats.duplicate_bytes += pkt.payload as u64;
            self.quick.enter(MAX_QUICKACKS); // Linux's `tcp_data_queue`: "A retransmit"
            return self.send_ack(cx); // a duplicate: tell the sender where we are
        }
        if start > self.rcv_nxt {
            if end <= self.rcv_nxt + self.window() {
                self.hold_out_of_order(start, end);
                self.last_out_of_order = Some(start);
            }
            return self.send_ack(cx); // out of order: duplicate ACK at once
        }
        let before = self.rcv_nxt;
        self.rcv_nxt = end;
        let filled_hole = self.pull_in_order();
        self.deliver(before, cx);
        self.quick.on_in_order_data(cx.now);
        let full_sized = pkt.payload as u32 >= self.conn.segment_payload(&self.cfg);
        self.unacked_segments += full_sized as u32;
        let delayed = &self.cfg.delayed_ack;
        let now = filled_hole || fin || !delayed.enabled || self.quick.active();
        if now || self.unacked_segments >= delayed.segments {
            self.send_ack(cx);
        } else if !self.delack.is_armed() {
            let at = cx.now + delayed.timeout;
            self.delack.arm(TcpTimer::DelayedAck.kind(), at, cx);
        }
    }
}

impl Endpoint for TcpReceiver {
    fn node(&self) -> NodeId {
        self.conn.local
    }
    fn is_quiescent(&self) -> bool {
        !self.delack.is_armed()
    }

    fn on_start(&mut self, _cx: &mut AgentCx<impl Host>) {}

    fn on_packet(&mut self, pkt: Packet, cx: &mut AgentCx<impl Host>) {
        if pkt.has_flag(tcp_flags::SYN) {
            self.on_syn(&pkt, cx);
        } else if self.established && (pkt.payload > 0 || pkt.has_flag(tcp_flags::FIN)) {
            self.on_data(&pkt, cx);
        }
    }

    fn on_timer(&mut self, timer: Timer, cx: &mut AgentCx<impl Host>) {
        if TcpTimer::of(timer) == Some(TcpTimer::DelayedAck) && self.delack.on_expiry(timer, cx) {
            self.send_ack(cx);
        }
    }
}

#[cfg(test)]
mod tests {
    //! The reordered and duplicate counts and the SACK and D-SACK blocks of the ACKs on
    //! hand-written arrival sequences, driven through a scripted host.
    use super::super::config::DelayedAckConfig;
    use super::*;
    use crate::packet::AgentId;
    use crate::trace::{RecordConfig, Recorder};
    use crate::transport::ScriptedHost;

    const MSS: u64 = 1000;

    /// A receiver configured as `cfg` after the SYN (its in-order point at 1) fed the data
    /// segments [start, start + len), each with the FIN where asked; the receiver and the
    /// packets it sent (the SYN-ACK first).
    fn fed(cfg: TcpConfig, segments: &[(u64, u64, bool)]) -> (TcpReceiver, Vec<Packet>) {
        let conn = Connection::for_tests(1, 0);
        let cfg = Arc::new(super::super::options::receiving_end(&cfg));
        let mut rx = TcpReceiver::new(conn, cfg, None, EcnFeedback::default(), None);
        let mut host = ScriptedHost::new(Recorder::new(RecordConfig::default(), vec![], 0));
        let mut feed = |rx: &mut TcpReceiver, seq: u64, len: u64, flags: u8| {
            let mut p: Packet = crate::qdisc::harness::packet(0, 0, (len + 40) as u16);
            (p.seq, p.payload, p.flags) = (seq, len as u16, flags);
            let mut cx = AgentCx::new(Time::ZERO, AgentId(1), NodeId(1), &mut host);
            rx.on_packet(p, &mut cx);
        };
        feed(&mut rx, 0, 0, tcp_flags::SYN);
        for &(start, len, fin) in segments {
            feed(&mut rx, start, len, tcp_flags::ACK | if fin { tcp_flags::FIN } else { 0 });
        }
        (rx, host.sent)
    }

    /// The receiver's (reordered, duplicate) counts after `segments`.
    fn counts(segments: &[(u64, u64, bool)]) -> (u64, u64) {
        let (rx, _) = fed(TcpConfig { mss: MSS as u32, ..Default::default() }, segments);
        (rx.stats.reordered_segments, rx.stats.duplicate_segments)
    }

    /// Segment k is [1 + k·MSS, 1 + (k+1)·MSS), every segment ACKed at once. By hand (RFC 2018
    /// section 4, RFC 2883 sections 4.1.1 and 4.1.3): 0 in order (ACK 1001, no block); 2 and 3
    /// above a hole (ACK 1001, [2001, 3001) then [2001, 4001)); 0 again, below rcv_nxt: the
    /// D-SACK [1, 1001) first, then [2001, 4001); 2 again, held above rcv_nxt: the D-SACK
    /// [2001, 3001) first, the block holding it, [2001, 4001), second; 5: [5001, 6001) first,
    /// [2001, 4001) second, the D-SACK reported once; 1 fills the hole: ACK 4001 with
    /// [5001, 6001). Each block adds 8 bytes to the ACK, the option's NOP, NOP, kind and
    /// length 4 more. Without `tcp.dsack` the same ACKs carry no D-SACK block.
    #[test]
    fn duplicates_below_and_above_rcv_nxt_are_reported_first() {
        let seg = |k: u64| 1 + k * MSS;
        let arrivals = [0, 2, 3, 0, 2, 5, 1].map(|k| (seg(k), MSS, false));
        let no_delay = DelayedAckConfig { enabled: false, ..Default::default() };
        let cfg = TcpConfig { mss: MSS as u32, sack: true, dsack: true, delayed_ack: no_delay, ..Default::default() };
        let blocks = |acks: &[Packet]| -> Vec<(u64, Vec<(u64, u64)>)> {
            acks.iter().map(|a| (a.ack, a.sack.ranges(a.ack).collect())).collect()
        };
        let (_, sent) = fed(cfg.clone(), &arrivals);
        let want = vec![
            (1001, vec![]),
            (1001, vec![(2001, 3001)]),
            (1001, vec![(2001, 4001)]),
            (1001, vec![(1, 1001), (2001, 4001)]),
            (1001, vec![(2001, 3001), (2001, 4001)]),
            (1001, vec![(5001, 6001), (2001, 4001)]),
            (4001, vec![(5001, 6001)]),
        ];
        assert_eq!(blocks(&sent[1..]), want);
        let base = sent[1].size;
        assert_eq!(sent[4].size, base + 4 + 2 * 8, "the D-SACK block counts in the ACK's size");
        assert_eq!(sent[4].sack.offsets[0], (-1000, 0), "below the ACK: negative offsets");
        let (_, plain) = fed(TcpConfig { dsack: false, ..cfg }, &arrivals);
        assert_eq!(blocks(&plain[4..6]), vec![(1001, vec![(2001, 4001)]), (1001, vec![(2001, 4001)])]);
    }

    #[test]
    fn in_order_data_is_neither_reordered_nor_duplicate() {
        assert_eq!(counts(&[(1, MSS, false), (1 + MSS, MSS, false), (1 + 2 * MSS, MSS, true)]), (0, 0));
    }

    /// By hand (segment k is [1 + k·MSS, 1 + (k+1)·MSS)): 0 in order; 2 above a hole (the
    /// highest so far is the end of 0: not overtaken); 2 again (held: a duplicate); 3
    /// (extends the highest); 1 fills the hole below the end of 3 (reordered); 0 again
    /// (duplicate); [3.5, 4.5) carries new bytes only above the highest (neither); 6 above a
    /// new hole; [4, 5) has old bytes [4, 4.5) and new ones [4.5, 5) below the end of 6
    /// (reordered); a bare FIN is no data segment. Two of each.
    #[test]
    fn overtaken_and_repeated_segments_are_counted_by_hand() {
        let seg = |k: u64| 1 + k * MSS;
        let arrivals = [
            (seg(0), MSS, false),
            (seg(2), MSS, false),
            (seg(2), MSS, false),
            (seg(3), MSS, false),
            (seg(1), MSS, false),
            (seg(0), MSS, false),
            (seg(3) + MSS / 2, MSS, false),
            (seg(6), MSS, false),
            (seg(4), MSS, false),
            (seg(7), 0, true),
        ];
        assert_eq!(counts(&arrivals), (2, 2));
    }
}
