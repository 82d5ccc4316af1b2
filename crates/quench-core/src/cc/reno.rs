//! Reno (RFC 5681) and NewReno (RFC 6582), one implementation: slow start with appropriate
//! byte counting (RFC 3465, L = 2 segments), congestion avoidance of about one segment per RTT,
//! `ssthresh = max(FlightSize/2, 2·SMSS)` on loss; with `growth = "linux"`, Linux's
//! `tcp_reno_cong_avoid` instead (per acknowledged segment in both phases, `growth.rs`). The two differ only in the recovery
//! procedure TCP runs (its parameter): Reno's fast recovery ends at the first ACK of new data,
//! NewReno's lasts until all data outstanding when loss was detected is acknowledged, partial
//! ACKs retransmitting the next hole. The procedures live in TCP; this controller selects one.
//! Owns its parameters and Linux's acknowledged-segment counter (`AimdParams`, shared with CUBIC,
//! DCTCP and Prague).
//! Must not touch: the sender; it sees only the window and the samples.

use super::growth::{linux_slow_start, AckedCounter, Growth};
use super::{
    aimd_growth, half_flight, rfc5681_initial_window, AckResponse, AckSample, Capabilities, CongestionControl,
    Recovery, Signal, Window,
};
use crate::error::ConfigError;
use serde::{Deserialize, Serialize};
use std::num::NonZeroU64;

/// RFC 3465 section 2.2: L = 2·SMSS bytes per ACK in slow start.
pub const DEFAULT_ABC_LIMIT_SEGMENTS: u64 = 2;

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RenoConfig {
    /// Initial window in segments; RFC 5681's 2-4 by segment size when absent.
    pub initial_window: Option<u64>,
    /// Appropriate byte counting limit L in segments (RFC 3465); 1 = classic per-ACK growth.
    pub abc_limit: Option<u64>,
    /// The growth rule: "rfc5681" (byte counting up to `abc_limit`, per-ACK congestion
    /// avoidance) or "linux" (per acknowledged segment, `growth.rs`).
    #[serde(skip_serializing_if = "Growth::is_default")]
    pub growth: Growth,
}

/// RFC 5681's window rules with appropriate byte counting, or Linux's per-segment ones: shared
/// by Reno, NewReno, CUBIC, DCTCP and Prague.
pub struct AimdParams {
    // Sized to keep Reno and NewReno inline in `AnyCc` (32 bytes, `senders_stay_small`): a
    // zero initial window is refused, so None is the niche, and L fits 32 bits.
    initial_window: Option<NonZeroU64>,
    abc_limit: u32,
    growth: Growth,
    /// Linux's `snd_cwnd_cnt`, used by the `linux` rule only.
    counter: AckedCounter,
}

impl AimdParams {
    pub fn from_config(initial_window: Option<u64>, abc_limit: Option<u64>) -> Result<Self, ConfigError> {
        if initial_window == Some(0) {
            return Err(ConfigError::new("initial_window", "must be at least one segment"));
        }
        let initial_window = initial_window.and_then(NonZeroU64::new);
        let abc_limit = abc_limit.unwrap_or(DEFAULT_ABC_LIMIT_SEGMENTS);
        if abc_limit == 0 {
            return Err(ConfigError::new("abc_limit", "must be at least one segment"));
        }
        let abc_limit = u32::try_from(abc_limit)
            .map_err(|_| ConfigError::new("abc_limit", format!("{abc_limit} is more than {} segments", u32::MAX)))?;
        Ok(AimdParams { initial_window, abc_limit, growth: Growth::Rfc5681, counter: AckedCounter::default() })
    }

    /// The same with the growth rule; Linux's slow start has no per-ACK limit, so a written
    /// `abc_limit` with `growth = "linux"` is refused rather than ignored.
    pub fn with_growth(mut self, growth: Growth, abc_limit: Option<u64>) -> Result<Self, ConfigError> {
        if growth == Growth::Linux && abc_limit.is_some() {
            let why = "RFC 3465's limit belongs to growth = \"rfc5681\"; Linux's slow start has none";
            return Err(ConfigError::new("abc_limit", why));
        }
        self.growth = growth;
        Ok(self)
    }

    pub fn growth(&self) -> Growth {
        self.growth
    }
    pub fn initial_window(&self, mss: u64) -> u64 {
        self.initial_window.map_or_else(|| rfc5681_initial_window(mss), NonZeroU64::get)
    }
    /// One ACK's growth: Reno's window rules (`tcp_reno_cong_avoid` under `linux`).
    pub fn grow(&mut self, w: &mut Window, acked: u64) {
        match self.growth {
            Growth::Rfc5681 => aimd_growth(w, acked, u64::from(self.abc_limit)),
            Growth::Linux => {
                let left = self.slow_start(w, acked);
                if left > 0 {
                    self.additive_increase(w, w.cwnd, left);
                }
            }
        }
    }

    /// Slow start's share of an ACK of `acked` bytes, if the window is below ssthresh: the
    /// window grows, and the bytes left for congestion avoidance are returned (all of them
    /// at or above ssthresh). `rfc5681`: byte counting up to L segments and nothing left over;
    /// `linux`: up to ssthresh (`tcp_slow_start`).
    pub fn slow_start(&self, w: &mut Window, acked: u64) -> u64 {
        if w.cwnd >= w.ssthresh {
            return acked;
        }
        match self.growth {
            Growth::Rfc5681 => {
                w.cwnd += self.slow_start_increase(w, acked);
                0
            }
            Growth::Linux => linux_slow_start(w, acked),
        }
    }

    /// Congestion avoidance under `linux`: one segment per `w_bytes` acknowledged
    /// (`tcp_cong_avoid_ai`; Reno's `w` is cwnd, CUBIC's its `cnt`).
    pub fn additive_increase(&mut self, w: &mut Window, w_bytes: u64, acked: u64) {
        self.counter.add(w, w_bytes, acked);
    }

    /// A congestion event: Linux's acknowledged-segment count starts again.
    pub fn on_congestion(&mut self) {
        self.counter.clear();
    }

    /// Slow start's increase for `acked` bytes: byte counting up to L segments (RFC 3465);
    /// under `linux`, every byte.
    pub fn slow_start_increase(&self, w: &Window, acked: u64) -> u64 {
        match self.growth {
            Growth::Rfc5681 => acked.min(u64::from(self.abc_limit) * w.mss),
            Growth::Linux => acked,
        }
    }
}

/// Reno's window rules with the recovery procedure `NEW_RENO` selects: [`Reno`] or
/// [`super::newreno::NewReno`].
pub struct RenoFamily<const NEW_RENO: bool> {
    params: AimdParams,
}

/// RFC 5681 fast recovery.
pub type Reno = RenoFamily<false>;

impl<const NEW_RENO: bool> RenoFamily<NEW_RENO> {
    pub fn new(cfg: &RenoConfig) -> Result<Self, ConfigError> {
        let params =
            AimdParams::from_config(cfg.initial_window, cfg.abc_limit)?.with_growth(cfg.growth, cfg.abc_limit)?;
        Ok(RenoFamily { params })
    }
}

impl<const NEW_RENO: bool> CongestionControl for RenoFamily<NEW_RENO> {
    fn capabilities(&self) -> Capabilities {
        Capabilities::window(if NEW_RENO { Recovery::NewReno } else { Recovery::Reno })
    }
    fn initial_window(&self, mss: u64) -> u64 {
        self.params.initial_window(mss)
    }
    #[inline]
    fn on_ack(&mut self, w: &mut Window, s: &AckSample) -> AckResponse {
        self.params.grow(w, s.acked);
        AckResponse::default()
    }
    fn on_congestion(&mut self, w: &Window, _signal: Signal) -> u64 {
        self.params.on_congestion();
        half_flight(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Time;

    /// One parameter apart: the recovery procedure each selects.
    #[test]
    fn reno_and_newreno_differ_only_in_recovery() {
        let cfg = RenoConfig::default();
        let (reno, newreno) = (Reno::new(&cfg).unwrap(), super::super::newreno::NewReno::new(&cfg).unwrap());
        assert_eq!(reno.capabilities().recovery, Recovery::Reno);
        assert_eq!(newreno.capabilities().recovery, Recovery::NewReno);
        assert_eq!(Capabilities { recovery: Recovery::Reno, ..newreno.capabilities() }, reno.capabilities());
    }

    #[test]
    fn abc_doubles_per_rtt_with_delayed_acks() {
        // 10 segments in flight, one ACK per two segments: 5 ACKs of 2·MSS each.
        let mut r = Reno::new(&RenoConfig::default()).unwrap();
        let mss = 1000;
        let mut w = Window { cwnd: 10 * mss, ssthresh: u64::MAX, mss, flight: 0, peer_window: u64::MAX };
        for _ in 0..5 {
            r.on_ack(
                &mut w,
                &AckSample {
                    now: Time::ZERO,
                    acked: 2 * mss,
                    rtt: None,
                    srtt: None,
                    ece_bytes: 0,
                    ack_delay: None,
                    rate: None,
                    telemetry: None,
                },
            );
        }
        assert_eq!(w.cwnd, 20 * mss);
    }

    /// Linux's `tcp_reno_cong_avoid` with every ACK covering 2 segments, by hand: from cwnd 4,
    /// ssthresh 10, ACKs 1-3 slow-start to 6, 8, 10 (no per-ACK cap, stopping at ssthresh);
    /// ACKs 4-8 count 2..10 segments: cwnd 11 at ACK 8, count 0; ACKs 9-14 count 2..12 ≥ 11:
    /// cwnd 12, count 1. RFC 5681's per-ACK rule over the same 11 ACKs in congestion avoidance
    /// gains SMSS²/cwnd per ACK (100, 99, 98, ...): 1,047 bytes, about half.
    #[test]
    fn linux_growth_counts_segments_with_delayed_acks() {
        let mss = 1000;
        let two = AckSample { acked: 2 * mss, ..AckSample::default() };
        let start = Window { cwnd: 4 * mss, ssthresh: 10 * mss, mss, flight: 0, peer_window: u64::MAX };
        let mut linux = Reno::new(&RenoConfig { growth: Growth::Linux, ..RenoConfig::default() }).unwrap();
        let mut w = start;
        let trace: Vec<u64> = (0..14)
            .map(|_| {
                linux.on_ack(&mut w, &two);
                w.cwnd / mss
            })
            .collect();
        assert_eq!(trace, [6, 8, 10, 10, 10, 10, 10, 11, 11, 11, 11, 11, 11, 12]);
        let mut rfc = Reno::new(&RenoConfig::default()).unwrap();
        let mut w = start;
        for _ in 0..14 {
            rfc.on_ack(&mut w, &two);
        }
        assert_eq!(w.cwnd, 11_047);
        let e = Reno::new(&RenoConfig { growth: Growth::Linux, abc_limit: Some(2), ..RenoConfig::default() });
        assert_eq!(e.err().unwrap().path, "abc_limit");
    }

    #[test]
    fn congestion_avoidance_adds_about_one_segment_per_window() {
        let mut r = Reno::new(&RenoConfig::default()).unwrap();
        let mss = 1000;
        let mut w = Window { cwnd: 10 * mss, ssthresh: 5 * mss, mss, flight: 0, peer_window: u64::MAX };
        for _ in 0..10 {
            r.on_ack(
                &mut w,
                &AckSample {
                    now: Time::ZERO,
                    acked: mss,
                    rtt: None,
                    srtt: None,
                    ece_bytes: 0,
                    ack_delay: None,
                    rate: None,
                    telemetry: None,
                },
            );
        }
        // 10 increments of mss²/cwnd with cwnd creeping up: 100+99+99+...: just under one MSS.
        assert!((10 * mss + 950..=11 * mss).contains(&w.cwnd), "{}", w.cwnd);
        let w = Window { flight: 7 * mss, ..w };
        assert_eq!(r.on_congestion(&w, Signal::DupAcks), 3500);
    }
}
