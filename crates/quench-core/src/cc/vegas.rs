//! TCP Vegas (Brakmo, Peterson, IEEE JSAC 13(8) 1995), with the round structure of Linux
//! `net/ipv4/tcp_vegas.c`.
//!
//! Once per RTT, with baseRTT the minimum RTT ever seen and rtt the minimum of the last RTT:
//! `diff = cwnd·(rtt − baseRTT)/rtt`, the flow's packets queued in the path (expected minus
//! actual rate, times baseRTT). Congestion avoidance: `diff < α` → +1 segment; `diff > β` → −1
//! segment; otherwise hold. Slow start (+1 segment per ACK while cwnd < ssthresh) ends when
//! `diff > γ`: cwnd drops to the rate the path carries (`cwnd·baseRTT/rtt + 1`). A round with
//! fewer than `MIN_SAMPLES_PER_ROUND` samples changes nothing but Reno's growth (Linux: RTT
//! samples too few to trust), so a flow must sample every ACK (`tcp.rtt_sampling =
//! "every_ack"`, checked when it is built). Loss: Reno's halving. Equilibrium: each flow keeps between α and
//! β packets queued, the delay signal FAST also uses (docs/mechanisms.md#vegas).
//!
//! Departures: Brakmo divides by the observed RTT as above; Linux divides by baseRTT (a little
//! larger diff). A round ends when the last RTT sample's duration has elapsed since it began
//! (the controller sees times, not snd_nxt), as FAST's rounds do here.
//! Owns `baseRTT` and the round's RTT minimum and sample count. Must not touch: the sender; it
//! sees only the window and the samples.

use super::{
    aimd_growth, half_flight, AckResponse, AckSample, Capabilities, CongestionControl, Recovery, Signal, Window,
};
use crate::error::ConfigError;
use serde::{Deserialize, Serialize};

/// Linux tcp_vegas.c module defaults: alpha = 2, beta = 4, gamma = 1 packets.
const DEFAULT_ALPHA: f64 = 2.0;
const DEFAULT_BETA: f64 = 4.0;
const DEFAULT_GAMMA: f64 = 1.0;
/// Linux tcp_vegas.c: with 2 or fewer RTT samples in a round, fall back to Reno.
const MIN_SAMPLES_PER_ROUND: u32 = 3;
/// The window never goes below two segments (Linux tcp_vegas.c).
const MIN_WINDOW_SEGMENTS: u64 = 2;
/// Initial window in segments when none is set (Linux of the Vegas module's time: 2).
const DEFAULT_INITIAL_WINDOW: u64 = 2;
/// Slow start counts one segment per ACK (no byte counting beyond one segment).
const SLOW_START_ABC_LIMIT: u64 = 1;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct VegasConfig {
    /// Grow while fewer than this many packets are queued.
    pub alpha: f64,
    /// Shrink while more than this many packets are queued.
    pub beta: f64,
    /// Leave slow start once more than this many packets are queued.
    pub gamma: f64,
    pub initial_window: Option<u64>,
}

impl Default for VegasConfig {
    fn default() -> Self {
        VegasConfig { alpha: DEFAULT_ALPHA, beta: DEFAULT_BETA, gamma: DEFAULT_GAMMA, initial_window: None }
    }
}

pub struct Vegas {
    alpha: f64,
    beta: f64,
    gamma: f64,
    initial_window: u64,
    /// Seconds; infinite before the first sample.
    base_rtt: f64,
    /// Minimum RTT of the current round, its sample count, and when the round ends.
    round_min: f64,
    round_samples: u32,
    round_ends: Option<f64>,
}

impl Vegas {
    pub fn new(cfg: &VegasConfig) -> Result<Self, ConfigError> {
        for (field, v) in [("alpha", cfg.alpha), ("beta", cfg.beta), ("gamma", cfg.gamma)] {
            if !(v >= 0.0 && v.is_finite()) {
                return Err(ConfigError::new(field, "must be a non-negative number of packets"));
            }
        }
        if cfg.beta < cfg.alpha {
            return Err(ConfigError::new("beta", "must be at least alpha"));
        }
        for (field, v) in [("alpha", cfg.alpha), ("beta", cfg.beta), ("gamma", cfg.gamma)] {
            let target = "the most packets a per-flow target may name";
            crate::limits::check_at_most(field, v, crate::limits::MAX_PACKETS_TARGET, target)?;
        }
        if cfg.initial_window == Some(0) {
            return Err(ConfigError::new("initial_window", "must be at least 1"));
        }
        Ok(Vegas {
            alpha: cfg.alpha,
            beta: cfg.beta,
            gamma: cfg.gamma,
            initial_window: cfg.initial_window.unwrap_or(DEFAULT_INITIAL_WINDOW),
            base_rtt: f64::INFINITY,
            round_min: f64::INFINITY,
            round_samples: 0,
            round_ends: None,
        })
    }

    /// Packets this flow keeps queued: `cwnd·(rtt − baseRTT)/rtt`.
    pub fn diff(&self, cwnd_segments: f64, rtt: f64) -> f64 {
        cwnd_segments * (rtt - self.base_rtt) / rtt
    }

    /// The once-per-RTT decision, on a window in segments, at an ACK of `acked` bytes.
    fn end_of_round(&mut self, w: &mut Window, acked: u64) {
        let mss = w.mss;
        let cwnd = (w.cwnd / mss) as f64;
        let diff = self.diff(cwnd, self.round_min);
        let slow_start = w.cwnd < w.ssthresh;
        if slow_start && diff > self.gamma {
            let target = (cwnd * self.base_rtt / self.round_min) as u64 + 1;
            w.cwnd = w.cwnd.min(target * mss);
            w.ssthresh = w.ssthresh.min(w.cwnd.saturating_sub(mss));
        } else if slow_start {
            // Still in slow start: the round's last ACK grows the window as every other ACK
            // of the round does (Linux tcp_vegas_cong_avoid calls tcp_slow_start here too).
            aimd_growth(w, acked, SLOW_START_ABC_LIMIT);
        } else if diff > self.beta {
            w.cwnd -= mss;
            w.ssthresh = w.ssthresh.min(w.cwnd.saturating_sub(mss));
        } else if diff < self.alpha {
            w.cwnd += mss;
        }
        w.cwnd = w.cwnd.max(MIN_WINDOW_SEGMENTS * mss);
    }
}

impl Vegas {
    /// The window's growth for one ACK of new data outside loss recovery.
    fn grow_window(&mut self, w: &mut Window, s: &AckSample) {
        let now = s.now.as_secs_f64();
        if let Some(rtt) = s.rtt.map(|d| d.as_secs_f64()) {
            self.base_rtt = self.base_rtt.min(rtt);
            self.round_min = self.round_min.min(rtt);
            self.round_samples += 1;
            self.round_ends.get_or_insert(now + rtt);
        }
        if !self.round_ends.is_some_and(|t| now >= t) {
            if w.cwnd < w.ssthresh {
                aimd_growth(w, s.acked, SLOW_START_ABC_LIMIT);
            }
            return;
        }
        if self.round_samples < MIN_SAMPLES_PER_ROUND {
            aimd_growth(w, s.acked, SLOW_START_ABC_LIMIT);
        } else {
            self.end_of_round(w, s.acked);
        }
        self.round_ends = s.rtt.map(|d| now + d.as_secs_f64());
        (self.round_min, self.round_samples) = (f64::INFINITY, 0);
    }
}

impl CongestionControl for Vegas {
    fn capabilities(&self) -> Capabilities {
        // A round's minimum RTT needs `MIN_SAMPLES_PER_ROUND` samples; one timed segment per
        // round would leave Vegas in its Reno fallback for good (Linux samples every ACK).
        Capabilities { rtt_every_ack_needed_by: Some("Vegas"), ..Capabilities::window(Recovery::NewReno) }
    }
    fn initial_window(&self, _mss: u64) -> u64 {
        self.initial_window
    }

    #[inline]
    fn on_ack(&mut self, w: &mut Window, s: &AckSample) -> AckResponse {
        self.grow_window(w, s);
        AckResponse::default()
    }

    fn on_congestion(&mut self, w: &Window, _signal: Signal) -> u64 {
        half_flight(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{Dur, Time};

    const MSS: u64 = 1000;

    fn win(segments: u64, ssthresh: u64) -> Window {
        Window { cwnd: segments * MSS, ssthresh: ssthresh * MSS, mss: MSS, flight: 0, peer_window: u64::MAX }
    }

    /// A round beginning at `t` ms: three samples of `rtt_ms`, then the ACK that ends it, past the
    /// round's end. Returns that ACK's time, where the next round begins.
    fn round(v: &mut Vegas, w: &mut Window, t: u64, rtt_ms: u64) -> u64 {
        let ack = |v: &mut Vegas, w: &mut Window, at: u64| {
            v.on_ack(
                w,
                &AckSample {
                    now: Time(at * 1_000_000),
                    acked: 0,
                    rtt: Some(Dur::from_millis(rtt_ms)),
                    srtt: None,
                    ece_bytes: 0,
                    ack_delay: None,
                    rate: None,
                    telemetry: None,
                },
            );
        };
        (0..3).for_each(|i| ack(v, w, t + i));
        ack(v, w, t + rtt_ms + 10);
        t + rtt_ms + 10
    }

    fn vegas(alpha: f64, beta: f64) -> Vegas {
        Vegas::new(&VegasConfig { alpha, beta, ..Default::default() }).unwrap()
    }

    #[test]
    fn one_segment_per_rtt_toward_the_alpha_beta_band() {
        // Congestion avoidance (ssthresh 10), α = 2, β = 4, baseRTT 100 ms.
        let (mut v, mut w) = (vegas(2.0, 4.0), win(100, 10));
        let t = round(&mut v, &mut w, 0, 100); // diff = 0 < α: +1
        assert_eq!(w.cwnd, 101 * MSS);
        let t = round(&mut v, &mut w, t, 101); // diff = 101·1/101 = 1 < α: +1
        assert_eq!(w.cwnd, 102 * MSS);
        let t = round(&mut v, &mut w, t, 105); // diff = 102·5/105 ≈ 4.86 > β: −1
        assert_eq!(w.cwnd, 101 * MSS);
        round(&mut v, &mut w, t, 103); // diff = 101·3/103 ≈ 2.94 in [α, β]: hold
        assert_eq!(w.cwnd, 101 * MSS);
    }

    #[test]
    fn slow_start_ends_when_more_than_gamma_packets_queue() {
        // diff = 40·20/120 ≈ 6.7 > γ = 1: cwnd falls to ⌊40·100/120⌋ + 1 = 34, ssthresh 33.
        let (mut v, mut w) = (vegas(2.0, 4.0), win(40, 1000));
        v.base_rtt = 0.1;
        round(&mut v, &mut w, 0, 120);
        assert_eq!(w.cwnd, 34 * MSS);
        assert_eq!(w.ssthresh, 33 * MSS);
    }

    /// Every ACK of a slow-start round grows the window by a segment, the round's last one too
    /// while no more than γ packets queue (Linux: tcp_slow_start in the per-RTT branch).
    #[test]
    fn the_ack_that_ends_a_slow_start_round_grows_the_window() {
        let (mut v, mut w) = (vegas(2.0, 4.0), win(10, 1000));
        let ack = |v: &mut Vegas, w: &mut Window, at_ms: u64, rtt_ms: u64| {
            let rtt = Some(Dur::from_millis(rtt_ms));
            let sample = AckSample {
                now: Time(at_ms * 1_000_000),
                acked: MSS,
                rtt,
                srtt: None,
                ece_bytes: 0,
                ack_delay: None,
                rate: None,
                telemetry: None,
            };
            v.on_ack(w, &sample);
        };
        (0..3).for_each(|i| ack(&mut v, &mut w, i, 100)); // a round of 100 ms begins at 0
        assert_eq!(w.cwnd, 13 * MSS);
        ack(&mut v, &mut w, 110, 100); // ends it: diff = 0 ≤ γ, still slow start
        assert_eq!(w.cwnd, 14 * MSS);
        // In congestion avoidance the round's last ACK makes only the round's decision.
        let (mut v, mut w) = (vegas(2.0, 4.0), win(10, 5));
        (0..3).for_each(|i| ack(&mut v, &mut w, i, 100));
        ack(&mut v, &mut w, 110, 100); // diff = 0 < α: +1
        assert_eq!(w.cwnd, 11 * MSS);
    }

    #[test]
    fn config_errors_name_the_field() {
        let e = Vegas::new(&VegasConfig { alpha: 4.0, beta: 2.0, ..Default::default() }).err().unwrap();
        assert_eq!(e.path, "beta");
        let e = Vegas::new(&VegasConfig { gamma: f64::NAN, ..Default::default() }).err().unwrap();
        assert_eq!(e.path, "gamma");
    }
}
