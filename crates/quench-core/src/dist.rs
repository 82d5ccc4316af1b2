//! Size distributions: one module for every size a source or a workload draws (a UDP
//! datagram's payload, a workload flow's bytes), so each kind is written, validated and tested
//! once.
//!
//! A size is written either fixed (`"1500B"`) or as a table tagged by `dist`:
//! - `{dist = "fixed", value}`;
//! - `{dist = "uniform", min, max}`: whole bytes, each of `min..=max` equally likely;
//! - `{dist = "exponential", mean}`;
//! - `{dist = "lognormal", mean, sigma}`: `ln X` is normal with standard deviation `sigma` and
//!   mean `μ = ln(mean) − sigma²/2`, so that `E[X] = mean`;
//! - `{dist = "pareto", mean, shape}`: shape `α > 1`, scale `x_m = mean·(α − 1)/α`;
//! - `{dist = "choice", values, weights}`: one of `values`, with probability proportional to
//!   its weight (equal weights when absent); a draw is a binary search over cumulative weights;
//! - `{dist = "empirical", cdf = [[size, p], ...]}`: a cumulative distribution given by points,
//!   interpolated linearly between them, as ns-3's `EmpiricalRandomVariable` does with
//!   interpolation on (`u ≤ p₀` gives the first size; otherwise the segment whose p brackets
//!   `u`). Sizes and p must not decrease, p lies in [0, 1] and the last p is 1. The Python
//!   front end also reads `file = "sizes.csv"` (two columns, size and p) into `cdf`;
//! - `{dist = "websearch"}` and `{dist = "datamining"}`: the two published data-centre
//!   flow-size distributions as empirical CDFs ([`WEBSEARCH`], [`DATAMINING`]).
//!
//! A continuous draw is rounded to whole bytes and clamped into the context's [`Bounds`] (at
//! least a byte; a UDP payload at most 65507 bytes, so an unbounded tail is cut there). A
//! table whose sizes cannot all be drawn there (an empirical CDF or a named distribution with
//! sizes above a UDP payload) is refused, naming the key.
//!
//! Every draw takes its uniforms from the owner's random stream in a fixed order (one per
//! draw; two for a lognormal), so the same seed gives the same sizes.
//! Owns the distributions' declarations, their checks and the samplers; it draws from the stream
//! its caller passes and keeps none of its own.

use crate::error::{nested_message, ConfigError};
use crate::rng::Rng;
use crate::units::Bytes;
use serde::de::Error as _;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The web-search flow-size distribution of DCTCP (Alizadeh et al., "Data Center TCP
/// (DCTCP)", SIGCOMM 2010, Fig. 4), as (bytes, cumulative probability): the table used in
/// pFabric's and HPCC's simulations, distributed as `DCTCP_CDF` with the empirical traffic
/// generator of github.com/datacenter/empirical-traffic-gen. Mean with linear interpolation:
/// 1,711,250 bytes.
pub const WEBSEARCH: [(u64, f64); 12] = [
    (0, 0.0),
    (10_000, 0.15),
    (20_000, 0.2),
    (30_000, 0.3),
    (50_000, 0.4),
    (80_000, 0.53),
    (200_000, 0.6),
    (1_000_000, 0.7),
    (2_000_000, 0.8),
    (5_000_000, 0.9),
    (10_000_000, 0.97),
    (30_000_000, 1.0),
];

/// The data-mining flow-size distribution of VL2 (Greenberg et al., "VL2: A Scalable and
/// Flexible Data Center Network", SIGCOMM 2009, Fig. 2), as (bytes, cumulative probability):
/// the table used in pFabric's simulations, distributed as `VL2_CDF` with the same generator.
/// Mean with linear interpolation: 12,658,198.6 bytes (the last segment, 100 MB to 1 GB with
/// probability 0.02, carries 11 MB of it).
pub const DATAMINING: [(u64, f64); 13] = [
    (0, 0.0),
    (180, 0.1),
    (216, 0.2),
    (560, 0.3),
    (900, 0.4),
    (1_100, 0.5),
    (1_870, 0.6),
    (3_160, 0.7),
    (10_000, 0.8),
    (400_000, 0.9),
    (3_160_000, 0.95),
    (100_000_000, 0.98),
    (1_000_000_000, 1.0),
];

/// The names a `dist` may have, in the order an error lists them.
pub const KINDS: [&str; 9] =
    ["fixed", "uniform", "exponential", "lognormal", "pareto", "choice", "empirical", "websearch", "datamining"];

/// The sizes a context accepts, in bytes: a draw is clamped into `[min, max]`, a size written
/// outside it is refused. `what` names the quantity in errors ("payload", "flow size").
#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    pub min: u64,
    pub max: u64,
    pub what: &'static str,
}

/// A size: fixed, or drawn per use from a distribution. Written out untagged; read by hand so
/// that a value of neither form gets a list of the accepted forms.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum Size {
    Fixed(Bytes),
    Drawn(Dist),
}

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        crate::tagged::fixed_or_drawn(
            d,
            "a size such as \"1500B\", or a table {dist = \"fixed\" | \"uniform\" | \"exponential\" | \
             \"lognormal\" | \"pareto\" | \"choice\" | \"empirical\" | \"websearch\" | \"datamining\", ...}",
        )
        .map(|v| match v {
            Ok(b) => Size::Fixed(b),
            Err(dist) => Size::Drawn(dist),
        })
    }
}

/// A distribution, tagged by `dist` (see the module header for each kind's keys).
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "dist", rename_all = "lowercase")]
pub enum Dist {
    Fixed(Fixed),
    Uniform(Uniform),
    Exponential(Exponential),
    Lognormal(Lognormal),
    Pareto(Pareto),
    Choice(Choice),
    Empirical(Empirical),
    Websearch,
    Datamining,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fixed {
    pub value: Bytes,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Uniform {
    pub min: Bytes,
    pub max: Bytes,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Exponential {
    pub mean: Bytes,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lognormal {
    pub mean: Bytes,
    /// Standard deviation of ln X (dimensionless).
    pub sigma: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pareto {
    pub mean: Bytes,
    /// α > 1 (heavy-tailed: infinite variance for α ≤ 2).
    pub shape: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Choice {
    pub values: Vec<Bytes>,
    #[serde(default)]
    pub weights: Vec<f64>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Empirical {
    /// (size, cumulative probability) points.
    #[serde(default)]
    pub cdf: Vec<(Bytes, f64)>,
    /// A CSV file is read by the Python front end, which replaces it by `cdf`; the engine
    /// only refuses it with a pointer there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

impl<'de> Deserialize<'de> for Dist {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let Value::Object(mut table) = Value::deserialize(d)? else {
            return Err(D::Error::custom("expected a table with a `dist` key"));
        };
        let kind = match table.remove("dist") {
            Some(Value::String(kind)) => kind,
            Some(other) => return Err(D::Error::custom(nested_message("dist", format!("{other} is not a name")))),
            None => return Err(D::Error::missing_field("dist")),
        };
        let body = Value::Object(table);
        use crate::tagged::body as params;
        match kind.as_str() {
            "fixed" => params(body).map(Dist::Fixed),
            "uniform" => params(body).map(Dist::Uniform),
            "exponential" => params(body).map(Dist::Exponential),
            "lognormal" => params(body).map(Dist::Lognormal),
            "pareto" => params(body).map(Dist::Pareto),
            "choice" => params(body).map(Dist::Choice),
            "empirical" => params(body).map(Dist::Empirical),
            "websearch" => no_params(body, &kind).map(|()| Dist::Websearch),
            "datamining" => no_params(body, &kind).map(|()| Dist::Datamining),
            other => {
                let kinds = KINDS.map(|k| format!("`{k}`")).join(", ");
                Err(D::Error::custom(nested_message(
                    "dist",
                    format!("unknown distribution `{other}`, expected one of {kinds}"),
                )))
            }
        }
    }
}

/// A named distribution takes no keys besides `dist`.
fn no_params<E: serde::de::Error>(body: Value, kind: &str) -> Result<(), E> {
    match body.as_object().and_then(|t| t.keys().next()) {
        Some(key) => Err(E::custom(nested_message(key, format!("unknown field `{key}`: {kind} takes no parameters")))),
        None => Ok(()),
    }
}

/// Refuse `b` outside the bounds, at `path`.
fn check(b: Bytes, bounds: Bounds, path: &str) -> Result<(), ConfigError> {
    if b.0 < bounds.min || b.0 > bounds.max {
        let message = format!("{} {b} must be between {} and {} bytes", bounds.what, bounds.min, bounds.max);
        Err(ConfigError::new(path, message))
    } else {
        Ok(())
    }
}

/// Refuse a shape-like parameter that is not a finite number above `floor`.
fn check_above(x: f64, floor: f64, path: &str, why: &str) -> Result<(), ConfigError> {
    if x.is_finite() && x > floor {
        Ok(())
    } else {
        Err(ConfigError::new(path, format!("{x} must be a finite number above {floor} ({why})")))
    }
}

impl Empirical {
    fn validate(&self, bounds: Bounds) -> Result<(), ConfigError> {
        if self.file.is_some() {
            return Err(ConfigError::new(
                "file",
                "CSV files are read by the Python front end (quench.load_scenario / Network); give `cdf` here",
            ));
        }
        let Some(&(last, last_p)) = self.cdf.last() else {
            return Err(ConfigError::new("cdf", "needs at least one [size, p] point"));
        };
        for (i, &(size, p)) in self.cdf.iter().enumerate() {
            if !(0.0..=1.0).contains(&p) {
                return Err(ConfigError::new(format!("cdf[{i}][1]"), format!("p = {p} must lie in [0, 1]")));
            }
            if size.0 > bounds.max {
                return Err(ConfigError::new(
                    format!("cdf[{i}][0]"),
                    format!("{} {size} must be at most {} bytes", bounds.what, bounds.max),
                ));
            }
            if let Some(&(prev, prev_p)) = i.checked_sub(1).map(|j| &self.cdf[j]) {
                if size < prev {
                    return Err(ConfigError::new(
                        format!("cdf[{i}][0]"),
                        format!("{size} is below the size before it, {prev}"),
                    ));
                }
                if p < prev_p {
                    return Err(ConfigError::new(
                        format!("cdf[{i}][1]"),
                        format!("p = {p} is below the p before it, {prev_p}"),
                    ));
                }
            }
        }
        if last_p != 1.0 {
            let i = self.cdf.len() - 1;
            return Err(ConfigError::new(format!("cdf[{i}][1]"), format!("the last p is {last_p}; a CDF ends at 1")));
        }
        check(last, bounds, &format!("cdf[{}][0]", self.cdf.len() - 1))
    }

    fn points(&self) -> Vec<(f64, f64)> {
        self.cdf.iter().map(|&(b, p)| (b.0 as f64, p)).collect()
    }
}

/// The mean of a piecewise-linear CDF through `points` (the atom at the first size plus each
/// segment's probability times its midpoint).
fn empirical_mean(points: &[(f64, f64)]) -> f64 {
    let first = points.first().map_or(0.0, |&(v, p)| v * p);
    first + points.windows(2).map(|w| (w[1].1 - w[0].1) * (w[0].0 + w[1].0) / 2.0).sum::<f64>()
}

fn table_points(table: &[(u64, f64)]) -> Vec<(f64, f64)> {
    table.iter().map(|&(b, p)| (b as f64, p)).collect()
}

impl Dist {
    /// The points of an empirical or named distribution.
    fn points(&self) -> Option<Vec<(f64, f64)>> {
        match self {
            Dist::Empirical(e) => Some(e.points()),
            Dist::Websearch => Some(table_points(&WEBSEARCH)),
            Dist::Datamining => Some(table_points(&DATAMINING)),
            _ => None,
        }
    }

    /// The name written in `dist`.
    fn name(&self) -> &'static str {
        match self {
            Dist::Fixed(_) => "fixed",
            Dist::Uniform(_) => "uniform",
            Dist::Exponential(_) => "exponential",
            Dist::Lognormal(_) => "lognormal",
            Dist::Pareto(_) => "pareto",
            Dist::Choice(_) => "choice",
            Dist::Empirical(_) => "empirical",
            Dist::Websearch => "websearch",
            Dist::Datamining => "datamining",
        }
    }

    fn validate(&self, bounds: Bounds) -> Result<(), ConfigError> {
        match self {
            Dist::Fixed(f) => check(f.value, bounds, "value"),
            Dist::Uniform(u) => {
                check(u.min, bounds, "min")?;
                check(u.max, bounds, "max")?;
                if u.min > u.max {
                    return Err(ConfigError::new("min", "must not exceed max"));
                }
                Ok(())
            }
            Dist::Exponential(e) => check(e.mean, bounds, "mean"),
            Dist::Lognormal(l) => {
                check(l.mean, bounds, "mean")?;
                check_above(l.sigma, 0.0, "sigma", "the standard deviation of ln X")
            }
            Dist::Pareto(p) => {
                check(p.mean, bounds, "mean")?;
                check_above(p.shape, 1.0, "shape", "a finite mean needs a shape above 1")
            }
            Dist::Choice(c) => {
                if c.values.is_empty() {
                    return Err(ConfigError::new("values", "needs at least one size"));
                }
                for (i, v) in c.values.iter().enumerate() {
                    check(*v, bounds, &format!("values[{i}]"))?;
                }
                if !c.weights.is_empty()
                    && (c.weights.len() != c.values.len() || c.weights.iter().any(|w| !w.is_finite() || *w < 0.0))
                {
                    return Err(ConfigError::new("weights", "must be one non-negative weight per value"));
                }
                if !c.weights.is_empty() && c.weights.iter().all(|&w| w == 0.0) {
                    return Err(ConfigError::new("weights", "must not all be zero"));
                }
                // A draw searches the running sums of the weights: they must stay finite.
                let total: f64 = c.weights.iter().sum();
                if !total.is_finite() {
                    return Err(ConfigError::new(
                        "weights",
                        format!(
                            "their sum, {total}, is not a finite number; scale them down (only their ratios count)"
                        ),
                    ));
                }
                Ok(())
            }
            Dist::Empirical(e) => e.validate(bounds),
            Dist::Websearch | Dist::Datamining => {
                let largest = self.points().and_then(|p| p.last().map(|&(v, _)| v as u64)).unwrap_or_default();
                if largest > bounds.max {
                    return Err(ConfigError::new(
                        "dist",
                        format!(
                            "{} reaches {largest} bytes, above the largest {} of {} bytes",
                            self.name(),
                            bounds.what,
                            bounds.max
                        ),
                    ));
                }
                Ok(())
            }
        }
    }
}

impl Size {
    /// Refuse a size or a distribution that cannot be drawn within `bounds`, naming its key
    /// relative to the size (`mean`, `cdf[3][1]`).
    pub fn validate(&self, bounds: Bounds) -> Result<(), ConfigError> {
        match self {
            Size::Fixed(b) => check(*b, bounds, ""),
            Size::Drawn(d) => d.validate(bounds),
        }
    }

    /// The mean in bytes, as written: before rounding to whole bytes and clamping into the
    /// bounds (an exponential's, lognormal's or Pareto's tail beyond a UDP payload is cut there,
    /// so its drawn mean is a little lower).
    pub fn mean(&self) -> f64 {
        match self {
            Size::Fixed(b) | Size::Drawn(Dist::Fixed(Fixed { value: b })) => b.0 as f64,
            Size::Drawn(Dist::Uniform(u)) => (u.min.0 + u.max.0) as f64 / 2.0,
            Size::Drawn(Dist::Exponential(Exponential { mean }))
            | Size::Drawn(Dist::Lognormal(Lognormal { mean, .. }))
            | Size::Drawn(Dist::Pareto(Pareto { mean, .. })) => mean.0 as f64,
            Size::Drawn(Dist::Choice(Choice { values, weights })) => {
                let w = |i: usize| weights.get(i).copied().unwrap_or(1.0);
                let total: f64 = (0..values.len()).map(w).sum();
                values.iter().enumerate().map(|(i, v)| v.0 as f64 * w(i)).sum::<f64>() / total
            }
            Size::Drawn(d) => empirical_mean(&d.points().unwrap_or_default()),
        }
    }

    /// The smallest size a draw can give within `bounds`.
    pub fn smallest(&self, bounds: Bounds) -> Bytes {
        let clamp = |v: u64| Bytes(v.clamp(bounds.min, bounds.max));
        match self {
            Size::Fixed(b) | Size::Drawn(Dist::Fixed(Fixed { value: b })) => *b,
            Size::Drawn(Dist::Uniform(u)) => u.min,
            Size::Drawn(Dist::Choice(c)) => c.values.iter().copied().min().unwrap_or_default(),
            Size::Drawn(d) => match d.points() {
                Some(points) => clamp(points.first().map_or(0.0, |&(v, _)| v).round() as u64),
                None => Bytes(bounds.min),
            },
        }
    }

    /// A size the draws may give: the fixed size, or the mean rounded into the bounds.
    pub fn typical(&self, bounds: Bounds) -> u64 {
        (self.mean().round() as u64).clamp(bounds.min, bounds.max)
    }

    /// Ready to draw from, within `bounds` (validate first).
    pub fn sampler(&self, bounds: Bounds) -> Sampler {
        let draw = match self {
            Size::Fixed(b) | Size::Drawn(Dist::Fixed(Fixed { value: b })) => Draw::Fixed(b.0),
            Size::Drawn(Dist::Uniform(u)) => Draw::Uniform { min: u.min.0, max: u.max.0 },
            Size::Drawn(Dist::Exponential(e)) => Draw::Exponential { mean: e.mean.0 as f64 },
            Size::Drawn(Dist::Lognormal(l)) => {
                Draw::Lognormal { mu: (l.mean.0 as f64).ln() - l.sigma * l.sigma / 2.0, sigma: l.sigma }
            }
            Size::Drawn(Dist::Pareto(p)) => {
                Draw::Pareto { scale: p.mean.0 as f64 * (p.shape - 1.0) / p.shape, exponent: -1.0 / p.shape }
            }
            Size::Drawn(Dist::Choice(Choice { values, weights })) => {
                let cumulative = (0..values.len())
                    .scan(0.0, |sum, i| {
                        *sum += weights.get(i).copied().unwrap_or(1.0);
                        Some(*sum)
                    })
                    .collect();
                Draw::Choice { values: values.iter().map(|v| v.0).collect(), cumulative }
            }
            Size::Drawn(d) => {
                let points = d.points().unwrap_or_default();
                Draw::Empirical {
                    sizes: points.iter().map(|p| p.0).collect(),
                    cdf: points.iter().map(|p| p.1).collect(),
                }
            }
        };
        Sampler { draw, min: bounds.min, max: bounds.max }
    }
}

/// A size made ready to draw from: parameters derived once (a choice's cumulative weights, a
/// CDF's points), so a draw allocates nothing and searches in O(log n).
#[derive(Clone, Debug)]
pub struct Sampler {
    draw: Draw,
    min: u64,
    max: u64,
}

#[derive(Clone, Debug)]
enum Draw {
    Fixed(u64),
    Uniform { min: u64, max: u64 },
    Exponential { mean: f64 },
    Lognormal { mu: f64, sigma: f64 },
    Pareto { scale: f64, exponent: f64 },
    Choice { values: Vec<u64>, cumulative: Vec<f64> },
    Empirical { sizes: Vec<f64>, cdf: Vec<f64> },
}

impl Sampler {
    /// One size in whole bytes within the bounds.
    pub fn draw(&self, rng: &mut Rng) -> u64 {
        match &self.draw {
            Draw::Fixed(b) => *b,
            Draw::Uniform { min, max } => rng.range_inclusive(*min, *max),
            Draw::Choice { values, cumulative } => {
                // The first value whose cumulative weight exceeds u (zero weights never win).
                let u = rng.uniform() * cumulative[cumulative.len() - 1];
                let i = cumulative.partition_point(|&c| c <= u).min(values.len() - 1);
                values[i]
            }
            _ => (self.continuous(rng).round() as u64).clamp(self.min, self.max),
        }
    }

    /// A draw of a continuous distribution before rounding (NaN for the discrete ones, which
    /// `draw` handles itself).
    fn continuous(&self, rng: &mut Rng) -> f64 {
        match &self.draw {
            Draw::Exponential { mean } => rng.exponential(*mean),
            Draw::Lognormal { mu, sigma } => (mu + sigma * standard_normal(rng)).exp(),
            // Inversion: X = x_m · U^(−1/α) with U uniform on (0, 1].
            Draw::Pareto { scale, exponent } => scale * (1.0 - rng.uniform()).powf(*exponent),
            Draw::Empirical { sizes, cdf } => empirical_quantile(sizes, cdf, rng.uniform()),
            Draw::Fixed(_) | Draw::Uniform { .. } | Draw::Choice { .. } => f64::NAN,
        }
    }
}

/// A standard normal variate by the Box–Muller transform (Box & Muller, 1958), from two
/// uniforms: `√(−2 ln U₁) · cos(2π U₂)` with U₁ on (0, 1] (1 − U avoids ln 0). The sine
/// partner is discarded so that each draw uses exactly two uniforms.
fn standard_normal(rng: &mut Rng) -> f64 {
    let radius = (-2.0 * (1.0 - rng.uniform()).ln()).sqrt();
    radius * (std::f64::consts::TAU * rng.uniform()).cos()
}

/// The size at cumulative probability `u` of the piecewise-linear CDF through (sizes, cdf):
/// the first size when `u ≤ cdf[0]`, else linear between the two points whose p bracket `u`
/// (the first point with p ≥ u and the one before it, whose p is then below u, so the
/// segment has positive height).
fn empirical_quantile(sizes: &[f64], cdf: &[f64], u: f64) -> f64 {
    let i = cdf.partition_point(|&p| p < u).min(cdf.len() - 1);
    if i == 0 {
        return sizes[0];
    }
    let (v0, p0, v1, p1) = (sizes[i - 1], cdf[i - 1], sizes[i], cdf[i]);
    v0 + (u - p0) / (p1 - p0) * (v1 - v0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const UDP: Bounds = Bounds { min: 1, max: 65_507, what: "payload" };
    const FLOW: Bounds = Bounds { min: 1, max: crate::limits::MAX_SIZE.0, what: "flow size" };

    fn size(json: &str) -> Size {
        serde_json::from_str(json).unwrap()
    }

    fn draws(s: &Size, bounds: Bounds, n: usize) -> Vec<f64> {
        let sampler = s.sampler(bounds);
        let mut rng = Rng::from_seed(11);
        (0..n).map(|_| sampler.draw(&mut rng) as f64).collect()
    }

    fn continuous(s: &Size, n: usize) -> Vec<f64> {
        let sampler = s.sampler(FLOW);
        let mut rng = Rng::from_seed(5);
        (0..n).map(|_| sampler.continuous(&mut rng)).collect()
    }

    fn mean_var(x: &[f64]) -> (f64, f64) {
        let n = x.len() as f64;
        let mean = x.iter().sum::<f64>() / n;
        (mean, x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0))
    }

    /// The fraction of `x` at or below `v`.
    fn below(x: &[f64], v: f64) -> f64 {
        x.iter().filter(|&&d| d <= v).count() as f64 / x.len() as f64
    }

    /// Four standard errors of a binomial proportion `p` over `n` draws.
    fn four_sigma(p: f64, n: usize) -> f64 {
        4.0 * (p * (1.0 - p) / n as f64).sqrt()
    }

    const N: usize = 200_000;

    /// Uniform on 100..=1100 whole bytes: mean 600, variance ((b−a+1)² − 1)/12 = 83,500.
    /// Tolerances are four standard errors: σ/√n for the mean, and for the variance
    /// √((μ₄ − σ⁴)/n) with μ₄ = 9σ⁴/5 for a uniform (so √(0.8/n)·σ²).
    #[test]
    fn uniform_moments() {
        let d = draws(&size(r#"{"dist":"uniform","min":100,"max":1100}"#), UDP, N);
        let (mean, var) = mean_var(&d);
        let sigma2 = (1001.0f64.powi(2) - 1.0) / 12.0;
        assert!((mean - 600.0).abs() < 4.0 * (sigma2 / N as f64).sqrt(), "{mean}");
        assert!((var - sigma2).abs() < 4.0 * (0.8 / N as f64).sqrt() * sigma2, "{var}");
        assert!(d.iter().all(|&x| (100.0..=1100.0).contains(&x)));
    }

    /// Exponential of mean m: mean m, variance m²; the sample variance's standard error is
    /// √(8/n)·m² (μ₄ = 9m⁴).
    #[test]
    fn exponential_moments() {
        let m = 5000.0;
        let x = continuous(&size(r#"{"dist":"exponential","mean":"5000B"}"#), N);
        let (mean, var) = mean_var(&x);
        assert!((mean - m).abs() < 4.0 * m / (N as f64).sqrt(), "{mean}");
        assert!((var - m * m).abs() < 4.0 * (8.0 / N as f64).sqrt() * m * m, "{var}");
    }

    /// Lognormal with mean 10 kB and σ = 1: the median is e^μ = mean·e^(−σ²/2) = 6065.3 B and
    /// the 90th percentile e^(μ + 1.2816σ); the fraction of draws below each is within four
    /// binomial standard errors of 0.5 and 0.9. The mean (σ_X = mean·√(e^{σ²} − 1) = 1.31·mean)
    /// lies within four standard errors.
    #[test]
    fn lognormal_quantiles_and_mean() {
        let (m, s) = (10_000.0f64, 1.0f64);
        let x = continuous(&size(r#"{"dist":"lognormal","mean":"10000B","sigma":1}"#), N);
        let mu = m.ln() - s * s / 2.0;
        assert!((below(&x, mu.exp()) - 0.5).abs() < four_sigma(0.5, N));
        // Φ⁻¹(0.9) = 1.281552.
        assert!((below(&x, (mu + 1.281552 * s).exp()) - 0.9).abs() < four_sigma(0.9, N));
        let (mean, _) = mean_var(&x);
        let sd = m * ((s * s).exp() - 1.0).sqrt();
        assert!((mean - m).abs() < 4.0 * sd / (N as f64).sqrt(), "{mean}");
    }

    /// Pareto with mean 100 kB and α = 2.5: x_m = 60 kB, P(X > x) = (x_m/x)^α, so the median is
    /// x_m·2^(1/α) and the 99th percentile x_m·100^(1/α); the mean is within four standard errors
    /// (σ² = x_m²α/((α−1)²(α−2))). No draw falls below x_m.
    #[test]
    fn pareto_quantiles_and_mean() {
        let (alpha, x_m) = (2.5f64, 60_000.0f64);
        let x = continuous(&size(r#"{"dist":"pareto","mean":"100KB","shape":2.5}"#), N);
        assert!((below(&x, x_m * 2f64.powf(1.0 / alpha)) - 0.5).abs() < four_sigma(0.5, N));
        assert!((below(&x, x_m * 100f64.powf(1.0 / alpha)) - 0.99).abs() < four_sigma(0.99, N));
        let (mean, _) = mean_var(&x);
        let sd = x_m * (alpha / ((alpha - 1.0).powi(2) * (alpha - 2.0))).sqrt();
        assert!((mean - 100_000.0).abs() < 4.0 * sd / (N as f64).sqrt(), "{mean}");
        assert!(x.iter().all(|&v| v >= x_m));
    }

    /// A weighted choice draws each value in proportion to its weight (binomial counts within
    /// four standard errors), never a zero-weight one; its mean is the weighted mean.
    #[test]
    fn choice_proportions() {
        let s = size(r#"{"dist":"choice","values":[100,200,1500],"weights":[1,0,3]}"#);
        let d = draws(&s, UDP, N);
        let share = |v: f64| d.iter().filter(|&&x| x == v).count() as f64 / N as f64;
        assert!((share(100.0) - 0.25).abs() < four_sigma(0.25, N));
        assert_eq!(share(200.0), 0.0);
        assert_eq!(share(100.0) + share(1500.0), 1.0);
        assert_eq!(s.mean(), (100.0 + 3.0 * 1500.0) / 4.0);
    }

    /// An inline empirical CDF: the fraction of draws at or below each table size is that
    /// point's p (within four binomial standard errors), the mass below the first p sits on the
    /// first size, and the sample mean matches the piecewise-linear mean: 0.2·1000 +
    /// 0.3·1500 + 0.5·5000 = 3150 B (σ < 3000, so 4σ/√n < 27).
    #[test]
    fn empirical_quantiles_follow_the_table() {
        let s = size(r#"{"dist":"empirical","cdf":[[1000,0.2],[2000,0.5],[8000,1.0]]}"#);
        assert!(s.validate(UDP).is_ok());
        assert_eq!(s.mean(), 3150.0);
        let x = continuous(&s, N);
        for (v, p) in [(1000.0, 0.2), (2000.0, 0.5), (1500.0, 0.35), (5000.0, 0.75)] {
            assert!((below(&x, v) - p).abs() < four_sigma(p, N), "P(X ≤ {v}) = {}", below(&x, v));
        }
        assert!(x.iter().all(|&v| (1000.0..=8000.0).contains(&v)));
        let (mean, _) = mean_var(&x);
        assert!((mean - 3150.0).abs() < 27.0, "{mean}");
    }

    /// The named distributions reproduce their published tables: P(X ≤ size) at every table
    /// point within four binomial standard errors, and the sample mean within four standard
    /// errors of the table's piecewise-linear mean (σ estimated from the draws).
    #[test]
    fn named_distributions_follow_their_tables() {
        for (name, table, mean) in
            [("websearch", &WEBSEARCH[..], 1_711_250.0), ("datamining", &DATAMINING[..], 12_658_198.6)]
        {
            let s = size(&format!(r#"{{"dist":"{name}"}}"#));
            assert!((s.mean() - mean).abs() < 1e-3, "{name}: mean {}", s.mean());
            let x = draws(&s, FLOW, N);
            for &(v, p) in table.iter().skip(1) {
                // Rounding to whole bytes moves at most half a byte of probability density.
                assert!((below(&x, v as f64) - p).abs() < four_sigma(p, N) + 1e-4, "{name}: P(X ≤ {v})");
            }
            let (m, var) = mean_var(&x);
            assert!((m - mean).abs() < 4.0 * (var / N as f64).sqrt(), "{name}: {m} vs {mean}");
            assert!(x.iter().all(|&v| v >= 1.0), "{name}: a zero-byte flow");
        }
    }

    /// The sampler draws what the code it replaced drew, for the same uniforms: an exponential
    /// rounded and clamped, a Pareto by inversion with x_m = mean·(α − 1)/α.
    #[test]
    fn draws_match_the_formulas_they_replaced() {
        let mut a = Rng::from_seed(21);
        let mut b = a.clone();
        let exp = size(r#"{"dist":"exponential","mean":"1000B"}"#).sampler(UDP);
        let par = size(r#"{"dist":"pareto","mean":"250KB","shape":1.5}"#).sampler(FLOW);
        for _ in 0..1000 {
            assert_eq!(exp.draw(&mut a), (b.exponential(1000.0).round() as u64).clamp(1, 65_507));
            let scale = 250_000.0 * (1.5 - 1.0) / 1.5;
            let old = (scale * (1.0 - b.uniform()).powf(-1.0 / 1.5)).round() as u64;
            assert_eq!(par.draw(&mut a), old.max(1));
        }
    }

    fn error(json: &str, bounds: Bounds) -> ConfigError {
        match serde_json::from_str::<Size>(json) {
            Ok(s) => s.validate(bounds).expect_err("refused"),
            Err(e) => ConfigError::from_serde(".", &e.to_string()),
        }
    }

    #[test]
    fn bad_sizes_name_the_key() {
        let e = error(r#"{"dist":"gaussian","mean":1}"#, UDP);
        assert_eq!(e.path, "dist");
        for kind in KINDS {
            assert!(e.message.contains(&format!("`{kind}`")), "{e}");
        }
        let cases = [
            (r#"{"dist":"empirical","cdf":[[10,0.5],[20,0.9]]}"#, "cdf[1][1]"),
            (r#"{"dist":"empirical","cdf":[[10,0.5],[5,1]]}"#, "cdf[1][0]"),
            (r#"{"dist":"empirical","cdf":[[10,0.5],[20,0.4],[30,1]]}"#, "cdf[1][1]"),
            (r#"{"dist":"empirical","cdf":[[10,1.5]]}"#, "cdf[0][1]"),
            (r#"{"dist":"empirical","cdf":[]}"#, "cdf"),
            (r#"{"dist":"empirical","cdf":[[10,0.5],[70000,1]]}"#, "cdf[1][0]"),
            (r#"{"dist":"empirical","file":"x.csv"}"#, "file"),
            (r#"{"dist":"websearch"}"#, "dist"),
            (r#"{"dist":"websearch","mean":5}"#, "mean"),
            (r#"{"dist":"lognormal","mean":1000,"sigma":0}"#, "sigma"),
            (r#"{"dist":"pareto","mean":1000,"shape":1}"#, "shape"),
            (r#"{"dist":"fixed","value":0}"#, "value"),
            (r#"{"dist":"choice","values":[1,2],"weights":[0,0]}"#, "weights"),
            (r#"{"dist":"choice","values":[1,0]}"#, "values[1]"),
            (r#"{"dist":"uniform","min":9,"max":8}"#, "min"),
        ];
        for (json, path) in cases {
            let e = error(json, UDP);
            assert_eq!(e.path, path, "{json}: {e}");
        }
        assert!(size(r#"{"dist":"websearch"}"#).validate(FLOW).is_ok());
        assert!(size(r#"{"dist":"datamining"}"#).validate(FLOW).is_ok());
    }

    /// A size written out reads back the same (the recorded scenario is loadable).
    #[test]
    fn sizes_round_trip() {
        for json in [
            r#""1500B""#,
            r#"{"dist":"fixed","value":"10B"}"#,
            r#"{"dist":"lognormal","mean":"1000B","sigma":0.5}"#,
            r#"{"dist":"empirical","cdf":[["10B",0.5],["20B",1.0]]}"#,
            r#"{"dist":"websearch"}"#,
        ] {
            let once = serde_json::to_string(&size(json)).unwrap();
            assert_eq!(serde_json::to_string(&size(&once)).unwrap(), once);
            assert_eq!(once, json, "written as read");
        }
    }
}
