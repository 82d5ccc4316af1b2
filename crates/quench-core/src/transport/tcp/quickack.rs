//! Linux's quick-ack mode (`delayed_ack.quick_ack`; net/ipv4/tcp_input.c): while a count of
//! quick ACKs remains, the receiver ACKs every data segment at once instead of every second
//! one, so that a sender whose window is small (the first round trips, a restart after idle,
//! a window just cut by a CE mark) is not held by the delayed-ACK timer.
//!
//! Modelled, as Linux 6.x does it:
//! - the count an episode grants (`tcp_incr_quickack`): rcv_wnd / (2 · rcv_mss), 2 when that
//!   is 0, at most the episode's ceiling; it only ever raises the count left;
//! - the first data segment of the connection starts an episode of up to `TCP_MAX_QUICKACKS`
//!   = 16 (`tcp_event_data_recv` when `icsk_ack.ato` is still 0);
//! - in-order data after the receiver heard nothing for longer than its RTO starts one of up
//!   to 16 (`tcp_event_data_recv`: "Too long gap"); the receiver's RTO is the one Linux
//!   computes from the SYN-ACK's round trip (`tcp_synack_rtt_meas`, `tcp_rtt_estimator`'s
//!   first sample: rtt + max(2·rtt, rto.min), at most rto.max), rto.initial when the SYN-ACK
//!   was sent more than once (Linux takes no sample then);
//! - duplicate data starts one of up to 16 (`tcp_data_queue`: "A retransmit");
//! - a CE mark while no CE echo is pending (`TCP_ECN_DEMAND_CWR` clear), and a Not-ECT
//!   segment after ECT ones (a retransmission), start one of up to 2 (`tcp_ecn_check_ce`);
//! - every ACK sent uses one (`tcp_dec_quickack_mode` from `tcp_event_ack_sent`).
//!
//! Not modelled: the adaptation of the delayed-ACK timeout to the arrival gaps
//! (`icsk_ack.ato` between `TCP_ATO_MIN` and the RTO; the timeout stays `delayed_ack.timeout`),
//! pingpong mode (an interactive peer whose ACKs ride on its own data: quench's receivers send
//! none), the route's `quickack` metric, the immediate ACK for a segment with CWR, and SACK
//! compression (`tcp_comp_sack_delay_ns`) of the ACKs for out-of-order data.
//!
//! Owns the quick-ack count and the timing it needs; the receiver asks it whether to ACK now
//! and tells it what arrived and what it sent. It sends nothing and arms no timer.

use super::config::TcpConfig;
use crate::units::{Dur, Time};

/// Linux `TCP_MAX_QUICKACKS` (include/net/tcp.h): the ceiling of an episode at the start of a
/// connection, after idle and after duplicate data.
pub(crate) const MAX_QUICKACKS: u32 = 16;
/// The ceiling `tcp_ecn_check_ce` passes for a CE mark or a Not-ECT retransmission.
pub(crate) const ECN_QUICKACKS: u32 = 2;

#[derive(Clone, Debug)]
pub(crate) struct QuickAck {
    enabled: bool,
    /// Quick ACKs left (`icsk_ack.quick`).
    left: u32,
    /// rcv_wnd / (2 · rcv_mss), or 2 when that is 0: what an episode grants before its ceiling.
    window_quota: u32,
    /// When in-order data last arrived (`icsk_ack.lrcvtime`); None before the first.
    last_data: Option<Time>,
    /// The receiver's RTO: a longer gap between in-order segments starts an episode.
    idle_limit: Dur,
    /// The latest SYN-ACK's send time and how many were sent, for the RTO's sample.
    syn_ack_sent: Option<Time>,
    syn_acks: u32,
    rto: (Dur, Dur, Dur),
}

impl QuickAck {
    pub fn new(cfg: &TcpConfig) -> Self {
        let quota = cfg.receive_window.0 / (2 * cfg.segment_payload() as u64).max(1);
        QuickAck {
            enabled: cfg.delayed_ack.enabled && cfg.delayed_ack.quick_ack,
            left: 0,
            window_quota: if quota == 0 { 2 } else { quota.min(u32::MAX as u64) as u32 },
            last_data: None,
            idle_limit: cfg.rto.initial,
            syn_ack_sent: None,
            syn_acks: 0,
            rto: (cfg.rto.min, cfg.rto.max, cfg.rto.initial),
        }
    }

    /// ACK the segment just received at once.
    #[inline]
    pub fn active(&self) -> bool {
        self.left > 0
    }

    /// An ACK left: one quick ACK fewer.
    #[inline]
    pub fn ack_sent(&mut self) {
        self.left = self.left.saturating_sub(1);
    }

    /// `tcp_incr_quickack`: raise the count to what the window grants, at most `ceiling`.
    pub fn enter(&mut self, ceiling: u32) {
        if self.enabled {
            self.left = self.left.max(self.window_quota.min(ceiling));
        }
    }

    pub fn syn_ack_sent(&mut self, now: Time) {
        self.syn_ack_sent = Some(now);
        self.syn_acks += 1;
    }

    /// In-order data arrived at `now` (`tcp_event_data_recv`).
    pub fn on_in_order_data(&mut self, now: Time) {
        if !self.enabled {
            return;
        }
        match self.last_data {
            None => {
                self.idle_limit = self.rto_from_handshake(now);
                self.enter(MAX_QUICKACKS);
            }
            Some(last) if now.saturating_sub(last) > self.idle_limit => self.enter(MAX_QUICKACKS),
            Some(_) => {}
        }
        self.last_data = Some(now);
    }

    /// The RTO Linux's passive end has after the handshake: the first RTT sample `r` gives
    /// srtt = r and rttvar = max(r/2 · 4, rto_min), so rto = r + max(2r, rto.min), at most
    /// rto.max; no sample (and rto.initial) when the SYN-ACK was retransmitted.
    fn rto_from_handshake(&self, now: Time) -> Dur {
        let (min, max, initial) = self.rto;
        match self.syn_ack_sent {
            Some(sent) if self.syn_acks == 1 => {
                let rtt = now.saturating_sub(sent);
                (rtt + (rtt + rtt).max(min)).min(max)
            }
            _ => initial,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::tcp::profile::Profile;
    use crate::units::Bytes;

    fn linux() -> QuickAck {
        QuickAck::new(&Profile::Linux.tcp())
    }

    /// 6 MiB / (2 · 1448) = 2172 quick ACKs by the window: the ceilings decide (16, 2).
    #[test]
    fn the_first_segment_grants_sixteen() {
        let mut q = linux();
        q.syn_ack_sent(Time::ZERO);
        q.on_in_order_data(Time::ZERO + Dur::from_millis(10));
        let mut quick = 0;
        while q.active() {
            q.ack_sent();
            quick += 1;
        }
        assert_eq!(quick, 16);
        q.enter(ECN_QUICKACKS);
        assert_eq!(q.left, 2);
    }

    /// A 4-segment window: 4 · 1448 / (2 · 1448) = 2 by the window, whatever the ceiling; a
    /// window under two segments grants 2 (`quickacks == 0`).
    #[test]
    fn a_small_window_grants_less() {
        let cfg = TcpConfig { receive_window: Bytes(4 * 1448), ..Profile::Linux.tcp() };
        let mut q = QuickAck::new(&cfg);
        q.enter(MAX_QUICKACKS);
        assert_eq!(q.left, 2);
        let cfg = TcpConfig { receive_window: Bytes(1448), ..Profile::Linux.tcp() };
        assert_eq!(QuickAck::new(&cfg).window_quota, 2);
    }

    /// A 10 ms handshake: RTO = 10 + max(20, 200) = 210 ms. A gap of 210 ms keeps delayed
    /// ACKs; one of 211 ms starts a new episode.
    #[test]
    fn idle_longer_than_the_rto_restarts_quick_acks() {
        let mut q = linux();
        q.syn_ack_sent(Time::ZERO);
        let t0 = Time::ZERO + Dur::from_millis(10);
        q.on_in_order_data(t0);
        q.left = 0;
        q.on_in_order_data(t0 + Dur::from_millis(210));
        assert!(!q.active());
        q.on_in_order_data(t0 + Dur::from_millis(421));
        assert_eq!(q.left, 16);
    }

    /// The rfc and ns3 profiles have no quick-ack: nothing starts an episode.
    #[test]
    fn off_without_the_setting() {
        for profile in [Profile::Rfc, Profile::Ns3] {
            let mut q = QuickAck::new(&profile.tcp());
            q.on_in_order_data(Time::ZERO);
            q.enter(MAX_QUICKACKS);
            assert!(!q.active());
        }
    }
}
