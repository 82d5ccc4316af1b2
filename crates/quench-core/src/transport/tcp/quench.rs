//! How a TCP sender reacts to ICMP Source Quench (docs/mechanisms.md#source-quench-host-reactions):
//! - `ignore`: RFC 6633 (2012) deprecates Source Quench; modern stacks ignore it.
//! - `tahoe`: 4.3BSD-Tahoe `tcp_quench` (tcp_subr.c 7.6, June 1987): `cwnd = maxseg`,
//!   ssthresh unchanged, nothing retransmitted; the window regrows with ACKs.
//! - `bsd43`: the 1986 4.3BSD rule, `cwnd = max(0.8·(snd_nxt − snd_una), maxseg)`.
//! - `rfc1122`: RFC 1122 section 4.2.3.9, slow start "as if a retransmission timeout had
//!   occurred": ssthresh from the controller's timeout rule, `cwnd` = loss window, no
//!   retransmission and the timers untouched.
//! - `squid`: RFC 1016 SQuID: an inter-datagram delay D per destination. An increase event
//!   (one or more quenches within E = 2 s) sets `D = max(D + K, I)`, K = 20 ms, I = 75 ms; a
//!   decrease event (S = 1 s since the last decrease with data waiting) sets
//!   `D = max(D − J, 0)`, J = 1 ms. Our sender is always backlogged, so decreases are applied
//!   lazily when it next sends; D is kept per connection (every connection to the quenched
//!   destination is quenched together, so their delays evolve alike).
//!
//! Owns the SQuID delay; the other reactions are rules the sender applies to its own window. It
//! sends nothing and arms no timer.

use crate::units::{Dur, Time};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QuenchReaction {
    #[default]
    Ignore,
    Tahoe,
    Bsd43,
    Rfc1122,
    Squid,
}

/// 4.3BSD (1986): the window falls to 80% of the data outstanding.
pub const BSD43_OUTSTANDING_FRACTION: f64 = 0.8;

/// RFC 1016 constants.
pub const SQUID_K: Dur = Dur::from_millis(20);
pub const SQUID_I: Dur = Dur::from_millis(75);
pub const SQUID_J: Dur = Dur::from_millis(1);
pub const SQUID_E: Dur = Dur::from_secs(2);
pub const SQUID_S: Dur = Dur::from_secs(1);

/// RFC 1016's inter-datagram delay state.
#[derive(Clone, Debug, Default)]
pub struct Squid {
    delay: Dur,
    last_increase: Option<Time>,
    last_decrease: Time,
}

impl Squid {
    pub fn delay(&self) -> Dur {
        self.delay
    }

    /// A quench arrived at `now`.
    pub fn on_quench(&mut self, now: Time) {
        if self.last_increase.is_some_and(|t| now - t < SQUID_E) {
            return; // the same increase event
        }
        self.delay = (self.delay + SQUID_K).max(SQUID_I);
        self.last_increase = Some(now);
        self.last_decrease = now;
    }

    /// Apply the decrease events due by `now` (the sender has data waiting).
    pub fn decay(&mut self, now: Time) {
        let due = (now - self.last_decrease).0 / SQUID_S.0;
        if due > 0 {
            self.delay = Dur(self.delay.0.saturating_sub(due * SQUID_J.0));
            self.last_decrease += Dur(due * SQUID_S.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Time {
        Time::ZERO + Dur::from_millis(ms)
    }

    #[test]
    fn squid_follows_rfc1016_constants() {
        let mut s = Squid::default();
        s.on_quench(at(0));
        assert_eq!(s.delay(), SQUID_I); // max(0 + 20 ms, 75 ms)
        s.on_quench(at(1500)); // within E = 2 s of the last increase: same event
        assert_eq!(s.delay(), Dur::from_millis(75));
        s.on_quench(at(2000));
        assert_eq!(s.delay(), Dur::from_millis(95)); // 75 + 20
        s.decay(at(4500)); // two whole seconds since the increase: two decreases of 1 ms
        assert_eq!(s.delay(), Dur::from_millis(93));
        s.decay(at(4999));
        assert_eq!(s.delay(), Dur::from_millis(93));
        s.decay(at(5000));
        assert_eq!(s.delay(), Dur::from_millis(92));
        s.decay(at(5000 + 200_000)); // never below zero
        assert_eq!(s.delay(), Dur::ZERO);
    }
}
