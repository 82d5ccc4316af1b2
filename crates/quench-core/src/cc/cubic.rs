//! CUBIC (RFC 9438; Ha, Rhee, Xu, "CUBIC: a new TCP-friendly high-speed TCP variant", OSR
//! 42(5) 2008): after a congestion event the window follows a cubic function of the time since
//! the event, whose plateau is the window at the event.
//!
//! - Event (loss, ECN-Echo, a local drop, a timeout): `W_max = cwnd` (fast convergence: if the
//!   window is below the last `W_max`, `W_max = cwnd·(1 + β)/2`, RFC 9438 §4.7), and
//!   `ssthresh = max(cwnd·β, 2 segments)` (§4.6; `cwnd`, as Linux, not the flight size). The
//!   recovery procedure is NewReno's (or SACK's, when on), as for NewReno.
//! - Congestion avoidance, from the first ACK after the event (the epoch start): with
//!   `K = ∛((W_max − cwnd_epoch)/C)`, `W_cubic(t) = C·(t − K)³ + W_max` (§4.2). Per ACK the
//!   target is `W_cubic(t + RTT)` clamped to `[cwnd, 1.5·cwnd]`, and cwnd grows by
//!   `(target − cwnd)/cwnd` per acknowledged segment (§4.4-4.5; per segment as Linux counts,
//!   so delayed ACKs do not halve the growth). RTT is the sender's smoothed RTT (RFC 6298).
//! - Reno-friendly region (§4.3): `W_est` starts at `cwnd_epoch` and grows by
//!   `α = 3(1 − β)/(1 + β)` segments per window acknowledged, the rate at which Reno with
//!   CUBIC's β would grow, and by 1 once it is back at the window the event found; while
//!   `W_cubic(t) < W_est`, cwnd follows `W_est`.
//! - After a timeout (§4.8): the loss window (1 segment) and slow start to ssthresh; the first
//!   epoch after it starts with `K = 0` and `W_max` = the window then.
//! - With `growth = "linux"`, congestion avoidance and the decrease are Linux's integer
//!   arithmetic instead (`cubic_linux.rs`: `bictcp_update` in whole segments and jiffies, the
//!   minimum RTT as look-ahead, growth through `tcp_cong_avoid_ai`, β = 717/1024).
//! - Slow start as RFC 5681 with appropriate byte counting (RFC 3465), like Reno, or with
//!   `growth = "linux"` as Linux's `cubictcp_cong_avoid` calls `tcp_slow_start`: every
//!   acknowledged segment up to ssthresh, the rest of the ACK on to congestion avoidance
//!   (`growth.rs`). Slow start may end early (`hystart`, off by default, so that runs compare
//!   with the published CUBIC): `"linux"` (Linux's HyStart, `hystart_linux.rs`: ACK train and
//!   delay, checked before the ACK grows the window, whose segments then go to congestion
//!   avoidance, as `cubictcp_acked` runs before `cubictcp_cong_avoid`) or `"rfc9406"` (`true`
//!   reads as this: HyStart++, `hystart.rs`, in the initial slow start).
//!
//! Units: windows in segments (f64) inside, bytes in `Window`; time in seconds (f64) from
//! integer-nanosecond `Time`; `C` in segments/s³.
//! Owns the epoch (`W_max`, `K`, `W_est`), its HyStart state and the minimum RTT both of
//! Linux's parts read. Must not touch: the sender; it sees only the window and the samples.

use super::cubic_linux::{DelayMin, LinuxCubic, DEFAULT_HZ};
use super::growth::Growth;
use super::hystart::{HyStart, SlowStartStep};
use super::hystart_linux::LinuxHyStart;
use super::reno::AimdParams;
use super::{AckResponse, AckSample, Capabilities, CongestionControl, Recovery, Signal, Window};
use crate::error::ConfigError;
use crate::units::Time;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// RFC 9438 §5 (and Linux `bic_scale` = 41 → 0.4): C = 0.4 segments/s³.
const DEFAULT_C: f64 = 0.4;
/// RFC 9438 §4.6 (Linux `beta` = 717/1024 ≈ 0.7): multiplicative decrease factor.
const DEFAULT_BETA: f64 = 0.7;
/// Smallest window after a decrease: two segments (RFC 9438 §4.6, `cwnd = max(cwnd, 2)`).
const MIN_WINDOW_SEGMENTS: f64 = 2.0;
/// Largest step toward the target per RTT: the target is clamped to 1.5·cwnd (§4.4).
const MAX_TARGET_RATIO: f64 = 1.5;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CubicConfig {
    /// Scaling constant C (segments/s³).
    pub c: f64,
    /// Multiplicative decrease factor β in (0, 1).
    pub beta: f64,
    /// Release bandwidth faster to newcomers: a window below the last `W_max` at an event lowers
    /// `W_max` further, to `cwnd·(1 + β)/2` (§4.7).
    pub fast_convergence: bool,
    /// Follow Reno's growth (with CUBIC's β) where it is faster than the cubic (§4.3).
    pub reno_friendly: bool,
    /// Initial window in segments; RFC 5681's 2-4 by segment size when absent.
    pub initial_window: Option<u64>,
    /// Appropriate byte counting limit L in slow start, in segments (RFC 3465).
    pub abc_limit: Option<u64>,
    /// How slow start may end before a loss: `false`, `"linux"` (Linux's HyStart) or
    /// `"rfc9406"` (HyStart++; `true` is read as this); either needs `tcp.rtt_sampling =
    /// "every_ack"`.
    pub hystart: HyStartChoice,
    /// The growth rule: "rfc5681" or "linux" (`growth.rs`; under "linux" CUBIC's own
    /// arithmetic is Linux's too, `cubic_linux.rs`).
    #[serde(skip_serializing_if = "Growth::is_default")]
    pub growth: Growth,
    /// The kernel's `CONFIG_HZ`, the clock of Linux's arithmetic (`growth = "linux"` only;
    /// 100, 250, 300 or 1000, default 1000).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hz: Option<u32>,
}

/// The `hystart` key: which slow-start exit CUBIC runs, if any.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HyStartChoice {
    #[default]
    Off,
    /// HyStart++ (RFC 9406), written `"rfc9406"` or `true`.
    Rfc9406,
    /// Linux's HyStart (tcp_cubic.c), written `"linux"`.
    Linux,
}

/// Written back as read before `"linux"` existed: `false` and `true` for the first two, so
/// that a resolved scenario that names HyStart++ reads the same.
impl Serialize for HyStartChoice {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            HyStartChoice::Off => s.serialize_bool(false),
            HyStartChoice::Rfc9406 => s.serialize_bool(true),
            HyStartChoice::Linux => s.serialize_str("linux"),
        }
    }
}

impl<'de> Deserialize<'de> for HyStartChoice {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let why = "expected false, \"linux\" or \"rfc9406\" (true)";
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::Bool(false) => Ok(HyStartChoice::Off),
            serde_json::Value::Bool(true) => Ok(HyStartChoice::Rfc9406),
            serde_json::Value::String(name) => match name.as_str() {
                "rfc9406" => Ok(HyStartChoice::Rfc9406),
                "linux" => Ok(HyStartChoice::Linux),
                _ => Err(serde::de::Error::custom(format!("unknown hystart \"{name}\": {why}"))),
            },
            other => Err(serde::de::Error::custom(format!("hystart: {why}, found {other}"))),
        }
    }
}

impl Default for CubicConfig {
    fn default() -> Self {
        CubicConfig {
            c: DEFAULT_C,
            beta: DEFAULT_BETA,
            fast_convergence: true,
            reno_friendly: true,
            initial_window: None,
            abc_limit: None,
            hystart: HyStartChoice::Off,
            growth: Growth::default(),
            hz: None,
        }
    }
}

/// The state of one congestion-avoidance epoch (from the first ACK after an event).
#[derive(Clone, Copy, Debug)]
struct Epoch {
    start: Time,
    /// Seconds from the epoch's start to the plateau.
    k: f64,
    /// The plateau, in segments.
    w_max: f64,
    /// Reno's window from the same start, in segments.
    w_est: f64,
}

pub struct Cubic {
    c: f64,
    beta: f64,
    fast_convergence: bool,
    reno_friendly: bool,
    aimd: AimdParams,
    /// The plateau for the next epoch, in segments (0: none, or a timeout).
    w_max: f64,
    /// The window at the last congestion event, in segments (RFC 9438's `cwnd_prior`).
    cwnd_prior: f64,
    epoch: Option<Epoch>,
    /// Growth below one byte, carried to the next ACK.
    carry: f64,
    hystart: Option<HyStart>,
    linux_hystart: Option<LinuxHyStart>,
    /// Linux's window arithmetic, under `growth = "linux"`; the fields above then go unused but
    /// for `aimd`.
    linux: Option<LinuxCubic>,
    /// The minimum RTT, as Linux's HyStart and arithmetic read it.
    delay_min: DelayMin,
}

/// The largest cubic constant C, in segments/s³: 10⁴ times RFC 9438's 0.4 (§5). At that
/// C the window passes its plateau by 4,000 segments one second after reaching it, faster than
/// any path a packet simulator models fills; beyond it the cubic term only overflows.
const MAX_C: f64 = 4e3;

impl Cubic {
    pub fn new(cfg: &CubicConfig) -> Result<Self, ConfigError> {
        if !(cfg.c.is_finite() && cfg.c > 0.0) {
            return Err(ConfigError::new("c", "must be a positive number (segments/s³)"));
        }
        if !(cfg.beta > 0.0 && cfg.beta < 1.0) {
            return Err(ConfigError::new("beta", "must be in (0, 1)"));
        }
        crate::limits::check_at_most("c", cfg.c, MAX_C, "the largest cubic constant quench accepts (segments/s³)")?;
        let linux = match (cfg.growth, cfg.hz) {
            (Growth::Linux, hz) => Some(LinuxCubic::new(
                cfg.c,
                cfg.beta,
                cfg.fast_convergence,
                cfg.reno_friendly,
                hz.unwrap_or(DEFAULT_HZ),
            )?),
            (Growth::Rfc5681, Some(_)) => {
                return Err(ConfigError::new("hz", "the jiffy clock belongs to growth = \"linux\""));
            }
            (Growth::Rfc5681, None) => None,
        };
        Ok(Cubic {
            c: cfg.c,
            beta: cfg.beta,
            fast_convergence: cfg.fast_convergence,
            reno_friendly: cfg.reno_friendly,
            aimd: AimdParams::from_config(cfg.initial_window, cfg.abc_limit)?.with_growth(cfg.growth, cfg.abc_limit)?,
            w_max: 0.0,
            cwnd_prior: 0.0,
            epoch: None,
            carry: 0.0,
            hystart: (cfg.hystart == HyStartChoice::Rfc9406).then(HyStart::default),
            linux_hystart: (cfg.hystart == HyStartChoice::Linux).then(LinuxHyStart::default),
            linux,
            delay_min: DelayMin::default(),
        })
    }

    /// `α = 3(1 − β)/(1 + β)`: Reno-friendly growth in segments per RTT (§4.3).
    pub fn reno_alpha(&self) -> f64 {
        3.0 * (1.0 - self.beta) / (1.0 + self.beta)
    }

    /// `W_cubic(t)` of the current epoch, in segments.
    fn w_cubic(&self, e: &Epoch, t: f64) -> f64 {
        self.c * (t - e.k).powi(3) + e.w_max
    }

    fn start_epoch(&self, now: Time, cwnd: f64) -> Epoch {
        // A window already at or above the last plateau (or none known, after a timeout)
        // starts on the plateau: K = 0 and W_max = cwnd (§4.8; Linux `bictcp_update`).
        let (k, w_max) =
            if cwnd < self.w_max { (((self.w_max - cwnd) / self.c).cbrt(), self.w_max) } else { (0.0, cwnd) };
        Epoch { start: now, k, w_max, w_est: cwnd }
    }

    /// Congestion avoidance for `acked` bytes of the ACK `s` (all of them, or what slow start
    /// left).
    fn congestion_avoidance(&mut self, w: &mut Window, s: &AckSample, acked: u64) {
        if let Some(linux) = self.linux.as_mut() {
            // `bictcp_update` in whole segments, then `tcp_cong_avoid_ai(tp, cnt, acked)`.
            // A short last segment counts as one, as Linux counts packets.
            let acked_segments = u32::try_from(acked.div_ceil(w.mss.max(1))).unwrap_or(u32::MAX);
            let cnt = linux.update(s.now, segments_u32(w.cwnd, w.mss), acked_segments, self.delay_min.get());
            return self.aimd.additive_increase(w, u64::from(cnt) * w.mss, acked);
        }
        let mss = w.mss as f64;
        let cwnd = w.cwnd as f64 / mss;
        let mut e = match self.epoch {
            Some(e) => e,
            None => self.start_epoch(s.now, cwnd),
        };
        let acked = acked as f64 / mss;
        let t = (s.now - e.start).as_secs_f64();
        // Once Reno's window is back where the event found it, it grows as Reno's own (§4.3).
        let alpha = if e.w_est >= self.cwnd_prior { 1.0 } else { self.reno_alpha() };
        e.w_est += alpha * acked / cwnd;
        let grown = if self.reno_friendly && self.w_cubic(&e, t) < e.w_est {
            e.w_est.max(cwnd)
        } else {
            let srtt = s.srtt.map_or(0.0, |d| d.as_secs_f64());
            let target = self.w_cubic(&e, t + srtt).clamp(cwnd, MAX_TARGET_RATIO * cwnd);
            cwnd + (target - cwnd) / cwnd * acked
        };
        self.epoch = Some(e);
        let bytes = (grown - cwnd) * mss + self.carry;
        self.carry = bytes.fract();
        w.cwnd += bytes.trunc() as u64;
    }
}

/// Whole segments of `bytes`, as Linux's `u32` packet counts (saturating).
fn segments_u32(bytes: u64, mss: u64) -> u32 {
    u32::try_from(bytes / mss.max(1)).unwrap_or(u32::MAX)
}

impl Cubic {
    /// The window's growth for one ACK of new data outside loss recovery.
    fn grow_window(&mut self, w: &mut Window, s: &AckSample) {
        // `cubictcp_acked` (HyStart) runs before `cubictcp_cong_avoid` grows the window: on
        // the ACK that ends slow start, its segments already go to congestion avoidance.
        let epoch_start = match &self.linux {
            Some(linux) => linux.epoch_start(),
            None => self.epoch.map(|e| e.start),
        };
        let delay = self.delay_min.on_ack(s, epoch_start);
        let delay_min = self.delay_min.get();
        if self.linux_hystart.as_mut().is_some_and(|h| h.on_ack(s, w, delay, delay_min)) {
            w.ssthresh = w.cwnd;
        }
        if w.cwnd >= w.ssthresh {
            return self.congestion_avoidance(w, s, s.acked);
        }
        match self.hystart.as_mut().map(|h| h.on_ack(s, w.flight)) {
            None => {
                let left = self.aimd.slow_start(w, s.acked);
                if left > 0 {
                    self.congestion_avoidance(w, s, left);
                }
            }
            Some(SlowStartStep::Grow { divisor }) => w.cwnd += self.aimd.slow_start_increase(w, s.acked) / divisor,
            // RFC 9406 section 4.2: ssthresh = cwnd; the next ACK starts CUBIC's first epoch.
            Some(SlowStartStep::EnterCongestionAvoidance) => w.ssthresh = w.cwnd,
        }
    }
}

impl CongestionControl for Cubic {
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            rtt_every_ack_needed_by: if self.hystart.is_some() {
                Some("HyStart++")
            } else {
                self.linux_hystart.is_some().then_some("HyStart")
            },
            ..Capabilities::window(Recovery::NewReno)
        }
    }
    fn initial_window(&self, mss: u64) -> u64 {
        self.aimd.initial_window(mss)
    }

    #[inline]
    fn on_ack(&mut self, w: &mut Window, s: &AckSample) -> AckResponse {
        self.grow_window(w, s);
        AckResponse::default()
    }

    fn on_congestion(&mut self, w: &Window, signal: Signal) -> u64 {
        if signal == Signal::Timeout {
            self.delay_min.reset(); // `bictcp_reset`
        }
        if let Some(h) = self.linux_hystart.as_mut().filter(|_| signal == Signal::Timeout) {
            h.on_timeout(w.flight);
        }
        if let Some(h) = self.hystart.as_mut() {
            h.on_congestion();
        }
        self.aimd.on_congestion();
        if let Some(linux) = self.linux.as_mut() {
            let ssthresh = linux.recalc_ssthresh(segments_u32(w.cwnd, w.mss));
            if signal == Signal::Timeout {
                linux.reset(); // `cubictcp_state(TCP_CA_Loss)`, after `tcp_enter_loss`'s ssthresh
            }
            return u64::from(ssthresh) * w.mss;
        }
        let cwnd = w.cwnd as f64 / w.mss as f64;
        self.cwnd_prior = cwnd;
        self.w_max = if self.fast_convergence && cwnd < self.w_max { cwnd * (1.0 + self.beta) / 2.0 } else { cwnd };
        if signal == Signal::Timeout {
            self.w_max = 0.0; // the next epoch starts on its own window (§4.8)
        }
        self.epoch = None;
        self.carry = 0.0;
        ((cwnd * self.beta).max(MIN_WINDOW_SEGMENTS) * w.mss as f64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Dur;

    const MSS: u64 = 1000;

    fn cubic() -> Cubic {
        Cubic::new(&CubicConfig::default()).unwrap()
    }

    fn win(segments: u64) -> Window {
        Window {
            cwnd: segments * MSS,
            ssthresh: segments * MSS,
            mss: MSS,
            flight: segments * MSS,
            peer_window: u64::MAX,
        }
    }

    fn ack(at_ms: u64, rtt_ms: u64) -> AckSample<'static> {
        let rtt = Some(Dur::from_millis(rtt_ms));
        AckSample {
            now: Time(at_ms * 1_000_000),
            acked: MSS,
            rtt,
            srtt: rtt,
            ece_bytes: 0,
            ack_delay: None,
            rate: None,
            telemetry: None,
        }
    }

    /// A window of 100 segments meets a loss, then one ACK per segment on a 100 ms path.
    fn after_loss_at_100(c: &mut Cubic) -> Window {
        let mut w = win(100);
        w.ssthresh = c.on_congestion(&w, Signal::DupAcks);
        w.cwnd = w.ssthresh; // what recovery leaves
        w
    }

    #[test]
    fn a_loss_keeps_beta_of_the_window_and_remembers_it() {
        let mut c = cubic();
        let w = after_loss_at_100(&mut c);
        assert_eq!(w.ssthresh, 70 * MSS);
        assert_eq!(c.w_max, 100.0);
        // Below the last plateau, fast convergence lowers it: 60 · 1.7/2 = 51.
        let w2 = win(60);
        assert_eq!(c.on_congestion(&w2, Signal::DupAcks), 42 * MSS);
        assert!((c.w_max - 51.0).abs() < 1e-9);
        // Never below two segments.
        assert_eq!(c.on_congestion(&win(2), Signal::DupAcks), 2 * MSS);
    }

    #[test]
    fn the_epoch_follows_the_cubic_to_its_plateau_at_k() {
        // Hand values: W_max = 100, cwnd_epoch = 70: K = ∛(30/0.4) = ∛75 = 4.2172 s. With the
        // target one RTT ahead the window tracks W_cubic(t + RTT) one RTT late, so at t = K
        // - RTT it is close to the plateau, and at t = K it has not passed it by more than the
        // cubic's rise in one RTT.
        let mut c = Cubic::new(&CubicConfig { reno_friendly: false, ..Default::default() }).unwrap();
        let mut w = after_loss_at_100(&mut c);
        let rtt_ms = 100;
        let mut t_ms = 0;
        let mut trace = vec![];
        while t_ms <= 6000 {
            rounds(&mut c, &mut w, &mut t_ms, 1, rtt_ms);
            trace.push((t_ms, w.cwnd as f64 / MSS as f64));
        }
        let k = 75f64.cbrt();
        assert!((c.epoch.unwrap().k - k).abs() < 1e-12);
        let at = |ms: u64| trace.iter().find(|(t, _)| *t >= ms).unwrap().1;
        let w_cubic = |t: f64| 0.4 * (t - k).powi(3) + 100.0;
        // Concave part: after 1 s the window is near W_cubic(1 s + RTT) = 86.7.
        assert!((at(1000) - w_cubic(1.1)).abs() < 1.5, "{}", at(1000));
        // Plateau: within a segment of 100 around K.
        assert!((at(4200) - 100.0).abs() < 1.0, "{}", at(4200));
        // Convex part: 6 s is 1.78 s past K, where W_cubic(6.1) = 102.9.
        assert!((at(6000) - w_cubic(6.1)).abs() < 1.5, "{}", at(6000));
    }

    /// `rtts` round trips of `rtt_ms`, one ACK per segment spread over each.
    fn rounds(c: &mut Cubic, w: &mut Window, t_ms: &mut u64, rtts: u32, rtt_ms: u64) {
        for _ in 0..rtts {
            let n = w.cwnd / MSS;
            for i in 0..n {
                c.on_ack(w, &ack(*t_ms + i * rtt_ms / n, rtt_ms));
            }
            *t_ms += rtt_ms;
        }
    }

    #[test]
    fn the_reno_friendly_region_grows_alpha_then_one_segment_per_window() {
        // On a short path the cubic is slow: W_max = 10, cwnd 7, K = ∛7.5 = 1.96 s, so over
        // the first 0.2 s W_cubic stays below 8 and cwnd follows W_est, which gains α/W per
        // acknowledged segment: dW/dn = α/W, so W(n)² = W(0)² + 2αn with α = 3·0.3/1.7 until
        // it is back at 10, then W² gains 2 per segment (α = 1).
        let mut c = cubic();
        let mut w = win(10);
        w.ssthresh = c.on_congestion(&w, Signal::DupAcks);
        w.cwnd = w.ssthresh;
        let segments = |w: &Window| w.cwnd as f64 / MSS as f64;
        let mut t_ms = 0;
        let mut acks = |c: &mut Cubic, w: &mut Window, n: u32| {
            for _ in 0..n {
                c.on_ack(w, &ack(t_ms, 10));
                t_ms += 1;
            }
        };
        acks(&mut c, &mut w, 30);
        let expected = (49.0 + 2.0 * c.reno_alpha() * 30.0).sqrt();
        assert!((segments(&w) - expected).abs() < 0.05, "{} against {expected}", segments(&w));
        while segments(&w) < 10.0 {
            acks(&mut c, &mut w, 1);
        }
        let crossed = segments(&w);
        acks(&mut c, &mut w, 40);
        let expected = (crossed * crossed + 2.0 * 40.0).sqrt();
        assert!((segments(&w) - expected).abs() < 0.05, "{} against {expected}", segments(&w));
        assert!((c.reno_alpha() - 0.9 / 1.7).abs() < 1e-12);
    }

    #[test]
    fn after_a_timeout_the_next_epoch_starts_on_its_own_window() {
        let mut c = cubic();
        let mut w = win(100);
        w.ssthresh = c.on_congestion(&w, Signal::Timeout);
        assert_eq!(w.ssthresh, 70 * MSS);
        w.cwnd = w.ssthresh;
        c.on_ack(&mut w, &ack(0, 100));
        let e = c.epoch.unwrap();
        assert_eq!((e.k, e.w_max), (0.0, 70.0));
    }

    /// Linux's HyStart and slow start by hand (tcp_cubic.c, tcp_cong.c): cwnd 20, every ACK
    /// covering 2 segments, 1 ms apart, each RTT sample 10 ms (delay_min 10 ms). The first ACK
    /// (t = 0) starts the round; slow start adds both segments of each ACK (no RFC 3465 cap):
    /// before the ACK at t = k ms cwnd is 20 + 2k. The train passes 10/2 = 5 ms at t = 6 ms:
    /// HyStart sets ssthresh = cwnd = 32 before that ACK grows the window, and its 2 segments
    /// go to congestion avoidance: the first epoch starts on the plateau (K = 0, origin 32),
    /// the target at t + delay_min is still 32 (410·(10 ms of 1/1024 s)³ >> 40 = 0), so cnt
    /// would be 100·32, but with no plateau known Linux caps it at 20: 2 of the 20 segments
    /// are counted and the window stays at 32.
    #[test]
    fn linux_hystart_ends_slow_start_on_the_ack_train_by_hand() {
        let cfg = CubicConfig { hystart: HyStartChoice::Linux, growth: Growth::Linux, ..Default::default() };
        let mut c = Cubic::new(&cfg).unwrap();
        let mut w = Window { ssthresh: u64::MAX, ..win(20) };
        for k in 0..7u64 {
            assert_eq!(w.ssthresh, u64::MAX, "still in slow start before the ACK at {k} ms");
            assert_eq!(w.cwnd, (20 + 2 * k) * MSS);
            let s = AckSample { now: Time(k * 1_000_000), acked: 2 * MSS, ..ack(0, 10) };
            c.on_ack(&mut w, &s);
        }
        assert_eq!((w.ssthresh, w.cwnd), (32 * MSS, 32 * MSS));
        assert_eq!(c.linux_hystart.as_ref().unwrap().found(), Some(super::super::hystart_linux::Exit::AckTrain));
        assert_eq!(c.capabilities().rtt_every_ack_needed_by, Some("HyStart"));
    }

    /// The delay detector in CUBIC by hand: ACKs of one segment 5 ms apart (no train), cwnd 16
    /// (the low window), 16 segments in flight after each ACK. The first ACK opens round 1;
    /// ACKs 2-17 acknowledge what was outstanding then, all at 40 ms (delay_min 40 ms); the
    /// 18th passes the round's end and opens round 2. From there every sample is 46 ms > 40 +
    /// clamp(40/8, 4, 16) = 45 ms: the 9th sample of round 2 (the 26th ACK) fires, before its
    /// ACK grows cwnd from 16 + 25 = 41 segments: ssthresh = 41 segments.
    #[test]
    fn linux_hystart_delay_exit_by_hand() {
        let cfg = CubicConfig { hystart: HyStartChoice::Linux, growth: Growth::Linux, ..Default::default() };
        let mut c = Cubic::new(&cfg).unwrap();
        let mut w = Window { ssthresh: u64::MAX, ..win(16) };
        let mut t_ms = 0;
        for i in 0..40 {
            let rtt = if i < 17 { 40 } else { 46 };
            w.flight = 16 * MSS;
            c.on_ack(&mut w, &ack(t_ms, rtt));
            t_ms += 5;
            if w.ssthresh != u64::MAX {
                assert_eq!(i, 25, "the 9th sample of round 2");
                break;
            }
        }
        assert_eq!(w.ssthresh, 41 * MSS);
        assert_eq!(c.linux_hystart.as_ref().unwrap().found(), Some(super::super::hystart_linux::Exit::Delay));
    }

    /// Under `growth = "linux"`, with no plateau known (`bictcp_update`'s `last_max_cwnd` = 0,
    /// here after Linux's HyStart), cnt ≤ 20: from cwnd 100 on the plateau, 100 ACKs of one
    /// segment add 100/20 = 5 segments (the Reno-friendly W_est adds 1, the cubic next to
    /// nothing); the default rule follows W_est.
    #[test]
    fn linux_growth_takes_five_percent_per_rtt_before_the_first_loss() {
        for (growth, low, high) in
            [(Growth::Linux, 105 * MSS - 1, 105 * MSS), (Growth::Rfc5681, 101 * MSS - 5, 101 * MSS)]
        {
            let mut c = Cubic::new(&CubicConfig { growth, ..Default::default() }).unwrap();
            let mut w = win(100);
            for i in 0..100 {
                c.on_ack(&mut w, &ack(i, 100));
            }
            assert!((low..=high).contains(&w.cwnd), "{growth:?}: {}", w.cwnd);
        }
    }

    /// Both arithmetics meet the closed form W_cubic(K) = W_max (RFC 9438 §4.2; the cubic
    /// alone, as Reno's estimate would lead on this path): after a loss at 100 segments
    /// (ssthresh 70) on a 20 ms path whose ACKs arrive evenly, a window
    /// targets W_cubic(t + RTT), so it reaches 100 within a segment one RTT before K =
    /// ∛(100·0.3/0.4) = 4.217 s, and stays within 2 % of it for the RTT around the plateau.
    #[test]
    fn both_arithmetics_reach_the_plateau_at_k() {
        let k = (100.0f64 * (1.0 - DEFAULT_BETA) / DEFAULT_C).cbrt();
        for growth in [Growth::Rfc5681, Growth::Linux] {
            let mut c = Cubic::new(&CubicConfig { growth, reno_friendly: false, ..Default::default() }).unwrap();
            let mut w = win(100);
            w.ssthresh = c.on_congestion(&w, Signal::DupAcks);
            assert_eq!(w.ssthresh, 70 * MSS, "{growth:?}");
            w.cwnd = w.ssthresh;
            let mut now = 0.0f64;
            let mut at_k = vec![];
            while now < k + 0.02 {
                let s = AckSample { now: Time::ZERO + Dur::from_secs_f64(now), ..ack(0, 20) };
                c.on_ack(&mut w, &s);
                now += 0.02 / (w.cwnd / MSS) as f64;
                if now > k - 0.02 {
                    at_k.push(w.cwnd / MSS);
                }
            }
            let (lo, hi) = (*at_k.iter().min().unwrap(), *at_k.iter().max().unwrap());
            assert!((98..=101).contains(&lo) && (99..=102).contains(&hi), "{growth:?}: {lo}-{hi} segments");
        }
    }

    /// `hystart`: false, true (HyStart++, written back as true), "rfc9406", "linux"; anything
    /// else is named. `growth = "linux"` refuses an `abc_limit`.
    #[test]
    fn hystart_and_growth_keys() {
        let parse = |v: serde_json::Value| serde_json::from_value::<CubicConfig>(v);
        for (written, choice, back) in [
            (serde_json::json!(false), HyStartChoice::Off, serde_json::json!(false)),
            (serde_json::json!(true), HyStartChoice::Rfc9406, serde_json::json!(true)),
            (serde_json::json!("rfc9406"), HyStartChoice::Rfc9406, serde_json::json!(true)),
            (serde_json::json!("linux"), HyStartChoice::Linux, serde_json::json!("linux")),
        ] {
            let cfg = parse(serde_json::json!({ "hystart": written })).unwrap();
            assert_eq!(cfg.hystart, choice);
            assert_eq!(serde_json::to_value(&cfg).unwrap()["hystart"], back);
        }
        let e = parse(serde_json::json!({ "hystart": "bsd" })).unwrap_err().to_string();
        assert!(e.starts_with("unknown hystart \"bsd\""), "{e}");
        assert!(serde_json::to_value(CubicConfig::default()).unwrap().get("growth").is_none());
        let cfg = CubicConfig { growth: Growth::Linux, abc_limit: Some(2), ..Default::default() };
        assert_eq!(Cubic::new(&cfg).err().unwrap().path, "abc_limit");
    }

    /// Under `growth = "linux"` slow start stops at ssthresh and the rest of the ACK goes to
    /// congestion avoidance; under the default, RFC 3465 adds at most 2 segments and nothing
    /// more: cwnd 15, ssthresh 16, an ACK of 3 segments.
    #[test]
    fn linux_slow_start_hands_the_rest_to_congestion_avoidance() {
        let cfg = CubicConfig { growth: Growth::Linux, ..Default::default() };
        let mut c = Cubic::new(&cfg).unwrap();
        let mut w = Window { ssthresh: 16 * MSS, ..win(15) };
        c.on_ack(&mut w, &AckSample { acked: 3 * MSS, ..ack(0, 100) });
        // 1 segment to reach 16, 2 to the first epoch (K = 0, origin 16, target 16 at
        // t + delay_min = 100 ms): cnt = 20 with no plateau known, 2 of 20 counted, no growth.
        assert_eq!(w.cwnd, 16 * MSS);
        let mut c = cubic();
        let mut w = Window { ssthresh: 16 * MSS, ..win(15) };
        c.on_ack(&mut w, &AckSample { acked: 3 * MSS, ..ack(0, 100) });
        assert_eq!(w.cwnd, 17 * MSS);
    }

    #[test]
    fn config_errors_name_the_field() {
        let bad = |cfg: CubicConfig| Cubic::new(&cfg).err().unwrap().path;
        assert_eq!(bad(CubicConfig { beta: 1.0, ..Default::default() }), "beta");
        assert_eq!(bad(CubicConfig { c: 0.0, ..Default::default() }), "c");
        assert_eq!(bad(CubicConfig { initial_window: Some(0), ..Default::default() }), "initial_window");
        // The jiffy clock belongs to Linux's arithmetic, and takes a kernel's CONFIG_HZ only.
        assert_eq!(bad(CubicConfig { hz: Some(1000), ..Default::default() }), "hz");
        let linux = CubicConfig { growth: Growth::Linux, ..Default::default() };
        assert_eq!(bad(CubicConfig { hz: Some(999), ..linux.clone() }), "hz");
        assert!(Cubic::new(&CubicConfig { hz: Some(250), ..linux.clone() }).is_ok());
        // Linux's whole bic_scale and 1/1024 β: C under 0.005 rounds to 0, β to 1024.
        assert_eq!(bad(CubicConfig { c: 0.004, ..linux.clone() }), "c");
        assert_eq!(bad(CubicConfig { beta: 0.9999, ..linux }), "beta");
    }
}
