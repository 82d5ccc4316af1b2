//! Holding sends by the bytes queued in the sender's own host (`tcp.small_queues`).
//!
//! `"linux"`: TCP Small Queues (Linux 3.6 on; `tcp_small_queue_check` in `tcp_output.c`). A
//! socket stops writing while more than `limit` bytes of it wait below it, where `limit` is
//! the larger of two packets and about a millisecond at its pacing rate
//! (`sk_pacing_rate >> sk_pacing_shift`), at most `tcp_limit_output_bytes` unless the socket
//! is paced; the free of one of its packets (`tcp_wfree`) wakes it to write again. A socket
//! with at most one segment unacknowledged always writes (`tcp_rtx_queue_empty_or_single_skb`).
//! The pacing rate of an unpaced Linux socket is still computed (`tcp_update_pacing_rate`):
//! cwnd × mss / srtt, doubled in slow start (below half of ssthresh) and raised by a fifth
//! after it.
//!
//! `"nic"`: an RDMA NIC, whose scheduler takes a queue pair's next packet only when the port
//! can send it (the HPCC authors' `RdmaEgressQueue`, Li et al., SIGCOMM 2019): no new send while
//! one of the sender's packets waits in the host's queue.
//!
//! Departures from Linux: a packet counts while it waits in the host's queues, not until its
//! transmission completes (no descriptor ring is modelled, and the one in serialization is
//! not counted), and by its size on the wire rather than its buffer's `truesize`; the limit is
//! not doubled for retransmissions (`tcp_xmit_retransmit_queue`'s factor).
//!
//! Part of `TcpSender`: it owns no state of its own; it reads the window, the RTT estimator
//! and the pacing rate, and reaches the host only through its `AgentCx`.

use super::super::config::SmallQueues;
use super::super::HEADERS;
use super::TcpSender;
use crate::transport::{AgentCx, Host};
use crate::units::Bytes;

/// Linux's `sk_pacing_shift` default (`sock_init_data`): the limit is 2^-10 s, about 1 ms, of
/// the pacing rate.
const PACING_SHIFT: u32 = 10;
/// Linux's `tcp_limit_output_bytes` default since 5.0 (`tcp_sk_init`: 16 × 65,536 bytes), the
/// cap for sockets nothing paces.
const LIMIT_OUTPUT_BYTES: u64 = 16 * 65_536;
/// `tcp_pacing_ss_ratio` and `tcp_pacing_ca_ratio`, in percent (Linux's defaults).
const PACING_SS_RATIO: u64 = 200;
const PACING_CA_RATIO: u64 = 120;

impl TcpSender {
    /// With `tcp.small_queues`, have the host count this sender's queued bytes.
    pub(super) fn count_host_queue(&self, cx: &mut AgentCx<impl Host>) {
        if !self.cfg.small_queues.is_off() {
            cx.count_host_queue();
        }
    }

    /// Whether the bytes queued in the host hold this send; if they do, the sender is woken
    /// when one of its packets leaves the queue (`on_host_room`).
    pub(super) fn host_queue_full(&self, cx: &mut AgentCx<impl Host>) -> bool {
        let limit = match self.cfg.small_queues {
            SmallQueues::Off => return false,
            SmallQueues::Nic => Bytes(0),
            SmallQueues::Linux if self.flight() <= self.w.mss => return false,
            SmallQueues::Linux => self.small_queue_limit(),
        };
        if cx.host_queued() <= limit {
            return false;
        }
        cx.wake_on_host_room();
        true
    }

    /// `tcp_small_queue_check`'s limit: two packets, or about 1 ms at the pacing rate, capped
    /// at `tcp_limit_output_bytes` unless the controller paces.
    fn small_queue_limit(&self) -> Bytes {
        let two_packets = 2 * (self.w.mss + (HEADERS + self.cfg.option_bytes()) as u64);
        let (rate_bytes_per_s, paced) = match self.pacing.model_pacer().and_then(|p| p.rate()) {
            Some(rate) => (rate.0 / 8, true),
            None => (self.linux_pacing_rate(), self.pacing.pacer.is_some()),
        };
        let limit = two_packets.max(rate_bytes_per_s >> PACING_SHIFT);
        Bytes(if paced { limit } else { limit.min(LIMIT_OUTPUT_BYTES) })
    }

    /// `tcp_update_pacing_rate` in bytes per second; before an RTT sample, unbounded (Linux's
    /// initial `sk_pacing_rate` is ~0).
    fn linux_pacing_rate(&self) -> u64 {
        let Some(srtt) = self.timing.rtt.srtt().filter(|d| !d.is_zero()) else { return u64::MAX };
        let ratio = if self.w.cwnd < self.w.ssthresh / 2 { PACING_SS_RATIO } else { PACING_CA_RATIO };
        let per_rtt = self.w.cwnd as u128 * ratio as u128 / 100;
        (per_rtt * 1_000_000_000 / srtt.0 as u128).min(u64::MAX as u128) as u64
    }
}
