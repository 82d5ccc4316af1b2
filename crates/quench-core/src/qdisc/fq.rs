//! Fair queueing: Demers, Keshav & Shenker, "Analysis and Simulation of a Fair Queueing
//! Algorithm", SIGCOMM '89 (DKS; docs/mechanisms.md#fair-queueing).
//!
//! The reference is bit-by-bit round robin (BR): every backlogged flow gets one bit per round.
//! `R(t)` counts rounds; it advances at `dR/dt = C / N_active(t)`, where a flow is active in
//! the fluid system while `R < F_last` (the finish tag of its latest admitted packet). A
//! packet of `P` bits arriving at `t` gets
//!     `S = max(F_last of its flow, R(t))`, `F = S + P`,
//! and the link sends the queued packet with the smallest F (non-preemptive; ties go to the
//! earlier arrival). R is advanced lazily, on arrivals: between events it is piecewise linear,
//! and each flow's exit from the fluid system is one step of the walk, so the cost is
//! O(log n) per packet amortised (ordered sets of finish tags and of flow heads).
//!
//! Buffer: one shared `limit` (packets and/or bytes). When an arrival overflows it, the *last*
//! packet of the flow using the most buffer bytes is dropped (DKS section 2.2) — the arrival
//! itself when its own flow is the heaviest (ties go to the arrival's flow). A dropped packet
//! is taken out of the fluid system too: its flow's `F_last` reverts to the previous packet's
//! tag, as if it had never arrived. Every such drop counts as `Overflow` (the buffer was full;
//! `Preempted` is kept for the Fuzzball's per-source preemption).
//!
//! Parameters: `limit` — "100p", "64KB" or both; default 1000 packets (Linux `txqueuelen`);
//! `advertise_rate` — stamp the router-assisted transport's rate requests with the flow's fair
//! share and its queue here (`rate_advert.rs`; PCP's "fair queueing" ideal), off by default.
//! Owns the per-flow queues, the finish tags and `R(t)`, and the rate advertiser when on. Must not
//! touch: the link, the world or any endpoint; it sees only the packets it is given and its
//! `QdiscCx`.

use super::classify::{over_limit, FlowIndex, Occupancy};
use super::fifo::{default_limit, validate_limit};
use super::rate_advert::RateAdvertiser;
use super::{Backlog, Dequeued, DropReason, Qdisc, QdiscCx};
use crate::error::ConfigError;
use crate::packet::Packet;
use crate::units::{BitRate, Limit, Time, NS_PER_SEC};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, VecDeque};

/// Rounds are counted in nanobits (1e-9 bit) so that `C·dt/N` (bit/s × ns) is an integer
/// with sub-bit resolution: one byte is 8·10⁹ nanobits.
const NANOBITS_PER_BYTE: u128 = 8 * NS_PER_SEC as u128;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FqConfig {
    pub limit: Limit,
    pub advertise_rate: bool,
}

impl Default for FqConfig {
    fn default() -> Self {
        FqConfig { limit: default_limit(), advertise_rate: false }
    }
}

/// A virtual time (round number or finish tag) in nanobits.
type Round = u128;

#[derive(Default)]
struct Flow {
    /// Queued packets with their finish tags and arrival numbers, oldest first.
    queue: VecDeque<(Packet, Round, u64)>,
    /// Finish tag of the flow's latest admitted packet (queued or sent).
    last_finish: Round,
    /// Finish tag of the flow's last packet sent (what `last_finish` reverts to when every
    /// queued packet of the flow is dropped).
    sent_finish: Round,
}

pub struct Fq {
    limit: Limit,
    index: FlowIndex,
    flows: Vec<Flow>,
    /// (F, arrival number, flow) of each flow's head packet: the next to send is the first.
    heads: BTreeSet<(Round, u64, usize)>,
    /// (F_last, flow) of the flows active in the fluid system (F_last > R).
    active: BTreeSet<(Round, usize)>,
    round: Round,
    /// When `round` was last brought up to date.
    clock: Time,
    occupancy: Occupancy,
    advertiser: Option<RateAdvertiser>,
    arrivals: u64,
    packets: u64,
    bytes: u64,
}

impl Fq {
    pub fn new(cfg: &FqConfig) -> Result<Self, ConfigError> {
        validate_limit(&cfg.limit, "limit")?;
        Ok(Fq {
            limit: cfg.limit,
            index: FlowIndex::default(),
            flows: Vec::new(),
            heads: BTreeSet::new(),
            active: BTreeSet::new(),
            round: 0,
            clock: Time::ZERO,
            occupancy: Occupancy::default(),
            advertiser: cfg.advertise_rate.then(RateAdvertiser::default),
            arrivals: 0,
            packets: 0,
            bytes: 0,
        })
    }

    /// Bring R(t) up to `now`: walk through the fluid departures (flows whose F_last is
    /// reached), each changing the slope C/N.
    fn advance(&mut self, now: Time, rate: BitRate) {
        let c = rate.0 as u128;
        while let Some(&(next_exit, _)) = self.active.first() {
            let n = self.active.len() as u128;
            let elapsed = (now - self.clock).0 as u128;
            // bit/s × ns = nanobits; shared by the n active flows.
            let gain = c * elapsed / n;
            if self.round + gain < next_exit {
                self.round += gain;
                break;
            }
            let dt = ((next_exit - self.round) * n).div_ceil(c);
            self.clock = Time(self.clock.0 + dt as u64);
            self.round = next_exit;
            while self.active.first().is_some_and(|&(f, _)| f <= self.round) {
                self.active.pop_first();
            }
        }
        self.clock = now;
    }

    fn set_last_finish(&mut self, f: usize, finish: Round) {
        self.active.remove(&(self.flows[f].last_finish, f));
        self.flows[f].last_finish = finish;
        if finish > self.round {
            self.active.insert((finish, f));
        }
    }

    fn admit(&mut self, pkt: Packet) -> usize {
        let f = self.index.index_of(&pkt);
        if f == self.flows.len() {
            self.flows.push(Flow::default());
        }
        let start = self.flows[f].last_finish.max(self.round);
        let finish = start + pkt.size as Round * NANOBITS_PER_BYTE;
        self.arrivals += 1;
        if self.flows[f].queue.is_empty() {
            self.heads.insert((finish, self.arrivals, f));
        }
        self.flows[f].queue.push_back((pkt, finish, self.arrivals));
        self.set_last_finish(f, finish);
        self.account(f, &pkt, true);
        f
    }

    fn account(&mut self, f: usize, pkt: &Packet, add: bool) {
        let size = pkt.size as u64;
        if add {
            self.occupancy.add(f, size);
            self.packets += 1;
            self.bytes += size;
        } else {
            self.occupancy.remove(f, size);
            self.packets -= 1;
            self.bytes -= size;
        }
    }

    /// Drop flow `f`'s newest packet, taking it out of the fluid system too.
    fn drop_last(&mut self, f: usize, cx: &mut QdiscCx) {
        let (pkt, finish, arrival) = self.flows[f].queue.pop_back().expect("the heaviest flow has packets");
        let flow = &self.flows[f];
        let previous = flow.queue.back().map_or(flow.sent_finish, |q| q.1);
        if flow.queue.is_empty() {
            self.heads.remove(&(finish, arrival, f));
        }
        self.set_last_finish(f, previous);
        self.account(f, &pkt, false);
        cx.drop(pkt, DropReason::Overflow);
    }

    #[cfg(test)]
    fn round_bytes(&self) -> f64 {
        self.round as f64 / NANOBITS_PER_BYTE as f64
    }

    #[cfg(test)]
    fn tags_bytes(&self, flow: usize) -> Vec<f64> {
        self.flows[flow].queue.iter().map(|q| q.1 as f64 / NANOBITS_PER_BYTE as f64).collect()
    }
}

impl Qdisc for Fq {
    fn enqueue(&mut self, mut pkt: Packet, cx: &mut QdiscCx) {
        self.advance(cx.now, cx.link_rate);
        if let Some(advertiser) = self.advertiser.as_mut() {
            let queued = self.occupancy.bytes(self.index.index_of(&pkt));
            advertiser.observe(&mut pkt, queued, cx.link_rate);
        }
        let arriving = self.admit(pkt);
        while over_limit(&self.limit, self.packets, self.bytes) {
            let victim = self.occupancy.heaviest(arriving).expect("an over-full queue holds packets");
            self.drop_last(victim, cx);
        }
    }

    fn dequeue(&mut self, _cx: &mut QdiscCx) -> Dequeued {
        let Some((finish, _, f)) = self.heads.pop_first() else {
            return Dequeued::Empty;
        };
        let flow = &mut self.flows[f];
        let (pkt, _, _) = flow.queue.pop_front().expect("a head belongs to a queued packet");
        flow.sent_finish = finish;
        if let Some(&(_, next, arrival)) = flow.queue.front() {
            self.heads.insert((next, arrival, f));
        }
        self.account(f, &pkt, false);
        Dequeued::Packet(pkt)
    }

    fn backlog(&self) -> Backlog {
        Backlog { packets: self.packets, bytes: self.bytes }
    }
}

#[cfg(test)]
#[path = "fq_tests.rs"]
mod tests;
