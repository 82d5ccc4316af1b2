//! Topology generators: a `[[topologies]]` entry of a scenario (`{ kind = "fat_tree", k = 4,
//! ... }`) expands, when the world is built, into hosts, switches and duplex links with stable
//! names, added after the nodes and links the scenario lists, which may name them (a listed
//! link from an outside host to `core0`, say). Expansion lives in the core so that TOML files
//! and the Python API get the same fabrics, validated once with errors naming the key.
//!
//! Adding a generator is one file (a config struct with `deny_unknown_fields` and a
//! [`Generator`] impl that validates its counts and names each node and link) plus one line in
//! `registry!` below.
//!
//! Every generator's links are organised in tiers (host-to-ToR, ToR-to-aggregation, ...), each
//! with its rate, delay and queue discipline (whose limit is the tier's buffer): the fabric's
//! top-level `rate`, `delay` and `qdisc`, overridden per tier by a table of the tier's name.
//! The switches choose among equal-cost next hops by the fabric's `multipath` policy, `ecmp`
//! unless set (`routing.rs`).
//!
//! A generator only names nodes and links and sets their parameters for the builder to add;
//! it must not touch the world, the routes or any flow.

pub mod fat_tree;
pub mod leaf_spine;
#[cfg(test)]
mod tests;

use crate::error::ConfigError;
use crate::limits;
use crate::link::LinkSpec;
use crate::qdisc::QdiscSpec;
use crate::routing::MultipathPolicy;
use crate::units::{BitRate, Bytes, Dur};
use serde::{Deserialize, Serialize};

/// Ethernet's MTU: every generated link's.
const FABRIC_MTU: Bytes = Bytes(1500);

/// A tier's link parameters, any of them left to the fabric's own.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TierSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<BitRate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<Dur>,
    /// The queue of both directions, or of the upward one (away from the hosts) when
    /// `down_qdisc` is given: on the access tier, the host's own (its NIC's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qdisc: Option<QdiscSpec>,
    /// The queue of the downward direction (towards the hosts), if it differs: on the access
    /// tier, the switch's port to the host, where an incast queues. Boxed: most tiers have
    /// none, and a fabric's spec holds several tiers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub down_qdisc: Option<Box<QdiscSpec>>,
}

/// What every fabric has: the tiers' default link parameters, the switches' multipath
/// policy, and a prefix for its node names (to put two fabrics in one scenario). Each
/// generator's config holds these keys itself (serde's `flatten` would lose
/// `deny_unknown_fields`) and hands them over here.
#[derive(Clone, Debug)]
pub struct FabricCommon {
    pub rate: BitRate,
    pub delay: Dur,
    pub qdisc: QdiscSpec,
    pub multipath: MultipathPolicy,
    pub prefix: String,
}

/// Generated switches hash flows over equal-cost paths unless told otherwise.
pub fn default_multipath() -> MultipathPolicy {
    MultipathPolicy::Ecmp
}

/// A generated fabric: its nodes by name, its duplex links, its switches' policy.
#[derive(Debug, Default)]
pub struct Expansion {
    pub hosts: Vec<String>,
    /// The switches (routers), all with the policy `multipath`.
    pub switches: Vec<String>,
    pub links: Vec<LinkSpec>,
    pub multipath: MultipathPolicy,
}

/// A fabric generator: validate the parameters, then name every node and link.
pub trait Generator {
    /// The parameters every fabric has.
    fn common(&self) -> FabricCommon;
    /// The number of duplex links the fabric has, from its parameters alone (checked against
    /// the engine's limit before anything is built); an error names the offending key.
    fn validate(&self) -> Result<u64, ConfigError>;
    /// Nodes and links, in a stable order (hosts, then switches tier by tier).
    fn expand(&self) -> Result<Expansion, ConfigError>;
}

macro_rules! registry {
    ($($variant:ident: $name:literal => $module:ident::$cfg:ident),+ $(,)?) => {
        /// A fabric as written in a scenario: `{ kind = "fat_tree", k = 4, rate = "10Gbps", ... }`.
        #[derive(Clone, Debug, Serialize)]
        #[serde(tag = "kind")]
        pub enum TopologySpec {
            $(#[serde(rename = $name)] $variant($module::$cfg),)+
        }

        $crate::tagged::deserialize_by_kind!(TopologySpec, $($name => $variant),+);

        impl TopologySpec {
            pub const NAMES: &'static [&'static str] = &[$($name),+];
            fn generator(&self) -> &dyn Generator {
                match self {
                    $(TopologySpec::$variant(cfg) => cfg,)+
                }
            }
        }
    };
}

registry! {
    FatTree: "fat_tree" => fat_tree::FatTreeConfig,
    LeafSpine: "leaf_spine" => leaf_spine::LeafSpineConfig,
}

impl TopologySpec {
    /// Validate, check the link count against the engine's limit, and expand; an error names
    /// its key within the entry.
    pub fn expand(&self) -> Result<Expansion, ConfigError> {
        let g = self.generator();
        let duplex_links = g.validate()?;
        if duplex_links.saturating_mul(2) > limits::MAX_LINKS {
            let why = format!(
                "the fabric has {} links (both directions), more than {}, the most a scenario may have",
                duplex_links.saturating_mul(2),
                limits::MAX_LINKS
            );
            return Err(ConfigError::new("", why));
        }
        g.expand()
    }
}

/// Expand every entry; an error names `topologies[i]` and the key inside.
pub fn expand_all(specs: &[TopologySpec]) -> Result<Vec<Expansion>, ConfigError> {
    specs.iter().enumerate().map(|(i, t)| t.expand().map_err(|e| e.within(&format!("topologies[{i}]")))).collect()
}

impl FabricCommon {
    /// The link parameters of tier `key` (its overrides over the fabric's defaults), validated
    /// once; `rate` replaces the rate when the generator derives it (oversubscription).
    pub fn tier(&self, key: &str, tier: Option<&TierSpec>, rate: Option<BitRate>) -> Result<LinkSpec, ConfigError> {
        let t = tier.cloned().unwrap_or_default();
        let spec = LinkSpec {
            from: String::new(),
            to: String::new(),
            rate: t.rate.or(rate).unwrap_or(self.rate),
            delay: t.delay.unwrap_or(self.delay),
            duplex: true,
            qdisc: t.qdisc.unwrap_or_else(|| self.qdisc.clone()),
            // Every generator's links run upward (host to switch, lower tier to upper).
            reverse_qdisc: t.down_qdisc,
            mtu: FABRIC_MTU,
            loss: Default::default(),
            reverse_loss: Default::default(),
            jitter: None,
            reverse_jitter: None,
            corrupt: 0.0,
            reverse_corrupt: 0.0,
            framing_overhead: Bytes(0),
            packet_rate: None,
            fragmentation: Default::default(),
            device_queue: 0,
            capacity: None,
            reverse_capacity: None,
            schedule: Vec::new(),
        };
        // `from == to` is the one check of an unnamed link that fails: name them apart.
        let named = LinkSpec { from: "a".into(), to: "b".into(), ..spec.clone() };
        let at = if tier.is_some() { key } else { "" };
        named.validate().map_err(|e| e.within(at))?;
        named.qdisc.build().map_err(|e| e.within("qdisc").within(at))?;
        if let Some(down) = &named.reverse_qdisc {
            down.build().map_err(|e| e.within("down_qdisc").within(key))?;
        }
        Ok(spec)
    }

    /// A node's name: the fabric's prefix, then `name`.
    pub fn name(&self, name: std::fmt::Arguments) -> String {
        format!("{}{name}", self.prefix)
    }
}

/// A duplex link `from <-> to` with the tier's parameters.
pub fn link(tier: &LinkSpec, from: String, to: String) -> LinkSpec {
    LinkSpec { from, to, ..tier.clone() }
}

/// Check that `value` of key `key` is within `lo..=hi`.
pub fn check_range(key: &str, value: u64, lo: u64, hi: u64, why: &str) -> Result<(), ConfigError> {
    if (lo..=hi).contains(&value) {
        return Ok(());
    }
    Err(ConfigError::new(key, format!("{value} is outside {lo} to {hi} ({why})")))
}
