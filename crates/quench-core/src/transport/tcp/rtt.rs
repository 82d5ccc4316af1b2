//! RTT estimation and the retransmission timeout (Jacobson 1988 appendix A; RFC 6298):
//! `err = m − srtt; srtt += err/8; rttvar += (|err| − rttvar)/4`, first sample
//! `srtt = m, rttvar = m/2`, `rto = srtt + max(G, k·rttvar)` clamped to [min, max], doubled per
//! backoff (Karn & Partridge 1987) and restored by the next valid sample.
//!
//! With a coarse tick G (BSD's 500 ms slow timeout) a sample is the number of tick boundaries
//! crossed plus one, the RTO is rounded up to whole ticks, and the timer fires on a boundary
//! (BSD decrements its counters on each tick), so a 1-tick timer fires 0-500 ms after arming;
//! with `rto.tick_rule = "after"` it fires on the first boundary after its deadline instead,
//! as Linux's timer wheel and htsim's timer scanner do (`TickRule`).
//! Owns SRTT, RTTVAR and the back-off. It arms no timer: the sender reads the RTO from it.

use super::config::{RtoConfig, TickRule};
use crate::units::{Dur, Time};

#[derive(Clone, Debug)]
pub struct RttEstimator {
    cfg: RtoConfig,
    srtt: Option<Dur>,
    rttvar: Dur,
    backoff: u32,
    /// With a tick: SRTT of the exact samples, for what reads the path's delay rather than
    /// the timer's (`path_srtt`), in microseconds scaled by 8 as Linux keeps `srtt_us`
    /// (include/linux/tcp.h); 0 before the first sample. Four bytes, in the padding after
    /// `backoff`: a sender per flow does not grow for it.
    path_srtt_us8: u32,
}

impl RttEstimator {
    pub fn new(cfg: RtoConfig) -> Self {
        RttEstimator { cfg, srtt: None, rttvar: Dur::ZERO, backoff: 0, path_srtt_us8: 0 }
    }

    /// The timer's SRTT: of samples counted in ticks when there is a tick.
    pub fn srtt(&self) -> Option<Dur> {
        self.srtt
    }

    /// The path's SRTT, for the congestion controller and the pacer: the same smoothing of
    /// the exact samples (a tick coarsens only the timer's estimator, as BSD's `t_rtt` counted
    /// ticks for the timer alone; Linux measures in microseconds). Without a tick, `srtt`.
    pub fn path_srtt(&self) -> Option<Dur> {
        if self.cfg.tick.is_zero() {
            self.srtt
        } else {
            (self.path_srtt_us8 > 0).then(|| Dur::from_micros((self.path_srtt_us8 >> 3) as u64))
        }
    }

    /// Fold the exact sample `m` into the path's SRTT (with a tick; see `path_srtt`), as
    /// Linux's `tcp_rtt_estimator` folds a sample in microseconds into `srtt_us`: the first
    /// sample scaled by 8, then a gain of 1/8, never below 1.
    pub fn path_sample(&mut self, m: Dur) {
        if self.cfg.tick.is_zero() {
            return;
        }
        let m_us = u32::try_from(m.0 / 1_000).unwrap_or(u32::MAX >> 3).min(u32::MAX >> 3);
        let s = self.path_srtt_us8;
        let next = if s == 0 { m_us << 3 } else { s - (s >> 3) + m_us };
        self.path_srtt_us8 = next.max(1);
    }
    pub fn rttvar(&self) -> Dur {
        self.rttvar
    }
    pub fn backoff(&self) -> u32 {
        self.backoff
    }

    /// Measure the RTT of a segment sent at `sent` and acknowledged at `now`.
    pub fn measure(&self, sent: Time, now: Time) -> Dur {
        let tick = self.cfg.tick.0;
        if tick == 0 {
            return now - sent;
        }
        let crossed = now.0 / tick - sent.0 / tick;
        Dur((crossed + 1) * tick)
    }

    /// Fold in one valid sample and clear the backoff.
    pub fn sample(&mut self, m: Dur) {
        match self.srtt {
            None => {
                self.srtt = Some(m);
                self.rttvar = Dur(m.0 / 2);
            }
            Some(srtt) => {
                let err = m.0 as i64 - srtt.0 as i64;
                let srtt = (srtt.0 as i64 + err / 8).max(0) as u64;
                let var = self.rttvar.0 as i64;
                self.rttvar = Dur((var + (err.abs() - var) / 4).max(0) as u64);
                self.srtt = Some(Dur(srtt));
            }
        }
        self.backoff = 0;
    }

    /// The RTO before backoff.
    pub fn base_rto(&self) -> Dur {
        let raw = match self.srtt {
            None => self.cfg.initial,
            Some(srtt) => {
                let granularity = self.cfg.tick.0.max(1);
                Dur(srtt.0 + (self.cfg.k as u64 * self.rttvar.0).max(granularity))
            }
        };
        let rounded = match self.cfg.tick.0 {
            0 => raw,
            tick => Dur(raw.0.div_ceil(tick) * tick),
        };
        rounded.max(self.cfg.min).min(self.cfg.max)
    }

    /// The RTO with the current backoff applied.
    pub fn rto(&self) -> Dur {
        let factor = 1u64 << self.backoff.min(32);
        Dur(self.base_rto().0.saturating_mul(factor)).min(self.cfg.max)
    }

    /// Double the RTO; false once the connection should give up.
    pub fn back_off(&mut self) -> bool {
        self.backoff += 1;
        self.backoff <= self.cfg.max_backoffs
    }

    /// When a timer of length `d` armed at `now` expires, honouring the tick and its rule.
    pub fn expiry(&self, now: Time, d: Dur) -> Time {
        match (self.cfg.tick.0, self.cfg.tick_rule) {
            (0, _) => now + d,
            (tick, TickRule::Bsd) => {
                let ticks = d.0.div_ceil(tick).max(1);
                Time((now.0 / tick + ticks) * tick)
            }
            (tick, TickRule::After) => Time(((now + d).0 / tick + 1) * tick),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Dur {
        Dur::from_millis(x)
    }

    #[test]
    fn jacobson_estimator_hand_computed() {
        let mut e = RttEstimator::new(RtoConfig { min: ms(1), ..Default::default() });
        assert_eq!(e.rto(), Dur::from_secs(1)); // initial
        e.sample(ms(100));
        assert_eq!((e.srtt().unwrap(), e.rttvar()), (ms(100), ms(50)));
        assert_eq!(e.rto(), ms(300)); // 100 + 4·50
        e.sample(ms(180)); // err 80: srtt 110, rttvar 50 + (80-50)/4 = 57.5
        assert_eq!(e.srtt().unwrap(), ms(110));
        assert_eq!(e.rttvar(), Dur(57_500_000));
        assert_eq!(e.rto(), ms(340));
    }

    #[test]
    fn tahoe_k2_with_coarse_ticks_and_backoff() {
        let cfg = RtoConfig { k: 2, tick: ms(500), max: Dur::from_secs(64), ..Default::default() };
        let mut e = RttEstimator::new(cfg);
        // Sent at 0.9 s, acked at 2.2 s: boundaries at 1.0, 1.5, 2.0 crossed -> 4 ticks = 2 s.
        let m = e.measure(Time(900_000_000), Time(2_200_000_000));
        assert_eq!(m, Dur::from_secs(2));
        e.sample(m);
        assert_eq!(e.rto(), Dur::from_secs(4)); // 2 + 2·1
        assert!(e.back_off());
        assert_eq!(e.rto(), Dur::from_secs(8));
        // Armed at 0.7 s for 1 s = 2 ticks: fires on the second boundary, 1.5 s.
        assert_eq!(e.expiry(Time(700_000_000), Dur::from_secs(1)), Time(1_500_000_000));
        e.sample(m);
        assert_eq!(e.backoff(), 0);
    }

    /// A 10 ms tick and a 250 ms RTO, by hand: a timer armed by an ACK 2.2 µs after a tick
    /// and one armed for the backed-off 500 ms on the tick itself. BSD's rule fires both on
    /// the tick that count of ticks after the one they were armed in; the "after" rule fires
    /// each on the first tick past its deadline, a deadline on a tick one tick later.
    #[test]
    fn tick_rules_by_hand() {
        let (after_tick, on_tick) = (Time(250_002_200), Time(250_000_000));
        let bsd = RttEstimator::new(RtoConfig { tick: ms(10), ..Default::default() });
        // 25 ticks after the tick of 250 ms: 500 ms, 2.2 µs before the deadline.
        assert_eq!(bsd.expiry(after_tick, ms(250)), Time(500_000_000));
        // 50 ticks after 250 ms: 750 ms, the deadline itself.
        assert_eq!(bsd.expiry(on_tick, ms(500)), Time(750_000_000));
        // Armed 2.2 µs after 500 ms for 250 ms: 750 ms again, with the backed-off timer.
        assert_eq!(bsd.expiry(Time(500_002_200), ms(250)), Time(750_000_000));
        let cfg = RtoConfig { tick: ms(10), tick_rule: TickRule::After, ..Default::default() };
        let after = RttEstimator::new(cfg);
        // Deadline 500.0022 ms: the next tick, 510 ms.
        assert_eq!(after.expiry(after_tick, ms(250)), Time(510_000_000));
        // Deadline 750 ms, on a tick: the tick after it, 760 ms.
        assert_eq!(after.expiry(on_tick, ms(500)), Time(760_000_000));
        // Armed 2.2 µs after 510 ms: deadline 760.0022 ms, fires at 770 ms, a tick apart.
        assert_eq!(after.expiry(Time(510_002_200), ms(250)), Time(770_000_000));
        // Without a tick both rules are the deadline itself.
        let exact = RttEstimator::new(RtoConfig { tick_rule: TickRule::After, ..Default::default() });
        assert_eq!(exact.expiry(after_tick, ms(250)), Time(500_002_200));
    }

    /// With a 10 ms tick the timer's SRTT counts ticks while the path's follows the exact
    /// samples as Linux's `srtt_us` would: 30 µs gives 240 (×8), then 50 µs gives
    /// 240 − 30 + 50 = 260, an SRTT of 32 µs; without a tick the two are the same.
    #[test]
    fn the_paths_srtt_is_exact_under_a_tick() {
        let us = Dur::from_micros;
        let mut e = RttEstimator::new(RtoConfig { tick: ms(10), ..Default::default() });
        assert_eq!(e.path_srtt(), None);
        for (sent, acked) in [(Time(1_000_000), Time(1_030_000)), (Time(9_990_000), Time(10_040_000))] {
            e.sample(e.measure(sent, acked));
            e.path_sample(acked - sent);
        }
        // The timer's: one tick (no boundary crossed), then two (10 ms crossed): 10 + (20 - 10)/8.
        assert_eq!(e.srtt(), Some(Dur(11_250_000)));
        assert_eq!(e.path_srtt(), Some(us(32)));
        let mut exact = RttEstimator::new(RtoConfig::default());
        exact.sample(us(30));
        exact.path_sample(us(30));
        assert_eq!(exact.path_srtt(), exact.srtt());
    }

    #[test]
    fn backoff_is_capped_and_gives_up() {
        let mut e = RttEstimator::new(RtoConfig { max_backoffs: 3, ..Default::default() });
        assert!(e.back_off() && e.back_off() && e.back_off());
        assert_eq!(e.rto(), Dur::from_secs(8));
        assert!(!e.back_off());
        for _ in 0..10 {
            e.back_off();
        }
        assert_eq!(e.rto(), Dur::from_secs(60));
    }
}
