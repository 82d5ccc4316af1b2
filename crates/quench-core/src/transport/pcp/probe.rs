//! Probes and the rate search: the accept/reject rule (least-squares slope of one-way delay),
//! direct jump, doubling/halving of the increment, exponential back-off after failures.
//! Owns the probe in flight and the search's increment and back-off. It computes on the send times
//! and delays the sender hands it: it sends nothing, arms no timer and sees no packet.

use crate::units::{BitRate, Dur, Time};

/// Least-squares slope of `y` against `x` (both in seconds): delay gained per second sent.
/// None with fewer than two distinct x values.
pub fn slope(samples: &[(f64, f64)]) -> Option<f64> {
    let n = samples.len() as f64;
    if samples.len() < 2 {
        return None;
    }
    let mx = samples.iter().map(|s| s.0).sum::<f64>() / n;
    let my = samples.iter().map(|s| s.1).sum::<f64>() / n;
    let sxx: f64 = samples.iter().map(|s| (s.0 - mx) * (s.0 - mx)).sum();
    let sxy: f64 = samples.iter().map(|s| (s.0 - mx) * (s.1 - my)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

/// Least-squares slope and its standard error `sqrt(Σ residual² / (n − 2) / Sxx)`; None
/// with fewer than three points or one distinct x.
pub fn slope_fit(samples: &[(f64, f64)]) -> Option<(f64, f64)> {
    let n = samples.len();
    let s = slope(samples).filter(|_| n >= MIN_PROBE_POINTS)?;
    let mx = samples.iter().map(|p| p.0).sum::<f64>() / n as f64;
    let my = samples.iter().map(|p| p.1).sum::<f64>() / n as f64;
    let sxx: f64 = samples.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    let rss: f64 = samples.iter().map(|p| (p.1 - my - s * (p.0 - mx)).powi(2)).sum();
    Some((s, (rss / (n - 2) as f64 / sxx).sqrt()))
}

/// The paper's rule (section 3.1): accept iff the delays are "consistent with flat or
/// decreasing delay": the fitted slope is at most `tolerance` (s/s) plus `z` standard errors
/// of the fit. With `z` = 0 any rise rejects; with `z` > 0 a rise no larger than the scatter
/// of the samples (other senders' packets interleaved with the probe) is taken as flat,
/// while a clean rise (a queue growing at the probe's excess rate) still rejects.
pub fn accept(samples: &[(f64, f64)], tolerance: f64, z: f64) -> bool {
    slope_fit(samples).is_some_and(|(s, se)| s <= tolerance + z * se)
}

/// One probe in progress: `packets` packets paced at `base + increment`.
#[derive(Clone, Debug)]
pub struct Probe {
    pub increment: BitRate,
    pub packets: usize,
    /// Send times of the probe's packets so far (the receiver echoes them).
    pub sent: Vec<Time>,
    /// Transmission order of the last probe packet, once all are sent.
    pub last_order: Option<u64>,
    /// (send time, one-way delay) per echoed probe packet.
    pub samples: Vec<(Time, Dur)>,
    /// A probe packet was declared lost.
    pub lost: bool,
    /// The increment came from the host's history (its verdict grades the prediction).
    pub from_history: bool,
}

impl Probe {
    pub fn new(increment: BitRate, packets: usize, from_history: bool) -> Self {
        Probe {
            increment,
            packets,
            sent: Vec::with_capacity(packets),
            last_order: None,
            samples: Vec::with_capacity(packets),
            lost: false,
            from_history,
        }
    }
    pub fn fully_sent(&self) -> bool {
        self.sent.len() >= self.packets
    }
    pub fn owns(&self, sent_at: Time) -> bool {
        self.sent.binary_search(&sent_at).is_ok()
    }
    pub fn record(&mut self, sent_at: Time, owd: Dur) {
        self.samples.push((sent_at, owd));
    }
    /// Samples relative to the first one, in seconds: differences of integer nanoseconds are
    /// exact, so equal delays give a slope of exactly zero (absolute times near 1e9 ns would
    /// leave rounding noise of either sign, and a tolerance of 0 would reject at random).
    pub fn points(&self) -> Vec<(f64, f64)> {
        let Some(&(t0, d0)) = self.samples.first() else { return Vec::new() };
        let secs = |a: u64, b: u64| (a as i64 - b as i64) as f64 / 1e9;
        self.samples.iter().map(|(t, d)| (secs(t.0, t0.0), secs(d.0, d0.0))).collect()
    }
}

/// Packets in a probe at `rate`: at most `max`, and no more than fit in `span` (a probe is a
/// short burst: at a few packets per RTT, five packets would last two RTTs and delay both the
/// verdict and every other sender's view of the queue), but never fewer than `MIN_PROBE_POINTS`.
pub fn probe_len(rate: BitRate, packet: crate::units::Bytes, span: Dur, max: usize) -> usize {
    if rate.0 == 0 {
        return max;
    }
    let gap = rate.tx_time(packet).as_secs_f64();
    let fit = 1 + (span.as_secs_f64() / gap) as usize;
    fit.clamp(MIN_PROBE_POINTS.min(max), max)
}

/// A slope through two points says nothing about noise.
pub const MIN_PROBE_POINTS: usize = 3;

/// The outcome of a finished probe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Accept,
    Reject,
    /// Too few samples to judge (lost ACKs): neither success nor failure.
    Inconclusive,
}

/// Judge a probe: a lost packet rejects it; otherwise the slope decides.
pub fn judge(p: &Probe, tolerance: f64, z: f64) -> Verdict {
    if p.lost {
        Verdict::Reject
    } else if p.samples.len() < MIN_PROBE_POINTS {
        Verdict::Inconclusive
    } else if accept(&p.points(), tolerance, z) {
        Verdict::Accept
    } else {
        Verdict::Reject
    }
}

/// The search over probe increments (paper section 3.3): double after a success, halve after
/// a failure (never below `min`), and after `n` consecutive failures wait `2^(n-1)` RTTs
/// (capped) before probing again; a success probes again at once.
#[derive(Clone, Debug)]
pub struct Search {
    pub increment: BitRate,
    pub failures: u32,
    pub next_probe_at: Time,
}

impl Search {
    pub fn new(increment: BitRate, now: Time) -> Self {
        Search { increment, failures: 0, next_probe_at: now }
    }

    pub fn on_success(&mut self, now: Time) {
        self.increment = BitRate(self.increment.0.saturating_mul(2));
        self.failures = 0;
        self.next_probe_at = now;
    }

    pub fn on_failure(&mut self, now: Time, min: BitRate, rtt: Dur, max_backoff_rtts: f64) {
        self.increment = BitRate((self.increment.0 / 2).max(min.0));
        self.failures += 1;
        let rtts = 2f64.powi(self.failures as i32 - 1).min(max_backoff_rtts);
        self.next_probe_at = now + Dur::from_secs_f64(rtt.as_secs_f64() * rtts);
    }

    /// Start over from `increment` after a compensation, keeping any back-off already due: a
    /// cut says the path is full, so it is no reason to probe sooner (with the back-off reset
    /// by every cut, 50 flows restarted together and their probes alone overloaded the link).
    pub fn restart(&mut self, increment: BitRate, now: Time) {
        self.increment = increment;
        self.next_probe_at = self.next_probe_at.max(now);
    }

    /// Push the next probe back by `d` (random jitter).
    pub fn delay(&mut self, d: Dur) {
        self.next_probe_at += d;
    }

    /// An inconclusive probe is retried after one RTT with the same increment.
    pub fn retry(&mut self, now: Time, rtt: Dur) {
        self.next_probe_at = now + rtt;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(n: usize, dt: f64, d0: f64, slope: f64) -> Vec<(f64, f64)> {
        (0..n).map(|i| (i as f64 * dt, d0 + slope * i as f64 * dt)).collect()
    }

    #[test]
    fn slope_of_a_line_is_exact() {
        // Hand-computed: points (0,1), (1,3), (2,5) lie on y = 1 + 2x.
        assert_eq!(slope(&[(0.0, 1.0), (1.0, 3.0), (2.0, 5.0)]), Some(2.0));
        assert_eq!(slope(&[(1.0, 1.0)]), None);
        assert_eq!(slope(&[(1.0, 1.0), (1.0, 2.0)]), None);
    }

    #[test]
    fn flat_and_falling_delays_are_accepted() {
        assert!(accept(&line(5, 0.002, 0.010, 0.0), 0.0, 0.0));
        assert!(accept(&line(5, 0.002, 0.010, -0.3), 0.0, 0.0));
    }

    #[test]
    fn rising_delays_are_rejected() {
        // A probe at 1.2x the available rate: each packet waits 0.2 of a spacing more.
        assert!(!accept(&line(5, 0.002, 0.010, 0.2), 0.05, 0.0));
        // Barely above tolerance still rejects; barely below accepts.
        assert!(!accept(&line(5, 0.002, 0.010, 0.06), 0.05, 0.0));
        assert!(accept(&line(5, 0.002, 0.010, 0.04), 0.05, 0.0));
    }

    #[test]
    fn noisy_samples_judged_by_their_fit() {
        // Flat with one packet time (1.2 ms at 10 Mb/s) of jitter on the middle sample: the
        // fit through (0,10),(2,10),(4,11.2),(6,10),(8,10) ms has slope 0 by symmetry.
        let ms = |x: f64| x / 1000.0;
        let flat_jitter: Vec<(f64, f64)> =
            [(0.0, 10.0), (2.0, 10.0), (4.0, 11.2), (6.0, 10.0), (8.0, 10.0)].map(|(t, d)| (ms(t), ms(d))).to_vec();
        assert!(slope(&flat_jitter).unwrap().abs() < 1e-12);
        assert!(accept(&flat_jitter, 0.0, 0.0));
        // Rising at 0.5 s/s with ±0.3 ms alternating jitter at t = 0, 2, 4, 6, 8 ms: the
        // jitter's own fit is Σ(t−4)·j / Σ(t−4)² = (−1.2 + 0.6 − 0.6 + 1.2)/40 = 0 by hand, so
        // the fitted slope is exactly the line's 0.5, and it must reject.
        let rising: Vec<(f64, f64)> = (0..5)
            .map(|i| {
                let t = 2.0 * i as f64;
                let jitter = if i % 2 == 0 { 0.3 } else { -0.3 };
                (ms(t), ms(10.0 + 0.5 * t + jitter))
            })
            .collect();
        let s = slope(&rising).unwrap();
        assert!((s - 0.5).abs() < 1e-9, "{s}");
        assert!(!accept(&rising, 0.05, 0.0));
    }

    #[test]
    fn scatter_within_its_standard_error_counts_as_flat() {
        // By hand: (0,0), (1,2), (2,1): slope Sxy/Sxx = 1/2; fitted 0.5, 1, 1.5, residuals
        // −0.5, 1, −0.5, RSS 1.5, one degree of freedom: SE = sqrt(1.5 / 1 / 2) = 0.866.
        let pts = [(0.0, 0.0), (1.0, 2.0), (2.0, 1.0)];
        let (s, se) = slope_fit(&pts).unwrap();
        assert!((s - 0.5).abs() < 1e-12 && (se - 0.75f64.sqrt()).abs() < 1e-12);
        assert!(accept(&pts, 0.0, 1.0)); // 0.5 <= 0.866
        assert!(!accept(&pts, 0.0, 0.5)); // 0.5 > 0.433
        assert!(!accept(&pts, 0.0, 0.0));
        // A clean rise has no scatter: rejected whatever z.
        assert!(!accept(&line(5, 0.002, 0.010, 0.01), 0.0, 100.0));
        assert!(slope_fit(&pts[..2]).is_none());
    }

    #[test]
    fn verdicts() {
        let mut p = Probe::new(BitRate(1_000_000), 5, false);
        for i in 0..5u64 {
            p.sent.push(Time(i * 1_000_000));
        }
        for i in 0..2u64 {
            p.record(Time(i * 1_000_000), Dur::from_millis(10));
        }
        assert_eq!(judge(&p, 0.05, 0.0), Verdict::Inconclusive);
        for i in 2..5u64 {
            p.record(Time(i * 1_000_000), Dur::from_millis(10));
        }
        assert_eq!(judge(&p, 0.05, 0.0), Verdict::Accept);
        // Equal delays at large, irregular times: exactly flat, so a zero tolerance accepts.
        let mut q = Probe::new(BitRate(1_000_000), 5, false);
        for t in [7_123_456_789u64, 7_124_690_123, 7_125_923_457, 7_127_156_791, 7_128_390_125] {
            q.record(Time(t), Dur(13_440_000));
        }
        assert_eq!(slope(&q.points()), Some(0.0));
        assert_eq!(judge(&q, 0.0, 0.0), Verdict::Accept);
        p.lost = true;
        assert_eq!(judge(&p, 0.05, 0.0), Verdict::Reject);
    }

    #[test]
    fn search_doubles_halves_and_backs_off() {
        let rtt = Dur::from_millis(20);
        let mut s = Search::new(BitRate(1000), Time::ZERO);
        s.on_success(Time(5));
        assert_eq!((s.increment, s.next_probe_at), (BitRate(2000), Time(5)));
        let min = BitRate(300);
        s.on_failure(Time::ZERO, min, rtt, 32.0);
        assert_eq!((s.increment, s.next_probe_at), (BitRate(1000), Time::ZERO + rtt)); // 2^0 RTT
        s.on_failure(Time::ZERO, min, rtt, 32.0);
        assert_eq!((s.increment, s.next_probe_at), (BitRate(500), Time::ZERO + Dur::from_millis(40)));
        s.on_failure(Time::ZERO, min, rtt, 32.0);
        assert_eq!((s.increment, s.next_probe_at), (BitRate(300), Time::ZERO + Dur::from_millis(80)));
        for _ in 0..10 {
            s.on_failure(Time::ZERO, min, rtt, 32.0);
        }
        assert_eq!(s.next_probe_at, Time::ZERO + Dur::from_millis(640)); // capped at 32 RTTs
                                                                         // A compensation restarts the search at the smallest step but keeps the back-off due.
        s.restart(min, Time::ZERO + Dur::from_millis(100));
        assert_eq!((s.increment, s.next_probe_at, s.failures), (min, Time::ZERO + Dur::from_millis(640), 13));
        s.restart(min, Time::ZERO + Dur::from_millis(700));
        assert_eq!(s.next_probe_at, Time::ZERO + Dur::from_millis(700));
        s.on_success(Time(7));
        assert_eq!(s.failures, 0);
    }

    #[test]
    fn probe_length_fits_the_span() {
        // 1250-byte packets: at 0.8 Mb/s (two per 25 ms RTT) the gap is 12.5 ms, so a 12.5 ms
        // span holds 1 + 1 packets: raised to the three a slope needs. At 8 Mb/s (1.25 ms)
        // it holds 11: capped at five. At 4 Mb/s (2.5 ms): 1 + 5 = 6, capped at 5; at 2 Mb/s
        // (5 ms): 1 + 2 = 3.
        let (pkt, span) = (crate::units::Bytes(1250), Dur::from_micros(12_500));
        assert_eq!(probe_len(BitRate(800_000), pkt, span, 5), 3);
        assert_eq!(probe_len(BitRate(8_000_000), pkt, span, 5), 5);
        assert_eq!(probe_len(BitRate(4_000_000), pkt, span, 5), 5);
        assert_eq!(probe_len(BitRate(2_000_000), pkt, span, 5), 3);
        assert_eq!(probe_len(BitRate(0), pkt, span, 5), 5);
    }
}
