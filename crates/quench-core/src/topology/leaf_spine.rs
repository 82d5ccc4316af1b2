//! A two-tier leaf-spine (folded Clos) fabric: `leaves` leaf (top-of-rack) switches of
//! `hosts_per_leaf` hosts each, every leaf linked to every one of `spines` spine switches, so
//! hosts under different leaves have `spines` equal-cost paths.
//!
//! The leaf-spine rate is the host rate scaled by the oversubscription ratio: a leaf's hosts
//! offer `hosts_per_leaf · access rate`, its uplinks carry `spines · fabric rate`, and the ratio
//! of the two is `oversubscription` (1, the default, is full bisection; 3 is the common
//! 3:1 of data centre racks). An explicit `fabric.rate` sets it instead.
//!
//! Names: hosts `h<leaf · hosts_per_leaf + j>`, leaves `tor<leaf>`, spines `spine<s>`. Tiers:
//! `access` (host to leaf) and `fabric` (leaf to spine).
//! Owns the expansion of a leaf-spine declaration into nodes, links and policies (`Expansion`); the
//! builder turns them into the world, and this module never sees it.

use super::{check_range, default_multipath, link, Expansion, FabricCommon, Generator, TierSpec};
use crate::error::ConfigError;
use crate::qdisc::QdiscSpec;
use crate::routing::MultipathPolicy;
use crate::units::{BitRate, Dur};
use serde::{Deserialize, Serialize};

/// The most of each count: 4096 hosts per leaf, leaves or spines, far above real switch radixes
/// (a leaf of 64 ports); the fabric's link count is also held to the engine's limit.
pub const MAX_COUNT: u64 = 4096;
/// Oversubscription ratios from 1:1000 to 1000:1; real fabrics run 1:1 to about 20:1.
pub const MIN_OVERSUBSCRIPTION: f64 = 1e-3;
pub const MAX_OVERSUBSCRIPTION: f64 = 1e3;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeafSpineConfig {
    pub hosts_per_leaf: u64,
    pub leaves: u64,
    pub spines: u64,
    /// Every tier's rate, delay and queue discipline unless its own table says otherwise (the
    /// fabric tier's rate follows `oversubscription` instead).
    pub rate: BitRate,
    pub delay: Dur,
    #[serde(default)]
    pub qdisc: QdiscSpec,
    #[serde(default = "default_multipath")]
    pub multipath: MultipathPolicy,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub prefix: String,
    /// Offered host load over leaf uplink capacity (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oversubscription: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<TierSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fabric: Option<TierSpec>,
}

impl LeafSpineConfig {
    /// The leaf-spine rate that gives the oversubscription ratio over `host_rate`.
    fn fabric_rate(&self, host_rate: BitRate) -> BitRate {
        let ratio = self.oversubscription.unwrap_or(1.0);
        let bits = host_rate.0 as f64 * self.hosts_per_leaf as f64 / (self.spines as f64 * ratio);
        BitRate(bits.round() as u64)
    }
}

impl Generator for LeafSpineConfig {
    fn common(&self) -> FabricCommon {
        FabricCommon {
            rate: self.rate,
            delay: self.delay,
            qdisc: self.qdisc.clone(),
            multipath: self.multipath,
            prefix: self.prefix.clone(),
        }
    }

    fn validate(&self) -> Result<u64, ConfigError> {
        check_range("hosts_per_leaf", self.hosts_per_leaf, 1, MAX_COUNT, "hosts under each leaf")?;
        check_range("leaves", self.leaves, 1, MAX_COUNT, "leaf switches")?;
        check_range("spines", self.spines, 1, MAX_COUNT, "spine switches")?;
        if let Some(r) = self.oversubscription {
            if !(MIN_OVERSUBSCRIPTION..=MAX_OVERSUBSCRIPTION).contains(&r) {
                let why = format!("{r} is outside {MIN_OVERSUBSCRIPTION} to {MAX_OVERSUBSCRIPTION}");
                return Err(ConfigError::new("oversubscription", why));
            }
            if self.fabric.as_ref().is_some_and(|f| f.rate.is_some()) {
                let why = "sets the fabric rate, as fabric.rate does; give one of them";
                return Err(ConfigError::new("oversubscription", why));
            }
        }
        Ok(self.leaves * (self.hosts_per_leaf + self.spines))
    }

    fn expand(&self) -> Result<Expansion, ConfigError> {
        let c = self.common();
        let access = c.tier("access", self.access.as_ref(), None)?;
        let fabric_rate = self.fabric_rate(access.rate);
        let fabric = c.tier("fabric", self.fabric.as_ref(), Some(fabric_rate)).map_err(|e| {
            if self.fabric.as_ref().is_some_and(|f| f.rate.is_some()) {
                e
            } else {
                ConfigError::new("oversubscription", format!("gives a leaf-spine rate of {fabric_rate}: {}", e.message))
            }
        })?;
        let hosts: Vec<String> = (0..self.leaves * self.hosts_per_leaf).map(|i| c.name(format_args!("h{i}"))).collect();
        let leaf = |l: u64| c.name(format_args!("tor{l}"));
        let spine = |s: u64| c.name(format_args!("spine{s}"));
        let mut links = Vec::with_capacity((self.leaves * (self.hosts_per_leaf + self.spines)) as usize);
        for (i, h) in hosts.iter().enumerate() {
            links.push(link(&access, h.clone(), leaf(i as u64 / self.hosts_per_leaf)));
        }
        for l in 0..self.leaves {
            links.extend((0..self.spines).map(|s| link(&fabric, leaf(l), spine(s))));
        }
        let switches = (0..self.leaves).map(leaf).chain((0..self.spines).map(spine)).collect();
        Ok(Expansion { hosts, switches, links, multipath: c.multipath })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn config(extra: serde_json::Value) -> LeafSpineConfig {
        let mut v = json!({"hosts_per_leaf": 8, "leaves": 4, "spines": 2, "rate": "10Gbps", "delay": "1us"});
        v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn counts_and_names() {
        let x = config(json!({})).expand().unwrap();
        assert_eq!(x.hosts.len(), 32);
        assert_eq!(x.switches, ["tor0", "tor1", "tor2", "tor3", "spine0", "spine1"]);
        assert_eq!(x.links.len(), 32 + 4 * 2);
        assert!(x.links.iter().any(|l| l.from == "h9" && l.to == "tor1"));
    }

    /// Full bisection: 8 hosts of 10 Gbit/s over 2 spines is 40 Gbit/s per uplink; 4:1
    /// oversubscription makes it 10 Gbit/s.
    #[test]
    fn oversubscription_sets_the_fabric_rate() {
        let rate = |x: &Expansion| x.links.last().unwrap().rate;
        assert_eq!(rate(&config(json!({})).expand().unwrap()), BitRate(40_000_000_000));
        assert_eq!(rate(&config(json!({"oversubscription": 4.0})).expand().unwrap()), BitRate(10_000_000_000));
        let explicit = config(json!({"fabric": {"rate": "25Gbps"}})).expand().unwrap();
        assert_eq!(rate(&explicit), BitRate(25_000_000_000));
        let both = config(json!({"fabric": {"rate": "25Gbps"}, "oversubscription": 2.0}));
        assert_eq!(both.validate().unwrap_err().path, "oversubscription");
    }

    #[test]
    fn counts_are_bounded() {
        let e = config(json!({"spines": 0})).validate().unwrap_err();
        assert_eq!(e.path, "spines");
        let e = config(json!({"oversubscription": 0.0})).validate().unwrap_err();
        assert_eq!(e.path, "oversubscription");
    }
}
