//! BBRv3 (draft-ietf-ccwg-bbr-01, "BBR Congestion Control", Cardwell, Swett, Beshay, 2024;
//! Linux `net/ipv4/tcp_bbr.c` of github.com/google/bbr, branch v3; docs/mechanisms.md#bbrv3).
//! A model-based controller like BBR v1 (`bbr.rs`), with a model that also holds what loss and
//! ECN said: the bandwidth is the maximum delivery rate over the last two PROBE_BW cycles
//! (`bw_hi`) bounded below it by `bw_lo`, and the data in flight is capped by `inflight_hi`
//! (the volume at which probing last saw a loss rate above 2 % or an ECN mark rate above
//! 50 %) and `inflight_lo` (cut by β = 0.7 each round with loss, by 1 − α/3 each round with
//! ECN marks, while not probing).
//!
//! The state machine:
//! - STARTUP: pacing gain 2.77, cwnd gain 2, until three rounds without 25 % growth of the
//!   delivery rate, six loss events in a round of recovery with a loss rate above 2 %, or two
//!   rounds with more than half the data CE-marked (the last two set `inflight_hi`);
//! - DRAIN: pacing gain 1/2.885 until in flight is down to one BDP;
//! - PROBE_BW, a cycle of four phases: DOWN (pacing gain 0.9) until in flight is below both
//!   the BDP and `inflight_hi` less 15 % headroom; CRUISE (gain 1, cwnd at most the headroom
//!   level) until 2-3 s (drawn from the flow's seeded stream) have passed since DOWN began, or
//!   as many rounds as a Reno flow of this BDP would take (at most 63); REFILL (gain 1, lower
//!   bounds cleared) for one round; UP (pacing gain 1.25, cwnd gain 2.25, `inflight_hi`
//!   raised 1, 2, 4, ... segments per round) until too much loss or ECN, or three rounds
//!   without 25 % growth of the delivery rate while `inflight_hi` does not limit it (draft
//!   BBRIsTimeToGoDown); then DOWN again;
//! - PROBE_RTT: when the min RTT has not been lowered for 5 s, cwnd half a BDP for 200 ms and a
//!   round, then PROBE_BW (CRUISE) or STARTUP.
//!
//! Where quench's rate samples lack Linux's per-packet `tx_in_flight` and `lost`, a sample's
//! loss rate is the bytes marked lost since the round began over the in flight before the
//! ACK, and its ECN rate is the CE-marked share of the bytes acknowledged in the last whole
//! round (docs/mechanisms.md#bbrv3 lists these and the other departures).
//! Owns its model, phase and random stream; shares BBR v1's ACK-aggregation estimator. Must
//! not touch: the sender; it sees only the window and the samples.

use super::bbr::{
    draft_send_quantum, inflight_at_control, AckAggregation, Mode, EXTRA_ACKED_MAX, FULL_BW_GROWTH, FULL_BW_ROUNDS,
    MIN_CWND_SEGMENTS, MIN_RTT_WINDOW, PACING_MARGIN, PROBE_RTT_DURATION, RTT_BEFORE_SAMPLES,
};
use super::{
    rfc5681_initial_window, AckResponse, AckSample, CaPhase, Capabilities, CongestionControl, ControllerMetrics,
    EcnFeedback, RateSample, Recovery, Signal, Window,
};
use crate::error::ConfigError;
use crate::rng::Rng;
use crate::units::{BitRate, Dur, Time};
use serde::{Deserialize, Serialize};

/// Draft 5.1.1 (BBRStartupPacingGain) / Linux `bbr_startup_pacing_gain` (277/100): 4 ln 2,
/// the smallest gain that doubles the rate each round as slow start does.
const STARTUP_PACING_GAIN: f64 = 2.77;
/// Draft 5.1.1 (BBRStartupCwndGain) / Linux `bbr_startup_cwnd_gain`.
const STARTUP_CWND_GAIN: f64 = 2.0;
/// Linux `bbr_drain_gain` (1000/2885; the draft's BBRDrainPacingGain rounds it to 0.35): drains
/// STARTUP's queue in about one round.
const DRAIN_PACING_GAIN: f64 = 1000.0 / 2885.0;
/// Draft 5.1.1 (BBRDefaultCwndGain) / Linux `bbr_cwnd_gain`.
const CWND_GAIN: f64 = 2.0;
/// Draft 5.3.3.6 / Linux `bbr_bw_probe_cwnd_gain` (one quarter more in UP).
const UP_CWND_GAIN: f64 = 2.25;
/// PROBE_BW pacing gains by phase index (Linux `bbr_pacing_gain`, in its order UP, DOWN,
/// CRUISE, REFILL). DOWN is the draft's 0.90 (section 5.3.3.1; Linux v3 has 0.91).
const PHASE_GAINS: [f64; 4] = [1.25, 0.90, 1.0, 1.0];
/// Draft BBRLossThresh / Linux `bbr_loss_thresh`: a loss rate above 2 % says in flight is too high.
const LOSS_THRESH: f64 = 0.02;
/// Draft BBRBeta / Linux `bbr_beta` (the cut is 30 %, what remains 0.7).
const BETA: f64 = 0.7;
/// Draft BBRHeadroom / Linux `bbr_inflight_headroom`: CRUISE leaves 15 % of `inflight_hi` free.
const HEADROOM: f64 = 0.15;
/// Linux `bbr_ecn_alpha_gain` (1/16), `bbr_ecn_alpha_init` (1), `bbr_ecn_factor` (1/3),
/// `bbr_ecn_thresh` (1/2), `bbr_ecn_reprobe_gain` (1/2), `bbr_ecn_max_rtt_us` (5 ms).
const ECN_ALPHA_GAIN: f64 = 1.0 / 16.0;
const ECN_FACTOR: f64 = 1.0 / 3.0;
const ECN_THRESH: f64 = 0.5;
const ECN_REPROBE_GAIN: f64 = 0.5;
const ECN_MAX_RTT: Dur = Dur(5_000_000);
/// Draft BBRStartupFullLossCnt / Linux `bbr_full_loss_cnt`; Linux `bbr_full_ecn_cnt`.
const FULL_LOSS_COUNT: u32 = 6;
const FULL_ECN_ROUNDS: u32 = 2;
/// Draft 5.3.3.5 / Linux `bbr_bw_probe_base_us`, `bbr_bw_probe_rand_us`: wall-clock time
/// between probes, 2 s plus up to 1 s drawn at random.
const PROBE_WAIT_BASE: Dur = Dur(2_000_000_000);
const PROBE_WAIT_RAND: Dur = Dur(1_000_000_000);
/// Linux `bbr_bw_probe_max_rounds`, `bbr_bw_probe_rand_rounds`: Reno-coexistence probing at
/// most every 63 rounds, the count starting at 0 or 1 at random.
const PROBE_MAX_ROUNDS: u64 = 63;
const PROBE_RAND_ROUNDS: u64 = 2;
/// Draft BBRProbeRTTInterval, BBRProbeRTTCwndGain (Linux `bbr_probe_rtt_win_ms`,
/// `bbr_probe_rtt_cwnd_gain`). The constants v3 shares with v1 are `bbr.rs`'s, imported above:
/// the min-RTT window and PROBE_RTT's duration, the full-pipe test, the smallest window, the
/// pacing margin, the send quantum, the RTT before samples, the ACK-aggregation cap.
const PROBE_RTT_INTERVAL: Dur = Dur(5_000_000_000);
const PROBE_RTT_CWND_GAIN: f64 = 0.5;
/// Linux `bbr_quantization_budget`: 2 segments more in UP.
const UP_EXTRA_SEGMENTS: u64 = 2;
/// Linux `bbr_raise_inflight_hi_slope`: the doubling stops at 2^30 segments per round.
const MAX_UP_ROUNDS: u32 = 30;
/// Linux `loss_events_in_round` is a 4-bit counter.
const MAX_LOSS_EVENTS: u32 = 15;

/// No bound (Linux's `~0U` for `inflight_hi`, `inflight_lo`, `bw_lo`).
const UNBOUNDED: u64 = u64::MAX;

/// The PROBE_BW phase, numbered as Linux's `cycle_idx` (the `pacing` table's `cycle_phase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Up = 0,
    Down = 1,
    Cruise = 2,
    Refill = 3,
}

/// Whose ACKs are arriving, relative to the probe (Linux `ack_phase`, draft BBR.ack_phase).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AckPhase {
    Init,
    Refilling,
    ProbeStarting,
    ProbeFeedback,
    ProbeStopping,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Bbr3Config {
    /// Initial window in segments; RFC 5681's 2-4 by segment size when absent.
    pub initial_window: Option<u64>,
    /// The loss rate above which in flight is too high (default 0.02).
    pub loss_thresh: f64,
    /// What the lower bounds keep of themselves each round with loss (default 0.7).
    pub beta: f64,
    /// ECN is acted on only while the min RTT is at most this (default 5 ms, Linux); 0: always.
    pub ecn_max_rtt: Dur,
}

impl Default for Bbr3Config {
    fn default() -> Self {
        Bbr3Config { initial_window: None, loss_thresh: LOSS_THRESH, beta: BETA, ecn_max_rtt: ECN_MAX_RTT }
    }
}

/// The congestion signals of the current round (Linux's `loss_in_round`, `bw_latest`, ...).
#[derive(Clone, Copy, Debug, Default)]
struct RoundSignals {
    loss_in_round: bool,
    ecn_in_round: bool,
    /// The highest delivery rate (bytes/s) and delivered volume (bytes) of the loss round.
    bw_latest: f64,
    inflight_latest: u64,
    /// Bytes marked lost since the round began: the numerator of the loss rate.
    lost: u64,
    /// Bytes cumulatively acknowledged, and of them CE-echoed, since the round began.
    acked: u64,
    ce: u64,
}

pub struct Bbr3 {
    initial_window: Option<u64>,
    loss_thresh: f64,
    beta: f64,
    ecn_max_rtt: Dur,
    rng: Option<Rng>,
    mode: Mode,
    phase: Phase,
    ack_phase: AckPhase,
    pacing_gain: f64,
    cwnd_gain: f64,
    pacing_rate: Option<BitRate>,
    has_seen_rtt: bool,
    /// bytes/s: the maxima of the previous and the current cycle; the short-term bound.
    bw_hi: [f64; 2],
    bw_lo: f64,
    inflight_hi: u64,
    inflight_lo: u64,
    signals: RoundSignals,
    aggregation: AckAggregation,
    min_rtt: Option<Dur>,
    min_rtt_stamp: Time,
    probe_rtt_min: Option<Dur>,
    probe_rtt_min_stamp: Time,
    probe_rtt_done: Option<Time>,
    probe_rtt_round_done: bool,
    round_count: u64,
    next_round_delivered: u64,
    round_start: bool,
    loss_round_delivered: u64,
    loss_round_start: bool,
    loss_events_in_round: u32,
    full_bw: f64,
    full_bw_count: u32,
    full_bw_now: bool,
    full_bw_reached: bool,
    cycle_stamp: Time,
    probe_wait: Dur,
    rounds_since_probe: u64,
    bw_probe_samples: bool,
    bw_probe_up_rounds: u32,
    bw_probe_up_acks: u64,
    /// Bytes acknowledged per segment `inflight_hi` grows by in UP; None outside UP.
    bw_probe_up_cnt: Option<u64>,
    prev_probe_too_high: bool,
    stopped_risky_probe: bool,
    loss_in_cycle: bool,
    ecn_in_cycle: bool,
    ecn_eligible: bool,
    ecn_seen: bool,
    ecn_alpha: f64,
    startup_ecn_rounds: u32,
    prior_cwnd: u64,
    prev_phase: CaPhase,
}

impl Bbr3 {
    pub fn new(cfg: &Bbr3Config) -> Result<Self, ConfigError> {
        if cfg.initial_window == Some(0) {
            return Err(ConfigError::new("initial_window", "must be at least one segment"));
        }
        if !(cfg.loss_thresh > 0.0 && cfg.loss_thresh < 1.0) {
            return Err(ConfigError::new("loss_thresh", format!("{} is outside (0, 1)", cfg.loss_thresh)));
        }
        if !(cfg.beta > 0.0 && cfg.beta < 1.0) {
            return Err(ConfigError::new("beta", format!("{} is outside (0, 1)", cfg.beta)));
        }
        Ok(Bbr3 {
            initial_window: cfg.initial_window,
            loss_thresh: cfg.loss_thresh,
            beta: cfg.beta,
            ecn_max_rtt: cfg.ecn_max_rtt,
            rng: None,
            mode: Mode::Startup,
            phase: Phase::Down,
            ack_phase: AckPhase::Init,
            pacing_gain: STARTUP_PACING_GAIN,
            cwnd_gain: STARTUP_CWND_GAIN,
            pacing_rate: None,
            has_seen_rtt: false,
            bw_hi: [0.0; 2],
            bw_lo: f64::INFINITY,
            inflight_hi: UNBOUNDED,
            inflight_lo: UNBOUNDED,
            signals: RoundSignals::default(),
            aggregation: AckAggregation::default(),
            min_rtt: None,
            min_rtt_stamp: Time::ZERO,
            probe_rtt_min: None,
            probe_rtt_min_stamp: Time::ZERO,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            round_count: 0,
            next_round_delivered: 0,
            round_start: false,
            // Linux `bbr_init`: the first loss round ends after the first flight is acknowledged.
            loss_round_delivered: 1,
            loss_round_start: false,
            loss_events_in_round: 0,
            full_bw: 0.0,
            full_bw_count: 0,
            full_bw_now: false,
            full_bw_reached: false,
            cycle_stamp: Time::ZERO,
            probe_wait: Dur::ZERO,
            rounds_since_probe: 0,
            bw_probe_samples: false,
            bw_probe_up_rounds: 0,
            bw_probe_up_acks: 0,
            bw_probe_up_cnt: None,
            prev_probe_too_high: false,
            stopped_risky_probe: false,
            loss_in_cycle: false,
            ecn_in_cycle: false,
            ecn_eligible: false,
            ecn_seen: false,
            ecn_alpha: 1.0,
            startup_ecn_rounds: 0,
            prior_cwnd: 0,
            prev_phase: CaPhase::Open,
        })
    }

    /// The maximum of the last two cycles' delivery rates, bytes/s (Linux `bbr_max_bw`).
    fn max_bw(&self) -> f64 {
        self.bw_hi[0].max(self.bw_hi[1])
    }

    /// The bandwidth the model uses: the maximum, bounded by `bw_lo` (Linux `bbr_bw`).
    pub fn bandwidth(&self) -> f64 {
        self.max_bw().min(self.bw_lo)
    }

    /// `inflight_hi` in bytes; None while unbounded.
    pub fn inflight_hi(&self) -> Option<u64> {
        (self.inflight_hi != UNBOUNDED).then_some(self.inflight_hi)
    }

    fn bdp(&self, bw: f64, gain: f64, mss: u64) -> u64 {
        match self.min_rtt {
            // Rounded up to whole segments, as Linux `bbr_bdp`.
            Some(rtt) => ((gain * bw * rtt.as_secs_f64() / mss as f64).ceil() as u64).saturating_mul(mss),
            None => self.initial_window.unwrap_or(rfc5681_initial_window(mss)) * mss,
        }
    }

    /// Draft 5.5.3: the data sent at once at the current pacing rate.
    fn send_quantum(&self, mss: u64) -> u64 {
        draft_send_quantum(self.pacing_rate, mss)
    }

    /// Draft BBRQuantizationBudget / Linux v3 `bbr_quantization_budget`: at least three send
    /// quanta and the minimum window, 2 segments more in UP.
    fn quantization_budget(&self, inflight: u64, mss: u64) -> u64 {
        let up = self.mode == Mode::ProbeBw && self.phase == Phase::Up;
        inflight.max(3 * self.send_quantum(mss)).max(MIN_CWND_SEGMENTS * mss)
            + if up { UP_EXTRA_SEGMENTS * mss } else { 0 }
    }

    /// Draft BBRInflight / Linux `bbr_inflight`.
    fn inflight(&self, bw: f64, gain: f64, mss: u64) -> u64 {
        self.quantization_budget(self.bdp(bw, gain, mss), mss)
    }

    /// Linux `bbr_target_inflight`: the BDP, unless congestion cut the window below it.
    fn target_inflight(&self, w: &Window) -> u64 {
        self.inflight(self.bandwidth(), 1.0, w.mss).min(w.cwnd)
    }

    /// Draft BBRInflightWithHeadroom / Linux `bbr_inflight_with_headroom`.
    fn inflight_with_headroom(&self, mss: u64) -> u64 {
        if self.inflight_hi == UNBOUNDED {
            return UNBOUNDED;
        }
        let headroom = ((HEADROOM * self.inflight_hi as f64) as u64).max(1);
        self.inflight_hi.saturating_sub(headroom).max(MIN_CWND_SEGMENTS * mss)
    }

    fn is_probing_bandwidth(&self) -> bool {
        self.mode == Mode::Startup || (self.mode == Mode::ProbeBw && matches!(self.phase, Phase::Refill | Phase::Up))
    }
}

/// The congestion signals: rounds, loss and ECN bookkeeping, the bandwidth filters.
impl Bbr3 {
    /// Linux `bbr_update_round_start`.
    fn update_round(&mut self, rs: &RateSample) {
        self.round_start = false;
        if rs.interval.is_some() && rs.prior_delivered >= self.next_round_delivered {
            self.next_round_delivered = rs.total_delivered;
            self.round_count += 1;
            self.round_start = true;
        }
    }

    /// Linux `bbr_update_ecn_alpha`, once per round: the CE-marked share of the round's
    /// acknowledged bytes, folded into α with gain 1/16; None while ECN is not in use.
    fn update_ecn_alpha(&mut self) -> Option<f64> {
        let eligible_rtt = self.ecn_max_rtt.is_zero() || self.min_rtt.is_some_and(|m| m <= self.ecn_max_rtt);
        self.ecn_eligible |= self.ecn_seen && eligible_rtt;
        let (acked, ce) = (self.signals.acked, self.signals.ce);
        self.signals.acked = 0;
        self.signals.ce = 0;
        if !self.ecn_eligible || acked == 0 {
            return None;
        }
        let ratio = ce as f64 / acked as f64;
        self.ecn_alpha = ((1.0 - ECN_ALPHA_GAIN) * self.ecn_alpha + ECN_ALPHA_GAIN * ratio).min(1.0);
        Some(ratio)
    }

    /// Linux `bbr_update_latest_delivery_signals` and `bbr_note_loss`: the round's highest
    /// rate and volume delivered, and the loss round (restarted at its first loss).
    fn update_latest_delivery_signals(&mut self, rs: &RateSample, sample_bw: Option<f64>) {
        self.loss_round_start = false;
        if rs.losses > 0 {
            if !self.signals.loss_in_round {
                self.loss_round_delivered = rs.total_delivered;
            }
            self.signals.loss_in_round = true;
            self.loss_in_cycle = true;
        }
        let Some(bw) = sample_bw.filter(|_| rs.acked_sacked > 0) else { return };
        self.signals.bw_latest = self.signals.bw_latest.max(bw);
        self.signals.inflight_latest = self.signals.inflight_latest.max(rs.delivered);
        if rs.prior_delivered >= self.loss_round_delivered {
            self.loss_round_delivered = rs.total_delivered;
            self.loss_round_start = true;
        }
    }

    /// Linux `bbr_update_congestion_signals`: the bandwidth sample into this cycle's maximum,
    /// and once per loss round the lower bounds.
    fn update_congestion_signals(&mut self, rs: &RateSample, sample_bw: Option<f64>, w: &Window) {
        let Some(bw) = sample_bw.filter(|_| rs.acked_sacked > 0) else { return };
        if !rs.app_limited || bw >= self.max_bw() {
            self.bw_hi[1] = self.bw_hi[1].max(bw);
        }
        if !self.loss_round_start {
            return;
        }
        self.adapt_lower_bounds(w);
        self.signals.loss_in_round = false;
        self.signals.ecn_in_round = false;
    }

    /// Draft BBRAdaptLowerBoundsFromCongestion / Linux `bbr_adapt_lower_bounds`: outside
    /// probing, a round with ECN marks cuts `inflight_lo` by α/3, a round with loss cuts both
    /// bounds to β of themselves, but not below what the round delivered.
    fn adapt_lower_bounds(&mut self, w: &Window) {
        if self.is_probing_bandwidth() {
            return;
        }
        let mut ecn_inflight_lo = UNBOUNDED;
        if self.signals.ecn_in_round {
            self.init_lower_bounds(w, false);
            ecn_inflight_lo = (self.inflight_lo as f64 * (1.0 - self.ecn_alpha * ECN_FACTOR)) as u64;
        }
        if self.signals.loss_in_round {
            self.init_lower_bounds(w, true);
            self.bw_lo = self.signals.bw_latest.max(self.bw_lo * self.beta);
            self.inflight_lo = self.signals.inflight_latest.max((self.inflight_lo as f64 * self.beta) as u64);
        }
        self.inflight_lo = self.inflight_lo.min(ecn_inflight_lo);
    }

    fn init_lower_bounds(&mut self, w: &Window, bw_too: bool) {
        if bw_too && self.bw_lo.is_infinite() {
            self.bw_lo = self.max_bw();
        }
        if self.inflight_lo == UNBOUNDED {
            self.inflight_lo = w.cwnd;
        }
    }

    fn reset_lower_bounds(&mut self) {
        self.bw_lo = f64::INFINITY;
        self.inflight_lo = UNBOUNDED;
    }

    /// Linux `bbr_reset_congestion_signals`.
    fn reset_congestion_signals(&mut self) {
        let (lost, acked, ce) = (self.signals.lost, self.signals.acked, self.signals.ce);
        self.signals = RoundSignals { lost, acked, ce, ..RoundSignals::default() };
        self.loss_in_cycle = false;
        self.ecn_in_cycle = false;
    }

    /// Linux `bbr_advance_max_bw_filter`: each cycle opens a new slot, if the last had samples.
    fn advance_max_bw_filter(&mut self) {
        if self.bw_hi[1] > 0.0 {
            self.bw_hi = [self.bw_hi[1], 0.0];
        }
    }

    /// Draft IsInflightTooHigh / Linux `bbr_is_inflight_too_high`: the bytes lost since the
    /// round began above 2 % of the in flight before this ACK (Linux: of the sampled packet's
    /// `tx_in_flight`), or the last round's CE share above one half.
    fn is_inflight_too_high(&self, rs: &RateSample, ce_ratio: Option<f64>) -> bool {
        let lossy = self.signals.lost > 0 && self.signals.lost as f64 > self.loss_thresh * rs.prior_inflight as f64;
        lossy || ce_ratio.is_some_and(|r| r > ECN_THRESH)
    }
}

/// STARTUP and DRAIN.
impl Bbr3 {
    /// Linux `bbr_reset_full_bw`.
    fn reset_full_bw(&mut self) {
        self.full_bw = 0.0;
        self.full_bw_count = 0;
        self.full_bw_now = false;
    }

    /// Linux v3 `bbr_check_full_bw_reached`: three rounds in a row whose samples stay below
    /// 1.25 × the rate that last grew by that much.
    fn check_full_bw(&mut self, rs: &RateSample, sample_bw: Option<f64>) {
        if self.full_bw_now || rs.app_limited {
            return;
        }
        let bw = sample_bw.unwrap_or(0.0);
        if bw >= self.full_bw * FULL_BW_GROWTH {
            self.reset_full_bw();
            self.full_bw = bw;
            return;
        }
        if !self.round_start {
            return;
        }
        self.full_bw_count += 1;
        self.full_bw_now = self.full_bw_count >= FULL_BW_ROUNDS;
        self.full_bw_reached |= self.full_bw_now;
    }

    /// Draft BBRCheckStartupHighLoss / Linux `bbr_check_loss_too_high_in_startup`: at the end
    /// of a round of recovery with six loss events or more and too high a loss rate.
    fn check_startup_loss(&mut self, rs: &RateSample, w: &Window, ce_ratio: Option<f64>) {
        if self.full_bw_reached {
            return;
        }
        if rs.losses > 0 {
            self.loss_events_in_round = (self.loss_events_in_round + 1).min(MAX_LOSS_EVENTS);
        }
        if self.loss_round_start
            && rs.phase == CaPhase::Recovery
            && self.loss_events_in_round >= FULL_LOSS_COUNT
            && self.is_inflight_too_high(rs, ce_ratio)
        {
            self.queue_too_high_in_startup(w.mss);
            return;
        }
        if self.loss_round_start {
            self.loss_events_in_round = 0;
        }
    }

    /// Linux `bbr_check_ecn_too_high_in_startup`: two rounds in a row with at least half the
    /// data CE-marked.
    fn check_startup_ecn(&mut self, ce_ratio: Option<f64>, mss: u64) {
        let Some(ratio) = ce_ratio.filter(|_| !self.full_bw_reached) else { return };
        self.startup_ecn_rounds = if ratio >= ECN_THRESH { self.startup_ecn_rounds + 1 } else { 0 };
        if self.startup_ecn_rounds >= FULL_ECN_ROUNDS {
            self.queue_too_high_in_startup(mss);
        }
    }

    /// Linux `bbr_handle_queue_too_high_in_startup`: the pipe is full, and `inflight_hi` is
    /// the BDP or what the round delivered, the larger.
    fn queue_too_high_in_startup(&mut self, mss: u64) {
        self.full_bw_reached = true;
        self.inflight_hi = self.inflight(self.max_bw(), 1.0, mss).max(self.signals.inflight_latest);
    }

    /// Linux `bbr_check_drain`.
    fn check_drain(&mut self, w: &mut Window, rs: &RateSample) {
        let one_bdp = self.inflight(self.max_bw(), 1.0, w.mss);
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            w.ssthresh = one_bdp;
            self.reset_congestion_signals();
        }
        if self.mode == Mode::Drain && inflight_at_control(rs) <= one_bdp {
            self.mode = Mode::ProbeBw;
            self.start_down(rs);
        }
    }
}

/// PROBE_BW's cycle and the upper bounds.
impl Bbr3 {
    /// Linux `bbr_pick_probe_wait`: 0 or 1 rounds already counted, 2-3 s of wall clock.
    fn pick_probe_wait(&mut self) {
        let (rounds, frac) = match self.rng.as_mut() {
            Some(r) => (r.range_inclusive(0, PROBE_RAND_ROUNDS - 1), r.uniform()),
            None => (0, 0.0),
        };
        self.rounds_since_probe = rounds;
        self.probe_wait = PROBE_WAIT_BASE + Dur::from_secs_f64(frac * PROBE_WAIT_RAND.as_secs_f64());
    }

    /// Linux `bbr_start_bw_probe_down`: a new cycle.
    fn start_down(&mut self, rs: &RateSample) {
        self.reset_congestion_signals();
        self.bw_probe_up_cnt = None;
        self.pick_probe_wait();
        self.cycle_stamp = rs.now;
        self.ack_phase = AckPhase::ProbeStopping;
        self.next_round_delivered = rs.total_delivered;
        self.phase = Phase::Down;
    }

    /// Linux `bbr_start_bw_probe_cruise`.
    fn start_cruise(&mut self) {
        if self.inflight_lo != UNBOUNDED {
            self.inflight_lo = self.inflight_lo.min(self.inflight_hi);
        }
        self.phase = Phase::Cruise;
    }

    /// Linux `bbr_start_bw_probe_refill`: clear the lower bounds, refill for one round.
    fn start_refill(&mut self, up_rounds: u32, rs: &RateSample) {
        self.reset_lower_bounds();
        self.bw_probe_up_rounds = up_rounds;
        self.bw_probe_up_acks = 0;
        self.stopped_risky_probe = false;
        self.ack_phase = AckPhase::Refilling;
        self.next_round_delivered = rs.total_delivered;
        self.phase = Phase::Refill;
    }

    /// Linux `bbr_start_bw_probe_up`.
    fn start_up(&mut self, rs: &RateSample, sample_bw: Option<f64>, w: &Window) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.next_round_delivered = rs.total_delivered;
        self.cycle_stamp = rs.now;
        self.reset_full_bw();
        self.full_bw = sample_bw.unwrap_or(0.0);
        self.phase = Phase::Up;
        self.raise_inflight_hi_slope(w);
    }

    /// Linux `bbr_raise_inflight_hi_slope`: 2^n segments more per round in the n-th round of UP.
    fn raise_inflight_hi_slope(&mut self, w: &Window) {
        let growth_this_round = 1u64 << self.bw_probe_up_rounds;
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(MAX_UP_ROUNDS);
        self.bw_probe_up_cnt = Some((w.cwnd / w.mss / growth_this_round).max(1) * w.mss);
    }

    /// Linux `bbr_probe_inflight_hi_upward`: while the window is in use up to `inflight_hi`,
    /// one segment more per `bw_probe_up_cnt` bytes acknowledged.
    fn probe_inflight_hi_upward(&mut self, rs: &RateSample, w: &Window) {
        let cwnd_limited = rs.prior_inflight + w.mss >= w.cwnd;
        if !cwnd_limited || w.cwnd < self.inflight_hi {
            return;
        }
        let cnt = self.bw_probe_up_cnt.unwrap_or(UNBOUNDED);
        self.bw_probe_up_acks += rs.acked_sacked;
        if self.bw_probe_up_acks >= cnt {
            let delta = self.bw_probe_up_acks / cnt;
            self.bw_probe_up_acks -= delta * cnt;
            self.inflight_hi = self.inflight_hi.saturating_add(delta * w.mss);
        }
        if self.round_start {
            self.raise_inflight_hi_slope(w);
        }
    }

    /// Draft BBRHandleInflightTooHigh / Linux `bbr_handle_inflight_too_high`: once per probe,
    /// `inflight_hi` = max(in flight at the loss, β × target in flight); UP ends.
    fn handle_inflight_too_high(&mut self, rs: &RateSample, w: &Window) {
        self.prev_probe_too_high = true;
        self.bw_probe_samples = false;
        if !rs.app_limited {
            let floor = (self.target_inflight(w) as f64 * self.beta) as u64;
            self.inflight_hi = rs.prior_inflight.max(floor);
        }
        if self.mode == Mode::ProbeBw && self.phase == Phase::Up {
            self.start_down(rs);
        }
    }

    /// Draft BBRAdaptUpperBounds / Linux `bbr_adapt_upper_bounds`; true if it changed phase.
    fn adapt_upper_bounds(&mut self, rs: &RateSample, w: &Window, ce_ratio: Option<f64>) -> bool {
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            // The probe's samples are over: forget the previous cycle's bandwidth.
            self.bw_probe_samples = false;
            self.ack_phase = AckPhase::Init;
            if self.mode == Mode::ProbeBw && !rs.app_limited {
                self.advance_max_bw_filter();
            }
            if self.mode == Mode::ProbeBw && self.stopped_risky_probe && !self.prev_probe_too_high {
                self.start_refill(0, rs);
                return true;
            }
        }
        if self.is_inflight_too_high(rs, ce_ratio) {
            if self.bw_probe_samples {
                self.handle_inflight_too_high(rs, w);
            }
        } else if self.inflight_hi != UNBOUNDED {
            self.inflight_hi = self.inflight_hi.max(rs.prior_inflight);
            if self.mode == Mode::ProbeBw && self.phase == Phase::Up {
                self.probe_inflight_hi_upward(rs, w);
            }
        }
        false
    }

    /// Linux `bbr_check_time_to_probe_bw`: reprobe soon after ECN marks cease, else after the
    /// drawn wall-clock wait or as many rounds as a Reno flow of this BDP takes (at most 63).
    fn check_time_to_probe(&mut self, rs: &RateSample, w: &Window) -> bool {
        if self.ecn_eligible && self.ecn_in_cycle && !self.loss_in_cycle && rs.phase == CaPhase::Open {
            let segments = (self.inflight_hi as f64 * ECN_REPROBE_GAIN / w.mss as f64).max(1.0);
            self.start_refill(segments.log2().floor() as u32, rs);
            return true;
        }
        let reno_rounds = PROBE_MAX_ROUNDS.min(self.target_inflight(w) / w.mss);
        let waited = rs.now.saturating_sub(self.cycle_stamp) > self.probe_wait;
        if waited || self.rounds_since_probe >= reno_rounds {
            self.start_refill(0, rs);
            return true;
        }
        false
    }

    /// Linux `bbr_update_cycle_phase`.
    fn update_cycle_phase(&mut self, rs: &RateSample, sample_bw: Option<f64>, w: &Window, ce_ratio: Option<f64>) {
        if !self.full_bw_reached || self.adapt_upper_bounds(rs, w, ce_ratio) || self.mode != Mode::ProbeBw {
            return;
        }
        let inflight = rs.prior_inflight;
        let bw = self.max_bw();
        match self.phase {
            Phase::Cruise => {
                self.check_time_to_probe(rs, w);
            }
            Phase::Refill => {
                if self.round_start {
                    self.bw_probe_samples = true;
                    self.start_up(rs, sample_bw, w);
                }
            }
            Phase::Up => self.check_up_done(rs, sample_bw, w),
            Phase::Down => {
                if !self.check_time_to_probe(rs, w)
                    && inflight <= self.inflight_with_headroom(w.mss)
                    && inflight <= self.inflight(bw, 1.0, w.mss)
                {
                    self.start_cruise();
                }
            }
        }
    }

    /// When UP ends (Linux, draft BBRIsTimeToGoDown): in flight back at an `inflight_hi` that
    /// was too high before, or a plateau of the delivery rate while `inflight_hi` is not what
    /// limits it (BBR v2's end at 1.25 BDP after a min RTT is gone in v3).
    fn check_up_done(&mut self, rs: &RateSample, sample_bw: Option<f64>, w: &Window) {
        let inflight = rs.prior_inflight;
        let mut done = false;
        if self.prev_probe_too_high && inflight >= self.inflight_hi {
            self.stopped_risky_probe = true;
            done = true;
        } else if rs.prior_inflight + w.mss >= w.cwnd && w.cwnd >= self.inflight_hi {
            // inflight_hi, not the path, limits the rate: no plateau yet.
            self.reset_full_bw();
            self.full_bw = sample_bw.unwrap_or(0.0);
        } else if self.full_bw_now {
            done = true;
        }
        if done {
            self.prev_probe_too_high = false;
            self.start_down(rs);
        }
    }
}

/// The min RTT and PROBE_RTT, the gains, the pacing rate and the window.
impl Bbr3 {
    /// Linux v3 `bbr_update_min_rtt`: the 5 s minimum schedules PROBE_RTT, the 10 s one is
    /// the model's; returns true while samples are to be marked app-limited.
    fn update_min_rtt(&mut self, w: &mut Window, rs: &RateSample) -> bool {
        let probe_rtt_expired = rs.now > self.probe_rtt_min_stamp + PROBE_RTT_INTERVAL;
        if let Some(rtt) = rs.rtt {
            if self.probe_rtt_min.is_none_or(|m| rtt < m) || probe_rtt_expired {
                self.probe_rtt_min = Some(rtt);
                self.probe_rtt_min_stamp = rs.now;
            }
        }
        let min_rtt_expired = rs.now > self.min_rtt_stamp + MIN_RTT_WINDOW;
        if let Some(p) = self.probe_rtt_min {
            if self.min_rtt.is_none_or(|m| p <= m) || min_rtt_expired {
                self.min_rtt = Some(p);
                self.min_rtt_stamp = self.probe_rtt_min_stamp;
            }
        }
        if probe_rtt_expired && self.mode != Mode::ProbeRtt && self.probe_rtt_min.is_some() {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(w);
            self.probe_rtt_done = None;
            self.ack_phase = AckPhase::ProbeStopping;
            self.next_round_delivered = rs.total_delivered;
        }
        if self.mode != Mode::ProbeRtt {
            return false;
        }
        match self.probe_rtt_done {
            None if inflight_at_control(rs) <= self.probe_rtt_cwnd(w.mss) => {
                self.probe_rtt_done = Some(rs.now + PROBE_RTT_DURATION);
                self.probe_rtt_round_done = false;
                self.next_round_delivered = rs.total_delivered;
            }
            None => {}
            Some(done) => {
                self.probe_rtt_round_done |= self.round_start;
                if self.probe_rtt_round_done && rs.now > done {
                    self.probe_rtt_min_stamp = rs.now;
                    w.cwnd = w.cwnd.max(self.prior_cwnd);
                    self.exit_probe_rtt(rs);
                }
            }
        }
        self.mode == Mode::ProbeRtt
    }

    /// Linux `bbr_exit_probe_rtt`: to CRUISE through a new cycle, or back to STARTUP.
    fn exit_probe_rtt(&mut self, rs: &RateSample) {
        self.reset_lower_bounds();
        if self.full_bw_reached {
            self.mode = Mode::ProbeBw;
            self.start_down(rs);
            self.start_cruise();
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// Draft BBRProbeRTTCwnd / Linux `bbr_probe_rtt_cwnd`: half a BDP, at least 4 segments.
    fn probe_rtt_cwnd(&self, mss: u64) -> u64 {
        self.bdp(self.bandwidth(), PROBE_RTT_CWND_GAIN, mss).max(MIN_CWND_SEGMENTS * mss)
    }

    /// Linux `bbr_save_cwnd`.
    fn save_cwnd(&mut self, w: &Window) {
        if self.prev_phase < CaPhase::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = w.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(w.cwnd);
        }
    }

    /// Linux `bbr_update_gains`.
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (STARTUP_PACING_GAIN, STARTUP_CWND_GAIN),
            Mode::Drain => (DRAIN_PACING_GAIN, STARTUP_CWND_GAIN),
            Mode::ProbeBw if self.phase == Phase::Up => (PHASE_GAINS[Phase::Up as usize], UP_CWND_GAIN),
            Mode::ProbeBw => (PHASE_GAINS[self.phase as usize], CWND_GAIN),
            Mode::ProbeRtt => (1.0, 1.0),
        };
    }

    fn rate_of(bytes_per_sec: f64, gain: f64) -> BitRate {
        BitRate((bytes_per_sec * 8.0 * gain * (1.0 - PACING_MARGIN)) as u64)
    }

    /// Linux `bbr_set_pacing_rate` with `bbr_init_pacing_rate_from_rtt`: in STARTUP the rate
    /// only rises.
    fn set_pacing_rate(&mut self, rs: &RateSample, w: &Window) {
        if self.pacing_rate.is_none() {
            let iw = (self.initial_window(w.mss) * w.mss) as f64;
            self.pacing_rate = Some(Self::rate_of(iw / RTT_BEFORE_SAMPLES.as_secs_f64(), STARTUP_PACING_GAIN));
        }
        if !self.has_seen_rtt {
            if let Some(srtt) = rs.srtt.filter(|d| !d.is_zero()) {
                self.has_seen_rtt = true;
                let rate = Self::rate_of(w.cwnd as f64 / srtt.as_secs_f64(), STARTUP_PACING_GAIN);
                self.pacing_rate = Some(rate);
            }
        }
        let bw = self.bandwidth();
        if bw <= 0.0 {
            return;
        }
        let rate = Self::rate_of(bw, self.pacing_gain);
        if self.full_bw_reached || self.pacing_rate.is_none_or(|r| rate > r) {
            self.pacing_rate = Some(rate);
        }
    }

    /// Linux `bbr_ack_aggregation_cwnd`: the measured aggregation, at most 100 ms of the
    /// bandwidth.
    fn aggregation_allowance(&self) -> u64 {
        let cap = self.bandwidth() * EXTRA_ACKED_MAX.as_secs_f64();
        (self.aggregation.extra_acked() as f64).min(cap) as u64
    }

    /// Linux v3 `bbr_set_cwnd`: toward `cwnd_gain` BDPs plus the aggregation allowance,
    /// growing by what each ACK delivers; in PROBE_RTT at most half a BDP.
    fn set_cwnd(&mut self, w: &mut Window, rs: &RateSample) {
        if rs.acked_sacked > 0 {
            let bdp = self.bdp(self.bandwidth(), self.cwnd_gain, w.mss);
            let target = self.quantization_budget(bdp + self.aggregation_allowance(), w.mss);
            let init_cwnd = self.initial_window(w.mss) * w.mss;
            if self.full_bw_reached {
                w.cwnd = (w.cwnd + rs.acked_sacked).min(target);
            } else if w.cwnd < target || w.cwnd < 2 * init_cwnd {
                w.cwnd += rs.acked_sacked;
            }
            w.cwnd = w.cwnd.max(MIN_CWND_SEGMENTS * w.mss);
        }
        if self.mode == Mode::ProbeRtt {
            w.cwnd = w.cwnd.min(self.probe_rtt_cwnd(w.mss));
        }
    }

    /// Draft BBRBoundCwndForModel / Linux `bbr_bound_cwnd_for_inflight_model`.
    fn bound_cwnd_for_model(&self, w: &mut Window) {
        let mut cap = match (self.mode, self.phase) {
            (Mode::ProbeBw, Phase::Cruise) | (Mode::ProbeRtt, _) => self.inflight_with_headroom(w.mss),
            (Mode::ProbeBw, _) => self.inflight_hi,
            _ => UNBOUNDED,
        };
        cap = cap.min(self.inflight_lo).max(MIN_CWND_SEGMENTS * w.mss);
        w.cwnd = w.cwnd.min(cap);
    }

    /// Linux `bbr_set_state`: a timeout restarts the full-bandwidth search and, outside
    /// probing, seeds `inflight_lo` with the window before it; leaving its loss state restores
    /// the saved window.
    fn on_loss_state(&mut self, w: &mut Window, rs: &RateSample) {
        if rs.phase == CaPhase::Loss && self.prev_phase != CaPhase::Loss {
            self.prev_phase = CaPhase::Loss;
            self.reset_full_bw();
            if !self.is_probing_bandwidth() && self.inflight_lo == UNBOUNDED {
                self.inflight_lo = w.cwnd.max(self.prior_cwnd);
            }
        } else if self.prev_phase == CaPhase::Loss && rs.phase != CaPhase::Loss {
            w.cwnd = w.cwnd.max(self.prior_cwnd);
        }
    }
}

impl Bbr3 {
    /// One ACK: Linux v3 `bbr_main` (`cong_control`). Sets the window in every state and
    /// returns the pacing rate.
    fn control(&mut self, w: &mut Window, s: &AckSample, rs: &RateSample) -> AckResponse {
        self.on_loss_state(w, rs);
        self.update_round(rs);
        let ce_ratio = if self.round_start {
            self.rounds_since_probe = (self.rounds_since_probe + 1).min(255);
            self.update_ecn_alpha()
        } else {
            None
        };
        let ece = s.ece_bytes > 0;
        self.ecn_seen |= ece;
        self.signals.ecn_in_round |= self.ecn_eligible && ece;
        self.signals.acked += s.acked;
        self.signals.ce += s.ece_bytes;
        self.signals.lost = if self.round_start { rs.losses } else { self.signals.lost + rs.losses };
        let sample_bw = rs.interval.map(|i| rs.delivered as f64 / i.as_secs_f64());
        self.update_latest_delivery_signals(rs, sample_bw);
        self.update_model(w, rs, sample_bw, ce_ratio);
        let app_limited = self.update_min_rtt(w, rs);
        self.update_gains();
        self.set_pacing_rate(rs, w);
        self.set_cwnd(w, rs);
        self.bound_cwnd_for_model(w);
        if self.loss_round_start {
            // Linux `bbr_advance_latest_delivery_signals`.
            self.signals.bw_latest = sample_bw.unwrap_or(0.0);
            self.signals.inflight_latest = rs.delivered;
        }
        self.prev_phase = rs.phase;
        self.ecn_in_cycle |= ece;
        AckResponse { pacing_rate: self.pacing_rate, app_limited }
    }

    /// Linux v3 `bbr_update_model` (the min-RTT filter runs after it, in `control`).
    fn update_model(&mut self, w: &mut Window, rs: &RateSample, sample_bw: Option<f64>, ce_ratio: Option<f64>) {
        self.update_congestion_signals(rs, sample_bw, w);
        if rs.acked_sacked > 0 && rs.interval.is_some() {
            let bw = self.bandwidth();
            self.aggregation.update(rs.now, rs.acked_sacked, self.round_start, bw, w.cwnd, w.mss);
        }
        self.check_startup_loss(rs, w, ce_ratio);
        self.check_startup_ecn(ce_ratio, w.mss);
        self.check_full_bw(rs, sample_bw);
        self.check_drain(w, rs);
        self.update_cycle_phase(rs, sample_bw, w, ce_ratio);
    }
}

impl CongestionControl for Bbr3 {
    /// Accurate ECN feedback (Linux v3 asks for per-segment CE echo, `precise_ece_ack`), so
    /// that the CE-marked share of the data can be counted; ECN itself is the flow's choice.
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            rate_samples: true,
            linux_cong_control: true,
            ecn_feedback: EcnFeedback::Accurate,
            ..Capabilities::window(Recovery::NewReno)
        }
    }
    fn initial_window(&self, mss: u64) -> u64 {
        self.initial_window.unwrap_or_else(|| rfc5681_initial_window(mss))
    }
    #[inline]
    fn on_ack(&mut self, w: &mut Window, s: &AckSample) -> AckResponse {
        s.rate.map_or_else(AckResponse::default, |rs| self.control(w, s, rs))
    }
    /// Linux v3 `bbr_ssthresh`: save the window, leave it (the model answers the loss).
    fn on_congestion(&mut self, w: &Window, _signal: Signal) -> u64 {
        self.save_cwnd(w);
        w.cwnd
    }
    fn take_random_stream(&mut self, rng: Rng) {
        self.rng = Some(rng);
    }
    fn metrics(&self) -> Option<ControllerMetrics> {
        let bw = self.bandwidth();
        Some(ControllerMetrics {
            pacing_rate: self.pacing_rate.unwrap_or(BitRate(0)),
            bandwidth: BitRate(if bw.is_finite() { (bw * 8.0) as u64 } else { 0 }),
            min_rtt: self.min_rtt,
            mode: self.mode as u8,
            cycle_phase: if self.mode == Mode::ProbeBw { self.phase as u8 } else { 0 },
            pacing_gain: self.pacing_gain,
            cwnd_gain: self.cwnd_gain,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;
    const RTT: Dur = Dur(100_000_000);

    /// One ACK a round: 10 segments delivered over 100 ms (100 KB/s), 10 in flight.
    fn round_sample(k: u64) -> RateSample {
        RateSample {
            now: Time(k * RTT.0),
            delivered: 10 * MSS,
            interval: Some(RTT),
            prior_delivered: (k - 1) * 10 * MSS,
            total_delivered: k * 10 * MSS,
            acked_sacked: MSS,
            rtt: Some(RTT),
            srtt: Some(RTT),
            inflight: 10 * MSS,
            prior_inflight: 10 * MSS,
            ..RateSample::default()
        }
    }

    fn window(cwnd_segments: u64) -> Window {
        Window { cwnd: cwnd_segments * MSS, ssthresh: u64::MAX, mss: MSS, flight: 0, peer_window: u64::MAX }
    }

    /// A flow past STARTUP with BtlBw 100 KB/s and a min RTT of 100 ms, starting a cycle at
    /// t = 0 (no random stream: a 2 s wait, no round counted in advance).
    fn in_probe_bw() -> Bbr3 {
        let mut b = Bbr3::new(&Bbr3Config { initial_window: Some(10), ..Default::default() }).unwrap();
        b.mode = Mode::ProbeBw;
        (b.full_bw_reached, b.full_bw_now) = (true, true);
        b.bw_hi = [100_000.0, 0.0];
        (b.min_rtt, b.probe_rtt_min) = (Some(RTT), Some(RTT));
        b.pacing_rate = Some(BitRate(800_000));
        b.has_seen_rtt = true;
        b.start_down(&RateSample::default());
        b
    }

    fn ack(b: &mut Bbr3, w: &mut Window, rs: &RateSample) {
        b.control(w, &AckSample { now: rs.now, acked: rs.acked_sacked, ..AckSample::default() }, rs);
    }

    /// A clean path, one ACK a round: DOWN ends on the first ACK (in flight is one BDP);
    /// CRUISE lasts until as many rounds as the BDP has segments (10, Linux's Reno-coexistence
    /// bound, shorter here than the 2 s wall-clock wait); REFILL one round; UP until three
    /// rounds without 25 % growth; then DOWN, and CRUISE again. Gains by phase: DOWN 0.9,
    /// CRUISE and REFILL 1, UP 1.25 with cwnd gain 2.25, else 2.
    #[test]
    fn the_probe_bw_cycle_on_a_clean_path_follows_the_draft() {
        let mut b = in_probe_bw();
        let mut w = window(20);
        assert_eq!((b.phase, b.probe_wait), (Phase::Down, PROBE_WAIT_BASE));
        let mut trace = vec![];
        for k in 1..=15 {
            ack(&mut b, &mut w, &round_sample(k));
            trace.push((b.phase, b.pacing_gain, b.cwnd_gain));
        }
        let (c, r, u, d) =
            ((Phase::Cruise, 1.0, 2.0), (Phase::Refill, 1.0, 2.0), (Phase::Up, 1.25, 2.25), (Phase::Down, 0.9, 2.0));
        assert_eq!(trace, vec![c, c, c, c, c, c, c, c, c, r, u, u, u, d, c]);
        assert_eq!(b.metrics().unwrap().cycle_phase, Phase::Cruise as u8);
        assert_eq!(b.inflight_hi(), None, "no loss, no upper bound");
    }

    /// UP with 8 segments in flight and 1 lost (12.5 % > 2 %): `inflight_hi` = max(in flight,
    /// 0.7 × target in flight) where the target is min(BDP + UP's 2 segments, cwnd) =
    /// min(12, 20) segments: max(8000, 8400) = 8400 B, and UP gives way to DOWN. With 20 in
    /// flight the in-flight is the larger: 20,000 B.
    #[test]
    fn a_lossy_probe_sets_inflight_hi_and_ends_up() {
        for (inflight_segments, expected) in [(8, 8400), (20, 20_000)] {
            let mut b = in_probe_bw();
            let mut w = window(20);
            let rs = round_sample(1);
            b.start_refill(0, &rs);
            b.bw_probe_samples = true;
            b.start_up(&rs, Some(100_000.0), &w);
            let mut lossy = round_sample(2);
            lossy.prior_inflight = inflight_segments * MSS;
            lossy.losses = MSS;
            ack(&mut b, &mut w, &lossy);
            assert_eq!(b.inflight_hi(), Some(expected), "{inflight_segments} segments in flight");
            assert_eq!(b.phase, Phase::Down);
            assert!(!b.bw_probe_samples, "once per probe");
            assert!(w.cwnd <= expected, "DOWN's cwnd is capped by inflight_hi: {}", w.cwnd);
        }
    }

    /// A loss below 2 % of what is in flight does not end UP: 1 segment of 60 in flight.
    #[test]
    fn a_loss_rate_below_two_percent_leaves_up_alone() {
        let mut b = in_probe_bw();
        let mut w = window(60);
        let rs = round_sample(1);
        b.start_refill(0, &rs);
        b.bw_probe_samples = true;
        b.start_up(&rs, Some(100_000.0), &w);
        let mut rs = round_sample(2);
        rs.prior_inflight = 60 * MSS;
        rs.losses = MSS;
        ack(&mut b, &mut w, &rs);
        assert_eq!((b.phase, b.inflight_hi()), (Phase::Up, None));
    }

    /// A round with loss outside probing (CRUISE): at the next loss-round start the lower
    /// bounds are max(latest, 0.7 × bound): bw_lo = max(50 KB/s, 0.7 × 100 KB/s) = 70 KB/s,
    /// inflight_lo = max(5000 B, 0.7 × cwnd), and the window is capped by it.
    #[test]
    fn a_lossy_round_outside_probing_cuts_the_lower_bounds_by_beta() {
        let mut b = in_probe_bw();
        let mut w = window(20);
        ack(&mut b, &mut w, &round_sample(1));
        assert_eq!(b.phase, Phase::Cruise);
        b.signals = RoundSignals::default();
        let half_rate = |k: u64| RateSample { delivered: 5 * MSS, ..round_sample(k) };
        let mut lossy = half_rate(2);
        lossy.losses = MSS;
        ack(&mut b, &mut w, &lossy);
        assert_eq!(b.inflight_lo, UNBOUNDED, "the bounds move once the loss round ends");
        let cwnd_before = w.cwnd;
        ack(&mut b, &mut w, &half_rate(3));
        assert_eq!(b.bw_lo, 70_000.0);
        assert_eq!(b.inflight_lo, 5000u64.max((cwnd_before as f64 * 0.7) as u64));
        assert_eq!(b.bandwidth(), 70_000.0);
        assert!(w.cwnd <= b.inflight_lo);
    }

    /// ECN, once the flow has seen an ECN-Echo and its min RTT is within 5 ms: a round with
    /// every byte CE-marked keeps α at 1 (15/16 + 1/16) and, at the next loss-round start, cuts
    /// inflight_lo from the window to (1 − α/3) of it. The sender is in CWR for the marks, so
    /// Linux's quick reprobe after ECN (only in the Open state) does not clear the bound.
    #[test]
    fn an_ecn_marked_round_cuts_inflight_lo_by_alpha_over_three() {
        let mut b = in_probe_bw();
        (b.min_rtt, b.probe_rtt_min) = (Some(Dur(1_000_000)), Some(Dur(1_000_000)));
        let mut w = window(30);
        for k in 1..=2 {
            let rs = RateSample { rtt: Some(Dur(1_000_000)), phase: CaPhase::Cwr, ..round_sample(k) };
            let s = AckSample { now: rs.now, acked: MSS, ece_bytes: MSS, ..AckSample::default() };
            let cwnd_before = w.cwnd;
            b.control(&mut w, &s, &rs);
            if k == 1 {
                assert!(!b.ecn_eligible, "eligible from the round after the first ECN-Echo");
                assert_eq!(b.inflight_lo, UNBOUNDED);
            } else {
                assert!(b.ecn_eligible);
                assert_eq!(b.ecn_alpha, 1.0);
                assert_eq!(b.inflight_lo, (cwnd_before as f64 * (2.0 / 3.0)) as u64);
            }
        }
    }

    #[test]
    fn bad_settings_name_their_key() {
        let e = |c: Bbr3Config| Bbr3::new(&c).err().unwrap().to_string();
        assert!(e(Bbr3Config { loss_thresh: 0.0, ..Default::default() }).contains("loss_thresh"));
        assert!(e(Bbr3Config { beta: f64::NAN, ..Default::default() }).contains("beta"));
        assert!(e(Bbr3Config { initial_window: Some(0), ..Default::default() }).contains("initial_window"));
    }
}
