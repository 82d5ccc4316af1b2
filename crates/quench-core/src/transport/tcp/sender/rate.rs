//! Delivery-rate estimation (draft-cheng-iccrg-delivery-rate-estimation-02; Linux
//! `net/ipv4/tcp_rate.c`), kept only for a model-based controller.
//!
//! Each transmission of a segment records the connection's delivery state at that instant:
//! the delivered count, when it last grew, and when the first segment of the current send
//! phase left (section 3.2). When an ACK delivers data (cumulatively or by SACK, each byte
//! once), the sample is taken from the most recently sent segment it delivered (section
//! 3.3): delivered = count now − count when it was sent, over the longer of its send phase
//! (its send time − the first send time it recorded) and its ACK phase (now − the delivery
//! time it recorded). Taking the longer keeps ACK compression and stretched ACKs from
//! inflating the rate. A sample over less than the minimum RTT is discarded, as Linux does.
//!
//! Segments start `mss` apart from the first data byte (the sender sends full segments but
//! the last, and retransmits on the same boundaries), so a segment's record is found by
//! division, with no search and no allocation once the ring has grown to the window.
//! Owns the per-segment delivery records; it hands the controller a `RateSample` and touches no
//! other sender state.

use crate::cc::RateSample;
use crate::units::{Dur, Time};
use std::collections::VecDeque;

/// The delivery state a transmission recorded (Linux `tcp_skb_cb::tx`).
#[derive(Clone, Copy, Debug)]
struct SentState {
    len: u32,
    sent: Time,
    /// The connection's `first_sent` when this segment left.
    first_sent: Time,
    delivered: u64,
    delivered_time: Time,
    app_limited: bool,
    retransmitted: bool,
}

/// The segment an ACK's sample is taken from: the most recently sent it delivered.
#[derive(Clone, Copy, Debug)]
struct Newest {
    state: SentState,
    end: u64,
}

#[derive(Clone, Debug)]
pub struct RateSampler {
    mss: u64,
    /// Sequence number of the first segment in `segs` (the oldest unacknowledged).
    base: u64,
    segs: VecDeque<SentState>,
    /// Payload bytes delivered so far (draft C.delivered).
    delivered: u64,
    /// When `delivered` last grew, or the send phase started (C.delivered_time).
    delivered_time: Time,
    /// Send time of the newest segment delivered, or of the first of a send phase
    /// (C.first_sent_time).
    first_sent: Time,
    /// While nonzero, sending is app-limited until `delivered` passes it (C.app_limited).
    app_limited_until: u64,
    /// The smallest RTT seen (Linux keeps a 5-minute windowed minimum; runs here are
    /// shorter than that window).
    min_rtt: Option<Dur>,
    /// Built up by `deliver` for the ACK being processed.
    ack: AckDelivery,
}

#[derive(Clone, Copy, Debug, Default)]
struct AckDelivery {
    newest: Option<Newest>,
    bytes: u64,
    /// Send time of the newest delivered segment never retransmitted (Karn's rule).
    rtt_from: Option<Time>,
    /// The ACK is being processed: `advance` has seen it and `sample` not yet.
    open: bool,
    /// Payload bytes transmitted while it was open.
    sent: u64,
    /// A segment it delivered had been retransmitted.
    retransmitted: bool,
}

impl RateSampler {
    pub fn new(mss: u64, first_seq: u64) -> Self {
        RateSampler {
            mss,
            base: first_seq,
            segs: VecDeque::new(),
            delivered: 0,
            delivered_time: Time::ZERO,
            first_sent: Time::ZERO,
            app_limited_until: 0,
            min_rtt: None,
            ack: AckDelivery::default(),
        }
    }

    fn index(&self, seq: u64) -> usize {
        ((seq - self.base) / self.mss) as usize
    }

    /// A transmission of the segment at `seq` (`len` payload bytes); `idle`: nothing was in
    /// flight before it, so a new send phase starts (draft section 3.2).
    pub fn on_send(&mut self, seq: u64, len: u32, now: Time, idle: bool) {
        if idle {
            self.first_sent = now;
            self.delivered_time = now;
        }
        let state = SentState {
            len,
            sent: now,
            first_sent: self.first_sent,
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            app_limited: self.app_limited_until != 0,
            retransmitted: false,
        };
        if self.ack.open {
            self.ack.sent += len as u64;
        }
        let i = self.index(seq);
        match self.segs.get_mut(i) {
            Some(s) => *s = SentState { retransmitted: true, ..state },
            None => {
                debug_assert_eq!(i, self.segs.len(), "segments are sent in order the first time");
                self.segs.push_back(state);
            }
        }
    }

    /// Payload bytes delivered so far (C.delivered).
    #[cfg(test)]
    pub fn total_delivered(&self) -> u64 {
        self.delivered
    }

    /// The application has nothing more to send while the window has room: samples taken
    /// until `inflight` more bytes are delivered say so (draft section 3.4).
    pub fn mark_app_limited(&mut self, inflight: u64) {
        self.app_limited_until = (self.delivered + inflight).max(1);
    }

    /// The ACK being processed delivers the segments starting in [start, end) for the first
    /// time (the caller passes each byte once: SACKed ones are not delivered again by the
    /// cumulative ACK that later covers them).
    pub fn deliver(&mut self, start: u64, end: u64) {
        let start = start.max(self.base);
        let mut i = self.index(start + self.mss - 1);
        while let Some(&s) = self.segs.get(i) {
            let seq = self.base + i as u64 * self.mss;
            if seq >= end {
                break;
            }
            self.delivered += s.len as u64;
            self.ack.bytes += s.len as u64;
            let seg_end = seq + s.len as u64;
            // Linux `tcp_skb_sent_after`: the later send time, ties broken by sequence.
            let newer = self.ack.newest.is_none_or(|n| (s.sent, seg_end) > (n.state.sent, n.end));
            if newer {
                self.ack.newest = Some(Newest { state: s, end: seg_end });
            }
            self.ack.retransmitted |= s.retransmitted;
            if !s.retransmitted && self.ack.rtt_from.is_none_or(|t| s.sent > t) {
                self.ack.rtt_from = Some(s.sent);
            }
            i += 1;
        }
    }

    /// A duplicate ACK of a connection without SACK that Linux's emulation credits with
    /// `bytes` (a segment, or 0; `tcp_add_reno_sack` → `tcp_count_delivered`): the count grows
    /// and `delivered_time` moves to now (`tcp_rate_gen`'s `delivered_mstamp`), but no segment
    /// is known delivered, so the sample has no rate.
    pub fn deliver_duplicate(&mut self, bytes: u64, now: Time) {
        self.delivered += bytes;
        self.ack.bytes += bytes;
        if bytes > 0 {
            self.delivered_time = now;
        }
    }

    /// A cumulative ACK of [start, end) on a connection without SACK, credited with `credit`
    /// bytes as Linux's emulation counts them (`tcp_remove_reno_sacks`: the hole once, the
    /// segments the duplicate ACKs counted not again) instead of every byte it covers; the
    /// segments still pick the sample's newest send. An ACK that covers a retransmission
    /// gives no RTT (Linux `tcp_clean_rtx_queue` takes none with `FLAG_RETRANS_DATA_ACKED`,
    /// without timestamps the only case here).
    pub fn deliver_cumulative(&mut self, start: u64, end: u64, credit: u64) {
        let before = self.ack.bytes;
        self.deliver(start, end);
        if self.ack.retransmitted {
            self.ack.rtt_from = None;
        }
        let counted = self.ack.bytes - before;
        self.delivered = self.delivered - counted + credit;
        self.ack.bytes = before + credit;
    }

    /// Forget the segments below the cumulative ACK. Called once per ACK, after `deliver`:
    /// what is sent from then until `sample` is sent in response to this ACK before the
    /// controller has seen it.
    pub fn advance(&mut self, ack: u64) {
        self.ack.open = true;
        let gone = self.index(ack.max(self.base)).min(self.segs.len());
        self.segs.drain(..gone);
        self.base += gone as u64 * self.mss;
    }

    /// The sample of the ACK whose deliveries were passed to `deliver` (draft section 3.3,
    /// Linux `tcp_rate_gen`); the loss, in-flight and state fields are the sender's.
    pub fn sample(&mut self, now: Time) -> RateSample {
        let ack = std::mem::take(&mut self.ack);
        if self.app_limited_until != 0 && self.delivered > self.app_limited_until {
            self.app_limited_until = 0;
        }
        let rtt = ack.rtt_from.map(|t| now.saturating_sub(t));
        if let Some(r) = rtt {
            self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        }
        let mut rs = RateSample {
            now,
            acked_sacked: ack.bytes,
            total_delivered: self.delivered,
            rtt,
            sent_before_control: ack.sent,
            ..RateSample::default()
        };
        let Some(Newest { state, .. }) = ack.newest else { return rs };
        self.delivered_time = now;
        self.first_sent = state.sent;
        rs.prior_delivered = state.delivered;
        rs.app_limited = state.app_limited;
        rs.delivered = self.delivered - state.delivered;
        let send_phase = state.sent.saturating_sub(state.first_sent);
        let ack_phase = now.saturating_sub(state.delivered_time);
        let interval = send_phase.max(ack_phase);
        rs.interval = (interval > Dur::ZERO && self.min_rtt.is_none_or(|m| interval >= m)).then_some(interval);
        rs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn ms(x: u64) -> Time {
        Time(x * 1_000_000)
    }

    /// Ten segments sent back to back every 1 ms from t = 0 on a 100 ms path whose
    /// bottleneck spaces them 2 ms apart: the ACK of segment k comes at 100 + 2k ms.
    fn ten_sent() -> RateSampler {
        let mut r = RateSampler::new(MSS, 1);
        for k in 0..10 {
            r.on_send(1 + k * MSS, MSS as u32, ms(k), k == 0);
        }
        r
    }

    fn ack(r: &mut RateSampler, upto: u64, now: Time) -> RateSample {
        let from = r.base;
        r.deliver(from, upto);
        r.advance(upto);
        r.sample(now)
    }

    #[test]
    fn the_first_window_measures_the_bottleneck_spacing() {
        let mut r = ten_sent();
        // Segment 0 at 100 ms: send phase 0, ACK phase 100 ms (since the send phase began).
        let s = ack(&mut r, 1 + MSS, ms(100));
        assert_eq!((s.delivered, s.interval, s.rtt), (1000, Some(Dur::from_millis(100)), Some(Dur::from_millis(100))));
        // Segment 9 acked alone at 118 ms: it recorded delivered 0 at time 0 (sent before any
        // ACK), sent 9 ms into the phase; 10 segments over max(9, 118) ms.
        for k in 1..9 {
            ack(&mut r, 1 + (k + 1) * MSS, ms(100 + 2 * k));
        }
        let s = ack(&mut r, 1 + 10 * MSS, ms(118));
        assert_eq!(s.delivered, 10_000);
        assert_eq!(s.interval, Some(Dur::from_millis(118)));
        assert_eq!(s.total_delivered, 10_000);
    }

    #[test]
    fn a_second_round_measures_over_one_rtt_of_acks() {
        let mut r = ten_sent();
        let s0 = ack(&mut r, 1 + MSS, ms(100));
        assert_eq!(s0.prior_delivered, 0);
        // Each ACK releases one new segment (sent at the ACK's time, delivered count then).
        r.on_send(1 + 10 * MSS, MSS as u32, ms(100), false);
        for k in 1..10 {
            ack(&mut r, 1 + (k + 1) * MSS, ms(100 + 2 * k));
            r.on_send(1 + (10 + k) * MSS, MSS as u32, ms(100 + 2 * k), false);
        }
        // Segment 10 left at 100 ms recording delivered 1000 at 100 ms and the send phase's
        // start at 0 ms (segment 0's send, taken at its ACK). Acked at 220 ms after ten more
        // deliveries: send phase 100 ms, ACK phase 120 ms; the window of ten segments per
        // round trip is the rate delivered.
        let s = ack(&mut r, 1 + 11 * MSS, ms(220));
        assert_eq!(s.prior_delivered, 1000);
        assert_eq!(s.delivered, 10_000);
        assert_eq!(s.interval, Some(Dur::from_millis(120)));
    }

    #[test]
    fn sacked_bytes_count_once_and_retransmissions_give_no_rtt() {
        let mut r = ten_sent();
        // Segment 0 lost: SACK of segments 1-2 at 102 ms.
        r.deliver(1 + MSS, 1 + 3 * MSS);
        let s = r.sample(ms(102));
        assert_eq!((s.acked_sacked, s.total_delivered), (2000, 2000));
        assert_eq!(s.rtt, Some(Dur::from_millis(100))); // segment 2, sent at 2 ms
                                                        // Retransmit segment 0 at 102 ms; its cumulative ACK covers 0-2, of which only 0 is new.
        r.on_send(1, MSS as u32, ms(102), false);
        r.deliver(1, 1 + MSS); // the caller passes the scoreboard's holes below the ACK
        r.advance(1 + 3 * MSS);
        let s = r.sample(ms(202));
        assert_eq!((s.acked_sacked, s.total_delivered), (1000, 3000));
        assert_eq!(s.rtt, None, "Karn: a retransmitted segment gives no RTT");
        assert_eq!(s.delivered, 1000, "the retransmission recorded delivered = 2000");
        assert_eq!(r.segs.len(), 7);
    }

    #[test]
    fn sends_in_response_to_an_ack_before_its_sample_are_counted() {
        let mut r = ten_sent();
        r.deliver(1, 1 + MSS);
        r.advance(1 + MSS);
        // The ACK's own transmissions (a retransmission and a new segment) before the sample.
        r.on_send(1 + 10 * MSS, MSS as u32, ms(100), false);
        r.on_send(1 + 11 * MSS, 500, ms(100), false);
        assert_eq!(r.sample(ms(100)).sent_before_control, 1500);
        // A send between ACKs (a pacing timer) belongs to none.
        r.on_send(1 + 12 * MSS, MSS as u32, ms(101), false);
        r.deliver(1 + MSS, 1 + 2 * MSS);
        r.advance(1 + 2 * MSS);
        assert_eq!(r.sample(ms(102)).sent_before_control, 0);
    }

    #[test]
    fn app_limited_samples_are_marked_until_the_limit_is_delivered() {
        let mut r = ten_sent();
        ack(&mut r, 1 + MSS, ms(100));
        // A stretch ACK of segments 1-9 at 101 ms: segment 9 was sent before any delivery, so
        // the sample is all ten segments over max(9 − 0, 101 − 0) ms.
        let s = ack(&mut r, 1 + 10 * MSS, ms(101));
        assert_eq!((s.delivered, s.interval), (10_000, Some(Dur::from_millis(101))));
        assert!(!s.app_limited);
        // The application has one more segment: sent at 101 ms, then nothing more, so samples
        // are app-limited until 10,000 + 1000 bytes are delivered.
        r.on_send(1 + 10 * MSS, MSS as u32, ms(101), false);
        r.mark_app_limited(MSS);
        r.on_send(1 + 11 * MSS, MSS as u32, ms(101), false);
        let s = ack(&mut r, 1 + 11 * MSS, ms(150));
        assert!(!s.app_limited, "segment 10 left before the mark");
        assert_eq!(r.app_limited_until, 11_000, "not yet past it");
        let s = ack(&mut r, 1 + 12 * MSS, ms(201));
        assert!(s.app_limited, "segment 11 left after the mark");
        assert_eq!(r.app_limited_until, 0, "12,000 delivered is past 11,000");
    }

    /// Without SACK, Linux's emulation (`tcp_add_reno_sack`, `tcp_remove_reno_sacks`): segment
    /// 0 of ten is lost and nine duplicate ACKs come at 100 + 2k ms (k = 1..9), each credited
    /// with a segment; the fast retransmission leaves after the third, at 106 ms, recording
    /// the three delivered then. The ACK of all ten at 206 ms credits only the hole: one
    /// segment, ten in all, and a sample of the seven delivered since the retransmission left
    /// (duplicate ACKs 4-9 and the hole) over max(106 − 100, 206 − 106) ms.
    #[test]
    fn without_sack_duplicate_acks_are_delivered_once() {
        let mut r = ten_sent();
        for k in 1..10 {
            r.deliver_duplicate(MSS, ms(100 + 2 * k));
            r.advance(1);
            let s = r.sample(ms(100 + 2 * k));
            assert_eq!((s.acked_sacked, s.interval, s.delivered), (MSS, None, 0), "no segment is known delivered");
            if k == 3 {
                r.on_send(1, MSS as u32, ms(106), false);
            }
        }
        assert_eq!(r.delivered, 9 * MSS);
        r.deliver_cumulative(1, 1 + 10 * MSS, MSS); // max(10 − 9, 1) segments
        r.advance(1 + 10 * MSS);
        let s = r.sample(ms(206));
        assert_eq!((s.acked_sacked, s.total_delivered), (MSS, 10 * MSS));
        assert_eq!((s.prior_delivered, s.delivered), (3 * MSS, 7 * MSS));
        assert_eq!(s.rtt, None, "the ACK covers a retransmission");
        // The retransmission recorded first_sent = 0 (the send phase of the first window) and
        // delivered_time = 106 ms (duplicate ACK 3): max(106 − 0, 206 − 106) ms.
        assert_eq!(s.interval, Some(Dur::from_millis(106)));
    }

    #[test]
    fn a_sample_shorter_than_the_minimum_rtt_is_discarded() {
        let mut r = ten_sent();
        ack(&mut r, 1 + 10 * MSS, ms(118)); // min RTT 109 ms (segment 9, sent at 9 ms)
                                            // Idle, then one segment at 500 ms, spuriously retransmitted at 520 ms, acknowledged at
                                            // 560 ms: max(520 − 500, 560 − 500) = 60 ms, under the 109 ms minimum; no RTT (Karn).
        r.on_send(1 + 10 * MSS, MSS as u32, ms(500), true);
        r.on_send(1 + 10 * MSS, MSS as u32, ms(520), false);
        let s = ack(&mut r, 1 + 11 * MSS, ms(560));
        assert_eq!((s.delivered, s.interval, s.rtt), (1000, None, None));
        assert_eq!(r.min_rtt, Some(Dur::from_millis(109)));
    }
}
