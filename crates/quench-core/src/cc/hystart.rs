//! HyStart++ (RFC 9406; docs/mechanisms.md#hystart): slow start that leaves early when the
//! round trip grows. Per round (a window of data, from the ACK that ends the previous round
//! until what was then outstanding is acknowledged), the minimum of the RTT samples is kept;
//! once a round has had 8 samples and its minimum exceeds the previous round's by
//! `clamp(last/8, 4 ms, 16 ms)`, the sender enters Conservative Slow Start (CSS), growing a
//! quarter as fast, for at most 5 rounds; a later round whose minimum falls back below the
//! minimum that started CSS resumes slow start (the increase was jitter); 5 rounds of CSS
//! end slow start (ssthresh = cwnd) and congestion avoidance begins (section 4.2).
//!
//! Choices the RFC leaves: the ACK that ends a round opens the next, and its RTT sample
//! counts in the new round; a round of CSS counts when it ends, so the round in which CSS
//! began is the first of the five; per-ACK growth stays the controller's byte-counting limit
//! (RFC 3465's L, the RFC's L = 8 for unpaced senders being an upper bound). HyStart++ runs in
//! the initial slow start only (section 4.3): after any congestion event the controller's
//! plain slow start applies. It needs an RTT sample on every ACK (section 4.2's
//! `currentRTT`): the flow must set `tcp.rtt_sampling = "every_ack"`, checked when it is built.
//! Owns the per-round RTT minima and the CSS count only: it changes no window, but tells CUBIC per
//! ACK how to grow (`SlowStartStep`).

use super::AckSample;
use crate::units::Dur;

/// Section 4.3: the bounds of the RTT increase threshold.
const MIN_RTT_THRESH: Dur = Dur(4_000_000);
const MAX_RTT_THRESH: Dur = Dur(16_000_000);
/// Section 4.3: the threshold is the last round's minimum RTT over this divisor.
const MIN_RTT_DIVISOR: u64 = 8;
/// Section 4.3: RTT samples a round needs before its minimum is compared.
const N_RTT_SAMPLE: u32 = 8;
/// Section 4.3: CSS grows by a quarter of slow start's increase.
pub const CSS_GROWTH_DIVISOR: u64 = 4;
/// Section 4.3: rounds of CSS before congestion avoidance.
const CSS_ROUNDS: u32 = 5;

/// What an ACK in slow start should do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlowStartStep {
    /// Grow by the bytes acknowledged (byte counting) divided by this.
    Grow { divisor: u64 },
    /// Slow start is over: ssthresh = cwnd, congestion avoidance from now on.
    EnterCongestionAvoidance,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    SlowStart,
    Css {
        baseline: Dur,
        rounds: u32,
    },
    /// Left for good (congestion avoidance reached, or a congestion event).
    Done,
}

#[derive(Clone, Debug)]
pub struct HyStart {
    phase: Phase,
    /// Bytes still to be acknowledged before the current round ends; None before the first ACK.
    round_left: Option<u64>,
    last_round_min: Option<Dur>,
    current_round_min: Option<Dur>,
    samples: u32,
    rounds: u64,
}

impl Default for HyStart {
    fn default() -> Self {
        HyStart {
            phase: Phase::SlowStart,
            round_left: None,
            last_round_min: None,
            current_round_min: None,
            samples: 0,
            rounds: 0,
        }
    }
}

impl HyStart {
    /// Rounds started so far (the first ACK starts round 1).
    #[cfg(test)]
    pub fn rounds(&self) -> u64 {
        self.rounds
    }

    pub fn in_css(&self) -> bool {
        matches!(self.phase, Phase::Css { .. })
    }

    /// A congestion event: the rest of the connection uses plain slow start.
    pub fn on_congestion(&mut self) {
        self.phase = Phase::Done;
    }

    /// An ACK of new data in slow start; `flight` is what is outstanding after it.
    pub fn on_ack(&mut self, s: &AckSample, flight: u64) -> SlowStartStep {
        if self.phase == Phase::Done {
            return SlowStartStep::Grow { divisor: 1 };
        }
        if self.round_ends(s.acked, flight) && self.count_css_round() {
            self.phase = Phase::Done;
            return SlowStartStep::EnterCongestionAvoidance;
        }
        if let Some(rtt) = s.rtt {
            self.current_round_min = Some(self.current_round_min.map_or(rtt, |m| m.min(rtt)));
            self.samples += 1;
        }
        self.check_delay();
        SlowStartStep::Grow { divisor: if self.in_css() { CSS_GROWTH_DIVISOR } else { 1 } }
    }

    /// Round bookkeeping (section 4.2: windowEnd = SND.NXT when a round starts); true when
    /// this ACK ends a round and opens the next.
    fn round_ends(&mut self, acked: u64, flight: u64) -> bool {
        let ends = self.round_left.is_none_or(|left| acked >= left);
        if ends {
            self.round_left = Some(flight);
            self.last_round_min = self.current_round_min.take();
            self.samples = 0;
            self.rounds += 1;
        } else if let Some(left) = self.round_left.as_mut() {
            *left -= acked;
        }
        ends
    }

    /// A round of CSS has ended; true once CSS_ROUNDS have.
    fn count_css_round(&mut self) -> bool {
        if let Phase::Css { rounds, .. } = &mut self.phase {
            *rounds += 1;
            return *rounds >= CSS_ROUNDS;
        }
        false
    }

    /// Section 4.2: enter CSS on an RTT increase, leave it if the increase was spurious.
    fn check_delay(&mut self) {
        if self.samples < N_RTT_SAMPLE {
            return;
        }
        let Some(current) = self.current_round_min else { return };
        match self.phase {
            Phase::SlowStart => {
                let Some(last) = self.last_round_min else { return };
                let thresh = Dur(last.0 / MIN_RTT_DIVISOR).clamp(MIN_RTT_THRESH, MAX_RTT_THRESH);
                if current >= last + thresh {
                    self.phase = Phase::Css { baseline: current, rounds: 0 };
                }
            }
            Phase::Css { baseline, .. } if current < baseline => self.phase = Phase::SlowStart,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Time;

    const MSS: u64 = 1000;

    fn ack(rtt_ms: u64) -> AckSample<'static> {
        AckSample {
            now: Time::ZERO,
            acked: MSS,
            rtt: Some(Dur::from_millis(rtt_ms)),
            srtt: None,
            ece_bytes: 0,
            ack_delay: None,
            rate: None,
            telemetry: None,
        }
    }

    /// A round of ACKs of one segment each with the given RTTs: the first ends the previous
    /// round (whose flight was its own length in segments) and opens this one.
    fn round(h: &mut HyStart, rtts: &[u64]) -> Vec<SlowStartStep> {
        let flight = rtts.len() as u64 * MSS;
        rtts.iter().map(|&r| h.on_ack(&ack(r), flight)).collect()
    }

    #[test]
    fn an_rtt_rise_beyond_the_threshold_enters_css_after_eight_samples() {
        let mut h = HyStart::default();
        // Round 1 sets the baseline minimum 100 ms; threshold clamp(100/8, 4, 16) = 12.5 ms.
        round(&mut h, &[100; 10]);
        // Round 2: a rise to 112 ms is under the threshold.
        round(&mut h, &[112; 10]);
        assert!(!h.in_css());
        // Round 3: last minimum 112 ms, threshold 14 ms; 126 ms reaches it at the 8th sample.
        let steps = round(&mut h, &[126; 10]);
        assert_eq!(steps[6], SlowStartStep::Grow { divisor: 1 });
        assert_eq!(steps[7], SlowStartStep::Grow { divisor: CSS_GROWTH_DIVISOR });
        assert!(h.in_css());
        assert_eq!(h.rounds(), 3);
    }

    #[test]
    fn five_rounds_of_css_end_slow_start_and_a_fall_resumes_it() {
        let mut h = HyStart::default();
        round(&mut h, &[100; 10]);
        round(&mut h, &[120; 10]); // threshold 12.5 ms: CSS from the 8th sample, baseline 120
        assert!(h.in_css());
        round(&mut h, &[119, 125, 125, 125, 125, 125, 125, 125]); // the first ACK ends round 2
        assert!(!h.in_css(), "a round minimum below the baseline resumes slow start");
        let mut h = HyStart::default();
        round(&mut h, &[100; 10]);
        round(&mut h, &[120; 10]);
        for _ in 0..3 {
            round(&mut h, &[130; 10]);
        }
        // CSS began in round 2; the first ACKs of rounds 3, 4, 5 and 6 ended four CSS rounds;
        // the one opening round 7 ends the fifth.
        let steps = round(&mut h, &[130; 10]);
        assert_eq!(steps[0], SlowStartStep::Grow { divisor: CSS_GROWTH_DIVISOR });
        let steps = round(&mut h, &[130; 2]);
        assert_eq!(steps[0], SlowStartStep::EnterCongestionAvoidance);
        assert_eq!(steps[1], SlowStartStep::Grow { divisor: 1 }, "done: plain growth (the caller is in CA)");
    }

    #[test]
    fn small_rtts_use_the_4_ms_floor_and_large_ones_the_16_ms_ceiling() {
        let mut h = HyStart::default();
        round(&mut h, &[10; 10]);
        round(&mut h, &[13; 10]); // 10/8 → 4 ms floor: 3 ms is not enough
        assert!(!h.in_css());
        round(&mut h, &[17; 10]);
        assert!(h.in_css(), "13 + 4");
        let mut h = HyStart::default();
        round(&mut h, &[400; 10]);
        round(&mut h, &[416; 10]); // 400/8 = 50 → 16 ms ceiling
        assert!(h.in_css());
    }

    #[test]
    fn rounds_without_eight_samples_never_decide() {
        let mut h = HyStart::default();
        round(&mut h, &[100; 7]);
        round(&mut h, &[200; 7]);
        assert!(!h.in_css());
    }
}
