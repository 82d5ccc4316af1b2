//! PIE, Proportional Integral controller Enhanced: Pan, Natarajan, Baker & White, RFC 8033
//! (2017) (docs/mechanisms.md#pie). Read beside Linux `include/net/pie.h` and
//! `net/sched/sch_pie.c`.
//!
//! - **Random dropping** (RFC 8033 section 4.1): an arrival is dropped with probability
//!   `drop_prob`, except while a burst allowance remains (section 4.4) and under the safeguard
//!   that keeps PIE work-conserving: no early drop when the last delay estimate is below
//!   `target/2` and `drop_prob < 0.2`, or when the queue holds at most two `mean_packet_size`
//!   packets. An arrival that does not fit `limit` is an `overflow` drop; early drops count as
//!   `early`.
//! - **Drop probability** (section 4.2), every `tupdate`: with delays in seconds and alpha,
//!   beta in Hz, `p = alpha·(qdelay − target) + beta·(qdelay − qdelay_old)`, scaled down by
//!   the current `drop_prob` (auto-tuning: ÷2048 below 1e-6, ÷512 below 1e-5, ÷128 below 1e-4,
//!   ÷32 below 1e-3, ÷8 below 1e-2, ÷2 below 0.1); `p` capped at 0.02 once `drop_prob ≥ 0.1`
//!   (section 5.5's optional cap; Linux `pie_calculate_probability` always applies it;
//!   `cap_drop_adjustment = false` leaves it out); `drop_prob += p`; decayed ×0.98 when both delays are zero; clamped to
//!   [0, 1]. Then the burst allowance shrinks by `tupdate` and is restored to `max_burst` when
//!   `drop_prob = 0` and both delays are below `target/2` (section 4.4).
//! - **Queue delay** (section 4.3, 5.2): policy `delay_estimate`. `"departure_rate"` (the
//!   RFC's default design): Little's law, `qdelay = queue bytes × avg_dq_time / dq_threshold`,
//!   where a measurement starts at a departure that finds at least `dq_threshold` bytes queued
//!   and ends once `dq_threshold` bytes have left; `avg_dq_time` is the first measurement, then
//!   an EWMA of weight `dq_threshold/2^16` (Appendix B). `"timestamp"` (Linux's default, its
//!   `dq_rate_estimator` off): the sojourn of the last departed packet, zero while the queue
//!   is empty.
//! - **ECN** (section 5.1): with `ecn = true`, an ECT packet chosen for an early drop is marked
//!   CE and queued instead while `drop_prob ≤ mark_ecnth` (10 %); above it it is dropped.
//! - **De-randomization** (section 5.4, `derandomize`; off by default: it is one of the RFC's
//!   optional elements, absent from the basic scheme of section 4 and Appendix A; Linux always
//!   does it): `accu_prob` sums `drop_prob` over arrivals since the last drop; no drop below
//!   0.85, a certain drop at 8.5, the random draw in between. The drop rate is then no longer
//!   `drop_prob` (at 1/3 it is 1/5: two arrivals pass, then each is dropped with p = 1/3).
//!
//! - **Active and inactive** (section 5.3, `auto_activate`; off by default, PIE always active,
//!   as Linux): PIE starts inactive and becomes active when an arrival finds the queue at a
//!   third of `limit` or more (the RFC's example threshold; integer third of the packet limit,
//!   else of the byte limit, as FreeBSD dummynet's `PIE_ON_OFF_MODE_ENABLED`); activation
//!   starts PIE afresh (drop probability and delays zero, full burst allowance, no rate
//!   measurement, first update one `tupdate` later). It becomes inactive when congestion is
//!   over (section 5.3: `drop_prob = 0` and the current and previous delay estimates below
//!   `target/2`), checked at an arrival that finds the queue empty (FreeBSD: so that PIE does
//!   not flap while a queue drains). While inactive nothing is dropped early, the controller
//!   does not run and departures are not measured.
//!
//! Not implemented: Linux's byte mode and its extra increase above 250 ms of delay.
//!
//! The update timer is evaluated lazily, at the first arrival or departure at or after each
//! due time: nothing the update reads (the queue's bytes, the rate estimate, the last sojourn)
//! changes between events, so each update sees exactly what it would have seen at its due
//! time. While PIE is at rest (empty queue, zero probability and delays, full burst allowance)
//! the updates change nothing and are skipped in one step. FQ-PIE's flow queues, which report
//! no monitors, catch up with `PieVars::catch_up_quietly`: the same state, with the updates
//! after the first sharing one gradient and a `drop_prob` that stops moving ending the run.
//! Monitors: `drop_prob` and `qdelay` (seconds) at every update, recorded at the event that
//! ran it.
//!
//! Parameters and units (RFC 8033 defaults): `target` (QDELAY_REF) 15 ms, `tupdate` 15 ms,
//! `alpha` 0.125 Hz, `beta` 1.25 Hz, `max_burst` 150 ms, `mark_ecnth` 0.1, `dq_threshold`
//! 16 KiB (2^14 B), `mean_packet_size` 1500 B, `limit` 1000 packets (Linux sch_pie's default),
//! `ecn` false, `delay_estimate` "departure_rate", `derandomize` false, `cap_drop_adjustment`
//! true, `auto_activate` false.
//!
//! Structure: [`PieParams`], [`PieVars`], [`PieStats`]; the packets in a [`Fifo`].
//! Owns the PIE state (drop probability, delay estimate, burst allowance) and its FIFO. Must not
//! touch: the link, the world or any endpoint; it sees only the packets it is given and its
//! `QdiscCx`.

use super::fifo::{default_limit, validate_limit, Fifo};
use super::{Backlog, Dequeued, DropReason, Qdisc, QdiscCx};
use crate::error::ConfigError;
use crate::limits;
use crate::packet::{ecn, Packet};
use crate::rng::Rng;
use crate::units::{Bytes, Dur, Limit, Time};
use serde::{Deserialize, Serialize};

/// RFC 8033 section 4.2 (QDELAY_REF): 15 ms.
pub const DEFAULT_TARGET: Dur = Dur::from_millis(15);
/// RFC 8033 section 4.2 (T_UPDATE): 15 ms.
pub const DEFAULT_TUPDATE: Dur = Dur::from_millis(15);
/// RFC 8033 section 4.2: alpha = 0.125 Hz.
pub const DEFAULT_ALPHA: f64 = 0.125;
/// RFC 8033 section 4.2: beta = 1.25 Hz (1 + 1/4).
pub const DEFAULT_BETA: f64 = 1.25;
/// RFC 8033 section 4.4 (MAX_BURST): 150 ms.
pub const DEFAULT_MAX_BURST: Dur = Dur::from_millis(150);
/// RFC 8033 section 5.1: mark ECT packets while drop_prob is at or below 10 %.
pub const DEFAULT_MARK_ECNTH: f64 = 0.1;
/// RFC 8033 section 5.2 (DQ_THRESHOLD): 2^14 bytes = 16 KiB.
pub const DEFAULT_DQ_THRESHOLD: Bytes = Bytes(1 << 14);
/// RFC 8033 section 4.1 (MEAN_PKTSIZE in the safeguard): 1500 B, an Ethernet MTU.
pub const DEFAULT_MEAN_PACKET_SIZE: Bytes = Bytes(1500);
/// At most this many due updates are counted by subtraction in `skip_due` (then a division):
/// enough for a flow queue of FQ-PIE touched every 60 ms or so with `tupdate` 15 ms.
const SKIP_BY_SUBTRACTION: u64 = 8;
/// Section 4.1's safeguard: no early drop below target/2 while drop_prob < 0.2.
const SAFEGUARD_PROB: f64 = 0.2;
/// Section 4.2's auto-tuning: (drop_prob below, divisor of p).
const TUNING: [(f64, f64); 6] = [(1e-6, 2048.0), (1e-5, 512.0), (1e-4, 128.0), (1e-3, 32.0), (1e-2, 8.0), (0.1, 2.0)];
/// TUNING's divisors as factors, in its order, then 1 past the table. Every divisor is a power
/// of two, so its reciprocal is exact and `x · (1/d)` is the same real number as `x / d`; both
/// operations round it correctly, so the results are equal bit for bit (`pie_tests.rs`
/// checks), and a multiplication takes a few cycles where a division takes up to twenty.
const SCALES: [f64; TUNING.len() + 1] = {
    let mut d = [1.0; TUNING.len() + 1];
    let mut i = 0;
    while i < TUNING.len() {
        assert!(TUNING[i].1.to_bits() & ((1 << 52) - 1) == 0, "a power of two");
        d[i] = 1.0 / TUNING[i].1;
        i += 1;
    }
    d
};

/// Section 4.2's auto-tuning: the factor scaling `p` for `drop_prob` (1 past the table, which
/// changes nothing). The same as dividing by the first entry whose threshold is above
/// `drop_prob`: the thresholds increase, so the entries above `drop_prob` are the table's
/// last ones, and that entry's index is the table's length less their number (none for NaN,
/// whose comparisons are all false: 1, as the search finds nothing). Counting them takes no
/// branch per entry (the search's exit branch was mispredicted often in FQ-PIE's update
/// loops; `pie_tests.rs` compares the two).
#[inline]
fn tuning_scale(drop_prob: f64) -> f64 {
    let above: usize = TUNING.iter().map(|&(below, _)| (drop_prob < below) as usize).sum();
    SCALES[TUNING.len() - above]
}

/// Section 5.3: PIE may become active once the queue reaches 1/3 of the tail-drop threshold.
const ACTIVATE_FRACTION_DIVISOR: u64 = 3;
/// Section 5.5: once drop_prob ≥ 0.1, p is capped at 0.02 per update.
const CAP_FROM: f64 = 0.1;
const CAP: f64 = 0.02;
/// Section 4.2: exponential decay when the queue stays empty.
const DECAY: f64 = 0.98;
/// Section 5.4: de-randomization bounds on accu_prob.
const ACCU_LOW: f64 = 0.85;
const ACCU_HIGH: f64 = 8.5;
/// Appendix B: the departure-time EWMA weight is dq_threshold / 2^16.
const DQ_WEIGHT_DIVISOR: f64 = 65536.0;

/// How the queue delay is estimated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DelayEstimate {
    /// RFC 8033 section 5.2: queue bytes over the measured departure rate.
    #[default]
    DepartureRate,
    /// Linux's default: the sojourn of the last packet sent.
    Timestamp,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PieConfig {
    #[serde(default = "default_limit")]
    pub limit: Limit,
    #[serde(default = "default_target")]
    pub target: Dur,
    #[serde(default = "default_tupdate")]
    pub tupdate: Dur,
    #[serde(default = "default_alpha")]
    pub alpha: f64,
    #[serde(default = "default_beta")]
    pub beta: f64,
    #[serde(default = "default_max_burst")]
    pub max_burst: Dur,
    #[serde(default)]
    pub ecn: bool,
    #[serde(default = "default_mark_ecnth")]
    pub mark_ecnth: f64,
    #[serde(default = "default_dq_threshold")]
    pub dq_threshold: Bytes,
    #[serde(default = "default_mean_packet_size")]
    pub mean_packet_size: Bytes,
    #[serde(default)]
    pub delay_estimate: DelayEstimate,
    #[serde(default)]
    pub derandomize: bool,
    /// Section 5.5's cap of 2 % per update once drop_prob ≥ 10 %; left out when on.
    #[serde(default = "default_true", skip_serializing_if = "is_true")]
    pub cap_drop_adjustment: bool,
    /// Section 5.3's active/inactive switch; left out when off.
    #[serde(default, skip_serializing_if = "is_false")]
    pub auto_activate: bool,
}

fn default_true() -> bool {
    true
}
fn is_true(b: &bool) -> bool {
    *b
}
fn is_false(b: &bool) -> bool {
    !*b
}

pub(super) fn default_target() -> Dur {
    DEFAULT_TARGET
}
pub(super) fn default_tupdate() -> Dur {
    DEFAULT_TUPDATE
}
pub(super) fn default_alpha() -> f64 {
    DEFAULT_ALPHA
}
pub(super) fn default_beta() -> f64 {
    DEFAULT_BETA
}
pub(super) fn default_max_burst() -> Dur {
    DEFAULT_MAX_BURST
}
pub(super) fn default_mark_ecnth() -> f64 {
    DEFAULT_MARK_ECNTH
}
pub(super) fn default_dq_threshold() -> Bytes {
    DEFAULT_DQ_THRESHOLD
}
pub(super) fn default_mean_packet_size() -> Bytes {
    DEFAULT_MEAN_PACKET_SIZE
}

impl Default for PieConfig {
    fn default() -> Self {
        serde_json::from_str("{}").expect("every PIE field has a default")
    }
}

/// PIE's fixed parameters (Linux `struct pie_params`); delays in seconds where the controller
/// computes in f64.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PieParams {
    pub target: Dur,
    pub tupdate: Dur,
    pub alpha: f64,
    pub beta: f64,
    pub max_burst: Dur,
    pub ecn: bool,
    pub mark_ecnth: f64,
    pub dq_threshold: u64,
    pub mean_packet_size: u64,
    pub delay_estimate: DelayEstimate,
    pub derandomize: bool,
    pub cap_drop_adjustment: bool,
    /// With `auto_activate`: the queue (packets, else bytes) from which an arrival activates PIE.
    pub activate_at: Option<Limit>,
    /// `target` in seconds, as the controller computes with it (converted once).
    target_s: f64,
}

impl PieParams {
    pub fn new(cfg: &PieConfig) -> Result<Self, ConfigError> {
        let positive_time = |d: Dur, key: &str| {
            if d.is_zero() {
                Err(ConfigError::new(key, "must be positive"))
            } else {
                Ok(())
            }
        };
        positive_time(cfg.target, "target")?;
        limits::check_controller_period("tupdate", cfg.tupdate)?;
        limits::check_controller_gain("alpha", cfg.alpha)?;
        limits::check_controller_gain("beta", cfg.beta)?;
        if !(cfg.mark_ecnth.is_finite() && (0.0..=1.0).contains(&cfg.mark_ecnth)) {
            return Err(ConfigError::new("mark_ecnth", format!("{} is not in [0, 1]", cfg.mark_ecnth)));
        }
        if cfg.dq_threshold.0 == 0 || cfg.dq_threshold.0 > DQ_WEIGHT_DIVISOR as u64 {
            return Err(ConfigError::new("dq_threshold", "must be between 1 B and 64 KiB"));
        }
        if cfg.mean_packet_size.0 == 0 {
            return Err(ConfigError::new("mean_packet_size", "must be at least one byte"));
        }
        validate_limit(&cfg.limit, "limit")?;
        Ok(PieParams {
            target: cfg.target,
            tupdate: cfg.tupdate,
            alpha: cfg.alpha,
            beta: cfg.beta,
            max_burst: cfg.max_burst,
            ecn: cfg.ecn,
            mark_ecnth: cfg.mark_ecnth,
            dq_threshold: cfg.dq_threshold.0,
            mean_packet_size: cfg.mean_packet_size.0,
            delay_estimate: cfg.delay_estimate,
            derandomize: cfg.derandomize,
            cap_drop_adjustment: cfg.cap_drop_adjustment,
            activate_at: cfg.auto_activate.then(|| Self::third_of(cfg.limit)),
            target_s: cfg.target.as_secs_f64(),
        })
    }

    /// Section 5.3's activation threshold: a third of the tail-drop limit, packets if it has
    /// a packet count, else bytes (rounded down, as FreeBSD's `qsize/3`).
    fn third_of(limit: Limit) -> Limit {
        match limit.packets {
            Some(n) => Limit { packets: Some(n / ACTIVATE_FRACTION_DIVISOR), bytes: None },
            None => Limit { packets: None, bytes: limit.bytes.map(|b| Bytes(b.0 / ACTIVATE_FRACTION_DIVISOR)) },
        }
    }

    /// Whether a queue of `packets` and `bytes` is at or above the activation threshold.
    fn reaches_activation(&self, packets: u64, bytes: u64) -> bool {
        self.activate_at
            .is_some_and(|t| t.packets.map_or_else(|| t.bytes.is_some_and(|b| bytes >= b.0), |n| packets >= n))
    }
}

/// PIE's state (Linux `struct pie_vars`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PieVars {
    pub drop_prob: f64,
    /// The delay estimate of the previous update.
    pub qdelay_old: Dur,
    pub burst_allowance: Dur,
    /// De-randomization: drop_prob summed over arrivals since the last drop.
    pub accu_prob: f64,
    /// When the next update is due.
    pub next_update: Time,
    /// Timestamp estimate: the sojourn of the last packet sent.
    pub last_sojourn: Dur,
    /// Departure-rate estimate: a measurement under way since `measure_start`, with
    /// `dq_count` bytes sent so far; `avg_dq_time` the averaged time to send dq_threshold
    /// bytes, in ns (0 before the first measurement).
    pub in_measurement: bool,
    pub measure_start: Time,
    pub dq_count: u64,
    pub avg_dq_time: f64,
    /// Section 5.3: whether PIE is active (always, unless `auto_activate`).
    pub active: bool,
}

impl PieVars {
    pub fn new(p: &PieParams) -> Self {
        PieVars {
            drop_prob: 0.0,
            qdelay_old: Dur::ZERO,
            burst_allowance: p.max_burst,
            accu_prob: 0.0,
            next_update: Time::ZERO + p.tupdate,
            last_sojourn: Dur::ZERO,
            in_measurement: false,
            measure_start: Time::ZERO,
            dq_count: 0,
            avg_dq_time: 0.0,
            active: p.activate_at.is_none(),
        }
    }

    /// Section 5.3: PIE becomes active at `now`, starting afresh (FreeBSD `init_activate_pie`).
    fn activate(&mut self, p: &PieParams, now: Time) {
        *self = PieVars { next_update: now + p.tupdate, last_sojourn: self.last_sojourn, ..PieVars::new(p) };
        self.active = true;
    }

    /// Section 5.3 at an arrival that found `packets` and `bytes` queued: activate at the
    /// threshold; deactivate when congestion is over and the queue is empty.
    fn switch_activity(&mut self, p: &PieParams, packets: u64, bytes: u64, now: Time) {
        if p.activate_at.is_none() {
            return;
        }
        let half = Dur(p.target.0 / 2);
        if !self.active && p.reaches_activation(packets, bytes) {
            self.activate(p, now);
        } else if self.active && packets == 0 && self.drop_prob == 0.0 && self.qdelay_old < half {
            // The current estimate of an empty queue is zero, below target/2 too.
            self.active = false;
        }
    }

    /// The current queue delay estimate for a queue of `bytes`.
    pub fn qdelay(&self, p: &PieParams, bytes: u64) -> Dur {
        match p.delay_estimate {
            DelayEstimate::DepartureRate if self.avg_dq_time > 0.0 => {
                Dur((bytes as f64 * self.avg_dq_time / p.dq_threshold as f64).round() as u64)
            }
            DelayEstimate::DepartureRate => Dur::ZERO,
            DelayEstimate::Timestamp if bytes == 0 => Dur::ZERO,
            DelayEstimate::Timestamp => self.last_sojourn,
        }
    }

    /// One run of the controller (RFC 8033 section 4.2, 4.4, 5.5) with the delay estimate
    /// `qdelay`.
    pub fn update(&mut self, p: &PieParams, qdelay: Dur) {
        self.update_at(p, qdelay, qdelay.as_secs_f64());
    }

    /// [`update`](Self::update) with `qdelay` already in seconds (`cur`).
    #[inline]
    fn update_at(&mut self, p: &PieParams, qdelay: Dur, cur: f64) {
        let (old, target) = (self.qdelay_old.as_secs_f64(), p.target_s);
        let mut delta = p.alpha * (cur - target) + p.beta * (cur - old);
        delta *= tuning_scale(self.drop_prob);
        if p.cap_drop_adjustment && self.drop_prob >= CAP_FROM && delta > CAP {
            delta = CAP;
        }
        self.drop_prob += delta;
        if qdelay.is_zero() && self.qdelay_old.is_zero() {
            self.drop_prob *= DECAY;
        }
        self.drop_prob = self.drop_prob.clamp(0.0, 1.0);
        self.burst_allowance = Dur(self.burst_allowance.0.saturating_sub(p.tupdate.0));
        let half = Dur(p.target.0 / 2);
        if self.drop_prob == 0.0 && qdelay < half && self.qdelay_old < half {
            self.burst_allowance = p.max_burst;
        }
        self.qdelay_old = qdelay;
    }

    /// Whether an update would change nothing: an empty queue at rest.
    fn at_rest(&self, p: &PieParams, bytes: u64) -> bool {
        bytes == 0
            && self.drop_prob == 0.0
            && self.qdelay_old.is_zero()
            && self.burst_allowance == p.max_burst
            && self.qdelay(p, 0).is_zero()
    }

    /// Run every update due by `now` (see the module notes on laziness) for a queue of
    /// `bytes`, recording the `drop_prob` and `qdelay` monitors at each.
    pub(super) fn catch_up(&mut self, p: &PieParams, bytes: u64, cx: &mut QdiscCx) {
        while cx.now >= self.next_update {
            if self.at_rest(p, bytes) {
                self.skip_due(p, cx.now);
                break;
            }
            let qdelay = self.qdelay(p, bytes);
            self.update(p, qdelay);
            self.next_update += p.tupdate;
            cx.monitor("drop_prob", self.drop_prob);
            cx.monitor("qdelay", qdelay.as_secs_f64());
        }
    }

    /// [`catch_up`](Self::catch_up) without monitors: the same state as running each due
    /// update in turn (`pie_tests.rs` compares the two bit for bit on random states), at less
    /// cost per update. The queue's delay estimate is the same at every due time (nothing it
    /// reads changes between events on the queue), so after the first update the old delay
    /// equals it, and the rest are [`repeat_update`](Self::repeat_update).
    ///
    /// Most events on a flow queue come before its next update is due: that test is inlined
    /// into the caller, the updates are not.
    #[inline]
    pub(super) fn catch_up_quietly(&mut self, p: &PieParams, bytes: u64, now: Time) {
        if now >= self.next_update {
            self.run_due_quietly(p, bytes, now);
        }
    }

    #[inline(never)]
    fn run_due_quietly(&mut self, p: &PieParams, bytes: u64, now: Time) {
        if self.at_rest(p, bytes) {
            self.skip_due(p, now);
            return;
        }
        let qdelay = self.qdelay(p, bytes);
        let cur = qdelay.as_secs_f64();
        let due = self.skip_due(p, now);
        self.update_at(p, qdelay, cur);
        self.repeat_update(p, qdelay, cur, due - 1);
    }

    /// `n` runs of [`update`](Self::update) with the delay estimate `qdelay` when the old
    /// delay already equals it, with the same floating-point operations in the same order:
    /// the gradient term is then `alpha·(qdelay − target) + beta·0`, computed once, and only
    /// its scaling by the current `drop_prob` (section 4.2's table), the cap and the decay
    /// remain per update. Once an update leaves `drop_prob` as it was (bit for bit: clamped
    /// at 0 or 1, or a step too small to change it), every later one does too, and only the
    /// burst allowance still moves: restored to `max_burst` at each update when the restore
    /// condition holds (fixed now), else shrinking by `tupdate` each time, to zero at least.
    fn repeat_update(&mut self, p: &PieParams, qdelay: Dur, cur: f64, n: u64) {
        debug_assert!(n == 0 || self.qdelay_old == qdelay);
        let target = p.target_s;
        // update()'s `beta·(cur − old)` with old = cur: cur − cur is +0.0 for any finite cur.
        let gradient = p.alpha * (cur - target) + p.beta * 0.0;
        let half = Dur(p.target.0 / 2);
        let restore = qdelay < half;
        let decay = qdelay.is_zero();
        for done in 0..n {
            let before = self.drop_prob;
            let mut delta = gradient;
            delta *= tuning_scale(before);
            if p.cap_drop_adjustment && before >= CAP_FROM && delta > CAP {
                delta = CAP;
            }
            let mut prob = before + delta;
            if decay {
                prob *= DECAY;
            }
            self.drop_prob = prob.clamp(0.0, 1.0);
            let fixed = self.drop_prob.to_bits() == before.to_bits();
            let steps = if fixed { n - done } else { 1 };
            if restore && self.drop_prob == 0.0 {
                self.burst_allowance = p.max_burst;
            } else {
                self.burst_allowance = Dur(self.burst_allowance.0.saturating_sub(steps * p.tupdate.0));
            }
            if fixed {
                return;
            }
        }
    }

    /// Move the next due time past `now` without running the updates due by then; returns
    /// how many were due.
    fn skip_due(&mut self, p: &PieParams, now: Time) -> u64 {
        // A queue is usually touched a few update periods late: count them by subtraction
        // then (a 64-bit division takes tens of cycles), and divide only after a long gap.
        let (mut late, step) = ((now - self.next_update).0, p.tupdate.0);
        let mut missed = 1;
        while late >= step && missed < SKIP_BY_SUBTRACTION {
            late -= step;
            missed += 1;
        }
        if late >= step {
            missed += late / step;
        }
        self.next_update += Dur(missed * p.tupdate.0);
        missed
    }

    /// RFC 8033 section 4.1 and 5.4 `drop_early` for an arrival finding `bytes` queued.
    pub(super) fn drop_early(&mut self, p: &PieParams, bytes: u64, rng: &mut Rng) -> bool {
        let half = Dur(p.target.0 / 2);
        if (self.qdelay_old < half && self.drop_prob < SAFEGUARD_PROB) || bytes <= 2 * p.mean_packet_size {
            return false;
        }
        if !p.derandomize {
            return rng.uniform() < self.drop_prob;
        }
        if self.drop_prob == 0.0 {
            self.accu_prob = 0.0;
        }
        self.accu_prob += self.drop_prob;
        if self.accu_prob < ACCU_LOW {
            return false;
        }
        if self.accu_prob >= ACCU_HIGH {
            return true;
        }
        rng.uniform() < self.drop_prob
    }

    /// A packet of `size` leaves a queue that held `bytes` with it, after `sojourn`.
    pub(super) fn on_departure(&mut self, p: &PieParams, bytes: u64, size: u64, sojourn: Dur, now: Time) {
        match p.delay_estimate {
            DelayEstimate::Timestamp => self.last_sojourn = sojourn,
            DelayEstimate::DepartureRate => {
                if !self.in_measurement && bytes >= p.dq_threshold {
                    self.in_measurement = true;
                    self.measure_start = now;
                    self.dq_count = 0;
                }
                if self.in_measurement {
                    self.dq_count += size;
                    if self.dq_count >= p.dq_threshold {
                        let dq_time = (now - self.measure_start).0 as f64;
                        self.avg_dq_time = if self.avg_dq_time == 0.0 {
                            dq_time
                        } else {
                            let w = p.dq_threshold as f64 / DQ_WEIGHT_DIVISOR;
                            dq_time * w + self.avg_dq_time * (1.0 - w)
                        };
                        self.in_measurement = false;
                    }
                }
            }
        }
    }
}

/// What PIE did (Linux `struct pie_stats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PieStats {
    /// Early drops.
    pub dropped: u64,
    /// Early decisions carried out as CE marks.
    pub ecn_mark: u64,
    /// Arrivals that did not fit `limit`.
    pub overlimit: u64,
    /// The largest packet seen, bytes.
    pub maxq: u64,
}

/// PIE over a [`Fifo`].
pub struct Pie {
    params: PieParams,
    vars: PieVars,
    stats: PieStats,
    fifo: Fifo,
}

impl Pie {
    pub fn new(cfg: &PieConfig) -> Result<Self, ConfigError> {
        let params = PieParams::new(cfg)?;
        Ok(Pie { vars: PieVars::new(&params), params, stats: PieStats::default(), fifo: Fifo::new(cfg.limit) })
    }
    pub fn params(&self) -> &PieParams {
        &self.params
    }
    pub fn vars(&self) -> &PieVars {
        &self.vars
    }
    pub fn stats(&self) -> PieStats {
        self.stats
    }
}

impl Qdisc for Pie {
    fn enqueue(&mut self, mut pkt: Packet, cx: &mut QdiscCx) {
        pkt.enqueued_at = cx.now;
        let bytes = self.fifo.bytes();
        if self.vars.active {
            self.vars.catch_up(&self.params, bytes, cx);
        }
        self.stats.maxq = self.stats.maxq.max(pkt.size as u64);
        // Section 5.3 (FreeBSD's order): decide first, then switch on the queue found.
        let packets = self.fifo.len() as u64;
        let admitted = self.decide(pkt, bytes, cx);
        self.vars.switch_activity(&self.params, packets, bytes, cx.now);
        if let Some(pkt) = admitted {
            self.fifo.push(pkt);
        }
    }

    fn dequeue(&mut self, cx: &mut QdiscCx) -> Dequeued {
        let bytes = self.fifo.bytes();
        if self.vars.active {
            self.vars.catch_up(&self.params, bytes, cx);
        }
        match self.fifo.pop() {
            Some(pkt) => {
                if self.vars.active {
                    let sojourn = cx.now - pkt.enqueued_at;
                    self.vars.on_departure(&self.params, bytes, pkt.size as u64, sojourn, cx.now);
                }
                Dequeued::Packet(pkt)
            }
            None => Dequeued::Empty,
        }
    }

    fn backlog(&self) -> Backlog {
        self.fifo.backlog()
    }
}

impl Pie {
    /// The arrival's fate with `bytes` queued: the packet to queue (marked or not), or None
    /// when it was dropped.
    fn decide(&mut self, mut pkt: Packet, bytes: u64, cx: &mut QdiscCx) -> Option<Packet> {
        if !self.fifo.has_room(&pkt) {
            self.vars.accu_prob = 0.0;
            self.stats.overlimit += 1;
            cx.drop(pkt, DropReason::Overflow);
            return None;
        }
        let early = self.vars.active
            && self.vars.burst_allowance.is_zero()
            && self.vars.drop_early(&self.params, bytes, cx.rng);
        if early {
            let p = &self.params;
            if p.ecn && pkt.ecn != ecn::NOT_ECT && self.vars.drop_prob <= p.mark_ecnth {
                pkt.ecn = ecn::CE;
                self.stats.ecn_mark += 1;
                cx.note_mark();
            } else {
                self.vars.accu_prob = 0.0;
                self.stats.dropped += 1;
                cx.drop(pkt, DropReason::Early);
                return None;
            }
        }
        Some(pkt)
    }
}

#[cfg(test)]
#[path = "pie_tests.rs"]
mod tests;
