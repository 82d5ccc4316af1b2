//! 4.3BSD-Tahoe congestion control (Jacobson 1988; CSRG tcp_input.c 7.19, June 1988;
//! docs/mechanisms.md#tcp-tahoe).
//!
//! Per ACK of new data: `cwnd += maxseg` below ssthresh, `cwnd += max(maxseg²/cwnd, 1)` above
//! (no +maxseg/8 term: that came with 4.3-Reno). On loss (timeout or third duplicate ACK):
//! `ssthresh = max(min(snd_wnd, cwnd)/2/maxseg, 2)·maxseg` and `cwnd = maxseg`; fast
//! retransmit resends one segment with no fast recovery. Initial window one segment.
//! Owns no state beyond its parameters. Must not touch: the sender; it sees only the window and the
//! samples.

use super::{AckResponse, AckSample, Capabilities, CongestionControl, Recovery, Signal, Window};
use crate::error::ConfigError;
use serde::{Deserialize, Serialize};

/// 4.3BSD's initial window: one segment.
const TAHOE_INITIAL_WINDOW: u64 = 1;
/// Tahoe never lets ssthresh fall below two segments.
const MIN_SSTHRESH_SEGMENTS: u64 = 2;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TahoeConfig {
    /// Initial window in segments.
    pub initial_window: u64,
}

impl Default for TahoeConfig {
    fn default() -> Self {
        TahoeConfig { initial_window: TAHOE_INITIAL_WINDOW }
    }
}

pub struct Tahoe {
    initial_window: u64,
}

impl Tahoe {
    pub fn new(cfg: &TahoeConfig) -> Result<Self, ConfigError> {
        if cfg.initial_window == 0 {
            return Err(ConfigError::new("initial_window", "must be at least one segment"));
        }
        Ok(Tahoe { initial_window: cfg.initial_window })
    }
}

impl CongestionControl for Tahoe {
    fn capabilities(&self) -> Capabilities {
        Capabilities::window(Recovery::SlowStart)
    }
    fn initial_window(&self, _mss: u64) -> u64 {
        self.initial_window
    }
    fn on_ack(&mut self, w: &mut Window, _s: &AckSample) -> AckResponse {
        let incr = if w.cwnd > w.ssthresh { (w.mss * w.mss / w.cwnd).max(1) } else { w.mss };
        w.cwnd += incr;
        AckResponse::default()
    }
    fn on_congestion(&mut self, w: &Window, _signal: Signal) -> u64 {
        let segments = (w.peer_window.min(w.cwnd) / 2 / w.mss).max(MIN_SSTHRESH_SEGMENTS);
        segments * w.mss
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Time;

    fn window(cwnd: u64, ssthresh: u64) -> Window {
        Window { cwnd, ssthresh, mss: 512, flight: cwnd, peer_window: 1 << 20 }
    }

    #[test]
    fn slow_start_then_linear_growth_hand_computed() {
        let mut t = Tahoe::new(&TahoeConfig::default()).unwrap();
        let s = AckSample {
            now: Time::ZERO,
            acked: 512,
            rtt: None,
            srtt: None,
            ece_bytes: 0,
            ack_delay: None,
            rate: None,
            telemetry: None,
        };
        let mut w = window(512, 2048);
        for _ in 0..3 {
            t.on_ack(&mut w, &s);
        }
        assert_eq!(w.cwnd, 2048); // 512 + 3·512: at ssthresh, not above, so still exponential
        t.on_ack(&mut w, &s);
        assert_eq!(w.cwnd, 2560);
        t.on_ack(&mut w, &s);
        assert_eq!(w.cwnd, 2560 + 512 * 512 / 2560); // 2662
    }

    #[test]
    fn loss_halves_the_smaller_of_cwnd_and_peer_window_in_whole_segments() {
        let mut t = Tahoe::new(&TahoeConfig::default()).unwrap();
        let mut w = window(5 * 512 + 100, 1 << 30);
        assert_eq!(t.on_congestion(&w, Signal::Timeout), 2 * 512);
        w.peer_window = 2000;
        assert_eq!(t.on_congestion(&w, Signal::DupAcks), 2 * 512); // floor of two segments
        w.cwnd = 20 * 512;
        w.peer_window = 1 << 20;
        assert_eq!(t.on_congestion(&w, Signal::DupAcks), 10 * 512);
    }
}
