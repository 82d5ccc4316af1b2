//! The declarative scenario: what the Python API, TOML files and tests all describe. It is
//! parsed once (serde, unknown keys rejected) and validated once while the world is built;
//! every error names the key it is about, e.g. `links[1].rate: must be positive`.
//!
//! It owns the scenario's top level; each part is declared by the module that runs it (links
//! in `link.rs`, fabrics in `topology/`, workloads in `workload.rs`, records in `trace/`),
//! and nothing here reads the world.

use crate::changes::LinkChangeSpec;
use crate::error::ConfigError;
use crate::ip::IpConfig;
use crate::limits;
pub use crate::link::LinkSpec;
pub use crate::pfc::PfcSpec;
use crate::routing::{MultipathPolicy, DEFAULT_FLOWLET_GAP};
use crate::topology::TopologySpec;
use crate::trace::RecordConfig;
/// Flows are declared by the transports' registry (`transport/mod.rs`).
pub use crate::transport::FlowSpec;
use crate::units::Dur;
use crate::workload::WorkloadSpec;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

fn is_zero_dur(d: &Dur) -> bool {
    d.is_zero()
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    #[serde(default)]
    pub name: String,
    #[serde(default = "default_seed")]
    pub seed: u64,
    pub duration: Dur,
    #[serde(default)]
    pub hosts: Vec<String>,
    #[serde(default)]
    pub routers: Vec<String>,
    #[serde(default)]
    pub links: Vec<LinkSpec>,
    /// Generated fabrics (`topology/`): their hosts, switches and links come after the listed
    /// ones, which may name them. Left out of the written scenario when empty, so scenarios
    /// without one record what they always did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub topologies: Vec<TopologySpec>,
    /// How named routers choose among equal-cost next hops (`routing.rs`): `first` (the
    /// default for listed routers), `ecmp`, `spray`, `spray_random`, `spray_flow` (per packet,
    /// each flow cycling through the next hops in an order of its own per cycle) or `flowlet`;
    /// overrides a generated fabric's own policy for the switches it names.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub multipath: BTreeMap<String, MultipathPolicy>,
    /// Changes of named links during the run (`changes.rs`): for links a fabric generated, or
    /// several links at once. Left out of the written scenario when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub link_changes: Vec<LinkChangeSpec>,
    /// How long after a link goes down or up routing takes to converge around it: until then
    /// packets routed over a down link are dropped there. 0 (the default) recomputes at once,
    /// as ns-3's global routing does with `RespondToInterfaceEvents`.
    #[serde(default, skip_serializing_if = "is_zero_dur")]
    pub routing_convergence: Dur,
    /// How long a flow must be silent at a `flowlet` switch before its next packet starts a
    /// new flowlet (`routing/multipath.rs`); CONGA's 500 µs unless set. Left out of the
    /// written scenario at its default.
    #[serde(default = "default_flowlet_gap", skip_serializing_if = "is_default_flowlet_gap")]
    pub flowlet_gap: Dur,
    /// Priority-based flow control at the switches (`pfc.rs`): lossless links by pause frames.
    /// Left out of the written scenario when off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pfc: Option<PfcSpec>,
    #[serde(default)]
    pub flows: Vec<ListedFlow>,
    /// Finite flows arriving at random (Poisson), each built into a flow when it arrives.
    #[serde(default)]
    pub workloads: Vec<WorkloadSpec>,
    #[serde(default)]
    pub record: RecordConfig,
    /// Hosts' IP layer: reassembly timeout and buffer.
    #[serde(default)]
    pub ip: IpConfig,
    /// How much the scenario may ask of the machine.
    #[serde(default)]
    pub budget: Budget,
}

/// Limits a scenario is held to before it runs; raise them explicitly for larger runs.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Budget {
    /// Flows the run may create: listed flows plus the workloads' expected arrivals.
    pub flows: u64,
    /// Workload arrivals that may be in progress at once; the run stops with an error when
    /// one more arrives.
    pub active_flows: u64,
    /// Packets the sources that send at a rate of their own (UDP) may send in the run, all
    /// together: each costs events whatever the network does with it. Left out of the
    /// written scenario at its default, so scenarios record what they always did.
    #[serde(default = "default_packet_budget", skip_serializing_if = "is_default_packet_budget")]
    pub packets: u64,
    /// Bytes the run may stream to disk (recorded tables and captures) before its output files
    /// are written: the run stops with an error when it passes them. Left out of the written
    /// scenario at its default, so scenarios record what they always did.
    #[serde(default = "default_record_budget", skip_serializing_if = "is_default_record_budget")]
    pub record_bytes: u64,
}

fn default_record_budget() -> u64 {
    limits::DEFAULT_RECORD_BUDGET
}

fn is_default_record_budget(n: &u64) -> bool {
    *n == limits::DEFAULT_RECORD_BUDGET
}

fn default_packet_budget() -> u64 {
    limits::DEFAULT_PACKET_BUDGET
}

fn is_default_packet_budget(n: &u64) -> bool {
    *n == limits::DEFAULT_PACKET_BUDGET
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            flows: limits::DEFAULT_FLOW_BUDGET,
            active_flows: limits::DEFAULT_ACTIVE_FLOW_BUDGET,
            packets: limits::DEFAULT_PACKET_BUDGET,
            record_bytes: limits::DEFAULT_RECORD_BUDGET,
        }
    }
}

impl Budget {
    /// The error that stops a run when one more arrival would exceed `active_flows`.
    pub fn active_flows_exceeded(&self, now: crate::units::Time) -> ConfigError {
        let msg = format!(
            "more than {} workload arrivals in progress at once at {:.3} s: the workloads offer \
             more than the network carries; lower their arrival rate or sizes, or raise \
             budget.active_flows (at most {:e}; each takes about 2 KB)",
            self.active_flows,
            now.as_secs_f64(),
            limits::MAX_FLOW_BUDGET as f64
        );
        ConfigError::new("budget.active_flows", msg)
    }

    /// The error that stops a run whose streamed records and captures reached `written`
    /// bytes, past `record_bytes`, at `now`.
    pub fn records_exceeded(&self, now: crate::units::Time, written: u64) -> ConfigError {
        let msg = format!(
            "the run's records and captures reached {:.3e} bytes on disk at {:.3} s, more than budget.record_bytes, \
             {:e}; record fewer tables or links (`record`), capture fewer links, shorten the run, or raise \
             budget.record_bytes (at most {:e})",
            written as f64,
            now.as_secs_f64(),
            self.record_bytes as f64,
            limits::MAX_RECORD_BUDGET as f64
        );
        ConfigError::new("budget.record_bytes", msg)
    }

    /// Refuse a `record_bytes` outside 1 to [`limits::MAX_RECORD_BUDGET`].
    pub fn check_record_bytes(&self) -> Result<(), ConfigError> {
        if self.record_bytes == 0 || self.record_bytes > limits::MAX_RECORD_BUDGET {
            let why = format!("{} is outside 1 to {:e}", self.record_bytes, limits::MAX_RECORD_BUDGET as f64);
            return Err(ConfigError::new("budget.record_bytes", why));
        }
        Ok(())
    }

    /// Refuse a scenario whose rate-driven sources are expected to send more packets than
    /// `budget.packets`: `expected` holds each flow's index and expected packets, and the error
    /// names the rate of the flow that sends the most.
    pub fn check_packets(&self, expected: &[(usize, f64)]) -> Result<(), ConfigError> {
        if self.packets == 0 || self.packets > limits::MAX_PACKET_BUDGET {
            let why = format!("{} is outside 1 to {:e}", self.packets, limits::MAX_PACKET_BUDGET as f64);
            return Err(ConfigError::new("budget.packets", why));
        }
        let total: f64 = expected.iter().map(|&(_, n)| n).sum();
        let Some(&(most, _)) = expected.iter().max_by(|a, b| a.1.total_cmp(&b.1)) else { return Ok(()) };
        if total <= self.packets as f64 {
            return Ok(());
        }
        let msg = format!(
            "the sources that send at a rate of their own are expected to send about {total:.3e} packets \
             (rate / mean packet size × sending time), more than budget.packets, {:e}; lower the rate or the \
             sending time, or raise budget.packets (at most {:e}; the engine runs about 10⁷ events a second)",
            self.packets as f64,
            limits::MAX_PACKET_BUDGET as f64
        );
        Err(ConfigError::new(format!("flows[{most}].rate"), msg))
    }

    /// Refuse a scenario expected to create more flows than the budget allows.
    pub fn check_flows(&self, expected: f64) -> Result<(), ConfigError> {
        for (key, v) in [("budget.flows", self.flows), ("budget.active_flows", self.active_flows)] {
            if v == 0 || v > limits::MAX_FLOW_BUDGET {
                return Err(ConfigError::new(key, format!("{v} is outside 1 to {:e}", limits::MAX_FLOW_BUDGET as f64)));
            }
        }
        if expected > self.flows as f64 {
            let msg = format!(
                "the scenario is expected to create about {expected:.3e} flows (listed flows plus the \
                 workloads' arrival rate × arrival window), more than the budget of {:e}; raise \
                 budget.flows (at most {:e}) or lower the rate or the window",
                self.flows as f64,
                limits::MAX_FLOW_BUDGET as f64
            );
            return Err(ConfigError::new("budget.flows", msg));
        }
        Ok(())
    }
}

fn default_seed() -> u64 {
    1
}

fn default_flowlet_gap() -> Dur {
    DEFAULT_FLOWLET_GAP
}

fn is_default_flowlet_gap(d: &Dur) -> bool {
    *d == DEFAULT_FLOWLET_GAP
}

/// A listed flow: its transport's declaration (`kind` and the transport's keys) and the keys
/// any listed flow may add, which concern the network rather than the transport.
#[derive(Clone, Debug, Serialize)]
pub struct ListedFlow {
    #[serde(flatten)]
    pub spec: FlowSpec,
    #[serde(flatten)]
    pub routing: FlowRouting,
}

/// Where a listed flow's packets go and when it may start, beside its transport's keys.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowRouting {
    /// The nodes its data packets cross, source to destination (`routing/pinned.rs`);
    /// routed as every other packet when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<Vec<String>>,
    /// The nodes its packets back (ACKs) cross, destination to source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse_path: Option<Vec<String>>,
    /// Names of the flows that must complete before it starts (`dependencies.rs`); its `start`
    /// is then counted from the last of their completions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<String>,
    /// The priority (IEEE 802.1p, 0 to 7) its packets travel in, for the switches' traffic
    /// classes and PFC (`qdisc/classes.rs`, `pfc.rs`).
    #[serde(default, skip_serializing_if = "crate::packet::is_default_priority")]
    pub priority: u8,
}

impl FlowRouting {
    const KEYS: [&'static str; 4] = ["path", "reverse_path", "after", "priority"];
}

/// The transport's table with the routing keys taken out and read on their own; an error in
/// either keeps its key's path.
impl<'de> Deserialize<'de> for ListedFlow {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut table = serde_json::Value::deserialize(d)?;
        let mut keys = serde_json::Map::new();
        if let serde_json::Value::Object(map) = &mut table {
            for key in FlowRouting::KEYS {
                if let Some(v) = map.remove(key) {
                    keys.insert(key.to_string(), v);
                }
            }
        }
        let routing = crate::tagged::body(serde_json::Value::Object(keys))?;
        let spec = FlowSpec::deserialize(table).map_err(D::Error::custom)?;
        Ok(ListedFlow { spec, routing })
    }
}

impl std::ops::Deref for ListedFlow {
    type Target = FlowSpec;
    fn deref(&self) -> &FlowSpec {
        &self.spec
    }
}

impl Scenario {
    /// Parse JSON, naming the offending key on error.
    pub fn from_json(text: &str) -> Result<Scenario, ConfigError> {
        let de = &mut serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(de)
            .map_err(|e| ConfigError::from_serde(&e.path().to_string(), &e.inner().to_string()))
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a scenario always serializes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_key() {
        let e =
            Scenario::from_json(r#"{"duration":"1s","links":[{"from":"a","to":"b","rate":"10Mbsp","delay":"1ms"}]}"#)
                .unwrap_err();
        assert_eq!(e.path, "links[0].rate");
        assert!(e.message.contains("unknown unit"), "{e}");
        let e = Scenario::from_json(r#"{"duration":"1s","linkz":[]}"#).unwrap_err();
        assert!(e.message.contains("unknown field `linkz`"), "{e}");
        let e = Scenario::from_json(r#"{"links":[]}"#).unwrap_err();
        assert!(e.message.contains("missing field `duration`"), "{e}");
    }

    #[test]
    fn round_trips_through_json() {
        let s = Scenario::from_json(
            r#"{"duration":"2s","hosts":["a","b"],"links":[{"from":"a","to":"b","rate":"1Mbps","delay":"5ms",
                "qdisc":{"kind":"droptail","limit":"10p"}}],
                "flows":[{"kind":"tcp","src":"a","dst":"b","cc":"reno","bytes":"10KB"},
                         {"kind":"udp","src":"a","dst":"b","rate":"100kbps","pattern":"poisson"}]}"#,
        )
        .unwrap();
        let again = Scenario::from_json(&s.to_json()).unwrap();
        assert_eq!(again.to_json(), s.to_json());
        assert_eq!(again.flows.len(), 2);
    }

    /// A listed flow's routing keys read back as written, beside its transport's keys, and an
    /// error in either names its key.
    #[test]
    fn routing_keys_round_trip_and_name_their_errors() {
        let text = r#"{"duration":"1s","flowlet_gap":"100us","flows":[{"kind":"tcp","src":"a","dst":"b",
            "path":["a","r","b"],"after":["x"]}]}"#;
        let s = Scenario::from_json(text).unwrap();
        assert_eq!(s.flows[0].routing.path.as_deref(), Some(&["a".into(), "r".into(), "b".into()][..]));
        assert_eq!(s.flows[0].routing.after, vec!["x".to_string()]);
        assert_eq!(s.flowlet_gap, Dur::from_micros(100));
        let again = Scenario::from_json(&s.to_json()).unwrap();
        assert_eq!(again.to_json(), s.to_json());
        let plain = Scenario::from_json(r#"{"duration":"1s","flows":[{"kind":"tcp","src":"a","dst":"b"}]}"#).unwrap();
        let json = plain.to_json();
        assert!(!json.contains("path") && !json.contains("after") && !json.contains("flowlet_gap"), "{json}");
        let e = Scenario::from_json(r#"{"duration":"1s","flows":[{"kind":"tcp","src":"a","dst":"b","path":"a"}]}"#)
            .unwrap_err();
        assert_eq!(e.path, "flows[0].path", "{e}");
        let e = Scenario::from_json(r#"{"duration":"1s","flows":[{"kind":"tcp","src":"a","dst":"b","bytez":1}]}"#)
            .unwrap_err();
        assert_eq!(e.path, "flows[0].bytez", "{e}");
    }
}
