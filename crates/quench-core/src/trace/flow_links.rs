//! Per-flow per-link counters (`record.flow_links`): how many of each listed flow's packets and
//! bytes arrived at, left and were dropped by every link they crossed, ACKs included (they
//! carry their connection's flow id). One row per (flow, link) pair that saw a packet: the
//! `flow_links` table. Summed over flows, a link's rows give that link's own counters when
//! every packet belongs to a listed flow.
//!
//! Workload arrivals are not counted (their number is unbounded; the flows table has their
//! totals). A flow keeps its pairs in a short list found by a linear scan: a packet crosses a
//! handful of links, so the scan beats a hash and nothing is allocated after a pair's first
//! packet. Off, each hook costs one branch.
//! Owns the counters only; it is handed each packet's fate by the recorder's hooks and reads no
//! component.

use crate::packet::{FlowId, LinkId};
use crate::trace::table::{columnar, Table};

/// The table's name.
pub const FLOW_LINKS: &str = "flow_links";

#[derive(Clone, Copy, Debug, Default)]
struct Counters {
    link: u32,
    arrived_packets: u64,
    arrived_bytes: u64,
    departed_packets: u64,
    departed_bytes: u64,
    dropped_packets: u64,
    dropped_bytes: u64,
    lost_packets: u64,
}

columnar!(
    /// The rows, flow by flow, each flow's links in the order its packets first reached them.
    FlowLinkRows {
        flow: u32,
        link: u32,
        arrived_packets: u64,
        arrived_bytes: u64,
        departed_packets: u64,
        departed_bytes: u64,
        dropped_packets: u64,
        dropped_bytes: u64,
        lost_packets: u64,
    }
);

/// What happened to a packet at a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    Arrived,
    Departed,
    /// Dropped by the queue (any reason but loss on the wire).
    Dropped,
    /// Lost on the wire (the link's loss model).
    Lost,
}

#[derive(Default)]
pub struct FlowLinks {
    /// Per listed flow; empty when the record is off.
    flows: Vec<Vec<Counters>>,
}

impl FlowLinks {
    /// Counters for `listed` flows when `on`.
    pub fn new(on: bool, listed: usize) -> Self {
        FlowLinks { flows: if on { vec![Vec::new(); listed] } else { Vec::new() } }
    }

    /// Whether any flow is counted (`record.flow_links` is on).
    pub fn is_on(&self) -> bool {
        !self.flows.is_empty()
    }

    /// Count a packet of `flow` (of `size` bytes) at `link`.
    #[inline]
    pub fn count(&mut self, flow: FlowId, link: LinkId, size: u16, fate: Fate) {
        if let Some(pairs) = self.flows.get_mut(flow.0 as usize) {
            count_in(pairs, link.0, size as u64, fate);
        }
    }

    pub fn into_table(self) -> Table {
        let mut rows = FlowLinkRows::default();
        for (flow, pairs) in self.flows.into_iter().enumerate() {
            for c in pairs {
                rows.push(
                    flow as u32,
                    c.link,
                    c.arrived_packets,
                    c.arrived_bytes,
                    c.departed_packets,
                    c.departed_bytes,
                    c.dropped_packets,
                    c.dropped_bytes,
                    c.lost_packets,
                );
            }
        }
        rows.into_table(FLOW_LINKS)
    }
}

#[cold]
fn new_pair(pairs: &mut Vec<Counters>, link: u32) -> &mut Counters {
    pairs.push(Counters { link, ..Default::default() });
    pairs.last_mut().expect("just pushed")
}

fn count_in(pairs: &mut Vec<Counters>, link: u32, size: u64, fate: Fate) {
    let c = match pairs.iter().position(|c| c.link == link) {
        Some(i) => &mut pairs[i],
        None => new_pair(pairs, link),
    };
    match fate {
        Fate::Arrived => (c.arrived_packets, c.arrived_bytes) = (c.arrived_packets + 1, c.arrived_bytes + size),
        Fate::Departed => (c.departed_packets, c.departed_bytes) = (c.departed_packets + 1, c.departed_bytes + size),
        Fate::Dropped => (c.dropped_packets, c.dropped_bytes) = (c.dropped_packets + 1, c.dropped_bytes + size),
        Fate::Lost => c.lost_packets += 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_flow_and_link_in_first_seen_order() {
        let mut f = FlowLinks::new(true, 2);
        f.count(FlowId(1), LinkId(4), 1500, Fate::Arrived);
        f.count(FlowId(1), LinkId(2), 40, Fate::Arrived);
        f.count(FlowId(1), LinkId(4), 1500, Fate::Departed);
        f.count(FlowId(1), LinkId(4), 1000, Fate::Dropped);
        f.count(FlowId(0), LinkId(2), 40, Fate::Lost);
        f.count(FlowId(7), LinkId(2), 40, Fate::Arrived); // not a listed flow: not counted
        let t = f.into_table();
        assert_eq!(t.rows(), 3);
        assert_eq!(t.f64s("flow"), vec![0.0, 1.0, 1.0]);
        assert_eq!(t.f64s("link"), vec![2.0, 4.0, 2.0]);
        assert_eq!(t.f64s("arrived_bytes"), vec![0.0, 1500.0, 40.0]);
        assert_eq!(t.f64s("dropped_bytes"), vec![0.0, 1000.0, 0.0]);
        assert_eq!(t.f64s("lost_packets"), vec![1.0, 0.0, 0.0]);
        assert_eq!(FlowLinks::new(false, 2).into_table().rows(), 0);
    }
}
