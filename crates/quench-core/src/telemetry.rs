//! In-band network telemetry (INT) as HPCC reads it (Li et al., "HPCC: High Precision
//! Congestion Control", SIGCOMM 2019, section 3.1 and figure 4): each switch egress that a data
//! packet of a collecting flow leaves appends one [`HopRecord`] (the egress queue's length, the
//! bytes the port has transmitted, the time, the link's rate); the receiver's NIC echoes the
//! packet's record on its next ACK; the sender's controller reads the echo
//! (`AckSample::telemetry`).
//!
//! The records ride beside the packets, keyed by the packet's uid, rather than inside
//! [`Packet`]: a record of [`MAX_HOPS`] hops is 264 bytes, and every packet of every run would
//! pay for the room while only the packets of collecting flows use it. The packet's wire size
//! is left as the transport made it: HPCC's own implementation reserves 42 bytes of INT header
//! per packet (5 hops of 8 bytes and a hop count), which a scenario accounts for by its MSS.
//!
//! What this module owns: the records of the packets in flight and the echo waiting at each
//! collecting flow's receiver. The world calls it where a packet enters the network, starts a
//! transmission on a switch's link, reaches its host, and leaves the network otherwise (a drop,
//! a loss, no route), so that no record outlives its packet. It touches no link, packet or
//! endpoint.

use crate::packet::{FlowId, Packet, UidMap};
use crate::units::{BitRate, Bytes, Time};

/// Hops a record holds. HPCC's implementation keeps 5 (`IntHeader::maxHop`, enough for the
/// five switch egresses of a fat-tree's longest path); 8 also covers a parking lot of eight
/// routers. Switches past the last leave no record, as a full INT stack does (the record says
/// so).
pub const MAX_HOPS: usize = 8;

/// What one switch egress reports of itself as a packet starts its transmission there.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HopRecord {
    /// Bytes left in the egress queue (HPCC's `qLen`).
    pub queue: Bytes,
    /// Bytes the egress has transmitted since the run began, this packet included
    /// (`txBytes`): two records' difference over their times' is the link's throughput.
    pub tx_bytes: u64,
    /// When the packet's transmission started (`ts`).
    pub at: Time,
    /// The link's rate (`B`).
    pub rate: BitRate,
}

/// The hop records of one packet, in path order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntRecord {
    hops: [HopRecord; MAX_HOPS],
    len: u8,
    /// More switches were crossed than the record holds.
    truncated: bool,
    /// An echo on an ACK: the switches it crosses do not stamp it (HPCC's switches stamp data).
    echo: bool,
}

impl IntRecord {
    /// A record of the given hops (at most [`MAX_HOPS`]; more are dropped as truncation).
    #[cfg(test)]
    pub fn of(hops: &[HopRecord]) -> IntRecord {
        let mut r = IntRecord::default();
        for h in hops {
            r.push(*h);
        }
        r
    }

    pub fn hops(&self) -> &[HopRecord] {
        &self.hops[..self.len as usize]
    }

    #[cfg(test)]
    pub fn truncated(&self) -> bool {
        self.truncated
    }

    fn push(&mut self, hop: HopRecord) {
        match self.hops.get_mut(self.len as usize) {
            Some(slot) => {
                *slot = hop;
                self.len += 1;
            }
            None => self.truncated = true,
        }
    }
}

/// The records of a run's packets in flight and the echoes waiting at receivers.
#[derive(Default)]
pub struct Telemetry {
    /// By packet uid: the record a data packet gathers, or the echo an ACK carries.
    records: UidMap<IntRecord>,
    /// By flow id: the record of the last data packet that reached the flow's receiver, for
    /// its next ACK (ids are consecutive counts too, so the same hash serves).
    echoes: UidMap<IntRecord>,
}

impl Telemetry {
    /// A packet of a collecting flow enters the network: a data packet (`forward`, from the
    /// flow's source) starts an empty record; an ACK takes the echo waiting for it, if any.
    pub fn on_send(&mut self, pkt: &Packet, forward: bool) {
        let record = if forward {
            IntRecord::default()
        } else {
            match self.echoes.remove(&pkt.flow.0) {
                Some(echo) => echo,
                None => return,
            }
        };
        self.records.insert(pkt.uid, record);
    }

    /// A switch egress starts sending packet `uid`: append its hop, if the packet gathers one.
    pub fn stamp(&mut self, uid: u32, hop: HopRecord) {
        if let Some(r) = self.records.get_mut(&uid).filter(|r| !r.echo) {
            r.push(hop);
        }
    }

    /// A packet reached its destination host: a data packet's record waits for the receiver's
    /// next ACK; an echo stays for the sender to read ([`Telemetry::echo_of`]) until
    /// [`Telemetry::forget`].
    pub fn on_arrival(&mut self, pkt: &Packet) {
        if let Some(r) = self.records.get(&pkt.uid).filter(|r| !r.echo) {
            let echo = IntRecord { echo: true, ..*r };
            self.records.remove(&pkt.uid);
            self.echoes.insert(pkt.flow.0, echo);
        }
    }

    /// The echo an arriving ACK carries.
    pub fn echo_of(&self, uid: u32) -> Option<&IntRecord> {
        self.records.get(&uid).filter(|r| r.echo)
    }

    /// Packet `uid` has left the network (consumed, dropped, lost): its record goes with it.
    pub fn forget(&mut self, uid: u32) {
        self.records.remove(&uid);
    }

    /// A flow ended: its waiting echo goes.
    pub fn flow_ended(&mut self, flow: FlowId) {
        self.echoes.remove(&flow.0);
    }

    /// Records of packets in flight (for the tests that no record outlives its packet).
    #[cfg(test)]
    pub fn in_flight(&self) -> usize {
        self.records.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hop(i: u64) -> HopRecord {
        HopRecord { queue: Bytes(i), tx_bytes: 1000 * i, at: Time(i), rate: BitRate(1_000_000_000) }
    }

    fn packet(uid: u32, flow: u32) -> Packet {
        crate::qdisc::harness::packet(uid, flow, 1500)
    }

    #[test]
    fn data_gathers_hops_and_the_ack_carries_them_back_unstamped() {
        let mut t = Telemetry::default();
        let data = packet(7, 1);
        t.on_send(&data, true);
        t.stamp(7, hop(1));
        t.stamp(7, hop(2));
        t.on_arrival(&data);
        assert_eq!(t.in_flight(), 0, "the data's record became the flow's echo");
        let ack = packet(8, 1);
        t.on_send(&ack, false);
        t.stamp(8, hop(9));
        let echo = t.echo_of(8).expect("the ACK carries the echo");
        assert_eq!(echo.hops(), &[hop(1), hop(2)]);
        t.forget(8);
        assert_eq!(t.in_flight(), 0);
        // A second ACK with no data since carries nothing.
        t.on_send(&packet(9, 1), false);
        assert_eq!(t.echo_of(9), None);
    }

    #[test]
    fn a_record_holds_max_hops_and_says_it_was_truncated() {
        let hops: Vec<HopRecord> = (0..MAX_HOPS as u64 + 2).map(hop).collect();
        let r = IntRecord::of(&hops);
        assert_eq!(r.hops().len(), MAX_HOPS);
        assert!(r.truncated());
        assert!(!IntRecord::of(&hops[..3]).truncated());
    }

    #[test]
    fn a_dropped_packet_leaves_no_record() {
        let mut t = Telemetry::default();
        t.on_send(&packet(1, 0), true);
        t.stamp(1, hop(1));
        t.forget(1);
        assert_eq!(t.in_flight(), 0);
        assert_eq!(t.echo_of(1), None);
    }
}
