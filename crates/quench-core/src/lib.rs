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

// The engine's machinery (the world, its links, slab and flows, the builder and the result
// tables) is the crate's own: the public surface is `Simulation`, the scenario, the units and
// the result tables, and the parts a scenario or a binding names (disciplines, controllers,
// records).
pub(crate) mod builder;
pub mod cc;
pub mod dist;
pub mod error;
pub mod fct;
pub(crate) mod flows;
pub mod icmp;
pub mod ip;
pub mod limits;
pub(crate) mod link;
#[cfg(test)]
mod order_tests;
pub mod packet;
pub mod qdisc;
pub mod ranges;
pub(crate) mod results;
pub mod rng;
pub mod routing;
pub mod scenario;
pub mod sched;
pub(crate) mod slab;
pub mod snapshots;
pub mod tagged;
pub mod topology;
pub mod trace;
pub mod transport;
pub mod units;
pub mod workload;
pub(crate) mod world;

pub use error::{ConfigError, Error};
pub use results::RunResult;
pub use scenario::Scenario;
use std::path::{Path, PathBuf};
pub use units::{BitRate, Bytes, Dur, Time};

/// A built scenario, ready to run in one go or in steps (for progress reporting).
pub struct Simulation {
    world: world::World,
    snapshots: snapshots::Snapshots,
}

impl Simulation {
    pub fn new(scenario: &Scenario) -> Result<Self, ConfigError> {
        let world = builder::build(scenario)?;
        Ok(Simulation { world, snapshots: snapshots::Snapshots::new(scenario.record.snapshots.clone()) })
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
        self.world.rec.stream(trace::spill::Spill::new(spill_dir)?);
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
    /// once than `budget.active_flows` allows. The run goes on without further arrivals, so
    /// its results do not answer the scenario; callers stop and report this error.
    pub fn budget_exceeded(&self) -> Option<&ConfigError> {
        self.world.budget_exceeded.as_ref()
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
            self.world.run_until(at);
            self.snapshots.take(&mut self.world);
        }
        self.world.run_until(t);
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
