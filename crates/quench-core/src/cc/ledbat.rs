//! LEDBAT, Low Extra Delay Background Transport (RFC 6817): a less-than-best-effort controller
//! that keeps the queuing delay it adds near `TARGET` and yields to loss-based flows.
//!
//! Per ACK (RFC 6817 section 2.4.2): queuing delay = FILTER(current delays) − MIN(base delays);
//! `off_target = (TARGET − queuing_delay)/TARGET`; `cwnd += GAIN·off_target·bytes_acked·MSS/cwnd`,
//! at most `flightsize + ALLOWED_INCREASE·MSS` and at least `MIN_CWND·MSS`. The base delay is the
//! minimum over `BASE_HISTORY` one-minute buckets (section 3.4.1); the current delay the minimum
//! of the last `CURRENT_FILTER` samples (section 3.4.2). Loss: ssthresh = half the flight, at
//! least `MIN_CWND·MSS` (the RFC halves cwnd, which outside recovery is the flight plus at most
//! a segment), once per window by the sender's recovery.
//!
//! Delay samples: RTT samples rather than one-way delays. RFC 6817 measures one-way delay
//! from the receiver's timestamps; ns-3's `TcpLedbat` uses TSval − TSecr of each ACK (the
//! receiver's clock minus the echoed sender's: the forward delay plus the receiver's ACK hold).
//! Either way only the difference from the base matters, and with an uncongested return path
//! RTT − baseRTT is the forward queuing delay. So the flow needs a sample per ACK (every-ACK
//! RTT sampling or timestamps, as ns-3's needs timestamps), checked when it is built.
//!
//! Slow start (an option, on by default as in ns-3's `TcpLedbat`, `SSParam`): Reno's slow start
//! while cwnd ≤ ssthresh until congestion avoidance first runs, and again only after the window
//! has fallen to one segment (a timeout); congestion avoidance keeps ssthresh below cwnd.
//!
//! LEDBAT++ (`variant = "ledbat++"`, off by default; draft-irtf-iccrg-ledbat-plus-plus, the
//! Windows design of Balasubramanian, Ertugay, Havey and Bagnulo; sections 4.1-4.5 of its
//! revision 01) changes five things (`PlusPlus` and the `plus_plus_*` methods): a 60 ms
//! target; a gain of GAIN/min(16, ceil(2·TARGET/base_delay)) instead of GAIN; above target a multiplicative
//! decrease `W += GAIN − W·(queuing/TARGET − 1)` per RTT, at most W/2; a slow start at that gain
//! that ends once the queuing delay passes 3/4 of TARGET; and slowdowns: 2 RTTs after slow start
//! ends, cwnd is held at MIN_CWND for 2 RTTs (the queue drains and the base delay is measured
//! again), then slow start regains the window; the next slowdown begins 9 times the last one's
//! duration after it ended. The RFC 6817 path does not run any of it.
//! Must not touch: the sender; it sees only the window and the samples.

use super::{aimd_growth, AckResponse, AckSample, Capabilities, CongestionControl, Recovery, Signal, Window};
use crate::error::ConfigError;
use crate::units::{Dur, Time};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// RFC 6817 section 2.5: TARGET MUST be 100 ms or less; ns-3 `TcpLedbat::TargetDelay` = 100 ms.
const DEFAULT_TARGET: Dur = Dur::from_millis(100);
/// draft-irtf-iccrg-ledbat-plus-plus(-01) section 4.5: 60 ms, below RFC 6817's 100.
const PLUS_PLUS_TARGET: Dur = Dur::from_millis(60);
/// LEDBAT++'s reduced gain (section 4.2): GAIN/min(GAIN_DIVISOR_MAX, ceil(2·TARGET/base_delay)).
const GAIN_DIVISOR_MAX: f64 = 16.0;
/// LEDBAT++'s multiplicative decrease (section 4.3): `Constant` = 1, and a decrease of at most
/// half the window per RTT.
const DECREASE_CONSTANT: f64 = 1.0;
const MAX_DECREASE_PER_RTT: f64 = 0.5;
/// LEDBAT++'s slow start (section 4.1) ends once the queuing delay exceeds this fraction of TARGET.
const SLOW_START_EXIT_FRACTION: f64 = 0.75;
/// LEDBAT++'s slowdowns (section 4.4): the first begins this many RTTs after slow start ends; cwnd is held
/// at MIN_CWND for this many RTTs.
const SLOWDOWN_DELAY_RTTS: u64 = 2;
const SLOWDOWN_HOLD_RTTS: u64 = 2;
/// The next slowdown begins this many times the last one's duration after it ended (so a
/// slowdown takes about 10 % of the time).
const SLOWDOWN_INTERVAL_FACTOR: u64 = 9;
/// RFC 6817 section 2.5: GAIN MUST be 1 or less (ns-3 `Gain` = 1).
const DEFAULT_GAIN: f64 = 1.0;
/// RFC 6817 section 2.5: ALLOWED_INCREASE SHOULD be 1 (segments).
const DEFAULT_ALLOWED_INCREASE: f64 = 1.0;
/// RFC 6817 section 2.5: MIN_CWND SHOULD be 2 (segments; ns-3 `MinCwnd` = 2).
const DEFAULT_MIN_CWND: u64 = 2;
/// RFC 6817 section 3.4.1: BASE_HISTORY SHOULD be 10 (ns-3 `BaseHistoLen` = 10).
const DEFAULT_BASE_HISTORY: usize = 10;
/// RFC 6817 section 3.4.2: a MIN filter over a few recent samples (ns-3 `NoiseFilterLen` = 4).
const DEFAULT_CURRENT_FILTER: usize = 4;
/// RFC 6817 section 3.4.1: the base delay history keeps one minimum per minute.
const BASE_BUCKET: Dur = Dur::from_secs(60);
/// Slow start's byte counting: a segment per segment acknowledged (ns-3's NewReno slow start),
/// up to RFC 3465's L = 2 segments per ACK.
const SLOW_START_ABC_LIMIT: u64 = 2;
/// Initial window in segments when none is set: ns-3's `TcpSocket::InitialCwnd` default (RFC
/// 6817 sets none).
const DEFAULT_INITIAL_WINDOW: u64 = 10;

/// Which LEDBAT: RFC 6817's, or LEDBAT++ (draft-irtf-iccrg-ledbat-plus-plus).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum LedbatVariant {
    #[default]
    #[serde(rename = "rfc6817")]
    Rfc6817,
    #[serde(rename = "ledbat++")]
    PlusPlus,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LedbatConfig {
    /// RFC 6817 (the default) or LEDBAT++.
    pub variant: LedbatVariant,
    /// The queuing delay LEDBAT aims to add (RFC 6817 TARGET); when None, 100 ms (RFC 6817) or
    /// 60 ms (LEDBAT++).
    pub target: Option<Dur>,
    /// How fast the window moves towards the target (RFC 6817 GAIN, at most 1).
    pub gain: f64,
    /// Segments the window may exceed the flight size by (RFC 6817 ALLOWED_INCREASE).
    pub allowed_increase: f64,
    /// The smallest window, in segments (RFC 6817 MIN_CWND).
    pub min_cwnd: u64,
    /// One-minute buckets of the base delay's history (RFC 6817 BASE_HISTORY).
    pub base_history: usize,
    /// Samples the current delay's MIN filter spans (RFC 6817 CURRENT_FILTER).
    pub current_filter: usize,
    /// Slow start as ns-3's `TcpLedbat` (`SSParam`); false: congestion avoidance from the start.
    pub slow_start: bool,
    pub initial_window: Option<u64>,
}

impl Default for LedbatConfig {
    fn default() -> Self {
        LedbatConfig {
            variant: LedbatVariant::Rfc6817,
            target: None,
            gain: DEFAULT_GAIN,
            allowed_increase: DEFAULT_ALLOWED_INCREASE,
            min_cwnd: DEFAULT_MIN_CWND,
            base_history: DEFAULT_BASE_HISTORY,
            current_filter: DEFAULT_CURRENT_FILTER,
            slow_start: true,
            initial_window: None,
        }
    }
}

/// The two delay estimates of RFC 6817 section 3.4: per-minute minima and the last few samples.
struct DelayFilters {
    /// Minimum delay of each one-minute bucket, oldest first; the last is the current minute's.
    base: VecDeque<Dur>,
    base_len: usize,
    /// The bucket (minutes since time zero) that `base`'s last entry covers.
    current_bucket: u64,
    current: VecDeque<Dur>,
    current_len: usize,
}

impl DelayFilters {
    fn new(base_len: usize, current_len: usize) -> Self {
        DelayFilters {
            base: VecDeque::with_capacity(base_len),
            base_len,
            current_bucket: 0,
            current: VecDeque::with_capacity(current_len),
            current_len,
        }
    }

    /// RFC 6817 `update_base_delay` and `update_current_delay`.
    fn add(&mut self, now: Time, delay: Dur) {
        let bucket = now.0 / BASE_BUCKET.0;
        match self.base.back_mut() {
            Some(last) if bucket == self.current_bucket => *last = (*last).min(delay),
            _ => {
                if self.base.len() == self.base_len {
                    self.base.pop_front();
                }
                self.base.push_back(delay);
                self.current_bucket = bucket;
            }
        }
        if self.current.len() == self.current_len {
            self.current.pop_front();
        }
        self.current.push_back(delay);
    }

    /// MIN(base delays); None before the first sample.
    fn base_delay(&self) -> Option<Dur> {
        self.base.iter().min().copied()
    }

    /// FILTER(current delays) − MIN(base delays); None before the first sample.
    fn queuing_delay(&self) -> Option<Dur> {
        let current = self.current.iter().min()?;
        let base = self.base.iter().min()?;
        Some(Dur(current.0.saturating_sub(base.0)))
    }
}

pub struct Ledbat {
    target: Dur,
    gain: f64,
    allowed_increase: f64,
    min_cwnd: u64,
    slow_start: bool,
    initial_window: u64,
    delays: DelayFilters,
    /// Slow start may run (ns-3's `LEDBAT_CAN_SS`): until congestion avoidance first runs, and
    /// again once the window has fallen to one segment.
    may_slow_start: bool,
    /// The fraction of a byte the window update carries to the next ACK (the update is often
    /// a few bytes per ACK, so truncating it would bias the window downwards).
    carry: f64,
    /// LEDBAT++'s state; None for RFC 6817.
    plus_plus: Option<PlusPlus>,
}

/// Where LEDBAT++ is in its cycle of slow start, avoidance and slowdown.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    /// Slow start at the reduced gain, until ssthresh or 3/4 of TARGET.
    SlowStart,
    /// A loss ended slow start; the next ACK records when.
    SlowStartEndedByLoss,
    Avoidance,
    /// cwnd held at MIN_CWND until `until`.
    Hold {
        until: Time,
    },
    /// Slow start back to the window the slowdown began with.
    Regain,
}

struct PlusPlus {
    phase: Phase,
    /// When the next slowdown begins; None until slow start first ends.
    next_slowdown: Option<Time>,
    /// When the current slowdown began.
    slowdown_began: Time,
    /// The latest RTT sample: the unit of the slowdown's delays.
    rtt: Dur,
}

impl Ledbat {
    pub fn new(cfg: &LedbatConfig) -> Result<Self, ConfigError> {
        let target = cfg.target.unwrap_or(match cfg.variant {
            LedbatVariant::Rfc6817 => DEFAULT_TARGET,
            LedbatVariant::PlusPlus => PLUS_PLUS_TARGET,
        });
        if target.is_zero() {
            return Err(ConfigError::new("target", "must be a positive duration"));
        }
        if !(cfg.gain > 0.0 && cfg.gain <= 1.0) {
            return Err(ConfigError::new("gain", "must be in (0, 1] (RFC 6817: GAIN MUST be 1 or less)"));
        }
        if !(cfg.allowed_increase > 0.0 && cfg.allowed_increase.is_finite()) {
            return Err(ConfigError::new("allowed_increase", "must be a positive number of segments"));
        }
        for (field, v) in [("min_cwnd", cfg.min_cwnd as usize), ("base_history", cfg.base_history)] {
            if v == 0 {
                return Err(ConfigError::new(field, "must be at least 1"));
            }
        }
        if cfg.current_filter == 0 {
            return Err(ConfigError::new("current_filter", "must be at least 1"));
        }
        if cfg.initial_window == Some(0) {
            return Err(ConfigError::new("initial_window", "must be at least 1"));
        }
        let plus_plus = (cfg.variant == LedbatVariant::PlusPlus).then_some(PlusPlus {
            phase: if cfg.slow_start { Phase::SlowStart } else { Phase::Avoidance },
            next_slowdown: None,
            slowdown_began: Time(0),
            rtt: Dur::ZERO,
        });
        Ok(Ledbat {
            target,
            gain: cfg.gain,
            allowed_increase: cfg.allowed_increase,
            min_cwnd: cfg.min_cwnd,
            slow_start: cfg.slow_start,
            initial_window: cfg.initial_window.unwrap_or(DEFAULT_INITIAL_WINDOW),
            delays: DelayFilters::new(cfg.base_history, cfg.current_filter),
            may_slow_start: true,
            carry: 0.0,
            plus_plus,
        })
    }

    /// RFC 6817 section 2.4.2's window update for `acked` bytes at `queuing` delay; `flight`:
    /// the flight size before this ACK.
    fn congestion_avoidance(&mut self, w: &mut Window, acked: u64, flight: u64, queuing: Dur) {
        let target = self.target.as_secs_f64();
        let off_target = (target - queuing.as_secs_f64()) / target;
        let mss = w.mss as f64;
        let step = self.gain * off_target * acked as f64 * mss / w.cwnd.max(1) as f64 + self.carry;
        let whole = step.trunc();
        self.carry = step - whole;
        let cwnd = (w.cwnd as f64 + whole).max(0.0) as u64;
        let max_allowed = flight + (self.allowed_increase * mss) as u64;
        w.cwnd = cwnd.min(max_allowed).max(self.min_cwnd * w.mss);
        // ns-3 TcpLedbat: keep ssthresh below the window, so that slow start does not resume.
        if w.cwnd <= w.ssthresh {
            w.ssthresh = w.cwnd - 1;
        }
    }

    /// LEDBAT++'s gain: GAIN/min(16, ceil(2·TARGET/base_delay)), so that the window grows
    /// more slowly than Reno's on short paths (the draft's reduced additive increase).
    fn plus_plus_gain(&self) -> f64 {
        let base = self.delays.base_delay().map_or(0.0, |b| b.as_secs_f64());
        let ratio = if base > 0.0 { (2.0 * self.target.as_secs_f64() / base).ceil() } else { GAIN_DIVISOR_MAX };
        self.gain / ratio.clamp(1.0, GAIN_DIVISOR_MAX)
    }

    /// Adds `step` bytes (with the carried fraction) to cwnd, then caps it at the flight plus
    /// ALLOWED_INCREASE and floors it at MIN_CWND, as RFC 6817 section 2.4.2 does.
    fn apply_step(&mut self, w: &mut Window, step: f64, flight: u64) {
        let step = step + self.carry;
        let whole = step.trunc();
        self.carry = step - whole;
        let cwnd = (w.cwnd as f64 + whole).max(0.0) as u64;
        let max_allowed = flight + (self.allowed_increase * w.mss as f64) as u64;
        w.cwnd = cwnd.min(max_allowed).max(self.min_cwnd * w.mss);
        if w.cwnd <= w.ssthresh {
            w.ssthresh = w.cwnd - 1;
        }
    }

    /// LEDBAT++'s congestion avoidance per ACK of `acked` bytes: `W += GAIN − Constant·W·(q/T −
    /// 1)` per RTT, the decrease term taken only above TARGET (below it, read literally, the
    /// formula would add W·(1 − q/T), far faster than Reno) and at most W/2 per RTT. So GAIN per
    /// RTT up to TARGET, not RFC 6817's GAIN·off_target: that would stall the window short of
    /// TARGET, where the decrease that equalizes two flows' windows never runs. Spread over the
    /// window's ACKs the decrease is `Constant·(q/T − 1)·acked` bytes.
    fn plus_plus_avoidance(&mut self, w: &mut Window, acked: u64, flight: u64, queuing: Dur) {
        let increase = self.plus_plus_gain() * acked as f64 * w.mss as f64 / w.cwnd.max(1) as f64;
        let over = queuing.as_secs_f64() / self.target.as_secs_f64() - 1.0;
        let decrease = (DECREASE_CONSTANT * over).clamp(0.0, MAX_DECREASE_PER_RTT) * acked as f64;
        self.apply_step(w, increase - decrease, flight);
    }

    /// LEDBAT++'s slow start: `GAIN` segments per segment acknowledged (RFC 3465's L = 2 at
    /// most), until cwnd reaches ssthresh or the queuing delay passes 3/4 of TARGET. True when it
    /// has ended.
    fn plus_plus_slow_start(&mut self, w: &mut Window, acked: u64, queuing: Option<Dur>) -> bool {
        let exit_at = SLOW_START_EXIT_FRACTION * self.target.as_secs_f64();
        if w.cwnd >= w.ssthresh || queuing.is_some_and(|q| q.as_secs_f64() > exit_at) {
            return true;
        }
        let step = self.plus_plus_gain() * acked.min(SLOW_START_ABC_LIMIT * w.mss) as f64 + self.carry;
        let whole = step.trunc();
        self.carry = step - whole;
        // Up to ssthresh at most: a slowdown's regain ends at the window it began with.
        w.cwnd = (w.cwnd + whole as u64).min(w.ssthresh.max(w.cwnd));
        false
    }

    /// LEDBAT++ per ACK: the slowdown cycle, then slow start or avoidance.
    fn plus_plus_on_ack(&mut self, w: &mut Window, s: &AckSample) {
        let Some(pp) = self.plus_plus.as_mut() else { return };
        if let Some(rtt) = s.rtt.or(s.srtt) {
            pp.rtt = rtt;
        }
        let (now, rtt) = (s.now, pp.rtt);
        if pp.phase == Phase::Avoidance && pp.next_slowdown.is_none() {
            // Without slow start (`slow_start = false`) the first slowdown follows 2 RTTs in.
            pp.next_slowdown = Some(now + Dur(SLOWDOWN_DELAY_RTTS * rtt.0));
        }
        if w.cwnd <= w.mss && pp.phase == Phase::Avoidance {
            pp.phase = Phase::SlowStart; // a timeout: slow start again, as RFC 5681 does
        }
        if pp.phase == Phase::Avoidance && pp.next_slowdown.is_some_and(|t| now >= t) {
            // The slowdown: hold MIN_CWND for 2 RTTs, then regain the window it began with.
            pp.phase = Phase::Hold { until: now + Dur(SLOWDOWN_HOLD_RTTS * rtt.0) };
            pp.slowdown_began = now;
            w.ssthresh = w.cwnd;
        }
        let queuing = self.delays.queuing_delay();
        let phase = self.plus_plus.as_ref().map_or(Phase::Avoidance, |pp| pp.phase);
        let ended = match phase {
            Phase::Hold { until } if now < until => {
                w.cwnd = self.min_cwnd * w.mss;
                return;
            }
            Phase::Hold { .. } => {
                self.set_phase(Phase::Regain);
                self.plus_plus_slow_start(w, s.acked, queuing)
            }
            Phase::SlowStart | Phase::Regain => self.plus_plus_slow_start(w, s.acked, queuing),
            Phase::SlowStartEndedByLoss => true,
            Phase::Avoidance => false,
        };
        if ended {
            self.end_slow_start(now, phase);
        }
        if !matches!(self.plus_plus.as_ref().map(|pp| pp.phase), Some(Phase::Avoidance)) {
            return;
        }
        match queuing {
            Some(q) => self.plus_plus_avoidance(w, s.acked, w.flight + s.acked, q),
            None => aimd_growth(w, s.acked, SLOW_START_ABC_LIMIT),
        }
    }

    fn set_phase(&mut self, phase: Phase) {
        if let Some(pp) = self.plus_plus.as_mut() {
            pp.phase = phase;
        }
    }

    /// Slow start has ended at `now`: the first slowdown follows 2 RTTs after the first slow
    /// start; after a slowdown's regain, the next follows 9 times its duration later.
    fn end_slow_start(&mut self, now: Time, ended: Phase) {
        let Some(pp) = self.plus_plus.as_mut() else { return };
        pp.phase = Phase::Avoidance;
        let regained = matches!(ended, Phase::Regain | Phase::Hold { .. });
        // A loss during the regain also ends the slowdown (its scheduled time has passed).
        if regained || pp.next_slowdown.is_some_and(|t| t <= now) {
            let duration = now.saturating_sub(pp.slowdown_began);
            pp.next_slowdown = Some(now + Dur(SLOWDOWN_INTERVAL_FACTOR * duration.0));
        } else if pp.next_slowdown.is_none() {
            pp.next_slowdown = Some(now + Dur(SLOWDOWN_DELAY_RTTS * pp.rtt.0));
        }
    }

    /// The queuing delay LEDBAT sees now (FILTER(current) − MIN(base)), once it has a sample.
    pub fn queuing_delay(&self) -> Option<Dur> {
        self.delays.queuing_delay()
    }
}

impl CongestionControl for Ledbat {
    fn capabilities(&self) -> Capabilities {
        // The current delay's filter spans a few samples: one per window would make it span a
        // few RTTs (ns-3's needs the timestamp option on every ACK).
        Capabilities { rtt_every_ack_needed_by: Some("LEDBAT"), ..Capabilities::window(Recovery::NewReno) }
    }
    fn initial_window(&self, _mss: u64) -> u64 {
        self.initial_window
    }

    fn on_ack(&mut self, w: &mut Window, s: &AckSample) -> AckResponse {
        if let Some(rtt) = s.rtt {
            self.delays.add(s.now, rtt);
        }
        if self.plus_plus.is_some() {
            self.plus_plus_on_ack(w, s);
            return AckResponse::default();
        }
        if w.cwnd <= w.mss {
            self.may_slow_start = true;
        }
        let queuing = self.delays.queuing_delay();
        if self.slow_start && self.may_slow_start && w.cwnd <= w.ssthresh {
            aimd_growth(w, s.acked, SLOW_START_ABC_LIMIT);
            return AckResponse::default();
        }
        self.may_slow_start = false;
        match queuing {
            Some(q) => self.congestion_avoidance(w, s.acked, w.flight + s.acked, q),
            // No delay sample yet: Reno's growth (ns-3's fallback without timestamps).
            None => aimd_growth(w, s.acked, SLOW_START_ABC_LIMIT),
        }
        AckResponse::default()
    }

    /// RFC 6817 section 2.4.2 halves cwnd on loss (at least MIN_CWND segments); halved here is
    /// the flight size, as ns-3's `TcpLedbat` (NewReno's `GetSsThresh`) and RFC 5681 eq. 4 do:
    /// outside recovery LEDBAT's cwnd is at most the flight plus ALLOWED_INCREASE, so the two
    /// agree, while the window fast recovery inflates would double-count the duplicate ACKs.
    fn on_congestion(&mut self, w: &Window, _signal: Signal) -> u64 {
        if let Some(pp) = self.plus_plus.as_mut() {
            if matches!(pp.phase, Phase::SlowStart | Phase::Regain) {
                pp.phase = Phase::SlowStartEndedByLoss;
            }
        }
        (w.flight / 2).max(self.min_cwnd * w.mss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn ack(l: &mut Ledbat, w: &mut Window, at_ms: u64, acked: u64, rtt_ms: u64) {
        let s = AckSample {
            now: Time(at_ms * 1_000_000),
            acked,
            rtt: Some(Dur::from_millis(rtt_ms)),
            srtt: None,
            ece_bytes: 0,
            ack_delay: None,
            rate: None,
            telemetry: None,
        };
        l.on_ack(w, &s);
    }

    fn ca_window(segments: u64, flight_segments: u64) -> Window {
        Window { cwnd: segments * MSS, ssthresh: 0, mss: MSS, flight: flight_segments * MSS, peer_window: u64::MAX }
    }

    /// Hand trace of RFC 6817's update, TARGET 100 ms, GAIN 1, MSS 1000 B, cwnd 20 000 B, a
    /// flight far above cwnd so that the cap does not bind:
    /// 1. RTT 50 ms (base 50, current 50): off_target 1, cwnd += 1000·1000/20000 = 50 → 20 050.
    /// 2. RTT 110 ms (base 50, current min(50, 110) = 50): +1000·1000/20050 = 49.875… → 20 099
    ///    (carry 0.875).
    /// 3. to 5. RTT 110 ms three more times pushes the 50 ms sample out of the 4-sample
    ///    filter: from the 5th sample on, queuing 60 ms, off_target 0.4.
    #[test]
    fn window_update_follows_rfc6817_by_hand() {
        let cfg = LedbatConfig { slow_start: false, ..Default::default() };
        let mut l = Ledbat::new(&cfg).unwrap();
        let mut w = ca_window(20, 1000);
        ack(&mut l, &mut w, 0, MSS, 50);
        assert_eq!(w.cwnd, 20_050);
        ack(&mut l, &mut w, 1, MSS, 110);
        assert_eq!(w.cwnd, 20_099); // 20 050 + 49.875, 0.875 carried
        ack(&mut l, &mut w, 2, MSS, 110); // + 1e6/20099 = 49.753 + 0.875 = 50.628 → 20 149
        assert_eq!(w.cwnd, 20_149);
        ack(&mut l, &mut w, 3, MSS, 110); // + 49.630 + 0.628 = 50.258 → 20 199
        assert_eq!(w.cwnd, 20_199);
        ack(&mut l, &mut w, 4, MSS, 110); // filter now 110 ×4: off_target 0.4: + 19.803 + 0.258
        assert_eq!(w.cwnd, 20_219);
        assert_eq!(l.queuing_delay(), Some(Dur::from_millis(60)));
        // Above target: 250 ms RTTs, once they fill the filter, queuing 200 ms, off_target −1.
        (5..9).for_each(|t| ack(&mut l, &mut w, t, MSS, 250));
        let before = w.cwnd;
        ack(&mut l, &mut w, 9, MSS, 250); // − 1e6/before, plus the carry
        assert!(before - w.cwnd == 49 || before - w.cwnd == 50, "{before} → {}", w.cwnd);
    }

    /// The window may exceed the flight size before the ACK by ALLOWED_INCREASE segments only,
    /// and never falls below MIN_CWND segments.
    #[test]
    fn window_is_capped_by_flight_and_floored_by_min_cwnd() {
        let cfg = LedbatConfig { slow_start: false, ..Default::default() };
        let mut l = Ledbat::new(&cfg).unwrap();
        let mut w = ca_window(20, 5); // 5 segments still in flight after this ACK of 1
        ack(&mut l, &mut w, 0, MSS, 50);
        assert_eq!(w.cwnd, 7 * MSS); // flight before the ACK (6) + 1
        let mut w = ca_window(2, 1000);
        ack(&mut l, &mut w, 1, MSS, 50);
        (2..6).for_each(|t| ack(&mut l, &mut w, t, MSS, 1000)); // far above target
        assert_eq!(w.cwnd, 2 * MSS);
    }

    /// The base delay is the minimum over the last BASE_HISTORY one-minute buckets: a low
    /// sample leaves the history ten minutes after its minute.
    #[test]
    fn base_delay_forgets_after_base_history_minutes() {
        let mut f = DelayFilters::new(10, 1);
        f.add(Time(0), Dur::from_millis(10));
        for minute in 1..=9 {
            f.add(Time(minute * BASE_BUCKET.0), Dur::from_millis(40));
        }
        assert_eq!(f.queuing_delay(), Some(Dur::from_millis(30)));
        f.add(Time(10 * BASE_BUCKET.0), Dur::from_millis(40)); // the 10 ms minute drops out
        assert_eq!(f.queuing_delay(), Some(Dur::ZERO));
    }

    /// RFC 6817 section 2.4.2: half the window (here the flight) on loss, at least MIN_CWND.
    #[test]
    fn loss_halves_the_window() {
        let mut l = Ledbat::new(&LedbatConfig::default()).unwrap();
        assert_eq!(l.on_congestion(&ca_window(21, 20), Signal::DupAcks), 10 * MSS);
        assert_eq!(l.on_congestion(&ca_window(4, 3), Signal::DupAcks), 2 * MSS);
    }

    /// Slow start as ns-3: while cwnd ≤ ssthresh until congestion avoidance first runs.
    #[test]
    fn slow_start_ends_for_good_at_the_first_congestion_avoidance() {
        let mut l = Ledbat::new(&LedbatConfig::default()).unwrap();
        let mut w = Window { ssthresh: u64::MAX, ..ca_window(10, 1000) };
        ack(&mut l, &mut w, 0, MSS, 50);
        assert_eq!(w.cwnd, 11 * MSS);
        w.ssthresh = 5 * MSS; // as after a loss
        ack(&mut l, &mut w, 1, MSS, 50); // congestion avoidance: +1000·1000/11000 = 90
        assert_eq!(w.cwnd, 11 * MSS + 90);
        w.ssthresh = u64::MAX;
        ack(&mut l, &mut w, 2, MSS, 50); // still avoidance, ssthresh pulled below cwnd
        assert!(w.cwnd < 12 * MSS && w.ssthresh < w.cwnd);
    }

    fn plus_plus() -> Ledbat {
        Ledbat::new(&LedbatConfig { variant: LedbatVariant::PlusPlus, slow_start: false, ..Default::default() })
            .unwrap()
    }

    /// The reduced additive increase, by hand: TARGET 60 ms (the draft's default), base 50 ms:
    /// ceil(2·60/50) = 3, GAIN 1/3; base 5 ms: ceil(24) capped at 16, GAIN 1/16; base 200 ms:
    /// ceil(0.6) = 1, GAIN 1 (RFC 6817's). cwnd 20 000 B, MSS 1000 B, no queuing:
    /// +1/3·1000·1000/20000 = 16.667 → 20 016 (0.667 carried), then +16.653 + 0.667 → 20 033.
    #[test]
    fn plus_plus_gain_shrinks_with_the_base_delay_by_hand() {
        let mut l = plus_plus();
        assert_eq!(l.target, Dur::from_millis(60));
        let mut w = ca_window(20, 1000);
        ack(&mut l, &mut w, 0, MSS, 50);
        assert!((l.plus_plus_gain() - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(w.cwnd, 20_016);
        ack(&mut l, &mut w, 1, MSS, 50);
        assert_eq!(w.cwnd, 20_033);
        let mut l = plus_plus();
        ack(&mut l, &mut ca_window(20, 1000), 0, MSS, 5);
        assert!((l.plus_plus_gain() - 1.0 / 16.0).abs() < 1e-12);
        let mut l = plus_plus();
        ack(&mut l, &mut ca_window(20, 1000), 0, MSS, 200);
        assert!((l.plus_plus_gain() - 1.0).abs() < 1e-12);
    }

    /// Below TARGET the whole GAIN per RTT, whatever the queuing delay (not RFC 6817's
    /// GAIN·off_target): base 50 ms (GAIN 1/3), four 80 ms samples: queuing 30 ms, half of
    /// TARGET, still +1/3·1e6/cwnd per 1000 B ACK.
    #[test]
    fn plus_plus_below_target_adds_the_whole_gain_by_hand() {
        let mut l = plus_plus();
        let mut w = ca_window(20, 1000);
        ack(&mut l, &mut w, 0, MSS, 50); // 20 016, carry 0.667
        (1..4).for_each(|t| ack(&mut l, &mut w, t, MSS, 80));
        let (before, carry) = (w.cwnd, l.carry);
        ack(&mut l, &mut w, 4, MSS, 80);
        assert_eq!(l.queuing_delay(), Some(Dur::from_millis(30)));
        let step = 1e6 / 3.0 / before as f64 + carry;
        assert_eq!(w.cwnd, before + step.trunc() as u64, "{before} → {}", w.cwnd);
    }

    /// The multiplicative decrease, by hand: base 50 ms (GAIN 1/3), TARGET 60 ms, cwnd 20 000 B.
    /// Once four 125 ms samples fill the filter the queuing delay is 75 ms: q/T − 1 = 0.25, so
    /// per ACK of 1000 B: +1/3·1e6/cwnd − 250 B. Four 170 ms samples: queuing 120 ms,
    /// q/T − 1 = 1, capped at 1/2: −500 B per ACK (W/2 per window).
    #[test]
    fn plus_plus_decrease_is_multiplicative_and_capped_by_hand() {
        let mut l = plus_plus();
        let mut w = ca_window(20, 1000);
        ack(&mut l, &mut w, 0, MSS, 50); // 20 016, carry 0.667
        (1..4).for_each(|t| ack(&mut l, &mut w, t, MSS, 125)); // filter still holds the 50 ms
        let before = w.cwnd;
        let carry = l.carry;
        ack(&mut l, &mut w, 4, MSS, 125);
        assert_eq!(l.queuing_delay(), Some(Dur::from_millis(75)));
        let step = 1e6 / 3.0 / before as f64 - 250.0 + carry; // whole bytes, the rest carried
        assert_eq!(w.cwnd, (before as f64 + step.trunc()) as u64, "{before} → {}", w.cwnd);
        (5..8).for_each(|t| ack(&mut l, &mut w, t, MSS, 170));
        let before = w.cwnd;
        let carry = l.carry;
        ack(&mut l, &mut w, 8, MSS, 170);
        assert_eq!(l.queuing_delay(), Some(Dur::from_millis(120)));
        let step = 1e6 / 3.0 / before as f64 - 500.0 + carry;
        assert_eq!(w.cwnd, (before as f64 + step.trunc()) as u64, "{before} → {}", w.cwnd);
    }

    /// LEDBAT++'s slow start grows by GAIN per segment and ends when the queuing delay passes
    /// 3/4 of TARGET (45 ms of 60): base 100 ms gives GAIN 1/2, so +500 B per 1000 B ACK.
    #[test]
    fn plus_plus_slow_start_exits_at_three_quarters_of_target() {
        let cfg = LedbatConfig { variant: LedbatVariant::PlusPlus, ..Default::default() };
        let mut l = Ledbat::new(&cfg).unwrap();
        let mut w = Window { ssthresh: u64::MAX, ..ca_window(10, 1000) };
        ack(&mut l, &mut w, 0, MSS, 100);
        assert_eq!(w.cwnd, 10_500);
        (1..5).for_each(|t| ack(&mut l, &mut w, t, MSS, 144)); // queuing 44 ms ≤ 45: grows
        assert_eq!(w.cwnd, 12_500);
        (5..8).for_each(|t| ack(&mut l, &mut w, t, MSS, 146)); // filter min still 144
        assert_eq!(w.cwnd, 14_000);
        ack(&mut l, &mut w, 8, MSS, 146); // queuing 46 ms > 45: avoidance from here
        assert_eq!(l.plus_plus.as_ref().unwrap().phase, Phase::Avoidance);
        assert!(w.cwnd < 14_100, "{}", w.cwnd);
    }

    /// The slowdown schedule traced by hand, RTT 100 ms throughout (no queuing; GAIN 1/2), one
    /// 1000 B ACK every 10 ms, ssthresh 12 000 B, initial window 10 000 B:
    /// - slow start: +500 B per ACK at 0..30 ms → 12 000 B; the ACK at 40 ms ends it;
    /// - the first slowdown begins 2 RTTs later, at 240 ms, and holds 2 000 B until 440 ms;
    /// - the ACK at 440 ms starts the regain at +500 B per ACK, from 2 000 B to the window the
    ///   slowdown began with (12 000 B plus 20 avoidance ACKs of 1/2·1e6/cwnd ≈ 41 B each, at
    ///   40..230 ms: 12 807 B): 22 ACKs, at
    ///   440..650 ms, reach it (capped there), and the ACK at 660 ms ends it: duration 660 − 240 = 420 ms;
    /// - the next slowdown begins 9·420 = 3 780 ms later, at 4 440 ms, and holds to 4 640 ms.
    #[test]
    fn plus_plus_slowdowns_follow_the_schedule_by_hand() {
        let cfg = LedbatConfig { variant: LedbatVariant::PlusPlus, ..Default::default() };
        let mut l = Ledbat::new(&cfg).unwrap();
        let mut w = Window { ssthresh: 12 * MSS, ..ca_window(10, 1000) };
        let mut held = Vec::new();
        let mut resume = 0;
        for t in (0..5000).step_by(10) {
            ack(&mut l, &mut w, t, MSS, 100);
            if w.cwnd == 2 * MSS {
                held.push(t);
            }
            if t == 240 {
                resume = w.ssthresh;
            }
        }
        let expected: Vec<u64> = (240..440).step_by(10).chain((4440..4640).step_by(10)).collect();
        assert_eq!(held, expected);
        assert_eq!(resume, 12_807);
    }

    /// Without slow start the first slowdown begins 2 RTTs after the first ACK: RTT 100 ms,
    /// an ACK every 10 ms from 0 ms: cwnd held at 2 packets over [200, 400) ms.
    #[test]
    fn plus_plus_without_slow_start_still_slows_down() {
        let mut l = plus_plus();
        let mut w = ca_window(10, 1000);
        let held: Vec<u64> = (0..500)
            .step_by(10)
            .filter(|&t| {
                ack(&mut l, &mut w, t, MSS, 100);
                w.cwnd == 2 * MSS
            })
            .collect();
        assert_eq!(held, (200..400).step_by(10).collect::<Vec<u64>>());
    }

    #[test]
    fn config_errors_name_the_field() {
        let e = Ledbat::new(&LedbatConfig { gain: 1.5, ..Default::default() }).err().unwrap();
        assert_eq!(e.path, "gain");
        let e = Ledbat::new(&LedbatConfig { target: Some(Dur::ZERO), ..Default::default() }).err().unwrap();
        assert_eq!(e.path, "target");
    }
}
