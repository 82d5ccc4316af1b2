//! Random Early Detection and its adaptive variants, as one queue discipline whose variants are
//! policies (docs/mechanisms.md#red).
//!
//! Sources: Floyd & Jacobson, "Random Early Detection Gateways for Congestion Avoidance", ToN
//! 1(4), 1993 (FJ93); Floyd, "Recommendations on using the gentle_ variant of RED", 2000;
//! Feng, Kandlur, Saha & Shin, "A Self-Configuring RED Gateway", INFOCOM '99 (Feng99); Floyd,
//! Gummadi & Shenker, "Adaptive RED", 2001 (ARED); RFC 3168 (ECN). Code read for the details the
//! papers leave open: ns-2 `queue/red.cc`, ns-3 `red-queue-disc.cc`.
//!
//! **Per arrival** (q = queue before the arrival, in the mode's unit):
//! - average: after an idle period of length t, `avg = avg·(1−w_q)^(m+1) + w_q·q` with
//!   `m = ⌊ptc·t⌋`, `ptc = C/(8·mean_packet_size)` packets/s (the ns-3 form); otherwise
//!   `avg = (1−w_q)·avg + w_q·q`. The queue is idle from the moment the link finds it empty.
//! - adaptation of max_p (policy `adapt`), then the region of `avg`:
//!   below min_th (or q ≤ 1): accept; at or above max_th (`curve = "classic"`) or 2·max_th
//!   (`"gentle"`): forced; between: on the first arrival after entering, count = 1 and accept
//!   (ns); afterwards `pb = max_p·(avg−min_th)/(max_th−min_th)` (gentle above max_th:
//!   `pb = max_p + (1−max_p)·(avg−max_th)/max_th`; `nonlinear = true`, Zhou, Yeung & Li's
//!   NLRED: `pb = 1.5·max_p·((avg−min_th)/(max_th−min_th))²` below max_th, the gentle part
//!   unchanged, as ns-3's `NLRED`), spaced by `count` (policy `spacing`):
//!   `"fj93"` `pa = pb/(1−count·pb)`, `"wait"` (ns) `pa = 0` while `count·pb < 1`, then
//!   `pb/(2−count·pb)`, `"independent"` `pa = pb` with no first-arrival exemption (DCQCN's
//!   switches). Byte mode counts in units of mean_packet_size and scales
//!   `pa *= size/mean_packet_size`. An early or forced decision resets count to 0.
//! - the decision's signal (policy `signal`): `"drop"`, or `"mark"` — set CE on ECN-capable
//!   packets instead of dropping them (RFC 3168 section 5); packets that are not ECN-capable are
//!   dropped. In the forced region, ECN-capable packets are dropped (`forced = "drop"`, ns-3
//!   UseHardDrop) or marked (`forced = "mark"`). An accepted packet that does not fit the
//!   buffer (`limit`) is dropped as overflow.
//!
//! **Step marking** (`min_th = max_th = K`, DCTCP's threshold K, RFC 8257 section 3.1): the
//! early region is empty, so with `curve = "classic"` every arrival that finds `avg ≥ K` is a
//! forced decision (marked with `signal = "mark"` and `forced = "mark"`, whatever `max_p`),
//! and with `w_q = 1` the average is the queue the arrival finds; below K nothing happens.
//! With the gentle curve the early region is [K, 2K), with `pb` rising from `max_p` (so from
//! 1 with `max_p = 1`) and the usual first-arrival and count rules.
//!
//! **Adaptation** (`adapt`): `"none"`; `"feng1999"` — max_p ÷ α on entering "below min_th",
//! × β on entering "above max_th", frozen while the status is unchanged (α = 3, β = 2; no
//! bounds, as in ns-2 and ns-3; the status starts at `start`, "below" by default, "above" as
//! ns-3's `InitializeParams`); `"floyd2001"` — every `interval` (0.5 s): if avg is above the
//! 40–60% band of [min_th, max_th] and max_p ≤ top, `max_p += min(alpha, max_p/4)`; if below
//! and max_p ≥ bottom, `max_p ·= beta` (0.01, 0.9, top 0.5, bottom 0.01). Evaluated on the
//! first arrival at or after each interval's end (the queue only changes on arrivals).
//!
//! **Automatic parameters** (ARED, also allowed without adaptation): `w_q = "auto"` gives
//! `1 − exp(−1/ptc)`; `min_th = "auto"` gives `max(5, target_delay·ptc/2)` packets and
//! `max_th = "auto"` 3·min_th (in bytes: × mean_packet_size). They are resolved on the first
//! arrival, when the link rate is known.
//!
//! Parameters and units: `mode` packets|bytes (the unit of q, avg, thresholds); `min_th`,
//! `max_th` "5p", "20KB", a bare number in the mode's unit, or "auto"; `limit` the buffer
//! (packets and/or bytes); `max_p` initial maximum probability (dimensionless); `w_q` weight
//! (dimensionless) or "auto"; `mean_packet_size` bytes; `target_delay` seconds.
//!
//! Structure (as Linux include/net/red.h): [`RedParams`] (`red_parms`, fixed once the link rate
//! is known), [`RedVars`] (`red_vars`, the running state), [`RedStats`] (`red_stats`), and the
//! packets in a [`Fifo`]: RED decides, the FIFO stores.
//!
//! Monitors: `avg_queue` and `arrival_queue` (mode unit) on every arrival — the average after
//! the arrival's update and the instantaneous queue the arrival found, which the update took
//! in — and `max_p` at the first arrival and on every change. The queue table has more rows
//! than arrivals: it records every change, departures included.
//!
//! Departures from FJ93, kept for agreement with ns-2/ns-3: count restarts at 1 (not 0) with
//! no drop on the first arrival above min_th, and no early drop when q ≤ 1 (in the mode's
//! unit). Feng's status starts as "below" (the queue starts empty); ns-3 starts it "above",
//! which divides max_p by α on the first packet (`adapt = { kind = "feng1999", start =
//! "above" }` for ns-3's behaviour).
//! Owns the RED state (average, count, adapted `max_p`) and its FIFO. Must not touch: the link, the
//! world or any endpoint; it sees only the packets it is given and its `QdiscCx`.

use super::fifo::{default_limit, validate_limit, Fifo};
use super::{Backlog, Dequeued, DropReason, Qdisc, QdiscCx};
use crate::error::ConfigError;
use crate::packet::{ecn, Packet};
use crate::rng::Rng;
use crate::units::{parse_quantity, Bytes, Dur, Limit, Quantity, Time};
use serde::{de, Deserialize, Deserializer, Serialize, Serializer};

/// FJ93 section 11: w_q = 0.002.
const DEFAULT_W_Q: f64 = 0.002;
/// FJ93 and ns-3 LInterm = 50: max_p = 1/50.
const DEFAULT_MAX_P: f64 = 0.02;
/// ns-2 `mean_pktsize_` and ns-3 MeanPktSize: 500 bytes.
const DEFAULT_MEAN_PACKET_SIZE: Bytes = Bytes(500);
/// ARED section 5 and ns-2 `targetdelay_`: 5 ms.
const DEFAULT_TARGET_DELAY: Dur = Dur::from_millis(5);
/// ARED: min_th at least 5 packets, max_th = 3·min_th.
const AUTO_MIN_TH_PACKETS: f64 = 5.0;
const AUTO_MAX_OVER_MIN: f64 = 3.0;
/// Zhou, Yeung & Li, "Nonlinear RED", Computer Networks 50(18), 2006, section 3.1 (and ns-3
/// `RedQueueDisc::CalculatePNew` with `NLRED`): pb = 1.5·max_p·x² for x the position of avg
/// between the thresholds, so that the quadratic curve's mean over the region is near the
/// linear one's while small averages see far less dropping.
const NONLINEAR_SCALE: f64 = 1.5;
/// Feng99 (and ns-2/ns-3 FengAdaptiveA/B): divide by 3 below, multiply by 2 above.
const FENG_ALPHA: f64 = 3.0;
const FENG_BETA: f64 = 2.0;
/// ARED Figure 2: interval 0.5 s, alpha min(0.01, max_p/4), beta 0.9, max_p in [0.01, 0.5].
const FLOYD_INTERVAL: Dur = Dur::from_millis(500);
const FLOYD_ALPHA: f64 = 0.01;
const FLOYD_BETA: f64 = 0.9;
const FLOYD_TOP: f64 = 0.5;
const FLOYD_BOTTOM: f64 = 0.01;
/// ARED: the target band is 40%..60% of the way from min_th to max_th.
const FLOYD_BAND: (f64, f64) = (0.4, 0.6);

/// The unit in which the queue, its average and the thresholds are measured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    #[default]
    Packets,
    Bytes,
}

/// The drop curve above max_th.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Curve {
    /// FJ93: everything at or above max_th is a forced drop.
    Classic,
    /// Floyd 2000: pb rises from max_p to 1 between max_th and 2·max_th (ns-3 default).
    #[default]
    Gentle,
}

/// How the count of arrivals since the last drop spaces the drops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Spacing {
    /// FJ93 `pa = pb/(1 − count·pb)`: inter-drop counts uniform on 1..1/pb.
    Fj93,
    /// ns `wait_`: no drop before 1/pb arrivals, then uniform on 1/pb..2/pb (ns default).
    #[default]
    Wait,
    /// No spacing: every arrival in the early region is dropped or marked with probability pb
    /// alone, independently of the others, and the first arrival there is not exempt. DCQCN's
    /// switches mark so (Zhu et al., SIGCOMM 2015, section 3.1: a packet is marked with the
    /// probability the queue's RED curve gives; the HPCC authors' simulator draws one uniform
    /// per packet).
    Independent,
}

impl Spacing {
    /// Whether the count restarts at the first arrival in the early region, which is then
    /// accepted (ns: `count = 1` on entry). A spacing that keeps no count exempts no arrival.
    fn counts_from_region_entry(self) -> bool {
        self != Spacing::Independent
    }
}

/// What an early decision does to the packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Signal {
    #[default]
    Drop,
    /// Set CE on ECN-capable packets (RFC 3168); drop the others.
    Mark,
}

/// In the forced region, what happens to ECN-capable packets when `signal = "mark"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Forced {
    /// ns-3 UseHardDrop = true (default): drop even ECN-capable packets.
    #[default]
    Drop,
    Mark,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FengParams {
    pub alpha: f64,
    pub beta: f64,
    /// The status before the first arrival: "below" (the queue starts empty), or "above" as
    /// ns-3 (which then divides max_p by alpha at the first arrival); left out when "below".
    #[serde(skip_serializing_if = "FengStatus::is_below")]
    pub start: FengStatus,
}

impl Default for FengParams {
    fn default() -> Self {
        FengParams { alpha: FENG_ALPHA, beta: FENG_BETA, start: FengStatus::Below }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FloydParams {
    pub interval: Dur,
    /// Largest additive increase of max_p per interval.
    pub alpha: f64,
    /// Multiplicative decrease factor of max_p.
    pub beta: f64,
    pub top: f64,
    pub bottom: f64,
}

impl Default for FloydParams {
    fn default() -> Self {
        FloydParams {
            interval: FLOYD_INTERVAL,
            alpha: FLOYD_ALPHA,
            beta: FLOYD_BETA,
            top: FLOYD_TOP,
            bottom: FLOYD_BOTTOM,
        }
    }
}

/// How max_p adapts: `"none"`, `"feng1999"`, `"floyd2001"`, or a table with `kind`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Adapt {
    #[default]
    None,
    Feng1999(FengParams),
    Floyd2001(FloydParams),
}

fn deserialize_adapt<'de, D: Deserializer<'de>>(d: D) -> Result<Adapt, D::Error> {
    let v = serde_json::Value::deserialize(d)?;
    let v = match v {
        serde_json::Value::String(name) => serde_json::json!({ "kind": name }),
        other => other,
    };
    Adapt::deserialize(v).map_err(de::Error::custom)
}

/// A threshold: a packet count ("5p"), a size ("20KB"), a bare number in the mode's unit, or
/// "auto" (ARED's rule from the link rate and the target delay).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Threshold {
    #[default]
    Auto,
    Packets(f64),
    Bytes(f64),
    Plain(f64),
}

impl<'de> Deserialize<'de> for Threshold {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match NumberOrText::read(d, "a threshold such as \"5p\" or \"20KB\", a number in the mode's unit, or \"auto\"")?
        {
            NumberOrText::Number(v) if v.is_finite() && v >= 0.0 => Ok(Threshold::Plain(v)),
            NumberOrText::Number(v) => Err(de::Error::custom(format!("threshold {v} must be non-negative"))),
            NumberOrText::Text(s) if s == "auto" => Ok(Threshold::Auto),
            NumberOrText::Text(s) => match parse_quantity(&s).map_err(de::Error::custom)? {
                Quantity::Packets(p) => Ok(Threshold::Packets(p as f64)),
                Quantity::Size(b) => Ok(Threshold::Bytes(b.0 as f64)),
                _ => Err(de::Error::custom(format!("'{s}' is not a threshold (e.g. 5p, 20KB or auto)"))),
            },
        }
    }
}

impl Serialize for Threshold {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            Threshold::Auto => s.serialize_str("auto"),
            Threshold::Packets(p) => s.serialize_str(&format!("{p}p")),
            Threshold::Bytes(b) => s.serialize_str(&format!("{b}B")),
            Threshold::Plain(v) => s.serialize_f64(v),
        }
    }
}

/// The queue weight: a number in (0, 1] or "auto" (ARED's `1 − exp(−1/ptc)`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Weight {
    Auto,
    Fixed(f64),
}

impl Default for Weight {
    fn default() -> Self {
        Weight::Fixed(DEFAULT_W_Q)
    }
}

/// A number or a string, as read for `w_q` and the thresholds.
enum NumberOrText {
    Number(f64),
    Text(String),
}

impl NumberOrText {
    /// Anything but a number or a string is an error listing the `expected` forms.
    fn read<'de, D: Deserializer<'de>>(d: D, expected: &str) -> Result<Self, D::Error> {
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::Number(n) => n
                .as_f64()
                .map(NumberOrText::Number)
                .ok_or_else(|| de::Error::custom(format!("{n} is not a number quench can read"))),
            serde_json::Value::String(s) => Ok(NumberOrText::Text(s)),
            other => Err(de::Error::custom(format!("expected {expected}, found {}", crate::units::describe(&other)))),
        }
    }
}

impl<'de> Deserialize<'de> for Weight {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match NumberOrText::read(d, "a weight in (0, 1] or \"auto\"")? {
            NumberOrText::Number(v) => Ok(Weight::Fixed(v)),
            NumberOrText::Text(s) if s == "auto" => Ok(Weight::Auto),
            NumberOrText::Text(s) => Err(de::Error::custom(format!("'{s}': w_q is a number or \"auto\""))),
        }
    }
}

impl Serialize for Weight {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            Weight::Auto => s.serialize_str("auto"),
            Weight::Fixed(v) => s.serialize_f64(v),
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedConfig {
    #[serde(default)]
    pub mode: Mode,
    #[serde(default)]
    pub min_th: Threshold,
    #[serde(default)]
    pub max_th: Threshold,
    #[serde(default = "default_limit")]
    pub limit: Limit,
    #[serde(default = "default_max_p")]
    pub max_p: f64,
    #[serde(default)]
    pub w_q: Weight,
    #[serde(default = "default_mean_packet_size")]
    pub mean_packet_size: Bytes,
    #[serde(default = "default_target_delay")]
    pub target_delay: Dur,
    #[serde(default)]
    pub curve: Curve,
    #[serde(default)]
    pub spacing: Spacing,
    #[serde(default)]
    pub signal: Signal,
    #[serde(default)]
    pub forced: Forced,
    #[serde(default, deserialize_with = "deserialize_adapt")]
    pub adapt: Adapt,
    /// Nonlinear RED's quadratic curve below max_th (Zhou, Yeung & Li 2006); left out when off.
    #[serde(default, skip_serializing_if = "is_false")]
    pub nonlinear: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn default_max_p() -> f64 {
    DEFAULT_MAX_P
}
fn default_mean_packet_size() -> Bytes {
    DEFAULT_MEAN_PACKET_SIZE
}
fn default_target_delay() -> Dur {
    DEFAULT_TARGET_DELAY
}

impl Default for RedConfig {
    fn default() -> Self {
        serde_json::from_str("{}").expect("every RED field has a default")
    }
}

/// The part of [`RedParams`] that needs the link rate: the weight and the thresholds in the
/// mode's unit, and the mean-sized packets per second.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Resolved {
    pub w_q: f64,
    pub min_th: f64,
    pub max_th: f64,
    /// Mean-sized packets the link sends per second (ns `ptc`).
    pub ptc: f64,
}

impl RedConfig {
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        let unit = |v: f64| v.is_finite() && v > 0.0 && v <= 1.0;
        if !unit(self.max_p) {
            return Err(ConfigError::new("max_p", format!("{} is not in (0, 1]", self.max_p)));
        }
        if let Weight::Fixed(w) = self.w_q {
            if !unit(w) {
                return Err(ConfigError::new("w_q", format!("{w} is not in (0, 1]")));
            }
        }
        if self.mean_packet_size.0 == 0 {
            return Err(ConfigError::new("mean_packet_size", "must be positive"));
        }
        validate_limit(&self.limit, "limit")?;
        let (min, max) =
            (self.threshold_in_mode(self.min_th, "min_th")?, self.threshold_in_mode(self.max_th, "max_th")?);
        // Equal thresholds are a step marker (module notes); only a falling pair is refused.
        if let (Some(lo), Some(hi)) = (min, max) {
            if lo > hi {
                return Err(ConfigError::new("max_th", format!("{hi} must be at least min_th ({lo})")));
            }
        }
        if min.is_none() != max.is_none() {
            return Err(ConfigError::new("max_th", "give both thresholds or set both to \"auto\""));
        }
        self.validate_adapt().map_err(|e| e.within("adapt"))
    }

    fn validate_adapt(&self) -> Result<(), ConfigError> {
        match &self.adapt {
            Adapt::None => Ok(()),
            Adapt::Feng1999(f) if !(f.alpha > 1.0 && f.alpha.is_finite()) => {
                Err(ConfigError::new("alpha", "the divisor must exceed 1"))
            }
            Adapt::Feng1999(f) if !(f.beta > 1.0 && f.beta.is_finite()) => {
                Err(ConfigError::new("beta", "the multiplier must exceed 1"))
            }
            Adapt::Feng1999(_) => Ok(()),
            Adapt::Floyd2001(f) => {
                if f.interval.is_zero() {
                    return Err(ConfigError::new("interval", "must be positive"));
                }
                if !(f.beta > 0.0 && f.beta < 1.0) {
                    return Err(ConfigError::new("beta", format!("{} is not in (0, 1)", f.beta)));
                }
                if !(f.alpha > 0.0 && f.bottom > 0.0 && f.bottom < f.top && f.top <= 1.0) {
                    return Err(ConfigError::new("top", "need alpha > 0 and 0 < bottom < top <= 1"));
                }
                Ok(())
            }
        }
    }

    /// A fixed threshold in the mode's unit (None for "auto"); a count in the other unit is
    /// an error naming the field.
    fn threshold_in_mode(&self, t: Threshold, field: &str) -> Result<Option<f64>, ConfigError> {
        match (t, self.mode) {
            (Threshold::Auto, _) => Ok(None),
            (Threshold::Plain(v), _) | (Threshold::Packets(v), Mode::Packets) | (Threshold::Bytes(v), Mode::Bytes) => {
                Ok(Some(v))
            }
            (Threshold::Packets(v), Mode::Bytes) => {
                Err(ConfigError::new(field, format!("{v}p is a packet count but mode is \"bytes\"")))
            }
            (Threshold::Bytes(v), Mode::Packets) => {
                Err(ConfigError::new(field, format!("{v}B is a size but mode is \"packets\"")))
            }
        }
    }

    /// Resolve "auto" parameters for a link of `rate_bps`.
    pub fn resolve(&self, rate_bps: f64) -> Resolved {
        let ptc = rate_bps / (8.0 * self.mean_packet_size.0 as f64);
        let w_q = match self.w_q {
            Weight::Fixed(w) => w,
            Weight::Auto => 1.0 - (-1.0 / ptc).exp(),
        };
        let unit = match self.mode {
            Mode::Packets => 1.0,
            Mode::Bytes => self.mean_packet_size.0 as f64,
        };
        let auto_min = (self.target_delay.as_secs_f64() * ptc / 2.0).max(AUTO_MIN_TH_PACKETS) * unit;
        let fixed = |t, f| self.threshold_in_mode(t, f).ok().flatten();
        let min_th = fixed(self.min_th, "min_th").unwrap_or(auto_min);
        let max_th = fixed(self.max_th, "max_th").unwrap_or(AUTO_MAX_OVER_MIN * min_th);
        Resolved { w_q, min_th, max_th, ptc }
    }
}

/// The EWMA after an arrival that finds `q` queued, `m` mean-sized packet times after the
/// queue went idle (m = 0 when it was not idle): `avg·(1−w)^(m+1) + w·q`.
pub fn average(avg: f64, q: f64, w_q: f64, m: u64) -> f64 {
    avg * (1.0 - w_q).powf(m as f64 + 1.0) + w_q * q
}

/// pb for an average in the early region (no spacing, no byte scaling).
#[cfg(test)]
pub fn base_probability(curve: Curve, avg: f64, r: &Resolved, max_p: f64) -> f64 {
    early_probability(curve, false, avg, r, max_p)
}

/// pb as [`base_probability`], on Nonlinear RED's quadratic below max_th when `nonlinear`.
/// Only reached with `min_th ≤ avg`, so `avg < max_th` implies `min_th < max_th` and the
/// division is by a positive width even for a step marker.
pub fn early_probability(curve: Curve, nonlinear: bool, avg: f64, r: &Resolved, max_p: f64) -> f64 {
    let p = if avg < r.max_th && nonlinear {
        let x = (avg - r.min_th) / (r.max_th - r.min_th);
        NONLINEAR_SCALE * x * x * max_p
    } else if avg < r.max_th {
        max_p * (avg - r.min_th) / (r.max_th - r.min_th)
    } else {
        match curve {
            Curve::Gentle => max_p + (1.0 - max_p) * (avg - r.max_th) / r.max_th,
            Curve::Classic => 1.0,
        }
    };
    p.clamp(0.0, 1.0)
}

/// pa from pb, the count since the last drop (in mean-sized packets in byte mode) and, in
/// byte mode, the packet's share of a mean-sized packet (ns `modify_p`).
pub fn spaced_probability(spacing: Spacing, pb: f64, count: f64, size_ratio: Option<f64>) -> f64 {
    let c = count * pb;
    let mut p = match spacing {
        Spacing::Fj93 if c < 1.0 => pb / (1.0 - c),
        Spacing::Wait if c < 1.0 => 0.0,
        Spacing::Wait if c < 2.0 => pb / (2.0 - c),
        Spacing::Independent => pb,
        _ => 1.0,
    };
    if let Some(ratio) = size_ratio.filter(|_| p < 1.0) {
        p *= ratio;
    }
    p.min(1.0)
}

/// Feng99's status of the average relative to the thresholds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FengStatus {
    #[default]
    Below,
    Between,
    Above,
}

impl FengStatus {
    fn is_below(&self) -> bool {
        *self == FengStatus::Below
    }
}

/// One Feng99 update: the new status and max_p.
pub fn feng_step(p: &FengParams, status: FengStatus, avg: f64, r: &Resolved, max_p: f64) -> (FengStatus, f64) {
    if r.min_th < avg && avg < r.max_th {
        (FengStatus::Between, max_p)
    } else if avg < r.min_th && status != FengStatus::Below {
        (FengStatus::Below, max_p / p.alpha)
    } else if avg > r.max_th && status != FengStatus::Above {
        (FengStatus::Above, max_p * p.beta)
    } else {
        (status, max_p)
    }
}

/// One ARED update of max_p for the average `avg`.
pub fn floyd_step(p: &FloydParams, avg: f64, r: &Resolved, max_p: f64) -> f64 {
    let span = r.max_th - r.min_th;
    let (lo, hi) = (r.min_th + FLOYD_BAND.0 * span, r.min_th + FLOYD_BAND.1 * span);
    if avg > hi && max_p <= p.top {
        max_p + p.alpha.min(max_p / 4.0)
    } else if avg < lo && max_p >= p.bottom {
        max_p * p.beta
    } else {
        max_p
    }
}

/// What the algorithm decided for one arrival.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Accept,
    Early,
    Forced,
}

/// RED's parameters (Linux `struct red_parms`): the policies and the thresholds in the mode's
/// unit. Fixed once the link rate is known, at the first arrival, and never changed after; what
/// adaptation moves (max_p) is a variable.
#[derive(Clone, Debug, PartialEq)]
pub struct RedParams {
    pub mode: Mode,
    pub curve: Curve,
    pub spacing: Spacing,
    pub signal: Signal,
    pub forced: Forced,
    pub adapt: Adapt,
    pub nonlinear: bool,
    /// Bytes of a mean-sized packet: byte mode's unit of count and of the size scaling.
    pub mean_packet_size: u64,
    /// w_q, min_th, max_th and ptc for this link's rate.
    pub resolved: Resolved,
}

impl RedParams {
    /// The parameters of `cfg` on a link of `rate_bps` ("auto" ones resolved).
    pub fn new(cfg: &RedConfig, rate_bps: f64) -> Self {
        RedParams {
            mode: cfg.mode,
            curve: cfg.curve,
            spacing: cfg.spacing,
            signal: cfg.signal,
            forced: cfg.forced,
            adapt: cfg.adapt.clone(),
            nonlinear: cfg.nonlinear,
            mean_packet_size: cfg.mean_packet_size.0,
            resolved: cfg.resolve(rate_bps),
        }
    }

    /// The queue `fifo` holds, in the mode's unit (ns `q_->length()` / `q_->byteLength()`).
    pub fn queued(&self, fifo: &Fifo) -> f64 {
        match self.mode {
            Mode::Packets => fifo.len() as f64,
            Mode::Bytes => fifo.bytes() as f64,
        }
    }

    /// The average from which a decision is forced: max_th, or 2·max_th on the gentle curve.
    fn forced_from(&self) -> f64 {
        match self.curve {
            Curve::Classic => self.resolved.max_th,
            Curve::Gentle => 2.0 * self.resolved.max_th,
        }
    }

    /// Mark instead of dropping? True for an ECN-capable packet when the policy allows.
    pub(super) fn marks(&self, pkt: &Packet, d: Decision) -> bool {
        let capable = pkt.ecn != ecn::NOT_ECT;
        let signal = self.signal == Signal::Mark;
        capable && signal && (d == Decision::Early || self.forced == Forced::Mark)
    }
}

/// Where the adaptation of max_p stands.
#[derive(Clone, Copy, Debug, PartialEq)]
enum AdaptState {
    None,
    Feng(FengStatus),
    Floyd { last: Time },
}

/// RED's running state (Linux `struct red_vars`): the average, the count since the last
/// decision, the idle period and the current max_p. The random draw is taken from the link's
/// stream at the moment of decision, so no drawn number is kept (Linux keeps `qR`).
#[derive(Clone, Debug, PartialEq)]
pub struct RedVars {
    pub avg: f64,
    /// The current maximum probability (moved by adaptation; `cfg.max_p` at the start).
    pub max_p: f64,
    /// Arrivals (and bytes) since the last early or forced decision.
    pub count: u64,
    pub count_bytes: u64,
    /// ns `old`: the previous arrival saw avg at or above min_th.
    pub above_min: bool,
    /// When the link found the queue empty; the queue starts idle at time zero (ns-3).
    pub idle_since: Option<Time>,
    adapt: AdaptState,
    /// Whether max_p has been reported to the monitors yet (it is at the first arrival).
    max_p_reported: bool,
}

impl RedVars {
    pub(super) fn new(cfg: &RedConfig) -> Self {
        // Feng's status starts "below" by default: the queue starts empty (module notes).
        let adapt = match &cfg.adapt {
            Adapt::None => AdaptState::None,
            Adapt::Feng1999(f) => AdaptState::Feng(f.start),
            Adapt::Floyd2001(_) => AdaptState::Floyd { last: Time::ZERO },
        };
        RedVars {
            avg: 0.0,
            max_p: cfg.max_p,
            count: 0,
            count_bytes: 0,
            above_min: false,
            idle_since: Some(Time::ZERO),
            adapt,
            max_p_reported: false,
        }
    }

    /// The EWMA on an arrival that finds `q` queued, decayed over any idle period as if
    /// mean-sized packets had left at the link rate (ns-3 `Estimator`).
    pub(super) fn update_average(&mut self, p: &RedParams, q: f64, now: Time) {
        let r = &p.resolved;
        let m = match self.idle_since.take() {
            Some(t) => (r.ptc * (now - t).as_secs_f64()) as u64,
            None => 0,
        };
        self.avg = average(self.avg, q, r.w_q, m);
    }

    pub(super) fn adapt_max_p(&mut self, p: &RedParams, now: Time) {
        let r = &p.resolved;
        match (&p.adapt, &mut self.adapt) {
            (Adapt::Feng1999(f), AdaptState::Feng(status)) => {
                (*status, self.max_p) = feng_step(f, *status, self.avg, r, self.max_p);
            }
            (Adapt::Floyd2001(f), AdaptState::Floyd { last }) if now >= *last + f.interval => {
                *last = now;
                self.max_p = floyd_step(f, self.avg, r, self.max_p);
            }
            _ => {}
        }
    }

    /// The region of the average and, in the early region, the random draw. `q` is the queue
    /// the arrival finds, in the mode's unit.
    pub(super) fn decide(&mut self, p: &RedParams, q: f64, pkt: &Packet, rng: &mut Rng) -> Decision {
        self.count += 1;
        self.count_bytes += pkt.size as u64;
        if self.avg < p.resolved.min_th || q <= 1.0 {
            self.above_min = false;
            return Decision::Accept;
        }
        if self.avg >= p.forced_from() {
            return Decision::Forced;
        }
        let first = !self.above_min;
        self.above_min = true;
        if first && p.spacing.counts_from_region_entry() {
            self.count = 1;
            self.count_bytes = pkt.size as u64;
            return Decision::Accept;
        }
        let pa = self.drop_probability(p, pkt);
        if rng.uniform() < pa {
            Decision::Early
        } else {
            Decision::Accept
        }
    }

    /// pa for `pkt` at the current average and count.
    pub fn drop_probability(&self, p: &RedParams, pkt: &Packet) -> f64 {
        let pb = early_probability(p.curve, p.nonlinear, self.avg, &p.resolved, self.max_p);
        let mean = p.mean_packet_size;
        let (count, ratio) = match p.mode {
            Mode::Packets => (self.count as f64, None),
            Mode::Bytes => ((self.count_bytes / mean) as f64, Some(pkt.size as f64 / mean as f64)),
        };
        spaced_probability(p.spacing, pb, count, ratio)
    }

    /// An early or forced decision starts the count afresh (FJ93: count = 0).
    fn restart_count(&mut self) {
        self.count = 0;
        self.count_bytes = 0;
    }

    /// On every arrival the average and the queue `q` the arrival found (the sample the
    /// average just took in); max_p at the first arrival and whenever it moved. The queue is
    /// reported after max_p so that the monitors' names keep their first-seen order.
    pub(super) fn report(&mut self, before_max_p: f64, q: f64, cx: &mut QdiscCx) {
        cx.monitor("avg_queue", self.avg);
        if !self.max_p_reported || self.max_p != before_max_p {
            self.max_p_reported = true;
            cx.monitor("max_p", self.max_p);
        }
        cx.monitor("arrival_queue", q);
    }
}

/// What RED did to arrivals (Linux `struct red_stats`). The link counts drops by reason and
/// marks for the result tables; these are RED's own view, for inspection and tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RedStats {
    /// Early decisions carried out as drops / as CE marks.
    pub prob_drop: u64,
    pub prob_mark: u64,
    /// Forced decisions carried out as drops / as CE marks.
    pub forced_drop: u64,
    pub forced_mark: u64,
    /// Accepted (or marked) packets that did not fit the buffer.
    pub pdrop: u64,
}

impl RedStats {
    fn dropped(&mut self, reason: DropReason) {
        match reason {
            DropReason::Early => self.prob_drop += 1,
            DropReason::Forced => self.forced_drop += 1,
            _ => self.pdrop += 1,
        }
    }

    fn marked(&mut self, d: Decision) {
        match d {
            Decision::Early => self.prob_mark += 1,
            Decision::Forced => self.forced_mark += 1,
            Decision::Accept => {}
        }
    }
}

/// RED over a [`Fifo`]: the configuration as written (resolved into [`RedParams`] when the link
/// rate is first known), the variables, the statistics and the packets.
pub struct Red {
    cfg: RedConfig,
    parms: Option<RedParams>,
    vars: RedVars,
    stats: RedStats,
    fifo: Fifo,
}

impl Red {
    pub fn new(cfg: &RedConfig) -> Result<Self, ConfigError> {
        cfg.validate()?;
        Ok(Red {
            cfg: cfg.clone(),
            parms: None,
            vars: RedVars::new(cfg),
            stats: RedStats::default(),
            fifo: Fifo::new(cfg.limit),
        })
    }

    pub fn average(&self) -> f64 {
        self.vars.avg
    }
    pub fn max_p(&self) -> f64 {
        self.vars.max_p
    }
    /// The parameters, once the first arrival has told the link rate.
    pub fn params(&self) -> Option<&RedParams> {
        self.parms.as_ref()
    }
    pub fn vars(&self) -> &RedVars {
        &self.vars
    }
    pub fn stats(&self) -> RedStats {
        self.stats
    }
}

/// Carry out RED's decision `d` on `pkt` (`mark`: as a CE mark rather than a drop); then the
/// buffer decides whether an accepted or marked packet fits (shared with CHOKe).
pub(super) fn admit(
    (vars, stats, fifo): (&mut RedVars, &mut RedStats, &mut Fifo),
    mut pkt: Packet,
    d: Decision,
    mark: bool,
    cx: &mut QdiscCx,
) {
    if d != Decision::Accept {
        vars.restart_count();
        if !mark {
            let reason = if d == Decision::Early { DropReason::Early } else { DropReason::Forced };
            stats.dropped(reason);
            return cx.drop(pkt, reason);
        }
    }
    if !fifo.has_room(&pkt) {
        stats.dropped(DropReason::Overflow);
        return cx.drop(pkt, DropReason::Overflow);
    }
    if d != Decision::Accept {
        pkt.ecn = ecn::CE;
        cx.note_mark();
        stats.marked(d);
        if d == Decision::Forced {
            cx.monitor("forced_mark", 1.0);
        }
    }
    fifo.push(pkt);
}

impl Qdisc for Red {
    fn enqueue(&mut self, pkt: Packet, cx: &mut QdiscCx) {
        let cfg = &self.cfg;
        let p = self.parms.get_or_insert_with(|| RedParams::new(cfg, cx.link_rate.0 as f64));
        // The queue the arrival finds: the same for the average and for the decision.
        let q = p.queued(&self.fifo);
        let before_max_p = self.vars.max_p;
        self.vars.update_average(p, q, cx.now);
        self.vars.adapt_max_p(p, cx.now);
        self.vars.report(before_max_p, q, cx);
        let d = self.vars.decide(p, q, &pkt, cx.rng);
        let mark = d != Decision::Accept && p.marks(&pkt, d);
        admit((&mut self.vars, &mut self.stats, &mut self.fifo), pkt, d, mark, cx);
    }

    fn dequeue(&mut self, cx: &mut QdiscCx) -> Dequeued {
        dequeue(&mut self.fifo, &mut self.vars, cx.now)
    }

    fn backlog(&self) -> Backlog {
        self.fifo.backlog()
    }
}

/// RED's departure (and CHOKe's): the FIFO's head; an empty queue starts the idle period
/// over which the average decays at the next arrival (Floyd and Jacobson 1993's idle rule).
pub(super) fn dequeue(fifo: &mut Fifo, vars: &mut RedVars, now: Time) -> Dequeued {
    match fifo.pop() {
        Some(p) => Dequeued::Packet(p),
        None => {
            vars.idle_since.get_or_insert(now);
            Dequeued::Empty
        }
    }
}

#[cfg(test)]
#[path = "red_tests.rs"]
mod tests;
