//! In-band network telemetry (INT) as HPCC reads it (Li et al., "HPCC: High Precision
//! Congestion Control", SIGCOMM 2019, section 3.1 and figure 4): each switch egress that a data
//! packet of a collecting flow leaves appends one [`HopRecord`] (the egress queue's length, the
//! bytes the port has transmitted, the time, the link's rate); the receiver's NIC echoes the
//! packet's record on its next ACK; the sender's controller reads the echo
//! (`AckSample::telemetry`).
//!
//! On the wire ([`IntHeader`]): every packet of a collecting flow, data and ACKs alike, carries
//! a fixed header after its transport header, room for a hop count and `hops` hop records, as
//! HPCC's implementation reserves it (alibaba-edu/High-Precision-Congestion-Control,
//! simulation/src/point-to-point/model/int-header.h: `IntHeader`, 2 bytes of `nhop` and
//! `maxHop` = 5 hops of 8 bytes, 42 bytes). The header counts in the packet's size, so it
//! takes link capacity and buffer, and a capture shows it ([`IntHeader::write`]). The values
//! a controller reads are the simulator's exact ones; the wire form packs them into HPCC's
//! 64-bit hop (its units and widths), which is what a capture holds.
//!
//! The records themselves ride beside the packets, keyed by the packet's uid, rather than
//! inside [`Packet`]: a record of [`MAX_HOPS`] hops is 264 bytes, and every packet of every run
//! would pay for the room while only the packets of collecting flows use it.
//!
//! What this module owns: the records of the packets in flight, the echo waiting at each
//! collecting flow's receiver, and the header's wire form. The world calls it where a packet
//! enters the network, starts a transmission on a switch's link, reaches its host, and leaves
//! the network otherwise (a drop, a loss, no route), so that no record outlives its packet. It
//! touches no link, packet or endpoint.

use crate::key_table::KeyTable;
use crate::packet::{FlowId, Packet};
use crate::units::{BitRate, Bytes, Time};

/// The most hops a record holds: HPCC's implementation keeps 5 (`IntHeader::maxHop`, enough
/// for the five switch egresses of a fat-tree's longest path); 8 also covers a parking lot of
/// eight routers. Switches past a record's last slot leave no hop, as a full INT stack does
/// (the record says so).
pub const MAX_HOPS: usize = 8;
/// Hop slots of a header unless the controller sets them: HPCC's `IntHeader::maxHop`.
pub const DEFAULT_HOPS: u8 = 5;
/// Bytes of one hop on the wire: HPCC's `IntHop`, one 64-bit word.
pub const HOP_BYTES: u32 = 8;
/// Bytes of the hop count ahead of the hops: HPCC's `IntHeader::nhop`, 16 bits.
pub const HOP_COUNT_BYTES: u32 = 2;

/// HPCC's `IntHop` fields, from the most significant bit of the word: the line-rate code, the
/// time in nanoseconds modulo 2^24, the transmitted bytes in units of 128 modulo 2^20, and
/// the queue length in units of 80 bytes (int-header.h: `timeWidth`, `bytesWidth`,
/// `qlenWidth`, `byteUnit`, `qlenUnit`).
const TIME_BITS: u32 = 24;
const BYTES_BITS: u32 = 20;
const QLEN_BITS: u32 = 17;
const BYTES_UNIT: u64 = 128;
const QLEN_UNIT: u64 = 80;
/// The line rates HPCC's 3-bit code names (int-header.cc, `lineRateValues`); any other rate
/// is written as [`OTHER_RATE`], one of the codes the table leaves at 0.
const RATE_CODES: [u64; 6] =
    [25_000_000_000, 50_000_000_000, 100_000_000_000, 200_000_000_000, 400_000_000_000, 10_000_000_000];
const OTHER_RATE: u64 = 7;

/// How a collecting flow's packets carry their records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntHeader {
    /// Hop slots (1 to [`MAX_HOPS`]): switches past the last leave no hop.
    pub hops: u8,
    /// The header rides in every packet of the flow, counted in its size and written in its
    /// capture; without it the records ride beside the packets and cost no bytes (htsim's
    /// HPCC packets, whose fixed 64-byte header holds them).
    pub on_wire: bool,
}

impl IntHeader {
    /// HPCC's implementation: five hop slots on the wire, 42 bytes.
    pub const HPCC: IntHeader = IntHeader { hops: DEFAULT_HOPS, on_wire: true };

    /// Bytes the header adds to each of the flow's packets.
    pub fn wire_bytes(self) -> u32 {
        if self.on_wire {
            HOP_COUNT_BYTES + HOP_BYTES * self.hops as u32
        } else {
            0
        }
    }

    /// Append the header as a packet carrying `record` (none yet: no hops) has it on the wire:
    /// the hop count (big-endian), then each slot's word (big-endian, HPCC's fields as
    /// [`encode_hop`] packs them; empty slots zero).
    pub fn write(self, record: Option<&IntRecord>, out: &mut Vec<u8>) {
        let hops = record.map_or(&[][..], |r| r.hops());
        out.extend_from_slice(&(hops.len() as u16).to_be_bytes());
        for slot in 0..self.hops as usize {
            out.extend_from_slice(&hops.get(slot).map_or(0, encode_hop).to_be_bytes());
        }
    }
}

/// One hop as HPCC's 64-bit `IntHop` holds it: the rate's code, then the time, the
/// transmitted bytes and the queue length in the header's units and widths (the counters
/// wrap; a queue longer than the field holds saturates it).
pub fn encode_hop(hop: &HopRecord) -> u64 {
    let field = |v: u64, bits: u32| v & ((1 << bits) - 1);
    let rate = RATE_CODES.iter().position(|&r| r == hop.rate.0).map_or(OTHER_RATE, |i| i as u64);
    let qlen = (hop.queue.0 / QLEN_UNIT).min((1 << QLEN_BITS) - 1);
    rate << (TIME_BITS + BYTES_BITS + QLEN_BITS)
        | field(hop.at.0, TIME_BITS) << (BYTES_BITS + QLEN_BITS)
        | field(hop.tx_bytes / BYTES_UNIT, BYTES_BITS) << QLEN_BITS
        | qlen
}

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
    /// Hop slots in use: [`IntHeader::hops`].
    slots: u8,
    /// More switches were crossed than the record holds.
    truncated: bool,
    /// An echo on an ACK: the switches it crosses do not stamp it (HPCC's switches stamp data).
    echo: bool,
}

impl IntRecord {
    /// An empty record of `slots` hops (at most [`MAX_HOPS`]).
    fn with_slots(slots: u8) -> IntRecord {
        IntRecord { slots: slots.min(MAX_HOPS as u8), ..IntRecord::default() }
    }

    /// A record of the given hops (at most [`MAX_HOPS`]; more are dropped as truncation).
    #[cfg(test)]
    pub fn of(hops: &[HopRecord]) -> IntRecord {
        let mut r = IntRecord::with_slots(MAX_HOPS as u8);
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

    /// Append `hop`; answers its index, or None when every slot is taken (truncation).
    fn push(&mut self, hop: HopRecord) -> Option<usize> {
        let at = self.len as usize;
        if at < self.slots as usize {
            self.hops[at] = hop;
            self.len += 1;
            Some(at)
        } else {
            self.truncated = true;
            None
        }
    }
}

/// The records of a run's packets in flight and the echoes waiting at receivers.
///
/// Records live in a pool and move by slot: a record becomes its flow's echo and then rides
/// the ACK without being copied (at 264 bytes, the copies cost HPCC over PFC 3 % of its
/// instructions when the maps held the records themselves).
#[derive(Default)]
pub struct Telemetry {
    /// Every record in use, and the slots of those no longer in use.
    pool: Vec<IntRecord>,
    free: Vec<u32>,
    /// By packet uid: the slot of the record a data packet gathers, or of the echo an ACK
    /// carries.
    records: KeyTable<u32>,
    /// By flow id: the slot of the record of the last data packet that reached the flow's
    /// receiver, for its next ACK.
    echoes: KeyTable<u32>,
}

impl Telemetry {
    /// A packet of a collecting flow enters the network: a data packet (`forward`, from the
    /// flow's source) starts an empty record of the header's slots; an ACK takes the echo
    /// waiting for it, if any.
    pub fn on_send(&mut self, pkt: &Packet, forward: bool, header: IntHeader) {
        let slot = if forward {
            self.take_slot(IntRecord::with_slots(header.hops))
        } else {
            match self.echoes.remove(pkt.flow.0 as u64) {
                Some(slot) => slot,
                None => return,
            }
        };
        if let Some(old) = self.records.insert(pkt.uid as u64, slot) {
            self.free.push(old);
        }
    }

    /// A switch egress starts sending packet `uid`: append its hop, if the packet gathers one
    /// and has a slot left; answers the hop's index in the record.
    pub fn stamp(&mut self, uid: u32, hop: HopRecord) -> Option<usize> {
        let &slot = self.records.get(uid as u64)?;
        let record = &mut self.pool[slot as usize];
        (!record.echo).then(|| record.push(hop)).flatten()
    }

    /// A packet reached its destination host: a data packet's record waits for the receiver's
    /// next ACK; an echo stays for the sender to read ([`Telemetry::echo_of`]) until
    /// [`Telemetry::forget`].
    pub fn on_arrival(&mut self, pkt: &Packet) {
        let Some(&slot) = self.records.get(pkt.uid as u64) else { return };
        let record = &mut self.pool[slot as usize];
        if record.echo {
            return;
        }
        record.echo = true;
        self.records.remove(pkt.uid as u64);
        if let Some(unsent) = self.echoes.insert(pkt.flow.0 as u64, slot) {
            self.free.push(unsent);
        }
    }

    /// The record packet `uid` carries: the hops it has gathered, or the echo of an ACK.
    pub fn record_of(&self, uid: u32) -> Option<&IntRecord> {
        self.records.get(uid as u64).map(|&slot| &self.pool[slot as usize])
    }

    /// The echo an arriving ACK carries.
    pub fn echo_of(&self, uid: u32) -> Option<&IntRecord> {
        self.record_of(uid).filter(|r| r.echo)
    }

    /// Packet `uid` has left the network (consumed, dropped, lost): its record goes with it.
    pub fn forget(&mut self, uid: u32) {
        if let Some(slot) = self.records.remove(uid as u64) {
            self.free.push(slot);
        }
    }

    /// A flow ended: its waiting echo goes.
    pub fn flow_ended(&mut self, flow: FlowId) {
        if let Some(slot) = self.echoes.remove(flow.0 as u64) {
            self.free.push(slot);
        }
    }

    /// A slot holding `record`: a free one, or a new one (the pool grows to the most records
    /// in flight at once, as many as packets of collecting flows in the network).
    fn take_slot(&mut self, record: IntRecord) -> u32 {
        match self.free.pop() {
            Some(slot) => {
                self.pool[slot as usize] = record;
                slot
            }
            None => {
                self.pool.push(record);
                (self.pool.len() - 1) as u32
            }
        }
    }

    /// Records of packets in flight (for the tests that no record outlives its packet).
    #[cfg(test)]
    pub fn in_flight(&self) -> usize {
        self.records.len()
    }

    /// Records in use, waiting echoes included (for the test that slots are reused).
    #[cfg(test)]
    fn in_use(&self) -> usize {
        self.pool.len() - self.free.len()
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
        t.on_send(&data, true, IntHeader::HPCC);
        t.stamp(7, hop(1));
        t.stamp(7, hop(2));
        t.on_arrival(&data);
        assert_eq!(t.in_flight(), 0, "the data's record became the flow's echo");
        let ack = packet(8, 1);
        t.on_send(&ack, false, IntHeader::HPCC);
        t.stamp(8, hop(9));
        let echo = t.echo_of(8).expect("the ACK carries the echo");
        assert_eq!(echo.hops(), &[hop(1), hop(2)]);
        t.forget(8);
        assert_eq!(t.in_flight(), 0);
        // A second ACK with no data since carries nothing.
        t.on_send(&packet(9, 1), false, IntHeader::HPCC);
        assert_eq!(t.echo_of(9), None);
    }

    /// A record's slot returns when its packet or its echo goes, and a newer echo replaces
    /// an unsent one: the pool holds no more records than are in use.
    #[test]
    fn slots_are_freed_with_their_packets_and_echoes() {
        let mut t = Telemetry::default();
        for uid in 0..3 {
            t.on_send(&packet(uid, 1), true, IntHeader::HPCC);
            t.stamp(uid, hop(uid as u64));
            t.on_arrival(&packet(uid, 1));
        }
        assert_eq!(t.in_use(), 1, "each arrival replaced the flow's unsent echo");
        t.on_send(&packet(10, 1), false, IntHeader::HPCC);
        assert_eq!(t.echo_of(10).map(|r| r.hops().to_vec()), Some(vec![hop(2)]), "the newest echo");
        t.forget(10);
        assert_eq!(t.in_use(), 0);
        t.on_send(&packet(11, 2), true, IntHeader::HPCC);
        t.on_arrival(&packet(11, 2));
        t.flow_ended(FlowId(2));
        let most_at_once = 2; // an unsent echo and the next data packet's record
        assert_eq!((t.in_use(), t.pool.len()), (0, most_at_once), "slots reused throughout");
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
        t.on_send(&packet(1, 0), true, IntHeader::HPCC);
        t.stamp(1, hop(1));
        t.forget(1);
        assert_eq!(t.in_flight(), 0);
        assert_eq!(t.echo_of(1), None);
    }

    /// HPCC's header is 2 + 5 x 8 = 42 bytes (int-header.h); off the wire it costs nothing.
    #[test]
    fn the_header_is_hpccs_42_bytes_and_a_record_holds_its_slots() {
        assert_eq!(IntHeader::HPCC.wire_bytes(), 42);
        assert_eq!(IntHeader { hops: 8, on_wire: true }.wire_bytes(), 66);
        assert_eq!(IntHeader { on_wire: false, ..IntHeader::HPCC }.wire_bytes(), 0);
        let mut t = Telemetry::default();
        t.on_send(&packet(1, 0), true, IntHeader::HPCC);
        let stamped: Vec<Option<usize>> = (0..7).map(|i| t.stamp(1, hop(i))).collect();
        assert_eq!(stamped, vec![Some(0), Some(1), Some(2), Some(3), Some(4), None, None]);
        let r = t.record_of(1).unwrap();
        assert_eq!((r.hops().len(), r.truncated()), (5, true));
    }

    /// One hop packed by hand into HPCC's word: 100 Gb/s is code 2; 20,000,123 ns modulo 2^24
    /// is 3,222,907; 1,280,000 bytes are 10,000 units of 128; 8,000 queued bytes are 100 units
    /// of 80. A rate not in HPCC's table is code 7, the counters wrap and the queue saturates.
    #[test]
    fn a_hop_is_packed_as_hpccs_int_hop() {
        let hop = HopRecord {
            queue: Bytes(8_000),
            tx_bytes: 1_280_000,
            at: Time(20_000_123),
            rate: BitRate(100_000_000_000),
        };
        assert_eq!(encode_hop(&hop), 0x4625_af60_4e20_0064);
        let odd = HopRecord {
            queue: Bytes(80 << 20),
            tx_bytes: 128 * ((1 << 20) + 3),
            at: Time((1 << 24) + 5),
            rate: BitRate(1_000_000_000),
        };
        assert_eq!(encode_hop(&odd), 0xe000_00a0_0007_ffff);
        let mut out = Vec::new();
        IntHeader::HPCC.write(Some(&IntRecord::of(&[hop])), &mut out);
        assert_eq!(out.len(), 42);
        assert_eq!(&out[..10], &[0, 1, 0x46, 0x25, 0xaf, 0x60, 0x4e, 0x20, 0x00, 0x64]);
        assert!(out[10..].iter().all(|&b| b == 0), "the empty slots are zero");
        out.clear();
        IntHeader::HPCC.write(None, &mut out);
        assert_eq!(out, vec![0; 42]);
    }
}
