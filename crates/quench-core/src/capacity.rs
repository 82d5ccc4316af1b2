//! A link whose capacity changes over time, from a trace; per direction, with the link's queue
//! discipline in front as on any link. Two forms:
//!
//! - **Delivery opportunities**, Mahimahi's format (Netravali et al., "Mahimahi: Accurate
//!   Record-and-Replay for HTTP", USENIX ATC 2015; the traces of Sprout, Copa and the
//!   Pantheon): each line of a trace is a time in milliseconds at which the link may deliver
//!   one MTU-sized packet, and the trace repeats with the period of its last line. A scenario
//!   writes `capacity = { mahimahi = "file" }`; the front end reads the file into
//!   `opportunities_ms`. As Mahimahi's `LinkQueue::use_a_delivery_opportunity`: an opportunity
//!   carries up to 1504 bytes; each packet takes its size plus the 4-byte header its TUN device
//!   reads with it; a packet larger than what is left spans opportunities; bytes of an
//!   opportunity that no queued packet takes are lost, and an opportunity with nothing queued
//!   is wasted. A packet finishes at the opportunity that carries its last byte. One departure:
//!   a packet leaves the queue when the transmitter takes it (at once when the link is idle),
//!   not at its first opportunity, so sojourn times end earlier by up to one gap between
//!   opportunities.
//! - **A rate over time**, piecewise constant (`capacity = { rates = "file.csv" }`, read into
//!   `rates`, pairs of time and rate): a transmission's bits are sent at whatever rate holds
//!   while they go, across changes, exactly; a rate of 0 is an outage, and the last rate holds
//!   to the end of the run. A single step is a fixed-rate link, nanosecond for nanosecond (the
//!   remainder carried as the fixed link's `Serializer` carries it).
//!
//! Owns the trace and where the link stands in it. It answers `tx_end` and nothing else: it
//! never sees a packet, the queue or the event queue.

use crate::error::ConfigError;
use crate::units::{BitRate, Bytes, Dur, Time};
use serde::{Deserialize, Serialize};

/// Bytes one delivery opportunity carries: Mahimahi's `PACKET_SIZE` ("default max TUN payload
/// size", `link_queue.hh`): a 1500-byte IP packet and its TUN header.
pub const OPPORTUNITY_BYTES: u64 = 1504;

/// Bytes a packet takes of an opportunity beyond its own: the packet-information header
/// (`struct tun_pi`, 4 bytes) a TUN device without `IFF_NO_PI` reads with each packet, which
/// Mahimahi counts.
pub const TUN_HEADER_BYTES: u64 = 4;

/// The most opportunities a trace may hold: 2^24 (16.7 million, 64 MiB), some 3.9 hours at
/// 12 Mbps; published traces (Sprout's, the Pantheon's) are one to a few minutes long.
pub const MAX_OPPORTUNITIES: usize = 1 << 24;

const NS_PER_MS: u64 = 1_000_000;

/// The most steps a rate trace may hold (the same 64 MiB as opportunities, at 16 bytes a step).
pub const MAX_RATE_STEPS: usize = 1 << 22;

/// A trace as a scenario holds it: one of `opportunities_ms` and `rates`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CapacitySpec {
    /// Times of the delivery opportunities in ms, non-decreasing, the last one the period.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opportunities_ms: Option<Vec<u32>>,
    /// (time, rate) steps, the first at time 0, in increasing time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rates: Option<Vec<(Dur, BitRate)>>,
    /// Where the trace came from (its file), for the written scenario and messages.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source: String,
}

impl CapacitySpec {
    pub fn validate(&self, key: &str) -> Result<(), ConfigError> {
        let from = if self.source.is_empty() { String::new() } else { format!("{}: ", self.source) };
        let named = |field: &str, why: String| ConfigError::new(format!("{key}.{field}"), format!("{from}{why}"));
        match (&self.opportunities_ms, &self.rates) {
            (Some(ms), None) => validate_opportunities(ms).map_err(|why| named("opportunities_ms", why)),
            (None, Some(steps)) => validate_rates(steps).map_err(|why| named("rates", why)),
            _ => Err(ConfigError::new(key, "give one of `mahimahi` (`opportunities_ms`) and `rates`")),
        }
    }
}

fn validate_opportunities(ms: &[u32]) -> Result<(), String> {
    if ms.is_empty() {
        return Err("no delivery opportunities".into());
    }
    if ms.len() > MAX_OPPORTUNITIES {
        return Err(format!("{} opportunities exceed {MAX_OPPORTUNITIES}", ms.len()));
    }
    if let Some(i) = ms.windows(2).position(|w| w[1] < w[0]) {
        return Err(format!("opportunity {} at {} ms comes before the one before it", i + 2, ms[i + 1]));
    }
    if ms[ms.len() - 1] == 0 {
        return Err("the trace must last a nonzero time (its last opportunity is at 0 ms)".into());
    }
    Ok(())
}

fn validate_rates(steps: &[(Dur, BitRate)]) -> Result<(), String> {
    let Some(&(first, _)) = steps.first() else { return Err("no steps".into()) };
    if steps.len() > MAX_RATE_STEPS {
        return Err(format!("{} steps exceed {MAX_RATE_STEPS}", steps.len()));
    }
    if !first.is_zero() {
        return Err(format!("the first step is at {first}; the rate from time 0 must be given"));
    }
    if let Some(i) = steps.windows(2).position(|w| w[1].0 <= w[0].0) {
        return Err(format!("step {} at {} does not come after the one before it", i + 2, steps[i + 1].0));
    }
    if steps[steps.len() - 1].1 .0 == 0 {
        return Err("the last rate holds to the end of the run and must be positive".into());
    }
    Ok(())
}

/// What sets when a link's transmissions end.
pub(crate) enum Capacity {
    Opportunities(DeliveryTrace),
    Rates(RateTrace),
}

impl Capacity {
    pub fn new(spec: &CapacitySpec) -> Capacity {
        match (&spec.opportunities_ms, &spec.rates) {
            (Some(ms), _) => Capacity::Opportunities(DeliveryTrace::new(ms)),
            (None, Some(steps)) => Capacity::Rates(RateTrace::new(steps)),
            (None, None) => unreachable!("validated: one of the two"),
        }
    }

    /// A transmission of `size` bytes starts now: when it ends.
    pub fn tx_end(&mut self, now: Time, size: Bytes) -> Time {
        match self {
            Capacity::Opportunities(t) => t.tx_end(now, size),
            Capacity::Rates(t) => t.tx_end(now, size),
        }
    }
}

/// A piecewise-constant rate and where the link stands in it.
pub(crate) struct RateTrace {
    /// (start, bit/s) of each step.
    steps: Box<[(Time, u64)]>,
    /// The step the last transmission ended in.
    at: usize,
    /// The remainder, in bit·ns, of the last transmission's time in its step (see `Serializer`).
    carry: u128,
}

const NS_PER_SEC: u128 = 1_000_000_000;

impl RateTrace {
    fn new(steps: &[(Dur, BitRate)]) -> RateTrace {
        let steps = steps.iter().map(|&(at, r)| (Time::ZERO + at, r.0)).collect();
        RateTrace { steps, at: 0, carry: 0 }
    }

    fn step_end(&self, i: usize) -> Option<Time> {
        self.steps.get(i + 1).map(|s| s.0)
    }

    fn tx_end(&mut self, now: Time, size: Bytes) -> Time {
        if self.step_end(self.at).is_some_and(|end| end <= now) {
            self.at = self.steps.partition_point(|s| s.0 <= now) - 1;
            self.carry = 0;
        }
        let mut need = size.0 as u128 * 8 * NS_PER_SEC + self.carry;
        let mut t = now;
        loop {
            let rate = self.steps[self.at].1 as u128;
            let end = self.step_end(self.at);
            let room = end.map(|e| (e.0 - t.0) as u128 * rate);
            if room.is_none_or(|room| need < room) {
                // Ends within this step (`rate` > 0 here: an outage's room is 0).
                self.carry = need % rate;
                return Time(t.0 + (need / rate) as u64);
            }
            need -= room.expect("a step with an end");
            t = end.expect("a step with an end");
            self.at += 1;
            self.carry = 0;
        }
    }
}

/// Where a link stands in its trace: the next opportunity not yet used, and what is left of
/// the one last used.
pub(crate) struct DeliveryTrace {
    ms: Box<[u32]>,
    period: Dur,
    /// The next opportunity: index `next` of repetition `cycle`.
    cycle: u64,
    next: usize,
    /// The last opportunity used and the bytes it has left (usable only at its own time).
    partial: Option<(Time, u64)>,
}

impl DeliveryTrace {
    fn new(ms: &[u32]) -> DeliveryTrace {
        let period = Dur(*ms.last().expect("validated: not empty") as u64 * NS_PER_MS);
        DeliveryTrace { ms: ms.into(), period, cycle: 0, next: 0, partial: None }
    }

    fn time_of(&self, cycle: u64, i: usize) -> Time {
        Time(cycle * self.period.0 + self.ms[i] as u64 * NS_PER_MS)
    }

    /// Move `next` to the first opportunity at or after `now`: a binary search within the
    /// repetition `now` falls in, so a long idle time costs no walk over what it wasted.
    fn skip_to(&mut self, now: Time) {
        if self.time_of(self.cycle, self.next) >= now {
            return;
        }
        let cycle = now.0 / self.period.0;
        let within = now.0 - cycle * self.period.0;
        let i = self.ms.partition_point(|&t| (t as u64 * NS_PER_MS) < within);
        (self.cycle, self.next) = if i == self.ms.len() { (cycle + 1, 0) } else { (cycle, i) };
    }

    /// Take the next opportunity; returns its time.
    fn take(&mut self) -> Time {
        let at = self.time_of(self.cycle, self.next);
        self.next += 1;
        if self.next == self.ms.len() {
            (self.cycle, self.next) = (self.cycle + 1, 0);
        }
        at
    }

    /// A packet of `size` bytes starts now: when its last byte goes.
    fn tx_end(&mut self, now: Time, size: Bytes) -> Time {
        let mut need = size.0 + TUN_HEADER_BYTES;
        if let Some((at, left)) = self.partial.take() {
            if at == now {
                if need <= left {
                    self.partial = Some((at, left - need));
                    return at;
                }
                need -= left;
            }
        }
        self.skip_to(now);
        loop {
            let at = self.take();
            if need <= OPPORTUNITY_BYTES {
                self.partial = Some((at, OPPORTUNITY_BYTES - need));
                return at;
            }
            need -= OPPORTUNITY_BYTES;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(ms: &[u32]) -> DeliveryTrace {
        let spec = CapacitySpec { opportunities_ms: Some(ms.to_vec()), rates: None, source: String::new() };
        spec.validate("capacity").unwrap();
        DeliveryTrace::new(ms)
    }

    const MS: u64 = 1_000_000;

    /// Hand-computed: opportunities at 1, 1, 3 ms repeating every 3 ms. Full-size packets
    /// queued at 0 take one opportunity each (1 ms, 1 ms, 3 ms, then 4, 4, 6 in the next
    /// repetition); small packets share one opportunity while it has bytes left; a packet
    /// larger than an opportunity spans two.
    #[test]
    fn opportunities_are_used_as_mahimahi_uses_them() {
        let mut t = trace(&[1, 1, 3]);
        let ends: Vec<u64> = (0..6).map(|_| t.tx_end(Time(0), Bytes(1500)).0 / MS).collect();
        // Each start is at the previous end, as a busy link's are.
        assert_eq!(ends, vec![1, 1, 3, 4, 4, 6]);
        let mut t = trace(&[1, 1, 3]);
        let mut now = Time(0);
        let mut ends = vec![];
        for _ in 0..60 {
            now = t.tx_end(now, Bytes(60));
            ends.push(now.0 / MS);
        }
        // 60-byte packets take 64 bytes each: the two opportunities at 1 ms carry 3008 bytes,
        // 47 packets exactly (the 24th spans them), and the one at 3 ms the next 13 of 23.
        assert_eq!(ends.iter().filter(|&&e| e == 1).count(), 47);
        assert_eq!(ends.iter().filter(|&&e| e == 3).count(), 13);
        let mut t = trace(&[1, 1, 3]);
        assert_eq!(t.tx_end(Time(0), Bytes(2000)), Time(MS), "2004 bytes: both opportunities at 1 ms");
        // 1004 bytes are left at 1 ms: a 1000-byte packet fits them exactly, one more byte
        // spans to the opportunity at 3 ms.
        assert_eq!(t.tx_end(Time(MS), Bytes(1000)), Time(MS));
        assert_eq!(t.tx_end(Time(MS), Bytes(1)), Time(3 * MS));
    }

    /// What an idle link does not use is lost: a packet that comes after an opportunity with
    /// bytes left waits for the next one; one that comes later still skips every opportunity
    /// it missed, in any later repetition.
    #[test]
    fn idle_opportunities_are_wasted() {
        let mut t = trace(&[1, 2, 5]);
        assert_eq!(t.tx_end(Time(0), Bytes(100)), Time(MS));
        assert_eq!(t.tx_end(Time(MS + 1), Bytes(100)), Time(2 * MS), "1 ms's leftover is gone");
        assert_eq!(t.tx_end(Time(5 * 1000 * MS + 3 * MS), Bytes(100)), Time(5000 * MS + 5 * MS));
        assert_eq!(t.tx_end(Time(5005 * MS), Bytes(1500)), Time(5006 * MS), "the next repetition");
    }

    /// One step is a fixed-rate link: every transmission time equals the `Serializer`'s, the
    /// remainder carried, over packets of mixed sizes sent back to back and after gaps.
    #[test]
    fn one_rate_step_is_a_fixed_link() {
        use crate::units::Serializer;
        let rate = BitRate(7_777_777);
        let mut fixed = Serializer::new(rate);
        let mut traced = RateTrace::new(&[(Dur::ZERO, rate)]);
        let mut now = Time(12_345);
        for i in 0..500u64 {
            let size = Bytes(40 + (i * 37) % 1460);
            let end = traced.tx_end(now, size);
            assert_eq!(end - now, fixed.next_tx_time(size), "packet {i}");
            now = if i % 3 == 0 { end + Dur(i * 1000) } else { end };
        }
    }

    /// Hand-computed: 8 Mbit/s until 1 ms, an outage until 2 ms, then 16 Mbit/s. A 1500-byte
    /// packet (12,000 bits) started at 0.5 ms sends 4,000 bits by 1 ms, waits out the outage,
    /// and sends the last 8,000 bits in 0.5 ms: it ends at 2.5 ms. The next, started then,
    /// takes 0.75 ms at 16 Mbit/s.
    #[test]
    fn a_transmission_spans_rate_changes_and_outages() {
        let ms = |m: u64| Dur(m * 1_000_000);
        let mut t =
            RateTrace::new(&[(Dur::ZERO, BitRate(8_000_000)), (ms(1), BitRate(0)), (ms(2), BitRate(16_000_000))]);
        let end = t.tx_end(Time(500_000), Bytes(1500));
        assert_eq!(end, Time(2_500_000));
        assert_eq!(t.tx_end(end, Bytes(1500)), Time(3_250_000));
        let mut t =
            RateTrace::new(&[(Dur::ZERO, BitRate(8_000_000)), (ms(1), BitRate(0)), (ms(2), BitRate(16_000_000))]);
        assert_eq!(t.tx_end(Time(1_200_000), Bytes(1500)), Time(2_750_000), "starts inside the outage");
    }

    #[test]
    fn bad_traces_are_refused() {
        for (ms, why) in
            [(vec![], "no delivery opportunities"), (vec![3, 2], "opportunity 2 at 2 ms"), (vec![0, 0], "nonzero time")]
        {
            let spec = CapacitySpec { opportunities_ms: Some(ms), rates: None, source: "up.trace".into() };
            let e = spec.validate("links[0].capacity").unwrap_err().to_string();
            assert!(e.contains(why) && e.contains("up.trace") && e.contains("opportunities_ms"), "{e}");
        }
        let s = |t: u64, r: u64| (Dur(t), BitRate(r));
        for (steps, why) in [
            (vec![], "no steps"),
            (vec![s(5, 1000)], "the rate from time 0"),
            (vec![s(0, 1000), s(0, 2000)], "step 2"),
            (vec![s(0, 1000), s(9, 0)], "must be positive"),
        ] {
            let spec = CapacitySpec { opportunities_ms: None, rates: Some(steps), source: String::new() };
            let e = spec.validate("links[0].capacity").unwrap_err().to_string();
            assert!(e.contains(why) && e.contains("capacity.rates"), "{e}");
        }
        let neither = CapacitySpec { opportunities_ms: None, rates: None, source: String::new() };
        assert!(neither.validate("capacity").unwrap_err().to_string().contains("give one of"));
    }
}
