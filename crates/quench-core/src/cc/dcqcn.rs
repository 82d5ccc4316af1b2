//! DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015),
//! in the form NICs run it: the Mellanox reaction point of the HPCC authors' simulator
//! (alibaba-edu/High-Precision-Congestion-Control, `rdma-hw.cc`: `cnp_received_mlx`,
//! `UpdateAlphaMlx`, `CheckRateDecreaseMlx`, `RateIncEventTimerMlx`), whose constants are its
//! `mix/config.txt`. A rate-based sender: switches mark ECN as RED does on the instantaneous
//! queue (`kmin`, `kmax`, `pmax`: a RED qdisc with `w_q = 1`); the receiver (notification
//! point) turns marks into congestion notification packets (CNPs), at most one per flow per
//! `cnp_interval`; the sender (reaction point):
//! - on its first CNP sets `alpha = 1` and starts two clocks: every `alpha_interval`,
//!   `alpha = (1 − g)·alpha + g` if a CNP came since the last tick, else `(1 − g)·alpha`; every
//!   `decrease_interval`, if a CNP came since the last check, the target rate takes the rate
//!   (when `clamp_target`, or after any increase), the rate falls to `rate·(1 − alpha/2)` (at
//!   least `min_rate`), and the increase clock restarts;
//! - every `increase_interval` after the last decrease, one increase: the first
//!   `fast_recovery_steps` halve the distance to the target, the next raises the target by
//!   `rate_ai` (at most the line rate), the rest by `rate_hai`, each followed by the halving.
//!
//! Here the CNP is the ECN-Echo of RFC 8257's accurate feedback (every ACK mirrors its data's
//! CE mark), counted by the sender at most once per `cnp_interval`, which is what a notification
//! point's CNP limit gives when every packet is acknowledged. The clocks run in the controller:
//! advanced to each ACK's time (their ticks in between computed in order, alpha's in closed
//! form), and woken by the sender at the ticks that change the rate (`wake_at`: a pending
//! decrease check, an increase while the rate is below the line), so a rate cut to its floor
//! recovers at the increase timer's pace, not at its own crawl's next ACK. The window only
//! keeps a loss of ACKs from stalling nothing: twice the rate's in-flight at the smoothed RTT.
//! Transports: over TCP, TCP's reliability (SACK, RACK); over RoCE (`transport/roce.rs`),
//! go-back-N, the ECN echoes coming back on its ACKs and NAKs. Either way the CNP limit is here.
//! Must not touch: the sender; it sees only the window and the samples.

use super::{
    AckResponse, AckSample, Capabilities, CongestionControl, EcnFeedback, PathFacts, Recovery, Signal, Window,
};
use crate::error::ConfigError;
use crate::units::{BitRate, Dur, Time};
use serde::{Deserialize, Serialize};

/// The simulator's `EWMA_GAIN`, 1/256 (the paper's g).
const DEFAULT_G: f64 = 1.0 / 256.0;
/// `ALPHA_RESUME_INTERVAL`, 1 µs.
const DEFAULT_ALPHA_INTERVAL: Dur = Dur::from_micros(1);
/// `RATE_DECREASE_INTERVAL`, 4 µs.
const DEFAULT_DECREASE_INTERVAL: Dur = Dur::from_micros(4);
/// `RP_TIMER`, 900 µs.
const DEFAULT_INCREASE_INTERVAL: Dur = Dur::from_micros(900);
/// `FAST_RECOVERY_TIMES`, 1.
const DEFAULT_FAST_RECOVERY_STEPS: u32 = 1;
/// `RATE_AI`, 50 Mb/s, and `RATE_HAI`, 100 Mb/s.
const DEFAULT_RATE_AI: BitRate = BitRate(50_000_000);
const DEFAULT_RATE_HAI: BitRate = BitRate(100_000_000);
/// `MIN_RATE`, 100 Mb/s.
const DEFAULT_MIN_RATE: BitRate = BitRate(100_000_000);
/// The notification point's CNP limit per flow: the paper's 50 µs (section 3.2).
const DEFAULT_CNP_INTERVAL: Dur = Dur::from_micros(50);
/// The least window in segments, as Linux's initial window (RFC 6928's 10), so that the
/// window never binds a rate-based sender on a short path.
const INITIAL_WINDOW_FLOOR: u64 = 10;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DcqcnConfig {
    pub g: f64,
    pub alpha_interval: Dur,
    pub decrease_interval: Dur,
    pub increase_interval: Dur,
    pub fast_recovery_steps: u32,
    pub rate_ai: BitRate,
    pub rate_hai: BitRate,
    pub min_rate: BitRate,
    pub cnp_interval: Dur,
    /// The target rate takes the current rate at every decrease (`CLAMP_TARGET_RATE`); off: only
    /// after an increase has moved the rate since the last decrease.
    pub clamp_target: bool,
    /// The rate the sender starts at; the sender's own link's when absent.
    pub line_rate: Option<BitRate>,
}

impl Default for DcqcnConfig {
    fn default() -> Self {
        DcqcnConfig {
            g: DEFAULT_G,
            alpha_interval: DEFAULT_ALPHA_INTERVAL,
            decrease_interval: DEFAULT_DECREASE_INTERVAL,
            increase_interval: DEFAULT_INCREASE_INTERVAL,
            fast_recovery_steps: DEFAULT_FAST_RECOVERY_STEPS,
            rate_ai: DEFAULT_RATE_AI,
            rate_hai: DEFAULT_RATE_HAI,
            min_rate: DEFAULT_MIN_RATE,
            cnp_interval: DEFAULT_CNP_INTERVAL,
            clamp_target: false,
            line_rate: None,
        }
    }
}

/// The reaction point's clocks, started by the first CNP.
#[derive(Clone, Copy, Debug)]
struct Clocks {
    next_alpha: Time,
    next_decrease: Time,
    next_increase: Option<Time>,
}

pub struct Dcqcn {
    cfg: DcqcnConfig,
    line_rate: f64,
    /// R_C and R_T, bit/s.
    rate: f64,
    target: f64,
    alpha: f64,
    cnp_for_alpha: bool,
    cnp_for_decrease: bool,
    increase_stage: u32,
    last_cnp: Option<Time>,
    clocks: Option<Clocks>,
    /// The idle path's round trip, for the first window.
    base_rtt: Dur,
    /// The smoothed RTT of the last ACK, for the window the clock's wake-ups set.
    srtt: f64,
}

impl Dcqcn {
    pub fn new(cfg: &DcqcnConfig) -> Result<Self, ConfigError> {
        if !(cfg.g > 0.0 && cfg.g < 1.0) {
            return Err(ConfigError::new("g", "must be in (0, 1)"));
        }
        for (key, d) in [
            ("alpha_interval", cfg.alpha_interval),
            ("decrease_interval", cfg.decrease_interval),
            ("increase_interval", cfg.increase_interval),
        ] {
            if d.is_zero() {
                return Err(ConfigError::new(key, "must be positive"));
            }
        }
        if cfg.min_rate.0 == 0 {
            return Err(ConfigError::new("min_rate", "must be positive"));
        }
        if cfg.line_rate.is_some_and(|r| r.0 == 0) {
            return Err(ConfigError::new("line_rate", "must be positive"));
        }
        let line = cfg.line_rate.map_or(0.0, |r| r.0 as f64);
        Ok(Dcqcn {
            cfg: cfg.clone(),
            line_rate: line,
            rate: line,
            target: line,
            alpha: 1.0,
            cnp_for_alpha: false,
            cnp_for_decrease: false,
            increase_stage: 0,
            last_cnp: None,
            clocks: None,
            base_rtt: Dur::ZERO,
            srtt: 0.0,
        })
    }

    /// The current rate R_C, bit/s.
    pub fn rate_bps(&self) -> f64 {
        self.rate
    }

    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// Alpha's ticks up to and including `until`: the first takes the CNP flag, the rest decay
    /// (closed form: there may be many between two ACKs).
    fn run_alpha(&mut self, c: &mut Clocks, until: Time) {
        if c.next_alpha > until {
            return;
        }
        let period = self.cfg.alpha_interval.0;
        let ticks = (until.0 - c.next_alpha.0) / period + 1;
        let g = self.cfg.g;
        let mut rest = ticks;
        if self.cnp_for_alpha {
            self.alpha = (1.0 - g) * self.alpha + g;
            self.cnp_for_alpha = false;
            rest -= 1;
        }
        self.alpha *= (1.0 - g).powi(rest.min(i32::MAX as u64) as i32);
        c.next_alpha = Time(c.next_alpha.0 + ticks * period);
    }

    /// The increase ticks up to and including `until`.
    fn run_increases(&mut self, c: &mut Clocks, until: Time) {
        while let Some(at) = c.next_increase.filter(|&at| at <= until) {
            let steps = self.cfg.fast_recovery_steps;
            if self.increase_stage == steps {
                self.target = (self.target + self.cfg.rate_ai.0 as f64).min(self.line_rate);
            } else if self.increase_stage > steps {
                self.target = (self.target + self.cfg.rate_hai.0 as f64).min(self.line_rate);
            }
            self.rate = (self.rate + self.target) / 2.0;
            self.increase_stage += 1;
            c.next_increase = Some(at + self.cfg.increase_interval);
        }
    }

    /// Every tick of the three clocks up to `now`, in time order: the one decrease a CNP since
    /// the last ACK can cause comes at its check, after the ticks before it.
    fn advance(&mut self, now: Time) {
        let Some(mut c) = self.clocks else { return };
        if self.cnp_for_decrease && c.next_decrease <= now {
            let period = self.cfg.decrease_interval.0;
            let at = c.next_decrease;
            // alpha's tick at the same instant comes first (the simulator's 1 ns offset).
            self.run_alpha(&mut c, at);
            self.run_increases(&mut c, Time(at.0.saturating_sub(1)));
            if self.cfg.clamp_target || self.increase_stage != 0 {
                self.target = self.rate;
            }
            self.rate = (self.rate * (1.0 - self.alpha / 2.0)).max(self.cfg.min_rate.0 as f64);
            self.increase_stage = 0;
            self.cnp_for_decrease = false;
            c.next_increase = Some(at + self.cfg.increase_interval);
            c.next_decrease = Time(at.0 + period);
        }
        if c.next_decrease <= now {
            let period = self.cfg.decrease_interval.0;
            c.next_decrease = Time(c.next_decrease.0 + ((now.0 - c.next_decrease.0) / period + 1) * period);
        }
        self.run_alpha(&mut c, now);
        self.run_increases(&mut c, now);
        self.clocks = Some(c);
    }

    /// A CNP at `now`, if the notification point would send one: the first starts the clocks.
    fn on_cnp(&mut self, now: Time) {
        if self.last_cnp.is_some_and(|t| now.saturating_sub(t) < self.cfg.cnp_interval) {
            return;
        }
        self.last_cnp = Some(now);
        self.cnp_for_decrease = true;
        if self.clocks.is_none() {
            self.alpha = 1.0;
            self.target = self.rate;
            // The simulator's first decrease check comes 1 ns after alpha's tick of the same
            // instant, then every interval.
            self.clocks = Some(Clocks {
                next_alpha: now + self.cfg.alpha_interval,
                next_decrease: Time((now + self.cfg.decrease_interval).0 + 1),
                next_increase: None,
            });
        } else {
            self.cnp_for_alpha = true;
        }
    }
}

impl Dcqcn {
    /// Twice the rate's in-flight at the smoothed RTT, at least the initial window's floor.
    fn set_window(&self, w: &mut Window) -> AckResponse {
        let in_flight = (self.rate / 8.0 * self.srtt) as u64;
        w.cwnd = (2 * in_flight).max(INITIAL_WINDOW_FLOOR * w.mss);
        AckResponse { pacing_rate: Some(BitRate(self.rate.round() as u64)), app_limited: false }
    }
}

impl CongestionControl for Dcqcn {
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            rate_samples: true,
            ecn_feedback: EcnFeedback::Accurate,
            own_clock: true,
            ..Capabilities::window(Recovery::NewReno)
        }
    }

    /// The next tick that changes the rate: the decrease check a CNP waits for, or the next
    /// increase while the rate or its target is below the line rate. Alpha's ticks change the
    /// rate only through a decrease, which computes them then.
    fn wake_at(&self) -> Option<Time> {
        let c = self.clocks?;
        let decrease = self.cnp_for_decrease.then_some(c.next_decrease);
        let below_line = self.rate < self.line_rate || self.target < self.line_rate;
        let increase = c.next_increase.filter(|_| below_line);
        decrease.into_iter().chain(increase).min()
    }

    fn on_wake(&mut self, w: &mut Window, now: Time) -> AckResponse {
        self.advance(now);
        self.set_window(w)
    }

    /// Twice the line rate's in-flight over the idle path, at least 10 segments: the first
    /// round is paced at line rate and the window does not bind.
    fn initial_window(&self, mss: u64) -> u64 {
        let bdp = self.line_rate / 8.0 * self.base_rtt.as_secs_f64();
        ((2.0 * bdp / mss as f64).ceil() as u64).max(INITIAL_WINDOW_FLOOR)
    }

    fn take_path(&mut self, path: &PathFacts) {
        self.base_rtt = path.base_rtt;
        if self.cfg.line_rate.is_none() {
            self.line_rate = path.line_rate.0 as f64;
            (self.rate, self.target) = (self.line_rate, self.line_rate);
        }
    }

    /// Called twice on some ACKs (as a window controller without the rate sample, then with
    /// it): only the call with the sample acts.
    fn on_ack(&mut self, w: &mut Window, s: &AckSample) -> AckResponse {
        if s.rate.is_none() {
            return AckResponse::default();
        }
        self.advance(s.now);
        if s.ece_bytes > 0 {
            self.on_cnp(s.now);
        }
        self.srtt = s.srtt.map_or(0.0, |d| d.as_secs_f64());
        self.set_window(w)
    }

    /// A loss or ECN-Echo: the rate carries the reaction (ECN-Echo arrives as `ece_bytes`).
    fn on_congestion(&mut self, w: &Window, _signal: Signal) -> u64 {
        w.cwnd
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::RateSample;

    const MSS: u64 = 1000;

    fn dcqcn() -> Dcqcn {
        Dcqcn::new(&DcqcnConfig { line_rate: Some(BitRate(10_000_000_000)), ..Default::default() }).unwrap()
    }

    fn ack(c: &mut Dcqcn, at_us: f64, marked: bool) -> AckResponse {
        let rs = RateSample::default();
        let s = AckSample {
            now: Time((at_us * 1000.0) as u64),
            acked: MSS,
            ece_bytes: if marked { MSS } else { 0 },
            srtt: Some(Dur::from_micros(10)),
            rate: Some(&rs),
            ..AckSample::default()
        };
        let mut w = Window { cwnd: 10 * MSS, ssthresh: u64::MAX, mss: MSS, flight: 0, peer_window: u64::MAX };
        c.on_ack(&mut w, &s)
    }

    /// 10 Gb/s less the first decrease: alpha = 1 at the first CNP (at 0), four ticks without a
    /// CNP by the check at 4 µs + 1 ns.
    fn after_first_decrease() -> f64 {
        10e9 * (1.0 - (255.0f64 / 256.0).powi(4) / 2.0)
    }

    /// By hand, 10 Gb/s: a CNP at 0 sets alpha = 1; alpha decays by 255/256 per µs; the check
    /// at 4.001 µs cuts the rate by alpha/2; then, from the check, every 900 µs an increase:
    /// fast recovery halves the gap to the 10 Gb/s target, the additive step (its target capped
    /// at the line) and the hyper step do too.
    #[test]
    fn decrease_then_the_three_increase_stages_by_hand() {
        let mut c = dcqcn();
        assert_eq!(ack(&mut c, 0.0, false).pacing_rate, Some(BitRate(10_000_000_000)));
        ack(&mut c, 0.0, true);
        ack(&mut c, 3.9, false);
        assert_eq!(c.rate_bps(), 10e9, "no check before 4.001 µs");
        ack(&mut c, 5.0, false);
        let mut rate = after_first_decrease();
        assert!((c.rate_bps() - rate).abs() < 1.0, "{}", c.rate_bps());
        ack(&mut c, 100.5, false);
        assert!((c.alpha() - (255.0f64 / 256.0).powi(100)).abs() < 1e-12, "{}", c.alpha());
        for at in [904.5, 1804.5, 2704.5] {
            rate = (rate + 10e9) / 2.0;
            ack(&mut c, at, false);
            assert!((c.rate_bps() - rate).abs() < 1.0, "at {at} µs: {} against {rate}", c.rate_bps());
        }
    }

    /// A CNP within 50 µs of the last is not sent; a later one is seen by the next check, which
    /// cuts by alpha/2, and sets alpha's flag, so the next tick raises alpha by g.
    #[test]
    fn a_later_cnp_and_the_notification_points_limit() {
        let mut c = dcqcn();
        ack(&mut c, 0.0, true);
        ack(&mut c, 10.0, true); // within 50 µs of the first: no CNP, so no decrease at 12.001
        ack(&mut c, 20.0, false);
        let rate = after_first_decrease();
        assert!((c.rate_bps() - rate).abs() < 1.0);
        ack(&mut c, 60.0, true); // a CNP
        let alpha_before = c.alpha();
        assert!((alpha_before - (255.0f64 / 256.0).powi(60)).abs() < 1e-12);
        // The check at 60.001 µs cuts by the alpha of the tick at 60; the CNP's flag raises
        // alpha at the tick at 61 µs, and 62, 63, 64 decay it.
        ack(&mut c, 64.5, false);
        assert!((c.rate_bps() - rate * (1.0 - alpha_before / 2.0)).abs() < 1.0);
        let alpha = ((1.0 - 1.0 / 256.0) * alpha_before + 1.0 / 256.0) * (255.0f64 / 256.0).powi(3);
        assert!((c.alpha() - alpha).abs() < 1e-12, "{} {}", c.alpha(), alpha);
    }

    /// Without ACKs the clock wakes the controller at the checks and increases that change
    /// the rate: the decrease check at 4.001 µs after a CNP at 0, then every 900 µs from it,
    /// each halving the gap to the 10 Gb/s target, as by ACKs at the same times.
    #[test]
    fn the_clock_wakes_at_the_ticks_that_change_the_rate() {
        let mut c = dcqcn();
        assert_eq!(c.wake_at(), None, "no clock before the first CNP");
        ack(&mut c, 0.0, true);
        assert_eq!(c.wake_at(), Some(Time(4_001)), "the decrease check the CNP waits for");
        let mut w = Window { cwnd: 10 * MSS, ssthresh: u64::MAX, mss: MSS, flight: 0, peer_window: u64::MAX };
        let mut rate = after_first_decrease();
        let out = c.on_wake(&mut w, Time(4_001));
        assert_eq!(out.pacing_rate, Some(BitRate(rate.round() as u64)));
        let mut at = 4_001;
        for _ in 0..3 {
            at += 900_000;
            assert_eq!(c.wake_at(), Some(Time(at)), "the next increase");
            rate = (rate + 10e9) / 2.0;
            c.on_wake(&mut w, Time(at));
            assert!((c.rate_bps() - rate).abs() < 1.0, "at {at} ns: {} against {rate}", c.rate_bps());
        }
        while c.rate_bps() < 10e9 {
            let next = c.wake_at().expect("increases go on below the line rate");
            c.on_wake(&mut w, next);
        }
        assert_eq!(c.wake_at(), None, "at the line rate no tick changes anything");
    }

    #[test]
    fn rejects_bad_parameters() {
        for cfg in [
            DcqcnConfig { g: 0.0, ..Default::default() },
            DcqcnConfig { alpha_interval: Dur::ZERO, ..Default::default() },
            DcqcnConfig { min_rate: BitRate(0), ..Default::default() },
        ] {
            assert!(Dcqcn::new(&cfg).is_err());
        }
    }
}
