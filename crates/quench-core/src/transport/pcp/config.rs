//! PCP parameters, one per constant the paper leaves open; every default is justified in the
//! module header of `transport/pcp/mod.rs`.
//! Plain parameters, checked once when the flow is built; it holds no run-time state.

use crate::error::ConfigError;
use crate::limits::{check_at_most, MAX_FACTOR, MAX_PACKETS_TARGET, MAX_RTT_MULTIPLE};
use crate::transport::tcp::RtoConfig;
use crate::units::{Bytes, Dur};
use serde::{Deserialize, Serialize};

/// Payload per packet: 1460 fills a 1500-byte Ethernet MTU after 40 header bytes (as TCP).
const DEFAULT_MSS: u32 = 1460;
/// As TCP's default receive window: large enough not to limit a 1 Gb/s, 30 ms path.
const DEFAULT_WINDOW: Bytes = Bytes(4 << 20);
/// Packets per probe: five samples give the least-squares slope four intervals.
const DEFAULT_PROBE_PACKETS: u32 = 5;
/// Longest probe, in RTTs: fewer packets (at least three) when `probe_packets` would take
/// longer at the probe's rate. Half an RTT keeps a probe shorter than the feedback loop of
/// compensation; the first probe (two packets per RTT) then has three packets, not five.
const DEFAULT_PROBE_SPAN_RTTS: f64 = 0.5;
/// Accepted slope of one-way delay against send time (s/s): the paper's "flat or decreasing",
/// flat to within one packet of cross traffic. One 1250-byte packet at 40 Mb/s (0.25 ms) ahead
/// of the last of five probe packets spread over half of a 25 ms RTT fits a slope of 0.016;
/// at 0 a probe that found capacity fails whenever such jitter happens to rise across it, and
/// in pcp06 at 60 % load six to twelve PCP flows together held 24 Mb/s of the 40 (31 Mb/s at
/// 0.02; quick mode, seed 1). Measured over pcp06 (seeds 1-6, `studies/pcp06_pcp_variants.py
/// tolerance`): 0 drops 295 packets and is slower than TCP from 45 % load; 0.02 drops 2881
/// (TCP: 834,257) and is faster than TCP at every load; 0.05 drops 5719.
const DEFAULT_SLOPE_TOLERANCE: f64 = 0.02;
/// Standard errors of the fitted slope still taken as flat (one reading of "consistent with
/// flat", paper section 3.1). 0 by measurement: in pcp06 (quick) 0.5 lost packets at every
/// load (3 at 15%, 43 at 50%, 180 over FQ at 90%), because simultaneous probes that each
/// looked noisy all passed; with 0 nothing was lost and mean response times were within 10%.
const DEFAULT_SLOPE_CONFIDENCE: f64 = 0.0;
/// Smallest probe increment, in packets per RTT (the paper's initial probe is two).
const DEFAULT_MIN_INCREMENT: f64 = 1.0;
/// Smallest base rate, in packets per RTT, so the flow keeps a delay signal.
const DEFAULT_MIN_RATE: f64 = 1.0;
/// Longest probe back-off, in RTTs (2^5: five consecutive failures).
const DEFAULT_MAX_BACKOFF_RTTS: f64 = 32.0;
/// Random delay, up to this many RTTs, added to a probe scheduled after a failure or a
/// compensation: with none, the faster flow (whose epochs end first) won every race for the
/// capacity a cut freed, and a late flow stayed below a tenth of the link for 6 s.
const DEFAULT_PROBE_JITTER_RTTS: f64 = 1.0;
/// Standing queue (delay above the minimum) below which the path counts as empty: a few
/// packet times at 10-40 Mb/s (1500 bytes at 10 Mb/s is 1.2 ms).
const DEFAULT_QUEUE_TOLERANCE: Dur = Dur::from_millis(1);
/// Queueing delay, in RTTs, at which one sample ends the compensation epoch at once. The
/// paper's buffer holds one RTT of queue (a bandwidth-delay product) and a cut takes about an
/// RTT to act, so a quarter leaves three quarters to absorb an overload; it is well above a
/// probe's own bump (five packets, about 1 ms at 40 Mb/s, against 6 ms at 25 ms RTT).
const DEFAULT_QUEUE_ALARM_RTTS: f64 = 0.25;
/// Consecutive ineffective compensations before tit-for-tat ("several", paper section 3.5).
/// Five, not three, by measurement: once tit-for-tat lasts until the queue is gone, three
/// rounds also fired among eight PCP flows alone (`tests/pcp.rs`), whose weakened cuts then
/// let the queue overflow (1477 drops in 15 s); with five, none.
const DEFAULT_TFT_ROUNDS: u32 = 5;
/// Tit-for-tat weakens compensation by this factor (paper section 3.5: ten).
const DEFAULT_TFT_FACTOR: f64 = 10.0;
/// Later-sent packets delivered before a packet counts as lost (RFC 6675's DupThresh).
const DEFAULT_REORDER_THRESHOLD: u32 = 3;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PcpConfig {
    /// Payload bytes per data packet.
    pub mss: u32,
    /// The receiver's advertised window (flow control): at most this many bytes outstanding.
    pub receive_window: Bytes,
    /// Packets in one probe.
    pub probe_packets: u32,
    /// Longest probe in RTTs (fewer packets at low rates, never under three).
    pub probe_span_rtts: f64,
    /// Accept a probe iff the least-squares slope of its one-way delays is at most this.
    pub slope_tolerance: f64,
    /// Standard errors of the slope's fit added to `slope_tolerance`.
    pub slope_confidence: f64,
    /// Smallest probe increment, packets per RTT.
    pub min_increment: f64,
    /// Smallest base rate, packets per RTT.
    pub min_rate: f64,
    /// Cap of the exponential probe back-off, in RTTs.
    pub max_backoff_rtts: f64,
    /// Uniform random delay in [0, this) RTTs before a probe after a failure or compensation.
    pub probe_jitter_rtts: f64,
    /// Queueing delay treated as no queue (for compensation and for starting probes).
    pub queue_tolerance: Dur,
    /// One sample with this much queueing delay (in RTTs) compensates at once, without
    /// waiting for the epoch's end.
    pub queue_alarm_rtts: f64,
    /// Cut also by the queue's growth: `× 1/(1 + slope)`, the slope of the epoch's delays
    /// against send time (how much faster than the path drains it the queue is fed).
    pub compensate_growth: bool,
    /// Lower the rate by `1 − d/RTT` for one RTT only, which drains the standing queue, and
    /// keep only the growth cut; false: keep both (the literal `base·(1 − d/RTT)` for good).
    pub drain_once: bool,
    /// Ineffective compensation rounds before tit-for-tat weakens compensation.
    pub tit_for_tat_rounds: u32,
    /// Factor by which tit-for-tat weakens compensation.
    pub tit_for_tat_factor: f64,
    /// Loss detection: later-sent packets delivered before a packet is declared lost.
    pub reorder_threshold: u32,
    /// Use and update the source host's per-destination rate history.
    pub history: bool,
    /// A new flow starts from the smallest one-way delay its host has seen towards the
    /// destination (with `history`), not from its own first sample, which includes any queue
    /// standing when it opens.
    pub history_owd: bool,
    /// Retransmission timeout (TCP's estimator and bounds).
    pub rto: RtoConfig,
}

impl Default for PcpConfig {
    fn default() -> Self {
        PcpConfig {
            mss: DEFAULT_MSS,
            receive_window: DEFAULT_WINDOW,
            probe_packets: DEFAULT_PROBE_PACKETS,
            probe_span_rtts: DEFAULT_PROBE_SPAN_RTTS,
            slope_tolerance: DEFAULT_SLOPE_TOLERANCE,
            slope_confidence: DEFAULT_SLOPE_CONFIDENCE,
            min_increment: DEFAULT_MIN_INCREMENT,
            min_rate: DEFAULT_MIN_RATE,
            max_backoff_rtts: DEFAULT_MAX_BACKOFF_RTTS,
            probe_jitter_rtts: DEFAULT_PROBE_JITTER_RTTS,
            queue_tolerance: DEFAULT_QUEUE_TOLERANCE,
            queue_alarm_rtts: DEFAULT_QUEUE_ALARM_RTTS,
            compensate_growth: true,
            drain_once: true,
            tit_for_tat_rounds: DEFAULT_TFT_ROUNDS,
            tit_for_tat_factor: DEFAULT_TFT_FACTOR,
            reorder_threshold: DEFAULT_REORDER_THRESHOLD,
            history: true,
            history_owd: true,
            rto: RtoConfig::default(),
        }
    }
}

/// The smallest payload that leaves room for data in a 68-byte datagram (as TCP).
const MIN_MSS: u32 = 8;
/// The largest payload of a 65535-byte IPv4 datagram after 40 header bytes.
const MAX_MSS: u32 = 65_495;
/// A least-squares slope needs at least three points to say anything about a trend.
const MIN_PROBE_PACKETS: u32 = 3;
/// More than this is no longer a "short run" (and delays the verdict by many packet times).
const MAX_PROBE_PACKETS: u32 = 64;

impl PcpConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(MIN_MSS..=MAX_MSS).contains(&self.mss) {
            return Err(ConfigError::new("mss", format!("{} bytes is outside [{MIN_MSS}, {MAX_MSS}]", self.mss)));
        }
        if self.receive_window.0 < self.mss as u64 {
            return Err(ConfigError::new("receive_window", format!("cannot hold one {}-byte packet", self.mss)));
        }
        if !(MIN_PROBE_PACKETS..=MAX_PROBE_PACKETS).contains(&self.probe_packets) {
            return Err(ConfigError::new(
                "probe_packets",
                format!("must be between {MIN_PROBE_PACKETS} and {MAX_PROBE_PACKETS}"),
            ));
        }
        let positive = [
            ("min_increment", self.min_increment),
            ("min_rate", self.min_rate),
            ("max_backoff_rtts", self.max_backoff_rtts),
            ("probe_span_rtts", self.probe_span_rtts),
            ("queue_alarm_rtts", self.queue_alarm_rtts),
        ];
        for (key, v) in positive {
            if !(v.is_finite() && v > 0.0) {
                return Err(ConfigError::new(key, format!("{v} must be a positive number")));
            }
        }
        if !(self.probe_jitter_rtts.is_finite() && self.probe_jitter_rtts >= 0.0) {
            return Err(ConfigError::new("probe_jitter_rtts", "must be a non-negative number"));
        }
        let non_negative = [("slope_tolerance", self.slope_tolerance), ("slope_confidence", self.slope_confidence)];
        for (key, v) in non_negative {
            if !(v.is_finite() && v >= 0.0) {
                return Err(ConfigError::new(key, "must be a non-negative number"));
            }
        }
        if !(self.tit_for_tat_factor.is_finite() && self.tit_for_tat_factor >= 1.0) {
            return Err(ConfigError::new("tit_for_tat_factor", "must be at least 1"));
        }
        self.check_ceilings()?;
        if self.tit_for_tat_rounds == 0 {
            return Err(ConfigError::new("tit_for_tat_rounds", "must be at least 1"));
        }
        if self.reorder_threshold == 0 {
            return Err(ConfigError::new("reorder_threshold", "must be at least 1"));
        }
        self.validate_rto()
    }

    /// The ceilings of the float settings (`limits.rs`), so that none can push a rate or a
    /// time past what the engine represents.
    fn check_ceilings(&self) -> Result<(), ConfigError> {
        let rtts = "the most round trips a waiting period may span";
        let packets = "the most packets per RTT a rate setting may name";
        let factor = "the largest tuning factor quench accepts";
        let ceilings = [
            ("probe_span_rtts", self.probe_span_rtts, MAX_RTT_MULTIPLE, rtts),
            ("max_backoff_rtts", self.max_backoff_rtts, MAX_RTT_MULTIPLE, rtts),
            ("probe_jitter_rtts", self.probe_jitter_rtts, MAX_RTT_MULTIPLE, rtts),
            ("queue_alarm_rtts", self.queue_alarm_rtts, MAX_RTT_MULTIPLE, rtts),
            ("min_increment", self.min_increment, MAX_PACKETS_TARGET, packets),
            ("min_rate", self.min_rate, MAX_PACKETS_TARGET, packets),
            ("slope_tolerance", self.slope_tolerance, MAX_FACTOR, factor),
            ("slope_confidence", self.slope_confidence, MAX_FACTOR, factor),
            ("tit_for_tat_factor", self.tit_for_tat_factor, MAX_FACTOR, factor),
        ];
        for (key, v, most, what) in ceilings {
            check_at_most(key, v, most, what)?;
        }
        Ok(())
    }

    fn validate_rto(&self) -> Result<(), ConfigError> {
        let rto = &self.rto;
        if !(1..=16).contains(&rto.k) {
            return Err(ConfigError::new("rto.k", "must be between 1 and 16"));
        }
        if rto.min.is_zero() || rto.min > rto.max {
            return Err(ConfigError::new("rto.min", format!("must be positive and at most rto.max ({})", rto.max)));
        }
        if rto.initial.is_zero() {
            return Err(ConfigError::new("rto.initial", "must be positive"));
        }
        rto.validate_tick_rule()
    }
}
