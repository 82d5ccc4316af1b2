//! What the wire of one link direction does to a packet besides carrying it for the link's
//! delay, as Linux's netem emulates it (`net/sched/sch_netem.c`, `man tc-netem`):
//! - loss ([`WireLoss`]): Bernoulli with a probability (`loss = 0.01`), or the
//!   Gilbert-Elliott model (netem's `loss gemodel p r 1-h 1-k`);
//! - delay jitter ([`JitterSpec`]): each packet's delay drawn around the link's delay, with or
//!   without reordering;
//! - corruption: a packet damaged on the wire with a probability; it travels, and the receiving
//!   node discards it (its checksum fails), counted under its own reason, "corrupted".
//!
//! The module owns how a scenario writes these (`LossSpec`, `JitterSpec`), their range checks,
//! and the state a direction keeps for them ([`Wire`]): its random streams, the Gilbert-Elliott
//! state and, with jitter or corruption, the packets on the wire ([`WireEffects`]). A link
//! without any of them keeps no `Wire` and runs as before the models. It never touches a
//! packet's contents, the queue or the event queue: the link calls it at the end of a
//! transmission and at each arrival, and schedules what it answers.

use crate::error::ConfigError;
use crate::rng::Rng;
use crate::slab::EntryId;
use crate::units::{Dur, Time};
use serde::de::Error as _;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// A direction's loss as a scenario writes it: a probability (Bernoulli, the default 0), or a
/// table naming a model. Written back in the form it was read in.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum LossSpec {
    Bernoulli(f64),
    Model(LossModel),
}

impl Default for LossSpec {
    fn default() -> Self {
        LossSpec::Bernoulli(0.0)
    }
}

/// A loss model, tagged by `model`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "model")]
pub enum LossModel {
    #[serde(rename = "gilbert-elliott")]
    GilbertElliott(GilbertElliott),
    #[serde(rename = "list")]
    List(ListLoss),
}

/// Scripted losses: the packets lost are the ones whose transmissions on this direction are the
/// listed ones, counted from 1 (ns-3's `ReceiveListErrorModel`, which its TCP tests use to lose
/// chosen segments). For tests and teaching: a loss exactly where the trace should show it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListLoss {
    /// The transmission numbers lost, strictly increasing.
    pub packets: Vec<u64>,
}

/// The most packets a list may name: a script, not a loss process (a rate or a model is).
const MAX_LISTED_LOSSES: usize = 10_000;

/// The Gilbert-Elliott loss model (Gilbert 1960, Elliott 1963; netem's `gemodel`): a Good and
/// a Bad state; per packet, G->B with probability `p` and B->G with `r`; a packet is lost with
/// probability `1 - k` in Good and `1 - h` in Bad. `k = 1, h = 0` is the simple Gilbert model
/// (every packet in Bad lost, none in Good).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GilbertElliott {
    pub p: f64,
    pub r: f64,
    /// Probability that a packet in Bad gets through (netem's default 0).
    #[serde(default)]
    pub h: f64,
    /// Probability that a packet in Good gets through (netem's default 1).
    #[serde(default = "one")]
    pub k: f64,
}

fn one() -> f64 {
    1.0
}

const LOSS_FORMS: &str =
    "a probability such as 0.01, or a table {model = \"gilbert-elliott\", p, r, h, k} or {model = \"list\", packets}";

impl<'de> Deserialize<'de> for LossSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::Number(n) => n.as_f64().map(LossSpec::Bernoulli).ok_or_else(|| D::Error::custom(LOSS_FORMS)),
            Value::Object(mut table) => {
                let model = match table.remove("model") {
                    Some(Value::String(m)) => m,
                    Some(other) => {
                        let why = format!("{other} is not a name");
                        return Err(D::Error::custom(crate::error::nested_message("model", why)));
                    }
                    None => {
                        return Err(D::Error::custom(format!("expected {LOSS_FORMS}, found a table without `model`")))
                    }
                };
                match model.as_str() {
                    "gilbert-elliott" => crate::tagged::body(Value::Object(table))
                        .map(|ge| LossSpec::Model(LossModel::GilbertElliott(ge))),
                    "list" => crate::tagged::body(Value::Object(table)).map(|l| LossSpec::Model(LossModel::List(l))),
                    other => Err(D::Error::custom(crate::error::nested_message(
                        "model",
                        format!("unknown loss model `{other}`, expected `gilbert-elliott` or `list`"),
                    ))),
                }
            }
            other => Err(D::Error::custom(format!("expected {LOSS_FORMS}, found {}", crate::units::describe(&other)))),
        }
    }
}

/// Refuse `x` outside [0, 1], naming `key`.
fn check_probability(key: &str, x: f64) -> Result<(), ConfigError> {
    if (0.0..=1.0).contains(&x) {
        Ok(())
    } else {
        Err(ConfigError::new(key, format!("probability {x} is not in [0, 1]")))
    }
}

impl LossSpec {
    /// Check the probabilities; errors name the key under `key` (e.g. `reverse_loss.p`).
    pub fn validate(&self, key: &str) -> Result<(), ConfigError> {
        match self {
            LossSpec::Bernoulli(p) => check_probability(key, *p),
            LossSpec::Model(LossModel::GilbertElliott(ge)) => {
                for (name, x) in [("p", ge.p), ("r", ge.r), ("h", ge.h), ("k", ge.k)] {
                    check_probability(&format!("{key}.{name}"), x)?;
                }
                if ge.p + ge.r <= 0.0 {
                    // With p = r = 0 the chain never moves: no long-run loss rate exists.
                    return Err(ConfigError::new(format!("{key}.r"), "p + r must be above 0"));
                }
                Ok(())
            }
            LossSpec::Model(LossModel::List(list)) => list.validate(&format!("{key}.packets")),
        }
    }

    /// The long-run fraction of packets lost: `p` for Bernoulli; for Gilbert-Elliott
    /// `π_G (1-k) + π_B (1-h)` with `π_B = p / (p + r)`, the chain's stationary law.
    pub fn mean_loss(&self) -> f64 {
        match self {
            LossSpec::Bernoulli(p) => *p,
            LossSpec::Model(LossModel::GilbertElliott(ge)) => {
                let bad = ge.p / (ge.p + ge.r);
                (1.0 - bad) * (1.0 - ge.k) + bad * (1.0 - ge.h)
            }
            // Finitely many losses: none in the long run.
            LossSpec::Model(LossModel::List(_)) => 0.0,
        }
    }

    /// Whether the direction loses nothing: a Bernoulli probability of 0, or an empty list,
    /// keeps no module.
    pub fn is_lossless(&self) -> bool {
        match self {
            LossSpec::Bernoulli(p) => *p <= 0.0,
            LossSpec::Model(LossModel::List(list)) => list.packets.is_empty(),
            LossSpec::Model(LossModel::GilbertElliott(_)) => false,
        }
    }
}

impl ListLoss {
    fn validate(&self, key: &str) -> Result<(), ConfigError> {
        if self.packets.len() > MAX_LISTED_LOSSES {
            let why = format!("{} entries exceed {MAX_LISTED_LOSSES}, the most a list may name", self.packets.len());
            return Err(ConfigError::new(key, why));
        }
        if self.packets.first() == Some(&0) {
            return Err(ConfigError::new(format!("{key}[0]"), "transmissions are counted from 1"));
        }
        if let Some(i) = self.packets.windows(2).position(|w| w[1] <= w[0]) {
            return Err(ConfigError::new(format!("{key}[{}]", i + 1), "the list must be strictly increasing"));
        }
        Ok(())
    }
}

/// The loss module of one direction: draws, per packet at the end of its transmission, whether
/// the wire loses it, from the link's own random stream.
pub(crate) struct WireLoss {
    model: LossState,
    rng: Rng,
}

enum LossState {
    Bernoulli(f64),
    GilbertElliott {
        ge: GilbertElliott,
        bad: bool,
    },
    /// The listed transmissions, the transmissions so far, and the next entry to meet.
    List {
        packets: Vec<u64>,
        sent: u64,
        next: usize,
    },
}

impl WireLoss {
    /// The module for `spec`, or none when it can lose nothing (then its stream is not kept).
    pub fn new(spec: &LossSpec, rng: Rng) -> Option<WireLoss> {
        let model = match spec {
            _ if spec.is_lossless() => return None,
            LossSpec::Bernoulli(p) => LossState::Bernoulli(*p),
            // netem starts in Good (`clg.state = GOOD_STATE` in get_loss_clg).
            LossSpec::Model(LossModel::GilbertElliott(ge)) => LossState::GilbertElliott { ge: *ge, bad: false },
            LossSpec::Model(LossModel::List(list)) => {
                LossState::List { packets: list.packets.clone(), sent: 0, next: 0 }
            }
        };
        Some(WireLoss { model, rng })
    }

    /// Whether the packet whose transmission just ended is lost. Gilbert-Elliott draws as
    /// netem's `loss_gilb_ell` does: first the transition out of the current state, then the
    /// loss with the probability of the state the packet found (before the transition).
    #[inline]
    pub fn loses(&mut self) -> bool {
        match &mut self.model {
            LossState::Bernoulli(p) => self.rng.bernoulli(*p),
            LossState::GilbertElliott { ge, bad } => {
                let was_bad = *bad;
                let leave = if was_bad { ge.r } else { ge.p };
                if self.rng.uniform() < leave {
                    *bad = !was_bad;
                }
                let through = if was_bad { ge.h } else { ge.k };
                self.rng.uniform() >= through
            }
            LossState::List { packets, sent, next } => {
                *sent += 1;
                let lost = packets.get(*next) == Some(sent);
                *next += lost as usize;
                lost
            }
        }
    }
}

/// The law of a packet's delay around the link's delay `μ`, netem's `delay μ σ distribution D`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JitterDist {
    /// Uniform on [μ − σ, μ + σ): netem without a distribution table (`tabledist`'s
    /// `(rnd % (2σ)) − σ + μ`).
    #[default]
    Uniform,
    /// Normal with mean μ and standard deviation σ: netem's `normal` table (iproute2's
    /// `normal.dist`, the standard normal's inverse CDF scaled by σ).
    Normal,
}

/// Delay jitter of one direction.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JitterSpec {
    /// The spread: half the width for uniform, the standard deviation for normal.
    pub sigma: Dur,
    #[serde(default)]
    pub dist: JitterDist,
    /// Whether a packet may overtake one sent before it (the default, netem's tfifo, which
    /// orders packets by their time to send). Off, a packet arrives no earlier than the one
    /// sent before it: its arrival is `max(sent + delay, previous arrival)`, the rule netem
    /// applies when a rate is set (netem_enqueue's `if (q->rate)` block takes the last
    /// queued packet's time to send as the reference).
    #[serde(default = "yes")]
    pub reorder: bool,
}

fn yes() -> bool {
    true
}

/// The largest jitter quench accepts: a second, far beyond any path's (and within f64's exact
/// integers in nanoseconds many times over).
const MAX_SIGMA: Dur = Dur::from_secs(1);

impl JitterSpec {
    pub fn validate(&self, key: &str) -> Result<(), ConfigError> {
        if self.sigma > MAX_SIGMA {
            return Err(ConfigError::new(format!("{key}.sigma"), format!("{} exceeds {MAX_SIGMA}", self.sigma)));
        }
        Ok(())
    }
}

/// A packet on the wire of a direction with jitter or corruption.
#[derive(Clone, Copy, Debug)]
struct OnWire {
    at: Time,
    /// Order of sending, which breaks ties between equal arrival times (first sent, first out).
    order: u64,
    id: EntryId,
    fate: WireFate,
}

/// What becomes of a packet on a wire with jitter or corruption when its arrival comes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WireFate {
    Delivered,
    /// Corrupted: the receiving node discards it.
    Corrupted,
    /// Cut off when the link went down (`changes.rs`); its drop is already recorded.
    Cut,
}

impl PartialEq for OnWire {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for OnWire {}
impl PartialOrd for OnWire {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for OnWire {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.at, self.order).cmp(&(other.at, other.order))
    }
}

/// Jitter and corruption of one direction, with the packets on its wire. Each packet's arrival
/// has an event of its own (the link's fixed-delay pipe queues only its head's), and an
/// arrival takes the earliest packet: in time order, ties in order of sending.
pub(crate) struct WireEffects {
    jitter: Option<JitterSpec>,
    corrupt: f64,
    rng: Rng,
    wire: BinaryHeap<Reverse<OnWire>>,
    /// Of the packets on the wire, those cut off when the link went down.
    cut: u64,
    sent: u64,
    last_arrival: Time,
}

impl WireEffects {
    /// The effects, or none when neither jitter nor corruption is asked for.
    pub fn new(jitter: Option<JitterSpec>, corrupt: f64, rng: Rng) -> Option<WireEffects> {
        let jitter = jitter.filter(|j| j.sigma > Dur::ZERO);
        (jitter.is_some() || corrupt > 0.0).then(|| {
            let wire = BinaryHeap::new();
            WireEffects { jitter, corrupt, rng, wire, cut: 0, sent: 0, last_arrival: Time::ZERO }
        })
    }

    /// Whether packets may be corrupted here.
    pub fn corrupts(&self) -> bool {
        self.corrupt > 0.0
    }

    /// Packets on the wire, but for those cut off (they count as dropped).
    pub fn len(&self) -> u64 {
        self.wire.len() as u64 - self.cut
    }

    /// Put the packet in entry `id`, whose transmission ended `now`, on the wire with `delay`
    /// the link's delay; returns its arrival time. Draws, in this order, its delay's jitter
    /// and whether it is corrupted.
    pub fn send(&mut self, now: Time, delay: Dur, id: EntryId) -> Time {
        let mut at = now + delay;
        if let Some(j) = self.jitter {
            // A packet cannot arrive before it left: a negative delay is cut to none.
            let ns = delay.0 as f64 + self.draw(j);
            at = now + Dur(ns.max(0.0).round() as u64);
            if !j.reorder {
                at = at.max(self.last_arrival);
            }
        }
        self.last_arrival = self.last_arrival.max(at);
        let fate = if self.rng.bernoulli(self.corrupt) { WireFate::Corrupted } else { WireFate::Delivered };
        self.wire.push(Reverse(OnWire { at, order: self.sent, id, fate }));
        self.sent += 1;
        at
    }

    /// The jitter of one packet, in nanoseconds.
    fn draw(&mut self, j: JitterSpec) -> f64 {
        let sigma = j.sigma.0 as f64;
        match j.dist {
            JitterDist::Uniform => (2.0 * self.rng.uniform() - 1.0) * sigma,
            JitterDist::Normal => sigma * standard_normal(&mut self.rng),
        }
    }

    /// Take the packet arriving now (the earliest on the wire): its entry and its fate.
    pub fn arrive(&mut self) -> (EntryId, WireFate) {
        let Reverse(p) = self.wire.pop().expect("an arrival event with nothing on the wire");
        self.cut -= (p.fate == WireFate::Cut) as u64;
        (p.id, p.fate)
    }

    /// Mark every packet on the wire not yet cut off as cut (the link went down); returns
    /// their entries, in no particular order. Arrival times and order are unchanged.
    pub fn cut_all(&mut self) -> Vec<EntryId> {
        let mut on_wire = std::mem::take(&mut self.wire).into_vec();
        let mut cut = Vec::new();
        for Reverse(p) in &mut on_wire {
            if p.fate != WireFate::Cut {
                p.fate = WireFate::Cut;
                cut.push(p.id);
            }
        }
        self.wire = BinaryHeap::from(on_wire);
        self.cut += cut.len() as u64;
        cut
    }
}

/// Everything one direction's wire does besides its fixed delay: a loss module, jitter and
/// corruption, any of them absent. A link keeps one only if it has at least one.
pub(crate) struct Wire {
    loss: Option<WireLoss>,
    effects: Option<WireEffects>,
}

/// What became of a packet put on the wire ([`Wire::send`]).
pub(crate) enum Sent {
    /// Lost: the link drops it now.
    Lost,
    /// On a wire with jitter or corruption, arriving then (an event of its own).
    Arrives(Time),
    /// Neither: it joins the link's fixed-delay pipe.
    Pipe,
}

impl Wire {
    /// The wire of a direction with `loss`, `jitter` and `corrupt`, from the loss module's
    /// stream and the stream of jitter and corruption; none when it would do nothing.
    pub fn new(
        loss: &LossSpec,
        jitter: Option<JitterSpec>,
        corrupt: f64,
        (loss_rng, effects_rng): (Rng, Rng),
    ) -> Option<Box<Wire>> {
        let wire =
            Wire { loss: WireLoss::new(loss, loss_rng), effects: WireEffects::new(jitter, corrupt, effects_rng) };
        (wire.loss.is_some() || wire.effects.is_some()).then(|| Box::new(wire))
    }

    /// The packet in entry `id` has left the transmitter `now`; `delay` is the link's delay.
    /// The loss draw comes first; a lost packet draws nothing else. Out of line: a link
    /// without a `Wire` (nearly all) then pays only the test for one at each transmission's end.
    #[inline(never)]
    pub fn send(&mut self, now: Time, delay: Dur, id: EntryId) -> Sent {
        if self.loss.as_mut().is_some_and(|l| l.loses()) {
            return Sent::Lost;
        }
        match &mut self.effects {
            Some(e) => Sent::Arrives(e.send(now, delay, id)),
            None => Sent::Pipe,
        }
    }

    /// Whether packets may be corrupted here.
    pub fn corrupts(&self) -> bool {
        self.effects.as_ref().is_some_and(|e| e.corrupts())
    }

    /// Packets on a wire with jitter or corruption (the fixed-delay pipe counts its own).
    pub fn len(&self) -> u64 {
        self.effects.as_ref().map_or(0, |e| e.len())
    }

    /// The earliest packet on a wire with jitter or corruption: its entry and its fate.
    pub fn arrive(&mut self) -> (EntryId, WireFate) {
        self.effects.as_mut().expect("an arrival off the pipe on a wire without effects").arrive()
    }

    /// Mark the packets on a wire with jitter or corruption as cut (see `WireEffects::cut_all`).
    pub fn cut_all(&mut self) -> Vec<EntryId> {
        self.effects.as_mut().map_or_else(Vec::new, WireEffects::cut_all)
    }
}

/// A standard normal draw by the Box-Muller transform (Box & Muller 1958), two uniforms a draw.
fn standard_normal(rng: &mut Rng) -> f64 {
    let u1 = 1.0 - rng.uniform(); // in (0, 1]: ln is finite
    let u2 = rng.uniform();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamKind;

    fn rng() -> Rng {
        Rng::stream(7, StreamKind::LinkLoss, 0)
    }

    /// A Bernoulli module draws exactly as a bare `Rng::bernoulli` with the same stream: the
    /// form the link used before the models, so lossy scenarios record what they did.
    #[test]
    fn bernoulli_draws_as_before() {
        let mut module = WireLoss::new(&LossSpec::Bernoulli(0.1), rng()).unwrap();
        let mut bare = rng();
        for _ in 0..10_000 {
            assert_eq!(module.loses(), bare.bernoulli(0.1));
        }
        assert!(WireLoss::new(&LossSpec::Bernoulli(0.0), rng()).is_none());
    }

    /// The simple Gilbert model (k = 1, h = 0) over 10⁶ packets: the loss rate against
    /// π_B = p/(p+r) and the mean loss run against 1/r. Standard errors: the loss indicator
    /// is a two-state chain with lag-one correlation λ = 1 − p − r, so the rate's variance is
    /// π(1−π)(1+λ)/((1−λ) n); a run is geometric with variance (1−r)/r², over ~n π_B r runs.
    #[test]
    fn simple_gilbert_rate_and_burst_length() {
        let (p, r) = (0.01, 0.3);
        let ge = GilbertElliott { p, r, h: 0.0, k: 1.0 };
        let spec = LossSpec::Model(LossModel::GilbertElliott(ge));
        let mut m = WireLoss::new(&spec, rng()).unwrap();
        let n = 1_000_000;
        let (mut lost, mut runs, mut in_run) = (0u64, 0u64, false);
        for _ in 0..n {
            let l = m.loses();
            lost += l as u64;
            runs += (l && !in_run) as u64;
            in_run = l;
        }
        let pi = spec.mean_loss();
        assert!((pi - p / (p + r)).abs() < 1e-15);
        let lambda = 1.0 - p - r;
        let se_rate = (pi * (1.0 - pi) * (1.0 + lambda) / ((1.0 - lambda) * n as f64)).sqrt();
        let rate = lost as f64 / n as f64;
        assert!((rate - pi).abs() < 4.0 * se_rate, "rate {rate} vs {pi} (se {se_rate})");
        let mean_run = lost as f64 / runs as f64;
        let se_run = ((1.0 - r) / (r * r) / runs as f64).sqrt();
        assert!((mean_run - 1.0 / r).abs() < 4.0 * se_run, "run {mean_run} vs {} (se {se_run})", 1.0 / r);
    }

    /// Full Gilbert-Elliott (h, k inside (0, 1)): the long-run rate π_G(1−k) + π_B(1−h).
    #[test]
    fn gilbert_elliott_rate() {
        let ge = GilbertElliott { p: 0.05, r: 0.2, h: 0.4, k: 0.98 };
        let spec = LossSpec::Model(LossModel::GilbertElliott(ge));
        let want = 0.8 * 0.02 + 0.2 * 0.6;
        assert!((spec.mean_loss() - want).abs() < 1e-12);
        let mut m = WireLoss::new(&spec, rng()).unwrap();
        let n = 1_000_000;
        let rate = (0..n).filter(|_| m.loses()).count() as f64 / n as f64;
        // Bound on the chain's variance inflation (1+λ)/(1−λ) = 7: σ ≤ √(0.25·7/n).
        assert!((rate - want).abs() < 4.0 * (0.25 * 7.0 / n as f64).sqrt(), "{rate} vs {want}");
    }

    /// A list loses exactly the listed transmissions, counted from 1, and no other.
    #[test]
    fn a_list_loses_the_listed_transmissions() {
        let spec = LossSpec::Model(LossModel::List(ListLoss { packets: vec![1, 5, 6, 12] }));
        let mut m = WireLoss::new(&spec, rng()).unwrap();
        let lost: Vec<u64> = (1..=20).filter(|_| m.loses()).collect();
        assert_eq!(lost, vec![1, 5, 6, 12]);
        assert_eq!(spec.mean_loss(), 0.0);
        let empty = LossSpec::Model(LossModel::List(ListLoss { packets: vec![] }));
        assert!(empty.is_lossless() && WireLoss::new(&empty, rng()).is_none());
        let list = |packets: Vec<u64>| LossSpec::Model(LossModel::List(ListLoss { packets }));
        assert_eq!(list(vec![0, 3]).validate("loss").unwrap_err().path, "loss.packets[0]");
        assert_eq!(list(vec![2, 7, 7]).validate("loss").unwrap_err().path, "loss.packets[2]");
        assert_eq!(list((1..=10_001).collect()).validate("loss").unwrap_err().path, "loss.packets");
        let read: LossSpec = serde_json::from_str(r#"{"model": "list", "packets": [3, 9]}"#).unwrap();
        assert_eq!(read, list(vec![3, 9]));
        assert_eq!(serde_json::to_string(&read).unwrap(), r#"{"model":"list","packets":[3,9]}"#);
    }

    #[test]
    fn ranges_are_checked_naming_the_key() {
        let ge = |p, r, h, k| LossSpec::Model(LossModel::GilbertElliott(GilbertElliott { p, r, h, k }));
        assert_eq!(ge(0.1, 0.2, 0.0, 1.5).validate("loss").unwrap_err().path, "loss.k");
        assert_eq!(ge(0.0, 0.0, 0.0, 1.0).validate("reverse_loss").unwrap_err().path, "reverse_loss.r");
        assert_eq!(LossSpec::Bernoulli(-0.1).validate("loss").unwrap_err().path, "loss");
        assert!(ge(0.0, 0.5, 0.0, 1.0).validate("loss").is_ok());
    }

    /// A number reads as Bernoulli and is written back as the same number; a table reads as
    /// a model, with netem's defaults for h and k.
    #[test]
    fn loss_reads_both_forms() {
        let b: LossSpec = serde_json::from_str("0.25").unwrap();
        assert_eq!(b, LossSpec::Bernoulli(0.25));
        assert_eq!(serde_json::to_string(&b).unwrap(), "0.25");
        let m: LossSpec = serde_json::from_str(r#"{"model": "gilbert-elliott", "p": 0.1, "r": 0.5}"#).unwrap();
        assert_eq!(m, LossSpec::Model(LossModel::GilbertElliott(GilbertElliott { p: 0.1, r: 0.5, h: 0.0, k: 1.0 })));
        let back: LossSpec = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
        assert_eq!(back, m);
        assert!(serde_json::from_str::<LossSpec>(r#"{"model": "bursty", "p": 0.1}"#).is_err());
        assert!(serde_json::from_str::<LossSpec>(r#""often""#).is_err());
    }

    /// Draw `n` delays of 10 ms with the given jitter, sent 1 µs apart; returns the delays (s)
    /// and how many packets arrived before one sent earlier.
    fn delays(j: JitterSpec, n: usize) -> (Vec<f64>, usize) {
        let mut w = WireEffects::new(Some(j), 0.0, rng()).unwrap();
        let mut slab = crate::slab::PacketSlab::default();
        let mut sent_at = Vec::new();
        for i in 0..n {
            let now = Time(i as u64 * 1000);
            let id = slab.hold(crate::qdisc::harness::packet(i as u32, 1, 100));
            w.send(now, Dur(10_000_000), id);
            sent_at.push(now);
        }
        let mut order = Vec::new();
        let mut delays = Vec::new();
        let mut last = Time::ZERO;
        while w.len() > 0 {
            let Reverse(top) = *w.wire.peek().unwrap();
            w.arrive();
            assert!(top.at >= last, "arrivals in time order");
            last = top.at;
            delays.push((top.at - sent_at[top.order as usize]).as_secs_f64());
            order.push(top.order);
        }
        let reordered = order.windows(2).filter(|w| w[1] < w[0]).count();
        (delays, reordered)
    }

    fn mean_sd(x: &[f64]) -> (f64, f64) {
        let n = x.len() as f64;
        let m = x.iter().sum::<f64>() / n;
        (m, (x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / n).sqrt())
    }

    /// Uniform on [μ−σ, μ+σ]: mean μ, standard deviation σ/√3; normal: mean μ, deviation σ
    /// (σ = 2 ms ≪ μ = 10 ms, so the cut at 0 never acts). 10⁵ draws: the mean's standard
    /// error is sd/√n (≈ 4 µs), the deviation's ≈ sd/√(2n).
    #[test]
    fn jitter_moments_match_the_closed_form() {
        let n = 100_000;
        let sigma = 0.002;
        for (dist, sd) in [(JitterDist::Uniform, sigma / 3f64.sqrt()), (JitterDist::Normal, sigma)] {
            let (d, reordered) = delays(JitterSpec { sigma: Dur(2_000_000), dist, reorder: true }, n);
            let (m, s) = mean_sd(&d);
            let se = sd / (n as f64).sqrt();
            assert!((m - 0.010).abs() < 4.0 * se, "{dist:?} mean {m}");
            assert!((s - sd).abs() < 4.0 * sd / (2.0 * n as f64).sqrt(), "{dist:?} sd {s} vs {sd}");
            assert!(reordered > 0, "{dist:?}: packets 1 µs apart with ms of jitter reorder");
        }
    }

    /// Without reordering no packet overtakes one sent before it.
    #[test]
    fn no_reordering_keeps_sending_order() {
        let j = JitterSpec { sigma: Dur(2_000_000), dist: JitterDist::Normal, reorder: false };
        let (_, reordered) = delays(j, 10_000);
        assert_eq!(reordered, 0);
    }
}
