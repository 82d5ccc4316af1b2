//! Flow classification and per-flow buffer accounting shared by the fair-queueing disciplines
//! (`fq`, `drr`, `sfq`).
//!
//! A flow is the IP 5-tuple. quench packets carry no port numbers; `Packet::flow` names one
//! connection (one TCP connection or one UDP stream), so it stands in for the port pair.
//! Owns the flow keys and the per-flow occupancy counts only; it stores no packet and decides
//! nothing, the disciplines that use it do.

use crate::packet::{FlowId, NodeId, Packet};
// SplitMix64 at `x`: a bijection on u64 with full avalanche.
use crate::rng::splitmix_at as mix;
use crate::units::Limit;
use std::collections::{BTreeSet, HashMap};

/// The 5-tuple: (source, destination, protocol, port pair as the flow id).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlowKey {
    pub src: NodeId,
    pub dst: NodeId,
    /// IPv4 protocol number.
    pub proto: u8,
    pub flow: FlowId,
}

impl FlowKey {
    pub fn of(p: &Packet) -> FlowKey {
        FlowKey { src: p.src, dst: p.dst, proto: p.proto as u8, flow: p.flow }
    }

    /// A 64-bit hash of the key under `salt`: the SplitMix64 finalizer (Steele, Lea & Flood
    /// 2014) over the packed fields. Our own function, so bucket choices never change with
    /// the Rust version (std's hasher makes no such promise).
    pub fn hash(&self, salt: u64) -> u64 {
        let ends = ((self.src.0 as u64) << 32) | self.dst.0 as u64;
        let rest = ((self.flow.0 as u64) << 8) | self.proto as u64;
        mix(mix(ends ^ salt) ^ rest)
    }
}

/// Dense indices for flows in order of first appearance. The map is only looked up, never
/// iterated, so its order cannot leak into results.
#[derive(Default)]
pub struct FlowIndex {
    map: HashMap<FlowKey, usize>,
}

impl FlowIndex {
    /// The index of `p`'s flow, allocating the next one for a new flow.
    pub fn index_of(&mut self, p: &Packet) -> usize {
        let next = self.map.len();
        *self.map.entry(FlowKey::of(p)).or_insert(next)
    }
}

/// Bytes queued per flow (or bucket), with the heaviest found in O(log n).
#[derive(Default)]
pub struct Occupancy {
    bytes: Vec<u64>,
    /// (bytes, index) of every index holding something.
    by_size: BTreeSet<(u64, usize)>,
}

impl Occupancy {
    pub fn bytes(&self, i: usize) -> u64 {
        self.bytes.get(i).copied().unwrap_or(0)
    }

    pub fn add(&mut self, i: usize, n: u64) {
        self.set(i, self.bytes(i) + n);
    }

    pub fn remove(&mut self, i: usize, n: u64) {
        self.set(i, self.bytes(i) - n);
    }

    fn set(&mut self, i: usize, n: u64) {
        if i >= self.bytes.len() {
            self.bytes.resize(i + 1, 0);
        }
        self.by_size.remove(&(self.bytes[i], i));
        self.bytes[i] = n;
        if n > 0 {
            self.by_size.insert((n, i));
        }
    }

    /// The index using the most buffer; `prefer` (the arrival's flow) wins ties, then the
    /// highest index.
    pub fn heaviest(&self, prefer: usize) -> Option<usize> {
        let &(most, i) = self.by_size.last()?;
        Some(if self.bytes(prefer) == most { prefer } else { i })
    }
}

/// Is a queue holding `packets`/`bytes` over `limit`? (After an arrival was admitted.)
pub fn over_limit(limit: &Limit, packets: u64, bytes: u64) -> bool {
    limit.packets.is_some_and(|p| packets > p) || limit.bytes.is_some_and(|b| bytes > b.0)
}

#[cfg(test)]
mod tests {
    use super::super::harness::packet;
    use super::*;
    use crate::units::Bytes;

    #[test]
    fn flows_are_told_apart_by_every_field_of_the_key() {
        let mut idx = FlowIndex::default();
        let a = packet(0, 1, 100);
        let mut b = a;
        b.dst = NodeId(7);
        let mut c = a;
        c.proto = crate::packet::Proto::Tcp;
        let mut d = a;
        d.flow = FlowId(9);
        let got: Vec<usize> = [a, b, c, d, a].iter().map(|p| idx.index_of(p)).collect();
        assert_eq!(got, vec![0, 1, 2, 3, 0]);
        let salts: Vec<u64> = [0, 1].iter().map(|&s| FlowKey::of(&a).hash(s)).collect();
        assert_ne!(salts[0], salts[1], "the salt changes the hash");
    }

    #[test]
    fn heaviest_prefers_the_arrival_on_ties() {
        let mut o = Occupancy::default();
        o.add(0, 300);
        o.add(2, 300);
        o.add(1, 100);
        assert_eq!(o.heaviest(0), Some(0));
        assert_eq!(o.heaviest(1), Some(2));
        o.remove(2, 300);
        assert_eq!(o.heaviest(1), Some(0));
        o.remove(0, 300);
        o.remove(1, 100);
        assert_eq!(o.heaviest(1), None);
    }

    #[test]
    fn limits_are_checked_after_admission() {
        let both = Limit { packets: Some(2), bytes: Some(Bytes(1000)) };
        assert!(!over_limit(&both, 2, 1000));
        assert!(over_limit(&both, 3, 10));
        assert!(over_limit(&both, 1, 1001));
    }
}
