//! Window growth per ACK of a Reno-style controller, in two rules (the `growth` key of Reno,
//! NewReno, CUBIC, DCTCP and Prague):
//!
//! - `rfc5681` (the default): slow start by appropriate byte counting, at most `abc_limit`
//!   segments per ACK (RFC 3465, L = 2), and congestion avoidance of `SMSS·SMSS/cwnd` per ACK
//!   (RFC 5681 eq. 3): a receiver that acknowledges every other segment halves the growth
//!   in congestion avoidance.
//! - `linux`: Linux's `tcp_slow_start` and `tcp_cong_avoid_ai` (net/ipv4/tcp_cong.c): slow
//!   start adds every segment an ACK covers up to ssthresh, `cwnd = min(cwnd + acked,
//!   ssthresh)`, and what is left of the ACK goes on to congestion avoidance; congestion
//!   avoidance counts acknowledged segments (`snd_cwnd_cnt += acked`) and adds one segment per
//!   `w` of them (`w` = cwnd for Reno), so delayed ACKs do not slow it. Linux counts packets;
//!   here the counter is in bytes, which is the same arithmetic when windows and ACKs are whole
//!   segments. The counter starts again at every congestion event (`tcp_init_cwnd_reduction`
//!   and `tcp_enter_loss` clear `snd_cwnd_cnt`).
//!
//! Owns the rule and Linux's acknowledged-byte counter; it reads and writes only the window it
//! is handed. Must not touch: the sender, the controllers' own state.

use super::Window;
use serde::{Deserialize, Serialize};

/// Which growth rule a controller follows (`growth`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Growth {
    /// RFC 5681 with RFC 3465's byte counting in slow start, per ACK in congestion avoidance.
    #[default]
    #[serde(rename = "rfc5681")]
    Rfc5681,
    /// Linux's `tcp_slow_start` and `tcp_cong_avoid_ai`: per acknowledged segment in both.
    #[serde(rename = "linux")]
    Linux,
}

impl Growth {
    /// The default is left out of a serialized controller, so that a resolved scenario that
    /// never named a rule reads as it did before the key existed.
    pub fn is_default(&self) -> bool {
        *self == Growth::Rfc5681
    }
}

/// Linux's `tcp_slow_start`: `cwnd = min(cwnd + acked, ssthresh)`; returns the acknowledged
/// bytes slow start did not use, which Linux hands on to congestion avoidance.
pub fn linux_slow_start(w: &mut Window, acked: u64) -> u64 {
    let grown = w.cwnd.saturating_add(acked).min(w.ssthresh).max(w.cwnd);
    let used = grown - w.cwnd;
    w.cwnd = grown;
    acked - used
}

/// Linux's `snd_cwnd_cnt`: bytes acknowledged in congestion avoidance since the window last
/// grew (`tcp_cong_avoid_ai`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckedCounter {
    bytes: u64,
}

impl AckedCounter {
    /// `tcp_cong_avoid_ai(tp, w, acked)` in bytes: add `acked`, and one segment to cwnd for
    /// every `w_bytes` counted. Credit counted at a larger `w` than now is applied gently: one
    /// segment, and the count starts again (Linux's first branch).
    pub fn add(&mut self, w: &mut Window, w_bytes: u64, acked: u64) {
        let w_bytes = w_bytes.max(1);
        if self.bytes >= w_bytes {
            self.bytes = 0;
            w.cwnd += w.mss;
        }
        self.bytes += acked;
        if self.bytes >= w_bytes {
            let segments = self.bytes / w_bytes;
            self.bytes -= segments * w_bytes;
            w.cwnd += segments * w.mss;
        }
    }

    /// A congestion event: the count starts again (`tcp_init_cwnd_reduction`).
    pub fn clear(&mut self) {
        self.bytes = 0;
    }

    #[cfg(test)]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn win(cwnd: u64, ssthresh: u64) -> Window {
        Window { cwnd: cwnd * MSS, ssthresh: ssthresh * MSS, mss: MSS, flight: 0, peer_window: u64::MAX }
    }

    /// tcp_slow_start by hand: cwnd 9, ssthresh 10, an ACK of 3 segments: cwnd = min(12, 10)
    /// = 10, and 3 − (10 − 9) = 2 segments are left for congestion avoidance.
    #[test]
    fn slow_start_stops_at_ssthresh_and_hands_on_the_rest() {
        let mut w = win(9, 10);
        assert_eq!(linux_slow_start(&mut w, 3 * MSS), 2 * MSS);
        assert_eq!(w.cwnd, 10 * MSS);
        let mut w = win(4, 100);
        assert_eq!(linux_slow_start(&mut w, 3 * MSS), 0, "no limit per ACK below ssthresh");
        assert_eq!(w.cwnd, 7 * MSS);
    }

    /// tcp_cong_avoid_ai(tp, cwnd, 2) with every ACK covering 2 segments, by hand from cwnd 10
    /// and snd_cwnd_cnt 0: ACKs 1-4 count 2, 4, 6, 8; ACK 5 counts 10 ≥ 10: cwnd 11, count 0;
    /// then 11 takes ACKs 6-11 (count 12 ≥ 11 at ACK 11: cwnd 12, count 1); 12 takes ACKs
    /// 12-17 (1 + 12 = 13 ≥ 12 at ACK 17: cwnd 13, count 1). After 17 ACKs: cwnd 13, count 1.
    #[test]
    fn congestion_avoidance_counts_segments_with_delayed_acks() {
        let mut w = win(10, 5);
        let mut c = AckedCounter::default();
        let mut after = vec![];
        for _ in 0..17 {
            let cwnd = w.cwnd;
            c.add(&mut w, cwnd, 2 * MSS);
            after.push(w.cwnd / MSS);
        }
        assert_eq!(after[4], 11);
        assert_eq!(after[10], 12);
        assert_eq!(after[16], 13);
        assert_eq!((w.cwnd, c.bytes()), (13 * MSS, MSS));
    }

    /// Credit counted at a larger w than now is applied as one segment, and the count restarts.
    #[test]
    fn credit_from_a_larger_window_is_applied_gently() {
        let mut w = win(10, 5);
        let mut c = AckedCounter { bytes: 25 * MSS };
        c.add(&mut w, 10 * MSS, MSS);
        assert_eq!((w.cwnd, c.bytes()), (11 * MSS, MSS));
    }
}
