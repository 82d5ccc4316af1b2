//! Flow workloads: many finite flows arriving as a Poisson process over a set of
//! source–destination pairs, the traffic model of response-time studies such as PCP's (NSDI '06
//! §4.2: 250 KB flows, Poisson arrivals, 100 pairs).
//!
//! Arrivals are drawn as the run goes, one ahead per workload ([`WorkloadRun`]): the world
//! builds each arrival's flow when it arrives, so memory follows the flows that are active,
//! not the flows that will ever exist, and validating a workload costs the same for an hour
//! as for a year. Every transport (TCP, PCP, anything registered later) works in a workload
//! without change: the `flow` entry is a flow template, a flow without `src`, `dst`, `start`,
//! `bytes` and `name`, which is filled in for each arrival. The template is checked once per
//! pair before the run (an arrival differs from that check only in its name, start and size).
//! Each flow's response time is then the flows table's `response_time_s` (from the
//! application's open, i.e. the first SYN, to the last byte delivered).
//!
//! A workload's pairs may be listed (`pairs`) or generated from a traffic matrix over a set of
//! hosts (`matrix`, expanded by [`expand`] once the topology is known):
//! - `permutation`: every host sends to one other host, a uniformly random derangement drawn
//!   from the seed (the permutation traffic of Al-Fares et al., SIGCOMM 2008, and of
//!   pFabric's and HPCC's evaluations);
//! - `all_to_all`: every ordered pair of distinct hosts;
//! - `incast`: every host but `receiver` sends to `receiver` (partition–aggregate's fan-in,
//!   DCTCP paper section 2.3).
//!
//! Arrivals are Poisson at `arrival_rate` (flows/s over all pairs) or at a `load` of the
//! senders' access links: each sender starts load × C / (8 × mean size) flows per second
//! (pFabric, SIGCOMM 2013, section 5; HPCC, SIGCOMM 2019, section 5.1), so the total is that
//! times the number of senders. With neither, every pair sends one flow at `start`, all at
//! once (a synchronised incast, a one-shot permutation).
//! Owns a workload's declaration and its arrival draws (its own seeded stream). It writes each
//! arrival as a flow declaration (`FlowSpec`) and touches no world: the builder's flow factory asks
//! it for the next one and builds the endpoints.

use crate::dist::{Bounds, Sampler, Size};
use crate::error::ConfigError;
use crate::limits;
use crate::rng::{Rng, StreamKind};
use crate::transport::FlowSpec;
use crate::units::{BitRate, Dur};
use serde::{Deserialize, Serialize};

/// Keys of a flow that the workload sets for each arrival.
const FILLED_KEYS: [&str; 5] = ["src", "dst", "start", "bytes", "name"];

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    /// Prefix of the flows' names (`NAME.k` for the k-th arrival); `wI` for workload I by default.
    #[serde(default)]
    pub name: Option<String>,
    /// The (source, destination) host pairs; each arrival picks one uniformly, so each pair sees
    /// an independent Poisson process of rate `arrival_rate / pairs`. Empty with a `matrix`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pairs: Vec<(String, String)>,
    /// A traffic matrix over `hosts` that generates the pairs instead (see the module header).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matrix: Option<Matrix>,
    /// The hosts of the matrix, in order; every host of the scenario when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts: Option<Vec<String>>,
    /// The destination of an `incast`; the other hosts send.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receiver: Option<String>,
    /// Mean flow arrivals per second over all pairs together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrival_rate: Option<f64>,
    /// Offered load of each sender's access link, in (0, 1]: sets `arrival_rate` (module header).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<f64>,
    /// Bytes each flow transfers: fixed ("250KB") or drawn per flow from a distribution
    /// (`dist.rs`: exponential, Pareto, lognormal, empirical, websearch, datamining, ...).
    pub size: Size,
    /// First instant at which arrivals may occur.
    #[serde(default)]
    pub start: Dur,
    /// No arrivals after this instant; the end of the run when absent.
    #[serde(default)]
    pub stop: Option<Dur>,
    /// The transport of every flow: e.g. `{ kind = "tcp", cc = "newreno" }` or `{ kind = "pcp" }`.
    pub flow: serde_json::Map<String, serde_json::Value>,
    /// The priority (IEEE 802.1p, 0 to 7) every arrival's packets travel in (`pfc.rs`,
    /// `qdisc/classes.rs`).
    #[serde(default, skip_serializing_if = "crate::packet::is_default_priority")]
    pub priority: u8,
}

/// A traffic matrix (module header).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Matrix {
    Permutation,
    AllToAll,
    Incast,
}

/// The most pairs a workload may have: each is checked against the topology before the run
/// (one flow built per pair, a few microseconds), so 10⁶ pairs cost seconds before the first
/// event; an all-to-all matrix reaches it at 1,001 hosts.
pub const MAX_PAIRS: u64 = 1_000_000;

/// A host a matrix may name: its name and the rate of its one outgoing link (`None` when it
/// has none or several, so that its access rate, which `load` needs, is not defined).
#[derive(Clone, Debug)]
pub struct HostAccess {
    pub name: String,
    pub rate: Option<BitRate>,
}

/// The sizes a workload's flows may have: at least a byte, at most the largest size quench
/// accepts (`limits::MAX_SIZE`; a draw of an unbounded distribution is clamped there).
pub const FLOW_SIZE_BOUNDS: Bounds = Bounds { min: 1, max: limits::MAX_SIZE.0, what: "flow size" };

/// One arrival of a workload, before it becomes a flow.
#[derive(Clone, Debug, PartialEq)]
pub struct Arrival {
    pub at: Dur,
    pub pair: usize,
    pub bytes: u64,
}

impl WorkloadSpec {
    fn validate(&self) -> Result<(), ConfigError> {
        if self.pairs.is_empty() {
            return Err(ConfigError::new("pairs", "needs at least one (source, destination) pair (or a matrix)"));
        }
        if self.pairs.len() as u64 > MAX_PAIRS {
            let key = if self.matrix.is_some() { "hosts" } else { "pairs" };
            return Err(ConfigError::new(key, format!("{} pairs, more than {MAX_PAIRS}", self.pairs.len())));
        }
        if self.arrival_rate.is_some_and(|r| !(r.is_finite() && r > 0.0)) {
            return Err(ConfigError::new("arrival_rate", "must be a positive number of flows per second"));
        }
        self.size.validate(FLOW_SIZE_BOUNDS).map_err(|e| e.within("size"))?;
        crate::packet::check_priority("priority", self.priority)?;
        if self.stop.is_some_and(|s| s <= self.start) {
            return Err(ConfigError::new("stop", "must be after start"));
        }
        if let Some(key) = FILLED_KEYS.iter().find(|k| self.flow.contains_key(**k)) {
            return Err(ConfigError::new(format!("flow.{key}"), "is set by the workload for each arrival"));
        }
        if !self.flow.contains_key("kind") {
            return Err(ConfigError::new("flow.kind", "missing: the transport of the workload's flows"));
        }
        Ok(())
    }

    /// The expected number of arrivals in `[start, min(stop, end))`: one per pair without a rate.
    pub fn expected_arrivals(&self, end: Dur) -> f64 {
        let stop = self.stop.map_or(end, |s| s.min(end));
        match self.arrival_rate {
            Some(rate) => rate * stop.0.saturating_sub(self.start.0) as f64 / 1e9,
            None if self.start < stop => self.pairs.len() as f64,
            None => 0.0,
        }
    }

    /// The arrivals in `[start, min(stop, end))`, drawn from the workload's own random stream.
    pub fn arrivals(&self, seed: u64, index: usize, end: Dur) -> Vec<Arrival> {
        let mut draws = ArrivalDraws::new(self, seed, index, end);
        std::iter::from_fn(|| draws.next(self)).collect()
    }

    /// The flow of one arrival: the template with the arrival's endpoints, start and size.
    pub fn flow(&self, prefix: &str, k: u64, a: &Arrival) -> Result<FlowSpec, ConfigError> {
        let mut entry = self.flow.clone();
        let (src, dst) = &self.pairs[a.pair];
        entry.insert("name".into(), format!("{prefix}.{k}").into());
        entry.insert("src".into(), src.clone().into());
        entry.insert("dst".into(), dst.clone().into());
        entry.insert("start".into(), format!("{}ns", a.at.0).into());
        entry.insert("bytes".into(), format!("{}B", a.bytes).into());
        let text = serde_json::Value::Object(entry).to_string();
        let de = &mut serde_json::Deserializer::from_str(&text);
        serde_path_to_error::deserialize(de).map_err(|e| {
            let e = ConfigError::from_serde(&e.path().to_string(), &e.inner().to_string());
            if e.path == "bytes" && e.message.starts_with("unknown field") {
                return self.not_finite();
            }
            e.within("flow")
        })
    }

    /// The error for a template whose transport has no size (`bytes`) to fill: its flows
    /// would not end (a UDP source sends at its rate until it stops), so they are no workload's.
    fn not_finite(&self) -> ConfigError {
        let kind = self.flow.get("kind").and_then(|k| k.as_str()).unwrap_or_default();
        let why = format!(
            "a `{kind}` flow has no size (`bytes`) for the workload to fill, so its arrivals would never \
             finish; list it under `flows` instead, where budget.packets bounds a source that sends at a rate \
             of its own"
        );
        ConfigError::new("flow.kind", why)
    }
}

/// Resolve every workload's `matrix` and `load` against the scenario's hosts (`hosts` is asked
/// only if one has either): the specs as [`prepare`] takes them, with `pairs` and
/// `arrival_rate` filled in. An error is named within its workload (`workloads[1].receiver`).
pub fn expand(
    workloads: &[WorkloadSpec],
    hosts: impl FnOnce() -> Vec<HostAccess>,
    seed: u64,
) -> Result<Vec<WorkloadSpec>, ConfigError> {
    let needed = workloads.iter().any(|w| w.matrix.is_some() || w.load.is_some() || w.hosts.is_some());
    let all = if needed { hosts() } else { vec![] };
    let within = |i: usize| move |e: ConfigError| e.within(&format!("workloads[{i}]"));
    workloads.iter().enumerate().map(|(i, w)| w.expanded(i, &all, seed).map_err(within(i))).collect()
}

impl WorkloadSpec {
    fn expanded(&self, index: usize, all: &[HostAccess], seed: u64) -> Result<WorkloadSpec, ConfigError> {
        let mut w = self.clone();
        match self.matrix {
            Some(_) if !self.pairs.is_empty() => {
                return Err(ConfigError::new("pairs", "give pairs or a matrix, not both"))
            }
            Some(m) => w.pairs = m.pairs(&self.matrix_hosts(all)?, self.receiver.as_deref(), seed, index)?,
            None if self.hosts.is_some() => {
                return Err(ConfigError::new("hosts", "lists a matrix's hosts: set matrix"))
            }
            None => {}
        }
        if self.receiver.is_some() && self.matrix != Some(Matrix::Incast) {
            return Err(ConfigError::new("receiver", "is the destination of an incast: set matrix = \"incast\""));
        }
        if let Some(load) = self.load {
            w.arrival_rate = Some(self.rate_at_load(load, &w.pairs, all)?);
        }
        Ok(w)
    }

    /// The matrix's hosts: those listed (each a host of the scenario, once), or all of them.
    fn matrix_hosts<'a>(&self, all: &'a [HostAccess]) -> Result<Vec<&'a str>, ConfigError> {
        let Some(listed) = &self.hosts else { return Ok(all.iter().map(|h| h.name.as_str()).collect()) };
        let known: std::collections::HashSet<&str> = all.iter().map(|h| h.name.as_str()).collect();
        let mut seen = std::collections::HashSet::new();
        listed
            .iter()
            .enumerate()
            .map(|(i, name)| match known.get(name.as_str()) {
                None => Err(ConfigError::new(format!("hosts[{i}]"), format!("no host named '{name}'"))),
                Some(_) if !seen.insert(name.as_str()) => {
                    Err(ConfigError::new(format!("hosts[{i}]"), format!("'{name}' is listed twice")))
                }
                Some(&h) => Ok(h),
            })
            .collect()
    }

    /// The total arrival rate at which each sender offers `load` of its access link: senders ×
    /// load × C / (8 × mean size). Exact only if every sender has the same access rate and
    /// appears in as many pairs as every other (each arrival picks a pair uniformly), so
    /// anything else is refused.
    fn rate_at_load(&self, load: f64, pairs: &[(String, String)], all: &[HostAccess]) -> Result<f64, ConfigError> {
        if !(load.is_finite() && load > 0.0 && load <= 1.0) {
            return Err(ConfigError::new("load", "must be in (0, 1]: the fraction of each sender's access link"));
        }
        if self.arrival_rate.is_some() {
            return Err(ConfigError::new("load", "sets the arrival rate: give load or arrival_rate, not both"));
        }
        let mut per_source = std::collections::BTreeMap::new();
        for (src, _) in pairs {
            *per_source.entry(src.as_str()).or_insert(0u64) += 1;
        }
        let counts: Vec<u64> = per_source.values().copied().collect();
        if counts.iter().any(|&c| c != counts[0]) {
            return Err(ConfigError::new("load", "senders appear in unequal numbers of pairs: give arrival_rate"));
        }
        let rates: std::collections::HashMap<&str, Option<BitRate>> =
            all.iter().map(|h| (h.name.as_str(), h.rate)).collect();
        let mut access = None;
        for src in per_source.keys() {
            let Some(rate) = rates.get(src).copied().flatten() else {
                return Err(ConfigError::new(
                    "load",
                    format!("host '{src}' has no single outgoing link to take the rate of"),
                ));
            };
            if access.is_some_and(|a| a != rate) {
                return Err(ConfigError::new(
                    "load",
                    format!("senders' access links differ ({} and {rate} at '{src}')", access.unwrap()),
                ));
            }
            access = Some(rate);
        }
        let c_bps = access.expect("at least one pair").0 as f64;
        Ok(per_source.len() as f64 * load * c_bps / (BITS_PER_BYTE * self.size.mean()))
    }
}

const BITS_PER_BYTE: f64 = 8.0;

impl Matrix {
    /// The (source, destination) pairs over `hosts`, in a fixed order.
    fn pairs(
        self,
        hosts: &[&str],
        receiver: Option<&str>,
        seed: u64,
        index: usize,
    ) -> Result<Vec<(String, String)>, ConfigError> {
        let n = hosts.len() as u64;
        let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
        match self {
            Matrix::Permutation | Matrix::AllToAll if n < 2 => {
                Err(ConfigError::new("hosts", format!("{n} host(s): a matrix needs at least two")))
            }
            Matrix::Permutation => {
                let mut rng = Rng::stream(seed, StreamKind::Matrix, index as u64);
                Ok(derangement(hosts.len(), &mut rng)
                    .into_iter()
                    .enumerate()
                    .map(|(i, j)| pair(hosts[i], hosts[j]))
                    .collect())
            }
            Matrix::AllToAll if n * (n - 1) > MAX_PAIRS => Err(ConfigError::new(
                "hosts",
                format!("all-to-all over {n} hosts is {} pairs, more than {MAX_PAIRS}", n * (n - 1)),
            )),
            Matrix::AllToAll => {
                Ok(hosts.iter().flat_map(|a| hosts.iter().filter(move |b| *b != a).map(move |b| pair(a, b))).collect())
            }
            Matrix::Incast => {
                let r =
                    receiver.ok_or_else(|| ConfigError::new("receiver", "missing: the destination of the incast"))?;
                if !hosts.contains(&r) {
                    return Err(ConfigError::new("receiver", format!("'{r}' is not among the matrix's hosts")));
                }
                let pairs: Vec<_> = hosts.iter().filter(|h| **h != r).map(|h| pair(h, r)).collect();
                if pairs.is_empty() {
                    return Err(ConfigError::new("hosts", "an incast needs at least one sender besides the receiver"));
                }
                Ok(pairs)
            }
        }
    }
}

/// A uniformly random permutation of `0..n` without a fixed point (n ≥ 2): Fisher–Yates
/// shuffles until one has none. A shuffle is a derangement with probability → 1/e, so this
/// takes e ≈ 2.7 shuffles on average (never more than a handful in practice).
fn derangement(n: usize, rng: &mut Rng) -> Vec<usize> {
    loop {
        let mut p: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            p.swap(i, rng.range_inclusive(0, i as u64) as usize);
        }
        if p.iter().enumerate().all(|(i, &j)| i != j) {
            return p;
        }
    }
}

/// A workload's arrivals, drawn one at a time from its own random stream: for each arrival
/// the exponential gap, then the pair, then the size. Without a rate, one arrival per pair in
/// order, all at `start`, each with its size drawn.
#[derive(Clone, Debug)]
pub struct ArrivalDraws {
    rng: Rng,
    at: Dur,
    stop: Dur,
    /// `None`: one arrival per pair at `start` (the index of the next pair in `at_once`).
    mean_gap_s: Option<f64>,
    at_once: usize,
    size: Sampler,
}

impl ArrivalDraws {
    pub fn new(w: &WorkloadSpec, seed: u64, index: usize, end: Dur) -> Self {
        ArrivalDraws {
            rng: Rng::stream(seed, StreamKind::Workload, index as u64),
            at: w.start,
            stop: w.stop.map_or(end, |s| s.min(end)),
            mean_gap_s: w.arrival_rate.map(|r| 1.0 / r),
            at_once: 0,
            size: w.size.sampler(FLOW_SIZE_BOUNDS),
        }
    }

    /// The next arrival, or `None` once past the window (and ever after).
    pub fn next(&mut self, w: &WorkloadSpec) -> Option<Arrival> {
        if self.at >= self.stop {
            return None;
        }
        let Some(mean_gap_s) = self.mean_gap_s else { return self.next_at_once(w) };
        self.at = self.at + Dur::from_secs_f64(self.rng.exponential(mean_gap_s));
        if self.at >= self.stop {
            return None;
        }
        let pair = self.rng.range_inclusive(0, w.pairs.len() as u64 - 1) as usize;
        Some(Arrival { at: self.at, pair, bytes: self.size.draw(&mut self.rng) })
    }

    fn next_at_once(&mut self, w: &WorkloadSpec) -> Option<Arrival> {
        let pair = self.at_once;
        (pair < w.pairs.len()).then(|| {
            self.at_once += 1;
            Arrival { at: self.at, pair, bytes: self.size.draw(&mut self.rng) }
        })
    }
}

/// A workload while the run goes: its template, its draws and the next arrival, ready to be
/// built when its time comes.
pub struct WorkloadRun {
    pub index: usize,
    spec: WorkloadSpec,
    prefix: String,
    draws: ArrivalDraws,
    /// Arrivals handed out so far (the next one's number in its name).
    count: u64,
    next: Option<Arrival>,
}

impl WorkloadRun {
    /// The workload as it runs (its matrix expanded into pairs, its load into a rate).
    pub fn spec(&self) -> &WorkloadSpec {
        &self.spec
    }

    /// When the next arrival comes, if one does.
    pub fn next_at(&self) -> Option<Dur> {
        self.next.as_ref().map(|a| a.at)
    }

    /// The flow of the arrival due now, and the draw of the one after. Its template was
    /// checked for its pair (`pair_checks`), so it cannot be refused.
    pub fn take(&mut self) -> Option<FlowSpec> {
        let a = self.next.take()?;
        let flow = self.spec.flow(&self.prefix, self.count, &a).expect("the template was checked for every pair");
        self.count += 1;
        self.next = self.draws.next(&self.spec);
        Some(flow)
    }

    /// Whether `name` is the name an arrival's flow would have (`PREFIX.k`).
    pub fn names_flow(&self, name: &str) -> bool {
        name.strip_prefix(self.prefix.as_str())
            .and_then(|rest| rest.strip_prefix('.'))
            .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
    }

    /// A stand-in arrival's flow for each pair, to check the template against the topology
    /// once per pair before the run: it differs from a real arrival only in name, start and
    /// size, which no transport refuses (starts lie in the run, sizes are at least a byte).
    /// A template error is named within the workload (`workloads[0].flow.cc`).
    pub fn pair_checks(&self) -> impl Iterator<Item = Result<(usize, FlowSpec), ConfigError>> + '_ {
        (0..self.spec.pairs.len()).map(|pair| {
            let a = Arrival { at: self.spec.start, pair, bytes: self.spec.size.typical(FLOW_SIZE_BOUNDS) };
            let flow = self.spec.flow(&self.prefix, 0, &a);
            flow.map(|f| (pair, f)).map_err(|e| e.within(&format!("workloads[{}]", self.index)))
        })
    }
}

/// Validate every workload and set each up to draw its arrivals as the run goes.
pub fn prepare(workloads: &[WorkloadSpec], seed: u64, end: Dur) -> Result<Vec<WorkloadRun>, ConfigError> {
    let mut runs = Vec::with_capacity(workloads.len());
    for (i, w) in workloads.iter().enumerate() {
        w.validate().map_err(|e| e.within(&format!("workloads[{i}]")))?;
        let mut draws = ArrivalDraws::new(w, seed, i, end);
        let next = draws.next(w);
        let prefix = w.name.clone().unwrap_or_else(|| format!("w{i}"));
        runs.push(WorkloadRun { index: i, spec: w.clone(), prefix, draws, count: 0, next });
    }
    Ok(runs)
}

/// Where in a workload a build error of one of its flows belongs.
pub fn error_path(e: ConfigError, workload: usize, pair: usize) -> ConfigError {
    let path = match e.path.split_once('.').map_or(e.path.as_str(), |(head, _)| head) {
        "src" => format!("pairs[{pair}][0]"),
        "dst" => format!("pairs[{pair}][1]"),
        "" => String::new(),
        _ => format!("flow.{}", e.path),
    };
    ConfigError::new(path, e.message).within(&format!("workloads[{workload}]"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A workload of 50 flows/s of 250 KB TCP flows over two pairs, with `overrides` (JSON
    /// object text) replacing keys.
    fn spec_value(overrides: &str) -> serde_json::Value {
        let mut base = serde_json::json!({
            "pairs": [["a", "b"], ["c", "d"]], "arrival_rate": 50, "size": "250KB", "flow": {"kind": "tcp"}
        });
        let patch: serde_json::Map<String, serde_json::Value> = serde_json::from_str(overrides).unwrap();
        base.as_object_mut().unwrap().extend(patch);
        base
    }

    fn spec(overrides: &str) -> WorkloadSpec {
        serde_json::from_value(spec_value(overrides)).unwrap()
    }

    #[test]
    fn arrivals_are_poisson() {
        // 50 flows/s for 2000 s: the count is Poisson(100000), σ = 316; the gaps' coefficient of
        // variation is 1 for an exponential distribution.
        let w = spec("{}");
        let arrivals = w.arrivals(7, 0, Dur::from_secs(2000));
        let n = arrivals.len() as f64;
        assert!((n - 100_000.0).abs() < 4.0 * 316.0, "{n} arrivals");
        let gaps: Vec<f64> = arrivals.windows(2).map(|p| (p[1].at.0 - p[0].at.0) as f64 * 1e-9).collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64;
        assert!((mean - 0.02).abs() < 0.0003, "mean gap {mean}");
        assert!((var.sqrt() / mean - 1.0).abs() < 0.02, "cv {}", var.sqrt() / mean);
        let first_pair = arrivals.iter().filter(|a| a.pair == 0).count() as f64;
        assert!((first_pair / n - 0.5).abs() < 4.0 * (0.25 / n).sqrt(), "pair 0 share {}", first_pair / n);
        assert!(arrivals.iter().all(|a| a.bytes == 250_000));
    }

    #[test]
    fn pareto_sizes_have_the_declared_mean() {
        // Shape 2.5 has a finite variance, σ² = x_m² α / ((α−1)²(α−2)) with x_m = 0.6·mean,
        // so σ ≈ 0.894·mean and the sample mean of 100k draws lies within 4 standard errors.
        let w = spec(r#"{"size":{"dist":"pareto","mean":"100KB","shape":2.5}}"#);
        let sizes: Vec<f64> = w.arrivals(3, 0, Dur::from_secs(2000)).iter().map(|a| a.bytes as f64).collect();
        let mean = sizes.iter().sum::<f64>() / sizes.len() as f64;
        let sigma = 0.6 * 100_000.0 * (2.5f64 / (1.5f64.powi(2) * 0.5)).sqrt();
        let standard_error = sigma / (sizes.len() as f64).sqrt();
        assert!((mean - 100_000.0).abs() < 4.0 * standard_error, "mean {mean} ± {standard_error}");
        let x_m = 60_000.0;
        assert!(sizes.iter().all(|&s| s >= x_m - 1.0));
    }

    #[test]
    fn same_seed_same_arrivals() {
        let w = spec("{}");
        assert_eq!(w.arrivals(9, 0, Dur::from_secs(10)), w.arrivals(9, 0, Dur::from_secs(10)));
        assert_ne!(w.arrivals(9, 0, Dur::from_secs(10)), w.arrivals(10, 0, Dur::from_secs(10)));
    }

    #[test]
    fn bad_workloads_name_the_key() {
        let err = |overrides: &str| {
            let runs = match prepare(&[spec(overrides)], 1, Dur::from_secs(1)) {
                Ok(runs) => runs,
                Err(e) => return e.to_string(),
            };
            let checks: Result<Vec<_>, _> = runs[0].pair_checks().collect();
            checks.expect_err("an error").to_string()
        };
        assert!(err(r#"{"arrival_rate":0}"#).starts_with("workloads[0].arrival_rate:"));
        assert!(err(r#"{"flow":{"kind":"tcp","src":"x"}}"#).starts_with("workloads[0].flow.src:"));
        assert!(err(r#"{"flow":{"cc":"reno"}}"#).starts_with("workloads[0].flow.kind:"));
        let e = err(r#"{"flow":{"kind":"tcp","mss":"1KB"}}"#);
        assert!(e.starts_with("workloads[0].flow.mss:"), "{e}");
        assert!(err(r#"{"stop":"0s"}"#).starts_with("workloads[0].stop:"));
        assert!(err(r#"{"pairs":[]}"#).starts_with("workloads[0].pairs:"));
        assert!(err(r#"{"size":{"dist":"pareto","mean":"1KB","shape":1}}"#).starts_with("workloads[0].size.shape:"));
    }

    fn hosts(n: usize, rate: u64) -> Vec<HostAccess> {
        (0..n).map(|i| HostAccess { name: format!("h{i}"), rate: Some(BitRate(rate)) }).collect()
    }

    /// A matrix workload over `n` hosts of 10 Gb/s, `overrides` replacing keys.
    fn expanded(n: usize, overrides: &str) -> Result<WorkloadSpec, ConfigError> {
        let mut v = spec_value(overrides);
        v.as_object_mut().unwrap().remove("pairs");
        if v.get("load").is_some() || v.get("one_shot").is_some() {
            v.as_object_mut().unwrap().remove("arrival_rate");
            v.as_object_mut().unwrap().remove("one_shot");
        }
        let w: WorkloadSpec = serde_json::from_value(v).unwrap();
        expand(&[w], || hosts(n, 10_000_000_000), 5).map(|mut ws| ws.remove(0))
    }

    #[test]
    fn a_permutation_is_a_derangement_from_the_seed() {
        let w = expanded(16, r#"{"matrix":"permutation"}"#).unwrap();
        assert_eq!(w.pairs.len(), 16);
        assert!(w.pairs.iter().all(|(a, b)| a != b), "no host sends to itself");
        let mut dsts: Vec<&str> = w.pairs.iter().map(|p| p.1.as_str()).collect();
        dsts.sort();
        dsts.dedup();
        assert_eq!(dsts.len(), 16, "every host receives once");
        let srcs: Vec<String> = (0..16).map(|i| format!("h{i}")).collect();
        assert_eq!(w.pairs.iter().map(|p| p.0.clone()).collect::<Vec<_>>(), srcs, "every host sends once, in order");
        assert_eq!(w.pairs, expanded(16, r#"{"matrix":"permutation"}"#).unwrap().pairs, "same seed, same matrix");
        // Uniform over derangements: over many seeds each host's destination is each other host
        // with probability 1/(n − 1).
        let mut count = [0u32; 4];
        for seed in 0..3000 {
            let p = derangement(4, &mut Rng::stream(seed, StreamKind::Matrix, 0));
            count[p[0]] += 1;
        }
        assert_eq!(count[0], 0);
        assert!(count[1..].iter().all(|&c| (c as f64 - 1000.0).abs() < 4.0 * 25.8), "{count:?}");
    }

    #[test]
    fn all_to_all_and_incast_pairs() {
        let w = expanded(4, r#"{"matrix":"all_to_all"}"#).unwrap();
        assert_eq!(w.pairs.len(), 12);
        assert_eq!(w.pairs[0], ("h0".into(), "h1".into()));
        let w = expanded(4, r#"{"matrix":"incast","receiver":"h2","hosts":["h0","h1","h2"],"size":"64KB"}"#).unwrap();
        assert_eq!(w.pairs, vec![("h0".into(), "h2".into()), ("h1".into(), "h2".into())]);
    }

    /// Without a rate every pair sends one flow at `start`, sizes drawn per flow.
    #[test]
    fn without_a_rate_every_pair_sends_once_at_start() {
        let w = expanded(5, r#"{"matrix":"incast","receiver":"h0","start":"1ms","one_shot":true}"#).unwrap();
        let arrivals = w.arrivals(1, 0, Dur::from_secs(1));
        assert_eq!(arrivals.len(), 4);
        assert!(arrivals
            .iter()
            .enumerate()
            .all(|(i, a)| a.pair == i && a.at == Dur::from_millis(1) && a.bytes == 250_000));
        assert_eq!(w.expected_arrivals(Dur::from_secs(1)), 4.0);
    }

    /// load × C / (8 × mean) per sender: 0.5 × 10 Gb/s / (8 × 250 KB) = 2500 flows/s per host.
    #[test]
    fn load_sets_the_arrival_rate_per_sender() {
        let w = expanded(8, r#"{"matrix":"permutation","load":0.5}"#).unwrap();
        assert_eq!(w.arrival_rate, Some(8.0 * 2500.0));
        let w = expanded(8, r#"{"matrix":"all_to_all","load":0.5}"#).unwrap();
        assert_eq!(w.arrival_rate, Some(8.0 * 2500.0));
    }

    #[test]
    fn bad_matrices_name_the_key() {
        let err = |overrides: &str| expanded(4, overrides).unwrap_err().to_string();
        assert!(err(r#"{"matrix":"incast"}"#).starts_with("workloads[0].receiver: missing"));
        assert!(err(r#"{"matrix":"incast","receiver":"x"}"#).starts_with("workloads[0].receiver:"));
        assert!(err(r#"{"matrix":"permutation","hosts":["h0","h9"]}"#).starts_with("workloads[0].hosts[1]: no host"));
        assert!(err(r#"{"matrix":"permutation","hosts":["h0","h0"]}"#).contains("listed twice"));
        assert!(err(r#"{"matrix":"permutation","hosts":["h0"]}"#).starts_with("workloads[0].hosts:"));
        assert!(err(r#"{"matrix":"permutation","load":1.5}"#).starts_with("workloads[0].load:"));
        let mut both = spec(r#"{"matrix":"permutation","load":0.5}"#);
        both.pairs.clear();
        let e = expand(&[both], || hosts(4, 1), 1).unwrap_err().to_string();
        assert!(e.starts_with("workloads[0].load: sets the arrival rate"), "{e}");
        let big = hosts(1001, 1);
        let mut v = spec_value(r#"{"matrix":"all_to_all"}"#);
        v.as_object_mut().unwrap().remove("pairs");
        let w: WorkloadSpec = serde_json::from_value(v).unwrap();
        let e = expand(&[w], || big, 1).unwrap_err().to_string();
        assert!(e.starts_with("workloads[0].hosts: all-to-all over 1001 hosts is 1001000 pairs"), "{e}");
        let mut v = spec_value(r#"{"matrix":"all_to_all"}"#);
        v.as_object_mut().unwrap().remove("pairs");
        let mut w: WorkloadSpec = serde_json::from_value(v).unwrap();
        w.pairs = vec![("h0".into(), "h1".into())];
        assert!(expand(&[w], || hosts(3, 1), 1).unwrap_err().to_string().starts_with("workloads[0].pairs:"));
    }
}
