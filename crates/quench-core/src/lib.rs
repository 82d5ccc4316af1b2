//! quench-core: a fast, deterministic packet-level simulator of congestion control and queue
//! management. See `docs/design.md` in the repository for the architecture.
//!
//! ```
//! use quench_core::Simulation;
//! let json = r#"{
//!   "duration": "10s", "hosts": ["a", "b"], "routers": ["r"],
//!   "links": [{"from": "a", "to": "r", "rate": "10Mbps", "delay": "1ms"},
//!             {"from": "r", "to": "b", "rate": "1Mbps", "delay": "10ms",
//!              "qdisc": {"kind": "droptail", "limit": "20p"}}],
//!   "flows": [{"kind": "tcp", "src": "a", "dst": "b", "cc": "newreno"}]
//! }"#;
//! let result = Simulation::from_json(json).unwrap().run();
//! let links = result.table("links");
//! assert!(links.f64s("utilization")[2] > 0.9); // r->b, the bottleneck
//! ```
//!
//! This file owns the crate's public facade: the bindings, tests and benches reach the engine
//! only through what it declares public (below); every other module is `pub(crate)`.

// The engine's machinery is the crate's own: every module but the units, the random
// streams and the event queue (which the benches time alone) is `pub(crate)`. The public
// surface is `Simulation`, the scenario, the units, the result tables, the workload spec (whose
// arrivals tests draw as the engine does) and the names of the codes the tables hold.
pub(crate) mod builder;
pub(crate) mod capacity;
pub(crate) mod cc;
pub(crate) mod changes;
#[cfg(test)]
mod deferral_tests;
pub(crate) mod dependencies;
pub(crate) mod dist;
pub(crate) mod error;
pub(crate) mod fct;
pub(crate) mod flow_paths;
pub(crate) mod flows;
pub(crate) mod host_queue;
pub(crate) mod icmp;
pub(crate) mod ip;
pub(crate) mod key_table;
pub(crate) mod limits;
pub(crate) mod link;
#[cfg(test)]
mod order_tests;
pub(crate) mod packet;
pub(crate) mod pfc;
pub(crate) mod qdisc;
pub(crate) mod ranges;
pub(crate) mod results;
pub mod rng;
pub(crate) mod routing;
pub(crate) mod scenario;
pub mod sched;
pub(crate) mod slab;
pub(crate) mod snapshots;
pub(crate) mod tagged;
pub(crate) mod telemetry;
pub(crate) mod topology;
pub(crate) mod trace;
pub(crate) mod transport;
pub mod units;
pub(crate) mod wire;
pub(crate) mod workload;
pub(crate) mod world;

pub use error::{ConfigError, Error};
pub use results::RunResult;
pub use scenario::Scenario;
pub use units::{BitRate, Bytes, Dur, Time};
pub use workload::WorkloadSpec;

/// The result tables: named columns of equal length.
pub mod table {
    pub use crate::trace::table::{Column, Table};
}

/// Multipath TCP's coupled congestion control (RFC 6356 LIA): its alpha and per-ACK increase,
/// closed forms that tests check by hand.
pub mod lia {
    pub use crate::cc::lia::{alpha, increase, SubflowWindow};
}

/// The names of the codes some table columns hold, in code order, and of the disciplines a
/// scenario may name: what a binding lists so that its users can read the codes.
pub mod names {
    /// `drops.reason`.
    pub fn drop_reasons() -> Vec<&'static str> {
        crate::qdisc::DropReason::ALL.iter().map(|r| r.name()).collect()
    }
    /// `tcp_events.event`.
    pub const TCP_EVENTS: &[&str] = &crate::trace::TcpEvent::NAMES;
    /// `pacing.mode`.
    pub const PACING_MODES: &[&str] = crate::cc::PACING_MODES;
    /// A link's `qdisc.kind`.
    pub const QDISCS: &[&str] = crate::qdisc::QdiscSpec::NAMES;
}
use std::path::{Path, PathBuf};

/// A built scenario, ready to run in one go or in steps (for progress reporting).
pub struct Simulation {
    world: world::World,
    snapshots: snapshots::Snapshots,
    /// The files captures stream into (`stream_to`), counted against `budget.record_bytes`.
    capture_files: Vec<PathBuf>,
    /// The scenario's budget, for `budget.record_bytes`.
    budget: scenario::Budget,
    /// Set when the streamed records passed `budget.record_bytes`: the run stops there.
    records_exceeded: Option<ConfigError>,
}

/// How much simulated time a streaming run advances between two looks at the bytes it has
/// streamed (`budget.record_bytes`): ten looks per simulated second cost nothing next to the
/// events between them, and the spill folder stops growing at its limit by itself
/// (`Spill::with_limit`), so the look bounds only the captures and the time run in vain.
const RECORD_CHECK_PERIOD: units::Dur = units::Dur(100_000_000);

impl Simulation {
    pub fn new(scenario: &Scenario) -> Result<Self, ConfigError> {
        let world = builder::build(scenario)?;
        let snapshots = snapshots::Snapshots::new(scenario.record.snapshots.clone());
        let budget = scenario.budget.clone();
        Ok(Simulation { world, snapshots, capture_files: Vec::new(), budget, records_exceeded: None })
    }

    pub fn from_json(json: &str) -> Result<Self, ConfigError> {
        Self::new(&Scenario::from_json(json)?)
    }

    pub fn now(&self) -> Time {
        self.world.now()
    }

    pub fn end(&self) -> Time {
        self.world.end
    }

    pub fn seed(&self) -> u64 {
        self.world.seed
    }

    pub fn events_executed(&self) -> u64 {
        self.world.events_executed()
    }

    /// Events that went through the event queue (those executed less the ends of transmission
    /// carried out without one): the engine's own cost measure, not a result.
    pub fn heap_events(&self) -> u64 {
        self.world.sched.executed()
    }

    /// Workload arrivals whose endpoints are held now: the flows in progress, and finished
    /// ones that still have a packet in the network or a timer armed (`flows.rs`).
    pub fn arrivals_held(&self) -> usize {
        self.world.flows.arrivals_held()
    }

    /// Stream the recorded tables into the folder `spill_dir` (created; see `trace::spill`) and
    /// the captures of the links named in `pcap_files` into those files, instead of keeping
    /// them in memory; call before running. An error names the file it could not create.
    pub fn stream_to(&mut self, spill_dir: &Path, pcap_files: &[(String, PathBuf)]) -> Result<(), String> {
        let limit = self.budget.record_bytes;
        self.world.rec.stream(trace::spill::Spill::new(spill_dir)?.with_limit(limit));
        self.capture_files = pcap_files.iter().map(|(_, path)| path.clone()).collect();
        for (link, path) in pcap_files {
            let i = self.world.links.iter().position(|l| world::link_is_named(&self.world.nodes, l, link));
            let Some(slot) = i.and_then(|i| self.world.pcap.get_mut(packet::LinkId(i as u32))) else {
                return Err(format!("link {link} is not captured (record.pcap)"));
            };
            *slot = trace::pcap::PcapWriter::to_file(path)?;
        }
        Ok(())
    }

    /// What stopped the workloads' arrivals, if anything did: more arrivals in progress at
    /// once than `budget.active_flows` allows (the run goes on without further arrivals, so
    /// its results do not answer the scenario), or what stopped the run: more bytes streamed
    /// to disk than `budget.record_bytes`. Callers stop and report this error.
    pub fn budget_exceeded(&self) -> Option<&ConfigError> {
        self.world.budget_exceeded.as_ref().or(self.records_exceeded.as_ref())
    }

    /// The first error writing streamed records or captures so far, if any.
    pub fn output_error(&self) -> Option<String> {
        let pcap = self.world.pcap.iter().find_map(|p| p.error());
        self.world.rec.spill_error().or(pcap).map(str::to_string)
    }

    /// Advance simulated time to `t` (at most the scenario's duration), taking the snapshots
    /// due on the way.
    pub fn run_until(&mut self, t: Time) {
        let t = t.min(self.world.end);
        while let Some(at) = self.snapshots.next(t) {
            if !self.advance(at) {
                return;
            }
            self.snapshots.take(&mut self.world);
        }
        self.advance(t);
    }

    /// Run the world to `t`; while streaming, a [`RECORD_CHECK_PERIOD`] at a time, stopping
    /// at the first look that finds more bytes on disk than `budget.record_bytes` (the world
    /// runs the same events whatever its steps). Whether it reached `t`.
    fn advance(&mut self, t: Time) -> bool {
        if self.records_exceeded.is_some() {
            return false;
        }
        if self.world.rec.streaming_chunk().is_none() {
            self.world.run_until(t);
            return true;
        }
        loop {
            let step = (self.world.now + RECORD_CHECK_PERIOD).min(t);
            self.world.run_until(step);
            let (spilled, full) = self.world.rec.spilled();
            let captured: u64 =
                self.capture_files.iter().filter_map(|p| std::fs::metadata(p).ok()).map(|m| m.len()).sum();
            let written = spilled + captured;
            if full || written > self.budget.record_bytes {
                self.records_exceeded = Some(self.budget.records_exceeded(self.world.now, written));
                return false;
            }
            if step >= t {
                return true;
            }
        }
    }

    /// The summary tables (links, flows, nodes) as they stand now; the run goes on.
    pub fn snapshot(&self) -> Vec<trace::table::Table> {
        results::summary_now(&self.world)
    }

    /// Run to the end and collect the results.
    pub fn run(mut self) -> RunResult {
        let end = self.world.end;
        self.run_until(end);
        self.finish()
    }

    /// Collect results at the current time.
    pub fn finish(mut self) -> RunResult {
        let snapshot_tables = self.snapshots.into_tables(&mut self.world.rec);
        let mut r = results::collect(self.world);
        r.tables.extend(snapshot_tables);
        r
    }
}
