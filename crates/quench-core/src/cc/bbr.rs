//! BBR v1 (Cardwell, Cheng, Gunn, Hassas Yeganeh, Jacobson, "BBR: Congestion-Based Congestion
//! Control", ACM Queue 14(5), 2016; draft-cardwell-iccrg-bbr-congestion-control-00; Linux
//! `net/ipv4/tcp_bbr.c`; docs/mechanisms.md#bbr). A model-based controller: from the
//! delivery-rate samples (`transport/tcp/sender/rate.rs`) it keeps the bottleneck bandwidth
//! (BtlBw, a windowed maximum over 10 round trips) and the round-trip propagation time
//! (RTprop, a windowed minimum over 10 s), paces at `pacing_gain × BtlBw` and caps the data in
//! flight at `cwnd_gain × BtlBw × RTprop` plus a quantization allowance.
//!
//! The state machine (draft section 4.3):
//! - STARTUP: pacing and cwnd gain 2/ln 2, until the bandwidth estimate has grown by less than
//!   25 % in three rounds (the pipe is full);
//! - DRAIN: pacing gain ln 2 / 2, until what is in flight is down to one BDP;
//! - PROBE_BW: pacing gains cycling 5/4, 3/4, 1, 1, 1, 1, 1, 1, one phase per RTprop (the
//!   5/4 phase lasts until in flight reaches 5/4 BDP or a loss; the 3/4 phase ends early once
//!   in flight is down to one BDP), cwnd gain 2; the first phase is drawn at random from all but
//!   the 3/4 one (Linux), from the flow's seeded stream;
//! - PROBE_RTT: when RTprop has not been lowered for 10 s, cwnd 4 segments for at least 200 ms
//!   and one round trip, then back to PROBE_BW (or STARTUP if the pipe was never full).
//!
//! Loss handling follows Linux: on entering fast recovery, packet conservation for one round
//! trip (cwnd = in flight + newly delivered), then growth toward the target again; leaving
//! recovery or a timeout's loss state restores the window saved when it began. Where the
//! draft and Linux differ, quench takes the draft's quantization allowance (3 send quanta:
//! 1 segment below 1.2 Mb/s, 2 below 24 Mb/s, else 1 ms of pacing, at most 64 KB) instead of
//! Linux's TSO-sized one (`bbr_quantization_budget`, whose 2 extra segments in the 5/4 phase
//! it keeps), and Linux's 1 % pacing margin (Linux since 4.20, `bbr_pacing_margin_percent`),
//! which keeps a flow paced at its own estimate from building a queue. Once the pipe is full
//! the window target also holds Linux's ACK-aggregation allowance (since 4.20,
//! `bbr_update_ack_aggregation`; ns-3's `TcpBbr` has it too): the most data acknowledged
//! beyond the estimate within an ACK epoch over the last 5-10 rounds, at most 100 ms of the
//! estimate (`ack_aggregation = false` leaves it out; Linux's reset of the epoch on restarting
//! from idle is not modelled). The long-term (policer) bandwidth mode is not implemented.
//! `send_quantum = "segment"` takes ns-3's `TcpBbr` quantum instead (one segment at any rate,
//! `TcpBbr::SetSendQuantum`), for like-for-like comparisons with ns-3 (docs/validation.md#bbr:
//! it is what separates the two simulators' drop counts).
//! Owns the bandwidth and RTprop filters, the phase and its random stream. Must not touch: the
//! sender; it sees only the window and the samples.

use super::{
    rfc5681_initial_window, AckResponse, AckSample, CaPhase, Capabilities, CongestionControl, ControllerMetrics,
    RateSample, Recovery, Signal, Window,
};
use crate::error::ConfigError;
use crate::limits::{check_at_most, MAX_FACTOR};
use crate::rng::Rng;
use crate::units::{BitRate, Dur, Time};
use serde::{Deserialize, Serialize};

/// Draft section 4.3.2.1 / Linux `bbr_high_gain`: 2/ln 2, the smallest gain that doubles the
/// sending rate each round trip in STARTUP.
const HIGH_GAIN: f64 = 2.0 / std::f64::consts::LN_2;
/// Draft section 4.3.3.5 / Linux `bbr_cwnd_gain`: cwnd of two BDPs in PROBE_BW, to keep the
/// pipe full through delayed and stretched ACKs.
const CWND_GAIN: f64 = 2.0;
/// Draft section 4.3.4.3 / Linux `bbr_pacing_gain`: one phase probing at 5/4, one draining
/// at 3/4, six cruising at 1.
const PROBE_BW_GAINS: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// The phase a flow never starts PROBE_BW in (Linux `bbr_reset_probe_bw_mode`).
const DRAIN_PHASE: usize = 1;
/// Draft section 4.1.1.3 / Linux `bbr_bw_rtts`: BtlBw is the maximum over 10 round trips.
const BW_WINDOW_ROUNDS: u64 = 10;
/// Draft section 4.1.2.3 / Linux `bbr_min_rtt_win_sec`: RTprop is the minimum over 10 s.
pub(super) const MIN_RTT_WINDOW: Dur = Dur(10_000_000_000);
/// Draft section 4.3.5 / Linux `bbr_probe_rtt_mode_ms`: time held at the minimum window.
pub(super) const PROBE_RTT_DURATION: Dur = Dur(200_000_000);
/// Draft section 4.3.2.2 / Linux `bbr_full_bw_thresh`, `bbr_full_bw_cnt`: the pipe is full
/// when three rounds in a row grow the estimate by less than 25 %.
pub(super) const FULL_BW_GROWTH: f64 = 1.25;
pub(super) const FULL_BW_ROUNDS: u32 = 3;
/// Draft section 4.3.5 / Linux `bbr_cwnd_min_target`: the smallest window, in segments.
pub(super) const MIN_CWND_SEGMENTS: u64 = 4;
/// Linux `bbr_pacing_margin_percent` (since 4.20): pace 1 % below the estimate.
pub(super) const PACING_MARGIN: f64 = 0.01;
/// Linux `TCP_INIT_CWND` (RFC 6928's initial window): below this many segments delivered,
/// STARTUP grows the window even above its target.
const INIT_CWND_SEGMENTS: u64 = 10;
/// Draft section 4.2.2 (BBRSetSendQuantum): below 1.2 Mb/s one segment per send, below 24
/// Mb/s two, else 1 ms of pacing up to 64 KB.
pub(super) const ONE_SEGMENT_QUANTUM_BELOW_BPS: f64 = 1.2e6;
pub(super) const TWO_SEGMENT_QUANTUM_BELOW_BPS: f64 = 24e6;
pub(super) const QUANTUM_TIME_S: f64 = 1e-3;
pub(super) const MAX_QUANTUM_BYTES: f64 = 65_536.0;
/// The pacing rate before any RTT sample is the initial window over 1 ms (Linux
/// `bbr_init_pacing_rate_from_rtt`).
pub(super) const RTT_BEFORE_SAMPLES: Dur = Dur(1_000_000);
/// Linux `bbr_quantization_budget`: in the 5/4 phase the target holds 2 segments more, so that
/// gain cycling raises the in-flight above the BDP even when the BDP is a few segments.
const PROBE_UP_EXTRA_SEGMENTS: u64 = 2;
/// Linux `bbr_extra_acked_gain`: the share of the measured ACK aggregation the window target
/// adds once the pipe is full.
const EXTRA_ACKED_GAIN: f64 = 1.0;
/// Linux `bbr_extra_acked_win_rtts`: each of the two slots of the aggregation maximum covers 5
/// rounds, so the maximum is over the last 5-10.
const EXTRA_ACKED_WIN_ROUNDS: u32 = 5;
/// Linux `bbr_ack_epoch_acked_reset_thresh`: an epoch that has acknowledged this many segments
/// starts afresh (it is old, and its count would overflow Linux's 20-bit field).
const ACK_EPOCH_ACKED_RESET_SEGMENTS: u64 = 1 << 20;
/// Linux `bbr_extra_acked_max_us`: the allowance is at most 100 ms of the estimated bandwidth.
pub(super) const EXTRA_ACKED_MAX: Dur = Dur(100_000_000);

/// Mode names as the `pacing` table's `mode` column indexes them.
pub const MODE_NAMES: [&str; 4] = ["startup", "drain", "probe_bw", "probe_rtt"];

/// BBR's modes, coded as `MODE_NAMES` (the `pacing` table's `mode`), for v1 and v3 alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Mode {
    Startup = 0,
    Drain = 1,
    ProbeBw = 2,
    ProbeRtt = 3,
}

/// Draft section 4.2.2 (BBRSetSendQuantum): the data sent at once at pacing rate `rate`, for
/// BBR and BBRv3 alike.
pub(super) fn draft_send_quantum(rate: Option<BitRate>, mss: u64) -> u64 {
    let rate = rate.map_or(0.0, |r| r.0 as f64);
    if rate < ONE_SEGMENT_QUANTUM_BELOW_BPS {
        mss
    } else if rate < TWO_SEGMENT_QUANTUM_BELOW_BPS {
        2 * mss
    } else {
        (rate / 8.0 * QUANTUM_TIME_S).min(MAX_QUANTUM_BYTES) as u64
    }
}

/// The send quantum, of which the window target holds three (`cc.send_quantum`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SendQuantum {
    /// Draft section 4.2.2: one segment below 1.2 Mb/s of pacing, two below 24 Mb/s, else 1 ms
    /// of pacing up to 64 KB (Linux's TSO budget comes to about the same).
    #[default]
    Draft,
    /// One segment at any rate: ns-3's `TcpBbr::SetSendQuantum` (ns-3 has no TSO).
    Segment,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BbrConfig {
    /// Initial window in segments; RFC 5681's 2-4 by segment size when absent.
    pub initial_window: Option<u64>,
    /// STARTUP's pacing and cwnd gain (default 2/ln 2 = 2.885).
    pub high_gain: f64,
    /// PROBE_BW's cwnd gain (default 2).
    pub cwnd_gain: f64,
    /// The fraction below the estimate that BBR paces at (default 0.01, Linux).
    pub pacing_margin: f64,
    /// The send quantum: "draft" (default) or "segment" (ns-3's).
    pub send_quantum: SendQuantum,
    /// Add the measured ACK aggregation to the window target once the pipe is full (Linux
    /// since 4.20, ns-3's `TcpBbr::UpdateAckAggregation`; default true); false: without it.
    pub ack_aggregation: bool,
}

impl Default for BbrConfig {
    fn default() -> Self {
        BbrConfig {
            initial_window: None,
            high_gain: HIGH_GAIN,
            cwnd_gain: CWND_GAIN,
            pacing_margin: PACING_MARGIN,
            send_quantum: SendQuantum::Draft,
            ack_aggregation: true,
        }
    }
}

/// The degree of ACK aggregation (Linux `bbr_update_ack_aggregation`): the most data
/// acknowledged beyond what the estimated bandwidth would have delivered since an epoch began,
/// an epoch lasting while ACKs come faster than that bandwidth. Its maximum over 5-10 rounds
/// (two slots of 5 rounds, the older dropped as a new one opens) is the window the sender
/// needs to keep sending through the silences between aggregated ACKs. Bytes.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct AckAggregation {
    epoch_start: Time,
    epoch_acked: u64,
    extra_acked: [u64; 2],
    /// Rounds since the current slot opened.
    slot_rounds: u32,
    slot: usize,
}

impl AckAggregation {
    /// The maximum of both slots.
    pub(super) fn extra_acked(&self) -> u64 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    /// One ACK that delivered `acked` bytes at `now`, with the bandwidth estimate `bw` (bytes
    /// per second) and the window `cwnd` (the measured excess is at most the window).
    pub(super) fn update(&mut self, now: Time, acked: u64, round_start: bool, bw: f64, cwnd: u64, mss: u64) {
        if round_start {
            self.slot_rounds = (self.slot_rounds + 1).min(31);
            if self.slot_rounds >= EXTRA_ACKED_WIN_ROUNDS {
                self.slot_rounds = 0;
                self.slot = 1 - self.slot;
                self.extra_acked[self.slot] = 0;
            }
        }
        let mut expected = (bw * now.saturating_sub(self.epoch_start).as_secs_f64()) as u64;
        // ACKs no faster than the estimate: no aggregation, a new epoch starts here.
        let slow = self.epoch_acked <= expected;
        if slow || self.epoch_acked + acked >= ACK_EPOCH_ACKED_RESET_SEGMENTS * mss {
            self.epoch_acked = 0;
            self.epoch_start = now;
            expected = 0;
        }
        self.epoch_acked += acked;
        let extra = (self.epoch_acked - expected.min(self.epoch_acked)).min(cwnd);
        self.extra_acked[self.slot] = self.extra_acked[self.slot].max(extra);
    }
}

/// The maximum of samples over a sliding window of rounds, keeping the best, second-best and
/// third-best of successive sub-windows so that the maximum can age out without storing
/// every sample (K. Nichols' windowed min/max tracker, as Linux `lib/win_minmax.c`).
#[derive(Clone, Copy, Debug, Default)]
struct WindowedMax {
    /// (value, round) of the best, second and third choice.
    s: [(f64, u64); 3],
}

impl WindowedMax {
    fn get(&self) -> f64 {
        self.s[0].0
    }

    fn update(&mut self, round: u64, v: f64, window: u64) {
        let fresh = (v, round);
        if v >= self.s[0].0 || round - self.s[2].1 > window {
            self.s = [fresh; 3];
            return;
        }
        if v >= self.s[1].0 {
            self.s[1] = fresh;
            self.s[2] = fresh;
        } else if v >= self.s[2].0 {
            self.s[2] = fresh;
        }
        let age = round - self.s[0].1;
        if age > window {
            // The best aged out: promote the others (twice if the second aged out too).
            self.s = [self.s[1], self.s[2], fresh];
            if round - self.s[0].1 > window {
                self.s = [self.s[1], self.s[2], fresh];
            }
        } else if self.s[1].1 == self.s[0].1 && age > window / 4 {
            // A quarter window passed with one choice only: take a second from this one.
            self.s[1] = fresh;
            self.s[2] = fresh;
        } else if self.s[2].1 == self.s[1].1 && age > window / 2 {
            self.s[2] = fresh;
        }
    }
}

pub struct Bbr {
    initial_window: Option<u64>,
    high_gain: f64,
    probe_bw_cwnd_gain: f64,
    pacing_margin: f64,
    send_quantum: SendQuantum,
    ack_aggregation: bool,
    aggregation: AckAggregation,
    rng: Option<Rng>,
    mode: Mode,
    /// BtlBw in payload bytes per second, over rounds.
    max_bw: WindowedMax,
    min_rtt: Option<Dur>,
    min_rtt_stamp: Time,
    /// Rounds (round trips) counted by delivered data (draft section 4.1.1.3).
    round_count: u64,
    next_round_delivered: u64,
    round_start: bool,
    full_bw: f64,
    full_bw_count: u32,
    full_bw_reached: bool,
    pacing_gain: f64,
    cwnd_gain: f64,
    cycle_index: usize,
    cycle_stamp: Time,
    probe_rtt_done: Option<Time>,
    probe_rtt_round_done: bool,
    /// The window saved on entering recovery, a timeout's loss state or PROBE_RTT.
    prior_cwnd: u64,
    packet_conservation: bool,
    prev_phase: CaPhase,
    pacing_rate: Option<BitRate>,
    /// An RTT sample has set the pacing rate (Linux `has_seen_rtt`).
    has_seen_rtt: bool,
}

impl Bbr {
    pub fn new(cfg: &BbrConfig) -> Result<Self, ConfigError> {
        if cfg.initial_window == Some(0) {
            return Err(ConfigError::new("initial_window", "must be at least one segment"));
        }
        for (key, v) in [("high_gain", cfg.high_gain), ("cwnd_gain", cfg.cwnd_gain)] {
            if v.is_nan() || v < 1.0 {
                return Err(ConfigError::new(key, format!("{v} is below 1 (the gain must not shrink the model)")));
            }
            check_at_most(key, v, MAX_FACTOR, "gain")?;
        }
        if !(0.0..0.5).contains(&cfg.pacing_margin) {
            return Err(ConfigError::new("pacing_margin", format!("{} is outside [0, 0.5)", cfg.pacing_margin)));
        }
        Ok(Bbr {
            initial_window: cfg.initial_window,
            high_gain: cfg.high_gain,
            probe_bw_cwnd_gain: cfg.cwnd_gain,
            pacing_margin: cfg.pacing_margin,
            send_quantum: cfg.send_quantum,
            ack_aggregation: cfg.ack_aggregation,
            aggregation: AckAggregation::default(),
            rng: None,
            mode: Mode::Startup,
            max_bw: WindowedMax::default(),
            min_rtt: None,
            min_rtt_stamp: Time::ZERO,
            round_count: 0,
            next_round_delivered: 0,
            round_start: false,
            full_bw: 0.0,
            full_bw_count: 0,
            full_bw_reached: false,
            pacing_gain: cfg.high_gain,
            cwnd_gain: cfg.high_gain,
            cycle_index: 0,
            cycle_stamp: Time::ZERO,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            prior_cwnd: 0,
            packet_conservation: false,
            prev_phase: CaPhase::Open,
            pacing_rate: None,
            has_seen_rtt: false,
        })
    }

    /// BtlBw, payload bytes per second.
    pub fn bandwidth(&self) -> f64 {
        self.max_bw.get()
    }

    /// The round trips counted so far.
    pub fn rounds(&self) -> u64 {
        self.round_count
    }

    fn bdp(&self, bw: f64, gain: f64, mss: u64) -> u64 {
        match self.min_rtt {
            // Rounded up to whole segments, as Linux `bbr_bdp`.
            Some(rtt) => ((gain * bw * rtt.as_secs_f64() / mss as f64).ceil() as u64).saturating_mul(mss),
            None => self.initial_window.unwrap_or(INIT_CWND_SEGMENTS) * mss,
        }
    }

    /// Draft section 4.2.2: the data sent at once at the current pacing rate.
    fn send_quantum(&self, mss: u64) -> u64 {
        match self.send_quantum {
            SendQuantum::Segment => mss,
            SendQuantum::Draft => draft_send_quantum(self.pacing_rate, mss),
        }
    }

    /// Draft BBRInflight(gain) / Linux `bbr_inflight`: the gain's share of the BDP plus the
    /// quantization budget.
    fn inflight(&self, bw: f64, gain: f64, mss: u64) -> u64 {
        self.quantization_budget(self.bdp(bw, gain, mss), mss)
    }

    /// Linux `bbr_quantization_budget`: three send quanta, and 2 segments more in the 5/4 phase.
    fn quantization_budget(&self, cwnd: u64, mss: u64) -> u64 {
        let probing_up = self.mode == Mode::ProbeBw && self.cycle_index == 0;
        cwnd + 3 * self.send_quantum(mss) + if probing_up { PROBE_UP_EXTRA_SEGMENTS * mss } else { 0 }
    }

    /// Linux `bbr_ack_aggregation_cwnd`: once the pipe is full, the measured aggregation, at
    /// most 100 ms of the estimated bandwidth.
    fn aggregation_allowance(&self) -> u64 {
        if !self.ack_aggregation || !self.full_bw_reached {
            return 0;
        }
        let cap = self.max_bw.get() * EXTRA_ACKED_MAX.as_secs_f64();
        (EXTRA_ACKED_GAIN * self.aggregation.extra_acked() as f64).min(cap) as u64
    }

    /// Linux `bbr_update_ack_aggregation`, on an ACK that delivered data and gave a valid
    /// bandwidth sample.
    fn update_ack_aggregation(&mut self, w: &Window, rs: &RateSample) {
        if !self.ack_aggregation || rs.acked_sacked == 0 || rs.interval.is_none() {
            return;
        }
        let bw = self.max_bw.get();
        self.aggregation.update(rs.now, rs.acked_sacked, self.round_start, bw, w.cwnd, w.mss);
    }

    fn enter_startup(&mut self) {
        self.mode = Mode::Startup;
        self.pacing_gain = self.high_gain;
        self.cwnd_gain = self.high_gain;
    }

    fn enter_probe_bw(&mut self, now: Time) {
        self.mode = Mode::ProbeBw;
        self.cwnd_gain = self.probe_bw_cwnd_gain;
        // Any phase but the draining one, then advanced by one (Linux draws in [1, 7]).
        let draw = self.rng.as_mut().map_or(0, |r| r.range_inclusive(0, PROBE_BW_GAINS.len() as u64 - 2));
        self.cycle_index = PROBE_BW_GAINS.len() - 1 - draw as usize;
        self.advance_cycle(now);
        debug_assert_ne!(self.cycle_index, DRAIN_PHASE);
    }

    fn advance_cycle(&mut self, now: Time) {
        self.cycle_index = (self.cycle_index + 1) % PROBE_BW_GAINS.len();
        self.cycle_stamp = now;
        self.pacing_gain = PROBE_BW_GAINS[self.cycle_index];
    }

    /// Round counting and the bandwidth filter (Linux `bbr_update_bw`).
    fn update_bandwidth(&mut self, rs: &RateSample) {
        self.round_start = false;
        let Some(interval) = rs.interval else { return };
        if rs.prior_delivered >= self.next_round_delivered {
            self.next_round_delivered = rs.total_delivered;
            self.round_count += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        let bw = rs.delivered as f64 / interval.as_secs_f64();
        if !rs.app_limited || bw >= self.max_bw.get() {
            self.max_bw.update(self.round_count, bw, BW_WINDOW_ROUNDS);
        }
    }

    /// Draft section 4.3.4.4: when PROBE_BW moves to its next gain.
    fn next_phase_due(&self, rs: &RateSample, mss: u64) -> bool {
        let full_length = self.min_rtt.is_some_and(|m| rs.now.saturating_sub(self.cycle_stamp) > m);
        let bw = self.max_bw.get();
        if self.pacing_gain > 1.0 {
            full_length && (rs.losses > 0 || rs.prior_inflight >= self.inflight(bw, self.pacing_gain, mss))
        } else if self.pacing_gain < 1.0 {
            full_length || rs.prior_inflight <= self.inflight(bw, 1.0, mss)
        } else {
            full_length
        }
    }

    /// Draft section 4.3.2.2: three rounds without 25 % growth fill the pipe.
    fn check_full_pipe(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.app_limited {
            return;
        }
        if self.max_bw.get() >= self.full_bw * FULL_BW_GROWTH {
            self.full_bw = self.max_bw.get();
            self.full_bw_count = 0;
            return;
        }
        self.full_bw_count += 1;
        self.full_bw_reached = self.full_bw_count >= FULL_BW_ROUNDS;
    }

    fn check_drain(&mut self, w: &mut Window, rs: &RateSample) {
        let one_bdp = self.inflight(self.max_bw.get(), 1.0, w.mss);
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            self.pacing_gain = 1.0 / self.high_gain;
            self.cwnd_gain = self.high_gain;
            w.ssthresh = one_bdp;
        }
        if self.mode == Mode::Drain && inflight_at_control(rs) <= one_bdp {
            self.enter_probe_bw(rs.now);
        }
    }

    /// RTprop's filter and PROBE_RTT (draft section 4.3.5, Linux `bbr_update_min_rtt`);
    /// returns true while samples are to be marked app-limited.
    fn update_min_rtt(&mut self, w: &mut Window, rs: &RateSample) -> bool {
        let expired = rs.now > self.min_rtt_stamp + MIN_RTT_WINDOW;
        if let Some(rtt) = rs.rtt {
            // Strictly below, as Linux since 2020 ("tcp: only postpone PROBE_RTT if RTT is <
            // current min_rtt estimate"): a sample equal to the minimum, which an idle path
            // gives on every ACK, must not postpone PROBE_RTT for ever.
            if self.min_rtt.is_none_or(|m| rtt < m) || expired {
                self.min_rtt = Some(rtt);
                self.min_rtt_stamp = rs.now;
            }
        }
        if expired && self.mode != Mode::ProbeRtt && self.min_rtt.is_some() {
            self.mode = Mode::ProbeRtt;
            self.pacing_gain = 1.0;
            self.cwnd_gain = 1.0;
            self.save_cwnd(w);
            self.probe_rtt_done = None;
        }
        if self.mode != Mode::ProbeRtt {
            return false;
        }
        match self.probe_rtt_done {
            None if inflight_at_control(rs) <= MIN_CWND_SEGMENTS * w.mss => {
                self.probe_rtt_done = Some(rs.now + PROBE_RTT_DURATION);
                self.probe_rtt_round_done = false;
                self.next_round_delivered = rs.total_delivered;
            }
            None => {}
            Some(done) => {
                self.probe_rtt_round_done |= self.round_start;
                if self.probe_rtt_round_done && rs.now > done {
                    self.min_rtt_stamp = rs.now;
                    w.cwnd = w.cwnd.max(self.prior_cwnd);
                    if self.full_bw_reached {
                        self.enter_probe_bw(rs.now);
                    } else {
                        self.enter_startup();
                    }
                }
            }
        }
        // The deliberately low rate of PROBE_RTT must not lower the estimate.
        self.mode == Mode::ProbeRtt
    }

    /// Linux `bbr_save_cwnd`: remember the window to restore after recovery or PROBE_RTT.
    fn save_cwnd(&mut self, w: &Window) {
        if self.prev_phase < CaPhase::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = w.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(w.cwnd);
        }
    }

    fn set_pacing_rate(&mut self, rs: &RateSample, cwnd: u64) {
        if !self.has_seen_rtt {
            if let Some(srtt) = rs.srtt.filter(|d| !d.is_zero()) {
                self.has_seen_rtt = true;
                self.pacing_rate = Some(self.rate_of(cwnd as f64 / srtt.as_secs_f64(), self.high_gain));
            }
        }
        let bw = self.max_bw.get();
        if bw <= 0.0 {
            return;
        }
        let rate = self.rate_of(bw, self.pacing_gain);
        if self.full_bw_reached || self.pacing_rate.is_none_or(|r| rate > r) {
            self.pacing_rate = Some(rate);
        }
    }

    fn rate_of(&self, bytes_per_sec: f64, gain: f64) -> BitRate {
        BitRate((bytes_per_sec * 8.0 * gain * (1.0 - self.pacing_margin)) as u64)
    }

    /// Recovery and restore (Linux `bbr_set_cwnd_to_recover_or_restore`); true while packet
    /// conservation holds the window at what is in flight plus what this ACK delivered.
    fn recover_or_restore(&mut self, w: &mut Window, rs: &RateSample) -> bool {
        let mut cwnd = w.cwnd;
        let inflight = inflight_at_control(rs);
        if rs.losses > 0 {
            cwnd = cwnd.saturating_sub(rs.losses).max(w.mss);
        }
        if rs.phase == CaPhase::Recovery && self.prev_phase != CaPhase::Recovery {
            self.packet_conservation = true;
            self.next_round_delivered = rs.total_delivered; // the round starts now
            cwnd = inflight + rs.acked_sacked;
        } else if self.prev_phase >= CaPhase::Recovery && rs.phase < CaPhase::Recovery {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_phase = rs.phase;
        w.cwnd = if self.packet_conservation { cwnd.max(inflight + rs.acked_sacked) } else { cwnd };
        self.packet_conservation
    }

    /// Draft section 4.2.3 / Linux `bbr_set_cwnd`.
    fn set_cwnd(&mut self, w: &mut Window, rs: &RateSample) {
        if rs.acked_sacked > 0 && !self.recover_or_restore(w, rs) {
            let bdp = self.bdp(self.max_bw.get(), self.cwnd_gain, w.mss);
            let target = self.quantization_budget(bdp + self.aggregation_allowance(), w.mss);
            if self.full_bw_reached {
                w.cwnd = (w.cwnd + rs.acked_sacked).min(target);
            } else if w.cwnd < target || rs.total_delivered < INIT_CWND_SEGMENTS * w.mss {
                w.cwnd += rs.acked_sacked;
            }
            w.cwnd = w.cwnd.max(MIN_CWND_SEGMENTS * w.mss);
        }
        if self.mode == Mode::ProbeRtt {
            w.cwnd = w.cwnd.min(MIN_CWND_SEGMENTS * w.mss);
        }
    }

    /// A timeout's loss state starts a new round and a new search for the full pipe (Linux
    /// `bbr_set_state(TCP_CA_Loss)`).
    fn on_loss_state(&mut self, rs: &RateSample) {
        if rs.phase == CaPhase::Loss && self.prev_phase != CaPhase::Loss {
            self.prev_phase = CaPhase::Loss;
            self.full_bw = 0.0;
            self.round_start = true;
        }
    }
}

/// What was in flight when the ACK arrived less what it delivered: Linux's
/// `tcp_packets_in_flight` at `cong_control`, which runs before the ACK's transmissions. The
/// sender's RFC 6675 recovery sends on a duplicate ACK before `control`; counting those
/// would let packet conservation (cwnd = in flight + delivered) grow the window by what was
/// just sent, one segment per ACK for a whole round.
pub(super) fn inflight_at_control(rs: &RateSample) -> u64 {
    rs.inflight.saturating_sub(rs.sent_before_control)
}

impl Bbr {
    /// One ACK's rate sample: Linux's `bbr_main` (`cong_control`). Sets the window in every
    /// state and returns the pacing rate.
    fn control(&mut self, w: &mut Window, rs: &RateSample) -> AckResponse {
        self.on_loss_state(rs);
        self.update_bandwidth(rs);
        self.update_ack_aggregation(w, rs);
        if self.mode == Mode::ProbeBw && self.next_phase_due(rs, w.mss) {
            self.advance_cycle(rs.now);
        }
        self.check_full_pipe(rs);
        self.check_drain(w, rs);
        let app_limited = self.update_min_rtt(w, rs);
        if self.pacing_rate.is_none() {
            let iw = self.initial_window(w.mss) * w.mss;
            self.pacing_rate = Some(self.rate_of(iw as f64 / RTT_BEFORE_SAMPLES.as_secs_f64(), self.high_gain));
        }
        self.set_pacing_rate(rs, w.cwnd);
        self.set_cwnd(w, rs);
        AckResponse { pacing_rate: self.pacing_rate, app_limited }
    }
}

impl CongestionControl for Bbr {
    fn capabilities(&self) -> Capabilities {
        Capabilities { rate_samples: true, linux_cong_control: true, ..Capabilities::window(Recovery::NewReno) }
    }
    fn initial_window(&self, mss: u64) -> u64 {
        self.initial_window.unwrap_or_else(|| rfc5681_initial_window(mss))
    }
    /// The sender measures a rate sample for every ACK (`Capabilities::rate_samples`).
    #[inline]
    fn on_ack(&mut self, w: &mut Window, s: &AckSample) -> AckResponse {
        s.rate.map_or_else(AckResponse::default, |rs| self.control(w, rs))
    }
    /// Linux `bbr_ssthresh`: save the window for the restore, leave it where it is (the
    /// reduction is packet conservation in `control`).
    fn on_congestion(&mut self, w: &Window, _signal: Signal) -> u64 {
        self.save_cwnd(w);
        w.cwnd
    }
    fn take_random_stream(&mut self, rng: Rng) {
        self.rng = Some(rng);
    }

    fn metrics(&self) -> Option<ControllerMetrics> {
        Some(ControllerMetrics {
            pacing_rate: self.pacing_rate.unwrap_or(BitRate(0)),
            bandwidth: BitRate((self.max_bw.get() * 8.0) as u64),
            min_rtt: self.min_rtt,
            mode: self.mode as u8,
            cycle_phase: if self.mode == Mode::ProbeBw { self.cycle_index as u8 } else { 0 },
            pacing_gain: self.pacing_gain,
            cwnd_gain: self.cwnd_gain,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    #[test]
    fn the_windowed_max_ages_out_in_steps() {
        let mut f = WindowedMax::default();
        f.update(1, 10.0, 10);
        f.update(2, 8.0, 10);
        f.update(5, 6.0, 10);
        assert_eq!(f.get(), 10.0);
        // Round 12: the 10 of round 1 is 11 rounds old. The 8 of round 2 came within the first
        // quarter window, where only the best is kept; the 6 of round 5 was taken as the
        // second choice once a quarter had passed, and is the maximum now.
        f.update(12, 5.0, 10);
        assert_eq!(f.get(), 6.0);
        f.update(13, 9.0, 10);
        assert_eq!(f.get(), 9.0);
        f.update(30, 1.0, 10);
        assert_eq!(f.get(), 1.0, "every choice older than the window");
    }

    fn sample(now_ms: u64, delivered: u64, interval_ms: u64, prior: u64, total: u64) -> RateSample {
        RateSample {
            now: Time(now_ms * 1_000_000),
            delivered,
            interval: Some(Dur::from_millis(interval_ms)),
            prior_delivered: prior,
            total_delivered: total,
            acked_sacked: MSS,
            rtt: Some(Dur::from_millis(100)),
            srtt: Some(Dur::from_millis(100)),
            inflight: 10 * MSS,
            prior_inflight: 10 * MSS,
            ..RateSample::default()
        }
    }

    fn bbr() -> Bbr {
        Bbr::new(&BbrConfig { initial_window: Some(10), ..Default::default() }).unwrap()
    }

    #[test]
    fn startup_paces_at_high_gain_and_leaves_after_three_flat_rounds() {
        let mut b = bbr();
        let mut w = Window { cwnd: 10 * MSS, ssthresh: u64::MAX, mss: MSS, flight: 0, peer_window: u64::MAX };
        // Before samples: 10 segments per 1 ms × 2.885 × 0.99.
        let out = b.control(&mut w, &RateSample { srtt: None, ..RateSample::default() });
        assert_eq!(out.pacing_rate, Some(BitRate((10_000.0 / 1e-3 * 8.0 * HIGH_GAIN * 0.99) as u64)));
        // Rounds delivering 100 KB/s (10 KB per 100 ms), flat: full after 3 rounds past the first.
        let mut total = 0;
        for round in 0..5 {
            let prior = total;
            total += 10 * MSS;
            b.control(&mut w, &sample(100 * (round + 1), 10 * MSS, 100, prior, total));
        }
        assert!(b.full_bw_reached);
        assert_eq!(b.rounds(), 5);
        assert_eq!(b.bandwidth(), 100_000.0);
        // DRAIN ends at once: in flight (10 segments) is within one BDP plus three send quanta
        // (100 KB/s × 100 ms = 10 segments, + 3 one-segment quanta = 13 segments).
        assert_eq!(b.mode, Mode::ProbeBw);
        assert_ne!(b.cycle_index, DRAIN_PHASE);
        assert_eq!(b.cwnd_gain, CWND_GAIN);
    }

    #[test]
    fn probe_rtt_after_ten_seconds_holds_four_segments_for_200_ms_and_a_round() {
        let mut b = bbr();
        b.take_random_stream(Rng::from_seed(1));
        let mut w = Window { cwnd: 20 * MSS, ssthresh: u64::MAX, mss: MSS, flight: 0, peer_window: u64::MAX };
        let mut total = 0;
        let mut t = 0;
        let step = |b: &mut Bbr, w: &mut Window, t: u64, rtt_ms: u64, inflight: u64, total: &mut u64| {
            let prior = *total;
            *total += 10 * MSS;
            let mut rs = sample(t, 10 * MSS, 100, prior, *total);
            rs.rtt = Some(Dur::from_millis(rtt_ms));
            rs.inflight = inflight;
            b.control(w, &rs)
        };
        for _ in 0..20 {
            t += 100;
            step(&mut b, &mut w, t, 100, 10 * MSS, &mut total);
        }
        assert_eq!(b.mode, Mode::ProbeBw);
        // The minimum was set by the first sample; the equal samples since do not postpone it.
        assert_eq!(b.min_rtt_stamp, Time(100_000_000));
        while t < 10_100 {
            t += 100;
            step(&mut b, &mut w, t, if t % 200 == 0 { 100 } else { 120 }, 10 * MSS, &mut total);
        }
        assert_eq!(b.mode, Mode::ProbeBw, "exactly 10 s is not past it");
        t += 100;
        let out = step(&mut b, &mut w, t, 120, 10 * MSS, &mut total);
        assert_eq!(b.mode, Mode::ProbeRtt, "at {t} ms");
        assert!(out.app_limited);
        assert_eq!(w.cwnd, 4 * MSS);
        // In flight falls to 4 segments at t + 50: the 200 ms starts then.
        let entered = t;
        step(&mut b, &mut w, entered + 50, 100, 4 * MSS, &mut total);
        assert_eq!(b.probe_rtt_done, Some(Time((entered + 250) * 1_000_000)));
        step(&mut b, &mut w, entered + 150, 100, 4 * MSS, &mut total);
        step(&mut b, &mut w, entered + 250, 100, 4 * MSS, &mut total);
        assert_eq!(b.mode, Mode::ProbeRtt, "exactly 200 ms is not past it");
        step(&mut b, &mut w, entered + 251, 100, 4 * MSS, &mut total);
        assert_eq!(b.mode, Mode::ProbeBw);
        assert_eq!(b.min_rtt_stamp, Time((entered + 251) * 1_000_000));
        assert!(w.cwnd >= 20 * MSS, "the window saved on entry is restored: {}", w.cwnd);
    }

    #[test]
    fn recovery_conserves_packets_for_a_round_then_restores() {
        let mut b = bbr();
        let mut w = Window { cwnd: 30 * MSS, ssthresh: u64::MAX, mss: MSS, flight: 0, peer_window: u64::MAX };
        b.control(&mut w, &sample(100, 10 * MSS, 100, 0, 10 * MSS));
        assert_eq!(b.on_congestion(&w, Signal::DupAcks), w.cwnd);
        let mut rs = sample(200, 10 * MSS, 100, 0, 11 * MSS);
        rs.phase = CaPhase::Recovery;
        rs.inflight = 12 * MSS;
        b.control(&mut w, &rs);
        assert_eq!(w.cwnd, 13 * MSS, "in flight + delivered");
        rs.phase = CaPhase::Open;
        rs.now = Time(300_000_000);
        b.control(&mut w, &rs);
        assert!(w.cwnd >= 30 * MSS, "restored: {}", w.cwnd);
    }

    #[test]
    fn packet_conservation_leaves_out_what_the_ack_itself_released() {
        let mut b = bbr();
        let mut w = Window { cwnd: 30 * MSS, ssthresh: u64::MAX, mss: MSS, flight: 0, peer_window: u64::MAX };
        b.control(&mut w, &sample(100, 10 * MSS, 100, 0, 10 * MSS));
        b.on_congestion(&w, Signal::DupAcks);
        // Entering recovery, the sender fast-retransmitted one segment before the controller's
        // turn: 12 segments in flight counting it, 11 before it.
        let mut rs = sample(200, 10 * MSS, 100, 0, 11 * MSS);
        rs.phase = CaPhase::Recovery;
        rs.inflight = 12 * MSS;
        rs.sent_before_control = MSS;
        b.control(&mut w, &rs);
        assert_eq!(w.cwnd, 12 * MSS, "11 in flight + 1 delivered");
        // Each later duplicate ACK of the round SACKs a segment and the sender's recovery has
        // already sent one in its place: in flight stays 12 counting it, and so does cwnd (it
        // grew by one segment per ACK when the fresh segment was counted).
        for k in 1..=5 {
            rs.now = Time((200 + k) * 1_000_000);
            rs.total_delivered = (11 + k) * MSS;
            b.control(&mut w, &rs);
            assert_eq!(w.cwnd, 12 * MSS, "ACK {k}");
        }
    }

    /// Without SACK, the samples Linux's Reno emulation gives (the sender's `reno_sack.rs`):
    /// one segment delivered and no rate on each duplicate ACK, the head's loss on the third
    /// and on each partial ACK. Pipe full, PROBE_BW, cwnd C = target T; one loss in a window of
    /// W = T + 2 (the first two duplicate ACKs each released a segment). By hand, after
    /// tcp_bbr.c `bbr_set_cwnd_to_recover_or_restore`:
    /// - dup 1, 2 (in flight T − 1): min(T + 1, T) = T;
    /// - dup 3 (Recovery, 1 lost, in flight W − 3 − 1 = T − 2): conservation, T − 2 + 1 =
    ///   T − 1 = W − 3;
    /// - later duplicates (in flight T − 2 each: one sent for one delivered): max(T − 1, T − 1);
    /// - the repair's ACK (still Recovery, Linux holding it at snd_una = high_seq; a valid sample
    ///   from the retransmission, which left with the 3 duplicate ACKs' deliveries counted: a
    ///   new round, conservation ends): min(T − 1 + 1, T) = T;
    /// - the next ACK (Open): restore max(T, prior_cwnd T), then min(T + 1, T) = T.
    ///
    /// With several holes, a partial ACK (1 lost, 1 delivered) after the round leaves cwnd as it
    /// was: T − 1 − 1 + 1.
    #[test]
    fn without_sack_conservation_starts_at_the_third_duplicate_ack() {
        let mut b =
            Bbr::new(&BbrConfig { initial_window: Some(10), ack_aggregation: false, ..Default::default() }).unwrap();
        let mut w = Window { cwnd: 10 * MSS, ssthresh: u64::MAX, mss: MSS, flight: 0, peer_window: u64::MAX };
        let mut total = 0;
        for round in 0..5 {
            let prior = total;
            total += 10 * MSS;
            b.control(&mut w, &sample(100 * (round + 1), 10 * MSS, 100, prior, total));
        }
        assert_eq!(b.mode, Mode::ProbeBw);
        let mut t_us = 500_000;
        let mut dup = |b: &mut Bbr, w: &mut Window, inflight: u64, phase: CaPhase, losses: u64, total: &mut u64| {
            t_us += 100;
            *total += MSS;
            let rs = RateSample {
                now: Time(t_us * 1_000),
                acked_sacked: MSS,
                total_delivered: *total,
                inflight: inflight * MSS,
                prior_inflight: (inflight + 1) * MSS,
                losses: losses * MSS,
                phase,
                srtt: Some(Dur::from_millis(100)),
                ..RateSample::default()
            };
            b.control(w, &rs);
            w.cwnd / MSS
        };
        // The target: what a window above it comes down to. The 5/4 phase, begun at 400 ms, is
        // over (a round trip, and in flight above 5/4 BDP): the draining phase's target, two
        // BDPs and three one-segment quanta, holds for the next round trip.
        w.cwnd = 1000 * MSS;
        let target = dup(&mut b, &mut w, 30, CaPhase::Open, 0, &mut total);
        assert_eq!((b.cycle_index, target), (DRAIN_PHASE, 23));
        for k in 1..=2 {
            assert_eq!(dup(&mut b, &mut w, target - 1, CaPhase::Open, 0, &mut total), target, "dup {k}");
        }
        b.on_congestion(&w, Signal::DupAcks);
        let at_retransmission = total + MSS;
        assert_eq!(dup(&mut b, &mut w, target - 2, CaPhase::Recovery, 1, &mut total), target - 1, "W − 3");
        for k in 4..=12 {
            assert_eq!(dup(&mut b, &mut w, target - 2, CaPhase::Recovery, 0, &mut total), target - 1, "dup {k}");
        }
        // The repair: ten segments (nine duplicate ACKs and the hole) in 100 ms, the path's rate.
        total += MSS;
        let mut rs = sample(501, 10 * MSS, 100, at_retransmission, total);
        (rs.phase, rs.inflight, rs.prior_inflight) = (CaPhase::Recovery, (target - 2) * MSS, (target - 1) * MSS);
        let round = b.rounds();
        b.control(&mut w, &rs);
        assert_eq!((b.rounds(), w.cwnd / MSS), (round + 1, target), "a new round ends conservation");
        let mut partial = rs;
        total += MSS;
        (rs.phase, rs.now, rs.prior_delivered, rs.total_delivered) = (CaPhase::Open, Time(502_000_000), total, total);
        b.control(&mut w, &rs);
        assert_eq!(w.cwnd / MSS, target, "restored");
        // Several holes: the first partial ACK marks the next head lost.
        w.cwnd = (target - 1) * MSS;
        (partial.losses, partial.now) = (MSS, Time(503_000_000));
        b.control(&mut w, &partial);
        assert_eq!(w.cwnd / MSS, target - 1, "one lost, one delivered");
    }

    #[test]
    fn the_window_target_holds_three_send_quanta_of_the_chosen_kind() {
        // BtlBw 1 MB/s, RTprop 100 ms, cwnd gain 2: 200 segments of 1000 B. At 40 Mb/s of
        // pacing the draft's quantum is 1 ms of it, 5000 B; ns-3's is one segment.
        let target = |q: SendQuantum| {
            let mut b = Bbr::new(&BbrConfig { send_quantum: q, ..Default::default() }).unwrap();
            b.min_rtt = Some(Dur::from_millis(100));
            b.pacing_rate = Some(BitRate(40_000_000));
            b.inflight(1_000_000.0, 2.0, MSS)
        };
        assert_eq!(target(SendQuantum::Draft), 200_000 + 3 * 5000);
        assert_eq!(target(SendQuantum::Segment), 200_000 + 3 * MSS);
    }

    #[test]
    fn extra_acked_is_the_burst_beyond_the_estimate_since_the_epoch_began() {
        // BtlBw 100 KB/s: 1000 B per 10 ms expected.
        let (bw, cwnd) = (100_000.0, 100 * MSS);
        let mut a = AckAggregation::default();
        let ack = |a: &mut AckAggregation, ms: u64, acked: u64, round_start: bool, cwnd: u64| {
            a.update(Time(ms * 1_000_000), acked, round_start, bw, cwnd, MSS)
        };
        // ACKs at the estimated rate: each finds the epoch's count at or below what the
        // estimate expected, so each starts a new epoch and counts only itself.
        ack(&mut a, 1000, 1000, false, cwnd);
        ack(&mut a, 1010, 1000, false, cwnd);
        assert_eq!((a.epoch_start, a.extra_acked()), (Time(1_010_000_000), 1000));
        // Idle 90 ms, then a burst of 10 segments: a new epoch (1000 acked ≤ 10,000 expected
        // over the 100 ms since the last one began), 10,000 B extra.
        ack(&mut a, 1110, 10 * MSS, false, cwnd);
        assert_eq!((a.epoch_start, a.extra_acked()), (Time(1_110_000_000), 10_000));
        // 5 more segments 10 ms later: 15,000 acked in the epoch against 1000 expected.
        ack(&mut a, 1120, 5 * MSS, false, cwnd);
        assert_eq!(a.extra_acked(), 14_000);
        // 40 ms later one more: 16,000 against 5000 expected, 11,000 < 14,000: the max holds.
        ack(&mut a, 1160, MSS, false, cwnd);
        assert_eq!((a.epoch_acked, a.extra_acked()), (16_000, 14_000));
        // At most the window: 26,000 against 6000 expected, but cwnd is 12 segments.
        ack(&mut a, 1170, 10 * MSS, false, 12 * MSS);
        assert_eq!(a.extra_acked[a.slot], 14_000);
        let mut capped = AckAggregation::default();
        ack(&mut capped, 1000, 20 * MSS, false, 8 * MSS);
        assert_eq!(capped.extra_acked(), 8 * MSS);
        // Rounds of ACKs at the estimated rate (1000 B each, 100 ms apart: a new epoch each).
        // The 5th round start opens the other slot (cleared); the 14,000 lives in the first
        // until the 10th opens it again.
        for round in 1..=10 {
            ack(&mut a, 1200 + 100 * round, MSS, true, cwnd);
            let expected = if round < 10 { 14_000 } else { 1000 };
            assert_eq!(a.extra_acked(), expected, "round {round}");
        }
    }

    #[test]
    fn the_aggregation_allowance_counts_once_the_pipe_is_full_and_at_most_100_ms() {
        let allowance = |enabled: bool, full: bool| {
            let mut b = Bbr::new(&BbrConfig { ack_aggregation: enabled, ..Default::default() }).unwrap();
            b.max_bw.update(1, 100_000.0, BW_WINDOW_ROUNDS);
            b.aggregation.extra_acked = [14_000, 3000];
            b.full_bw_reached = full;
            b.aggregation_allowance()
        };
        // 100 ms of 100 KB/s is 10,000 B: the cap binds on the 14,000 measured.
        assert_eq!(allowance(true, true), 10_000);
        assert_eq!(allowance(true, false), 0, "not before the pipe is full");
        assert_eq!(allowance(false, true), 0, "switched off");
    }

    #[test]
    fn the_probing_phase_adds_two_segments_to_the_target() {
        // BtlBw 1 MB/s, RTprop 100 ms, 1 Mb/s of pacing (a one-segment quantum): gain 5/4
        // gives 125 segments + 3 quanta, + 2 in the 5/4 phase only.
        let mut b = Bbr::new(&BbrConfig::default()).unwrap();
        b.min_rtt = Some(Dur::from_millis(100));
        b.pacing_rate = Some(BitRate(1_000_000));
        b.mode = Mode::ProbeBw;
        b.cycle_index = 0;
        assert_eq!(b.inflight(1_000_000.0, 1.25, MSS), (125 + 3 + 2) * MSS);
        b.cycle_index = 2;
        assert_eq!(b.inflight(1_000_000.0, 1.25, MSS), (125 + 3) * MSS);
    }

    #[test]
    fn bad_settings_name_their_key() {
        let e = |c: BbrConfig| Bbr::new(&c).err().unwrap().to_string();
        assert!(e(BbrConfig { cwnd_gain: 0.5, ..Default::default() }).contains("cwnd_gain"));
        assert!(e(BbrConfig { high_gain: f64::NAN, ..Default::default() }).contains("high_gain"));
        assert!(e(BbrConfig { high_gain: 1e9, ..Default::default() }).contains("high_gain"));
        assert!(e(BbrConfig { pacing_margin: 0.7, ..Default::default() }).contains("pacing_margin"));
        assert!(e(BbrConfig { initial_window: Some(0), ..Default::default() }).contains("initial_window"));
    }
}
