//! Source-pinned routes: listed flows whose scenario names the nodes their packets cross (a
//! flow's `path`, and `reverse_path` for the packets back), as htsim gives each flow its own
//! route. Such a flow's packets leave each node of its path by the link that joins it to the
//! next one, whatever the routing table or the node's multipath policy would choose; every
//! other packet is routed as usual.
//!
//! Memory is one u32 per listed flow and direction (only when some flow is pinned) plus each
//! pinned route's (node, link) pairs, never a table per flow and switch. The lookup at a hop is
//! a scan of the route's few pairs, made only for a packet of a pinned flow.
//!
//! Owns the pinned routes; it checks nothing (the builder validates a path before it is
//! pinned) and changes no packet. A pinned route outlives a link going down: its packets are
//! dropped there, as a source route's are, until the link comes back.

use crate::packet::{FlowId, LinkId, NodeId, Packet};

use super::NONE;

/// One direction of a pinned flow: its end hosts and, per node on the way, the link it leaves by.
struct Route {
    src: NodeId,
    dst: NodeId,
    hops: Box<[(NodeId, LinkId)]>,
}

/// The pinned routes of the listed flows.
#[derive(Default)]
pub(crate) struct Pinned {
    /// Per listed flow: the index in `routes` of its forward and reverse routes, NONE for none.
    of_flow: Vec<[u32; 2]>,
    routes: Vec<Route>,
}

impl Pinned {
    /// Pin listed flow `flow`'s packets from `links[0]`'s start to the last link's end (forward
    /// when `reverse` is false) to `links`, which `ends` (each link's from and to) joins into a
    /// path without repeated nodes.
    pub fn pin(&mut self, flow: FlowId, reverse: bool, links: &[LinkId], ends: &[(NodeId, NodeId)]) {
        let (Some(first), Some(last)) = (links.first(), links.last()) else { return };
        if self.of_flow.len() <= flow.index() {
            self.of_flow.resize(flow.index() + 1, [NONE; 2]);
        }
        self.of_flow[flow.index()][reverse as usize] = self.routes.len() as u32;
        let hops = links.iter().map(|&l| (ends[l.index()].0, l)).collect();
        self.routes.push(Route { src: ends[first.index()].0, dst: ends[last.index()].1, hops });
    }

    /// The link `pkt` leaves node `at` by, if its flow is pinned in its direction and `at` is
    /// on the route.
    #[inline]
    pub fn hop(&self, at: NodeId, pkt: &Packet) -> Option<LinkId> {
        let pair = self.of_flow.get(pkt.flow.index())?;
        let mut routes = pair.iter().filter(|&&r| r != NONE).map(|&r| &self.routes[r as usize]);
        let route = routes.find(|r| r.src == pkt.src && r.dst == pkt.dst)?;
        route.hops.iter().find(|(n, _)| *n == at).map(|&(_, l)| l)
    }

    /// The links of flow `flow`'s pinned route in one direction, if it has one.
    pub fn links(&self, flow: FlowId, reverse: bool) -> Option<Vec<LinkId>> {
        let r = *self.of_flow.get(flow.index())?.get(reverse as usize)?;
        (r != NONE).then(|| self.routes[r as usize].hops.iter().map(|&(_, l)| l).collect())
    }
}
