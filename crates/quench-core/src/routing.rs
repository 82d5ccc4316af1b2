//! Static shortest-path routing, computed once when the world is built: fewest hops, ties to
//! the link declared first, so routes are deterministic. The routes are those of one
//! breadth-first search per destination over incoming links (the "reference" search in the
//! tests), but stored at the cost of the topology's core rather than nodes x nodes:
//!
//! - A node with a single outgoing link (a single-homed host) keeps no table: its next hop to
//!   any destination it can reach is that link (a default route). It reaches `dst` when `dst`
//!   is its neighbour or the neighbour reaches `dst`, which is one lookup in the neighbour's
//!   table, and none where every node reaches every other (a connected network, known once
//!   the table is filled). This applies when the neighbour has two or more outgoing links (so
//!   it has a table of its own); otherwise the node keeps a table.
//! - A destination with a single incoming link, from `a` (a single-homed host, seen from the
//!   network), needs no column: every other node reaches it the way it reaches `a`, then over
//!   `a`'s link. The search from such a destination visits `a` first and then runs as the
//!   search from `a`, so the routes (ties included) are the same. This applies when `a` has a
//!   column itself (it has more than one incoming link).
//!
//! Every other node has a row and every other destination a column of one dense table, filled
//! by one breadth-first search per column over the whole graph. A dumbbell of N flows keeps a
//! 2 x 2 table (its two routers) instead of (2N + 2)^2 entries, and sets up in time linear in
//! N. The per-packet lookup `next_hop` is a few array reads and branches: O(1), no hashing.
//!
//! Where a node has several equally short next hops and its policy chooses among them (`ecmp`,
//! `spray`: the switches of generated fabrics, `topology/`), `multipath` keeps the set per
//! node and destination column and `route` chooses per packet. Every other node keeps the
//! table's one next hop: the fewest-hops route with ties to the link declared first.
//!
//! A listed flow may be pinned to a path of its own (`pinned`): its packets follow it at every
//! node on it, before any table or policy is asked.
//! Owns the routing tables and the multipath sets. It answers which link a packet leaves by and
//! never forwards, queues or changes a packet: the world does.

mod multipath;
mod pinned;

#[cfg(test)]
pub(crate) use multipath::permuted;
pub use multipath::{MultipathPolicy, DEFAULT_FLOWLET_GAP};

use crate::packet::{FlowId, LinkId, NodeId, Packet};
use crate::units::{Dur, Time};
use multipath::Multipath;
use pinned::Pinned;
use std::collections::VecDeque;

/// "No link" and "no row/column": link and node indices are below u32::MAX (the builder
/// counts them in u32).
const NONE: u32 = u32::MAX;

/// What routing keeps per node, for the node as a place packets are at (`row`, `uplink`, `up`)
/// and as a destination (`col`, `anchor`, `anchor_link`).
#[derive(Clone, Copy, Debug)]
struct NodeRoutes {
    /// Row of the table, or NONE for a node that routes by its one link (or has none).
    row: u32,
    /// For a node without a row: its only outgoing link (NONE: no outgoing link at all).
    uplink: u32,
    /// The node at the far end of `uplink`.
    up: u32,
    /// Column of the table, or NONE for a destination reached through `anchor`.
    col: u32,
    /// For a destination without a column: the node of its only incoming link.
    anchor: u32,
    /// That incoming link (anchor -> this node).
    anchor_link: u32,
}

pub struct Routes {
    nodes: Vec<NodeRoutes>,
    cols: usize,
    /// next hop (link index or NONE) of row r to column c at `table[r * cols + c]`.
    table: Vec<u32>,
    /// Every node with a row reaches every destination with a column but itself (the table's
    /// only empty entries are those diagonal ones). Then a node that routes by its one link
    /// reaches every node, and `next_hop` returns that link without looking the destination
    /// up in the neighbour's row: three dependent loads less per packet a host sends.
    rows_reach_all: bool,
    /// The equal-cost sets of the nodes that choose among them; None when none does.
    multipath: Option<Multipath>,
    /// The listed flows pinned to paths of their own; None when none is.
    pinned: Option<Box<Pinned>>,
    /// Whether `multipath` or `pinned` is there: the one test a hop pays without either.
    chooses: bool,
    /// Each node's policy, the seed of their choices and the flowlet gap, kept to compute the
    /// routes again when links go down or up (`recompute`).
    policies: Box<[MultipathPolicy]>,
    seed: u64,
    flowlet_gap: Dur,
}

impl Routes {
    /// `links[i] = (from, to)` of link i; every node keeps the table's one next hop.
    #[cfg(test)]
    pub fn compute(nodes: usize, links: &[(NodeId, NodeId)]) -> Routes {
        Self::compute_with(nodes, links, &[], (0, DEFAULT_FLOWLET_GAP))
    }

    /// As `compute`, with node n choosing among equal-cost next hops by `policies[n]` (nodes
    /// past the end: `first`), its choices seeded from `seed`, `flowlet` switches starting a
    /// new flowlet after `flowlet_gap` of a flow's silence.
    pub fn compute_with(
        nodes: usize,
        links: &[(NodeId, NodeId)],
        policies: &[MultipathPolicy],
        (seed, flowlet_gap): (u64, Dur),
    ) -> Routes {
        Self::compute_over(nodes, links, &|_| true, policies, (seed, flowlet_gap))
    }

    /// Pin listed flow `flow`'s packets in one direction (`reverse`: from its destination back
    /// to its source) to `path`, links that `ends` joins into a path without repeated nodes.
    pub fn pin(&mut self, flow: FlowId, reverse: bool, path: &[LinkId], ends: &[(NodeId, NodeId)]) {
        self.pinned.get_or_insert_with(Box::default).pin(flow, reverse, path, ends);
        self.chooses = true;
    }

    /// The links listed flow `flow` is pinned to in one direction, if it is.
    pub fn pinned_path(&self, flow: FlowId, reverse: bool) -> Option<Vec<LinkId>> {
        self.pinned.as_ref()?.links(flow, reverse)
    }

    /// The routes again, over the links for which `usable(link)` holds (those up): the
    /// equal-cost sets shrink and regrow with them. A switch's choices start afresh from its
    /// seed, as a switch's hardware tables are rewritten when its routes change.
    pub fn recompute(&mut self, links: &[(NodeId, NodeId)], usable: &dyn Fn(usize) -> bool) {
        let policies = std::mem::take(&mut self.policies);
        let pinned = self.pinned.take();
        *self = Self::compute_over(self.nodes.len(), links, usable, &policies, (self.seed, self.flowlet_gap));
        self.chooses |= pinned.is_some();
        self.pinned = pinned;
    }

    fn compute_over(
        nodes: usize,
        links: &[(NodeId, NodeId)],
        usable: &dyn Fn(usize) -> bool,
        policies: &[MultipathPolicy],
        (seed, flowlet_gap): (u64, Dur),
    ) -> Routes {
        let mut out_degree = vec![0u32; nodes];
        let mut in_degree = vec![0u32; nodes];
        let mut only_out = vec![NONE; nodes];
        let mut only_in = vec![NONE; nodes];
        let mut incoming: Vec<Vec<u32>> = vec![Vec::new(); nodes];
        for (i, &(from, to)) in links.iter().enumerate().filter(|(i, _)| usable(*i)) {
            out_degree[from.index()] += 1;
            in_degree[to.index()] += 1;
            only_out[from.index()] = i as u32;
            only_in[to.index()] = i as u32;
            incoming[to.index()].push(i as u32);
        }
        let mut info =
            vec![NodeRoutes { row: NONE, uplink: NONE, up: NONE, col: NONE, anchor: NONE, anchor_link: NONE }; nodes];
        let (mut rows, mut cols) = (0u32, 0u32);
        for n in 0..nodes {
            let r = &mut info[n];
            match out_degree[n] {
                0 => {} // reaches nothing: no row, no uplink
                1 if out_degree[links[only_out[n] as usize].1.index()] >= 2 => {
                    r.uplink = only_out[n];
                    r.up = links[only_out[n] as usize].1 .0;
                }
                _ => {
                    r.row = rows;
                    rows += 1;
                }
            }
            if in_degree[n] == 1 && in_degree[links[only_in[n] as usize].0.index()] >= 2 {
                r.anchor_link = only_in[n];
                r.anchor = links[only_in[n] as usize].0 .0;
            } else {
                r.col = cols;
                cols += 1;
            }
        }
        let cols = cols as usize;
        let mut table = vec![NONE; rows as usize * cols];
        let mut mp = multipath::Builder::new(
            nodes,
            policies,
            |n| info[n].row != NONE,
            (links, usable),
            cols,
            (seed, flowlet_gap),
        );
        // Hops to the column's destination (NONE: not reached yet); the multipath sets need
        // the distances, the table only whether a node was reached.
        let mut dist = vec![NONE; nodes];
        let mut frontier = VecDeque::new();
        for dst in 0..nodes {
            let col = info[dst].col;
            if col == NONE {
                continue;
            }
            dist.iter_mut().for_each(|d| *d = NONE);
            dist[dst] = 0;
            frontier.push_back(dst);
            while let Some(n) = frontier.pop_front() {
                for &l in &incoming[n] {
                    let from = links[l as usize].0.index();
                    if dist[from] == NONE {
                        dist[from] = dist[n] + 1;
                        if info[from].row != NONE {
                            table[info[from].row as usize * cols + col as usize] = l;
                        }
                        frontier.push_back(from);
                    }
                }
            }
            if let Some(mp) = mp.as_mut() {
                mp.column(col as usize, &dist);
            }
        }
        let diagonal = info.iter().filter(|n| n.row != NONE && n.col != NONE).count();
        let rows_reach_all = table.iter().filter(|&&hop| hop == NONE).count() == diagonal;
        let multipath = mp.map(multipath::Builder::finish);
        Routes {
            nodes: info,
            cols,
            table,
            rows_reach_all,
            chooses: multipath.is_some(),
            multipath,
            pinned: None,
            policies: policies.into(),
            seed,
            flowlet_gap,
        }
    }

    /// The next hop of packet `pkt` at node `at` at time `now`: its flow's pinned path where
    /// it has one through `at`, else the node's choice among equal-cost next hops where it has
    /// a policy and a choice, the table's otherwise (`next_hop`).
    /// A scenario with neither pays one test per hop here; the choice is out of line so that
    /// the single-path hop stays small enough to inline.
    #[inline(always)]
    pub fn route(&mut self, at: NodeId, pkt: &Packet, now: Time) -> Option<LinkId> {
        if self.chooses {
            if let Some(l) = self.choose(at, pkt, now) {
                return Some(l);
            }
        }
        self.next_hop(at, pkt.dst)
    }

    #[inline(never)]
    fn choose(&mut self, at: NodeId, pkt: &Packet, now: Time) -> Option<LinkId> {
        if let Some(l) = self.pinned.as_ref().and_then(|p| p.hop(at, pkt)) {
            return Some(l);
        }
        let mp = self.multipath.as_mut()?;
        column(&self.nodes, at, pkt.dst).and_then(|col| mp.choose(at, col, pkt, now))
    }

    /// Every next hop node `at` may route a packet for `dst` over: its equal-cost set where it
    /// chooses, else the one next hop (none when it does not reach `dst`).
    #[cfg(test)]
    pub fn next_hops(&self, at: NodeId, dst: NodeId) -> Vec<LinkId> {
        let set = self.multipath.as_ref().and_then(|mp| column(&self.nodes, at, dst).and_then(|c| mp.set(at, c)));
        match set {
            Some(links) => links.collect(),
            None => self.next_hop(at, dst).into_iter().collect(),
        }
    }

    /// Distinct equal-cost sets and per-(switch, column) entries kept for multipath.
    #[cfg(test)]
    pub fn multipath_entries(&self) -> (usize, usize) {
        self.multipath.as_ref().map_or((0, 0), Multipath::sizes)
    }

    #[inline]
    pub fn next_hop(&self, at: NodeId, dst: NodeId) -> Option<LinkId> {
        if at == dst {
            return None;
        }
        let here = &self.nodes[at.index()];
        let l = if here.row != NONE {
            self.row_hop(here.row, at.0, dst.0)
        } else if here.uplink == NONE || here.up == dst.0 || self.rows_reach_all {
            here.uplink
        } else {
            // The neighbour has a row (see `compute`); this node reaches what it reaches.
            let up_row = self.nodes[here.up as usize].row;
            if self.row_hop(up_row, here.up, dst.0) == NONE {
                NONE
            } else {
                here.uplink
            }
        };
        (l != NONE).then_some(LinkId(l))
    }

    /// Next hop (or NONE) from node `at`, whose row is `row`, to `dst` != `at`.
    #[inline]
    fn row_hop(&self, row: u32, at: u32, dst: u32) -> u32 {
        let d = &self.nodes[dst as usize];
        let col = if d.col != NONE {
            d.col
        } else if d.anchor == at {
            return d.anchor_link;
        } else {
            self.nodes[d.anchor as usize].col
        };
        self.table[row as usize * self.cols + col as usize]
    }

    /// Whether every node reaches every other (see `rows_reach_all`); for tests.
    #[cfg(test)]
    fn rows_reach_all(&self) -> bool {
        self.rows_reach_all
    }

    /// Entries of the routing table (for tests and memory accounting).
    #[cfg(test)]
    pub fn table_entries(&self) -> usize {
        self.table.len()
    }

    /// The links of the path from `src` to `dst`, if one exists.
    pub fn path(&self, links: &[(NodeId, NodeId)], src: NodeId, dst: NodeId) -> Option<Vec<LinkId>> {
        let mut path = Vec::new();
        let mut at = src;
        while at != dst {
            let l = self.next_hop(at, dst)?;
            path.push(l);
            at = links[l.index()].1;
        }
        Some(path)
    }
}

/// The table column that holds `dst`'s routes as seen from `at` (a destination without a
/// column is reached through its anchor's), or None where `at` is `dst` or `dst`'s anchor (one
/// link, nothing to choose).
#[inline]
fn column(nodes: &[NodeRoutes], at: NodeId, dst: NodeId) -> Option<u32> {
    let d = &nodes[dst.index()];
    if at == dst || d.anchor == at.0 {
        None
    } else if d.col != NONE {
        Some(d.col)
    } else {
        Some(nodes[d.anchor as usize].col)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// The straightforward routes: one breadth-first search per destination over incoming
    /// links, a dense nodes x nodes matrix of next hops.
    fn reference(nodes: usize, links: &[(NodeId, NodeId)]) -> Vec<u32> {
        let mut incoming: Vec<Vec<u32>> = vec![Vec::new(); nodes];
        for (i, &(_, to)) in links.iter().enumerate() {
            incoming[to.index()].push(i as u32);
        }
        let mut next_hop = vec![NONE; nodes * nodes];
        for dst in 0..nodes {
            let mut seen = vec![false; nodes];
            seen[dst] = true;
            let mut frontier = VecDeque::from([dst]);
            while let Some(n) = frontier.pop_front() {
                for &l in &incoming[n] {
                    let from = links[l as usize].0.index();
                    if !seen[from] {
                        seen[from] = true;
                        next_hop[from * nodes + dst] = l;
                        frontier.push_back(from);
                    }
                }
            }
        }
        next_hop
    }

    fn assert_same_as_reference(nodes: usize, links: &[(NodeId, NodeId)]) {
        let r = Routes::compute(nodes, links);
        let want = reference(nodes, links);
        for at in 0..nodes {
            for dst in 0..nodes {
                let got = r.next_hop(NodeId(at as u32), NodeId(dst as u32)).map_or(NONE, |l| l.0);
                assert_eq!(
                    got,
                    want[at * nodes + dst],
                    "next hop from {at} to {dst} on {nodes} nodes, links {links:?}"
                );
            }
        }
    }

    fn duplex(a: u32, b: u32) -> [(NodeId, NodeId); 2] {
        [(NodeId(a), NodeId(b)), (NodeId(b), NodeId(a))]
    }

    #[test]
    fn shortest_paths_on_a_dumbbell_with_a_detour() {
        // 0 - 1 - 2 - 3 directly, plus a longer detour 1 - 4 - 5 - 2.
        let links: Vec<_> = [duplex(0, 1), duplex(1, 2), duplex(2, 3), duplex(1, 4), duplex(4, 5), duplex(5, 2)]
            .into_iter()
            .flatten()
            .collect();
        let r = Routes::compute(6, &links);
        let p = r.path(&links, NodeId(0), NodeId(3)).unwrap();
        assert_eq!(p, vec![LinkId(0), LinkId(2), LinkId(4)]);
        let back = r.path(&links, NodeId(3), NodeId(0)).unwrap();
        assert_eq!(back, vec![LinkId(5), LinkId(3), LinkId(1)]);
        let isolated = Routes::compute(7, &links);
        assert!(isolated.path(&links, NodeId(0), NodeId(6)).is_none());
        assert_same_as_reference(7, &links);
    }

    /// Links that go down leave the routes: recomputing over the links that are up gives the
    /// reference search's routes on the graph without them (each made a loop on a node of its
    /// own, so that link indices stay), and bringing them back restores the first routes.
    #[test]
    fn recomputing_without_failed_links() {
        // 0 - 1 - 2 - 3 directly, plus a longer detour 1 - 4 - 5 - 2; 1<->2 (links 2, 3) fails.
        let links: Vec<_> = [duplex(0, 1), duplex(1, 2), duplex(2, 3), duplex(1, 4), duplex(4, 5), duplex(5, 2)]
            .into_iter()
            .flatten()
            .collect();
        let all = |r: &Routes| -> Vec<Option<LinkId>> {
            (0..6).flat_map(|a| (0..6).map(move |d| (a, d))).map(|(a, d)| r.next_hop(NodeId(a), NodeId(d))).collect()
        };
        let mut r = Routes::compute(6, &links);
        let before = all(&r);
        let down = [2usize, 3];
        r.recompute(&links, &|i| !down.contains(&i));
        let mut cut = links.clone();
        for &i in &down {
            cut[i] = (NodeId(6), NodeId(6));
        }
        let want = reference(7, &cut);
        for at in 0..6u32 {
            for dst in 0..6u32 {
                let w = want[at as usize * 7 + dst as usize];
                assert_eq!(r.next_hop(NodeId(at), NodeId(dst)), (w != NONE).then_some(LinkId(w)), "{at} -> {dst}");
            }
        }
        let detour = r.path(&links, NodeId(0), NodeId(3)).unwrap();
        assert_eq!(detour, vec![LinkId(0), LinkId(6), LinkId(8), LinkId(10), LinkId(4)]);
        r.recompute(&links, &|_| true);
        assert_eq!(all(&r), before);
    }

    /// An ECMP set shrinks when one of its links goes down and regrows when it comes back:
    /// 0 -> 1 -> {2 | 3} -> 4, node 1 choosing by ECMP.
    #[test]
    fn equal_cost_sets_shrink_and_regrow() {
        let links: Vec<_> =
            [duplex(0, 1), duplex(1, 2), duplex(1, 3), duplex(2, 4), duplex(3, 4)].into_iter().flatten().collect();
        let mut policies = vec![MultipathPolicy::First; 5];
        policies[1] = MultipathPolicy::Ecmp;
        let mut r = Routes::compute_with(5, &links, &policies, (7, DEFAULT_FLOWLET_GAP));
        assert_eq!(r.next_hops(NodeId(1), NodeId(4)), vec![LinkId(2), LinkId(4)]);
        r.recompute(&links, &|i| i != 2);
        assert_eq!(r.next_hops(NodeId(1), NodeId(4)), vec![LinkId(4)]);
        r.recompute(&links, &|i| i != 2 && i != 4);
        assert_eq!(r.next_hops(NodeId(1), NodeId(4)), vec![], "no path left");
        r.recompute(&links, &|_| true);
        assert_eq!(r.next_hops(NodeId(1), NodeId(4)), vec![LinkId(2), LinkId(4)]);
    }

    /// A two-path diamond: host 0 - switch 1 - {2 | 3} - 4 - host 5, switch 1 choosing by
    /// `policy`.
    fn diamond(policy: MultipathPolicy, gap: Dur) -> (Vec<(NodeId, NodeId)>, Routes) {
        let links: Vec<_> = [duplex(0, 1), duplex(1, 2), duplex(1, 3), duplex(2, 4), duplex(3, 4), duplex(4, 5)]
            .into_iter()
            .flatten()
            .collect();
        let mut policies = vec![MultipathPolicy::First; 6];
        policies[1] = policy;
        let r = Routes::compute_with(6, &links, &policies, (SEED, gap));
        (links, r)
    }

    const SEED: u64 = 11;

    /// Packet `j` of a burst of flow 7 from host 0 to host 5.
    fn flow_packet(flow: u32) -> Packet {
        Packet { src: NodeId(0), dst: NodeId(5), flow: FlowId(flow), ..crate::qdisc::harness::packet(0, flow, 1500) }
    }

    /// Bursts of 5 packets 10 us apart, a burst every millisecond: the link switch 1 sends
    /// each packet over.
    fn bursts(r: &mut Routes, count: u64) -> Vec<Vec<LinkId>> {
        let pkt = flow_packet(7);
        (0..count)
            .map(|k| (0..5).map(|j| r.route(NodeId(1), &pkt, Time(k * 1_000_000 + j * 10_000)).unwrap()).collect())
            .collect()
    }

    /// Flowlet switching by hand: with a 100 us gap, each 1 ms burst is a new flowlet and
    /// draws its link from switch 1's stream (after the salt it draws first), the packets
    /// within a burst (10 us apart) keep it; with a gap of a second, every burst keeps the
    /// first burst's link, as ECMP keeps a flow on one path.
    #[test]
    fn flowlets_move_between_bursts_and_stay_within_them() {
        let (_, mut r) = diamond(MultipathPolicy::Flowlet, Dur::from_micros(100));
        let set = r.next_hops(NodeId(1), NodeId(5));
        assert_eq!(set, vec![LinkId(2), LinkId(4)]);
        let mut stream = Rng::stream(SEED, crate::rng::StreamKind::Routing, 1);
        stream.next_u64(); // the ECMP salt
        let got = bursts(&mut r, 12);
        let want: Vec<LinkId> = (0..12).map(|_| set[stream.range_inclusive(0, 1) as usize]).collect();
        for (k, burst) in got.iter().enumerate() {
            assert!(burst.iter().all(|&l| l == want[k]), "burst {k}: {burst:?}, want all {:?}", want[k]);
        }
        let moves = want.windows(2).filter(|w| w[0] != w[1]).count();
        assert!(moves >= 3, "12 bursts over two paths moved only {moves} times: {want:?}");

        let (_, mut r) = diamond(MultipathPolicy::Flowlet, Dur::from_secs(1));
        let got: Vec<LinkId> = bursts(&mut r, 12).into_iter().flatten().collect();
        assert!(got.iter().all(|&l| l == got[0]), "one flowlet, one path: {got:?}");
    }

    /// A pinned flow's packets follow its path in their direction, before any policy;
    /// another flow's, and its own packets back (unpinned), do not.
    #[test]
    fn a_pinned_flow_follows_its_path() {
        let (links, mut r) = diamond(MultipathPolicy::Ecmp, DEFAULT_FLOWLET_GAP);
        let path = [LinkId(0), LinkId(4), LinkId(8), LinkId(10)]; // 0 -> 1 -> 3 -> 4 -> 5
        r.pin(FlowId(7), false, &path, &links);
        let pkt = flow_packet(7);
        let mut at = NodeId(0);
        let mut taken = Vec::new();
        while at != NodeId(5) {
            let l = r.route(at, &pkt, Time::ZERO).unwrap();
            taken.push(l);
            at = links[l.index()].1;
        }
        assert_eq!(taken, path);
        let back = Packet { src: NodeId(5), dst: NodeId(0), ..pkt };
        assert_eq!(r.route(NodeId(4), &back, Time::ZERO), r.next_hop(NodeId(4), NodeId(0)));
        r.recompute(&links, &|_| true);
        assert_eq!(r.route(NodeId(1), &pkt, Time::ZERO), Some(LinkId(4)), "the pin outlives a recomputation");
        assert_eq!(r.pinned_path(FlowId(7), false), Some(path.to_vec()));
        assert_eq!(r.pinned_path(FlowId(7), true), None);
    }

    /// A dumbbell's hosts are single-homed: only its two routers keep a table, whatever the
    /// number of hosts.
    #[test]
    fn a_dumbbell_keeps_a_table_of_its_routers_only() {
        let flows = 50u32;
        // routers 0 and 1; senders 2.., receivers 2 + flows..
        let mut links: Vec<_> = duplex(0, 1).to_vec();
        for i in 0..flows {
            links.extend(duplex(2 + i, 0));
            links.extend(duplex(1, 2 + flows + i));
        }
        let nodes = 2 + 2 * flows as usize;
        let r = Routes::compute(nodes, &links);
        assert_eq!(r.table_entries(), 4);
        assert_same_as_reference(nodes, &links);
        let p = r.path(&links, NodeId(2 + 7), NodeId(2 + flows + 7)).unwrap();
        assert_eq!(p, vec![LinkId(2 + 4 * 7), LinkId(0), LinkId(2 + 4 * 7 + 2)]);
    }

    /// Hand-made corner cases: two hosts joined directly, a one-way link, a chain of
    /// single-link nodes, a node with no outgoing link, a self-loop, parallel links.
    #[test]
    fn corner_cases_match_the_reference() {
        let n = |i| NodeId(i);
        assert_same_as_reference(2, &duplex(0, 1));
        assert_same_as_reference(2, &[(n(0), n(1))]);
        assert_same_as_reference(4, &[(n(0), n(1)), (n(1), n(2)), (n(2), n(3))]);
        assert_same_as_reference(3, &[(n(0), n(1)), (n(0), n(2)), (n(1), n(0))]);
        assert_same_as_reference(3, &[(n(0), n(0)), (n(0), n(1)), (n(1), n(2)), (n(2), n(1))]);
        assert_same_as_reference(3, &[(n(0), n(1)), (n(0), n(1)), (n(1), n(2)), (n(1), n(0))]);
        assert_same_as_reference(1, &[]);
        assert_same_as_reference(0, &[]);
    }

    /// Property: on random graphs (a random core of routers, single- and multi-homed hosts,
    /// one-way links, parallel links and self-loops, parts that cannot reach each other) every
    /// next hop equals the reference's.
    #[test]
    fn random_graphs_match_the_reference() {
        let mut rng = Rng::from_seed(25);
        let (mut rowless, mut colless, mut reach_all) = (0, 0, 0);
        for _ in 0..3000 {
            let routers = rng.range_inclusive(0, 6) as u32;
            let hosts = rng.range_inclusive(0, 8) as u32;
            let nodes = routers + hosts;
            if nodes == 0 {
                continue;
            }
            let pick = |rng: &mut Rng, lo: u32, count: u32| lo + rng.range_inclusive(0, count as u64 - 1) as u32;
            let mut links = Vec::new();
            // The core: random links among routers, duplex or one way.
            if routers > 0 {
                for _ in 0..rng.range_inclusive(0, 3 * routers as u64) {
                    let (a, b) = (pick(&mut rng, 0, routers), pick(&mut rng, 0, routers));
                    if rng.bernoulli(0.7) {
                        links.extend(duplex(a, b));
                    } else {
                        links.push((NodeId(a), NodeId(b)));
                    }
                }
            }
            // Hosts: attached to routers or other hosts by zero, one or more links, each
            // duplex or one way in either direction.
            for h in routers..nodes {
                for _ in 0..rng.range_inclusive(0, 2) {
                    let other = pick(&mut rng, 0, nodes);
                    match rng.range_inclusive(0, 3) {
                        0 | 1 => links.extend(duplex(h, other)),
                        2 => links.push((NodeId(h), NodeId(other))),
                        _ => links.push((NodeId(other), NodeId(h))),
                    }
                }
            }
            // Shuffle the declaration order a little: ties go to the link declared first.
            for i in (1..links.len()).rev() {
                if rng.bernoulli(0.2) {
                    let j = rng.range_inclusive(0, i as u64) as usize;
                    links.swap(i, j);
                }
            }
            assert_same_as_reference(nodes as usize, &links);
            let r = Routes::compute(nodes as usize, &links);
            rowless += r.nodes.iter().filter(|n| n.row == NONE && n.uplink != NONE).count();
            colless += r.nodes.iter().filter(|n| n.col == NONE).count();
            // The flag holds exactly when every node with a link out reaches every other node.
            let want = reference(nodes as usize, &links);
            let n = nodes as usize;
            let all_reach = (0..n)
                .filter(|&at| r.nodes[at].row != NONE || r.nodes[at].uplink != NONE)
                .all(|at| (0..n).all(|dst| dst == at || want[at * n + dst] != NONE));
            assert_eq!(r.rows_reach_all(), all_reach, "links {links:?}");
            reach_all += all_reach as usize;
        }
        // The shortcuts were exercised, not only the table.
        assert!(rowless > 1000 && colless > 1000, "{rowless} nodes without a row, {colless} without a column");
        assert!(reach_all > 100, "{reach_all} graphs in which every node reaches every other");
    }
}
