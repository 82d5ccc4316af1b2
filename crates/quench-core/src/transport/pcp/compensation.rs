//! Rate compensation (paper section 3.2) and tit-for-tat (section 3.5).
//!
//! Compensation works in epochs. An epoch collects the queueing delay `d = owd − min_owd` of
//! base-rate packets sent in its first half RTT (probe packets are judged separately); once
//! a packet sent after that is acknowledged, the epoch ends with the *mean* `d` of its
//! samples. The mean, not the minimum: a slow flow takes fewer samples than a fast one, so its
//! minimum is larger and it would cut more often than the fast flow (we measured a 2 vs
//! 7.5 Mb/s split persisting for 10 s); the mean of a time-average queue is the same for both,
//! so every sender cuts by the same fraction.
//!
//! A mean above the tolerance is a standing queue. The sender paces at `max(0, 1 − d/RTT)` of
//! its base rate for one RTT, which, if every sender does the same, drains the queue within
//! that RTT (`Cut::drain`), and then returns to the base rate (`drain_once`). The literal
//! reading keeps that cut for good (`drain_once: false`): the queue is gone after one RTT
//! but the senders stay d/RTT below the link until probes win the capacity back, which at high
//! load is most of the headroom. The next epoch starts one RTT after a cut, with packets sent
//! after the drain.
//!
//! The cut also removes the excess that built the queue: a queue fed `1 + s` times faster than
//! it drains gives delays rising with slope `s` against send time, so the base rate is scaled
//! by `1/(1 + s)` for good (`Cut::excess`, `s` from the epoch's least-squares fit,
//! `compensate_growth`). Without it a flow keeps the rate that overloads the path and the
//! queue is back an RTT after each drain. An alarm shortens the loop: one sample with `d` of at
//! least `queue_alarm_rtts` RTTs ends the epoch at once, with the queue that sample saw.
//! Samples of packets sent while a cut drains the queue are otherwise ignored, but one that
//! shows the queue grown by another alarm's worth since the sample the cut acted on raises a
//! new alarm at once, with `s` measured since that sample: the feedback lags by the queue
//! itself, and without this a flow that had jumped far above its share over fair queueing kept
//! its rate for 150 ms while its own queue grew to 100 ms and overflowed (traced in pcp06).
//!
//! Tit-for-tat: when `rounds` consecutive compensating epochs each fail to shrink the queue,
//! compensation is weakened `factor`-fold for as long as it stays ineffective, i.e. until an
//! epoch sees no standing queue (the paper's test of effectiveness is that compensation
//! eliminates the queue, §3.5). Ending it at the first epoch whose queue merely shrank ended it
//! whenever TCP backed off, so PCP was cut at full strength exactly when the capacity it could
//! take appeared: beside one TCP flow on 10 Mb/s it held 0.35 Mb/s, the same as without
//! tit-for-tat (`tests/pcp.rs`).
//! Owns the epoch's samples and the cut in force. It computes on the delays the sender hands it: it
//! sends nothing, arms no timer and sees no packet.

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
    /// The latest sample (send time, queueing delay), and whether any sample this epoch
    /// reached the alarm.
    latest: (Time, Dur),
    alarmed: bool,
    /// The sample the last cut acted on, while its queue drains.
    cut_at: Option<(Time, Dur)>,
    /// The queue's growth since the last cut (s/s), if a draining-period sample showed it
    /// still growing by another alarm's worth.
    regrowth: Option<f64>,
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
    /// Scale the cut by the queue's growth (the epoch's delay slope) as well as its size.
    pub growth: bool,
    pub rounds: u32,
    pub factor: f64,
}

impl Compensator {
    pub fn new(now: Time) -> Self {
        Compensator { start: now, ..Default::default() }
    }

    /// A base-rate packet sent at `sent_at` saw queueing delay `d`; a delay of `alarm` or more
    /// ends the epoch at once.
    pub fn on_sample(&mut self, sent_at: Time, d: Dur, alarm: Dur) {
        if sent_at >= self.start {
            self.sum_d = self.sum_d + d;
            self.samples += 1;
            self.latest = (sent_at, d);
            self.alarmed |= d >= alarm;
            self.fit.add((sent_at - self.start).as_secs_f64(), d.as_secs_f64());
        } else if let Some((t0, d0)) = self.cut_at.filter(|&(t0, d0)| sent_at > t0 && d >= d0 + alarm) {
            // Packets sent before the cut took effect: the feedback lags by the queue itself,
            // so a queue that keeps growing cannot wait for the draining period to end.
            self.regrowth = Some((d.as_secs_f64() - d0.as_secs_f64()) / (sent_at - t0).as_secs_f64());
            self.latest = (sent_at, d);
            self.alarmed = true;
        }
    }

    /// True once a packet sent an RTT into the epoch has been acknowledged.
    pub fn epoch_done(&self, acked_sent_at: Time, rtt: Dur) -> bool {
        self.alarmed
            || (self.samples > 0 && acked_sent_at >= self.start + Dur::from_secs_f64(rtt.as_secs_f64() * EPOCH_RTTS))
    }

    /// End the epoch: the cut a standing queue calls for, if any.
    pub fn end_epoch(&mut self, now: Time, rtt: Dur, p: Policy) -> Option<Cut> {
        let mean = Dur(self.sum_d.0 / self.samples.max(1));
        // An alarm is about the queue now, which the epoch's mean understates.
        let d = if self.alarmed { mean.max(self.latest.1) } else { mean };
        (self.sum_d, self.samples, self.alarmed) = (Dur::ZERO, 0, false);
        let fitted = std::mem::take(&mut self.fit).slope().unwrap_or(0.0);
        self.trend = self.regrowth.take().unwrap_or(fitted);
        self.cut_at = None;
        self.start = now;
        self.queue_seen = d > p.tolerance;
        if !self.queue_seen {
            (self.prev_d, self.ineffective, self.weakened) = (None, 0, false);
            return None;
        }
        self.start = now + Dur::from_secs_f64(rtt.as_secs_f64() * DRAIN_RTTS);
        self.cut_at = Some(self.latest);
        self.ineffective = match self.prev_d {
            Some(prev) if d >= prev => self.ineffective + 1,
            _ => 0,
        };
        self.weakened |= self.ineffective >= p.rounds;
        self.prev_d = Some(d);
        self.compensations += 1;
        let drain = factor(d, rtt, if self.weakened { p.factor } else { 1.0 });
        // A queue growing at slope s (s/s) is fed at 1 + s times what drains it. Not under
        // tit-for-tat: that growth is the other protocol's.
        let growth = if p.growth && !self.weakened { self.trend.max(0.0) } else { 0.0 };
        Some(Cut { drain, excess: 1.0 / (1.0 + growth) })
    }
}

/// A compensation: the base rate scaled by `drain` (the standing queue's share of an RTT) and by
/// `excess` (how much faster than it drains the queue grew).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cut {
    pub drain: f64,
    pub excess: f64,
}

impl Cut {
    pub fn total(&self) -> f64 {
        self.drain * self.excess
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

    const P: Policy = Policy { tolerance: Dur::from_millis(1), growth: false, rounds: 3, factor: 10.0 };
    const NO_ALARM: Dur = Dur(u64::MAX);

    /// The factor a cut scales the rate by (1: no cut).
    fn total(cut: Option<Cut>) -> f64 {
        cut.map_or(1.0, |c| c.total())
    }

    /// Epoch `i` ends at i × 100 ms, after the 50 ms drain period of any earlier cut.
    fn epoch(c: &mut Compensator, i: u64, d_ms: u64) -> f64 {
        let now = Time(i * 100_000_000);
        c.on_sample(now, Dur::from_millis(d_ms), NO_ALARM);
        total(c.end_epoch(now, Dur::from_millis(50), P))
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
            c.on_sample(ms(t), Dur::from_millis(d), NO_ALARM);
        }
        c.end_epoch(ms(30), Dur::from_millis(50), P);
        assert!((c.trend - 0.15).abs() < 1e-9, "{}", c.trend);
        c.on_sample(ms(200), Dur::from_millis(4), NO_ALARM); // one point: no slope
        c.end_epoch(ms(300), Dur::from_millis(50), P);
        assert_eq!(c.trend, 0.0);
    }

    const GROWTH: Policy = Policy { growth: true, ..P };
    const RTT40: Dur = Dur::from_millis(40);
    const ALARM10: Dur = Dur::from_millis(10);
    fn ms(x: u64) -> Time {
        Time(x * 1_000_000)
    }

    /// Hand values: delays 2, 6, 10 ms at 0, 2, 4 ms lie on a line of slope 2 (the queue is fed
    /// three times faster than it drains); the third reaches the 10 ms alarm.
    fn alarmed_epoch() -> (Compensator, Option<Cut>) {
        let mut c = Compensator::new(Time::ZERO);
        c.on_sample(ms(0), Dur::from_millis(2), ALARM10);
        c.on_sample(ms(2), Dur::from_millis(6), ALARM10);
        assert!(!c.epoch_done(ms(2), RTT40));
        c.on_sample(ms(4), Dur::from_millis(10), ALARM10);
        assert!(c.epoch_done(ms(4), RTT40), "an alarm ends the epoch before half an RTT");
        let cut = c.end_epoch(ms(45), RTT40, GROWTH);
        (c, cut)
    }

    #[test]
    fn an_alarm_cuts_at_once_by_the_queue_now_and_its_growth() {
        let (c, cut) = alarmed_epoch();
        let cut = cut.expect("a cut");
        // The queue now (10 ms), not the epoch's mean (6 ms): drain 1 − 10/40.
        assert!((cut.drain - 0.75).abs() < 1e-12, "{cut:?}");
        assert!((cut.excess - 1.0 / 3.0).abs() < 1e-9, "{cut:?}");
        assert!((c.trend - 2.0).abs() < 1e-9);
    }

    #[test]
    fn without_an_alarm_the_epoch_runs_half_an_rtt() {
        // Delays 1, 2, 3 ms at 0, 1, 2 ms under a 10 ms alarm: the epoch ends with the first
        // packet sent half an RTT in; drain by the mean (2 ms), growth slope 1.
        let mut c = Compensator::new(Time::ZERO);
        for (t, d) in [(0, 1), (1, 2), (2, 3)] {
            c.on_sample(ms(t), Dur::from_millis(d), ALARM10);
        }
        assert!(!c.epoch_done(ms(19), RTT40));
        assert!(c.epoch_done(ms(20), RTT40));
        let cut = c.end_epoch(ms(60), RTT40, GROWTH).expect("a cut");
        assert!((cut.drain - (1.0 - 2.0 / 40.0)).abs() < 1e-12, "{cut:?}");
        assert!((cut.excess - 0.5).abs() < 1e-9, "{cut:?}");
    }

    #[test]
    fn a_queue_still_growing_while_it_should_drain_raises_a_new_alarm() {
        // The cut acted on the sample sent at 4 ms with 10 ms of queue. A sample sent before
        // the cut took effect and grown by less than an alarm's worth since: ignored.
        let (mut c, _) = alarmed_epoch();
        c.on_sample(ms(5), Dur::from_millis(15), ALARM10);
        assert!(!c.epoch_done(ms(5), RTT40));
        // Grown by 12 ms in 5 ms of sending: slope 2.4, a new cut at once.
        c.on_sample(ms(9), Dur::from_millis(22), ALARM10);
        assert!(c.epoch_done(ms(9), RTT40));
        let cut = c.end_epoch(ms(60), RTT40, GROWTH).expect("a cut");
        assert!((cut.drain - (1.0 - 22.0 / 40.0)).abs() < 1e-12, "{cut:?}");
        assert!((cut.excess - 1.0 / 3.4).abs() < 1e-9, "{cut:?}");
    }

    #[test]
    fn samples_before_the_epoch_are_ignored() {
        let mut c = Compensator::new(Time(10));
        c.on_sample(Time(5), Dur::from_millis(20), NO_ALARM);
        assert!(!c.epoch_done(Time(100), Dur(50)));
        c.on_sample(Time(20), Dur::from_millis(2), NO_ALARM);
        assert!(!c.epoch_done(Time(34), Dur(50))); // half an RTT after the start: 35
        assert!(c.epoch_done(Time(35), Dur(50)));
        assert!((total(c.end_epoch(Time(70), Dur::from_millis(20), P)) - 0.9).abs() < 1e-12);
    }

    #[test]
    fn a_cut_is_judged_after_the_queue_it_drains() {
        // A cut at 100 ms with a 20 ms RTT: packets sent before 120 ms still see the draining
        // queue and are ignored; the next epoch starts with packets sent from 120 ms on.
        let mut c = Compensator::new(Time::ZERO);
        let (rtt, ms) = (Dur::from_millis(20), |x: u64| Time(x * 1_000_000));
        c.on_sample(ms(1), Dur::from_millis(4), NO_ALARM);
        assert!((total(c.end_epoch(ms(100), rtt, P)) - 0.8).abs() < 1e-12);
        c.on_sample(ms(105), Dur::from_millis(2), NO_ALARM);
        c.on_sample(ms(119), Dur::from_millis(2), NO_ALARM);
        assert!(!c.epoch_done(ms(129), rtt)); // no sample yet counts
        c.on_sample(ms(120), Dur::ZERO, NO_ALARM);
        assert!(!c.epoch_done(ms(129), rtt));
        assert!(c.epoch_done(ms(130), rtt));
        assert_eq!(c.end_epoch(ms(150), rtt, P), None);
        assert!(!c.queue_seen);
    }
}
