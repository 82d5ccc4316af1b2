//! Reno (RFC 5681) and NewReno (RFC 6582), one implementation: slow start with appropriate
//! byte counting (RFC 3465, L = 2 segments), congestion avoidance of about one segment per RTT,
//! `ssthresh = max(FlightSize/2, 2·SMSS)` on loss. The two differ only in the recovery
//! procedure TCP runs (its parameter): Reno's fast recovery ends at the first ACK of new data,
//! NewReno's lasts until all data outstanding when loss was detected is acknowledged, partial
//! ACKs retransmitting the next hole. The procedures live in TCP; this controller selects one.
//! Owns no state beyond its parameters (`AimdParams`, shared with CUBIC, DCTCP and Prague).
//! Must not touch: the sender; it sees only the window and the samples.

use super::{
    aimd_growth, half_flight, rfc5681_initial_window, AckResponse, AckSample, Capabilities, CongestionControl,
    Recovery, Signal, Window,
};
use crate::error::ConfigError;
use serde::{Deserialize, Serialize};

/// RFC 3465 section 2.2: L = 2·SMSS bytes per ACK in slow start.
pub const DEFAULT_ABC_LIMIT_SEGMENTS: u64 = 2;

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RenoConfig {
    /// Initial window in segments; RFC 5681's 2-4 by segment size when absent.
    pub initial_window: Option<u64>,
    /// Appropriate byte counting limit L in segments (RFC 3465); 1 = classic per-ACK growth.
    pub abc_limit: Option<u64>,
}

/// RFC 5681's window rules with appropriate byte counting: shared by Reno, NewReno, DCTCP and
/// Prague.
pub struct AimdParams {
    initial_window: Option<u64>,
    abc_limit: u64,
}

impl AimdParams {
    pub fn from_config(initial_window: Option<u64>, abc_limit: Option<u64>) -> Result<Self, ConfigError> {
        if initial_window == Some(0) {
            return Err(ConfigError::new("initial_window", "must be at least one segment"));
        }
        let abc_limit = abc_limit.unwrap_or(DEFAULT_ABC_LIMIT_SEGMENTS);
        if abc_limit == 0 {
            return Err(ConfigError::new("abc_limit", "must be at least one segment"));
        }
        Ok(AimdParams { initial_window, abc_limit })
    }
    pub fn initial_window(&self, mss: u64) -> u64 {
        self.initial_window.unwrap_or_else(|| rfc5681_initial_window(mss))
    }
    pub fn grow(&self, w: &mut Window, acked: u64) {
        aimd_growth(w, acked, self.abc_limit)
    }
    /// Slow start's increase for `acked` bytes: byte counting up to L segments (RFC 3465).
    pub fn slow_start_increase(&self, w: &Window, acked: u64) -> u64 {
        acked.min(self.abc_limit * w.mss)
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
        Ok(RenoFamily { params: AimdParams::from_config(cfg.initial_window, cfg.abc_limit)? })
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
