//! HPCC (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019): a window set
//! from the utilization of the most loaded link on the path, which in-band telemetry reports
//! exactly (`telemetry.rs`).
//!
//! Per ACK (the paper's Algorithm 1), with `T` the base RTT and `L` the hop records of the
//! previous ACK:
//! - `MeasureInflight`: for each hop, `u_i = min(qlen, qlen_prev)/(B·T) + txRate/B`, where
//!   `txRate` is the hop's transmitted bytes over the time between the two records; `u` is the
//!   largest, `τ` its records' interval (at most `T`), and the estimate is the EWMA
//!   `U = (1 − τ/T)·U + (τ/T)·u`.
//! - `ComputeWind`: when `U ≥ η` or after `max_stage` additive steps in a row, the
//!   multiplicative step `W = W_c/(U/η) + W_AI`; otherwise the additive `W = W_c + W_AI`. The
//!   reference window `W_c` (and the stage count) is updated once per RTT, on the first ACK
//!   whose cumulative delivery goes beyond the `snd_nxt` of the last update (the ACK of data
//!   sent after it: Algorithm 1's `ack.seq > lastUpdateSeq`, then `lastUpdateSeq = snd_nxt`;
//!   `RdmaHw::HandleAckHp` and `UpdateRateHp` in alibaba-edu/High-Precision-Congestion-Control,
//!   simulation/src/point-to-point/model/rdma-hw.cc); every other ACK computes `W` from the
//!   same `W_c` (the reaction per ACK of the paper's section 3.2.2).
//! - The sender paces at `W/T` and keeps `W` in flight, from `W_init = B_nic·T` (line rate).
//!
//! `T` and the NIC's rate `B_nic` are the flow's idle path's (`PathFacts`) unless the scenario
//! sets them; HPCC's evaluation takes one network-wide `T`, the largest base RTT, which a
//! scenario gets by setting `base_rtt`. `W_AI = R_AI·T`. The pacing rate carries a window
//! below one segment (as Swift's does).
//! Transports: over TCP (SACK, RACK) a loss signal leaves the window to the telemetry, as
//! HPCC has none of its own; over RoCE (`transport/roce.rs`) losses are go-back-N's alone.
//! Must not touch: the sender; it sees only the window and the samples.

use super::{AckResponse, AckSample, Capabilities, CongestionControl, PathFacts, RateSample, Recovery, Signal, Window};
use crate::error::ConfigError;
use crate::telemetry::{HopRecord, IntHeader, IntRecord, MAX_HOPS};
use crate::units::{BitRate, Dur};
use serde::{Deserialize, Serialize};

/// Target utilization `η`: the paper's section 5.1 and its simulator's `U_TARGET`, 0.95.
const DEFAULT_ETA: f64 = 0.95;
/// Additive steps before a multiplicative one (`maxStage`): the paper's section 3.2.2, 5.
const DEFAULT_MAX_STAGE: u32 = 5;
/// Additive increase as a rate, `R_AI` (so `W_AI = R_AI·T`): the HPCC simulator's `RATE_AI`,
/// 50 Mb/s (alibaba-edu/High-Precision-Congestion-Control, `mix/config.txt`).
const DEFAULT_RATE_AI: BitRate = BitRate(50_000_000);
/// The lowest pacing rate: the simulator's `MIN_RATE`, 100 Mb/s.
const DEFAULT_MIN_RATE: BitRate = BitRate(100_000_000);

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HpccConfig {
    /// Target utilization of the most loaded link.
    pub eta: f64,
    /// Additive steps in a row before a multiplicative one.
    pub max_stage: u32,
    /// Additive increase, as a rate (`W_AI = rate_ai·T`).
    pub rate_ai: BitRate,
    /// The lowest pacing rate.
    pub min_rate: BitRate,
    /// `T`; the flow's idle round trip when absent.
    pub base_rtt: Option<Dur>,
    /// `B_nic`, the line rate the sender starts at; the sender's own link's when absent.
    pub line_rate: Option<BitRate>,
    /// The first window in segments; `B_nic·T` (line rate) when absent.
    pub initial_window: Option<u64>,
    /// Hop slots of the telemetry header (1 to 8): switches past the last leave no record.
    pub int_hops: u8,
    /// The telemetry header rides in every packet (`2 + 8·int_hops` bytes, counted in its size
    /// and written in captures); false carries the records at no cost in bytes.
    pub int_on_wire: bool,
}

impl Default for HpccConfig {
    fn default() -> Self {
        HpccConfig {
            eta: DEFAULT_ETA,
            max_stage: DEFAULT_MAX_STAGE,
            rate_ai: DEFAULT_RATE_AI,
            min_rate: DEFAULT_MIN_RATE,
            base_rtt: None,
            line_rate: None,
            initial_window: None,
            int_hops: IntHeader::HPCC.hops,
            int_on_wire: IntHeader::HPCC.on_wire,
        }
    }
}

/// The window state of Algorithm 1, in bytes and seconds.
pub struct Hpcc {
    eta: f64,
    max_stage: u32,
    rate_ai: BitRate,
    min_rate: BitRate,
    /// `T`, seconds, and `B_nic`, bytes per second: the configured values or the path's.
    base_rtt: f64,
    line_rate: f64,
    /// `W_init = B_nic·T`, bytes: the largest window (line rate).
    line_window: f64,
    configured: (Option<Dur>, Option<BitRate>),
    initial_window: Option<u64>,
    /// `W_c`, the reference window, and `W`, the window now.
    reference: f64,
    window: f64,
    /// The utilization estimate `U`.
    utilization: f64,
    inc_stage: u32,
    /// The previous ACK's hop records (`L`).
    last: Option<IntRecord>,
    /// `lastUpdateSeq`: the bytes sent (`snd_nxt`) at the last update; the first ACK that
    /// delivers beyond them starts the next round.
    round_end: u64,
    /// How the flow's packets carry the telemetry.
    header: IntHeader,
}

impl Hpcc {
    pub fn new(cfg: &HpccConfig) -> Result<Self, ConfigError> {
        if !(cfg.eta > 0.0 && cfg.eta <= 1.0) {
            return Err(ConfigError::new("eta", "must be in (0, 1]"));
        }
        if cfg.base_rtt.is_some_and(|t| t.is_zero()) {
            return Err(ConfigError::new("base_rtt", "must be positive"));
        }
        if cfg.line_rate.is_some_and(|r| r.0 == 0) {
            return Err(ConfigError::new("line_rate", "must be positive"));
        }
        if cfg.initial_window == Some(0) {
            return Err(ConfigError::new("initial_window", "must be at least 1"));
        }
        if cfg.min_rate.0 == 0 {
            return Err(ConfigError::new("min_rate", "must be positive"));
        }
        if !(1..=MAX_HOPS as u8).contains(&cfg.int_hops) {
            return Err(ConfigError::new("int_hops", format!("must be between 1 and {MAX_HOPS}")));
        }
        let mut hpcc = Hpcc {
            eta: cfg.eta,
            max_stage: cfg.max_stage,
            rate_ai: cfg.rate_ai,
            min_rate: cfg.min_rate,
            base_rtt: 0.0,
            line_rate: 0.0,
            line_window: 0.0,
            configured: (cfg.base_rtt, cfg.line_rate),
            initial_window: cfg.initial_window,
            reference: 0.0,
            window: 0.0,
            utilization: 0.0,
            inc_stage: 0,
            last: None,
            round_end: 0,
            header: IntHeader { hops: cfg.int_hops, on_wire: cfg.int_on_wire },
        };
        hpcc.set_path(cfg.base_rtt.unwrap_or(Dur::from_micros(1)), cfg.line_rate.unwrap_or(BitRate(1)));
        Ok(hpcc)
    }

    /// Take `T` and `B_nic`, and start at line rate: `W = W_c = B_nic·T`.
    fn set_path(&mut self, base_rtt: Dur, line_rate: BitRate) {
        let base_rtt = base_rtt.max(Dur(1));
        self.base_rtt = base_rtt.as_secs_f64();
        self.line_rate = line_rate.bytes_per_sec();
        // In integers, so that a whole number of bytes stays whole.
        self.line_window = (line_rate.0 as u128 * base_rtt.0 as u128) as f64 / (8 * crate::units::NS_PER_SEC) as f64;
        self.reference = self.line_window;
        self.window = self.reference;
    }

    /// `W_AI`, bytes.
    fn additive(&self) -> f64 {
        self.rate_ai.bytes_per_sec() * self.base_rtt
    }

    /// The window now, bytes.
    pub fn window_bytes(&self) -> f64 {
        self.window
    }

    /// The utilization estimate `U`.
    pub fn utilization(&self) -> f64 {
        self.utilization
    }

    /// One hop's normalized inflight and its records' interval in seconds, or None when the
    /// two records are of the same instant (nothing to divide by).
    fn hop_load(&self, now: &HopRecord, before: &HopRecord) -> Option<(f64, f64)> {
        let interval = now.at.saturating_sub(before.at).as_secs_f64();
        let rate = now.rate.bytes_per_sec();
        if interval <= 0.0 || rate <= 0.0 {
            return None;
        }
        let tx_rate = now.tx_bytes.saturating_sub(before.tx_bytes) as f64 / interval;
        let queue = now.queue.0.min(before.queue.0) as f64;
        Some((queue / (rate * self.base_rtt) + tx_rate / rate, interval))
    }

    /// `MeasureInflight`: update `U` from the hop records of this ACK against the last ACK's.
    /// A first record, or one of another length (the path changed), only becomes the last.
    fn measure_inflight(&mut self, record: &IntRecord) {
        let most = self.last.as_ref().and_then(|last| self.most_loaded_hop(record, last));
        self.last = Some(*record);
        if let Some((u, tau)) = most {
            let weight = (tau / self.base_rtt).min(1.0);
            self.utilization = (1.0 - weight) * self.utilization + weight * u;
        }
    }

    /// The highest hop load `U` of `record` against `last` and its interval; none if the
    /// records' lengths differ (the path changed) or no hop has a load.
    fn most_loaded_hop(&self, record: &IntRecord, last: &IntRecord) -> Option<(f64, f64)> {
        if last.hops().len() != record.hops().len() {
            return None;
        }
        let mut most: Option<(f64, f64)> = None;
        for (now, before) in record.hops().iter().zip(last.hops()) {
            if let Some((u, tau)) = self.hop_load(now, before) {
                if most.is_none_or(|(m, _)| u > m) {
                    most = Some((u, tau));
                }
            }
        }
        most
    }

    /// `ComputeWind`: the window from `W_c` and `U`; with `update`, `W_c` and the stage move.
    fn compute_window(&mut self, update: bool) {
        let multiplicative = self.utilization >= self.eta || self.inc_stage >= self.max_stage;
        let window = if multiplicative {
            self.reference / (self.utilization / self.eta) + self.additive()
        } else {
            self.reference + self.additive()
        };
        let floor = self.min_rate.bytes_per_sec() * self.base_rtt;
        self.window = window.clamp(floor.min(self.line_window), self.line_window);
        if update {
            self.inc_stage = if multiplicative { 0 } else { self.inc_stage + 1 };
            self.reference = self.window;
        }
    }

    /// Whether this ACK starts a round: `HandleAckHp`'s `ack_seq > m_lastUpdateSeq`, its
    /// cumulative ACK (the bytes delivered after it, `total_delivered`) beyond the `snd_nxt`
    /// of the last update. The ACK that only reaches that `snd_nxt` acknowledges data sent
    /// before the update, and belongs to the round the update began.
    fn starts_round(&self, rs: &RateSample) -> bool {
        rs.total_delivered > self.round_end
    }

    /// The window as the sender holds it and the pacing rate `W/T`. HPCC's sender sends while
    /// the bytes in flight are below `W` (the HPCC simulator's `RdmaQueuePair::IsWinBound`),
    /// TCP's while a whole segment more still fits in `cwnd`: so `cwnd = W + MSS`. Held to
    /// `W`, the flow loses up to a segment per RTT, 3 % of a 10 µs, 10 Gb/s path.
    fn apply(&self, w: &mut Window) -> BitRate {
        w.cwnd = self.window as u64 + w.mss;
        BitRate((self.window * 8.0 / self.base_rtt).round() as u64)
    }
}

impl CongestionControl for Hpcc {
    fn capabilities(&self) -> Capabilities {
        Capabilities { rate_samples: true, telemetry: Some(self.header), ..Capabilities::window(Recovery::NewReno) }
    }

    /// `W_init` in segments: line rate for one base RTT, unless the scenario set it (then `W`
    /// and `W_c` start there at the first ACK, when the segment size is known).
    fn initial_window(&self, mss: u64) -> u64 {
        self.initial_window.unwrap_or_else(|| ((self.window / mss as f64).ceil() as u64).max(1))
    }

    fn take_path(&mut self, path: &PathFacts) {
        let (base_rtt, line_rate) = self.configured;
        self.set_path(base_rtt.unwrap_or(path.base_rtt), line_rate.unwrap_or(path.line_rate));
    }

    /// Called twice on some ACKs (as a window controller without the rate sample, then with
    /// it): only the call with the sample acts.
    fn on_ack(&mut self, w: &mut Window, s: &AckSample) -> AckResponse {
        let Some(rs) = s.rate else { return AckResponse::default() };
        if let Some(segments) = self.initial_window.take() {
            self.reference = (segments * w.mss) as f64;
            self.window = self.reference;
        }
        if let Some(record) = s.telemetry {
            self.measure_inflight(record);
            let new_round = self.starts_round(rs);
            if new_round {
                // snd_nxt as the reference reads it, before the sends this ACK releases (they
                // come after the controller's turn): exactly so over RoCE; over TCP with SACK
                // the pipe stands for what lies beyond the delivered count.
                self.round_end = rs.total_delivered + rs.inflight;
            }
            self.compute_window(new_round);
        }
        AckResponse { pacing_rate: Some(self.apply(w)), app_limited: false }
    }

    /// A loss or ECN-Echo leaves the window to the telemetry: the threshold is the window.
    fn on_congestion(&mut self, w: &Window, _signal: Signal) -> u64 {
        (self.window as u64).max(w.mss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{Bytes, Time};

    const MSS: u64 = 1000;
    /// 100 Gb/s for 10 µs: W_init = 125,000 bytes.
    const RATE: BitRate = BitRate(100_000_000_000);

    fn hpcc() -> Hpcc {
        let cfg = HpccConfig { base_rtt: Some(Dur::from_micros(10)), line_rate: Some(RATE), ..Default::default() };
        Hpcc::new(&cfg).unwrap()
    }

    fn hop(at_us: u64, tx_bytes: u64, queue: u64) -> HopRecord {
        HopRecord { queue: Bytes(queue), tx_bytes, at: Time(at_us * 1_000), rate: RATE }
    }

    fn window() -> Window {
        Window { cwnd: 10 * MSS, ssthresh: u64::MAX, mss: MSS, flight: 0, peer_window: u64::MAX }
    }

    /// T = 10 µs at 100 Gb/s, starting from a window of 4 segments rather than line rate.
    fn four_segment_start() -> HpccConfig {
        HpccConfig {
            base_rtt: Some(Dur::from_micros(10)),
            line_rate: Some(RATE),
            initial_window: Some(4),
            ..Default::default()
        }
    }

    /// Segments in flight after each ACK: a window of 4, refilled after the controller's turn.
    const FLIGHT_AFTER_ACK: u64 = 3;

    /// An ACK as the RoCE sender samples it: `delivered` its cumulative ACK, bytes.
    fn ack(c: &mut Hpcc, w: &mut Window, record: &IntRecord, delivered: u64) -> AckResponse {
        let rs = RateSample {
            prior_delivered: delivered,
            total_delivered: delivered,
            inflight: FLIGHT_AFTER_ACK * MSS,
            ..RateSample::default()
        };
        let s = AckSample { acked: MSS, rate: Some(&rs), telemetry: Some(record), ..AckSample::default() };
        c.on_ack(w, &s)
    }

    #[test]
    fn starts_at_line_rate() {
        let c = hpcc();
        assert!((c.window_bytes() - 125_000.0).abs() < 1e-6);
        assert_eq!(c.initial_window(MSS), 125);
    }

    /// One hop at 100 Gb/s, records 5 µs apart: 62,500 bytes sent between them is the full
    /// rate (txRate/B = 1), and min(qlen) = 12,500 bytes is 0.1 of B·T. So u = 1.1, τ/T = 0.5
    /// and U = 0.5·0 + 0.5·1.1 = 0.55 < η: the additive step, W = W_c + W_AI, where
    /// W_AI = 50 Mb/s · 10 µs = 62.5 bytes.
    #[test]
    fn additive_step_by_hand() {
        let (mut c, mut w) = (hpcc(), window());
        ack(&mut c, &mut w, &IntRecord::of(&[hop(0, 0, 20_000)]), MSS);
        assert_eq!(c.utilization(), 0.0, "a first record is only kept");
        let out = ack(&mut c, &mut w, &IntRecord::of(&[hop(5, 62_500, 12_500)]), 10 * MSS);
        assert!((c.utilization() - 0.55).abs() < 1e-12, "{}", c.utilization());
        // W_c is capped at line rate: 125,000 + 62.5 is clamped back to W_init.
        assert!((c.window_bytes() - 125_000.0).abs() < 1e-6);
        assert_eq!(out.pacing_rate, Some(RATE));
    }

    /// U ≥ η: W = W_c/(U/η) + W_AI. Two hops; the second is the busier: 125,000 bytes in
    /// 10 µs (txRate/B = 1) and 112,500 bytes queued at both records (0.9 of B·T), so
    /// u = 1.9 and, with τ = T, U = 1.9. The first ACK opened a round (W_c = W_init), so this
    /// one computes W = 125,000·0.95/1.9 + 62.5 = 62,562.5 bytes, paced at W/T = 50.05 Gb/s.
    #[test]
    fn multiplicative_step_by_hand() {
        let (mut c, mut w) = (hpcc(), window());
        ack(&mut c, &mut w, &IntRecord::of(&[hop(0, 0, 0), hop(0, 0, 112_500)]), MSS);
        let out = ack(&mut c, &mut w, &IntRecord::of(&[hop(10, 60_000, 0), hop(10, 125_000, 112_500)]), 2 * MSS);
        assert!((c.utilization() - 1.9).abs() < 1e-12, "{}", c.utilization());
        assert!((c.window_bytes() - 62_562.5).abs() < 1e-6, "{}", c.window_bytes());
        let paced = out.pacing_rate.unwrap().0 as f64;
        assert!((paced - 50.05e9).abs() < 1.0, "{paced}");
        assert_eq!(w.cwnd, 62_562 + MSS);
    }

    /// W_c moves once per round: the ACKs of one round each compute W from the same W_c
    /// (W_init), so a load that persists does not cut the window again on every ACK. The
    /// first ACK (1 segment delivered, 3 in flight) updates with snd_nxt = 4 segments; the
    /// ACKs of segments 2 to 4, sent before it, are of its round.
    #[test]
    fn reference_window_moves_once_per_round() {
        let (mut c, mut w) = (hpcc(), window());
        ack(&mut c, &mut w, &IntRecord::of(&[hop(0, 0, 0)]), MSS);
        for k in 1..=3u64 {
            ack(&mut c, &mut w, &IntRecord::of(&[hop(10 * k, 125_000 * k, 112_500)]), (k + 1) * MSS);
            assert_eq!(c.reference, 125_000.0, "W_c is the round's");
            let expected = 125_000.0 * 0.95 / c.utilization() + 62.5;
            assert!((c.window_bytes() - expected).abs() < 1e-6);
        }
        // The first ACK of the next round (its data sent after the update) moves W_c to W.
        ack(&mut c, &mut w, &IntRecord::of(&[hop(40, 500_000, 112_500)]), 5 * MSS);
        assert!((c.reference - c.window_bytes()).abs() < 1e-9);
        assert!(c.reference < 125_000.0);
    }

    /// Which ACKs start a round, by hand, under `HandleAckHp`'s rule. A window of F = 4
    /// segments, an ACK per segment, the sender refilling after the controller's turn: ACK n
    /// delivers segment n, so after it n segments are delivered, 3 are in flight and
    /// snd_nxt = n + 3. ACK 1 updates (lastUpdateSeq = 0 before it) and sets lastUpdateSeq = 4;
    /// ACK 4 only reaches it (segment 4 was sent before that update), ACK 5 is the first beyond
    /// it and sets 8, then ACK 9 sets 12, then ACK 13: a round every F ACKs. Starting a round
    /// at the ACK that reaches snd_nxt instead would start them at ACKs 1, 4, 7, 10, 13
    /// (every F − 1). With U = 0 (records of one instant) every update is the additive step,
    /// so W_c grows by W_AI = 62.5 bytes per round.
    #[test]
    fn rounds_start_where_handle_ack_hp_starts_them() {
        let cfg = HpccConfig { max_stage: 100, ..four_segment_start() };
        let (mut c, mut w) = (Hpcc::new(&cfg).unwrap(), window());
        let record = IntRecord::of(&[hop(0, 0, 0)]);
        let mut starts = Vec::new();
        for n in 1..=13u64 {
            let stage = c.inc_stage;
            ack(&mut c, &mut w, &record, n * MSS);
            if c.inc_stage > stage {
                starts.push(n);
            }
        }
        assert_eq!(starts, [1, 5, 9, 13]);
        assert!((c.reference - (4.0 * MSS as f64 + 4.0 * 62.5)).abs() < 1e-9, "{}", c.reference);
    }

    /// After `max_stage` additive rounds the next round is multiplicative even below η:
    /// with U = 0.5, W = W_c/(0.5/0.95) + W_AI grows the window by 1.9x (capped at line rate).
    #[test]
    fn max_stage_forces_a_multiplicative_step() {
        let cfg = HpccConfig {
            base_rtt: Some(Dur::from_micros(10)),
            line_rate: Some(RATE),
            max_stage: 2,
            ..Default::default()
        };
        let mut c = Hpcc::new(&cfg).unwrap();
        c.reference = 10_000.0;
        c.utilization = 0.5;
        c.compute_window(true);
        c.compute_window(true);
        assert_eq!(c.inc_stage, 2);
        assert!((c.reference - 10_125.0).abs() < 1e-9);
        c.compute_window(true);
        assert_eq!(c.inc_stage, 0);
        assert!((c.window_bytes() - (10_125.0 / (0.5 / 0.95) + 62.5)).abs() < 1e-6);
    }

    /// A configured first window replaces line rate, from the first ACK (whose record only
    /// becomes the last): the additive step then starts from 4 segments.
    #[test]
    fn a_configured_initial_window_replaces_line_rate() {
        let cfg = four_segment_start();
        let (mut c, mut w) = (Hpcc::new(&cfg).unwrap(), window());
        assert_eq!(c.initial_window(MSS), 4);
        ack(&mut c, &mut w, &IntRecord::of(&[hop(0, 0, 0)]), MSS);
        assert!((c.window_bytes() - (4.0 * MSS as f64 + 62.5)).abs() < 1e-9, "{}", c.window_bytes());
    }

    #[test]
    fn rejects_bad_parameters() {
        for cfg in [
            HpccConfig { eta: 0.0, ..Default::default() },
            HpccConfig { eta: 1.5, ..Default::default() },
            HpccConfig { base_rtt: Some(Dur::ZERO), ..Default::default() },
            HpccConfig { line_rate: Some(BitRate(0)), ..Default::default() },
            HpccConfig { initial_window: Some(0), ..Default::default() },
        ] {
            assert!(Hpcc::new(&cfg).is_err());
        }
    }
}
