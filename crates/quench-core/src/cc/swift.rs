//! Swift (Kumar et al., "Swift: Delay is Simple and Effective for Congestion Control in the
//! Datacenter", SIGCOMM 2020): AIMD on the fabric delay against a target scaled by the path's
//! hops and the flow's window.
//!
//! Per ACK (the paper's Algorithm 1): the fabric delay is the RTT sample less the receiver's
//! ACK delay (`AckSample::ack_delay`, the time the remote host held the ACK: the paper's NIC
//! timestamps split the RTT the same way). Below the target the window grows by `ai/cwnd`
//! packets per packet acknowledged (`ai` per packet below one packet); at or above it, at most
//! once per RTT, it falls by `max(1 − beta·(delay − target)/delay, 1 − max_mdf)`. Target
//! (section 3.5): `base_target + per_hop·hops + fs`, where the flow-scaling term
//! `fs = alpha/√cwnd + beta_fs`, clamped to [0, fs_range], with `alpha = fs_range/(1/√fs_min_cwnd
//! − 1/√fs_max_cwnd)` and `beta_fs = −alpha/√fs_max_cwnd`, is `fs_range` at `fs_min_cwnd` and 0
//! at `fs_max_cwnd` packets. Loss: fast recovery and a timeout cut the window by `1 − max_mdf`
//! at most once per RTT; `retx_reset_threshold` consecutive timeouts drop it to `min_cwnd`.
//! The window is kept in packets, clamped to [min_cwnd, max_cwnd]; below one packet the sender
//! holds a one-segment window and paces one segment per `srtt/cwnd` (section 3.3).
//!
//! Swift is a model-based controller here (`Capabilities::rate_samples`): it is called on every
//! ACK, in every state, sets the window itself and returns the pacing rate of a window below a
//! packet. The hop count is the forward path's routers, given when the flow is built
//! (`take_path`): quench's IP layer has no TTL to echo, and the paths of a Clos fabric
//! between two hosts, however ECMP or spraying picks among them, are of one length.
//! Departures: the endpoint-congestion window (the paper's second, host-delay window) is not
//! modelled; there is no slow start (the paper has none).
//! Must not touch: the sender; it sees only the window and the samples.

use super::{AckResponse, AckSample, Capabilities, CongestionControl, PathFacts, Recovery, Signal, Window};
use crate::error::ConfigError;
use crate::units::{BitRate, Dur, Time};
use serde::{Deserialize, Serialize};

/// Base target delay: htsim's `SwiftSrc` (Broadcom/csg-htsim `sim/swift.cpp`), 20 µs, its
/// reading of the paper's figure 17 set-up.
const DEFAULT_BASE_TARGET: Dur = Dur::from_micros(20);
/// Per-hop scaling `h`: htsim's `base_delay/6.55`, 3.053 µs for the 20 µs base.
const DEFAULT_PER_HOP: Dur = Dur(3_053);
/// Flow-scaling range: htsim's `5·base_delay`, 100 µs.
const DEFAULT_FS_RANGE: Dur = Dur::from_micros(100);
/// The windows, in packets, at which flow scaling adds `fs_range` and nothing: htsim's 0.1 and
/// 100.
const DEFAULT_FS_MIN_CWND: f64 = 0.1;
const DEFAULT_FS_MAX_CWND: f64 = 100.0;
/// Additive increment, packets per RTT; multiplicative decrease constant; largest decrease per
/// step: htsim's 1.0, 0.8 and 0.5.
const DEFAULT_AI: f64 = 1.0;
const DEFAULT_BETA: f64 = 0.8;
const DEFAULT_MAX_MDF: f64 = 0.5;
/// Consecutive timeouts after which the window drops to `min_cwnd`: htsim's 5.
const DEFAULT_RETX_RESET_THRESHOLD: u32 = 5;
/// Window bounds in packets: 0.001 (the paper's section 3.3 lets the window fall to a
/// thousandth of a packet under large incasts) and htsim's 1000.
const DEFAULT_MIN_CWND: f64 = 0.001;
const DEFAULT_MAX_CWND: f64 = 1000.0;
/// Initial window in segments when none is set (Linux's and mvfst's 10; the paper sets none).
const DEFAULT_INITIAL_WINDOW: u64 = 10;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SwiftConfig {
    /// The fabric delay aimed at on a path of no hops with a large window.
    pub base_target: Dur,
    /// Target added per router on the forward path (`h`).
    pub per_hop: Dur,
    /// The most flow scaling adds to the target (at `fs_min_cwnd` packets and below).
    pub fs_range: Dur,
    /// Window in packets at and below which flow scaling adds `fs_range`.
    pub fs_min_cwnd: f64,
    /// Window in packets at and above which flow scaling adds nothing.
    pub fs_max_cwnd: f64,
    /// Additive increment, packets per RTT.
    pub ai: f64,
    /// Multiplicative decrease constant.
    pub beta: f64,
    /// The largest fraction one decrease removes.
    pub max_mdf: f64,
    /// Consecutive timeouts after which the window drops to `min_cwnd`.
    pub retx_reset_threshold: u32,
    /// Window bounds, packets (fractional below one: paced).
    pub min_cwnd: f64,
    pub max_cwnd: f64,
    pub initial_window: Option<u64>,
}

impl Default for SwiftConfig {
    fn default() -> Self {
        SwiftConfig {
            base_target: DEFAULT_BASE_TARGET,
            per_hop: DEFAULT_PER_HOP,
            fs_range: DEFAULT_FS_RANGE,
            fs_min_cwnd: DEFAULT_FS_MIN_CWND,
            fs_max_cwnd: DEFAULT_FS_MAX_CWND,
            ai: DEFAULT_AI,
            beta: DEFAULT_BETA,
            max_mdf: DEFAULT_MAX_MDF,
            retx_reset_threshold: DEFAULT_RETX_RESET_THRESHOLD,
            min_cwnd: DEFAULT_MIN_CWND,
            max_cwnd: DEFAULT_MAX_CWND,
            initial_window: None,
        }
    }
}

/// The flow-scaling term of section 3.5, in seconds: `alpha/√cwnd + beta_fs` clamped to
/// [0, fs_range].
#[derive(Clone, Copy, Debug)]
struct FlowScaling {
    alpha: f64,
    beta: f64,
    range: f64,
}

impl FlowScaling {
    fn new(range: Dur, min_cwnd: f64, max_cwnd: f64) -> Self {
        let range = range.as_secs_f64();
        let alpha = range / (1.0 / min_cwnd.sqrt() - 1.0 / max_cwnd.sqrt());
        FlowScaling { alpha, beta: -alpha / max_cwnd.sqrt(), range }
    }
    fn at(&self, cwnd_packets: f64) -> f64 {
        (self.alpha / cwnd_packets.sqrt() + self.beta).clamp(0.0, self.range)
    }
}

pub struct Swift {
    base_target: f64,
    per_hop: f64,
    scaling: FlowScaling,
    ai: f64,
    beta: f64,
    max_mdf: f64,
    retx_reset_threshold: u32,
    min_cwnd: f64,
    max_cwnd: f64,
    initial_window: u64,
    hops: u8,
    /// The window in packets, once the first ACK has set it from the initial window.
    cwnd: Option<f64>,
    retransmit_cnt: u32,
    last_decrease: Option<Time>,
    /// A loss decrease happened since the last ACK: it is stamped with the next ACK's time
    /// (`on_congestion` is not told the time).
    decrease_unstamped: bool,
    /// The time and smoothed RTT of the last ACK, for the once-per-RTT rule on a loss.
    last_ack: Option<(Time, Dur)>,
}

impl Swift {
    pub fn new(cfg: &SwiftConfig) -> Result<Self, ConfigError> {
        for (field, v) in [("ai", cfg.ai), ("min_cwnd", cfg.min_cwnd), ("fs_min_cwnd", cfg.fs_min_cwnd)] {
            if !(v > 0.0 && v.is_finite()) {
                return Err(ConfigError::new(field, "must be a positive number"));
            }
        }
        for (field, v) in [("beta", cfg.beta), ("max_mdf", cfg.max_mdf)] {
            if !(v > 0.0 && v < 1.0) {
                return Err(ConfigError::new(field, "must be in (0, 1)"));
            }
        }
        if !(cfg.max_cwnd >= cfg.min_cwnd && cfg.max_cwnd.is_finite()) {
            return Err(ConfigError::new("max_cwnd", "must be at least min_cwnd"));
        }
        if !(cfg.fs_max_cwnd > cfg.fs_min_cwnd && cfg.fs_max_cwnd.is_finite()) {
            return Err(ConfigError::new("fs_max_cwnd", "must exceed fs_min_cwnd"));
        }
        if cfg.retx_reset_threshold == 0 {
            return Err(ConfigError::new("retx_reset_threshold", "must be at least 1"));
        }
        if cfg.initial_window == Some(0) {
            return Err(ConfigError::new("initial_window", "must be at least 1"));
        }
        Ok(Swift {
            base_target: cfg.base_target.as_secs_f64(),
            per_hop: cfg.per_hop.as_secs_f64(),
            scaling: FlowScaling::new(cfg.fs_range, cfg.fs_min_cwnd, cfg.fs_max_cwnd),
            ai: cfg.ai,
            beta: cfg.beta,
            max_mdf: cfg.max_mdf,
            retx_reset_threshold: cfg.retx_reset_threshold,
            min_cwnd: cfg.min_cwnd,
            max_cwnd: cfg.max_cwnd,
            initial_window: cfg.initial_window.unwrap_or(DEFAULT_INITIAL_WINDOW),
            hops: 0,
            cwnd: None,
            retransmit_cnt: 0,
            last_decrease: None,
            decrease_unstamped: false,
            last_ack: None,
        })
    }

    /// The target fabric delay, in seconds, at a window of `cwnd_packets`.
    pub fn target_delay(&self, cwnd_packets: f64) -> f64 {
        self.base_target + self.per_hop * self.hops as f64 + self.scaling.at(cwnd_packets)
    }

    /// The window in packets, once set.
    pub fn cwnd_packets(&self) -> Option<f64> {
        self.cwnd
    }

    /// At most one decrease per RTT: `now − t_last_decrease ≥ rtt`.
    fn can_decrease(&self, now: Time, rtt: Dur) -> bool {
        self.last_decrease.is_none_or(|t| now.saturating_sub(t) >= rtt)
    }

    /// Algorithm 1 for one ACK of `acked_packets` at fabric delay `delay` (seconds).
    fn step(&mut self, cwnd: f64, acked_packets: f64, delay: f64, now: Time, srtt: Dur) -> f64 {
        if delay < self.target_delay(cwnd) {
            return if cwnd >= 1.0 { cwnd + self.ai * acked_packets / cwnd } else { cwnd + self.ai * acked_packets };
        }
        if !self.can_decrease(now, srtt) {
            return cwnd;
        }
        let factor = (1.0 - self.beta * (delay - self.target_delay(cwnd)) / delay).max(1.0 - self.max_mdf);
        self.last_decrease = Some(now);
        cwnd * factor
    }

    /// A loss decrease by `1 − max_mdf`, once per RTT by the last ACK's clock.
    fn loss_decrease(&mut self, cwnd: f64) -> f64 {
        if let Some((now, srtt)) = self.last_ack {
            if !self.can_decrease(now, srtt) {
                return cwnd;
            }
        }
        self.decrease_unstamped = true;
        cwnd * (1.0 - self.max_mdf)
    }

    /// The window as the sender holds it, in bytes (at least a segment), and the pacing rate
    /// of a window below one packet: one segment per `srtt/cwnd`.
    fn apply(&self, w: &mut Window, cwnd: f64, srtt: Option<Dur>) -> Option<BitRate> {
        w.cwnd = ((cwnd * w.mss as f64) as u64).max(w.mss);
        let srtt = srtt.filter(|d| !d.is_zero())?.as_secs_f64();
        (cwnd < 1.0).then(|| BitRate((cwnd * w.mss as f64 * 8.0 / srtt) as u64))
    }
}

impl CongestionControl for Swift {
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            rate_samples: true,
            rtt_every_ack_needed_by: Some("Swift"),
            ack_delay: true,
            ..Capabilities::window(Recovery::NewReno)
        }
    }
    fn initial_window(&self, _mss: u64) -> u64 {
        self.initial_window
    }
    fn take_path(&mut self, path: &PathFacts) {
        self.hops = path.hops;
    }

    /// Called twice on some ACKs (as a window controller without the rate sample, then with
    /// it): only the call with the sample acts.
    fn on_ack(&mut self, w: &mut Window, s: &AckSample) -> AckResponse {
        let Some(rs) = s.rate else { return AckResponse::default() };
        let mss = w.mss as f64;
        let mut cwnd = self.cwnd.unwrap_or(w.cwnd as f64 / mss);
        let srtt = s.srtt.unwrap_or(Dur::ZERO);
        if self.decrease_unstamped {
            (self.last_decrease, self.decrease_unstamped) = (Some(s.now), false);
        }
        if s.acked > 0 {
            self.retransmit_cnt = 0;
        }
        if let Some(rtt) = s.rtt {
            let delay = rtt.0.saturating_sub(s.ack_delay.map_or(0, |d| d.0));
            let acked_packets = rs.acked_sacked as f64 / mss;
            cwnd = self.step(cwnd, acked_packets, Dur(delay).as_secs_f64(), s.now, srtt);
        }
        cwnd = cwnd.clamp(self.min_cwnd, self.max_cwnd);
        self.cwnd = Some(cwnd);
        self.last_ack = Some((s.now, srtt));
        AckResponse { pacing_rate: self.apply(w, cwnd, s.srtt), app_limited: false }
    }

    /// Fast recovery: `1 − max_mdf`, once per RTT. Timeout: the same, or `min_cwnd` after
    /// `retx_reset_threshold` in a row. ECN-Echo and a local drop leave the window to the
    /// delay. The threshold returned is the window, which `on_ack` keeps setting.
    fn on_congestion(&mut self, w: &Window, signal: Signal) -> u64 {
        let mut cwnd = self.cwnd.unwrap_or(w.cwnd as f64 / w.mss as f64);
        match signal {
            Signal::DupAcks => cwnd = self.loss_decrease(cwnd),
            Signal::Timeout => {
                self.retransmit_cnt += 1;
                // A timeout comes an RTO (more than srtt) after the last ACK and after the
                // previous timeout, so the once-per-RTT rule always allows it.
                self.decrease_unstamped = true;
                cwnd = if self.retransmit_cnt >= self.retx_reset_threshold {
                    self.min_cwnd
                } else {
                    cwnd * (1.0 - self.max_mdf)
                };
            }
            Signal::EcnEcho | Signal::LocalDrop => {}
        }
        cwnd = cwnd.clamp(self.min_cwnd, self.max_cwnd);
        self.cwnd = Some(cwnd);
        ((cwnd * w.mss as f64) as u64).max(w.mss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::RateSample;

    const MSS: u64 = 1000;

    fn us(n: u64) -> Dur {
        Dur::from_micros(n)
    }

    /// One ACK of a segment at `at_us`, with RTT `rtt_us`, ACK delay `delay_us`, srtt 50 µs.
    fn ack(c: &mut Swift, w: &mut Window, at_us: u64, rtt_us: u64, delay_us: u64) -> AckResponse {
        let rs = RateSample { acked_sacked: MSS, ..RateSample::default() };
        let s = AckSample {
            now: Time(at_us * 1_000),
            acked: MSS,
            rtt: Some(us(rtt_us)),
            srtt: Some(us(50)),
            ack_delay: Some(us(delay_us)),
            rate: Some(&rs),
            ..AckSample::default()
        };
        c.on_ack(w, &s)
    }

    fn window(segments: u64) -> Window {
        Window { cwnd: segments * MSS, ssthresh: u64::MAX, mss: MSS, flight: 0, peer_window: u64::MAX }
    }

    /// No flow scaling (fs_range 0), base target 40 µs, 2 hops at 5 µs: target 50 µs.
    fn fixed_target() -> Swift {
        let cfg = SwiftConfig { base_target: us(40), per_hop: us(5), fs_range: Dur::ZERO, ..Default::default() };
        let mut c = Swift::new(&cfg).unwrap();
        c.take_path(&PathFacts { hops: 2, base_rtt: Dur::ZERO, line_rate: BitRate(0) });
        c
    }

    /// Section 3.5's endpoints: fs_range at fs_min_cwnd, 0 at fs_max_cwnd, clamped beyond;
    /// with the defaults (100 µs over [0.1, 100] packets) alpha = 100/(√10 − 0.1) = 32.655 µs,
    /// so at 1 packet fs = 32.655 − 3.266 = 29.390 µs.
    #[test]
    fn flow_scaling_spans_fs_range_between_its_windows() {
        let f = FlowScaling::new(us(100), 0.1, 100.0);
        assert!((f.at(0.1) - 100e-6).abs() < 1e-12, "{}", f.at(0.1));
        assert!(f.at(100.0).abs() < 1e-12, "{}", f.at(100.0));
        assert_eq!(f.at(0.01), 100e-6);
        assert_eq!(f.at(1000.0), 0.0);
        let alpha = 100e-6 / (10f64.sqrt() - 0.1);
        assert!((f.at(1.0) - (alpha - alpha / 10.0)).abs() < 1e-12);
        assert!((f.at(1.0) - 29.390e-6).abs() < 1e-9, "{}", f.at(1.0));
    }

    fn assert_packets(c: &Swift, expected: f64) {
        let got = c.cwnd_packets().unwrap();
        assert!((got - expected).abs() < 1e-9, "cwnd {got} packets, expected {expected}");
    }

    /// Hand trace, target 50 µs, MSS 1000 B, srtt 50 µs, initial window 10:
    /// 1. fabric delay 60 − 20 = 40 µs < 50: cwnd 10 + 1/10 = 10.1 packets.
    /// 2. fabric delay 100 µs: decrease by max(1 − 0.8·50/100, 0.5) = 0.6 → 6.06 packets.
    /// 3. 30 µs later, fabric delay 100 µs again: within an RTT of the decrease, no change.
    /// 4. 60 µs after step 2: fabric delay 400 µs, 1 − 0.8·350/400 = 0.3 < 0.5: capped at
    ///    max_mdf, 3.03 packets.
    #[test]
    fn increase_below_target_decrease_above_capped_and_once_per_rtt() {
        let mut c = fixed_target();
        let mut w = window(10);
        assert_eq!(ack(&mut c, &mut w, 0, 60, 20).pacing_rate, None);
        assert_packets(&c, 10.1);
        assert_eq!(w.cwnd, 10_100);
        ack(&mut c, &mut w, 10, 100, 0);
        assert_packets(&c, 6.06);
        ack(&mut c, &mut w, 40, 100, 0);
        assert_packets(&c, 6.06);
        ack(&mut c, &mut w, 70, 400, 0);
        assert_packets(&c, 3.03);
    }

    /// The ACK delay is taken out: an RTT of 90 µs of which the receiver held the ACK 50 µs
    /// is a 40 µs fabric delay, below the 50 µs target.
    #[test]
    fn the_receivers_ack_delay_is_not_fabric_delay() {
        let mut c = fixed_target();
        let mut w = window(10);
        ack(&mut c, &mut w, 0, 90, 50);
        assert_packets(&c, 10.1);
        let mut c = fixed_target();
        let mut w = window(10);
        ack(&mut c, &mut w, 0, 90, 0); // 1 − 0.8·40/90 = 0.6444
        assert_packets(&c, 10.0 * (1.0 - 0.8 * 40.0 / 90.0));
    }

    /// Below a packet: the increase is ai per packet acknowledged, the sender keeps one segment
    /// and paces one per srtt/cwnd: at 0.25 packets and srtt 50 µs, one segment per 200 µs,
    /// 1000·8/200 µs = 40 Mb/s.
    #[test]
    fn a_fractional_window_is_paced_at_one_segment_per_srtt_over_cwnd() {
        let cfg =
            SwiftConfig { base_target: us(40), fs_range: Dur::ZERO, initial_window: Some(1), ..Default::default() };
        let mut c = Swift::new(&cfg).unwrap();
        let mut w = window(1);
        ack(&mut c, &mut w, 0, 400, 0); // 1 − 0.8·360/400 = 0.28 → capped at 0.5 packets
        assert_packets(&c, 0.5);
        ack(&mut c, &mut w, 100, 400, 0); // 100 µs later: 0.25 packets
        assert_packets(&c, 0.25);
        let out = ack(&mut c, &mut w, 120, 400, 0); // within the RTT: held
        assert_packets(&c, 0.25);
        assert_eq!(w.cwnd, MSS);
        let rate = out.pacing_rate.unwrap().0 as f64;
        assert!((rate - 40e6).abs() <= 1.0, "{rate}");
        assert_eq!(ack(&mut c, &mut w, 130, 30, 0).pacing_rate, None); // below target: + ai·1
        assert_packets(&c, 1.25);
    }

    /// Timeouts: `1 − max_mdf` each, and `min_cwnd` at the fifth in a row; an ACK of new data
    /// resets the count.
    #[test]
    fn timeouts_decrease_then_reset_to_min_cwnd() {
        let mut c = fixed_target();
        let mut w = window(16);
        ack(&mut c, &mut w, 0, 30, 0); // 16.0625 packets
        assert_eq!(c.on_congestion(&w, Signal::Timeout), 8_031);
        ack(&mut c, &mut w, 100, 30, 0); // resets the count: 8.03125 + 1/8.03125
        let after_ack = 8.03125 + 1.0 / 8.03125;
        assert_packets(&c, after_ack);
        for _ in 0..4 {
            c.on_congestion(&w, Signal::Timeout);
        }
        assert_packets(&c, after_ack / 16.0);
        c.on_congestion(&w, Signal::Timeout);
        assert_packets(&c, DEFAULT_MIN_CWND);
    }

    /// Fast recovery: `1 − max_mdf` at most once per RTT (srtt 50 µs by the last ACK).
    #[test]
    fn fast_recovery_decreases_once_per_rtt() {
        let mut c = fixed_target();
        let mut w = window(20);
        ack(&mut c, &mut w, 0, 30, 0); // 20.05 packets
        c.on_congestion(&w, Signal::DupAcks);
        assert_packets(&c, 10.025);
        ack(&mut c, &mut w, 10, 30, 0); // the decrease is stamped at 10 µs; + 1/10.025
        c.on_congestion(&w, Signal::DupAcks);
        assert_packets(&c, 10.025 + 1.0 / 10.025);
    }

    #[test]
    fn config_errors_name_the_field() {
        let e = Swift::new(&SwiftConfig { max_mdf: 1.0, ..Default::default() }).err().unwrap();
        assert_eq!(e.path, "max_mdf");
        let e = Swift::new(&SwiftConfig { fs_max_cwnd: 0.05, ..Default::default() }).err().unwrap();
        assert_eq!(e.path, "fs_max_cwnd");
    }
}
