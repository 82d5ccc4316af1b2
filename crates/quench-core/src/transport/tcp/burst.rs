//! Burstiness measurement and control (Wei, Hegde, Low, "Burstiness Control for High Speed
//! Long Distance TCP", PFLDnet 2005, slides 16-24 and 35; the formula is our reconstruction,
//! docs/mechanisms.md#burstiness-control).
//!
//! Before sending packet n at time t, with u the first unacknowledged packet (sent about one
//! RTT earlier), t_m the send time of packet m and X the rate available to the connection:
//! `B(n) = max over u ≤ m ≤ n of [(n − m + 1) − X·(t − t_m)]` (t_n = t), the backlog a queue
//! served at X would hold from the packets of the last RTT alone. The packet is sent iff
//! `B(n) < threshold`; otherwise it is deferred until the inequality holds (B falls at rate X
//! while nothing is sent, and ACKs remove old terms).
//!
//! Parameters: `threshold` in packets (> 1, since B(n) ≥ 1); `rate = "cwnd/rtt"`: X = cwnd/srtt
//! in packets per second, the slides' estimate; `max_rate` (bit/s, optional): X never exceeds
//! it — the host's own line rate bounds the bandwidth available to it, and with X at most the
//! NIC rate the theorem bounds the host's transmit queue by B. X is re-estimated once per srtt so the maximum can be
//! kept in a monotone deque (amortised O(1) per packet; a new X rebuilds it in O(flight)).
//! Every transmission, retransmissions included, enters the history in send order, and leaves
//! it once it and everything sent before it are acknowledged: a retransmission may stay a
//! little beyond its ACK, which can only make B larger (more terms), never smaller.
//! Owns the send history and the rate estimate X. It only answers whether a send may go now: the
//! sender holds and releases the segment.

use crate::error::ConfigError;
use crate::units::{BitRate, Dur, Time};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Where X comes from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum BurstRate {
    /// cwnd / smoothed RTT (the slides' experiments).
    #[default]
    #[serde(rename = "cwnd/rtt")]
    CwndPerRtt,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BurstControlConfig {
    /// Send only while B(n) is below this many packets.
    pub threshold: f64,
    #[serde(default)]
    pub rate: BurstRate,
    /// Upper bound on X, e.g. the NIC's line rate; none when absent.
    #[serde(default)]
    pub max_rate: Option<BitRate>,
}

impl BurstControlConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(self.threshold > 1.0 && self.threshold.is_finite()) {
            return Err(ConfigError::new("burstiness_control.threshold", "must exceed 1 packet (B is at least 1)"));
        }
        let target = "the most packets a per-flow target may name";
        crate::limits::check_at_most(
            "burstiness_control.threshold",
            self.threshold,
            crate::limits::MAX_PACKETS_TARGET,
            target,
        )?;
        if self.max_rate.is_some_and(|r| r.0 == 0) {
            return Err(ConfigError::new("burstiness_control.max_rate", "must be positive"));
        }
        Ok(())
    }
}

/// One transmission: its index n, end sequence number and send time (s).
#[derive(Clone, Copy, Debug)]
struct Sent {
    index: u64,
    end: u64,
    at: f64,
}

#[derive(Clone, Debug)]
pub struct Burstiness {
    threshold: f64,
    /// Bound on X in packets per second (infinite when none).
    max_rate: f64,
    /// X in packets per second; 0 until an RTT estimate exists (then nothing is held back).
    rate: f64,
    rate_set_at: Option<Time>,
    /// Transmissions not yet acknowledged, in send order (packets u .. n−1).
    sent: VecDeque<Sent>,
    /// Indices into the history with decreasing X·t_m − m: the front is the maximum.
    peaks: VecDeque<(u64, f64)>,
    next_index: u64,
}

impl Burstiness {
    /// `wire_bytes`: the size of a full segment on the wire, to turn `max_rate` into packets/s.
    pub fn new(cfg: &BurstControlConfig, wire_bytes: u64) -> Self {
        Burstiness {
            threshold: cfg.threshold,
            max_rate: cfg.max_rate.map_or(f64::INFINITY, |r| r.0 as f64 / (8 * wire_bytes) as f64),
            rate: 0.0,
            rate_set_at: None,
            sent: VecDeque::new(),
            peaks: VecDeque::new(),
            next_index: 0,
        }
    }

    /// Re-estimate X = cwnd/srtt once per srtt.
    pub fn refresh_rate(&mut self, now: Time, cwnd_packets: f64, srtt: Option<Dur>) {
        let Some(srtt) = srtt.filter(|d| !d.is_zero()) else { return };
        if self.rate_set_at.is_some_and(|t| now < t + srtt) {
            return;
        }
        self.rate = (cwnd_packets / srtt.as_secs_f64()).min(self.max_rate);
        self.rate_set_at = Some(now);
        self.rebuild_peaks();
    }

    fn rebuild_peaks(&mut self) {
        self.peaks.clear();
        for i in 0..self.sent.len() {
            let s = self.sent[i];
            self.push_peak(s.index, s.at);
        }
    }

    fn push_peak(&mut self, index: u64, at: f64) {
        let f = self.rate * at - index as f64;
        while self.peaks.back().is_some_and(|&(_, g)| g <= f) {
            self.peaks.pop_back();
        }
        self.peaks.push_back((index, f));
    }

    /// B(n) for the next packet if it were sent at `now`.
    pub fn value(&self, now: Time) -> f64 {
        let n = self.next_index as f64;
        let rest =
            self.peaks.front().map_or(f64::NEG_INFINITY, |&(_, f)| (n + 1.0) - self.rate * now.as_secs_f64() + f);
        rest.max(1.0)
    }

    /// None if the next packet may go now, else the earliest time B falls under the threshold.
    pub fn hold_until(&self, now: Time) -> Option<Time> {
        if self.rate <= 0.0 {
            return None;
        }
        let b = self.value(now);
        if b < self.threshold {
            return None;
        }
        let wait = (b - self.threshold) / self.rate;
        Some(now + Dur::from_secs_f64(wait) + Dur(1))
    }

    /// A transmission ending at sequence `end` left at `now`.
    pub fn on_send(&mut self, end: u64, now: Time) {
        let at = now.as_secs_f64();
        let index = self.next_index;
        self.next_index += 1;
        self.sent.push_back(Sent { index, end, at });
        self.push_peak(index, at);
    }

    /// A retransmission timeout: what was in flight is presumed lost and will be sent again,
    /// so it no longer counts as sent in the last RTT (otherwise B would hold the restart back
    /// for the whole old window at the collapsed rate).
    pub fn on_timeout(&mut self) {
        self.sent.clear();
        self.peaks.clear();
        self.rate_set_at = None;
    }

    /// Everything up to `ack` is acknowledged: those packets leave the history.
    pub fn on_ack(&mut self, ack: u64) {
        while self.sent.front().is_some_and(|s| s.end <= ack) {
            self.sent.pop_front();
        }
        let first = self.sent.front().map_or(self.next_index, |s| s.index);
        while self.peaks.front().is_some_and(|&(i, _)| i < first) {
            self.peaks.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Time {
        Time(x * 1_000_000)
    }

    fn cfg(threshold: f64, max_rate: Option<BitRate>) -> BurstControlConfig {
        BurstControlConfig { threshold, rate: BurstRate::CwndPerRtt, max_rate }
    }

    #[test]
    fn max_rate_caps_the_estimate() {
        // 1000-byte packets, 4 Mb/s: at most 500 packets/s although cwnd/srtt is 1000.
        let mut b = Burstiness::new(&cfg(3.0, Some(BitRate(4_000_000))), 1000);
        b.refresh_rate(ms(0), 100.0, Some(Dur::from_millis(100)));
        b.on_send(1000, ms(0));
        b.on_send(2000, ms(0));
        b.on_send(3000, ms(0));
        assert_eq!(b.hold_until(ms(0)), Some(ms(2) + Dur(1)), "(4 − 3)/500 packets/s = 2 ms");
    }

    /// B by its definition, over a list of send times (s) of packets u..n−1 and t for n.
    fn brute(times: &[f64], t: f64, x: f64) -> f64 {
        let n = times.len();
        let mut b: f64 = 1.0;
        for (m, &tm) in times.iter().enumerate() {
            b = b.max((n - m + 1) as f64 - x * (t - tm));
        }
        b
    }

    #[test]
    fn value_matches_the_definition_and_acks_remove_terms() {
        let mut b = Burstiness::new(&cfg(5.0, None), 1000);
        // 100 packets per 100 ms: X = 1000 packets/s.
        b.refresh_rate(ms(0), 100.0, Some(Dur::from_millis(100)));
        let sends = [0, 0, 0, 1, 5, 5, 6, 20];
        for (i, &t) in sends.iter().enumerate() {
            b.on_send((i as u64 + 1) * 1000, ms(t));
        }
        let times: Vec<f64> = sends.iter().map(|&t| t as f64 / 1000.0).collect();
        for now in [20, 21, 22, 30] {
            let want = brute(&times, now as f64 / 1000.0, 1000.0);
            assert!((b.value(ms(now)) - want).abs() < 1e-9, "at {now} ms");
        }
        // At 20 ms the packet sent at 20 ms dominates: (8 − 7 + 1) − 0 = 2.
        assert!((b.value(ms(20)) - 2.0).abs() < 1e-9);
        b.on_ack(3000); // packets 0-2 acknowledged
        let want = brute(&times[3..], 0.020, 1000.0);
        assert!((b.value(ms(20)) - want).abs() < 1e-9);
    }

    #[test]
    fn a_burst_is_held_until_b_drains_under_the_threshold() {
        let mut b = Burstiness::new(&cfg(3.0, None), 1000);
        assert_eq!(b.hold_until(ms(0)), None, "no rate estimate yet: nothing is held");
        b.refresh_rate(ms(0), 100.0, Some(Dur::from_millis(100)));
        b.on_send(1000, ms(0));
        assert_eq!(b.hold_until(ms(0)), None); // B = 2 < 3
        b.on_send(2000, ms(0));
        b.on_send(3000, ms(0)); // three at once: B(3) = 4

        let until = b.hold_until(ms(0)).unwrap();
        assert_eq!(until, ms(1) + Dur(1), "(4 − 3)/1000 packets/s = 1 ms");
        assert!(b.value(until) < 3.0);
    }
}
