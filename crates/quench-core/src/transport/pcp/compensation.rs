//! Rate compensation (paper section 3.2) and tit-for-tat (section 3.5).
//!
//! Compensation works in epochs. An epoch collects the queueing delay `d = owd − min_owd` of
//! base-rate packets sent in its first half RTT (probe packets are judged separately); once
//! a packet sent after that is acknowledged, the epoch ends with the *mean* `d` of its
//! samples. If that exceeds the tolerance, the base rate is scaled by `max(0, 1 − d/RTT)` so
//! that, if every sender does the same, the queue drains within the next RTT (ALGORITHMS.md
//! 2a's form), and a new epoch starts with the packets sent from then on, so each cut is
//! judged on packets sent after it. The mean, not the minimum: a slow flow takes fewer samples
//! than a fast one, so its minimum is larger and it would cut more often than the fast flow
//! (we measured a 2 vs 7.5 Mb/s split persisting for 10 s); the mean of a time-average queue
//! is the same for both, so every sender cuts by the same fraction.
//!
//! Tit-for-tat: when `rounds` consecutive compensating epochs each fail to shrink the queue,
//! compensation is weakened `factor`-fold for as long as it stays ineffective, i.e. until an
//! epoch sees no standing queue (the paper's test of effectiveness is that compensation
//! eliminates the queue, §3.5). Ending it at the first epoch whose queue merely shrank ended it
//! whenever TCP backed off, so PCP was cut at full strength exactly when the capacity it could
//! take appeared: beside one TCP flow on 10 Mb/s it held 0.35 Mb/s, the same as without
//! tit-for-tat (`tests/pcp.rs`).

use crate::units::{Dur, Time};

/// An epoch's packets are those sent in its first half RTT: longer than a probe's bump (a few
/// packet times), short enough that an overload is cut about 1.5 RTTs after it starts (a
/// BDP buffer holds one RTT of excess at twice the link rate).
const EPOCH_RTTS: f64 = 0.5;
/// After a cut the next epoch starts this many RTTs later: the cut is sized to drain the queue
/// within one RTT, so packets sent meanwhile see a queue that is already going away. Counting
/// it again cut twice for one queue: in pcp06 at 90% load the senders' total swung between
/// 27 and 49 Mb/s on a 40 Mb/s link with a period of 10 RTTs (measured, 25 ms bins).
const DRAIN_RTTS: f64 = 1.0;

#[derive(Clone, Debug, Default)]
pub struct Compensator {
    start: Time,
    /// Sum and count of this epoch's base-rate packets' queueing delays.
    sum_d: Dur,
    samples: u64,
    /// Least-squares sums of this epoch's (send time − start, delay) in seconds.
    fit: TrendFit,
    /// Slope of the queueing delay of base-rate packets over the last finished epoch (s/s):
    /// how fast the queue grows without any probe (under tit-for-tat, TCP's growth).
    pub trend: f64,
    /// Queue at the previous epoch if it compensated.
    prev_d: Option<Dur>,
    ineffective: u32,
    pub weakened: bool,
    /// The last finished epoch saw a standing queue above the tolerance.
    pub queue_seen: bool,
    pub compensations: u64,
}

/// Parameters of one epoch's decision.
#[derive(Clone, Copy, Debug)]
pub struct Policy {
    pub tolerance: Dur,
    pub rounds: u32,
    pub factor: f64,
}

impl Compensator {
    pub fn new(now: Time) -> Self {
        Compensator { start: now, ..Default::default() }
    }

    /// A base-rate packet sent at `sent_at` saw queueing delay `d`.
    pub fn on_sample(&mut self, sent_at: Time, d: Dur) {
        if sent_at >= self.start {
            self.sum_d = self.sum_d + d;
            self.samples += 1;
            self.fit.add((sent_at - self.start).as_secs_f64(), d.as_secs_f64());
        }
    }

    /// True once a packet sent an RTT into the epoch has been acknowledged.
    pub fn epoch_done(&self, acked_sent_at: Time, rtt: Dur) -> bool {
        acked_sent_at >= self.start + Dur::from_secs_f64(rtt.as_secs_f64() * EPOCH_RTTS) && self.samples > 0
    }

    /// End the epoch: the factor to scale the base rate by (1 when there is no queue).
    pub fn end_epoch(&mut self, now: Time, rtt: Dur, p: Policy) -> f64 {
        let d = Dur(self.sum_d.0 / self.samples.max(1));
        (self.sum_d, self.samples) = (Dur::ZERO, 0);
        self.trend = std::mem::take(&mut self.fit).slope().unwrap_or(0.0);
        self.start = now;
        self.queue_seen = d > p.tolerance;
        if !self.queue_seen {
            (self.prev_d, self.ineffective, self.weakened) = (None, 0, false);
            return 1.0;
        }
        self.start = now + Dur::from_secs_f64(rtt.as_secs_f64() * DRAIN_RTTS);
        self.ineffective = match self.prev_d {
            Some(prev) if d >= prev => self.ineffective + 1,
            _ => 0,
        };
        self.weakened |= self.ineffective >= p.rounds;
        self.prev_d = Some(d);
        self.compensations += 1;
        factor(d, rtt, if self.weakened { p.factor } else { 1.0 })
    }
}

/// Running sums for a least-squares line through (x, y) points.
#[derive(Clone, Debug, Default)]
struct TrendFit {
    n: f64,
    sx: f64,
    sy: f64,
    sxx: f64,
    sxy: f64,
}

impl TrendFit {
    fn add(&mut self, x: f64, y: f64) {
        self.n += 1.0;
        self.sx += x;
        self.sy += y;
        self.sxx += x * x;
        self.sxy += x * y;
    }

    /// The slope, once there are two distinct x values.
    fn slope(&self) -> Option<f64> {
        let sxx = self.sxx - self.sx * self.sx / self.n;
        (self.n >= 2.0 && sxx > 0.0).then(|| (self.sxy - self.sx * self.sy / self.n) / sxx)
    }
}

/// `max(0, 1 − d/(RTT·weakening))`.
pub fn factor(d: Dur, rtt: Dur, weakening: f64) -> f64 {
    (1.0 - d.as_secs_f64() / (rtt.as_secs_f64() * weakening)).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: Policy = Policy { tolerance: Dur::from_millis(1), rounds: 3, factor: 10.0 };

    /// Epoch `i` ends at i × 100 ms, after the 50 ms drain period of any earlier cut.
    fn epoch(c: &mut Compensator, i: u64, d_ms: u64) -> f64 {
        let now = Time(i * 100_000_000);
        c.on_sample(now, Dur::from_millis(d_ms));
        c.end_epoch(now, Dur::from_millis(50), P)
    }

    #[test]
    fn factor_drains_the_queue_in_one_rtt() {
        // 5 ms of queue on a 50 ms RTT: cut by 10%; a queue longer than the RTT stops the flow.
        assert!((factor(Dur::from_millis(5), Dur::from_millis(50), 1.0) - 0.9).abs() < 1e-12);
        assert_eq!(factor(Dur::from_millis(80), Dur::from_millis(50), 1.0), 0.0);
        assert!((factor(Dur::from_millis(5), Dur::from_millis(50), 10.0) - 0.99).abs() < 1e-12);
    }

    #[test]
    fn no_queue_no_cut() {
        let mut c = Compensator::new(Time::ZERO);
        assert_eq!(epoch(&mut c, 1, 0), 1.0);
        assert!(!c.queue_seen);
    }

    #[test]
    fn tit_for_tat_after_three_ineffective_rounds_and_back() {
        let mut c = Compensator::new(Time::ZERO);
        // The queue keeps growing (TCP fills it): 10, 10, 12, 14 ms.
        assert!((epoch(&mut c, 1, 10) - 0.8).abs() < 1e-12);
        assert!(!c.weakened);
        epoch(&mut c, 2, 10); // ineffective 1
        epoch(&mut c, 3, 12); // ineffective 2
        assert!(!c.weakened);
        let f = epoch(&mut c, 4, 14); // ineffective 3: weaken 10x
        assert!(c.weakened);
        assert!((f - (1.0 - 0.014 / 0.5)).abs() < 1e-12);
        // The queue shrinks (TCP backed off) but stays: still weakened.
        let f = epoch(&mut c, 5, 5);
        assert!(c.weakened);
        assert!((f - (1.0 - 0.005 / 0.5)).abs() < 1e-12);
        // The queue is gone: compensation is effective again and full strength returns.
        assert_eq!(epoch(&mut c, 6, 0), 1.0);
        assert!(!c.weakened);
        assert!((epoch(&mut c, 7, 5) - 0.9).abs() < 1e-12);
    }

    /// The epoch's trend is the least-squares slope of its samples' delays (hand values).
    #[test]
    fn trend_is_the_slope_of_the_epochs_delays() {
        let mut c = Compensator::new(Time::ZERO);
        let ms = |x: u64| Time(x * 1_000_000);
        // Delays 2, 3, 5 ms at 0, 10, 20 ms: Sxy / Sxx = 3e-5 / 2e-4 = 0.15 s/s.
        for (t, d) in [(0, 2), (10, 3), (20, 5)] {
            c.on_sample(ms(t), Dur::from_millis(d));
        }
        c.end_epoch(ms(30), Dur::from_millis(50), P);
        assert!((c.trend - 0.15).abs() < 1e-9, "{}", c.trend);
        c.on_sample(ms(200), Dur::from_millis(4)); // one point: no slope
        c.end_epoch(ms(300), Dur::from_millis(50), P);
        assert_eq!(c.trend, 0.0);
    }

    #[test]
    fn samples_before_the_epoch_are_ignored() {
        let mut c = Compensator::new(Time(10));
        c.on_sample(Time(5), Dur::from_millis(20));
        assert!(!c.epoch_done(Time(100), Dur(50)));
        c.on_sample(Time(20), Dur::from_millis(2));
        assert!(!c.epoch_done(Time(34), Dur(50))); // half an RTT after the start: 35
        assert!(c.epoch_done(Time(35), Dur(50)));
        assert!((c.end_epoch(Time(70), Dur::from_millis(20), P) - 0.9).abs() < 1e-12);
    }

    #[test]
    fn a_cut_is_judged_after_the_queue_it_drains() {
        // A cut at 100 ms with a 20 ms RTT: packets sent before 120 ms still see the draining
        // queue and are ignored; the next epoch starts with packets sent from 120 ms on.
        let mut c = Compensator::new(Time::ZERO);
        let (rtt, ms) = (Dur::from_millis(20), |x: u64| Time(x * 1_000_000));
        c.on_sample(ms(1), Dur::from_millis(4));
        assert!((c.end_epoch(ms(100), rtt, P) - 0.8).abs() < 1e-12);
        c.on_sample(ms(105), Dur::from_millis(2));
        c.on_sample(ms(119), Dur::from_millis(2));
        assert!(!c.epoch_done(ms(129), rtt)); // no sample yet counts
        c.on_sample(ms(120), Dur::ZERO);
        assert!(!c.epoch_done(ms(129), rtt));
        assert!(c.epoch_done(ms(130), rtt));
        assert_eq!(c.end_epoch(ms(150), rtt, P), 1.0);
        assert!(!c.queue_seen);
    }
}
