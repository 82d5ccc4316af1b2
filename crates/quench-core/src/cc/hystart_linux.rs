//! Linux's HyStart (Ha and Rhee, "Taming the elephants: new TCP slow start", Computer Networks
//! 55(9), 2011; net/ipv4/tcp_cubic.c with its defaults `hystart = 1`, `hystart_detect = 3`,
//! `hystart_low_window = 16`, `hystart_ack_delta_us = 2000`; docs/mechanisms.md#hystart):
//! slow start ends (ssthresh = cwnd) at the first ACK that either detector fires on.
//!
//! - Rounds (`bictcp_hystart_reset`, `hystart_update`): a round starts at the first ACK that
//!   acknowledges past the round's end (`after(snd_una, end_seq)`), and ends where what was
//!   sent by then is (end_seq = snd_nxt); the ACK that starts a round counts in it.
//! - The detectors look only while cwnd is at least 16 segments (`hystart_low_window`); rounds
//!   advance below it.
//! - ACK train: ACKs that follow each other within 2 ms (`hystart_ack_delta_us`) from the
//!   round's first one; the train ends at the first wider gap. Slow start ends at a train ACK
//!   more than `(delay_min + cushion)/2` after the round began (a train that long means the
//!   window already fills the path; the halving is Linux's for a connection that does not
//!   pace, the cushion below).
//! - Delay: the minimum RTT of the round's samples; from the 9th sample on (the first 8,
//!   HYSTART_MIN_SAMPLES, only gather), slow start ends once that minimum exceeds `delay_min +
//!   clamp(delay_min/8, 4 ms, 16 ms)` (HYSTART_DELAY_MIN/MAX of current kernels).
//! - `delay_min` is the connection's smallest RTT sample, which CUBIC keeps for both HyStart and
//!   its window (`cubic_linux::DelayMin`, `cubictcp_acked`): samples in the first second of an
//!   epoch are left out, and a zero sample counts as 1 µs.
//! - Once it fires, HyStart is done until a retransmission timeout (`cubictcp_state` on
//!   TCP_CA_Loss resets it, and CUBIC forgets `delay_min`); other congestion events leave it
//!   as is.
//!
//! - The ACK train's threshold carries Linux's cushion for TSO and GRO (`hystart_ack_delay`,
//!   since Linux 5.7): `(delay_min + min(1 ms, 4 · gso_max_size / pacing_rate)) / 2`, with the
//!   pacing rate Linux keeps for every connection, paced or not (`tcp_update_pacing_rate`:
//!   `mss · max(cwnd, packets_out) / srtt`, doubled while cwnd is under half of ssthresh, 1.2
//!   times after), as the previous ACK left it. quench sends no TSO bursts and its receivers
//!   coalesce nothing, but a kernel's threshold has the cushion all the same: on a path of a
//!   few microseconds it is most of the threshold (10 us of delay_min, 10 Gb/s: 5 us without,
//!   about 30 us with).
//!
//! Left out: the threshold stays halved whether or not the flow paces (Linux halves it only
//! without sch_fq's pacing, `SK_PACING_NONE`; quench's CUBIC does not pace). After a timeout
//! the round in progress has no ACK train (Linux's starts at the timeout, which no ACK follows
//! within 2 ms). Times are in nanoseconds where Linux counts microseconds.
//! Owns the rounds, the train and the round's delay samples; it changes no window, but tells
//! CUBIC when slow start ends. Must not touch: the sender, `delay_min` (CUBIC's).

use super::{AckSample, Window};
use crate::units::{Dur, Time};

/// `hystart_low_window`: the detectors look only at windows of at least 16 segments.
const LOW_WINDOW_SEGMENTS: u64 = 16;
/// `hystart_ack_delta_us`: ACKs at most 2 ms apart form a train.
const ACK_DELTA: Dur = Dur::from_micros(2000);
/// `threshold >>= 1` for a connection that does not pace: the train must span delay_min/2.
const ACK_TRAIN_DIVISOR: u64 = 2;
/// `hystart_ack_delay`'s cap on the cushion: `USEC_PER_MSEC`.
const ACK_DELAY_CAP: Dur = Dur::from_millis(1);
/// `hystart_ack_delay`: room for 4 GSO packets at the pacing rate ("at least one TSO packet
/// being sent and received by GRO, and another one in qdisc layer", times 2 because the rate
/// is doubled in slow start).
const ACK_DELAY_GSO_PACKETS: f64 = 4.0;
/// `sk_gso_max_size` of a TCP socket over IPv4 on a current kernel's default device:
/// `gso_ipv4_max_size` (GSO_LEGACY_MAX_SIZE, 65,536) less `MAX_TCP_HEADER + 1`
/// (`sk_dst_gso_max_size`, net/core/sock.c), where MAX_TCP_HEADER = L1_CACHE_ALIGN(128 +
/// MAX_HEADER) = 320 for a distribution's x86-64 build (LL_MAX_HEADER 128, tunnels on: 176).
const GSO_MAX_SIZE_BYTES: f64 = 65_215.0;
/// `sysctl_tcp_pacing_ss_ratio` and `sysctl_tcp_pacing_ca_ratio` (200 % and 120 %): the
/// pacing rate over cwnd / srtt while cwnd is under half of ssthresh, and after.
const PACING_SS_RATIO: f64 = 2.0;
const PACING_CA_RATIO: f64 = 1.2;
/// HYSTART_MIN_SAMPLES: samples a round gathers before its minimum is compared.
const MIN_SAMPLES: u8 = 8;
/// HYSTART_DELAY_MIN and HYSTART_DELAY_MAX (4000U and 16000U µs): the delay threshold's bounds.
const DELAY_THRESH_MIN: Dur = Dur::from_millis(4);
const DELAY_THRESH_MAX: Dur = Dur::from_millis(16);
/// `delay_min >> 3`: the delay threshold is an eighth of the minimum RTT, within its bounds.
const DELAY_THRESH_DIVISOR: u64 = 8;

/// Which detector ended slow start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    AckTrain,
    Delay,
}

#[derive(Clone, Debug)]
pub struct LinuxHyStart {
    /// Slow start's end was found (Linux's `found`): no more detection until a timeout.
    found: Option<Exit>,
    /// Bytes between the round's end and snd_una (Linux's `end_seq − snd_una`): negative once
    /// an ACK has passed the end.
    to_round_end: i64,
    round_start: Option<Time>,
    /// The train's last ACK; None when the round has no train.
    last_ack: Option<Time>,
    /// The round's minimum RTT so far (Linux's `curr_rtt`).
    round_min: Option<Dur>,
    samples: u8,
    /// The smoothed RTT after the previous ACK, from which Linux's pacing rate was computed.
    srtt_before: Option<Dur>,
}

impl Default for LinuxHyStart {
    /// As `cubictcp_init` leaves it: end_seq at snd_nxt before any data, so that the first ACK
    /// of data starts the first round.
    fn default() -> Self {
        LinuxHyStart {
            found: None,
            to_round_end: -1,
            round_start: None,
            last_ack: None,
            round_min: None,
            samples: 0,
            srtt_before: None,
        }
    }
}

impl LinuxHyStart {
    /// The detector that ended slow start, if one has.
    #[cfg(test)]
    pub fn found(&self) -> Option<Exit> {
        self.found
    }

    /// One ACK of new data, with the delay sample `DelayMin` took from it (None when it took
    /// none) and the `delay_min` after it. True when this ACK ends slow start: the caller sets
    /// ssthresh = cwnd (before growing).
    pub fn on_ack(&mut self, s: &AckSample, w: &Window, delay: Option<Dur>, delay_min: Option<Dur>) -> bool {
        let srtt_before = std::mem::replace(&mut self.srtt_before, s.srtt);
        self.to_round_end -= s.acked as i64;
        let (Some(delay), Some(delay_min)) = (delay, delay_min) else { return false };
        if self.found.is_some() || w.cwnd >= w.ssthresh {
            return false;
        }
        self.found = self.update(s.now, delay, delay_min, w, srtt_before);
        self.found.is_some()
    }

    /// A retransmission timeout (`cubictcp_state` on TCP_CA_Loss): HyStart starts over, a new
    /// round ending at what is in flight now, with no ACK train.
    pub fn on_timeout(&mut self, flight: u64) {
        let srtt_before = self.srtt_before;
        *self = LinuxHyStart { to_round_end: flight as i64, srtt_before, ..LinuxHyStart::default() };
    }

    /// `hystart_update`: the round's bookkeeping, then both detectors.
    fn update(&mut self, now: Time, delay: Dur, delay_min: Dur, w: &Window, srtt_before: Option<Dur>) -> Option<Exit> {
        if self.to_round_end < 0 {
            self.start_round(now, w.flight);
        }
        if w.cwnd < LOW_WINDOW_SEGMENTS * w.mss {
            return None;
        }
        let train = self.ack_train(now, delay_min, ack_delay(w, srtt_before));
        let delay = self.delay_increase(delay, delay_min);
        if train {
            Some(Exit::AckTrain)
        } else if delay {
            Some(Exit::Delay)
        } else {
            None
        }
    }

    /// `bictcp_hystart_reset`: the round ends where what is sent now is acknowledged.
    fn start_round(&mut self, now: Time, flight: u64) {
        self.to_round_end = flight as i64;
        self.round_start = Some(now);
        self.last_ack = Some(now);
        self.round_min = None;
        self.samples = 0;
    }

    /// The ACK-train detector: true when the train spans more than (delay_min + the
    /// cushion)/2.
    fn ack_train(&mut self, now: Time, delay_min: Dur, cushion: Dur) -> bool {
        let (Some(last), Some(start)) = (self.last_ack, self.round_start) else {
            return false;
        };
        if now.saturating_sub(last) > ACK_DELTA {
            return false;
        }
        self.last_ack = Some(now);
        now.saturating_sub(start) > Dur((delay_min + cushion).0 / ACK_TRAIN_DIVISOR)
    }

    /// The delay detector: true when the round's minimum, after 8 samples, exceeds delay_min
    /// by the threshold.
    fn delay_increase(&mut self, delay: Dur, delay_min: Dur) -> bool {
        let round_min = self.round_min.map_or(delay, |m| m.min(delay));
        self.round_min = Some(round_min);
        if self.samples < MIN_SAMPLES {
            self.samples += 1;
            return false;
        }
        let threshold = Dur(delay_min.0 / DELAY_THRESH_DIVISOR).clamp(DELAY_THRESH_MIN, DELAY_THRESH_MAX);
        round_min > delay_min + threshold
    }
}

/// `hystart_ack_delay`: the time 4 GSO packets take at the pacing rate Linux computed after
/// the previous ACK (`tcp_update_pacing_rate`, from `srtt_before` and this window, which the
/// previous ACK left), at most 1 ms; none before the first RTT sample (Linux's rate is then
/// not divided by an RTT, and the cushion rounds to nothing).
fn ack_delay(w: &Window, srtt_before: Option<Dur>) -> Dur {
    let Some(srtt) = srtt_before.filter(|d| d.0 > 0) else { return Dur(0) };
    let ratio = if w.cwnd < w.ssthresh / 2 { PACING_SS_RATIO } else { PACING_CA_RATIO };
    let rate = w.mss as f64 * (w.cwnd.max(w.flight) / w.mss.max(1)) as f64 * ratio / srtt.as_secs_f64();
    let cushion = Dur::from_secs_f64(ACK_DELAY_GSO_PACKETS * GSO_MAX_SIZE_BYTES / rate);
    cushion.min(ACK_DELAY_CAP)
}

#[cfg(test)]
mod tests {
    use super::super::cubic_linux::DelayMin;
    use super::*;

    /// HyStart with CUBIC's `delay_min` beside it, as CUBIC feeds it.
    #[derive(Default)]
    struct Linux {
        hystart: LinuxHyStart,
        delay_min: DelayMin,
    }

    impl Linux {
        fn on_ack(&mut self, s: &AckSample, w: &Window, epoch_start: Option<Time>) -> bool {
            let delay = self.delay_min.on_ack(s, epoch_start);
            self.hystart.on_ack(s, w, delay, self.delay_min.get())
        }
        fn found(&self) -> Option<Exit> {
            self.hystart.found()
        }
    }

    const MSS: u64 = 1000;

    fn ack(at_us: u64, rtt_us: u64, acked_segments: u64) -> AckSample<'static> {
        AckSample {
            now: Time(at_us * 1000),
            acked: acked_segments * MSS,
            rtt: Some(Dur::from_micros(rtt_us)),
            srtt: None,
            ece_bytes: 0,
            ack_delay: None,
            rate: None,
            telemetry: None,
        }
    }

    fn window(cwnd: u64, flight: u64) -> Window {
        Window { cwnd: cwnd * MSS, ssthresh: u64::MAX, mss: MSS, flight: flight * MSS, peer_window: u64::MAX }
    }

    /// Below 16 segments nothing fires, however long the train: 10 ACKs 1 ms apart over a
    /// 4 ms minimum RTT span 9 ms > 2 ms.
    #[test]
    fn nothing_below_the_low_window() {
        let mut h = Linux::default();
        for i in 0..10 {
            assert!(!h.on_ack(&ack(1000 * i, 4000, 1), &window(15, 15), None));
        }
        assert_eq!(h.found(), None);
    }

    /// A hand trace of tcp_cubic.c's ACK train: delay_min 10 ms (every sample 10 ms, so the
    /// delay detector stays quiet), cwnd 20. The first ACK (t = 0) starts the round; ACKs
    /// follow every 1 ms (≤ 2 ms: the train goes on); the threshold is 10/2 = 5 ms, and
    /// `now − round_start > 5 ms` first holds at t = 6 ms, the 7th ACK.
    #[test]
    fn an_ack_train_longer_than_half_the_minimum_rtt_ends_slow_start() {
        let mut h = Linux::default();
        let w = window(20, 20);
        let fired: Vec<bool> = (0..8).map(|i| h.on_ack(&ack(1000 * i, 10_000, 1), &w, None)).collect();
        assert_eq!(fired, [false, false, false, false, false, false, true, false]);
        assert_eq!(h.found(), Some(Exit::AckTrain));
    }

    /// Linux's cushion for TSO/GRO by hand (`hystart_ack_delay`), on a datacenter path: every
    /// RTT sample and srtt 10 us, cwnd 20 segments of 1000 bytes, ACKs 2 us apart. The pacing
    /// rate after each ACK is 1000 · 20 · 200 % / 10 us = 4 GB/s, so the cushion is
    /// 4 · 65,215 B / 4 GB/s = 65.215 us and the threshold (10 + 65.215) / 2 = 37.6 us: the ACK
    /// at 38 us fires, where delay_min/2 alone fired at 6 us. A window over half of
    /// ssthresh paces at 120 %: 2.4 GB/s, a cushion of 108.69 us, a threshold of 59.3 us, the
    /// ACK at 60 us. On a 10 ms path the cushion is capped at 1 ms: 5.5 ms.
    #[test]
    fn the_train_threshold_carries_linuxs_tso_cushion() {
        let first_firing_us = |rtt_us: u64, spacing_us: u64, ssthresh_segments: u64| {
            let mut h = Linux::default();
            let w = Window { ssthresh: ssthresh_segments.saturating_mul(MSS), ..window(20, 20) };
            (0..10_000u64)
                .map(|i| i * spacing_us)
                .find(|&t| {
                    // ACKs of nothing new keep the first round open: the train alone decides.
                    let s = AckSample { srtt: Some(Dur::from_micros(rtt_us)), ..ack(t, rtt_us, 0) };
                    h.on_ack(&s, &w, None)
                })
                .expect("the train fires")
        };
        assert_eq!(first_firing_us(10, 2, u64::MAX), 38);
        assert_eq!(first_firing_us(10, 2, 30), 60);
        assert_eq!(first_firing_us(10_000, 500, u64::MAX), 6_000);
        assert_eq!(ack_delay(&window(20, 20), None), Dur(0), "no RTT yet: no cushion");
    }

    /// A gap wider than 2 ms ends the train for the rest of the round: ACKs at 0, 1, 4 (gap
    /// 3 ms), 5, 6, 7 ms never fire though they pass 5 ms; the next round starts a new train.
    #[test]
    fn a_gap_breaks_the_train_until_the_next_round() {
        let mut h = Linux::default();
        let w = window(20, 6);
        for at in [0, 1000, 4000, 5000, 6000, 7000] {
            assert!(!h.on_ack(&ack(at, 10_000, 1), &w, None), "{at}");
        }
        // The round began with 6 segments in flight after its first ACK: the 6 ACKs above
        // acknowledged 5 of them; the 7th (the 6th of the round's data) leaves it at 0, the
        // 8th passes the end and starts the next round at t = 20 ms.
        assert!(!h.on_ack(&ack(19_000, 10_000, 1), &w, None));
        let fired: Vec<bool> = (0..7).map(|i| h.on_ack(&ack(20_000 + 1000 * i, 10_000, 1), &w, None)).collect();
        assert_eq!(fired, [false, false, false, false, false, false, true]);
    }

    /// A hand trace of the delay detector: round 1 sets delay_min = 40 ms (ACKs 5 ms apart:
    /// no train). Threshold clamp(40/8, 4, 16) = 5 ms: a round minimum above 45 ms fires.
    /// Round 2's samples are 46 ms: the first 8 only gather (sample_cnt 0 → 8); the 9th
    /// compares min 46 > 45 and fires; ssthresh = cwnd is the caller's.
    #[test]
    fn a_round_minimum_past_the_threshold_ends_slow_start_at_the_ninth_sample() {
        let mut h = Linux::default();
        let w = window(20, 10);
        let mut t = 0;
        for _ in 0..11 {
            assert!(!h.on_ack(&ack(t, 40_000, 1), &w, None));
            t += 5000;
        }
        let fired: Vec<bool> = (0..10)
            .map(|_| {
                t += 5000;
                h.on_ack(&ack(t, 46_000, 1), &w, None)
            })
            .collect();
        assert_eq!(fired, [false, false, false, false, false, false, false, false, true, false]);
        assert_eq!(h.found(), Some(Exit::Delay));
    }

    /// 45 ms is not above 40 + 5: strict comparison, as Linux's `>`; and a 4 ms floor for small
    /// RTTs (delay_min 8 ms: 8/8 = 1 → 4 ms, so 12 ms does not fire, 12.001 ms does).
    #[test]
    fn the_threshold_is_strict_and_clamped() {
        for (delay_min_us, round_us, fires) in
            [(40_000, 45_000, false), (8_000, 12_000, false), (8_000, 12_001, true), (200_000, 216_001, true)]
        {
            let mut h = Linux::default();
            let w = window(20, 10);
            let mut t = 0;
            for _ in 0..11 {
                h.on_ack(&ack(t, delay_min_us, 1), &w, None);
                t += 5000;
            }
            let any = (0..10).any(|_| {
                t += 5000;
                h.on_ack(&ack(t, round_us, 1), &w, None)
            });
            assert_eq!(any, fires, "delay_min {delay_min_us} µs, round {round_us} µs");
        }
    }

    /// After a timeout HyStart starts over: a new round ending at what is in flight, nothing
    /// found.
    #[test]
    fn a_timeout_starts_over() {
        let mut h = LinuxHyStart { found: Some(Exit::Delay), ..LinuxHyStart::default() };
        h.on_timeout(5 * MSS);
        assert_eq!((h.found(), h.to_round_end, h.round_start), (None, 5 * MSS as i64, None));
    }
}
