//! Copa (Arun, Balakrishnan, "Copa: Practical Delay-Based Congestion Control for the
//! Internet", NSDI 2018): a window that moves towards the target rate `λt = 1/(δ·dq)`
//! packets per second, where `dq = RTTstanding − RTTmin` is the queuing delay; optionally the
//! competitive mode, which adapts δ while a buffer-filling flow shares the bottleneck.
//!
//! Per ACK (the paper's section 2.1): RTTstanding is the least RTT of the last srtt/2, RTTmin
//! the least of the last 10 s; the current rate is `λ = cwnd/RTTstanding`. If `λ ≤ λt` the
//! window grows by `v/(δ·cwnd)` packets per packet acknowledged, else it shrinks by as much.
//! The velocity `v` (section 2.2) is 1, and doubles once per RTT while the window has moved in
//! the same direction for three RTTs; it returns to 1 when the direction changes. Slow start
//! (section 2.1): the window doubles per RTT (grows by the bytes acknowledged) until `λ > λt`
//! first. Pacing at `2·cwnd/RTTstanding` (section 2.1). Equilibrium: `λ·dq = 1/δ`, about 1/δ
//! packets queued per flow (2 for δ = 0.5).
//!
//! Copa is a model-based controller here (`Capabilities::rate_samples`): it is called on every
//! ACK, in every state, and sets the window and pacing rate itself, as mvfst's Copa does on
//! each ACK. Loss (section 2.3): the default mode does not respond to it (ssthresh is left at
//! the window); a timeout restarts from `MIN_CWND` segments. Departures: the windowed minima
//! keep every sample of their window that may yet be the minimum (a monotone deque) rather
//! than mvfst's approximate filter.
//!
//! Competitive mode (section 2.3, `mode = "competitive"`; off by default): with Copa alone the
//! queue empties every few RTTs (its window oscillates around the target); a buffer-filling
//! competitor keeps it from emptying. The queue counts as nearly empty when the queuing delay
//! is at most 10 % of the largest over the last 4 RTTs (`RTTstanding − RTTmin ≤ 0.1·(RTTmax −
//! RTTmin)`, RTTmax the largest RTT sample of the last 4 srtt; with no queue at all, 0 ≤ 0).
//! Not nearly empty for 5 RTTs: competitive, with δ adapted by AIMD on 1/δ (+1 per RTT
//! without loss, halved on loss, δ at most the configured `delta`); nearly empty again: back
//! to the configured δ.
//! Must not touch: the sender; it sees only the window and the samples.

use super::{AckResponse, AckSample, Capabilities, CongestionControl, Recovery, Signal, Window};
use crate::error::ConfigError;
use crate::units::{BitRate, Dur, Time};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// The paper's default mode: δ = 0.5 (section 2.1; mvfst's `copaDeltaParam` default).
const DEFAULT_DELTA: f64 = 0.5;
/// RTTmin's window: 10 s (section 2.1, "over a long period of time (10 seconds ...)").
const MIN_RTT_WINDOW: Dur = Dur::from_secs(10);
/// The velocity doubles once the direction has held for this many RTTs (section 2.2).
const RTTS_BEFORE_VELOCITY_DOUBLES: u32 = 3;
/// Pacing at twice cwnd/RTTstanding (section 2.1).
const PACING_GAIN: f64 = 2.0;
/// The smallest window, in segments (Linux's floor of two segments, RFC 5681's loss floor).
const MIN_CWND: f64 = 2.0;
/// Initial window in segments when none is set (mvfst's and Linux's initial window of 10).
const DEFAULT_INITIAL_WINDOW: u64 = 10;
/// A velocity beyond which doubling stops: a window change of v/δ packets per RTT can not
/// usefully exceed this (bounds the state when the direction holds for long).
const MAX_VELOCITY: f64 = 1024.0 * 1024.0;
/// Competitive mode (section 2.3): the queue is nearly empty below this fraction of the
/// largest queuing delay over `MAX_RTT_WINDOW_RTTS` RTTs, and a competitor is assumed once it
/// has not been for `EMPTY_QUEUE_WITHIN_RTTS` RTTs.
const NEARLY_EMPTY_FRACTION: f64 = 0.1;
const MAX_RTT_WINDOW_RTTS: u64 = 4;
const EMPTY_QUEUE_WITHIN_RTTS: u64 = 5;

/// Whether Copa may leave its default δ when a buffer-filling flow is detected.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CopaMode {
    /// δ fixed at `delta`.
    #[default]
    Default,
    /// Section 2.3: δ adapted while the queue does not empty.
    Competitive,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CopaConfig {
    /// δ: the target is 1/δ packets queued per flow.
    pub delta: f64,
    /// "default" or "competitive" (section 2.3).
    pub mode: CopaMode,
    pub initial_window: Option<u64>,
}

impl Default for CopaConfig {
    fn default() -> Self {
        CopaConfig { delta: DEFAULT_DELTA, mode: CopaMode::Default, initial_window: None }
    }
}

/// The least RTT sample of a sliding time window: a deque of samples each smaller than every
/// later one (a later, smaller sample can never be outlived by an earlier, larger one).
#[derive(Default)]
struct WindowedMin {
    samples: VecDeque<(Time, Dur)>,
}

impl WindowedMin {
    fn add(&mut self, now: Time, rtt: Dur, window: Dur) {
        while self.samples.back().is_some_and(|&(_, r)| r >= rtt) {
            self.samples.pop_back();
        }
        self.samples.push_back((now, rtt));
        while self.samples.front().is_some_and(|&(t, _)| now.saturating_sub(t) > window) {
            self.samples.pop_front();
        }
    }
    fn get(&self) -> Option<Dur> {
        self.samples.front().map(|&(_, r)| r)
    }
}

/// The largest RTT sample of a sliding time window (`WindowedMin`'s mirror).
#[derive(Default)]
struct WindowedMax {
    samples: VecDeque<(Time, Dur)>,
}

impl WindowedMax {
    fn add(&mut self, now: Time, rtt: Dur, window: Dur) {
        while self.samples.back().is_some_and(|&(_, r)| r <= rtt) {
            self.samples.pop_back();
        }
        self.samples.push_back((now, rtt));
        while self.samples.front().is_some_and(|&(t, _)| now.saturating_sub(t) > window) {
            self.samples.pop_front();
        }
    }
    fn get(&self) -> Option<Dur> {
        self.samples.front().map(|&(_, r)| r)
    }
}

/// Section 2.3's competitive mode: the detector of a queue that no longer empties and the
/// AIMD on 1/δ while it does not.
struct Competitive {
    default_delta: f64,
    max_rtt: WindowedMax,
    /// The last time the queue was nearly empty (the first sample's time to begin with).
    last_nearly_empty: Option<Time>,
    /// 1/δ while competing; None in the default mode.
    inv_delta: Option<f64>,
    /// The end of the current RTT of the additive increase, and whether it saw a loss.
    rtt_ends_at: Time,
    loss_this_rtt: bool,
}

impl Competitive {
    fn new(default_delta: f64) -> Self {
        let max_rtt = WindowedMax::default();
        let (rtt_ends_at, loss_this_rtt) = (Time::ZERO, false);
        Competitive { default_delta, max_rtt, last_nearly_empty: None, inv_delta: None, rtt_ends_at, loss_this_rtt }
    }

    /// One RTT sample with the windowed RTTstanding and RTTmin: switch modes, adapt 1/δ.
    fn on_rtt(&mut self, now: Time, rtt: Dur, standing: Dur, min_rtt: Dur, srtt: Dur) {
        self.max_rtt.add(now, rtt, Dur(MAX_RTT_WINDOW_RTTS * srtt.0));
        let max_rtt = self.max_rtt.get().unwrap_or(rtt);
        let queuing = standing.as_secs_f64() - min_rtt.as_secs_f64();
        let largest = max_rtt.as_secs_f64() - min_rtt.as_secs_f64();
        if queuing <= NEARLY_EMPTY_FRACTION * largest {
            (self.last_nearly_empty, self.inv_delta) = (Some(now), None);
            return;
        }
        let since_empty = now.saturating_sub(*self.last_nearly_empty.get_or_insert(now));
        if self.inv_delta.is_none() && since_empty.0 > EMPTY_QUEUE_WITHIN_RTTS * srtt.0 {
            self.inv_delta = Some(1.0 / self.default_delta);
            (self.rtt_ends_at, self.loss_this_rtt) = (now + srtt, false);
        }
        if let Some(inv) = self.inv_delta.as_mut() {
            if now >= self.rtt_ends_at {
                if !self.loss_this_rtt {
                    *inv += 1.0;
                }
                (self.rtt_ends_at, self.loss_this_rtt) = (now + srtt, false);
            }
        }
    }

    /// A loss halves 1/δ while competing, δ staying at most the default.
    fn on_loss(&mut self) {
        if let Some(inv) = self.inv_delta.as_mut() {
            *inv = (*inv / 2.0).max(1.0 / self.default_delta);
            self.loss_this_rtt = true;
        }
    }

    fn delta(&self) -> f64 {
        self.inv_delta.map_or(self.default_delta, |inv| 1.0 / inv)
    }
}

/// The velocity of section 2.2: the window's direction over the last RTT and how long it held.
struct Velocity {
    v: f64,
    /// The window (bytes) when the current RTT began and when that RTT ends.
    cwnd_at_start: f64,
    ends_at: Option<Time>,
    increasing: bool,
    rtts_same_direction: u32,
}

impl Velocity {
    fn new() -> Self {
        Velocity { v: 1.0, cwnd_at_start: 0.0, ends_at: None, increasing: true, rtts_same_direction: 0 }
    }

    /// Once per RTT: compare the window with one RTT ago; double `v` after three RTTs in one
    /// direction, reset it to 1 on a change of direction.
    fn update(&mut self, now: Time, cwnd: f64, srtt: Dur) {
        match self.ends_at {
            Some(t) if now < t => return,
            Some(_) => {
                let increasing = cwnd > self.cwnd_at_start;
                if increasing == self.increasing {
                    self.rtts_same_direction += 1;
                    if self.rtts_same_direction >= RTTS_BEFORE_VELOCITY_DOUBLES {
                        self.v = (2.0 * self.v).min(MAX_VELOCITY);
                    }
                } else {
                    (self.increasing, self.v, self.rtts_same_direction) = (increasing, 1.0, 0);
                }
            }
            None => {}
        }
        self.cwnd_at_start = cwnd;
        self.ends_at = Some(now + srtt);
    }
}

pub struct Copa {
    /// δ in force: the configured one, or the competitive mode's.
    delta: f64,
    /// The competitive mode's state, when configured.
    competitive: Option<Competitive>,
    initial_window: u64,
    /// The window in bytes, fractional: the per-ACK step is a fraction of a segment.
    cwnd: Option<f64>,
    slow_start: bool,
    standing: WindowedMin,
    min_rtt: WindowedMin,
    velocity: Velocity,
}

impl Copa {
    pub fn new(cfg: &CopaConfig) -> Result<Self, ConfigError> {
        if !(cfg.delta > 0.0 && cfg.delta <= 1.0) {
            return Err(ConfigError::new("delta", "must be in (0, 1] (1/delta packets queued per flow)"));
        }
        if cfg.initial_window == Some(0) {
            return Err(ConfigError::new("initial_window", "must be at least 1"));
        }
        Ok(Copa {
            delta: cfg.delta,
            competitive: (cfg.mode == CopaMode::Competitive).then(|| Competitive::new(cfg.delta)),
            initial_window: cfg.initial_window.unwrap_or(DEFAULT_INITIAL_WINDOW),
            cwnd: None,
            slow_start: true,
            standing: WindowedMin::default(),
            min_rtt: WindowedMin::default(),
            velocity: Velocity::new(),
        })
    }

    /// Whether the current rate is at most the target: `cwnd/RTTstanding ≤ 1/(δ·dq)`, i.e.
    /// `cwnd_packets·δ·dq ≤ RTTstanding`; true with no queuing delay.
    fn below_target(&self, cwnd_packets: f64, standing: Dur, min_rtt: Dur) -> bool {
        let dq = standing.as_secs_f64() - min_rtt.as_secs_f64();
        cwnd_packets * self.delta * dq <= standing.as_secs_f64()
    }

    /// One ACK of `acked` bytes with an RTT sample: the window's step (section 2.1).
    fn step(&mut self, w: &Window, now: Time, acked: u64, srtt: Dur) -> f64 {
        let mss = w.mss as f64;
        let mut cwnd = self.cwnd.unwrap_or(w.cwnd as f64);
        let (Some(standing), Some(min_rtt)) = (self.standing.get(), self.min_rtt.get()) else { return cwnd };
        let below = self.below_target(cwnd / mss, standing, min_rtt);
        if self.slow_start && below {
            cwnd += acked as f64;
        } else {
            self.slow_start = false;
            self.velocity.update(now, cwnd, srtt);
            let packets_acked = acked as f64 / mss;
            let change = packets_acked * self.velocity.v / (self.delta * cwnd / mss) * mss;
            cwnd += if below { change } else { -change };
        }
        cwnd.max(MIN_CWND * mss)
    }

    /// Copa's pacing rate: `2·cwnd/RTTstanding` of payload.
    fn pacing_rate(&self, cwnd: f64) -> Option<BitRate> {
        let standing = self.standing.get()?.as_secs_f64();
        (standing > 0.0).then(|| BitRate((PACING_GAIN * cwnd * 8.0 / standing) as u64))
    }
}

impl CongestionControl for Copa {
    fn capabilities(&self) -> Capabilities {
        Capabilities { rate_samples: true, ..Capabilities::window(Recovery::NewReno) }
    }
    fn initial_window(&self, _mss: u64) -> u64 {
        self.initial_window
    }

    /// Called twice on some ACKs (as a window controller without the rate sample, then with
    /// it): only the call with the sample acts.
    fn on_ack(&mut self, w: &mut Window, s: &AckSample) -> AckResponse {
        let Some(rs) = s.rate else { return AckResponse::default() };
        let srtt = s.srtt.unwrap_or(Dur::ZERO);
        if let Some(rtt) = rs.rtt.or(s.rtt) {
            self.standing.add(s.now, rtt, Dur(srtt.0 / 2));
            self.min_rtt.add(s.now, rtt, MIN_RTT_WINDOW);
            if let (Some(c), Some(standing), Some(min_rtt)) =
                (self.competitive.as_mut(), self.standing.get(), self.min_rtt.get())
            {
                c.on_rtt(s.now, rtt, standing, min_rtt, srtt);
                self.delta = c.delta();
            }
        }
        let cwnd = self.step(w, s.now, rs.acked_sacked, srtt);
        self.cwnd = Some(cwnd);
        w.cwnd = cwnd as u64;
        AckResponse { pacing_rate: self.pacing_rate(cwnd), app_limited: false }
    }

    /// The default mode leaves the window to the delay signal on loss (ssthresh = cwnd); a
    /// timeout restarts from the smallest window in slow start. While competing, a loss
    /// halves 1/δ.
    fn on_congestion(&mut self, w: &Window, signal: Signal) -> u64 {
        if let Some(c) = self.competitive.as_mut().filter(|_| matches!(signal, Signal::DupAcks | Signal::Timeout)) {
            c.on_loss();
            self.delta = c.delta();
        }
        if signal == Signal::Timeout {
            self.cwnd = Some(MIN_CWND * w.mss as f64);
            self.slow_start = true;
            self.velocity = Velocity::new();
        }
        w.cwnd
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::RateSample;

    const MSS: u64 = 1000;

    fn ack(c: &mut Copa, w: &mut Window, at_ms: u64, rtt_ms: u64, srtt_ms: u64) -> AckResponse {
        let rs = RateSample { acked_sacked: MSS, rtt: Some(Dur::from_millis(rtt_ms)), ..RateSample::default() };
        let s = AckSample {
            now: Time(at_ms * 1_000_000),
            acked: MSS,
            rtt: Some(Dur::from_millis(rtt_ms)),
            srtt: Some(Dur::from_millis(srtt_ms)),
            ece_bytes: 0,
            ack_delay: None,
            rate: Some(&rs),
            telemetry: None,
        };
        c.on_ack(w, &s)
    }

    fn window(segments: u64) -> Window {
        Window { cwnd: segments * MSS, ssthresh: u64::MAX, mss: MSS, flight: 0, peer_window: u64::MAX }
    }

    /// Hand trace, δ = 0.5, MSS 1000 B, srtt 100 ms (RTTstanding: the least RTT of the last
    /// 50 ms):
    /// 1. RTT 100 ms at t = 0: dq = 0, below target, slow start: cwnd 10 → 11 segments.
    /// 2. RTT 120 ms at t = 60 ms (the 100 ms sample is 60 ms old, out of the standing window):
    ///    dq = 20 ms, λ = 11/0.12 = 91.7 ≤ λt = 1/(0.5·0.02) = 100: still slow start, 12
    ///    segments.
    /// 3. RTT 130 ms at t = 200 ms: dq = 30 ms, λ = 12/0.13 = 92.3 > λt = 66.7: slow start
    ///    ends; v = 1: cwnd −= 1/(0.5·12) = 1/6 segment → 11 833.3 B.
    /// 4. RTT 100 ms at t = 210 ms: dq = 0 (standing = min): +1/(0.5·11.8333) = 0.16901
    ///    segment → 12 002.3 B.
    #[test]
    fn window_update_follows_the_paper_by_hand() {
        let mut c = Copa::new(&CopaConfig::default()).unwrap();
        let mut w = window(10);
        ack(&mut c, &mut w, 0, 100, 100);
        assert_eq!(w.cwnd, 11 * MSS);
        ack(&mut c, &mut w, 60, 120, 100);
        assert_eq!(w.cwnd, 12 * MSS);
        let out = ack(&mut c, &mut w, 200, 130, 100);
        assert_eq!(w.cwnd, 11_833);
        // Pacing 2·cwnd/RTTstanding = 2·11 833.3·8/0.13 b/s.
        let pacing = out.pacing_rate.unwrap().0 as f64;
        assert!((pacing - 2.0 * (12_000.0 - 1_000.0 / 6.0) * 8.0 / 0.13).abs() <= 1.0, "{pacing}");
        ack(&mut c, &mut w, 210, 100, 100);
        assert_eq!(w.cwnd, 12_002);
    }

    /// Section 2.2: v doubles once the window has moved one way for three RTTs.
    #[test]
    fn velocity_doubles_after_three_rtts_in_one_direction() {
        let mut v = Velocity::new();
        let rtt = Dur::from_millis(100);
        v.update(Time(0), 10.0, rtt); // the first RTT begins
        let mut cwnd = 10.0;
        let mut seen = vec![];
        for k in 1..=5u64 {
            cwnd += 1.0;
            v.update(Time(k * 100_000_000), cwnd, rtt);
            seen.push(v.v);
        }
        assert_eq!(seen, vec![1.0, 1.0, 2.0, 4.0, 8.0]);
        v.update(Time(600_000_000), cwnd - 5.0, rtt); // the direction changes
        assert_eq!(v.v, 1.0);
    }

    #[test]
    fn windowed_min_forgets_old_samples() {
        let mut m = WindowedMin::default();
        let win = Dur::from_millis(50);
        m.add(Time(0), Dur::from_millis(10), win);
        m.add(Time(20_000_000), Dur::from_millis(30), win);
        assert_eq!(m.get(), Some(Dur::from_millis(10)));
        m.add(Time(60_000_000), Dur::from_millis(40), win);
        assert_eq!(m.get(), Some(Dur::from_millis(30)));
    }

    /// Section 2.3 by hand, δ = 0.5, srtt and RTTmin 100 ms:
    /// 1. t = 0, RTT 100 ms: no queue, nearly empty.
    /// 2. t = 100-500 ms, RTT 150 ms: queuing 50 ms against a largest 50 ms, not nearly empty;
    ///    at 500 ms not yet 5 RTTs since empty (δ 0.5); at 600 ms past them: competitive, 1/δ = 2.
    /// 3. t = 700 ms, a lossless RTT later: 1/δ = 3. A loss: 1/δ = max(1.5, 2) = 2.
    /// 4. t = 800 ms: that RTT saw the loss, 1/δ stays 2; t = 900 ms: 3.
    /// 5. t = 950 ms, RTT 102 ms: queuing 2 ms ≤ 10 % of the 50 ms of the last 4 RTTs: nearly
    ///    empty, back to δ = 0.5.
    #[test]
    fn competitive_mode_detects_a_standing_queue_and_adapts_delta_by_hand() {
        let mut c = Competitive::new(0.5);
        let ms = Dur::from_millis;
        let at = |t: u64| Time(t * 1_000_000);
        let sample = |c: &mut Competitive, t: u64, rtt: u64| {
            c.on_rtt(at(t), ms(rtt), ms(rtt), ms(100), ms(100));
            1.0 / c.delta()
        };
        assert_eq!(sample(&mut c, 0, 100), 2.0);
        for t in [100, 200, 300, 400, 500] {
            assert_eq!(sample(&mut c, t, 150), 2.0);
            assert!(c.inv_delta.is_none(), "competitive at {t} ms");
        }
        assert_eq!(sample(&mut c, 600, 150), 2.0);
        assert!(c.inv_delta.is_some());
        assert_eq!(sample(&mut c, 700, 150), 3.0);
        c.on_loss();
        assert_eq!(1.0 / c.delta(), 2.0);
        assert_eq!(sample(&mut c, 800, 150), 2.0);
        assert_eq!(sample(&mut c, 900, 150), 3.0);
        assert_eq!(sample(&mut c, 950, 102), 2.0);
        assert!(c.inv_delta.is_none());
    }

    /// The default mode keeps δ whatever the queue and the losses.
    #[test]
    fn the_default_mode_never_changes_delta() {
        let mut c = Copa::new(&CopaConfig::default()).unwrap();
        assert!(c.competitive.is_none());
        let mut w = window(10);
        for k in 0..20 {
            ack(&mut c, &mut w, 100 * k, 150, 100);
            c.on_congestion(&w, Signal::DupAcks);
        }
        assert_eq!(c.delta, 0.5);
        let cfg: CopaConfig = serde_json::from_str(r#"{"mode": "competitive"}"#).unwrap();
        assert_eq!(cfg.mode, CopaMode::Competitive);
        let e = serde_json::from_str::<CopaConfig>(r#"{"mode": "bold"}"#).err().unwrap().to_string();
        assert!(e.contains("unknown variant `bold`"), "{e}");
    }

    #[test]
    fn config_errors_name_the_field() {
        let e = Copa::new(&CopaConfig { delta: 0.0, ..Default::default() }).err().unwrap();
        assert_eq!(e.path, "delta");
    }
}
