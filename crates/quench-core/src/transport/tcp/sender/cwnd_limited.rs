//! When the window may grow (`tcp.cwnd_limited_growth`). A window that grows while the sender
//! does not fill it (an application that writes less, pacing, a host queue that holds the
//! sends) grows past anything the path has shown it can carry.
//!
//! `true`, Linux 2.4-2.6: `tcp_ack` calls `tcp_cong_avoid` only if `prior_in_flight >=
//! snd_cwnd`, the window full when the ACK came.
//!
//! `"linux"`, today's Linux (`tcp_is_cwnd_limited` and `tcp_cwnd_validate` in `tcp.h` and
//! `tcp_output.c`; every controller's `cong_avoid` returns at once without it): after each
//! round of output that sent something or was held by the window, the sender notes whether the
//! window held it (`is_cwnd_limited`, the in-flight at or over cwnd) and the most in flight,
//! kept per round trip (`cwnd_usage_seq`: a new round starts once snd_una reaches the snd_nxt
//! of the last note; within a round a note replaces the last only if the window held it, or,
//! while it had not, if more is in flight). The window may grow while the window held a send
//! in the round, or, in slow start, while it is under twice the most in flight.
//!
//! Departures from Linux: the note is taken by the output of new data only (in a SACK
//! recovery the recovery sets the window); RFC 2861's decay of an unused window after idle
//! (`tcp_cwnd_application_limited`) is not modelled.
//!
//! Part of `TcpSender`: the state below, read and written only here.

use super::super::config::CwndLimitedGrowth;
use super::TcpSender;

/// `tcp_cwnd_validate`'s record of how the window was used in the current round.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct CwndUse {
    /// The window held a send in this round (`is_cwnd_limited`).
    limited: bool,
    /// The most bytes in flight in this round (`max_packets_out`).
    max_out: u64,
    /// The round ends when snd_una reaches this (`cwnd_usage_seq`).
    usage_seq: u64,
}

impl TcpSender {
    /// A round of output ended having sent `sent` segments: note how the window was used.
    pub(super) fn note_window_use(&mut self, sent: u32) {
        let Some(u) = self.cwnd_use.as_deref_mut() else { return };
        let out = self.send.snd_nxt - self.send.snd_una;
        let limited = out + self.w.mss > self.w.cwnd;
        if sent == 0 && !limited {
            return;
        }
        let round_over = self.send.snd_una >= u.usage_seq;
        if round_over || limited || (!u.limited && out > u.max_out) {
            *u = CwndUse { limited, max_out: out, usage_seq: self.send.snd_nxt };
        }
    }

    /// Whether an ACK may grow the window; `window_was_full`: it was when the ACK came.
    pub(super) fn may_grow(&self, window_was_full: bool) -> bool {
        match self.cfg.cwnd_limited_growth {
            CwndLimitedGrowth::Off => true,
            CwndLimitedGrowth::FullAtAck => window_was_full,
            CwndLimitedGrowth::Linux => self
                .cwnd_use
                .as_deref()
                .is_some_and(|u| u.limited || (self.w.cwnd < self.w.ssthresh && self.w.cwnd < 2 * u.max_out)),
        }
    }
}
