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

use crate::dist::{Bounds, Sampler, Size};
use crate::error::ConfigError;
use crate::limits;
use crate::rng::{Rng, StreamKind};
use crate::scenario::FlowSpec;
use crate::units::Dur;
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
    /// an independent Poisson process of rate `arrival_rate / pairs`.
    pub pairs: Vec<(String, String)>,
    /// Mean flow arrivals per second over all pairs together.
    pub arrival_rate: f64,
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
            return Err(ConfigError::new("pairs", "needs at least one (source, destination) pair"));
        }
        if !(self.arrival_rate.is_finite() && self.arrival_rate > 0.0) {
            return Err(ConfigError::new("arrival_rate", "must be a positive number of flows per second"));
        }
        self.size.validate(FLOW_SIZE_BOUNDS).map_err(|e| e.within("size"))?;
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

    /// The expected number of arrivals in `[start, min(stop, end))`.
    pub fn expected_arrivals(&self, end: Dur) -> f64 {
        let stop = self.stop.map_or(end, |s| s.min(end));
        self.arrival_rate * stop.0.saturating_sub(self.start.0) as f64 / 1e9
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
        serde_path_to_error::deserialize(de)
            .map_err(|e| ConfigError::from_serde(&e.path().to_string(), &e.inner().to_string()).within("flow"))
    }
}

/// A workload's arrivals, drawn one at a time from its own random stream: for each arrival
/// the exponential gap, then the pair, then the size.
#[derive(Clone, Debug)]
pub struct ArrivalDraws {
    rng: Rng,
    at: Dur,
    stop: Dur,
    mean_gap_s: f64,
    size: Sampler,
}

impl ArrivalDraws {
    pub fn new(w: &WorkloadSpec, seed: u64, index: usize, end: Dur) -> Self {
        ArrivalDraws {
            rng: Rng::stream(seed, StreamKind::Workload, index as u64),
            at: w.start,
            stop: w.stop.map_or(end, |s| s.min(end)),
            mean_gap_s: 1.0 / w.arrival_rate,
            size: w.size.sampler(FLOW_SIZE_BOUNDS),
        }
    }

    /// The next arrival, or `None` once past the window (and ever after).
    pub fn next(&mut self, w: &WorkloadSpec) -> Option<Arrival> {
        if self.at >= self.stop {
            return None;
        }
        self.at = self.at + Dur::from_secs_f64(self.rng.exponential(self.mean_gap_s));
        if self.at >= self.stop {
            return None;
        }
        let pair = self.rng.range_inclusive(0, w.pairs.len() as u64 - 1) as usize;
        Some(Arrival { at: self.at, pair, bytes: self.size.draw(&mut self.rng) })
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
}
