//! The sender's timers: one table indexed by timer kind (quinn's `TimerTable`), so that the
//! sender holds no timer by name and every kind is handled by the same four operations (arm,
//! cancel, ask, expire).
//!
//! Owns: the entries and the retransmission deadline a loss probe stands in for. Touches no
//! other sender state; which timer stands in for which is decided by the sender's rules
//! (`output`, `tlp.rs`, `local_drop.rs`) through these operations.
//!
//! One entry per kind, not Linux's single `icsk_retransmit_timer` multiplexed by
//! `icsk_pending` (RTO, loss probe and RACK reorder timeout on one entry, `tcp_rearm_rto`):
//! here the reorder timer runs beside the RTO (it is armed without cancelling it) and a loss
//! probe and the RTO are both armed between an ACK's re-arm and `tlp_schedule`. Expiries of
//! equal time rank by kind (`world.rs`), so one entry for the three would still change which
//! of them runs first at an instant, and so results.

use super::super::TcpTimer;
use crate::transport::{AgentCx, Host, Timer, TimerSlot};
use crate::units::Time;

/// The sender's timer kinds are the first [`SENDER_TIMERS`] of [`TcpTimer`]; each is its
/// own index into the table.
pub(crate) const SENDER_TIMERS: usize = 6;
const _: () = assert!(TcpTimer::DelayedAck as usize == SENDER_TIMERS, "the receiver's timer lies past the table");

#[derive(Clone, Copy, Debug, Default)]
pub(super) struct TimerTable {
    /// Invariant: entry `k` is armed only with kind `k`.
    slots: [TimerSlot; SENDER_TIMERS],
    /// When the retransmission timer last armed was due. A loss probe that cancels the RTO
    /// entry to stand in for it never waits past this (RFC 8985 section 7.2).
    rto_deadline: Time,
}

impl TimerTable {
    #[inline]
    fn slot(&mut self, kind: TcpTimer) -> &mut TimerSlot {
        debug_assert!((kind as usize) < SENDER_TIMERS, "{kind:?} is not a sender timer");
        &mut self.slots[kind as usize]
    }

    #[inline]
    pub(super) fn arm(&mut self, kind: TcpTimer, at: Time, cx: &mut AgentCx<impl Host>) {
        if kind == TcpTimer::Retransmit {
            self.rto_deadline = at;
        }
        self.slot(kind).arm(kind.kind(), at, cx);
    }

    #[inline]
    pub(super) fn cancel(&mut self, kind: TcpTimer) {
        self.slot(kind).cancel();
    }

    #[inline]
    pub(super) fn is_armed(&self, kind: TcpTimer) -> bool {
        self.slots[kind as usize].is_armed()
    }

    /// No entry is armed.
    pub(super) fn all_idle(&self) -> bool {
        self.slots.iter().all(|s| !s.is_armed())
    }

    /// The retransmission timeout is pending: armed itself, or stood in for by a loss probe.
    pub(super) fn rto_pending(&self) -> bool {
        self.is_armed(TcpTimer::Retransmit) || self.is_armed(TcpTimer::Probe)
    }

    pub(super) fn rto_deadline(&self) -> Time {
        self.rto_deadline
    }

    /// The kind that fires for an expiry, if one does (see `TimerSlot::on_expiry`).
    #[inline]
    pub(super) fn on_expiry(&mut self, timer: Timer, cx: &mut AgentCx<impl Host>) -> Option<TcpTimer> {
        let kind = TcpTimer::of(timer).filter(|k| (*k as usize) < SENDER_TIMERS)?;
        self.slot(kind).on_expiry(timer, cx).then_some(kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{AgentId, NodeId};
    use crate::trace::{RecordConfig, Recorder};
    use crate::transport::ScriptedHost;
    use crate::units::Dur;

    /// The sender's kinds are exactly the table's indices, each expiry finds its own entry,
    /// and the receiver's kind is none of them.
    #[test]
    fn every_sender_kind_is_its_own_entry() {
        let kinds: Vec<TcpTimer> = TcpTimer::ALL.into_iter().filter(|k| (*k as usize) < SENDER_TIMERS).collect();
        assert_eq!(kinds.len(), SENDER_TIMERS);
        assert!(!kinds.contains(&TcpTimer::DelayedAck));
        for k in TcpTimer::ALL {
            assert_eq!(TcpTimer::of(Timer { kind: k.kind(), generation: 0 }), Some(k));
        }
    }

    /// A loss probe stands in for the RTO: the RTO is still pending, due when it was armed.
    #[test]
    fn a_probe_keeps_the_rto_deadline() {
        let mut host = ScriptedHost::new(Recorder::new(RecordConfig::default(), vec![], 0));
        let mut cx = AgentCx::new(Time::ZERO, AgentId(0), NodeId(0), &mut host);
        let mut table = TimerTable::default();
        let rto = Time::ZERO + Dur::from_millis(300);
        table.arm(TcpTimer::Retransmit, rto, &mut cx);
        table.cancel(TcpTimer::Retransmit);
        table.arm(TcpTimer::Probe, Time::ZERO + Dur::from_millis(200), &mut cx);
        assert!(table.rto_pending());
        assert_eq!(table.rto_deadline(), rto);
        table.cancel(TcpTimer::Probe);
        assert!(!table.rto_pending() && table.all_idle());
    }
}
