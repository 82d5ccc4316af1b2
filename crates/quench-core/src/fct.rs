//! The ideal flow-completion time of a flow: the time the same flow takes alone on the idle
//! network, which the flows table divides a flow's response time by to give its slowdown (the
//! figure of the evaluations of HPCC, Li et al., SIGCOMM 2019; Homa, Montazeri et al., SIGCOMM
//! 2018; pFabric, Alizadeh et al., SIGCOMM 2013).
//!
//! Those papers take the ideal as the path's base RTT plus the flow's bytes at the line rate,
//! their completion being the sender's last ACK and their transports opening without a
//! handshake. quench's response time runs from the application's start to the receiver's last
//! byte (`receiver.rs`), and its TCP opens with a SYN and a SYN-ACK, so the ideal here is what
//! such a flow takes alone, packet by packet:
//!
//! - the handshake: the SYN's one-way delay over the forward path and the SYN-ACK's over the
//!   reverse path (propagation plus each packet's serialization at every hop): the base RTT
//!   of the path for header-only packets;
//! - the data: propagation over the forward path, the first segment's serialization at every
//!   hop (store and forward), then every further segment's at the path's slowest link (they
//!   follow the first back to back there).
//!
//! Every size is the wire size the transport sends (IP and TCP headers, the SYNs' options, the
//! timestamp option when on, each link's framing). The data term is exact when every hop has the same rate (a
//! generated fabric) or the slowest link is the last; otherwise a short last segment crosses
//! the links after the bottleneck faster than a full one, and the flow ends up to that
//! difference earlier. The path is the one the routing table gives (its first equal-cost next
//! hop); equal-cost paths of a generated fabric cross the same tiers, so the same rates and
//! delays.
//!
//! What this module owns: the ideal of each flow as built, from its transport's sizes and its
//! path's links. It reads links and flows; it changes neither, and nothing of a run.

use crate::link::Link;
use crate::packet::LinkId;
use crate::transport::ndp::NdpConfig;
use crate::transport::roce::RoceConfig;
use crate::transport::tcp::{TcpConfig, HEADERS};
use crate::transport::FlowSpec;

/// One hop as the ideal sees it.
#[derive(Clone, Copy, Debug)]
pub struct Hop {
    pub delay_s: f64,
    pub rate_bps: f64,
    /// Bytes the link adds to every packet on the wire (`framing_overhead`).
    pub framing: u64,
    /// Shortest time between two transmissions' starts (`min_packet_gap`).
    pub min_gap_s: f64,
}

impl Hop {
    pub fn of(link: &Link) -> Hop {
        Hop {
            delay_s: link.delay.as_secs_f64(),
            rate_bps: link.rate().0 as f64,
            framing: link.framing_overhead.0,
            min_gap_s: link.min_packet_gap().as_secs_f64(),
        }
    }

    /// Seconds this hop takes to transmit a `size`-byte packet, as `Link` does.
    pub fn tx_s(&self, size: u64) -> f64 {
        ((size + self.framing) as f64 * 8.0 / self.rate_bps).max(self.min_gap_s)
    }
}

/// Seconds a `size`-byte packet takes over `path` alone: propagation plus its serialization at
/// every hop.
pub fn one_way_s(path: &[Hop], size: u64) -> f64 {
    path.iter().map(|h| h.delay_s + h.tx_s(size)).sum()
}

/// The segments of a transfer: `count` of them, all `full` bytes on the wire but the last,
/// which is `last` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segments {
    pub count: u64,
    pub full: u64,
    pub last: u64,
}

impl Segments {
    /// `bytes` of payload cut into `payload`-byte segments, each with `overhead` header bytes.
    pub fn of(bytes: u64, payload: u64, overhead: u64) -> Option<Segments> {
        if bytes == 0 || payload == 0 {
            return None;
        }
        let count = bytes.div_ceil(payload);
        let last = bytes - (count - 1) * payload;
        Some(Segments { count, full: payload + overhead, last: last + overhead })
    }

    fn first(&self) -> u64 {
        if self.count == 1 {
            self.last
        } else {
            self.full
        }
    }

    /// Seconds the segments after the first take back to back on `hop`.
    fn rest_tx_s(&self, hop: &Hop) -> f64 {
        match self.count {
            1 => 0.0,
            n => (n - 2) as f64 * hop.tx_s(self.full) + hop.tx_s(self.last),
        }
    }
}

/// Seconds the data takes alone from the first byte sent to the last byte received: the first
/// segment's one-way delay, then the rest at the slowest hop.
pub fn data_s(path: &[Hop], segs: Segments) -> f64 {
    let rest = path.iter().map(|h| segs.rest_tx_s(h)).fold(0.0, f64::max);
    one_way_s(path, segs.first()) + rest
}

/// A TCP transfer's ideal: the SYN and SYN-ACK (header-only, with the options each carries:
/// `tcp::handshake`), then the data in segments of the agreed `segment_payload` bytes behind
/// the agreed per-segment options (`tcp::agreed`); every packet also carries a `shim`-byte
/// header (`transport::tcp::Connection::shim`), which a full segment's payload makes room for.
pub fn tcp_ideal_s(cfg: &TcpConfig, shim: u32, bytes: u64, forward: &[Hop], reverse: &[Hop]) -> Option<f64> {
    let agreed = crate::transport::tcp::agreed(cfg);
    let overhead = (HEADERS + shim + agreed.option_bytes()) as u64;
    let segs = Segments::of(bytes, agreed.segment_payload().checked_sub(shim)? as u64, overhead)?;
    let syns = crate::transport::tcp::handshake(cfg);
    let header_only = |options: u32| (HEADERS + shim + options) as u64;
    let (syn, syn_ack) = (header_only(syns.syn.bytes()), header_only(syns.syn_ack.bytes()));
    let handshake = one_way_s(forward, syn) + one_way_s(reverse, syn_ack);
    Some(handshake + data_s(forward, segs))
}

/// An NDP transfer's ideal: no handshake, the data in packets of `mss` bytes behind NDP's
/// 64-byte header (`packet::ndp::HEADER_BYTES`).
pub fn ndp_ideal_s(cfg: &NdpConfig, bytes: u64, forward: &[Hop]) -> Option<f64> {
    let segs = Segments::of(bytes, cfg.mss as u64, crate::packet::ndp::HEADER_BYTES as u64)?;
    Some(data_s(forward, segs))
}

/// A RoCE transfer's ideal: no handshake, the data in packets of `mtu` bytes behind RoCEv2's
/// headers (`transport::roce::DATA_HEADER_BYTES`) and a `shim`-byte header.
pub fn roce_ideal_s(cfg: &RoceConfig, shim: u32, bytes: u64, forward: &[Hop]) -> Option<f64> {
    let segs = Segments::of(bytes, cfg.mtu as u64, (crate::transport::roce::DATA_HEADER_BYTES + shim) as u64)?;
    Some(data_s(forward, segs))
}

/// The ideal completion time in seconds of a flow as built, or NaN where it has none: a
/// transfer without a size, or a transport other than TCP, NDP and RoCE (UDP, PCP and assisted
/// flows have no completion of the same kind).
/// The flow alone on the idle network over `fwd` (its ACKs over `rev`); `shim`: the bytes of a
/// header its packets carry beside the transport's (`BuiltFlow::telemetry`).
pub fn ideal_fct_s(
    spec: &FlowSpec,
    (bytes, shim): (Option<u64>, u32),
    links: &[Link],
    fwd: &[LinkId],
    rev: &[LinkId],
) -> f64 {
    let hops = |p: &[LinkId]| -> Vec<Hop> { p.iter().map(|l| Hop::of(&links[l.index()])).collect() };
    match (spec, bytes) {
        (FlowSpec::Tcp(t), Some(b)) => tcp_ideal_s(&t.tcp, shim, b, &hops(fwd), &hops(rev)).unwrap_or(f64::NAN),
        (FlowSpec::Ndp(n), Some(b)) => ndp_ideal_s(&n.ndp, b, &hops(fwd)).unwrap_or(f64::NAN),
        (FlowSpec::Roce(r), Some(b)) => roce_ideal_s(&r.roce, shim, b, &hops(fwd)).unwrap_or(f64::NAN),
        _ => f64::NAN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hop(delay_us: f64, gbps: f64) -> Hop {
        Hop { delay_s: delay_us * 1e-6, rate_bps: gbps * 1e9, framing: 0, min_gap_s: 0.0 }
    }

    /// Store-and-forward by hand: packet k leaves hop j when it has arrived there and hop j
    /// has sent packet k - 1 (a lone flow, no other traffic).
    fn simulate(path: &[Hop], sizes: &[u64]) -> f64 {
        let mut free = vec![0.0f64; path.len()];
        let mut last = 0.0;
        for &s in sizes {
            let mut at = 0.0f64;
            for (j, h) in path.iter().enumerate() {
                let done = at.max(free[j]) + h.tx_s(s);
                free[j] = done;
                at = done + h.delay_s;
            }
            last = at;
        }
        last
    }

    fn sizes(s: Segments) -> Vec<u64> {
        (0..s.count).map(|i| if i + 1 == s.count { s.last } else { s.full }).collect()
    }

    #[test]
    fn segments_cut_a_transfer_as_tcp_does() {
        assert_eq!(Segments::of(1448 * 3 + 10, 1448, 52), Some(Segments { count: 4, full: 1500, last: 62 }));
        assert_eq!(Segments::of(1448, 1448, 52), Some(Segments { count: 1, full: 1500, last: 1500 }));
        assert_eq!(Segments::of(0, 1448, 52), None);
    }

    #[test]
    fn the_data_term_matches_store_and_forward_on_equal_rates() {
        let path = [hop(1.0, 10.0), hop(2.0, 10.0), hop(3.0, 10.0), hop(1.0, 10.0)];
        for bytes in [1, 1000, 1460, 1461, 20_000, 1_000_000] {
            let segs = Segments::of(bytes, 1460, 40).unwrap();
            let by_hand = simulate(&path, &sizes(segs));
            assert!((data_s(&path, segs) - by_hand).abs() < 1e-12, "{bytes} B: {} vs {by_hand}", data_s(&path, segs));
        }
    }

    #[test]
    fn the_data_term_is_exact_with_the_bottleneck_last_and_bounded_otherwise() {
        let last_slow = [hop(1.0, 10.0), hop(1.0, 10.0), hop(1.0, 1.0)];
        let mid_slow = [hop(1.0, 10.0), hop(1.0, 1.0), hop(1.0, 10.0)];
        let segs = Segments::of(10_000, 1460, 40).unwrap();
        assert!((data_s(&last_slow, segs) - simulate(&last_slow, &sizes(segs))).abs() < 1e-12);
        // After the bottleneck the short last segment crosses a 10 Gb/s hop 1460 B faster.
        let gap = data_s(&mid_slow, segs) - simulate(&mid_slow, &sizes(segs));
        let bound = (segs.full - segs.last) as f64 * 8.0 / 10e9;
        assert!((0.0..=bound + 1e-15).contains(&gap), "gap {gap} within {bound}");
    }

    #[test]
    fn a_tcp_ideal_is_the_handshake_and_the_data() {
        // One 1 Gb/s hop of 10 us each way, no options: SYN and SYN-ACK 40 B (320 ns each);
        // 1000 B in one 1040 B segment (8320 ns): 10 + 0.32 + 10 + 0.32 + 10 + 8.32 us.
        let cfg = TcpConfig { mss: 1460, timestamps: false, ..TcpConfig::default() };
        let path = [hop(10.0, 1.0)];
        let ideal = tcp_ideal_s(&cfg, 0, 1000, &path, &path).unwrap();
        assert!((ideal - 38.96e-6).abs() < 1e-15, "{ideal}");
    }
}
