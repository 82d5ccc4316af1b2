//! The flows of a run and their endpoints, stored so that memory follows the flows that are
//! active: the scenario's listed flows live for the whole run, while a workload's arrivals are
//! built when they arrive and reclaimed once they can no longer act.
//!
//! Ids are dense and never reused: flow `f` has sender `AgentId(2f)` and receiver
//! `AgentId(2f + 1)`. The listed flows take the first ids; arrivals follow in the order they
//! arrive, kept in a window (a deque) from the oldest arrival not yet released to the newest.
//!
//! An arrival is reclaimed when nothing can change it any more ([`Flows::reclaimable`]): both
//! endpoints are quiescent (no timer armed, nothing a Source Quench would change) and no packet
//! of the flow is in the network. Its flows-table row is then final, so it is taken there and
//! then and the endpoints are dropped. A stale timer event of a reclaimed endpoint finds no
//! endpoint and is skipped, as the endpoint itself would have ignored it.
//!
//! It also writes the flows table's rows (`flow_rows`), from the flows and what their endpoints
//! report, for the results and for the world when it streams released arrivals' rows. It
//! knows nodes only by the names it is handed, and schedules nothing.

use crate::packet::{AgentId, FlowId, NodeId};
use crate::trace::table::{f64s, secs, strs, u64s, Column, Table};
use crate::transport::{self, Agent, Endpoint, FlowRow};
use crate::units::Time;
use std::collections::VecDeque;

/// A flow as declared, with the endpoints that realise it.
pub struct FlowInfo {
    pub name: String,
    pub kind: &'static str,
    pub cc: &'static str,
    pub src: NodeId,
    pub dst: NodeId,
    pub sender: AgentId,
    pub start: Time,
    pub bytes: Option<u64>,
    /// The options of its SYN and SYN-ACK, for a capture (none for a transport without a
    /// TCP handshake).
    pub handshake: crate::packet::Handshake,
    /// Seconds the flow takes alone on the idle network (`fct.rs`); NaN where undefined.
    pub ideal_fct_s: f64,
    /// The flow's data gathers in-band telemetry and its ACKs echo it (`telemetry.rs`), in
    /// this header.
    pub telemetry: Option<crate::telemetry::IntHeader>,
    /// The priority its packets travel in (IEEE 802.1p; `packet::FlowPriorities`).
    pub priority: u8,
}

/// A flow whose row is final: the flow as declared and what its endpoints reported.
pub struct FinishedFlow {
    pub info: FlowInfo,
    pub row: FlowRow,
}

/// An arrival in the window.
struct Arrival {
    info: FlowInfo,
    state: ArrivalState,
}

enum ArrivalState {
    Live {
        /// Packets of the flow sent and neither delivered nor dropped yet.
        in_network: u32,
        /// Never reclaimed: some packet of the flow was cut into fragments, which the count
        /// does not follow through reassembly.
        pinned: bool,
    },
    Finished(Box<FlowRow>),
}

/// The endpoints, indexed by `AgentId`. Taken out of the world while one of them acts.
#[derive(Default)]
pub struct Agents {
    listed: Vec<Agent>,
    /// The endpoints of the arrivals in the flows' window, `None` once reclaimed.
    arrived: VecDeque<Option<Box<[Agent; 2]>>>,
    /// Flow id of `arrived[0]`.
    first: u32,
}

impl Agents {
    /// Whether no endpoint is held (the placeholder left while the endpoints are out).
    pub fn is_empty(&self) -> bool {
        self.listed.is_empty() && self.arrived.is_empty()
    }

    pub fn get_mut(&mut self, id: AgentId) -> Option<&mut Agent> {
        let i = id.index();
        if i < self.listed.len() {
            return Some(&mut self.listed[i]);
        }
        // A released arrival's id lies below the window: its stale timers find no endpoint.
        let slot = (i / 2).checked_sub(self.first as usize)?;
        let pair = self.arrived.get_mut(slot)?.as_mut()?;
        Some(&mut pair[i % 2])
    }

    fn pair(&self, f: FlowId) -> Option<(&Agent, &Agent)> {
        let i = f.index();
        if 2 * i < self.listed.len() {
            return Some((&self.listed[2 * i], &self.listed[2 * i + 1]));
        }
        let pair = self.arrived.get(i.checked_sub(self.first as usize)?)?.as_ref()?;
        Some((&pair[0], &pair[1]))
    }
}

/// Every flow's declaration and, for arrivals, what reclaiming them needs.
#[derive(Default)]
pub struct Flows {
    listed: Vec<FlowInfo>,
    window: VecDeque<Arrival>,
    /// Flow id of `window[0]`.
    first: u32,
    /// Finished arrivals older than every arrival in the window, in id order, not yet taken
    /// (`take_released`, when records stream to disk).
    released: Vec<FinishedFlow>,
    /// Flow id of `released[0]`.
    released_first: u32,
    /// Arrivals whose endpoints are held.
    held: usize,
}

impl Flows {
    /// The scenario's listed flows (ids 0, 1, ...) and their endpoints, two per flow.
    pub fn listed(flows: Vec<FlowInfo>, agents: Vec<Agent>) -> (Flows, Agents) {
        debug_assert_eq!(agents.len(), 2 * flows.len(), "two endpoints per flow");
        let first = flows.len() as u32;
        let flows = Flows { listed: flows, first, released_first: first, ..Default::default() };
        (flows, Agents { listed: agents, first, ..Default::default() })
    }

    /// Whether any flow listed in the scenario has property `p`.
    pub fn any_listed(&self, p: impl Fn(&FlowInfo) -> bool) -> bool {
        self.listed.iter().any(p)
    }

    /// The flows listed in the scenario, with their ids.
    pub fn listed_infos(&self) -> impl Iterator<Item = (FlowId, &FlowInfo)> {
        self.listed.iter().enumerate().map(|(i, f)| (FlowId(i as u32), f))
    }

    /// Flows so far, listed and arrived (the next arrival's id).
    pub fn count(&self) -> u32 {
        self.first + self.window.len() as u32
    }

    /// Ids and endpoints of the next flow.
    pub fn next_ids(&self) -> (FlowId, AgentId, AgentId) {
        let f = self.count();
        (FlowId(f), AgentId(2 * f), AgentId(2 * f + 1))
    }

    /// Add an arrival built with the ids `next_ids` gave.
    pub fn arrive(&mut self, agents: &mut Agents, info: FlowInfo, sender: Agent, receiver: Agent) {
        debug_assert_eq!(info.sender, self.next_ids().1);
        self.window.push_back(Arrival { info, state: ArrivalState::Live { in_network: 0, pinned: false } });
        self.held += 1;
        agents.arrived.push_back(Some(Box::new([sender, receiver])));
    }

    /// Arrivals whose endpoints are held (not yet reclaimed).
    pub fn arrivals_held(&self) -> usize {
        self.held
    }

    pub fn info(&self, f: FlowId) -> &FlowInfo {
        if f.index() < self.listed.len() {
            return &self.listed[f.index()];
        }
        match f.0.checked_sub(self.first) {
            Some(i) => &self.window[i as usize].info,
            // Asked only of flows with packets in the network, which are never taken.
            None => &self.released[(f.0 - self.released_first) as usize].info,
        }
    }

    #[inline]
    fn live_arrival(&mut self, f: FlowId) -> Option<(&mut u32, &mut bool)> {
        if f.0 < self.first {
            return None; // listed, or released: not followed
        }
        let i = f.0 - self.first;
        match &mut self.window.get_mut(i as usize)?.state {
            ArrivalState::Live { in_network, pinned } => Some((in_network, pinned)),
            ArrivalState::Finished(_) => None,
        }
    }

    /// When listed flow `f` completed (its last byte delivered), if it has.
    pub fn completion(&self, agents: &Agents, f: FlowId) -> Option<Time> {
        let (sender, receiver) = agents.pair(f)?;
        row_of(sender, receiver).completion
    }

    /// Listed flow `f`, which waited for others, starts at `at`: its row counts from then.
    /// Returns its sender.
    pub fn start_listed(&mut self, f: FlowId, at: Time) -> AgentId {
        let info = &mut self.listed[f.index()];
        info.start = at;
        info.sender
    }

    /// A packet of flow `f` entered the network.
    #[inline]
    pub fn sent(&mut self, f: FlowId) {
        if let Some((n, _)) = self.live_arrival(f) {
            *n += 1;
        }
    }

    /// A packet of flow `f` left the network (delivered or dropped): true when that may have
    /// made the flow reclaimable.
    #[inline]
    pub fn left(&mut self, f: FlowId) -> bool {
        match self.live_arrival(f) {
            Some((n, pinned)) => {
                *n = n.saturating_sub(1);
                *n == 0 && !*pinned
            }
            None => false,
        }
    }

    /// A packet of flow `f` was cut into fragments.
    pub fn fragmented(&mut self, f: FlowId) {
        if let Some((_, pinned)) = self.live_arrival(f) {
            *pinned = true;
        }
    }

    /// Whether `f` is an arrival (a candidate for reclaiming).
    #[inline]
    pub fn is_arrival(&self, f: FlowId) -> bool {
        f.0 >= self.listed.len() as u32
    }

    /// Whether arrival `f` can be reclaimed now.
    pub fn reclaimable(&self, agents: &Agents, f: FlowId) -> bool {
        let Some(i) = f.0.checked_sub(self.first) else { return false };
        let Some(ArrivalState::Live { in_network: 0, pinned: false }) = self.window.get(i as usize).map(|a| &a.state)
        else {
            return false;
        };
        agents.pair(f).is_some_and(|(s, r)| s.is_quiescent() && r.is_quiescent())
    }

    /// Take arrival `f`'s final row and drop its endpoints (call when `reclaimable`).
    pub fn reclaim(&mut self, agents: &mut Agents, f: FlowId) {
        let i = (f.0 - self.first) as usize;
        let pair = agents.arrived[i].take().expect("a live arrival has its endpoints");
        self.window[i].state = ArrivalState::Finished(Box::new(row_of(&pair[0], &pair[1])));
        self.held -= 1;
        self.release(agents);
    }

    /// Move the finished arrivals at the front of the window out of it.
    fn release(&mut self, agents: &mut Agents) {
        while self.window.front().is_some_and(|a| matches!(a.state, ArrivalState::Finished(_))) {
            let Some(Arrival { info, state: ArrivalState::Finished(row) }) = self.window.pop_front() else {
                unreachable!("the front arrival is finished")
            };
            self.released.push(FinishedFlow { info, row: *row });
            agents.arrived.pop_front();
            self.first += 1;
            agents.first += 1;
        }
    }

    /// Finished arrivals released and not yet taken.
    pub fn released_len(&self) -> usize {
        self.released.len()
    }

    /// Take the released arrivals, the oldest first, with the id of the first.
    pub fn take_released(&mut self) -> (FlowId, Vec<FinishedFlow>) {
        let first = FlowId(self.released_first);
        self.released_first += self.released.len() as u32;
        (first, std::mem::take(&mut self.released))
    }

    /// The listed flows in id order with their rows (taken now from their endpoints).
    pub fn listed_rows<'a>(&'a self, agents: &'a Agents) -> impl Iterator<Item = (FlowId, &'a FlowInfo, FlowRow)> + 'a {
        self.listed.iter().enumerate().map(move |(i, info)| {
            let id = FlowId(i as u32);
            let (s, r) = agents.pair(id).expect("listed flows keep their endpoints");
            (id, info, row_of(s, r))
        })
    }

    /// The arrivals not yet taken in id order with their rows: released ones, then the window.
    pub fn arrival_rows<'a>(
        &'a self,
        agents: &'a Agents,
    ) -> impl Iterator<Item = (FlowId, &'a FlowInfo, FlowRow)> + 'a {
        let released = self.released.iter().enumerate();
        let released = released.map(|(i, d)| (FlowId(self.released_first + i as u32), &d.info, d.row.clone()));
        let window = self.window.iter().enumerate().map(move |(i, a)| {
            let id = FlowId(self.first + i as u32);
            match &a.state {
                ArrivalState::Live { .. } => {
                    let (s, r) = agents.pair(id).expect("a live arrival has its endpoints");
                    (id, &a.info, row_of(s, r))
                }
                ArrivalState::Finished(row) => (id, &a.info, (**row).clone()),
            }
        });
        released.chain(window)
    }

    /// The senders still held, in id order: the listed flows', then the live arrivals'.
    pub fn senders<'a>(&'a self, agents: &'a Agents) -> impl Iterator<Item = (FlowId, &'a Agent)> + 'a {
        let listed = (0..self.listed.len() as u32).map(FlowId);
        let window = (0..self.window.len() as u32).map(|i| FlowId(self.first + i));
        listed.chain(window).filter_map(move |id| agents.pair(id).map(|(s, _)| (id, s)))
    }

    /// Every flow not yet taken, in id order, with its row.
    pub fn rows<'a>(&'a self, agents: &'a Agents) -> impl Iterator<Item = (FlowId, &'a FlowInfo, FlowRow)> + 'a {
        self.listed_rows(agents).chain(self.arrival_rows(agents))
    }
}

/// A flow's row as its endpoints report it.
fn row_of(sender: &Agent, receiver: &Agent) -> FlowRow {
    let mut r = FlowRow::undefined();
    transport::report(sender, receiver, &mut r);
    r
}

/// The flows table's name.
pub(crate) const FLOWS: &str = "flows";

/// Flows-table rows of `flows`: (id, declaration, what its endpoints reported). Goodput is over
/// the flow's active period: from its start to completion, or to `end` for a flow that did
/// not complete.
pub(crate) fn flow_rows<'a>(
    node: impl Fn(NodeId) -> String,
    end: Time,
    flows: impl Iterator<Item = (FlowId, &'a FlowInfo, FlowRow)>,
) -> Table {
    let (ids, (fs, rows)): (Vec<u32>, (Vec<&FlowInfo>, Vec<FlowRow>)) = flows.map(|(id, f, r)| (id.0, (f, r))).unzip();
    let goodput = fs.iter().zip(&rows).map(|(f, r)| {
        let active = (r.completion.unwrap_or(end).saturating_sub(f.start)).as_secs_f64();
        if active > 0.0 {
            r.bytes_delivered as f64 * 8.0 / active
        } else {
            0.0
        }
    });
    Table::new(FLOWS)
        .with("flow", Column::U32(ids))
        .with("name", strs(fs.iter().map(|f| f.name.clone())))
        .with("kind", strs(fs.iter().map(|f| f.kind.to_string())))
        .with("cc", strs(fs.iter().map(|f| f.cc.to_string())))
        .with("src", strs(fs.iter().map(|f| node(f.src))))
        .with("dst", strs(fs.iter().map(|f| node(f.dst))))
        .with("start_s", f64s(fs.iter().map(|f| f.start.as_secs_f64())))
        .with("bytes_requested", f64s(fs.iter().map(|f| f.bytes.map_or(f64::NAN, |b| b as f64))))
        .with("bytes_sent", u64s(rows.iter().map(|r| r.bytes_sent)))
        .with("bytes_delivered", u64s(rows.iter().map(|r| r.bytes_delivered)))
        .with("goodput_bps", f64s(goodput))
        .with("completion_s", f64s(rows.iter().map(|r| secs(r.completion))))
        .with(
            "response_time_s",
            f64s(fs.iter().zip(&rows).map(|(f, r)| r.completion.map_or(f64::NAN, |c| (c - f.start).as_secs_f64()))),
        )
        .with("packets_sent", u64s(rows.iter().map(|r| r.packets_sent)))
        .with("packets_received", u64s(rows.iter().map(|r| r.packets_received)))
        .with("retransmitted_segments", u64s(rows.iter().map(|r| r.retransmitted_segments)))
        .with("timeouts", u64s(rows.iter().map(|r| r.timeouts)))
        .with("fast_retransmits", u64s(rows.iter().map(|r| r.fast_retransmits)))
        .with("reordered_segments", u64s(rows.iter().map(|r| r.reordered_segments)))
        .with("duplicate_segments", u64s(rows.iter().map(|r| r.duplicate_segments)))
        .with("dsacks_received", u64s(rows.iter().map(|r| r.dsacks_received)))
        .with("final_cwnd_bytes", f64s(rows.iter().map(|r| r.cwnd)))
        .with("srtt_s", f64s(rows.iter().map(|r| r.srtt_s)))
        .with("mean_rtt_s", f64s(rows.iter().map(|r| r.mean_rtt_s)))
        .with("mean_delay_s", f64s(rows.iter().map(|r| r.mean_delay_s)))
        .with("aborted", Column::U8(rows.iter().map(|r| r.aborted as u8).collect()))
        .with("ideal_fct_s", f64s(fs.iter().map(|f| f.ideal_fct_s)))
        .with("slowdown", f64s(fs.iter().zip(&rows).map(|(f, r)| slowdown(f, r))))
}

/// Response time over the flow's ideal (`fct.rs`); NaN where it did not complete.
fn slowdown(f: &FlowInfo, r: &FlowRow) -> f64 {
    r.completion.map_or(f64::NAN, |c| (c - f.start).as_secs_f64() / f.ideal_fct_s)
}
