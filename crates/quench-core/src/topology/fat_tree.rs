//! The k-ary fat-tree of Al-Fares, Loukissas and Vahdat ("A Scalable, Commodity Data Center
//! Network Architecture", SIGCOMM 2008, section 3.3): k pods, each of k/2 edge and k/2
//! aggregation switches of k ports; every edge switch serves k/2 hosts and links to every
//! aggregation switch of its pod; (k/2)² core switches, core switch j·k/2 + m linked to
//! aggregation switch j of every pod. So k³/4 hosts, k²/4 core switches, k³/4 links per tier,
//! and (k/2)² equal-cost paths between hosts of different pods (k/2 within a pod).
//!
//! Names (stable, documented in docs/design.md): hosts `h<i>`, numbered pod by pod and edge
//! switch by edge switch (host j of edge switch e of pod p is `h<p·(k/2)² + e·k/2 + j>`); edge
//! switches `tor<p·k/2 + e>`; aggregation switches `agg<p>_<a>`; core switches `core<j·k/2 + m>`.
//! Tiers: `access` (host to edge), `aggregation` (edge to aggregation), `core` (aggregation to
//! core).
//! Owns the expansion of a fat-tree declaration into nodes, links and policies (`Expansion`); the
//! builder turns them into the world, and this module never sees it.

use super::{check_range, default_multipath, link, Expansion, FabricCommon, Generator, TierSpec};
use crate::error::ConfigError;
use crate::qdisc::QdiscSpec;
use crate::routing::MultipathPolicy;
use crate::units::{BitRate, Dur};
use serde::{Deserialize, Serialize};

/// The smallest fat-tree: k = 2 (two pods of one edge and one aggregation switch, one core).
pub const MIN_K: u64 = 2;
/// The largest: k = 64, 65,536 hosts and 5,120 switches (Al-Fares et al. build theirs of
/// 48-port switches: 27,648 hosts). Its routing set-up runs one search per switch over
/// 393,216 links: about 15 s and 0.4 GB, where k = 16 takes tens of milliseconds (measured in
/// docs/design.md, "Fabrics").
pub const MAX_K: u64 = 64;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FatTreeConfig {
    /// Ports per switch: even, `MIN_K..=MAX_K`.
    pub k: u64,
    /// Every tier's rate, delay and queue discipline unless its own table says otherwise.
    pub rate: BitRate,
    pub delay: Dur,
    #[serde(default)]
    pub qdisc: QdiscSpec,
    #[serde(default = "default_multipath")]
    pub multipath: MultipathPolicy,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub prefix: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<TierSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggregation: Option<TierSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core: Option<TierSpec>,
}

/// The closed-form sizes of a k-ary fat-tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FatTreeSize {
    pub hosts: u64,
    pub edge: u64,
    pub aggregation: u64,
    pub core: u64,
    /// Duplex links, all tiers.
    pub links: u64,
}

impl FatTreeSize {
    pub fn of(k: u64) -> Self {
        let half = k / 2;
        FatTreeSize {
            hosts: k * half * half,
            edge: k * half,
            aggregation: k * half,
            core: half * half,
            links: 3 * k * half * half,
        }
    }
}

impl Generator for FatTreeConfig {
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
        check_range("k", self.k, MIN_K, MAX_K, "ports per switch")?;
        if !self.k.is_multiple_of(2) {
            return Err(ConfigError::new(
                "k",
                format!("{} is odd; a fat-tree's k is even (k/2 ports down, k/2 up)", self.k),
            ));
        }
        Ok(FatTreeSize::of(self.k).links)
    }

    fn expand(&self) -> Result<Expansion, ConfigError> {
        let c = self.common();
        let access = c.tier("access", self.access.as_ref(), None)?;
        let aggregation = c.tier("aggregation", self.aggregation.as_ref(), None)?;
        let core = c.tier("core", self.core.as_ref(), None)?;
        let (k, half) = (self.k, self.k / 2);
        let size = FatTreeSize::of(k);
        let tor = |p: u64, e: u64| c.name(format_args!("tor{}", p * half + e));
        let agg = |p: u64, a: u64| c.name(format_args!("agg{p}_{a}"));
        let hosts: Vec<String> = (0..size.hosts).map(|i| c.name(format_args!("h{i}"))).collect();
        let mut links = Vec::with_capacity(size.links as usize);
        for (i, h) in hosts.iter().enumerate() {
            let i = i as u64;
            links.push(link(&access, h.clone(), tor(i / (half * half), i / half % half)));
        }
        for p in 0..k {
            for e in 0..half {
                links.extend((0..half).map(|a| link(&aggregation, tor(p, e), agg(p, a))));
            }
        }
        for p in 0..k {
            for a in 0..half {
                links.extend((0..half).map(|m| link(&core, agg(p, a), c.name(format_args!("core{}", a * half + m)))));
            }
        }
        let mut switches: Vec<String> =
            (0..k).flat_map(|p| (0..half).map(move |e| (p, e))).map(|(p, e)| tor(p, e)).collect();
        switches.extend((0..k).flat_map(|p| (0..half).map(move |a| (p, a))).map(|(p, a)| agg(p, a)));
        switches.extend((0..size.core).map(|i| c.name(format_args!("core{i}"))));
        Ok(Expansion { hosts, switches, links, multipath: c.multipath })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{HashMap, HashSet};

    fn config(k: u64) -> FatTreeConfig {
        serde_json::from_value(serde_json::json!({"k": k, "rate": "1Gbps", "delay": "1us"})).unwrap()
    }

    /// Counts against the closed forms, and every switch's degree: k ports each (edge and
    /// aggregation: k/2 down, k/2 up; core: one per pod), every host one.
    #[test]
    fn counts_and_degrees_match_the_closed_forms() {
        for k in (MIN_K..=16).step_by(2) {
            let x = config(k).expand().unwrap();
            let size = FatTreeSize::of(k);
            assert_eq!(x.hosts.len() as u64, k * k * k / 4, "k = {k}");
            assert_eq!(x.switches.len() as u64, size.edge + size.aggregation + size.core);
            assert_eq!(size.core, k * k / 4);
            assert_eq!((size.edge, size.aggregation), (k * k / 2, k * k / 2));
            assert_eq!(x.links.len() as u64, 3 * k * k * k / 4);
            let mut degree: HashMap<&str, u64> = HashMap::new();
            for l in &x.links {
                *degree.entry(&l.from).or_default() += 1;
                *degree.entry(&l.to).or_default() += 1;
            }
            assert!(x.hosts.iter().all(|h| degree[h.as_str()] == 1));
            assert!(x.switches.iter().all(|s| degree[s.as_str()] == k), "k = {k}");
            let names: HashSet<_> = x.hosts.iter().chain(&x.switches).collect();
            assert_eq!(names.len(), x.hosts.len() + x.switches.len(), "names are unique");
        }
    }

    #[test]
    fn names_are_the_documented_ones() {
        let x = config(4).expand().unwrap();
        assert_eq!((x.hosts[0].as_str(), x.hosts[15].as_str()), ("h0", "h15"));
        assert_eq!(x.switches[..2], ["tor0", "tor1"]);
        assert!(x.switches.contains(&"agg3_1".to_string()) && x.switches.contains(&"core3".to_string()));
        // h5 is host 1 of edge switch 0 of pod 1: tor2.
        assert!(x.links.iter().any(|l| l.from == "h5" && l.to == "tor2"));
        // Aggregation switch 1 of every pod reaches core switches 2 and 3.
        assert!(x.links.iter().any(|l| l.from == "agg2_1" && l.to == "core3"));
        assert_eq!(x.multipath, MultipathPolicy::Ecmp);
    }

    #[test]
    fn k_is_bounded_and_even() {
        for (k, words) in [(0, "outside 2 to 64"), (3, "is odd"), (66, "outside 2 to 64")] {
            let e = config(k).validate().unwrap_err();
            assert_eq!(e.path, "k");
            assert!(e.message.contains(words), "{e}");
        }
    }
}
