//! A Prague-style scalable controller (RFC 9331 section 4's requirements on an L4S sender;
//! Linux/L4STeam `tcp_prague.c` as the reference behaviour; docs/mechanisms.md#prague). Needs
//! `tcp.ecn = true` (negotiation), as DCTCP does.
//!
//! - **Identifier** (RFC 9331 section 4.1): ECN-capable data carries ECT(1) (`ect_codepoint`),
//!   so that a DualPI2 (RFC 9332) puts it in its L4S queue.
//! - **Scalable response** (section 4.3 item 2, DCTCP's rule, RFC 8257 section 3.3): the
//!   receiver echoes each segment's CE mark (`EcnFeedback::Accurate`); once per window of data
//!   (what was outstanding at the previous estimate: about one RTT) `alpha ← (1 − g)·alpha +
//!   g·F`, F the fraction of the window's bytes acknowledged with ECN-Echo, g = 1/16; on
//!   ECN-Echo the sender reduces at most once per RTT (its RFC 3168 once-per-window rule) to
//!   `cwnd·(1 − alpha/2)`, at least two segments. alpha starts at 1 (tcp_prague's
//!   `prague_init`, as DCTCP) and is not updated until the first CE echo (tcp_prague's
//!   `saw_ce`: no estimate before there is proof of an AQM on the path), so the first mark
//!   halves the window.
//! - **Loss** (section 4.3 item 1): a Classic (Reno) response, `ssthresh = max(FlightSize/2,
//!   2·SMSS)` and NewReno recovery.
//! - **Additive increase**: one segment per RTT in congestion avoidance, by byte counting (a
//!   counter of acknowledged bytes; each full cwnd of them adds one MSS, as tcp_prague's
//!   `prague_update_cwnd`), so a delayed-ACK receiver does not halve it; bytes acknowledged
//!   with ECE do not count (tcp_prague subtracts the CE-marked segments from those acked);
//!   slow start grows by the bytes acknowledged, at most `abc_limit` segments per ACK
//!   (RFC 3465). With `growth = "linux"`, slow start and the increase are Linux's
//!   `tcp_slow_start` and `tcp_cong_avoid_ai` (`growth.rs`): slow start up to ssthresh with
//!   no per-ACK limit, the rest of the ACK counted toward the increase.
//!
//! Left out: RTT independence (section 4.3 item 3's "reduce RTT bias": tcp_prague's
//! `prague_rtt_scaling` toward a 25 ms virtual RTT), fractional windows below two segments,
//! a controller-set pacing rate (the sender's `tcp.pacing` option paces at cwnd/srtt where
//! wanted), the per-ACK `cong_control` hook (this is a window controller) and ECT(1) on the
//! handshake and pure ACKs (tcp_prague's `TCP_CONG_NEEDS_ECN`; here on data only). Without
//! them this is DCTCP's rule on ECT(1) with a byte-counted increase (`linux_flags_tests.rs`
//! lists these departures).
//! Owns `alpha` and the byte-counted increase. Must not touch: the sender; it sees only the window
//! and the samples, and of the packet only the ECN codepoints.

use super::dctcp::MarkedFraction;
use super::dctcp::MARKED_FRACTION_CAPABILITIES;
use super::growth::Growth;
use super::reno::AimdParams;
use super::{AckResponse, AckSample, Capabilities, CongestionControl, Signal, Window};
use crate::error::ConfigError;
use crate::packet::ecn;

/// Prague's parameters are DCTCP's, with the same defaults: g = 1/16 (tcp_prague's
/// `PRAGUE_SHIFT_G` = 4, as RFC 8257 section 4.2) and alpha starting at 1 (`prague_init`).
pub use super::dctcp::DctcpConfig as PragueConfig;

pub struct Prague {
    params: AimdParams,
    marked: MarkedFraction,
    /// Bytes acknowledged in congestion avoidance since the window last grew.
    ai_bytes: u64,
    /// An ACK has echoed CE: alpha is estimated from then on.
    saw_ce: bool,
}

impl Prague {
    pub fn new(cfg: &PragueConfig) -> Result<Self, ConfigError> {
        let marked = MarkedFraction::new(cfg.g, cfg.initial_alpha)?;
        let params =
            AimdParams::from_config(cfg.initial_window, cfg.abc_limit)?.with_growth(cfg.growth, cfg.abc_limit)?;
        Ok(Prague { params, marked, ai_bytes: 0, saw_ce: false })
    }

    /// The current estimate of the marked fraction.
    pub fn alpha(&self) -> f64 {
        self.marked.alpha()
    }
}

impl CongestionControl for Prague {
    fn capabilities(&self) -> Capabilities {
        Capabilities { ect_codepoint: ecn::ECT1, ..MARKED_FRACTION_CAPABILITIES }
    }
    fn initial_window(&self, mss: u64) -> u64 {
        self.params.initial_window(mss)
    }
    fn on_ack(&mut self, w: &mut Window, s: &AckSample) -> AckResponse {
        self.saw_ce |= s.ece_bytes > 0;
        self.marked.on_ack(w, s, self.saw_ce);
        let unmarked = s.acked - s.ece_bytes.min(s.acked);
        if self.params.growth() == Growth::Linux {
            self.params.grow(w, unmarked);
            return AckResponse::default();
        }
        if w.cwnd < w.ssthresh {
            self.params.grow(w, unmarked);
            self.ai_bytes = 0;
            return AckResponse::default();
        }
        self.ai_bytes += unmarked;
        if self.ai_bytes >= w.cwnd {
            self.ai_bytes -= w.cwnd;
            w.cwnd += w.mss;
        }
        AckResponse::default()
    }
    /// ECN-Echo: DCTCP's `cwnd·(1 − alpha/2)`, at least two segments; a loss: half the flight.
    fn on_congestion(&mut self, w: &Window, signal: Signal) -> u64 {
        self.params.on_congestion();
        self.marked.ssthresh_after(w, signal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Time;

    const MSS: u64 = 1000;

    fn ack(acked: u64, ece: bool) -> AckSample<'static> {
        AckSample {
            now: Time::ZERO,
            acked,
            rtt: None,
            srtt: None,
            ece_bytes: if ece { acked } else { 0 },
            ack_delay: None,
            rate: None,
            telemetry: None,
        }
    }

    /// One window of 10 segments, 3 echoing CE: alpha_1 = (15/16)·1 + (1/16)·0.3; the next
    /// window with none: alpha_2 = (15/16)·alpha_1. The reduction is cwnd·(1 − alpha/2); a loss
    /// halves the flight.
    #[test]
    fn alpha_and_the_reductions_by_hand() {
        let mut c = Prague::new(&PragueConfig::default()).unwrap();
        let mut w = Window { cwnd: 10 * MSS, ssthresh: 5 * MSS, mss: MSS, flight: 9 * MSS, peer_window: u64::MAX };
        for i in 0..10 {
            w.flight = (9 - i) * MSS;
            c.on_ack(&mut w, &ack(MSS, i < 3));
        }
        let a1 = 15.0 / 16.0 + 0.3 / 16.0;
        assert_eq!(c.alpha(), a1);
        // The window that followed: the flight at the estimate (0, counted as 1 byte) ends at
        // the next ACK.
        c.on_ack(&mut w, &ack(MSS, false));
        assert_eq!(c.alpha(), 15.0 / 16.0 * a1);
        let w = Window { cwnd: 40 * MSS, flight: 40 * MSS, ..w };
        let a = c.alpha();
        assert_eq!(c.on_congestion(&w, Signal::EcnEcho), (40.0 * MSS as f64 * (1.0 - a / 2.0)) as u64);
        assert_eq!(c.on_congestion(&w, Signal::DupAcks), 20 * MSS);
        assert_eq!(c.on_congestion(&Window { cwnd: 2 * MSS, ..w }, Signal::EcnEcho), 2 * MSS);
    }

    /// Congestion avoidance: one MSS per cwnd of bytes acknowledged, whether the receiver acks
    /// every segment or every other: from cwnd 10 MSS, 10 000 B acked → 11 MSS; then 11 000 B
    /// in 2-segment ACKs (5.5 ACKs: 6 ACKs, 12 000 B) → 12 MSS with 1000 B carried over.
    #[test]
    fn additive_increase_is_one_segment_per_window() {
        let mut c = Prague::new(&PragueConfig { initial_alpha: 0.0, ..Default::default() }).unwrap();
        let mut w = Window { cwnd: 10 * MSS, ssthresh: 5 * MSS, mss: MSS, flight: 0, peer_window: u64::MAX };
        for _ in 0..10 {
            c.on_ack(&mut w, &ack(MSS, false));
        }
        assert_eq!(w.cwnd, 11 * MSS);
        for _ in 0..6 {
            c.on_ack(&mut w, &ack(2 * MSS, false));
        }
        assert_eq!((w.cwnd, c.ai_bytes), (12 * MSS, MSS));
        // Slow start: the bytes acked, at most 2 segments per ACK.
        let mut w = Window { cwnd: 4 * MSS, ssthresh: 100 * MSS, ..w };
        c.on_ack(&mut w, &ack(3 * MSS, false));
        assert_eq!(w.cwnd, 6 * MSS);
    }

    /// Before any CE echo alpha stays at its initial 1 (a window of unmarked ACKs does not
    /// move it); marked bytes do not count toward the increase: 10 × 1000 B acked with ECE and
    /// 10 without grow cwnd 10 MSS by one MSS, not two.
    #[test]
    fn no_estimate_before_the_first_mark_and_no_growth_on_marked_bytes() {
        let mut c = Prague::new(&PragueConfig::default()).unwrap();
        let mut w = Window { cwnd: 10 * MSS, ssthresh: 5 * MSS, mss: MSS, flight: 0, peer_window: u64::MAX };
        for _ in 0..10 {
            c.on_ack(&mut w, &ack(MSS, false));
        }
        assert_eq!(c.alpha(), 1.0);
        assert_eq!(w.cwnd, 11 * MSS);
        let mut w = Window { cwnd: 10 * MSS, ..w };
        for i in 0..20 {
            c.on_ack(&mut w, &ack(MSS, i % 2 == 0));
        }
        assert_eq!(w.cwnd, 11 * MSS);
        assert!(c.alpha() < 1.0);
    }

    /// `growth = "linux"`: slow start up to ssthresh with no per-ACK cap, the rest of the ACK
    /// counted toward the increase (cwnd 4, ssthresh 6, an ACK of 3 unmarked segments: cwnd
    /// 6, 1 segment counted); marked bytes still do not count.
    #[test]
    fn linux_growth_hands_the_rest_of_slow_start_on() {
        let cfg = PragueConfig { initial_alpha: 0.0, growth: Growth::Linux, ..Default::default() };
        let mut c = Prague::new(&cfg).unwrap();
        let mut w = Window { cwnd: 4 * MSS, ssthresh: 6 * MSS, mss: MSS, flight: 0, peer_window: u64::MAX };
        c.on_ack(&mut w, &ack(3 * MSS, false));
        assert_eq!(w.cwnd, 6 * MSS);
        c.on_ack(&mut w, &ack(5 * MSS, true));
        assert_eq!(w.cwnd, 6 * MSS, "marked: nothing counted");
        c.on_ack(&mut w, &ack(5 * MSS, false));
        assert_eq!(w.cwnd, 7 * MSS, "1 + 5 segments counted reach the window of 6");
    }

    #[test]
    fn l4s_identifier_and_accurate_feedback() {
        let c = Prague::new(&PragueConfig::default()).unwrap();
        let caps = c.capabilities();
        assert_eq!((caps.ect_codepoint, caps.ecn_feedback), (ecn::ECT1, super::super::EcnFeedback::Accurate));
        assert_eq!(Prague::new(&PragueConfig { g: 1.5, ..Default::default() }).err().unwrap().path, "g");
        let e = Prague::new(&PragueConfig { initial_alpha: -0.1, ..Default::default() }).err().unwrap();
        assert_eq!(e.path, "initial_alpha");
    }
}
