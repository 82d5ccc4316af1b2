//! RACK loss detection (RFC 8985 section 6; docs/mechanisms.md#rack-tlp), `tcp.loss_detection =
//! "rack"` or `"rack_no_tlp"` on a SACK sender: a segment is lost when a segment sent after it
//! has been delivered and a reordering window has passed since, judged by transmission times
//! instead of RFC 6675's count of SACKed bytes above it. A lost retransmission is found the same
//! way (its own send time is compared), where RFC 6675 can only wait for the RTO.
//!
//! State (section 6.1): per segment its latest transmission time, whether it was retransmitted
//! and whether it is marked lost and not yet resent; `RACK.xmit_ts`, `RACK.end_seq` and
//! `RACK.rtt` of the most recently sent segment delivered; `RACK.fack` (the highest end
//! delivered), `RACK.min_RTT`, `RACK.reordering_seen`.
//!
//! Per ACK (section 6.2): (1-2) each segment it newly delivers updates min_RTT and, if sent
//! later than the RACK segment, becomes it; a retransmitted segment delivered sooner than
//! min_RTT after its retransmission is taken as the original's delivery and skipped (section
//! 6.2 step 2). The step's other test, an ACK whose TSecr is older than the retransmission,
//! is not applied, as in Linux's `tcp_rack_advance`: by RFC 7323's echo rule the SACK of a
//! segment above a hole echoes the last in-order segment, so the test would discard every SACK
//! of a retransmission above a hole, a tail loss probe's included (`tests/rack.rs` runs that
//! case with timestamps). (3) A never-retransmitted segment delivered below
//! `fack` is reordering. (4) The reordering window is `min(reo_wnd_mult · min_RTT / 4, SRTT)`,
//! or 0 when no reordering has been seen and the sender is in recovery or DupThresh segments
//! are SACKed.
//! (5) Each undelivered segment sent before the RACK segment is lost once `xmit_ts + RACK.rtt +
//! reo_wnd <= now`; the earliest one not yet due arms the reorder timer at that time.
//!
//! The multiplier adapts to D-SACKs (step 4's `RACK_update_reo_wnd`, as Linux's
//! `tcp_rack_update_reo_wnd`; the receiver sends them with `tcp.dsack`): the first D-SACK of a
//! round trip (`dsack_round`: until SND.UNA passes the SND.NXT of that D-SACK) adds one
//! (Linux's `reo_wnd_steps`, at most 255) and sets `reo_wnd_persist` to 16; each exit from fast
//! or RTO recovery takes one from it (Linux's `tcp_try_undo_recovery`: quench has no undo), and
//! at 0 the multiplier falls back to 1. As Linux's `tcp_dsack_seen`, a D-SACK counts only once
//! reordering has been seen, when it is not the duplicate of a tail loss probe, and while the
//! duplicates reported are no more than the segments retransmitted. Detection runs on every
//! ACK, and loss marks alone start recovery (no duplicate-ACK count), as in Linux's
//! `tcp_time_to_recover` with RACK.
//!
//! Segments start `mss` apart from the first data byte, as in `rate.rs`, so a segment's state
//! is found by division in a ring that stops growing once it holds the window. The loss walk
//! visits only the scoreboard's holes and stops at the first never-retransmitted segment sent
//! after the RACK segment (every segment above it was first sent later still), as Linux walks
//! its time-sorted queue.
//! Part of `TcpSender`: owns RACK's per-segment send times and loss marks (`Rack`, in
//! `LossRecovery`); it reads the scoreboard's holes and arms the reordering timer. It reaches the
//! host only through its `AgentCx`, never the world or the receiver.

use super::super::sack::Scoreboard;
use super::super::TcpTimer;
use super::{CaState, TcpSender};
use crate::packet::Packet;
use crate::trace::TcpEvent;
use crate::transport::{AgentCx, Host};
use crate::units::{Dur, Time};
use std::collections::VecDeque;

/// Divisor of min_RTT for the default reordering window (RFC 8985 section 6.2 step 4: a
/// quarter of the minimum RTT).
const REO_WND_MIN_RTT_DIVISOR: u64 = 4;
/// Recoveries a widened reordering window outlasts without a D-SACK (RFC 8985 section 6.2
/// step 4, `RACK.reo_wnd_persist = 16`; Linux's `TCP_RACK_RECOVERY_THRESH`).
const REO_WND_PERSIST: u32 = 16;
/// The largest multiplier (Linux's `reo_wnd_steps` is a u8: `min_t(u32, 0xFF, ...)`).
const REO_WND_MULT_MAX: u32 = 0xFF;

#[derive(Clone, Copy, Debug)]
struct Seg {
    len: u32,
    /// Latest transmission.
    xmit: Time,
    retransmitted: bool,
    /// Marked lost and not resent since (RFC 8985 sets xmit_ts to infinity instead).
    lost: bool,
}

#[derive(Clone, Debug)]
pub(crate) struct Rack {
    mss: u64,
    /// Sequence number of `segs[0]` (the oldest unacknowledged segment).
    pub(super) base: u64,
    segs: VecDeque<Seg>,
    /// RACK.xmit_ts, RACK.end_seq (0: no segment delivered yet), RACK.rtt.
    xmit_ts: Time,
    end_seq: u64,
    rtt: Dur,
    /// RACK.fack: the highest end of a delivered segment.
    fack: u64,
    min_rtt: Option<Dur>,
    reordering_seen: bool,
    /// Bytes marked lost and not yet resent: they are not in the pipe.
    lost_bytes: u64,
    /// Bytes marked lost since the last `take_newly_lost` (a rate sample's losses).
    newly_lost: u64,
    /// No lost segment sits below this index (the retransmission search starts here).
    lost_from: usize,
    /// Segments marked lost, for the flows table and tests.
    pub marked: u64,
    /// RACK.reo_wnd_mult, RACK.reo_wnd_persist and RACK.dsack_round (section 6.1).
    reo_wnd_mult: u32,
    reo_wnd_persist: u32,
    dsack_round: Option<u64>,
    /// Segments reported duplicate by D-SACKs (Linux's `dsack_dups`).
    dsack_dups: u64,
    /// The sender was in fast or RTO recovery at the last detection (to see it exit).
    was_in_recovery: bool,
}

impl Rack {
    pub fn new(mss: u64, first_seq: u64) -> Self {
        Rack {
            mss,
            base: first_seq,
            segs: VecDeque::new(),
            xmit_ts: Time::ZERO,
            end_seq: 0,
            rtt: Dur::ZERO,
            fack: 0,
            min_rtt: None,
            reordering_seen: false,
            lost_bytes: 0,
            newly_lost: 0,
            lost_from: 0,
            marked: 0,
            reo_wnd_mult: 1,
            reo_wnd_persist: 0,
            dsack_round: None,
            dsack_dups: 0,
            was_in_recovery: false,
        }
    }

    fn index(&self, seq: u64) -> usize {
        ((seq - self.base) / self.mss) as usize
    }

    fn seq_of(&self, i: usize) -> u64 {
        self.base + i as u64 * self.mss
    }

    /// A transmission of the segment at `seq`; a retransmission clears its loss mark.
    pub fn on_send(&mut self, seq: u64, len: u32, now: Time) {
        let i = self.index(seq);
        match self.segs.get_mut(i) {
            Some(s) => {
                if s.lost {
                    self.lost_bytes -= s.len as u64;
                }
                *s = Seg { len, xmit: now, retransmitted: true, lost: false };
            }
            None => {
                debug_assert_eq!(i, self.segs.len(), "segments are sent in order the first time");
                self.segs.push_back(Seg { len, xmit: now, retransmitted: false, lost: false });
            }
        }
    }

    /// RFC 8985 section 6.2 steps 1-3 for the segments starting in [start, end), which the ACK
    /// being processed delivers for the first time (the caller passes each byte once).
    pub fn deliver(&mut self, start: u64, end: u64, now: Time) {
        let start = start.max(self.base);
        let mut i = self.index(start + self.mss - 1);
        let fack_before = self.fack;
        while let Some(s) = self.segs.get_mut(i) {
            let seq = self.base + i as u64 * self.mss;
            if seq >= end {
                break;
            }
            if s.lost {
                s.lost = false; // delivered after all (reordered, or its original arrived late)
                self.lost_bytes -= s.len as u64;
            }
            let s = *s;
            let seg_end = seq + s.len as u64;
            let rtt = now.saturating_sub(s.xmit);
            // Step 2: a retransmission delivered sooner than min_RTT after it left is the
            // original's delivery; neither its time nor its RTT says anything.
            let spurious = s.retransmitted && self.min_rtt.is_some_and(|m| rtt < m);
            if !spurious {
                if !s.retransmitted {
                    self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
                }
                if self.end_seq == 0 || sent_after(s.xmit, seg_end, self.xmit_ts, self.end_seq) {
                    (self.xmit_ts, self.end_seq, self.rtt) = (s.xmit, seg_end, rtt);
                }
            }
            // Step 3 (in any order: a segment is compared with the fack before this ACK, which
            // is what the RFC's ascending walk compares it with).
            if seg_end < fack_before && !s.retransmitted {
                self.reordering_seen = true;
            }
            self.fack = self.fack.max(seg_end);
            i += 1;
        }
    }

    /// Forget the segments below the cumulative ACK (after `deliver`).
    pub fn advance(&mut self, una: u64) {
        while let Some(s) = self.segs.front() {
            if self.base + s.len as u64 > una {
                break;
            }
            if s.lost {
                self.lost_bytes -= s.len as u64;
            }
            self.segs.pop_front();
            self.base += self.mss;
            self.lost_from = self.lost_from.saturating_sub(1);
        }
    }

    /// RFC 8985 section 6.2 step 4 (`RACK_update_reo_wnd`'s first half) for an ACK up to
    /// `una` that carries a D-SACK of `dup_segments` segments (0 when it carries none), sent
    /// by a sender that has retransmitted `retransmitted` segments and has SND.NXT `nxt`;
    /// `tlp_duplicate`: the D-SACK is the tail loss probe's (Linux's `FLAG_DSACK_TLP`). True
    /// if the multiplier grew.
    pub fn on_ack_dsack(
        &mut self,
        una: u64,
        nxt: u64,
        dup_segments: u64,
        retransmitted: u64,
        tlp_duplicate: bool,
    ) -> bool {
        if self.dsack_round.is_some_and(|round| una >= round) {
            self.dsack_round = None;
        }
        self.dsack_dups += dup_segments;
        // Linux's `tcp_dsack_seen`: more duplicates than retransmissions are not the sender's
        // doing, and a probe's duplicate or one before any reordering says nothing of RACK.
        let counts = dup_segments > 0 && self.dsack_dups <= retransmitted && self.reordering_seen && !tlp_duplicate;
        if !counts || self.dsack_round.is_some() {
            return false;
        }
        self.dsack_round = Some(nxt);
        self.reo_wnd_mult = (self.reo_wnd_mult + 1).min(REO_WND_MULT_MAX);
        self.reo_wnd_persist = REO_WND_PERSIST;
        true
    }

    /// Step 4's second half: on each exit from fast or RTO recovery (`in_recovery` turning
    /// false) the persistence counts down, and at 0 the multiplier is 1 again.
    fn note_recovery(&mut self, in_recovery: bool) {
        if self.was_in_recovery && !in_recovery {
            self.reo_wnd_persist = self.reo_wnd_persist.saturating_sub(1);
            if self.reo_wnd_persist == 0 {
                self.reo_wnd_mult = 1;
            }
        }
        self.was_in_recovery = in_recovery;
    }

    /// RFC 8985 section 6.2 step 4: `in_recovery` is fast or RTO recovery, `sacked_segments`
    /// RACK.segs_sacked.
    pub fn reo_wnd(&self, in_recovery: bool, sacked_segments: u64, dupthresh: u32, srtt: Option<Dur>) -> Dur {
        if !self.reordering_seen && (in_recovery || sacked_segments >= dupthresh as u64) {
            return Dur::ZERO;
        }
        let quarter = self.min_rtt.map_or(Dur::ZERO, |m| Dur(m.0 / REO_WND_MIN_RTT_DIVISOR));
        let wnd = Dur(quarter.0 * self.reo_wnd_mult as u64);
        srtt.map_or(wnd, |s| wnd.min(s))
    }

    /// RACK.reo_wnd_mult and RACK.reo_wnd_persist (for tests and the docs' traces).
    #[cfg(test)]
    pub fn reo_wnd_state(&self) -> (u32, u32) {
        (self.reo_wnd_mult, self.reo_wnd_persist)
    }

    /// RFC 8985 section 6.2 step 5: mark lost every undelivered segment in [una, max) sent
    /// before the RACK segment at least `RACK.rtt + reo_wnd` ago. Returns the bytes newly marked
    /// and, if some such segment is not yet due, how long until the last of them is (the
    /// reorder timer, RACK_detect_loss's `timeout`).
    pub fn detect_loss(&mut self, now: Time, reo_wnd: Dur, sb: &Scoreboard, una: u64, max: u64) -> (u64, Option<Dur>) {
        if self.end_seq == 0 {
            return (0, None);
        }
        let (mut marked, mut timeout) = (0, None::<Dur>);
        let deadline = self.rtt + reo_wnd;
        'holes: for (a, b) in sb.holes_in(una.max(self.base), max) {
            let mut i = self.index(a);
            while self.seq_of(i) < b {
                let seq = self.seq_of(i);
                let Some(s) = self.segs.get_mut(i) else { break 'holes };
                if !s.lost {
                    if !sent_after(self.xmit_ts, self.end_seq, s.xmit, seq + s.len as u64) {
                        if !s.retransmitted {
                            break 'holes; // every segment above was first sent later still
                        }
                    } else if now >= s.xmit + deadline {
                        s.lost = true;
                        marked += s.len as u64;
                        self.marked += 1;
                        self.lost_from = self.lost_from.min(i);
                    } else {
                        let remaining = (s.xmit + deadline).saturating_sub(now);
                        timeout = Some(timeout.map_or(remaining, |t| t.max(remaining)));
                    }
                }
                i += 1;
            }
        }
        self.lost_bytes += marked;
        self.newly_lost += marked;
        (marked, timeout)
    }

    /// An RTT sample of the connection's estimator (the handshake's included): RACK.min_RTT is
    /// the connection's minimum RTT, as Linux's `tcp_min_rtt`. Per-segment delivery times alone
    /// would miss the handshake and, with delayed ACKs, run a packet time long.
    pub fn note_rtt(&mut self, m: Dur) {
        self.min_rtt = Some(self.min_rtt.map_or(m, |x| x.min(m)));
    }

    /// The lowest segment marked lost and not yet resent.
    pub fn next_lost(&mut self) -> Option<u64> {
        if self.lost_bytes == 0 {
            return None;
        }
        while let Some(s) = self.segs.get(self.lost_from) {
            if s.lost {
                return Some(self.seq_of(self.lost_from));
            }
            self.lost_from += 1;
        }
        None
    }

    /// Bytes marked lost and not yet resent (they leave the pipe, RFC 6675 SetPipe's IsLost).
    pub fn lost_bytes(&self) -> u64 {
        self.lost_bytes
    }

    pub fn take_newly_lost(&mut self) -> u64 {
        std::mem::take(&mut self.newly_lost)
    }

    /// A retransmission timeout: going back N resends every unSACKed segment, so the marks go.
    pub fn on_timeout(&mut self) {
        for s in self.segs.iter_mut() {
            s.lost = false;
        }
        self.lost_bytes = 0;
    }

    /// RACK.xmit_ts and RACK.rtt (for tests and the docs' traces).
    #[cfg(test)]
    pub fn rack_segment(&self) -> Option<(Time, u64, Dur)> {
        (self.end_seq != 0).then_some((self.xmit_ts, self.end_seq, self.rtt))
    }
}

impl TcpSender {
    /// Pass what this ACK delivers for the first time to RACK (before its SACK blocks enter the
    /// scoreboard): the holes below the cumulative ACK and within each block.
    pub(super) fn rack_deliver(&mut self, pkt: &Packet, now: Time) {
        let (una, max) = (self.send.snd_una, self.send.snd_max);
        let Some(r) = self.loss.rack.as_mut() else { return };
        for (a, b) in self.loss.scoreboard.holes_in(una, pkt.ack) {
            r.deliver(a, b, now);
        }
        for (start, end) in super::super::sack::reported(&pkt.sack, pkt.ack) {
            for (a, b) in self.loss.scoreboard.holes_in(start.max(pkt.ack), end.min(max)) {
                r.deliver(a, b, now);
            }
        }
        r.advance(pkt.ack);
    }

    /// RFC 8985 `RACK_detect_loss_and_arrange_timer`: mark what is due, arm the reorder timer
    /// for what is not yet. True if something was marked.
    pub(super) fn rack_detect(&mut self, cx: &mut AgentCx<impl Host>) -> bool {
        let in_recovery = matches!(self.loss.ca, CaState::Recovery { .. } | CaState::Loss);
        let una = self.send.snd_una.max(self.loss.rack.as_ref().map_or(0, |r| r.base));
        let sacked = self.loss.scoreboard.sacked_in(una, self.send.snd_max).div_ceil(self.w.mss);
        let (dupthresh, srtt, max) = (self.cfg.dupack_threshold, self.timing.rtt.srtt(), self.send.snd_max);
        let Some(r) = self.loss.rack.as_mut() else { return false };
        r.note_recovery(in_recovery);
        let reo_wnd = r.reo_wnd(in_recovery, sacked, dupthresh, srtt);
        let (marked, timeout) = r.detect_loss(cx.now, reo_wnd, &self.loss.scoreboard, una, max);
        match timeout {
            Some(t) => self.timers.arm(TcpTimer::Reorder, cx.now + t, cx),
            None => self.timers.cancel(TcpTimer::Reorder),
        }
        if marked > 0 {
            let now = cx.now;
            cx.rec().event(now, self.conn.flow, TcpEvent::RackLost);
        }
        marked > 0
    }

    /// Segments are marked lost: fast recovery starts (RFC 8985 section 6.2 step 5 leaves the
    /// response to RFC 6675/6937), unless one is under way, the sender is in RTO recovery, or
    /// the marks are of data sent before the last recovery began (RFC 6675 section 5).
    pub(super) fn rack_start_recovery(&mut self, cx: &mut AgentCx<impl Host>) {
        let lost = self.loss.rack.as_ref().is_some_and(|r| r.lost_bytes() > 0);
        if lost && !self.in_recovery() && self.loss.ca != CaState::Loss && self.past_recovery_point() {
            self.enter_sack_recovery(cx);
        }
    }

    /// The reorder timer: segments held back by the reordering window are due.
    pub(super) fn on_reorder_timer(&mut self, cx: &mut AgentCx<impl Host>) {
        if !self.rack_detect(cx) {
            return;
        }
        if self.in_recovery() {
            self.sack_output(cx);
        } else {
            self.rack_start_recovery(cx);
        }
    }
}

/// RFC 8985 section 6.2 `RACK_sent_after`: t1 later than t2, ties broken by sequence.
fn sent_after(t1: Time, seq1: u64, t2: Time, seq2: u64) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn ms(v: u64) -> Time {
        Time::ZERO + Dur::from_millis(v)
    }

    /// Ten segments sent 1 ms apart from 0 ms; min_RTT 100 ms once the first is acknowledged.
    fn ten_sent() -> Rack {
        let mut r = Rack::new(MSS, 1);
        for k in 0..10 {
            r.on_send(1 + k * MSS, MSS as u32, ms(k));
        }
        r
    }

    /// Segment 0 delivered at 100 ms; segment 1 lost; segments 2, 3 SACKed at 102, 103 ms: the
    /// RACK segment is 3 (sent at 3 ms, RACK.rtt = 100 ms), the reordering window 100/4 = 25 ms
    /// (two segments SACKed, under DupThresh), so segment 1 (sent at 1 ms) is lost at
    /// 1 + 100 + 25 = 126 ms.
    #[test]
    fn a_hole_is_lost_a_reordering_window_after_a_later_segment_is_delivered() {
        let mut r = ten_sent();
        let mut sb = Scoreboard::default();
        r.deliver(1, 1 + MSS, ms(100));
        r.advance(1 + MSS);
        let una = 1 + MSS;
        for (k, t) in [(2, 102), (3, 103)] {
            sb.add(1 + k * MSS, 1 + (k + 1) * MSS);
            r.deliver(1 + k * MSS, 1 + (k + 1) * MSS, ms(t));
        }
        assert_eq!(r.rack_segment(), Some((ms(3), 1 + 4 * MSS, Dur::from_millis(100))));
        let reo = r.reo_wnd(false, 2, 3, Some(Dur::from_millis(100)));
        assert_eq!(reo, Dur::from_millis(25));
        let (marked, timeout) = r.detect_loss(ms(103), reo, &sb, una, 1 + 10 * MSS);
        assert_eq!((marked, timeout), (0, Some(Dur::from_millis(23))), "due at 126 ms");
        let (marked, timeout) = r.detect_loss(ms(126), reo, &sb, una, 1 + 10 * MSS);
        assert_eq!((marked, timeout), (MSS, None));
        assert_eq!((r.next_lost(), r.lost_bytes()), (Some(1 + MSS), MSS));
        // Segments 4-9 were sent after the RACK segment: not judged.
        // The retransmission of segment 1 at 126 ms clears the mark; it is judged again by
        // its own send time: lost once a segment sent after 126 ms is delivered and 25 ms pass.
        r.on_send(1 + MSS, MSS as u32, ms(126));
        assert_eq!((r.next_lost(), r.lost_bytes()), (None, 0));
        let (marked, _) = r.detect_loss(ms(300), reo, &sb, una, 1 + 10 * MSS);
        assert_eq!(marked, 0, "nothing sent after the retransmission has been delivered");
    }

    /// RFC 8985 section 6.2 step 4's adaptation by hand (min_RTT 100 ms, SRTT 100 ms): a
    /// D-SACK before any reordering is seen, or reporting more duplicates than retransmissions,
    /// or the probe's, leaves the window at 25 ms; a counted one doubles it and sets the
    /// persistence to 16; another within the round (SND.UNA below the 10 001 of the first)
    /// does not count, one after it makes 75 ms; each of 15 exits from recovery leaves it,
    /// the 16th brings the multiplier back to 1 (25 ms). Capped by SRTT throughout.
    #[test]
    fn the_window_widens_per_dsack_round_and_persists_sixteen_recoveries() {
        let mut r = ten_sent();
        r.deliver(1, 1 + MSS, ms(100));
        let srtt = Some(Dur::from_millis(100));
        let wnd = |r: &Rack| r.reo_wnd(false, 0, 3, srtt);
        assert!(!r.on_ack_dsack(1001, 10_001, 1, 1, false), "no reordering seen yet");
        r.deliver(1 + 3 * MSS, 1 + 4 * MSS, ms(103));
        r.deliver(1 + MSS, 1 + 2 * MSS, ms(104)); // reordering seen
        assert!(!r.on_ack_dsack(1001, 10_001, 1, 1, false), "two duplicates, one retransmission");
        assert!(!r.on_ack_dsack(1001, 10_001, 1, 3, true), "the probe's duplicate");
        assert_eq!(wnd(&r), Dur::from_millis(25));
        assert!(r.on_ack_dsack(1001, 10_001, 1, 9, false));
        assert_eq!((r.reo_wnd_state(), wnd(&r)), ((2, 16), Dur::from_millis(50)));
        assert!(!r.on_ack_dsack(5001, 12_001, 1, 9, false), "the same round");
        assert!(r.on_ack_dsack(10_001, 12_001, 1, 9, false), "SND.UNA passed the round");
        assert_eq!((r.reo_wnd_state(), wnd(&r)), ((3, 16), Dur::from_millis(75)));
        assert_eq!(r.reo_wnd(false, 0, 3, Some(Dur::from_millis(60))), Dur::from_millis(60), "capped by SRTT");
        for exit in 1..=16 {
            r.note_recovery(true);
            r.note_recovery(false);
            let want = if exit < 16 { (3, 16 - exit) } else { (1, 0) };
            assert_eq!(r.reo_wnd_state(), want, "after exit {exit}");
        }
        assert_eq!(wnd(&r), Dur::from_millis(25));
    }

    /// In recovery without reordering seen the window is 0; reordering seen restores it.
    #[test]
    fn the_reordering_window_closes_in_recovery_until_reordering_is_seen() {
        let mut r = ten_sent();
        r.deliver(1, 1 + MSS, ms(100));
        let srtt = Some(Dur::from_millis(100));
        assert_eq!(r.reo_wnd(true, 0, 3, srtt), Dur::ZERO);
        assert_eq!(r.reo_wnd(false, 3, 3, srtt), Dur::ZERO);
        r.deliver(1 + 3 * MSS, 1 + 4 * MSS, ms(103));
        r.deliver(1 + MSS, 1 + 2 * MSS, ms(104)); // below fack, never retransmitted
        assert_eq!(r.reo_wnd(true, 3, 3, srtt), Dur::from_millis(25));
        assert_eq!(r.reo_wnd(false, 0, 3, Some(Dur::from_millis(20))), Dur::from_millis(20), "capped by SRTT");
    }
}
