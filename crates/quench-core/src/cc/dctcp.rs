//! DCTCP (RFC 8257; docs/mechanisms.md#dctcp): Reno's window growth (`growth = "linux"`: Linux's
//! `tcp_reno_cong_avoid`, which `tcp_dctcp.c` uses) and loss response, and an
//! ECN response proportional to the extent of congestion. The sender keeps
//! `alpha ← (1 − g)·alpha + g·F` once per window of data, F the fraction of the window's bytes
//! acknowledged with ECN-Echo (section 3.3), and on ECN-Echo reduces at most once per window
//! to `cwnd·(1 − alpha/2)` instead of halving. The receiver echoes the CE mark of each segment
//! (section 3.2, `EcnFeedback::Accurate`); the once-per-window timing of the reduction is the
//! sender's RFC 3168 one, as in Linux's `tcp_dctcp.c`. As there, every packet of the connection
//! is ECN-capable, the SYN, pure ACKs and retransmissions too (`ect_on_every_packet`).
//! Owns `alpha` and its per-window byte counts (`MarkedFraction`, which Prague shares). Must not
//! touch: the sender; it sees only the window and the samples.

use super::growth::Growth;
use super::reno::AimdParams;
use super::{
    half_flight, AckResponse, AckSample, Capabilities, CongestionControl, EcnFeedback, Recovery, Signal, Window,
};
use crate::error::ConfigError;
use serde::{Deserialize, Serialize};

/// RFC 8257 section 4.2: the estimation gain g = 1/16.
const DEFAULT_G: f64 = 1.0 / 16.0;
/// RFC 8257 section 3.3: alpha starts at 1 (the most conservative estimate; Linux
/// `dctcp_alpha_on_init` = 1024/1024).
const DEFAULT_INITIAL_ALPHA: f64 = 1.0;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DctcpConfig {
    /// Estimation gain g in (0, 1]: the weight of the newest window's marked fraction.
    pub g: f64,
    /// alpha before the first window's estimate, in [0, 1].
    pub initial_alpha: f64,
    /// Initial window in segments; RFC 5681's 2-4 by segment size when absent.
    pub initial_window: Option<u64>,
    /// Appropriate byte counting limit L in segments (RFC 3465).
    pub abc_limit: Option<u64>,
    /// The growth rule: "rfc5681" or "linux" (`growth.rs`).
    #[serde(skip_serializing_if = "Growth::is_default")]
    pub growth: Growth,
}

impl Default for DctcpConfig {
    fn default() -> Self {
        DctcpConfig {
            g: DEFAULT_G,
            initial_alpha: DEFAULT_INITIAL_ALPHA,
            initial_window: None,
            abc_limit: None,
            growth: Growth::default(),
        }
    }
}

/// The per-window count behind the next estimate, in bytes.
#[derive(Clone, Copy, Debug, Default)]
struct WindowCount {
    /// Bytes still to be acknowledged before the window ends; None before the first ACK.
    left: Option<u64>,
    acked: u64,
    ece: u64,
}

/// RFC 8257 section 3.3's estimate of the fraction of bytes marked, folded in once per window
/// of data (what was outstanding at the last estimate), and the reduction it sets; shared by
/// DCTCP and Prague (`prague.rs`).
#[derive(Clone, Debug)]
pub struct MarkedFraction {
    g: f64,
    alpha: f64,
    count: WindowCount,
}

impl MarkedFraction {
    /// `g` in (0, 1] and `initial_alpha` in [0, 1], each error naming its key.
    pub fn new(g: f64, initial_alpha: f64) -> Result<Self, ConfigError> {
        if !(g > 0.0 && g <= 1.0) {
            return Err(ConfigError::new("g", format!("{g} is outside (0, 1]")));
        }
        if !(0.0..=1.0).contains(&initial_alpha) {
            return Err(ConfigError::new("initial_alpha", format!("{initial_alpha} is outside [0, 1]")));
        }
        Ok(MarkedFraction { g, alpha: initial_alpha, count: WindowCount::default() })
    }

    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// Section 3.3 steps 1-5: count the bytes acknowledged and those with ECE; when a window
    /// of data is acknowledged, fold its fraction in if `estimate` (Prague estimates only
    /// after the first CE echo) and start the next window.
    pub fn on_ack(&mut self, w: &Window, s: &AckSample, estimate: bool) {
        let c = &mut self.count;
        c.acked += s.acked;
        c.ece += s.ece_bytes;
        let left = c.left.get_or_insert(w.flight + s.acked);
        *left = left.saturating_sub(s.acked);
        if *left == 0 {
            if estimate {
                let fraction = if c.acked == 0 { 0.0 } else { c.ece as f64 / c.acked as f64 };
                self.alpha = (1.0 - self.g) * self.alpha + self.g * fraction;
            }
            *c = WindowCount { left: Some(w.flight.max(1)), acked: 0, ece: 0 };
        }
    }

    /// Section 3.3 step 7: the window after ECN-Echo, `cwnd·(1 − alpha/2)`, at least two
    /// segments.
    pub fn reduced(&self, w: &Window) -> u64 {
        ((w.cwnd as f64 * (1.0 - self.alpha / 2.0)) as u64).max(2 * w.mss)
    }

    /// The slow-start threshold after a congestion signal, DCTCP's and Prague's: ECN-Echo,
    /// the marked fraction's reduction; a loss is answered as conventional TCP answers it
    /// (section 3.4): half the flight.
    pub fn ssthresh_after(&self, w: &Window, signal: Signal) -> u64 {
        match signal {
            Signal::EcnEcho => self.reduced(w),
            _ => half_flight(w),
        }
    }
}

/// What a controller that counts marked bytes needs (DCTCP, Prague): the receiver's accurate
/// feedback (section 3.2), NewReno recovery for losses (section 3.4).
pub const MARKED_FRACTION_CAPABILITIES: Capabilities =
    Capabilities { ecn_feedback: EcnFeedback::Accurate, ..Capabilities::window(Recovery::NewReno) };

pub struct Dctcp {
    params: AimdParams,
    marked: MarkedFraction,
}

impl Dctcp {
    pub fn new(cfg: &DctcpConfig) -> Result<Self, ConfigError> {
        let marked = MarkedFraction::new(cfg.g, cfg.initial_alpha)?;
        let params =
            AimdParams::from_config(cfg.initial_window, cfg.abc_limit)?.with_growth(cfg.growth, cfg.abc_limit)?;
        Ok(Dctcp { params, marked })
    }

    /// The current estimate of the marked fraction.
    pub fn alpha(&self) -> f64 {
        self.marked.alpha()
    }
}

impl CongestionControl for Dctcp {
    /// Linux's `tcp_dctcp.c` is `TCP_CONG_NEEDS_ECN`: ECT on every packet, the SYN included,
    /// so that a switch marking above K marks a handshake rather than dropping it.
    fn capabilities(&self) -> Capabilities {
        Capabilities { ect_on_every_packet: true, ..MARKED_FRACTION_CAPABILITIES }
    }
    fn initial_window(&self, mss: u64) -> u64 {
        self.params.initial_window(mss)
    }
    fn on_ack(&mut self, w: &mut Window, s: &AckSample) -> AckResponse {
        self.marked.on_ack(w, s, true);
        self.params.grow(w, s.acked);
        AckResponse::default()
    }
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

    fn ack(ece: bool) -> AckSample<'static> {
        AckSample {
            now: Time::ZERO,
            acked: MSS,
            rtt: None,
            srtt: None,
            ece_bytes: if ece { MSS } else { 0 },
            ack_delay: None,
            rate: None,
            telemetry: None,
        }
    }

    /// With a fixed marking pattern (every k-th segment's ACK echoes CE) and a steady window,
    /// alpha follows alpha_n = F + (1 − g)^n·(alpha_0 − F) window by window, F = 1/k: after
    /// 200 windows it is F within (15/16)^200 ≈ 2.6e-6.
    #[test]
    fn alpha_converges_to_the_marked_fraction() {
        for k in [2u64, 4, 10] {
            let mut d = Dctcp::new(&DctcpConfig::default()).unwrap();
            let mut w =
                Window { cwnd: 20 * MSS, ssthresh: 10 * MSS, mss: MSS, flight: 20 * MSS, peer_window: u64::MAX };
            for i in 0..200 * 20 {
                let cwnd = w.cwnd;
                d.on_ack(&mut w, &ack(i % k == 0));
                w.cwnd = cwnd; // hold the window (and the flight) steady
            }
            let f = 1.0 / k as f64;
            assert!((d.alpha() - f).abs() < 1e-5, "k {k}: alpha {} vs {f}", d.alpha());
        }
    }

    /// One window: alpha_1 = (1 − g)·1 + g·F exactly.
    #[test]
    fn one_window_folds_in_with_gain_g() {
        let mut d = Dctcp::new(&DctcpConfig::default()).unwrap();
        let mut w = Window { cwnd: 10 * MSS, ssthresh: 5 * MSS, mss: MSS, flight: 9 * MSS, peer_window: u64::MAX };
        for i in 0..10 {
            w.flight = (9 - i) * MSS;
            d.on_ack(&mut w, &ack(i < 3));
        }
        assert_eq!(d.alpha(), 15.0 / 16.0 + 0.3 / 16.0);
        // The reduction: cwnd·(1 − alpha/2); a loss still halves the flight.
        let w = Window { cwnd: 40 * MSS, flight: 40 * MSS, ..w };
        assert_eq!(d.on_congestion(&w, Signal::EcnEcho), (40.0 * MSS as f64 * (1.0 - d.alpha() / 2.0)) as u64);
        assert_eq!(d.on_congestion(&w, Signal::DupAcks), 20 * MSS);
    }

    /// `growth = "linux"`: DCTCP grows as `tcp_reno_cong_avoid` (tcp_dctcp.c's `.cong_avoid`):
    /// from cwnd 10 in congestion avoidance, 5 ACKs of 2 segments add one segment; a
    /// congestion event clears the count (`tcp_init_cwnd_reduction`).
    #[test]
    fn linux_growth_is_renos() {
        let mut d = Dctcp::new(&DctcpConfig { growth: Growth::Linux, ..Default::default() }).unwrap();
        let mut w = Window { cwnd: 10 * MSS, ssthresh: 5 * MSS, mss: MSS, flight: 10 * MSS, peer_window: u64::MAX };
        let two = AckSample { acked: 2 * MSS, ..ack(false) };
        for _ in 0..4 {
            d.on_ack(&mut w, &two);
        }
        assert_eq!(w.cwnd, 10 * MSS);
        d.on_congestion(&w, Signal::DupAcks);
        d.on_ack(&mut w, &two);
        assert_eq!(w.cwnd, 10 * MSS, "the count started again");
        for _ in 0..4 {
            d.on_ack(&mut w, &two);
        }
        assert_eq!(w.cwnd, 11 * MSS);
    }

    #[test]
    fn parameters_are_checked_by_key() {
        let e = Dctcp::new(&DctcpConfig { g: 0.0, ..Default::default() }).err().unwrap();
        assert_eq!(e.path, "g");
        let e = Dctcp::new(&DctcpConfig { initial_alpha: 1.5, ..Default::default() }).err().unwrap();
        assert_eq!(e.path, "initial_alpha");
    }
}
