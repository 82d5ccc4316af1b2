//! Pacing. `Pacer`: plain pacing, the second control the PFLDnet 2005 slides compare burstiness control with
//! (slide 27, "Pacing (in TCP)"): the window is spread evenly over the round-trip time, one
//! full segment every `srtt / cwnd`, instead of `cwnd − in_flight` segments at once per ACK.
//!
//! The gap is counted from the previous transmission, with no credit for idle time: a sender
//! that waited longer than the gap may send one segment at once, not a burst. Before the first
//! RTT sample nothing is held back (there is no srtt to spread over).
//!
//! `RatePacer`: pacing at the rate a model-based controller sets (BBR), as Linux's internal
//! pacing does it (`tcp_update_skb_after_send`, net/ipv4/tcp_output.c): each segment moves
//! the earliest departure of the next by its payload's time at the pacing rate, counted from
//! the later of now and the previous earliest departure, so idle time earns no burst. Linux
//! forgives up to half a gap of a late send ("OS jitter"); a simulated host is never late, so
//! that credit is left out.
//! Owns the earliest departure time. It only answers when a segment may leave: the sender arms the
//! timer.

use crate::units::{BitRate, Bytes, Dur, Time};

#[derive(Clone, Debug, Default)]
pub struct Pacer {
    /// When the previous segment left and the gap then in force.
    last: Option<(Time, Dur)>,
}

impl Pacer {
    /// The gap between segments for a window of `cwnd_packets` over `srtt`.
    pub fn gap(cwnd_packets: f64, srtt: Dur) -> Dur {
        Dur::from_secs_f64(srtt.as_secs_f64() / cwnd_packets.max(1.0))
    }

    /// None if a segment may leave at `now`, else when it may.
    pub fn hold_until(&self, now: Time) -> Option<Time> {
        let (at, gap) = self.last?;
        let next = at + gap;
        (now < next).then_some(next)
    }

    /// A segment left at `now`; the window and srtt then set the gap to the next one.
    pub fn on_send(&mut self, now: Time, cwnd_packets: f64, srtt: Option<Dur>) {
        self.last = srtt.filter(|d| !d.is_zero()).map(|s| (now, Self::gap(cwnd_packets, s)));
    }

    /// A timeout: the restart is not held back by the collapsed window's long gap.
    pub fn on_timeout(&mut self) {
        self.last = None;
    }
}

#[derive(Clone, Debug, Default)]
pub struct RatePacer {
    rate: Option<BitRate>,
    /// The earliest departure of the next segment.
    next: Option<Time>,
    /// The last paced segment: when its slot began and its payload.
    last: Option<(Time, u64)>,
}

impl RatePacer {
    /// The controller's pacing rate of payload; None or zero: no pacing.
    pub fn set_rate(&mut self, rate: Option<BitRate>) {
        self.rate = rate.filter(|r| r.0 > 0);
    }

    /// The controller's pacing rate, if it sets one.
    pub fn rate(&self) -> Option<BitRate> {
        self.rate
    }

    /// None if a segment may leave at `now`, else when it may.
    pub fn hold_until(&self, now: Time) -> Option<Time> {
        self.next.filter(|&n| now < n)
    }

    /// A segment of `payload` bytes left at `now`.
    pub fn on_send(&mut self, now: Time, payload: u64) {
        if let Some(rate) = self.rate {
            let from = self.next.map_or(now, |n| n.max(now));
            self.next = Some(from + rate.tx_time(Bytes(payload)));
            self.last = Some((from, payload));
        }
    }

    /// The rate changed between sends, by the controller's own clock: the next departure is
    /// the last segment's slot at the new rate, as an RDMA NIC recomputes a queue pair's next
    /// available time when its rate changes (`UpdateNextAvail` in the HPCC authors'
    /// `rdma-hw.cc`). An ACK's new rate applies from the next send instead.
    pub fn reschedule(&mut self, rate: Option<BitRate>) {
        self.set_rate(rate);
        if let (Some(rate), Some((from, payload))) = (self.rate, self.last) {
            self.next = Some(from + rate.tx_time(Bytes(payload)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_spaces_payloads_and_idle_time_earns_no_burst() {
        // 8 Mb/s: a 1000-byte payload takes 1 ms.
        let mut p = RatePacer::default();
        p.on_send(ms(0), 1000);
        assert_eq!(p.hold_until(ms(0)), None, "no rate, no pacing");
        p.set_rate(Some(BitRate(8_000_000)));
        p.on_send(ms(0), 1000);
        p.on_send(ms(0), 500); // sent anyway (e.g. a retransmission): the debt adds up
        assert_eq!(p.hold_until(ms(1)), Some(Time(1_500_000)));
        assert_eq!(p.hold_until(Time(1_500_000)), None);
        p.on_send(ms(10), 1000);
        assert_eq!(p.hold_until(ms(10)), Some(ms(11)));
        p.set_rate(Some(BitRate(0)));
        p.on_send(ms(20), 1000);
        assert_eq!(p.hold_until(ms(20)), None, "a zero rate does not pace");
    }

    /// At 8 Mb/s a 1000-byte payload sent at 10 ms holds the next until 11 ms; the rate
    /// doubled at 10.2 ms moves that to 10.5 ms, halved to 12 ms.
    #[test]
    fn a_rate_changed_between_sends_moves_the_next_departure() {
        let mut p = RatePacer::default();
        p.set_rate(Some(BitRate(8_000_000)));
        p.on_send(ms(10), 1000);
        p.reschedule(Some(BitRate(16_000_000)));
        assert_eq!(p.hold_until(Time(10_200_000)), Some(Time(10_500_000)));
        p.reschedule(Some(BitRate(4_000_000)));
        assert_eq!(p.hold_until(Time(10_200_000)), Some(ms(12)));
    }

    fn ms(x: u64) -> Time {
        Time(x * 1_000_000)
    }

    #[test]
    fn segments_are_spread_over_the_rtt() {
        // 100 ms srtt, 50 packets: one every 2 ms.
        let mut p = Pacer::default();
        assert_eq!(p.hold_until(ms(0)), None);
        p.on_send(ms(0), 50.0, Some(Dur::from_millis(100)));
        assert_eq!(p.hold_until(ms(1)), Some(ms(2)));
        assert_eq!(p.hold_until(ms(2)), None);
        // No credit for idle time: after a long pause, the next send sets a new 2 ms gap.
        p.on_send(ms(30), 50.0, Some(Dur::from_millis(100)));
        assert_eq!(p.hold_until(ms(30)), Some(ms(32)));
    }

    #[test]
    fn nothing_is_held_without_an_rtt_estimate_or_after_a_timeout() {
        let mut p = Pacer::default();
        p.on_send(ms(0), 10.0, None);
        assert_eq!(p.hold_until(ms(0)), None);
        p.on_send(ms(0), 10.0, Some(Dur::from_secs(1)));
        assert!(p.hold_until(ms(50)).is_some());
        p.on_timeout();
        assert_eq!(p.hold_until(ms(50)), None);
    }
}
