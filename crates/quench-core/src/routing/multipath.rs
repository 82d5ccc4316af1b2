//! Equal-cost multipath: how a switch chooses among several next hops that are equally short to
//! a destination. The routing table (`routing.rs`) keeps one next hop per row and column, the
//! first found, and that stays every node's route unless its policy says otherwise; this module
//! keeps, for the nodes that do choose, the set of equal-cost next hops per destination column.
//!
//! Sets are interned: a fat-tree edge switch has the same set (its uplinks) towards every
//! destination outside its rack, so the per-(switch, column) entry is a small group id and the
//! distinct sets are stored once, in one flat array. Memory is one u32 per (choosing switch,
//! column) plus the distinct sets, never a table per host pair (hosts anchored to their ToR
//! have no column, see `routing.rs`).
//!
//! Policies, per switch:
//! - `first`: the table's next hop, ties to the link declared first (the default for listed
//!   routers);
//! - `ecmp`: a hash of the packet's five-tuple (source and destination node, the flow id that
//!   stands for the port pair, protocol) salted per switch, so a flow keeps one path (RFC 2992,
//!   hash-threshold; the per-switch salt avoids the polarization of every tier hashing alike);
//! - `spray`: per-packet round robin over the set (packet spraying, Dixit et al., INFOCOM 2013);
//! - `spray_random`: per packet, a uniform draw from the switch's own seeded stream;
//! - `spray_flow`: per packet, each flow cycling through the set in an order of its own, drawn
//!   anew each cycle: the hop-by-hop counterpart of htsim's NDP path choice (`-strat perm`,
//!   `SCATTER_PERMUTE`, sim/ndp.cpp `NdpSrc::choose_route` and `permute_paths`). There the
//!   source holds its flow's list of end-to-end paths, steps through it one packet at a time
//!   and, when the list is used up, shuffles it (Fisher-Yates on libc's `random()`) for the next
//!   cycle; the receiver does the same for its ACKs and NACKs. Routing here is hop by hop, so
//!   each `spray_flow` switch does it for its own next hops: it keeps a turn per flow and
//!   sends the flow's packet number t of a cycle (t = turn mod n) to the t-th hop of the
//!   cycle's order, a permutation drawn from the salted five-tuple hash and the cycle number
//!   (turn div n). Within a cycle a flow's consecutive packets take different next hops at
//!   every choosing switch. In a fat-tree (n1 uplinks at the edge, n2 at the aggregation switch)
//!   an aggregation switch gets one packet of each of the edge's cycles, so each run of
//!   n1 · n2 packets of a flow, from its first, crosses its n1 · n2 paths once each, as each of
//!   htsim's cycles does; the two differ in the orders they can take: htsim's, of whole paths,
//!   can send two consecutive packets by the same edge uplink (to different cores), which the
//!   per-hop cycles never do within a cycle. The turns are a fixed table of
//!   [`FLOW_TURN_ENTRIES`] counters indexed by the salted five-tuple hash (as the flowlet
//!   table, so the state per switch does not grow with its flows): flows whose hashes collide
//!   share a turn, each keeping its own order. The two directions of a connection are two
//!   five-tuples, so ACKs cycle on their own, as htsim's receiver's do;
//! - `flowlet`: per flowlet (Kandula, Sinha, Katabi, Vasudevan, "Dynamic load balancing without
//!   packet reordering", CCR 2007): a burst of a flow's packets separated from the previous one
//!   by more than the flowlet gap picks a next hop anew, a packet within the gap keeps its
//!   burst's. As in hardware (CONGA, Alizadeh et al., SIGCOMM 2014, section 3.4), the state is
//!   a fixed table of [`FLOWLET_TABLE_ENTRIES`] entries indexed by the salted five-tuple hash:
//!   flows whose hashes collide share an entry (its next hop and its last-seen time). A new
//!   flowlet's next hop is a uniform draw from the switch's seeded stream, as LetFlow (Vanini
//!   et al., NSDI 2017) chooses: random choice lets flowlets of different sizes even out the
//!   load without any congestion state, where a round robin turn shared by every flow of the
//!   switch would tie the flows' choices to each other's arrival order.
//!
//! Owns the next-hop sets of the switches that choose, with each one's salt, round-robin turn,
//! random stream, flowlet table and per-flow turns; it picks a link for a packet and changes
//! nothing else.

use crate::packet::{LinkId, NodeId, Packet};
// SplitMix64's output function: nearby flow ids spread over the set.
use crate::rng::mix64 as mix;
use crate::rng::{Rng, StreamKind};
use crate::units::{Dur, Time};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

use super::NONE;

/// How a node chooses among equal-cost next hops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MultipathPolicy {
    /// The routing table's one next hop (no choice): today's routes.
    #[default]
    First,
    /// Per flow: a salted hash of the five-tuple.
    Ecmp,
    /// Per packet: round robin.
    Spray,
    /// Per packet: uniform from a seeded stream.
    SprayRandom,
    /// Per packet: each flow cycles through the next hops, in an order of its own per cycle.
    SprayFlow,
    /// Per flowlet: a packet more than the flowlet gap after its flow's previous one draws
    /// anew from a seeded stream, any other keeps the previous one's next hop.
    Flowlet,
}

/// Entries of a switch's flowlet table: CONGA's 64K (Alizadeh et al., SIGCOMM 2014, section
/// 3.4). A power of two, so that the entry is the hash's low bits.
pub const FLOWLET_TABLE_ENTRIES: usize = 1 << 16;

/// The flowlet gap when the scenario sets none: CONGA's flowlet inactivity timeout, 500 µs
/// (Alizadeh et al., SIGCOMM 2014, section 3.4), longer than a fabric's RTT under load.
pub const DEFAULT_FLOWLET_GAP: Dur = Dur::from_micros(500);

/// Per-flow turns of a `spray_flow` switch: as many as the flowlet table's entries (CONGA's
/// 64K, Alizadeh et al., SIGCOMM 2014, section 3.4), 4 bytes each (256 KiB a switch, made
/// zeroed at its first choice, so the system maps its pages as entries are first written). A
/// power of two, so that the entry is the hash's low bits.
pub const FLOW_TURN_ENTRIES: usize = 1 << 16;

/// A switch's flowlet table: per entry, the next hop of the flowlet that last used it, plus one
/// (0: never used), and when its last packet passed, in ns. Two arrays rather than one of
/// pairs: 12 bytes an entry, not 16 (768 KiB a switch). Both start zeroed, which the allocator
/// may take from pages the system maps only when first written.
struct FlowletTable {
    link_plus_one: Box<[u32]>,
    last_seen_ns: Box<[u64]>,
}

impl FlowletTable {
    fn new() -> Self {
        FlowletTable {
            link_plus_one: vec![0; FLOWLET_TABLE_ENTRIES].into(),
            last_seen_ns: vec![0; FLOWLET_TABLE_ENTRIES].into(),
        }
    }
}

/// A node that chooses, and the state its policy needs.
struct Switch {
    policy: MultipathPolicy,
    /// The ECMP hash salt, drawn from the scenario seed (`StreamKind::Routing`).
    salt: u64,
    /// Packets sprayed so far (round robin).
    turn: u64,
    /// Random spraying's draws, and new flowlets'.
    rng: Rng,
    /// The flowlet table of a `flowlet` switch, made at its first choice (a switch that never
    /// chooses, such as a fat-tree's core, or that no flow crosses, keeps none).
    flowlets: Option<FlowletTable>,
    /// The per-flow turns of a `spray_flow` switch, made at its first choice.
    flow_turns: Option<Box<[u32]>>,
}

/// The equal-cost sets of the nodes that choose, and their choosing state.
pub(super) struct Multipath {
    /// Per node: its index in `switches`, or NONE for a node that keeps the table's route.
    slot: Vec<u32>,
    switches: Vec<Switch>,
    cols: usize,
    /// Group of switch s towards column c at `groups[s * cols + c]`; NONE: a single next hop.
    groups: Vec<u32>,
    /// The links of group g are `links[start[g]..start[g + 1]]`, in declaration order.
    start: Vec<u32>,
    links: Vec<u32>,
    /// How long a flow must be idle before its next packet starts a new flowlet.
    flowlet_gap: Dur,
}

/// Whether link i may carry packets (it is up).
pub(super) type Usable<'u> = &'u dyn Fn(usize) -> bool;

/// Builds [`Multipath`] one destination column at a time, from each column's hop distances.
pub(super) struct Builder<'a> {
    ends: &'a [(NodeId, NodeId)],
    /// Per switch: its node and its outgoing links.
    outgoing: Vec<(u32, Vec<u32>)>,
    interned: HashMap<Box<[u32]>, u32>,
    scratch: Vec<u32>,
    mp: Multipath,
}

impl<'a> Builder<'a> {
    /// A builder for the nodes whose policy chooses and that have a table row (`has_row`);
    /// None when no node chooses, so routes without multipath cost nothing more.
    pub fn new(
        nodes: usize,
        policies: &[MultipathPolicy],
        has_row: impl Fn(usize) -> bool,
        (ends, usable): (&'a [(NodeId, NodeId)], Usable),
        cols: usize,
        (seed, flowlet_gap): (u64, Dur),
    ) -> Option<Self> {
        let mut slot = vec![NONE; nodes];
        let mut switches = Vec::new();
        let mut outgoing = Vec::new();
        for (n, &policy) in policies.iter().enumerate().take(nodes) {
            if policy == MultipathPolicy::First || !has_row(n) {
                continue;
            }
            slot[n] = switches.len() as u32;
            let mut rng = Rng::stream(seed, StreamKind::Routing, n as u64);
            let salt = rng.next_u64();
            switches.push(Switch { policy, salt, turn: 0, rng, flowlets: None, flow_turns: None });
            outgoing.push((n as u32, Vec::new()));
        }
        if switches.is_empty() {
            return None;
        }
        for (i, &(from, _)) in ends.iter().enumerate().filter(|(i, _)| usable(*i)) {
            let s = slot[from.index()];
            if s != NONE {
                outgoing[s as usize].1.push(i as u32);
            }
        }
        let groups = vec![NONE; switches.len() * cols];
        let mp = Multipath { slot, switches, cols, groups, start: vec![0], links: Vec::new(), flowlet_gap };
        Some(Builder { ends, outgoing, interned: HashMap::new(), scratch: Vec::new(), mp })
    }

    /// Record each switch's equal-cost set towards column `col`, given every node's hop count
    /// `dist` to the column's destination (NONE: does not reach it).
    pub fn column(&mut self, col: usize, dist: &[u32]) {
        for (s, (n, out)) in self.outgoing.iter().enumerate() {
            let d = dist[*n as usize];
            if d == NONE || d == 0 {
                continue;
            }
            self.scratch.clear();
            let on_a_shortest_path = |&&l: &&u32| {
                let to = dist[self.ends[l as usize].1.index()];
                to != NONE && to + 1 == d
            };
            self.scratch.extend(out.iter().filter(on_a_shortest_path));
            if self.scratch.len() >= 2 {
                self.mp.groups[s * self.mp.cols + col] = intern(&mut self.interned, &mut self.mp, &self.scratch);
            }
        }
    }

    pub fn finish(self) -> Multipath {
        self.mp
    }
}

/// The id of the group holding `set`, adding it if new.
fn intern(interned: &mut HashMap<Box<[u32]>, u32>, mp: &mut Multipath, set: &[u32]) -> u32 {
    if let Some(&g) = interned.get(set) {
        return g;
    }
    let g = (mp.start.len() - 1) as u32;
    mp.links.extend_from_slice(set);
    mp.start.push(mp.links.len() as u32);
    interned.insert(set.into(), g);
    g
}

impl Multipath {
    /// Where in `links` the equal-cost next hops of node `at` towards column `col` are, if it
    /// chooses among two or more there.
    #[inline]
    fn group(&self, at: NodeId, col: u32) -> Option<std::ops::Range<usize>> {
        let s = *self.slot.get(at.index())?;
        if s == NONE {
            return None;
        }
        let g = self.groups[s as usize * self.cols + col as usize] as usize;
        (g != NONE as usize).then(|| self.start[g] as usize..self.start[g + 1] as usize)
    }

    /// The next hop node `at` chooses for `pkt` towards column `col` at time `now`, or None
    /// where it keeps the table's route.
    #[inline]
    pub fn choose(&mut self, at: NodeId, col: u32, pkt: &Packet, now: Time) -> Option<LinkId> {
        let set = self.group(at, col)?;
        let n = set.len() as u64;
        let sw = &mut self.switches[self.slot[at.index()] as usize];
        let i = match sw.policy {
            MultipathPolicy::First => return None,
            MultipathPolicy::Ecmp => pick(five_tuple_hash(sw.salt, pkt), n),
            MultipathPolicy::Spray => {
                sw.turn += 1;
                (sw.turn - 1) % n
            }
            MultipathPolicy::SprayRandom => sw.rng.range_inclusive(0, n - 1),
            MultipathPolicy::SprayFlow => flow_cycle_choice(sw, pkt, n),
            MultipathPolicy::Flowlet => {
                return Some(LinkId(flowlet_choice(sw, &self.links[set], pkt, now, self.flowlet_gap)));
            }
        };
        Some(LinkId(self.links[set.start + i as usize]))
    }

    /// Every equal-cost next hop of `at` towards column `col`, when it chooses there.
    #[cfg(test)]
    pub fn set(&self, at: NodeId, col: u32) -> Option<impl Iterator<Item = LinkId> + '_> {
        self.group(at, col).map(|r| self.links[r].iter().map(|&l| LinkId(l)))
    }

    /// Distinct equal-cost sets and per-(switch, column) entries (for memory accounting).
    #[cfg(test)]
    pub fn sizes(&self) -> (usize, usize) {
        (self.start.len() - 1, self.groups.len())
    }
}

/// The next hop of `pkt` at a `flowlet` switch, among `set`, at time `now`: its table entry's
/// next hop when the entry's last packet passed at most `gap` ago and that hop leads towards
/// `pkt`'s destination too (a colliding flow may have set it for another), else a new draw,
/// which the entry keeps. Either way the entry's last-seen time becomes `now`.
fn flowlet_choice(sw: &mut Switch, set: &[u32], pkt: &Packet, now: Time, gap: Dur) -> u32 {
    let hash = five_tuple_hash(sw.salt, pkt);
    let table = sw.flowlets.get_or_insert_with(FlowletTable::new);
    let e = hash as usize & (FLOWLET_TABLE_ENTRIES - 1);
    let idle = now.saturating_sub(Time(table.last_seen_ns[e]));
    table.last_seen_ns[e] = now.0;
    let kept = table.link_plus_one[e].wrapping_sub(1);
    if kept != NONE && idle <= gap && set.contains(&kept) {
        return kept;
    }
    let chosen = set[sw.rng.range_inclusive(0, set.len() as u64 - 1) as usize];
    table.link_plus_one[e] = chosen + 1;
    chosen
}

/// The index among `n` next hops of `pkt` at a `spray_flow` switch: the next turn of its
/// flow's entry, placed by the order of that turn's cycle (a permutation drawn from the flow's
/// salted hash and the cycle number, so each flow has its own order, anew each cycle).
fn flow_cycle_choice(sw: &mut Switch, pkt: &Packet, n: u64) -> u64 {
    let hash = five_tuple_hash(sw.salt, pkt);
    let turns = sw.flow_turns.get_or_insert_with(|| vec![0; FLOW_TURN_ENTRIES].into());
    let turn = &mut turns[hash as usize & (FLOW_TURN_ENTRIES - 1)];
    let t = *turn as u64;
    *turn = turn.wrapping_add(1);
    permuted(mix(hash ^ (t / n)), n, t % n)
}

/// Element `i` of the permutation of 0..n that `seed` draws: htsim's `permute_sequence`
/// (sim/ndp.cpp: Fisher-Yates from the end, step j swapping the entry at a uniform index below
/// n − j with the one at n − 1 − j), with step j's draw `pick(mix(seed + j), n − j)` in place
/// of `random()`. Counter-based draws let it follow the one entry back through the swaps,
/// last first, without building the permutation: O(n) time, no memory.
pub(crate) fn permuted(seed: u64, n: u64, i: u64) -> u64 {
    let mut at = i;
    for j in (0..n).rev() {
        let (a, b) = (pick(mix(seed.wrapping_add(j)), n - j), n - 1 - j);
        if at == a {
            at = b;
        } else if at == b {
            at = a;
        }
    }
    at
}

/// The salted hash of a packet's five-tuple: source and destination node (the addresses), the
/// flow id and a multipath subflow's index (together standing for the port pair, the index
/// above the flow id's 32 bits: 0, changing nothing, for every packet but a subflow's) and the
/// protocol. Every fragment of a datagram and every packet of a flow (or subflow) in one
/// direction hash alike, so they keep one path.
pub fn five_tuple_hash(salt: u64, pkt: &Packet) -> u64 {
    let addresses = (pkt.src.0 as u64) << 32 | pkt.dst.0 as u64;
    let ports = (pkt.flow.0 as u64) << 8 ^ crate::packet::subflow::index(pkt.seq) << 40;
    let ports_and_proto = ports | pkt.proto as u64;
    mix(mix(salt ^ addresses) ^ ports_and_proto)
}

/// `hash` mapped onto 0..n by multiply-shift (Lemire 2019): no division, bias below n / 2⁶⁴.
fn pick(hash: u64, n: u64) -> u64 {
    ((hash as u128 * n as u128) >> 64) as u64
}
