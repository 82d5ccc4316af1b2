//! The router side of the router-assisted ideal (`transport/assisted.rs`): a queue that knows
//! which flows are open stamps each rate request with the flow's fair share of the link and the
//! bytes the flow has queued here.
//!
//! The share is max-min fair for flows that all bottleneck here: the link rate over the number
//! of open flows. A flow opens with its SYN and closes with its FIN (an oracle's knowledge,
//! which is what makes it the ideal: no estimation of how many flows are active). A request
//! only ever lowers the rate field and raises the queue field, so the tightest router on the
//! path decides.
//! Owns the set of open flows only (the queued bytes are the caller's); it reads the assisted
//! transport's constants only to interpret the fields it stamps, and never sees the sender or the
//! receiver.

use crate::packet::{tcp_flags, FlowId, Packet, Proto};
use crate::transport::assisted::{RATE_REQUEST, RATE_UNIT_BPS};
use crate::units::BitRate;
use std::collections::BTreeSet;

#[derive(Clone, Debug, Default)]
pub struct RateAdvertiser {
    open: BTreeSet<FlowId>,
}

impl RateAdvertiser {
    #[cfg(test)]
    pub fn open_flows(&self) -> usize {
        self.open.len()
    }

    /// Track the flow's opening and closing; stamp a request with the fair rate and
    /// `queued_bytes`, the flow's backlog here before this packet.
    pub fn observe(&mut self, pkt: &mut Packet, queued_bytes: u64, link_rate: BitRate) {
        if pkt.proto != Proto::Assisted {
            return;
        }
        if pkt.has_flag(tcp_flags::SYN) && !pkt.has_flag(tcp_flags::ACK) {
            self.open.insert(pkt.flow);
        }
        if pkt.has_flag(tcp_flags::FIN) {
            self.open.remove(&pkt.flow);
        }
        if pkt.has_flag(RATE_REQUEST) {
            let flows = self.open.len().max(1) as u64;
            let fair_units = (link_rate.0 / flows / RATE_UNIT_BPS).min(u32::MAX as u64) as u32;
            pkt.window = pkt.window.min(fair_units);
            pkt.ack = pkt.ack.max(queued_bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::harness::packet;
    use crate::transport::assisted::UNSTAMPED;

    fn assisted(flow: u32, flags: u8) -> Packet {
        let mut p = packet(0, flow, 1040);
        p.proto = Proto::Assisted;
        p.flags = flags;
        p.window = UNSTAMPED;
        p
    }

    #[test]
    fn stamps_the_share_of_the_open_flows_and_the_flows_queue() {
        let mut adv = RateAdvertiser::default();
        let c = BitRate(40_000_000);
        let mut syn = assisted(1, tcp_flags::SYN | RATE_REQUEST);
        adv.observe(&mut syn, 0, c);
        assert_eq!((syn.window, syn.ack), (40_000, 0), "alone: the whole 40 Mb/s in kbit/s");
        adv.observe(&mut assisted(2, tcp_flags::SYN), 0, c);
        adv.observe(&mut assisted(3, tcp_flags::SYN), 0, c);
        let mut request = assisted(1, tcp_flags::ACK | RATE_REQUEST);
        adv.observe(&mut request, 3000, c);
        assert_eq!((request.window, request.ack), (13_333, 3000), "a third each, with its 3000 queued bytes");
        // A tighter router upstream already stamped less and more: the stamp keeps the tighter.
        let mut stamped = assisted(1, tcp_flags::ACK | RATE_REQUEST);
        (stamped.window, stamped.ack) = (5_000, 9000);
        adv.observe(&mut stamped, 3000, c);
        assert_eq!((stamped.window, stamped.ack), (5_000, 9000));
        adv.observe(&mut assisted(3, tcp_flags::ACK | tcp_flags::FIN), 0, c);
        assert_eq!(adv.open_flows(), 2);
        // Other protocols pass untouched.
        let mut tcp = packet(0, 4, 1040);
        tcp.flags = tcp_flags::SYN | RATE_REQUEST;
        let before = (tcp.window, tcp.ack);
        adv.observe(&mut tcp, 0, c);
        assert_eq!((tcp.window, tcp.ack, adv.open_flows()), (before.0, before.1, 2));
    }
}
