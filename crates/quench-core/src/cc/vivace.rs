//! PCC Vivace (Dong et al., "PCC Vivace: Online-Learning Congestion Control", NSDI 2018): a
//! sending rate chosen by online gradient ascent on a utility measured over monitor intervals.
//!
//! Monitor intervals (MI, section 3): contiguous spans of send time of about one smoothed RTT
//! (at least `MIN_PACKETS_PER_MI` packets), each at one target rate. Each ACK's outcome is
//! charged to the MI in which the sampled segment was sent (its send time is the ACK's time
//! less its RTT sample): the bytes it delivers, the bytes it newly marks lost, and its RTT
//! sample against that send time. An MI's fate is known, and its utility computed, one RTT
//! (plus a quarter for delayed ACKs and loss detection) after it ends:
//! `u(x) = x^t − b·x·max(0, dRTT/dT) − c·x·L`, `x` the Mb/s the MI sent (bytes acknowledged
//! or lost over its length), `dRTT/dT` the least-squares slope of its RTT samples against their
//! send times, `L` the fraction of its bytes lost (section 3, t = 0.9, b = 900, c = 11.35).
//!
//! Rate control (section 4): a starting phase doubles the rate each time an MI's utility beats
//! the previous one and halves it back when it does not; then each decision runs a pair of MIs
//! at `r(1+ε)` and `r(1−ε)`, in random order, and moves `r` along the utility gradient
//! `γ = (u₊ − u₋)/(2εr)` by `m(τ)·θ0·γ`, where the confidence amplifier `m(τ)` grows with the
//! number τ of consecutive decisions in one direction, bounded by the dynamic change boundary
//! `ω·r`, `ω = ω0 + k·δ`, k counting the consecutive steps the boundary clipped.
//!
//! Vivace is a model-based controller here (`Capabilities::rate_samples`): it is called on every
//! ACK, in every state, paces at the current MI's rate and caps the window at two rate-RTTs.
//! Loss counts only through the utility: the threshold after a congestion signal is the window.
//! Departures: MIs are charged by the send time of each ACK's sampled segment, so losses are
//! charged to the MI of the segment whose ACK revealed them; without SACK (no marked-lost
//! bytes) each fast retransmit or timeout counts one segment; the PCC-Uspace RTT-noise
//! tolerance filters are not modelled.
//! Must not touch: the sender; it sees only the window and the samples.

use super::{AckResponse, AckSample, Capabilities, CongestionControl, Recovery, Signal, Window};
use crate::error::ConfigError;
use crate::rng::Rng;
use crate::units::{BitRate, Dur, Time};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// The utility's exponent t, latency coefficient b and loss coefficient c: section 3 and
/// PCC-Uspace's `kSendingRateExponent`, `kLatencyCoefficient`, `kVivaceLossCoefficient`
/// (`src/pcc/pcc_utility_manager.cpp`), with `x` in Mb/s.
const DEFAULT_EXPONENT: f64 = 0.9;
const DEFAULT_LATENCY_COEFFICIENT: f64 = 900.0;
const DEFAULT_LOSS_COEFFICIENT: f64 = 11.35;
/// Probing step ε (section 4.1; PCC-Uspace `kProbingStepSize`).
const DEFAULT_EPSILON: f64 = 0.05;
/// θ0, Mb/s of rate change per unit of utility per Mb/s (PCC-Uspace
/// `kUtilityGradientToRateChangeFactor` = 1).
const DEFAULT_THETA0: f64 = 1.0;
/// The change boundary's initial fraction ω0 and its increment δ (section 4.2; PCC-Uspace
/// `kInitialMaxStepSize`, `kIncrementalStepSize`).
const DEFAULT_OMEGA0: f64 = 0.05;
const DEFAULT_OMEGA_STEP: f64 = 0.05;
/// The confidence amplifier `m(τ) = ⌈τ/2⌉^1.2` (PCC-Uspace `ComputeRateChange`,
/// `kRateChangeAmplifyExponent`).
const AMPLIFY_EXPONENT: f64 = 1.2;
/// The least rate and the least rate change, Mb/s (PCC-Uspace `kMinSendingRate`,
/// `kMinRateChange`: 500 kb/s).
const MIN_RATE_MBPS: f64 = 0.5;
const MIN_RATE_CHANGE_MBPS: f64 = 0.5;
/// An MI lasts at least this many packets at its rate (PCC-Uspace `kMinPacketPerInterval`).
const MIN_PACKETS_PER_MI: f64 = 5.0;
/// The window caps what is in flight at this many RTTs of the rate: pacing, not the window,
/// sets the rate, while a stalled ACK clock can not release an unbounded burst.
const WINDOW_CAP_RTTS: f64 = 2.0;
/// The smallest window cap, in segments.
const MIN_CWND_SEGMENTS: u64 = 4;
/// Initial window in segments before the first RTT sample (Linux's and PCC-Uspace's 10).
const DEFAULT_INITIAL_WINDOW: u64 = 10;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct VivaceConfig {
    /// The utility's exponent t on the rate.
    pub exponent: f64,
    /// b: the penalty per Mb/s per unit of RTT gradient.
    pub latency_coefficient: f64,
    /// c: the penalty per Mb/s per unit of loss rate.
    pub loss_coefficient: f64,
    /// ε: the probing MIs run at r(1+ε) and r(1−ε).
    pub epsilon: f64,
    /// θ0: Mb/s of rate change per unit of utility gradient (utility per Mb/s).
    pub theta0: f64,
    /// ω0 and δ: the rate change is at most (ω0 + k·δ) of the rate.
    pub omega0: f64,
    pub omega_step: f64,
    pub initial_window: Option<u64>,
}

impl Default for VivaceConfig {
    fn default() -> Self {
        VivaceConfig {
            exponent: DEFAULT_EXPONENT,
            latency_coefficient: DEFAULT_LATENCY_COEFFICIENT,
            loss_coefficient: DEFAULT_LOSS_COEFFICIENT,
            epsilon: DEFAULT_EPSILON,
            theta0: DEFAULT_THETA0,
            omega0: DEFAULT_OMEGA0,
            omega_step: DEFAULT_OMEGA_STEP,
            initial_window: None,
        }
    }
}

/// The utility function of section 3 with its coefficients.
#[derive(Clone, Copy, Debug)]
struct Utility {
    exponent: f64,
    latency: f64,
    loss: f64,
}

impl Utility {
    /// `u = x^t − b·x·max(0, gradient) − c·x·loss_rate`, x in Mb/s.
    fn of(&self, rate_mbps: f64, rtt_gradient: f64, loss_rate: f64) -> f64 {
        rate_mbps.powf(self.exponent)
            - self.latency * rate_mbps * rtt_gradient.max(0.0)
            - self.loss * rate_mbps * loss_rate
    }
}

/// A least-squares line through (send time, RTT) points, both in seconds: its slope is the
/// dimensionless RTT gradient dRTT/dT.
#[derive(Clone, Copy, Debug, Default)]
struct Regression {
    n: f64,
    sum_x: f64,
    sum_y: f64,
    sum_xx: f64,
    sum_xy: f64,
}

impl Regression {
    fn add(&mut self, x: f64, y: f64) {
        self.n += 1.0;
        self.sum_x += x;
        self.sum_y += y;
        self.sum_xx += x * x;
        self.sum_xy += x * y;
    }
    /// The slope; 0 with fewer than two distinct send times.
    fn slope(&self) -> f64 {
        let denominator = self.n * self.sum_xx - self.sum_x * self.sum_x;
        if self.n < 2.0 || denominator <= f64::EPSILON * self.n * self.sum_xx {
            return 0.0;
        }
        (self.n * self.sum_xy - self.sum_x * self.sum_y) / denominator
    }
}

/// What an MI is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// The starting phase's MI at the current rate.
    Start,
    /// A decision's MI at r(1+ε) or r(1−ε).
    ProbeUp,
    ProbeDown,
    /// At the central rate while the measured MIs await their fate: not evaluated.
    Hold,
}

/// One monitor interval: a span of send time at one rate and what became of what it sent.
#[derive(Clone, Debug)]
struct MonitorInterval {
    start: Time,
    end: Time,
    rate_mbps: f64,
    role: Role,
    acked_bytes: u64,
    lost_bytes: u64,
    rtts: Regression,
}

impl MonitorInterval {
    fn new(start: Time, length: Dur, rate_mbps: f64, role: Role) -> Self {
        let rtts = Regression::default();
        MonitorInterval { start, end: start + length, rate_mbps, role, acked_bytes: 0, lost_bytes: 0, rtts }
    }
    fn contains(&self, t: Time) -> bool {
        self.start <= t && t < self.end
    }
    /// The utility of what it sent: rate over its length, RTT gradient, loss rate.
    fn utility(&self, u: &Utility) -> f64 {
        let sent = self.acked_bytes + self.lost_bytes;
        let length = self.end.saturating_sub(self.start).as_secs_f64();
        if sent == 0 || length <= 0.0 {
            return u.of(0.0, 0.0, 0.0);
        }
        let rate_mbps = sent as f64 * 8.0 / length / 1e6;
        u.of(rate_mbps, self.rtts.slope(), self.lost_bytes as f64 / sent as f64)
    }
}

/// The rate controller's phase (section 4).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    /// Doubling while the utility grows: the best utility so far and whether a Start MI is out.
    Starting { best: Option<f64>, measuring: bool },
    /// A decision: the probing MIs issued so far (0-2), the utilities measured, which goes first.
    Deciding { issued: u8, up: Option<f64>, down: Option<f64>, up_first: bool },
}

/// The gradient step of section 4.2: the confidence amplifier and the dynamic change boundary.
#[derive(Clone, Copy, Debug, Default)]
struct Stepper {
    /// +1 or −1 for the last decision's direction, 0 before any.
    direction: i8,
    /// τ: consecutive decisions in `direction`.
    consecutive: u32,
    /// k: the boundary is ω0 + k·δ.
    boundary_steps: u32,
}

impl Stepper {
    /// `m(τ) = ⌈τ/2⌉^1.2`.
    fn amplifier(consecutive: u32) -> f64 {
        (consecutive.div_ceil(2) as f64).powf(AMPLIFY_EXPONENT)
    }

    /// The new rate after a decision with utility gradient `gradient` (utility per Mb/s).
    fn step(&mut self, cfg: &VivaceConfig, rate_mbps: f64, gradient: f64) -> f64 {
        let direction = if gradient > 0.0 { 1 } else { -1 };
        if direction == self.direction {
            self.consecutive += 1;
        } else {
            (self.direction, self.consecutive, self.boundary_steps) = (direction, 1, 0);
        }
        let mut change = Self::amplifier(self.consecutive) * cfg.theta0 * gradient.abs();
        let bound = rate_mbps * (cfg.omega0 + cfg.omega_step * self.boundary_steps as f64);
        if change > bound {
            change = bound;
            self.boundary_steps += 1;
        } else {
            self.boundary_steps = self.boundary_steps.saturating_sub(1);
        }
        let change = change.max(MIN_RATE_CHANGE_MBPS);
        (rate_mbps + direction as f64 * change).max(MIN_RATE_MBPS)
    }
}

pub struct Vivace {
    cfg: VivaceConfig,
    utility: Utility,
    initial_window: u64,
    /// The central rate r, Mb/s, once the first RTT sample has set it.
    rate_mbps: Option<f64>,
    phase: Phase,
    stepper: Stepper,
    /// MIs not yet evaluated, oldest first; the last is the one being sent.
    intervals: VecDeque<MonitorInterval>,
    /// Fast retransmits and timeouts since the last ACK (the loss count without SACK).
    loss_events: u64,
    rng: Option<Rng>,
    /// Alternates the probing order when no random stream was given.
    next_up_first: bool,
}

impl Vivace {
    pub fn new(cfg: &VivaceConfig) -> Result<Self, ConfigError> {
        let positive =
            [("exponent", cfg.exponent), ("epsilon", cfg.epsilon), ("theta0", cfg.theta0), ("omega0", cfg.omega0)];
        for (field, v) in positive {
            if !(v > 0.0 && v.is_finite()) {
                return Err(ConfigError::new(field, "must be a positive number"));
            }
        }
        let non_negative = [
            ("latency_coefficient", cfg.latency_coefficient),
            ("loss_coefficient", cfg.loss_coefficient),
            ("omega_step", cfg.omega_step),
        ];
        for (field, v) in non_negative {
            if !(v >= 0.0 && v.is_finite()) {
                return Err(ConfigError::new(field, "must be a number at least 0"));
            }
        }
        if cfg.epsilon >= 1.0 {
            return Err(ConfigError::new("epsilon", "must be below 1 (the lower probe runs at r(1 − epsilon))"));
        }
        if cfg.initial_window == Some(0) {
            return Err(ConfigError::new("initial_window", "must be at least 1"));
        }
        let utility = Utility { exponent: cfg.exponent, latency: cfg.latency_coefficient, loss: cfg.loss_coefficient };
        Ok(Vivace {
            cfg: cfg.clone(),
            utility,
            initial_window: cfg.initial_window.unwrap_or(DEFAULT_INITIAL_WINDOW),
            rate_mbps: None,
            phase: Phase::Starting { best: None, measuring: false },
            stepper: Stepper::default(),
            intervals: VecDeque::new(),
            loss_events: 0,
            rng: None,
            next_up_first: true,
        })
    }

    /// The central rate r, Mb/s, once set.
    pub fn rate_mbps(&self) -> Option<f64> {
        self.rate_mbps
    }

    /// Which probing MI goes first: a fair coin from the flow's stream, else alternating.
    fn up_first(&mut self) -> bool {
        match self.rng.as_mut() {
            Some(rng) => rng.bernoulli(0.5),
            None => {
                self.next_up_first = !self.next_up_first;
                !self.next_up_first
            }
        }
    }

    /// The role and rate of the next MI, from the phase.
    fn plan_next(&mut self, rate: f64) -> (Role, f64) {
        let eps = self.cfg.epsilon;
        match &mut self.phase {
            Phase::Starting { measuring: measuring @ false, .. } => {
                *measuring = true;
                (Role::Start, rate)
            }
            Phase::Starting { .. } => (Role::Hold, rate),
            Phase::Deciding { issued, up_first, .. } if *issued < 2 => {
                let up = (*issued == 0) == *up_first;
                *issued += 1;
                if up {
                    (Role::ProbeUp, rate * (1.0 + eps))
                } else {
                    (Role::ProbeDown, rate * (1.0 - eps))
                }
            }
            Phase::Deciding { .. } => (Role::Hold, rate),
        }
    }

    /// Start the next MI at `now` if none is being sent or the current one has ended.
    fn maybe_start_mi(&mut self, now: Time, srtt: Dur, mss: u64) {
        if self.intervals.back().is_some_and(|mi| now < mi.end) {
            return;
        }
        let Some(rate) = self.rate_mbps else { return };
        let (role, mi_rate) = self.plan_next(rate);
        let min_length = MIN_PACKETS_PER_MI * mss as f64 * 8.0 / (mi_rate * 1e6);
        let length = Dur::from_secs_f64(srtt.as_secs_f64().max(min_length));
        self.intervals.push_back(MonitorInterval::new(now, length, mi_rate, role));
    }

    /// Charge one ACK's outcome to the MI its sampled segment was sent in.
    fn charge(&mut self, now: Time, rtt: Option<Dur>, srtt: Dur, acked: u64, lost: u64) {
        let sent_at = Time(now.0.saturating_sub(rtt.unwrap_or(srtt).0));
        let Some(mi) = self.intervals.iter_mut().find(|mi| mi.contains(sent_at)) else { return };
        mi.acked_bytes += acked;
        mi.lost_bytes += lost;
        if let Some(rtt) = rtt {
            mi.rtts.add(sent_at.saturating_sub(mi.start).as_secs_f64(), rtt.as_secs_f64());
        }
    }

    /// Evaluate every MI whose fate is known: ended at least 1.25 srtt ago and not current.
    fn evaluate_finished(&mut self, now: Time, srtt: Dur) {
        let wait = Dur(srtt.0 + srtt.0 / 4);
        while self.intervals.len() > 1 && self.intervals[0].end + wait <= now {
            let mi = self.intervals.pop_front().expect("checked non-empty");
            if mi.role != Role::Hold {
                let u = mi.utility(&self.utility);
                self.on_utility(mi.role, mi.rate_mbps, u);
            }
        }
    }

    /// Section 4: act on one evaluated MI's utility.
    fn on_utility(&mut self, role: Role, mi_rate: f64, u: f64) {
        match (&mut self.phase, role) {
            (Phase::Starting { best, measuring }, Role::Start) => {
                *measuring = false;
                if best.is_none_or(|b| u > b) {
                    *best = Some(u);
                    self.rate_mbps = Some(2.0 * mi_rate);
                } else {
                    // The previous, better rate (PCC-Uspace halves on leaving STARTING).
                    self.rate_mbps = Some((mi_rate / 2.0).max(MIN_RATE_MBPS));
                    self.begin_decision();
                }
            }
            (Phase::Deciding { up, down, .. }, Role::ProbeUp | Role::ProbeDown) => {
                if role == Role::ProbeUp {
                    *up = Some(u);
                } else {
                    *down = Some(u);
                }
                if let (Some(u_up), Some(u_down)) = (*up, *down) {
                    let rate = self.rate_mbps.expect("set before any MI");
                    let gradient = (u_up - u_down) / (2.0 * self.cfg.epsilon * rate);
                    self.rate_mbps = Some(self.stepper.step(&self.cfg, rate, gradient));
                    self.begin_decision();
                }
            }
            _ => {}
        }
    }

    fn begin_decision(&mut self) {
        let up_first = self.up_first();
        self.phase = Phase::Deciding { issued: 0, up: None, down: None, up_first };
    }

    /// The window cap and pacing rate of the MI being sent.
    fn apply(&self, w: &mut Window, srtt: Dur) -> Option<BitRate> {
        let rate = self.intervals.back()?.rate_mbps * 1e6;
        let cap = (WINDOW_CAP_RTTS * rate / 8.0 * srtt.as_secs_f64()) as u64;
        w.cwnd = cap.max(MIN_CWND_SEGMENTS * w.mss);
        Some(BitRate(rate as u64))
    }
}

impl CongestionControl for Vivace {
    fn capabilities(&self) -> Capabilities {
        Capabilities { rate_samples: true, ..Capabilities::window(Recovery::NewReno) }
    }
    fn initial_window(&self, _mss: u64) -> u64 {
        self.initial_window
    }
    fn take_random_stream(&mut self, rng: Rng) {
        self.rng = Some(rng);
    }

    /// Called twice on some ACKs (as a window controller without the rate sample, then with
    /// it): only the call with the sample acts.
    fn on_ack(&mut self, w: &mut Window, s: &AckSample) -> AckResponse {
        let Some(rs) = s.rate else { return AckResponse::default() };
        let Some(srtt) = s.srtt.filter(|d| !d.is_zero()) else { return AckResponse::default() };
        if self.rate_mbps.is_none() {
            // The first rate: the initial window per smoothed RTT.
            let rate = (self.initial_window * w.mss) as f64 * 8.0 / srtt.as_secs_f64() / 1e6;
            self.rate_mbps = Some(rate.max(MIN_RATE_MBPS));
        }
        let lost = rs.losses.max(std::mem::take(&mut self.loss_events) * w.mss);
        self.charge(s.now, rs.rtt.or(s.rtt), srtt, rs.acked_sacked, lost);
        self.evaluate_finished(s.now, srtt);
        self.maybe_start_mi(s.now, srtt, w.mss);
        AckResponse { pacing_rate: self.apply(w, srtt), app_limited: false }
    }

    /// Loss acts through the utility only; a fast retransmit or timeout counts one segment
    /// lost when the sample marks none (without SACK). The threshold is the window.
    fn on_congestion(&mut self, w: &Window, signal: Signal) -> u64 {
        if matches!(signal, Signal::DupAcks | Signal::Timeout) {
            self.loss_events += 1;
        }
        w.cwnd
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    /// By hand: 10 Mb/s, gradient 0.001, 1 % loss:
    /// 10^0.9 − 900·10·0.001 − 11.35·10·0.01 = 7.943282 − 9 − 1.135 = −2.191718.
    /// A falling RTT is not rewarded: gradient −0.5 counts as 0, 10^0.9 = 7.943282.
    #[test]
    fn utility_by_hand() {
        let u = Utility { exponent: 0.9, latency: 900.0, loss: 11.35 };
        assert!(close(u.of(10.0, 0.001, 0.01), 10f64.powf(0.9) - 9.0 - 1.135));
        assert!((u.of(10.0, 0.001, 0.01) + 2.191718).abs() < 1e-6);
        assert!(close(u.of(10.0, -0.5, 0.0), 7.943282347242815));
    }

    /// RTT 100, 101, 102 ms at send times 0, 10, 20 ms: slope 1 ms per 10 ms = 0.1.
    #[test]
    fn rtt_gradient_is_the_least_squares_slope() {
        let mut r = Regression::default();
        for (t, rtt) in [(0.0, 0.100), (0.010, 0.101), (0.020, 0.102)] {
            r.add(t, rtt);
        }
        assert!((r.slope() - 0.1).abs() < 1e-9, "{}", r.slope());
        let mut one = Regression::default();
        one.add(0.0, 0.1);
        assert_eq!(one.slope(), 0.0);
    }

    /// An MI of 100 ms that had 123 750 B acknowledged and 1 250 B lost sent 125 000 B:
    /// 10 Mb/s with 1 % loss; its RTT samples rise 1 ms per 1 s of send time (gradient 0.001).
    #[test]
    fn an_mi_is_scored_on_what_it_sent() {
        let mut mi = MonitorInterval::new(Time(0), Dur::from_millis(100), 10.0, Role::ProbeUp);
        mi.acked_bytes = 123_750;
        mi.lost_bytes = 1_250;
        mi.rtts.add(0.0, 0.050);
        mi.rtts.add(0.050, 0.05005);
        let u = Utility { exponent: 0.9, latency: 900.0, loss: 11.35 };
        assert!((mi.utility(&u) + 2.191718).abs() < 1e-6, "{}", mi.utility(&u));
    }

    /// Section 4.2 by hand at r = 10 Mb/s, ω0 = δ = 0.05:
    /// 1. γ = 0.2 up: m(1) = 1, change 0.2 < 0.5 = ω0·r, but at least 0.5 Mb/s → 10.5.
    /// 2. γ = 2 up: m(2) = 1, change 2 > 0.525 → clipped to 0.525, k = 1 → 11.025.
    /// 3. γ = 2 up: m(3) = 2^1.2 = 2.2974, change 4.59 > (0.05 + 0.05)·11.025 = 1.1025 →
    ///    clipped, k = 2 → 12.1275.
    /// 4. γ = −1: the direction changes, τ = 1, k = 0: change 1 > 0.05·12.1275 = 0.606375 →
    ///    clipped, k = 1 → 11.521125.
    #[test]
    fn gradient_steps_are_amplified_and_bounded_by_hand() {
        let cfg = VivaceConfig::default();
        let mut s = Stepper::default();
        let r = s.step(&cfg, 10.0, 0.2);
        assert!(close(r, 10.5), "{r}");
        let r = s.step(&cfg, r, 2.0);
        assert!(close(r, 11.025), "{r}");
        assert_eq!(s.boundary_steps, 1);
        let r = s.step(&cfg, r, 2.0);
        assert!(close(r, 12.1275), "{r}");
        assert_eq!((s.consecutive, s.boundary_steps), (3, 2));
        let r = s.step(&cfg, r, -1.0);
        assert!(close(r, 11.521125), "{r}");
        assert_eq!((s.direction, s.consecutive, s.boundary_steps), (-1, 1, 1));
        assert!(close(Stepper::amplifier(3), 2f64.powf(1.2)));
        assert!(close(Stepper::amplifier(5), 3f64.powf(1.2)));
    }

    /// The starting phase doubles while the utility grows, then halves back and probes at
    /// r(1+ε) and r(1−ε); the pair's gradient moves the rate.
    #[test]
    fn starting_doubles_then_pairs_decide() {
        let mut v = Vivace::new(&VivaceConfig::default()).unwrap();
        v.rate_mbps = Some(2.0);
        assert_eq!(v.plan_next(2.0), (Role::Start, 2.0));
        assert_eq!(v.plan_next(2.0), (Role::Hold, 2.0));
        v.on_utility(Role::Start, 2.0, 1.8);
        assert_eq!(v.rate_mbps, Some(4.0));
        assert_eq!(v.plan_next(4.0), (Role::Start, 4.0));
        v.on_utility(Role::Start, 4.0, 1.0); // worse: back to 2 Mb/s, deciding
        assert_eq!(v.rate_mbps, Some(2.0));
        let first = v.plan_next(2.0);
        let second = v.plan_next(2.0);
        let mut pair = [first, second];
        pair.sort_by(|a, b| a.1.total_cmp(&b.1));
        assert_eq!(pair, [(Role::ProbeDown, 1.9), (Role::ProbeUp, 2.1)]);
        assert_eq!(v.plan_next(2.0), (Role::Hold, 2.0));
        // u₊ − u₋ = 0.02 over 2εr = 0.2 Mb/s: γ = 0.1, change max(0.1, 0.5 min) = 0.5.
        v.on_utility(Role::ProbeUp, 2.1, 1.03);
        v.on_utility(Role::ProbeDown, 1.9, 1.01);
        assert!(close(v.rate_mbps.unwrap(), 2.5), "{:?}", v.rate_mbps);
    }

    /// ACKs are charged to the MI their segment was sent in (the ACK's time less its RTT).
    #[test]
    fn acks_are_charged_by_send_time() {
        let mut v = Vivace::new(&VivaceConfig::default()).unwrap();
        let ms = Dur::from_millis;
        v.intervals.push_back(MonitorInterval::new(Time(0), ms(100), 1.0, Role::Start));
        v.intervals.push_back(MonitorInterval::new(Time(100_000_000), ms(100), 1.0, Role::Hold));
        v.charge(Time(150_000_000), Some(ms(100)), ms(100), 1000, 0); // sent at 50 ms
        v.charge(Time(250_000_000), Some(ms(100)), ms(100), 1000, 500); // sent at 150 ms
        assert_eq!((v.intervals[0].acked_bytes, v.intervals[0].lost_bytes), (1000, 0));
        assert_eq!((v.intervals[1].acked_bytes, v.intervals[1].lost_bytes), (1000, 500));
    }

    #[test]
    fn config_errors_name_the_field() {
        let e = Vivace::new(&VivaceConfig { epsilon: 1.0, ..Default::default() }).err().unwrap();
        assert_eq!(e.path, "epsilon");
        let e = Vivace::new(&VivaceConfig { latency_coefficient: -1.0, ..Default::default() }).err().unwrap();
        assert_eq!(e.path, "latency_coefficient");
    }
}
