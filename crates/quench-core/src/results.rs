//! Results of a run: the summary tables (one row per link, one per flow), the recorded time
//! series, pcap captures, and run metadata. Everything a user sees is derived here from the
//! components' own counters; nothing is estimated.
//!
//! It reads the world and never changes a component's state; the flows table's rows are
//! `flows.rs`'s, so that the world can write released arrivals' rows without this module.

use crate::flows::{flow_rows, FLOWS};
use crate::qdisc::DropReason;
use crate::trace::table::{f64s, strs, u64s, Column, Table};
use crate::units::{Dur, Time};
use crate::world::{link_name, World};

pub struct RunResult {
    /// Every table; when the run streamed its records, a time-series table with rows on disk
    /// is an empty placeholder (no columns) and the spill folder's manifest describes it.
    pub tables: Vec<Table>,
    /// (link name, pcap file bytes) of the captures kept in memory (not those streamed to files)
    pub pcaps: Vec<(String, Vec<u8>)>,
    /// The first error writing streamed records or captures: the files are incomplete.
    pub output_error: Option<String>,
    pub events_executed: u64,
    pub end_time: Time,
    pub seed: u64,
}

impl RunResult {
    pub fn table(&self, name: &str) -> &Table {
        self.tables.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("no table named {name}"))
    }
}

fn links_table(w: &World) -> Table {
    let elapsed = w.now.as_secs_f64();
    let ls = &w.links;
    // Each link's statistics brought up to now (the run need not be over), read again for each
    // column: a copy of every link's statistics at once took 208 bytes a link (8.3 MB at
    // 40,002 links) beside the table while the network is held.
    let st = || ls.iter().map(|l| l.stats_at(w.now));
    let node = |n: crate::packet::NodeId| w.nodes[n.index()].name.clone();
    let mut t = Table::new("links")
        .with("link", Column::U32((0..ls.len() as u32).collect()))
        .with("name", strs(ls.iter().map(|l| link_name(&w.nodes, l))))
        .with("from", strs(ls.iter().map(|l| node(l.from))))
        .with("to", strs(ls.iter().map(|l| node(l.to))))
        .with("qdisc", strs(ls.iter().map(|l| l.qdisc.kind().to_string())))
        .with("rate_bps", u64s(ls.iter().map(|l| l.rate().0)))
        .with("delay_s", f64s(ls.iter().map(|l| l.delay.as_secs_f64())))
        .with("arrived_packets", u64s(st().map(|s| s.arrived_packets)))
        .with("arrived_bytes", u64s(st().map(|s| s.arrived_bytes)))
        .with("departed_packets", u64s(st().map(|s| s.departed_packets)))
        .with("departed_bytes", u64s(st().map(|s| s.departed_bytes)))
        .with("delivered_packets", u64s(st().map(|s| s.delivered_packets)))
        .with("dropped_packets", u64s(st().map(|s| s.dropped_in_queue())))
        .with("dropped_bytes", u64s(st().map(|s| s.dropped_in_queue_bytes())));
    // Corruption's column only where a link corrupts, and those of a link going down only
    // where one may: tables of runs without them keep their form.
    let corrupts = ls.iter().any(|l| l.corrupts());
    let may_fail = w.changes_take_links_down();
    for reason in DropReason::ALL {
        let shown = match reason {
            DropReason::Corrupted => corrupts,
            DropReason::LinkDown | DropReason::LinkCut => may_fail,
            _ => true,
        };
        if !shown {
            continue;
        }
        let col = u64s(st().map(|s| s.dropped_packets[reason as usize]));
        t = t.with(&format!("drops_{}", reason.name()), col);
    }
    let t = t
        .with("marked_packets", u64s(st().map(|s| s.marked_packets)))
        .with("backlog_packets", u64s(ls.iter().map(|l| l.backlog().packets)))
        .with("backlog_bytes", u64s(ls.iter().map(|l| l.backlog().bytes)))
        .with("in_flight_packets", u64s(ls.iter().map(|l| l.in_flight())))
        .with("utilization", f64s(st().map(|s| s.busy.as_secs_f64() / elapsed)))
        .with("mean_sojourn_s", f64s(st().map(|s| s.sojourn_sum.as_secs_f64() / s.departed_packets as f64)))
        .with("max_sojourn_s", f64s(st().map(|s| s.sojourn_max.as_secs_f64())))
        .with("mean_backlog_packets", f64s(st().map(|s| s.backlog_packet_ns as f64 / w.now.0 as f64)))
        .with("mean_backlog_bytes", f64s(st().map(|s| s.backlog_byte_ns as f64 / w.now.0 as f64)))
        .with("max_backlog_packets", u64s(st().map(|s| s.max_backlog_packets)))
        .with("max_backlog_bytes", u64s(st().map(|s| s.max_backlog_bytes)));
    with_pfc_columns(w, with_device_queue_columns(w, t))
}

/// The split of each link's queueing time between its qdisc and its device queue (`link.rs`),
/// only in runs where a link has a device queue, so that other runs' tables keep their form.
/// A link without one spent all of it in the qdisc. The means are over departed packets, as
/// `mean_sojourn_s` is, so the two add up to it.
fn with_device_queue_columns(w: &World, t: Table) -> Table {
    let ls = &w.links;
    if !ls.iter().any(|l| l.has_device_queue()) {
        return t;
    }
    let device = || ls.iter().map(|l| l.device_sojourn().unwrap_or_default());
    let departed = || ls.iter().map(|l| l.stats_at(w.now).departed_packets as f64);
    let total = || ls.iter().map(|l| l.stats_at(w.now).sojourn_sum);
    let qdisc = total().zip(device()).zip(departed()).map(|((all, d), n)| Dur(all.0 - d.sum.0).as_secs_f64() / n);
    t.with("mean_qdisc_sojourn_s", f64s(qdisc))
        .with("mean_device_sojourn_s", f64s(device().zip(departed()).map(|(d, n)| d.sum.as_secs_f64() / n)))
        .with("max_device_sojourn_s", f64s(device().map(|d| d.max.as_secs_f64())))
}

/// PFC's columns (`pfc.rs`), only in runs with PFC, so that other runs' tables keep their form:
/// pauses that took effect on the link, the time it spent paused, and the most bytes its far
/// end held from it at once (beyond `xoff`, the headroom the pauses needed).
fn with_pfc_columns(w: &World, t: Table) -> Table {
    let Some(pfc) = w.pfc() else { return t };
    let st = || (0..w.links.len()).map(|l| pfc.port_stats(crate::packet::LinkId(l as u32), w.now));
    t.with("pfc_pauses", u64s(st().map(|s| s.pauses)))
        .with("pfc_paused_s", f64s(st().map(|s| s.paused_for.as_secs_f64())))
        .with("pfc_max_ingress_bytes", u64s(st().map(|s| s.max_held.0)))
}

/// The cycles of paused links PFC found (`pfc.rs`): when each closed, its links, and whether
/// all of them were still paused at the end (a deadlock nothing resolved). Empty without PFC.
fn pfc_cycles_table(w: &World) -> Table {
    let (cycles, still): (&[crate::pfc::PauseCycle], Vec<u64>) = match w.pfc() {
        Some(pfc) => (pfc.cycles().0, pfc.cycles().0.iter().map(|c| pfc.still_paused(c) as u64).collect()),
        None => (&[], Vec::new()),
    };
    let names = |c: &crate::pfc::PauseCycle| {
        let names: Vec<String> = c.links.iter().map(|l| link_name(&w.nodes, &w.links[l.index()])).collect();
        names.join(" ")
    };
    Table::new("pfc_cycles")
        .with("time_s", f64s(cycles.iter().map(|c| c.at.as_secs_f64())))
        .with("links", strs(cycles.iter().map(names)))
        .with("hops", u64s(cycles.iter().map(|c| c.links.len() as u64)))
        .with("priority", u64s(cycles.iter().map(|c| c.priority as u64)))
        .with("still_paused", u64s(still.into_iter()))
}

fn flows_table(w: &World) -> Table {
    flow_rows(|n| w.nodes[n.index()].name.clone(), w.now, w.flows.rows(&w.agents))
}

/// One row per node: its IP layer's fragmentation and reassembly counters.
fn nodes_table(w: &World) -> Table {
    let n = &w.nodes;
    let frag = &w.fragmentation;
    // A node that never got a fragment has no reassembly state: zero in every column.
    let re = |f: fn(&crate::ip::ReassemblyStats) -> u64| {
        u64s(w.reassembly.iter().map(move |r| r.as_ref().map_or(0, |r| f(&r.stats))))
    };
    Table::new("nodes")
        .with("node", Column::U32((0..n.len() as u32).collect()))
        .with("name", strs(n.iter().map(|x| x.name.clone())))
        .with("kind", strs(n.iter().map(|x| if x.is_router { "router" } else { "host" }.to_string())))
        .with("datagrams_fragmented", u64s(frag.iter().map(|f| f.datagrams_fragmented)))
        .with("fragments_created", u64s(frag.iter().map(|f| f.fragments_created)))
        .with("fragments_received", re(|s| s.fragments_received))
        .with("datagrams_reassembled", re(|s| s.datagrams_reassembled))
        .with("reassembly_timeouts", re(|s| s.timeouts))
        .with("reassembly_overflows", re(|s| s.overflows))
        .with("reassembly_discarded_bytes", re(|s| s.discarded_bytes))
        .with("reassembly_held_bytes", u64s(w.reassembly.iter().map(|r| r.as_ref().map_or(0, |r| r.held_bytes()))))
}

/// The flows table when released arrivals' rows already stream to disk: the rest of the
/// arrivals follow them there, then the listed flows, and the table is read listed flows first.
/// Returns the placeholder that keeps the table's place.
fn spill_flows(w: &mut World) -> Table {
    let stored = w.rec.spill_rows(FLOWS);
    let nodes = &w.nodes;
    let name = |n: crate::packet::NodeId| nodes[n.index()].name.clone();
    let arrivals = flow_rows(name, w.now, w.flows.arrival_rows(&w.agents));
    let listed = flow_rows(name, w.now, w.flows.listed_rows(&w.agents));
    let (a, l) = (arrivals.rows() as u64, listed.rows() as u64);
    w.rec.spill_table(&arrivals);
    w.rec.spill_table(&listed);
    w.rec.spill_order(FLOWS, vec![[stored + a, stored + a + l], [0, stored + a]]);
    Table::new(FLOWS)
}

/// The summary tables (links, flows, nodes) as they stand now, without ending the run. When
/// the run streams a workload's released arrivals to disk, the flows table holds only the
/// flows still in memory.
pub fn summary_now(w: &World) -> Vec<Table> {
    vec![links_table(w), flows_table(w), nodes_table(w)]
}

/// Close the books and gather every table. Each part of the world goes as soon as the tables
/// that read it are made (the packets and events first, the endpoints after the flows tables,
/// the links after theirs and the captures), so that a large network and its tables are not
/// held at once: the tables are the same, in the same order.
pub fn collect(mut w: World) -> RunResult {
    let now = w.now;
    let events_executed = w.events_executed();
    w.release_packets();
    let flows = if w.rec.spill_holds(FLOWS) { spill_flows(&mut w) } else { flows_table(&w) };
    let subflows = crate::transport::mptcp::subflows_table(w.flows.senders(&w.agents));
    w.release_endpoints();
    let nodes = nodes_table(&w);
    let pfc_cycles = pfc_cycles_table(&w);
    let links = links_table(&w);
    let mut pcaps = Vec::new();
    let mut errors = Vec::new();
    for (l, p) in w.pcap.take_all() {
        match p.finish() {
            Ok(Some(bytes)) => pcaps.push((link_name(&w.nodes, &w.links[l.index()]), bytes)),
            Err(e) => errors.push(e),
            Ok(None) => {}
        }
    }
    w.release_links();
    let mut tables = vec![links, flows, nodes, subflows, pfc_cycles];
    let rec = std::mem::take(&mut w.rec);
    let (series, written) = rec.into_tables();
    tables.extend(series);
    let output_error = written.err().or(errors.into_iter().next());
    RunResult { tables, pcaps, output_error, events_executed, end_time: now, seed: w.seed }
}
