//! FAST TCP window control (Jin, Wei, Low, INFOCOM '04 / IEEE/ACM ToN 14(6) 2006), with the
//! per-ACK details of the ns-2 module `tcp/tcp-fast.cc` (Cui and Andrew, U. Melbourne, v1.1.3;
//! docs/mechanisms.md#fast-tcp).
//!
//! Per ACK (the sender should sample every ACK: `tcp.rtt_sampling = "every_ack"`; an ACK
//! without a sample leaves the estimates as they are and runs the rest):
//! - `baseRTT = min(baseRTT, rtt)`; `avgRTT ← (1 − g)·avgRTT + g·rtt`, `g = min(1/256, 3/cwnd)`.
//! - Multiplicative-increase start-up while `avgRTT − baseRTT < mi_threshold`: +1 segment per ACK.
//! - Otherwise, once every `update_period` RTTs, at the first ACK of the RTT:
//!   `target = min{2w, max(2, (1−γ)·w + γ·(W·baseRTT/avgRTT + α))}` where `W` is the window when
//!   the acknowledged segment was sent (the window one RTT ago) and `w` the current one; skipped
//!   inside the hysteresis band `α·avgRTT ≤ W·(avgRTT − baseRTT) < β·avgRTT`. A decrease is
//!   applied at once; an increase is spread evenly over the ACKs of the next RTT (as many as the
//!   last RTT had), and whatever is left at the next RTT boundary is applied there.
//! - Loss: cwnd and ssthresh halved (TCP's fast recovery deflates to ssthresh); timeout: 2 segments.
//!
//! After a loss or timeout, ns-2 v1.1.3 re-enters MI: `FAST_ALLOW_MI` is set in `reset()` and
//! never cleared, the MI test in `fast_cc()` runs on every new ACK outside fast recovery, and
//! `timeout()` sets `cwnd_ = slowstart_` (2). So once the queue has drained and avgRTT − baseRTT
//! falls under `mi_threshold`, the window doubles per RTT again. That is the default here
//! (`mi_after_loss = true`). The Linux prototype's rule is not public; `mi_after_loss = false` is
//! the reading of MI as a start-up phase only (docs/mechanisms.md#fast-tcp): the first loss or
//! timeout ends it, and the window then follows the FAST update alone (at most doubling per
//! update period, also from the 2-segment timeout window).
//!
//! Parameters and units: `alpha`, `beta` in packets (segments queued in the path per flow);
//! `gamma` dimensionless in (0, 1]; `mi_threshold` a duration; `update_period` in RTTs.
//! Departure: the "window when the acked packet was sent" is approximated by the window at the
//! previous RTT boundary (the controller does not see per-segment send-time windows).
//! Owns `baseRTT`, `avgRTT` and the pending increase. Must not touch: the sender; it sees only the
//! window and the samples.

use super::{AckResponse, AckSample, Capabilities, CongestionControl, Recovery, Signal, Window};
use crate::error::ConfigError;
use crate::units::Dur;
use serde::{Deserialize, Serialize};

/// FAST's default smoothing of the window update (ns-2 `tcp-fast.cc` default γ = 0.5).
const DEFAULT_GAMMA: f64 = 0.5;
/// Start-up ends once the averaged queueing delay reaches 1.5 ms (a Caltech ns-2 script;
/// docs/mechanisms.md#fast-tcp).
const DEFAULT_MI_THRESHOLD: Dur = Dur::from_micros(1500);
/// ns-2 updates the window every other RTT "as in Linux" (`tcp-fast.cc`).
const DEFAULT_UPDATE_PERIOD_RTTS: u32 = 2;
/// ns-2's RTT averaging weight: g = min(1/256, 3/cwnd).
const AVG_WEIGHT_MAX: f64 = 1.0 / 256.0;
const AVG_WEIGHT_PER_WINDOW: f64 = 3.0;
/// The window never goes below two segments (ns-2 `max(2, ...)` and the timeout window).
const MIN_WINDOW_SEGMENTS: f64 = 2.0;
/// Initial window in segments when the scenario sets none (ns-2 TcpAgent's windowInit_ = 2).
const DEFAULT_INITIAL_WINDOW: u64 = 2;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FastConfig {
    /// Packets each flow aims to keep queued in the path. Required: the papers use 100-500.
    pub alpha: Option<f64>,
    /// Upper edge of the hysteresis band in packets; absent = alpha (no band).
    pub beta: Option<f64>,
    pub gamma: f64,
    /// Multiplicative-increase start-up lasts while avgRTT − baseRTT is below this.
    pub mi_threshold: Dur,
    /// The window is updated once every this many RTTs.
    pub update_period: u32,
    /// Initial window in segments.
    pub initial_window: Option<u64>,
    /// MI resumes after losses and timeouts whenever the queueing delay is under
    /// `mi_threshold` (ns-2); false: MI is a start-up phase that the first loss ends.
    pub mi_after_loss: bool,
}

impl Default for FastConfig {
    fn default() -> Self {
        FastConfig {
            alpha: None,
            beta: None,
            gamma: DEFAULT_GAMMA,
            mi_threshold: DEFAULT_MI_THRESHOLD,
            update_period: DEFAULT_UPDATE_PERIOD_RTTS,
            initial_window: None,
            mi_after_loss: true,
        }
    }
}

/// Per-RTT bookkeeping: when the current RTT ends and what the last one looked like.
#[derive(Clone, Debug, Default)]
struct Round {
    /// End of the current RTT (seconds); None before the first sample.
    ends_at: Option<f64>,
    /// RTTs completed.
    count: u64,
    /// Window (bytes) at the start of the current RTT: "W" one RTT later.
    window_at_start: u64,
    acks_this: u64,
    acks_last: u64,
}

pub struct Fast {
    alpha: f64,
    beta: f64,
    gamma: f64,
    mi_threshold: f64,
    update_period: u64,
    initial_window: u64,
    /// Seconds.
    base_rtt: f64,
    avg_rtt: f64,
    round: Round,
    /// Increase still to spread (bytes) and the step per ACK.
    pending: u64,
    step: u64,
    /// Multiplicative increase may still run (false once a loss ends it, `mi_after_loss = false`).
    mi_allowed: bool,
    mi_after_loss: bool,
}

impl Fast {
    pub fn new(cfg: &FastConfig) -> Result<Self, ConfigError> {
        let alpha = cfg.alpha.ok_or_else(|| ConfigError::new("alpha", "required: packets to keep queued per flow"))?;
        if !(alpha > 0.0 && alpha.is_finite()) {
            return Err(ConfigError::new("alpha", "must be a positive number of packets"));
        }
        let beta = cfg.beta.unwrap_or(alpha);
        if !(beta >= alpha && beta.is_finite()) {
            return Err(ConfigError::new("beta", "must be at least alpha"));
        }
        let target = "the most packets a per-flow target may name";
        crate::limits::check_at_most("alpha", alpha, crate::limits::MAX_PACKETS_TARGET, target)?;
        crate::limits::check_at_most("beta", beta, crate::limits::MAX_PACKETS_TARGET, target)?;
        if !(cfg.gamma > 0.0 && cfg.gamma <= 1.0) {
            return Err(ConfigError::new("gamma", "must be in (0, 1]"));
        }
        if cfg.update_period == 0 || cfg.initial_window == Some(0) {
            let field = if cfg.update_period == 0 { "update_period" } else { "initial_window" };
            return Err(ConfigError::new(field, "must be at least 1"));
        }
        Ok(Fast {
            alpha,
            beta,
            gamma: cfg.gamma,
            mi_threshold: cfg.mi_threshold.as_secs_f64(),
            update_period: cfg.update_period as u64,
            initial_window: cfg.initial_window.unwrap_or(DEFAULT_INITIAL_WINDOW),
            base_rtt: f64::INFINITY,
            avg_rtt: 0.0,
            round: Round::default(),
            pending: 0,
            step: 0,
            mi_allowed: true,
            mi_after_loss: cfg.mi_after_loss,
        })
    }

    pub fn base_rtt(&self) -> f64 {
        self.base_rtt
    }
    pub fn avg_rtt(&self) -> f64 {
        self.avg_rtt
    }

    fn fold_rtt(&mut self, rtt: f64, cwnd_segments: f64) {
        self.base_rtt = self.base_rtt.min(rtt);
        if self.avg_rtt == 0.0 {
            self.avg_rtt = rtt;
        } else {
            let g = AVG_WEIGHT_MAX.min(AVG_WEIGHT_PER_WINDOW / cwnd_segments.max(1.0));
            self.avg_rtt = (1.0 - g) * self.avg_rtt + g * rtt;
        }
    }

    /// Advance the RTT bookkeeping; true at the first ACK of a new RTT.
    fn new_round(&mut self, now: f64, cwnd: u64) -> (bool, u64) {
        let r = &mut self.round;
        r.acks_this += 1;
        let Some(ends_at) = r.ends_at else {
            r.ends_at = Some(now + self.avg_rtt);
            r.window_at_start = cwnd;
            return (false, cwnd);
        };
        if now < ends_at {
            return (false, r.window_at_start);
        }
        let w_then = r.window_at_start;
        r.count += 1;
        r.ends_at = Some(now + self.avg_rtt);
        r.window_at_start = cwnd;
        r.acks_last = r.acks_this - 1;
        r.acks_this = 1;
        (true, w_then)
    }

    /// The FAST target window in segments, or None inside the hysteresis band.
    pub fn target(&self, w: f64, w_then: f64) -> Option<f64> {
        let (base, avg) = (self.base_rtt, self.avg_rtt);
        let queued = w_then * (avg - base);
        if queued >= self.alpha * avg && queued < self.beta * avg {
            return None;
        }
        let t = (1.0 - self.gamma) * w + self.gamma * (w_then * base / avg + self.alpha);
        Some(t.max(MIN_WINDOW_SEGMENTS).min(2.0 * w))
    }

    fn update(&mut self, win: &mut Window, w_then: u64) {
        let mss = win.mss as f64;
        let Some(target) = self.target(win.cwnd as f64 / mss, w_then as f64 / mss) else { return };
        let target = (target * mss) as u64;
        if target < win.cwnd {
            win.cwnd = target;
            self.pending = 0;
        } else {
            self.pending = target - win.cwnd;
            self.step = self.pending.div_ceil(self.round.acks_last.max(1));
        }
    }

    fn spread_increase(&mut self, win: &mut Window) {
        let inc = self.step.min(self.pending);
        win.cwnd += inc;
        self.pending -= inc;
    }
}

impl Fast {
    /// The window's growth for one ACK of new data outside loss recovery.
    fn grow_window(&mut self, win: &mut Window, s: &AckSample) {
        if let Some(rtt) = s.rtt {
            self.fold_rtt(rtt.as_secs_f64(), win.cwnd as f64 / win.mss as f64);
        }
        if self.avg_rtt == 0.0 {
            return; // no RTT estimate yet: nothing to control with
        }
        let (boundary, w_then) = self.new_round(s.now.as_secs_f64(), win.cwnd);
        if boundary {
            win.cwnd += std::mem::take(&mut self.pending); // what the last spread left over
        }
        if self.mi_allowed && self.avg_rtt - self.base_rtt < self.mi_threshold {
            win.cwnd += win.mss;
            return;
        }
        if boundary && self.round.count.is_multiple_of(self.update_period) {
            self.update(win, w_then);
        }
        self.spread_increase(win);
    }
}

impl CongestionControl for Fast {
    fn capabilities(&self) -> Capabilities {
        Capabilities { loss_window_segments: MIN_WINDOW_SEGMENTS as u8, ..Capabilities::window(Recovery::NewReno) }
    }
    fn initial_window(&self, _mss: u64) -> u64 {
        self.initial_window
    }

    #[inline]
    fn on_ack(&mut self, win: &mut Window, s: &AckSample) -> AckResponse {
        self.grow_window(win, s);
        AckResponse::default()
    }

    fn on_congestion(&mut self, w: &Window, _signal: Signal) -> u64 {
        self.pending = 0;
        self.mi_allowed &= self.mi_after_loss;
        (w.cwnd / 2).max(MIN_WINDOW_SEGMENTS as u64 * w.mss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Time;

    const MSS: u64 = 1000;

    fn fast(alpha: f64, period: u32, mi_ms: u64) -> Fast {
        let cfg = FastConfig {
            alpha: Some(alpha),
            update_period: period,
            mi_threshold: Dur::from_millis(mi_ms),
            ..Default::default()
        };
        Fast::new(&cfg).unwrap()
    }

    fn win(segments: u64) -> Window {
        Window { cwnd: segments * MSS, ssthresh: u64::MAX, mss: MSS, flight: 0, peer_window: u64::MAX }
    }

    fn ack(f: &mut Fast, w: &mut Window, t_ms: u64, rtt_ms: u64) {
        let s = AckSample {
            now: Time(t_ms * 1_000_000),
            acked: MSS,
            rtt: Some(Dur::from_millis(rtt_ms)),
            srtt: None,
            ece_bytes: 0,
            ack_delay: None,
            rate: None,
            telemetry: None,
        };
        f.on_ack(w, &s);
    }

    /// avgRTT after one more sample, as ns-2 computes it (cwnd of 100 segments: g = 1/256).
    fn ewma(avg: f64, rtt: f64) -> f64 {
        avg + (rtt - avg) / 256.0
    }

    #[test]
    fn increase_is_spread_over_the_next_rtt_as_hand_computed() {
        let (mut f, mut w) = (fast(10.0, 1, 0), win(100));
        ack(&mut f, &mut w, 0, 100); // base = avg = 0.1 s; the RTT ends at 0.1 s
        ack(&mut f, &mut w, 50, 120);
        assert_eq!(w.cwnd, 100 * MSS);
        ack(&mut f, &mut w, 100, 120); // the RTT boundary: update
        let avg = ewma(ewma(0.1, 0.12), 0.12);
        assert!((f.avg_rtt() - avg).abs() < 1e-15);
        // target = 0.5·100 + 0.5·(100·0.1/avg + 10) ≈ 104.92 segments, 4922 bytes to add,
        // spread over the 2 ACKs the last RTT had: 2461 now and 2461 at the next ACK.
        let target = 0.5 * 100.0 + 0.5 * (100.0 * 0.1 / avg + 10.0);
        let inc = (target * MSS as f64) as u64 - 100 * MSS;
        assert_eq!(inc, 4922);
        assert_eq!(w.cwnd, 100 * MSS + inc.div_ceil(2));
        ack(&mut f, &mut w, 150, 120);
        assert_eq!(w.cwnd, 100 * MSS + inc);
        ack(&mut f, &mut w, 160, 120);
        assert_eq!(w.cwnd, 100 * MSS + inc, "nothing more before the next update");
    }

    #[test]
    fn decrease_is_immediate_and_updates_come_every_other_rtt() {
        let (mut f, mut w) = (fast(0.05, 2, 0), win(100));
        ack(&mut f, &mut w, 0, 100);
        ack(&mut f, &mut w, 100, 130); // first boundary: RTT 1 of 2, no update
        assert_eq!(w.cwnd, 100 * MSS);
        let avg = ewma(0.1, 0.13);
        ack(&mut f, &mut w, 150, 130);
        let avg = ewma(avg, 0.13);
        ack(&mut f, &mut w, 210, 130); // second boundary: update (RTT ended at 0.1 + avg)
        let avg = ewma(avg, 0.13);
        let target = 0.5 * 100.0 + 0.5 * (100.0 * 0.1 / avg + 0.05);
        assert!(target < 100.0);
        assert_eq!(w.cwnd, (target * MSS as f64) as u64);
    }

    #[test]
    fn start_up_grows_one_segment_per_ack_until_the_delay_threshold() {
        let (mut f, mut w) = (fast(100.0, 2, 2), win(2));
        ack(&mut f, &mut w, 0, 100);
        ack(&mut f, &mut w, 10, 100);
        assert_eq!(w.cwnd, 4 * MSS);
        // Queueing delay in avgRTT stays under 2 ms: each 300 ms sample moves avg by 200/256 ms.
        ack(&mut f, &mut w, 20, 300);
        ack(&mut f, &mut w, 30, 300);
        assert_eq!(w.cwnd, 6 * MSS);
        assert!(f.avg_rtt() - f.base_rtt() < 0.002);
        ack(&mut f, &mut w, 40, 300);
        assert!(f.avg_rtt() - f.base_rtt() >= 0.002);
        assert_eq!(w.cwnd, 6 * MSS, "the third 300 ms sample crosses the threshold: start-up ends");
    }

    #[test]
    fn equilibrium_keeps_alpha_packets_queued() {
        // A fixed point of the update: w = w·base/avg + α with W = w, i.e. w·(avg − base)/avg = α.
        let mut f = fast(50.0, 1, 0);
        f.base_rtt = 0.1;
        f.avg_rtt = 0.11;
        let w = 50.0 * 0.11 / 0.01;
        assert!((f.target(w, w).unwrap() - w).abs() < 1e-9);
        // At most doubling, at least two segments.
        f.avg_rtt = 0.1;
        assert_eq!(f.target(10.0, 10.0), Some(20.0));
        f.avg_rtt = 100.0;
        (f.alpha, f.beta) = (0.1, 0.1);
        assert_eq!(f.target(2.0, 2.0), Some(2.0));
    }

    #[test]
    fn acks_without_samples_still_drive_the_update() {
        // After a timeout nothing may be timed for a while; the window must still move.
        let (mut f, mut w) = (fast(10.0, 1, 0), win(2));
        ack(&mut f, &mut w, 0, 100);
        let none = |t: u64| AckSample {
            now: Time(t * 1_000_000),
            acked: MSS,
            rtt: None,
            srtt: None,
            ece_bytes: 0,
            ack_delay: None,
            rate: None,
            telemetry: None,
        };
        // Boundary with avg = base: target = min(2·2, 0.5·2 + 0.5·(2 + 10)) = 4 segments, all of
        // it at once since the last RTT had a single ACK.
        f.on_ack(&mut w, &none(100));
        assert_eq!(w.cwnd, 4 * MSS);
        f.on_ack(&mut w, &none(150));
        assert_eq!(w.cwnd, 4 * MSS);
    }

    #[test]
    fn loss_halves_and_timeout_leaves_two_segments() {
        let mut f = fast(10.0, 2, 0);
        let w = win(100);
        assert_eq!(f.on_congestion(&w, Signal::DupAcks), 50 * MSS);
        assert_eq!(f.capabilities().loss_window_segments as u64 * w.mss, 2 * MSS);
        assert_eq!(f.capabilities().recovery, Recovery::NewReno);
    }

    /// Start-up ended by queueing delay, then a loss; afterwards the queue has drained (every
    /// sample at baseRTT). Returns the window after two more ACKs, in segments.
    fn window_after_loss_and_drain(mi_after_loss: bool) -> u64 {
        let cfg = FastConfig {
            alpha: Some(10.0),
            update_period: 2,
            mi_threshold: Dur::from_millis(2),
            mi_after_loss,
            ..Default::default()
        };
        let (mut f, mut w) = (Fast::new(&cfg).unwrap(), win(100));
        ack(&mut f, &mut w, 0, 100);
        w.cwnd = 100 * MSS; // undo that first ACK's start-up step
        f.avg_rtt = 0.11; // 10 ms of queueing delay: past start-up
        w.ssthresh = f.on_congestion(&w, Signal::DupAcks);
        w.cwnd = w.ssthresh; // what fast recovery leaves
        f.avg_rtt = 0.1005; // the queue has drained: 0.5 ms < mi_threshold
        ack(&mut f, &mut w, 10, 100); // inside the RTT that began at 0: no boundary
        ack(&mut f, &mut w, 20, 100);
        w.cwnd / MSS
    }

    #[test]
    fn after_a_loss_mi_resumes_as_in_ns2_unless_disabled() {
        // ns-2 v1.1.3: MI is allowed for the connection's life, so with avgRTT − baseRTT under
        // mi_threshold each ACK adds a segment again: 50 + 2.
        assert_eq!(window_after_loss_and_drain(true), 52);
        // MI as start-up only: nothing grows until the next FAST update.
        assert_eq!(window_after_loss_and_drain(false), 50);
    }

    #[test]
    fn after_a_timeout_without_mi_the_update_doubles_at_most() {
        let cfg = FastConfig { alpha: Some(10.0), update_period: 1, mi_after_loss: false, ..Default::default() };
        let (mut f, mut w) = (Fast::new(&cfg).unwrap(), win(100));
        ack(&mut f, &mut w, 0, 100); // base = avg = 0.1 s (MI would apply: 0 < 1.5 ms)
        w.ssthresh = f.on_congestion(&w, Signal::Timeout);
        w.cwnd = f.capabilities().loss_window_segments as u64 * w.mss;
        ack(&mut f, &mut w, 50, 100);
        assert_eq!(w.cwnd, 2 * MSS, "no MI after the timeout");
        // Boundary at 100 ms: the target is capped at twice the window, 4 segments, and spread
        // over the 2 ACKs of the last RTT.
        ack(&mut f, &mut w, 100, 100);
        ack(&mut f, &mut w, 150, 100);
        assert_eq!(w.cwnd, 4 * MSS);
    }

    #[test]
    fn config_errors_name_the_field() {
        let e = Fast::new(&FastConfig::default()).err().unwrap();
        assert_eq!(e.path, "alpha");
        let cfg = FastConfig { alpha: Some(10.0), beta: Some(5.0), ..Default::default() };
        assert_eq!(Fast::new(&cfg).err().unwrap().path, "beta");
        let cfg = FastConfig { alpha: Some(10.0), gamma: 1.5, ..Default::default() };
        assert_eq!(Fast::new(&cfg).err().unwrap().path, "gamma");
    }
}
