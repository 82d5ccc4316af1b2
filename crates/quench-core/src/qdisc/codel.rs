//! CoDel, Controlled Delay: Nichols, Jacobson, McGregor & Iyengar, RFC 8289 (2018)
//! (docs/mechanisms.md#codel). Read beside Linux `include/net/codel.h` and `codel_impl.h`.
//!
//! CoDel decides at dequeue, from the sojourn time of the packet leaving (RFC 8289 section
//! 4.1: now minus the packet's enqueue timestamp):
//! - **dodequeue** (section 5.4): a packet whose sojourn is below `target`, or that leaves at
//!   most one `mtu` of bytes behind it (the MAXPACKET test for slow links), clears
//!   `first_above_time`; otherwise the first such packet sets `first_above_time = now +
//!   interval`, and once `now >= first_above_time` the packet is "ok to drop".
//! - **entering the dropping state** (section 5.5): an ok-to-drop packet is dropped (or marked,
//!   below) and the next one dequeued; `count` restarts at 1 unless dropping resumes soon after
//!   it stopped: with `delta = count − lastcount`, if `delta > 1` and `now − drop_next <
//!   16·interval` then `count = delta` (section 5.5's code, which is also Linux's
//!   `codel_dequeue`; the count carry-over is the same in both, so there is no policy for it).
//!   `drop_next = now + interval/√count`, `lastcount = count`.
//! - **in the dropping state** (section 5.5): a packet that is not ok to drop (or an empty
//!   queue) leaves the state; while `now >= drop_next`, the head is dropped, `count += 1`, the
//!   next packet dequeued, and `drop_next = drop_next + interval/√count` (the control law,
//!   section 4.3, advanced from the previous `drop_next`, not from `now`).
//! - **ECN** (section 5.1 and RFC 3168): with `ecn = true` an ECN-capable (ECT) packet that
//!   would be dropped is marked CE and sent instead; in the dropping state a mark ends the
//!   step (Linux: the marked packet is the one returned), `count` and `drop_next` advance as
//!   for a drop. `ce_threshold` (Linux, not in the RFC; off by default): an ECT packet leaving
//!   with a sojourn above it is marked CE whatever the state. FQ-CoDel's
//!   `ce_threshold_selector` (Linux 5.16 `codel_dequeue`, from the L4S work) narrows that to
//!   packets whose DS byte, masked, equals a value: `{ value = 1, mask = 3 }` is ECT(1) only.
//!   The two kinds of mark are counted apart: `ecn_mark` by the control law, `ce_mark` by the
//!   threshold (Linux's `tc -s` counters of the same names).
//!
//! The control law is computed **exactly** by default (`control_law = "exact"`):
//! `interval/√count` in f64, rounded to the nearest nanosecond (the RFC's pseudocode, section
//! 5.5, calls `sqrt`). `control_law = "newton"` is Linux's and ns-3's approximation
//! (`codel_Newton_step`, `CoDelQueueDisc::NewtonStep`): a 16-bit reciprocal square root of
//! `count`, set to 1 when `count` restarts at 1 and refined by one Newton step
//! y ← y·(3 − count·y²)/2 whenever `count` changes otherwise, so it lags a jump of `count`
//! (1 → 2 gives 0.5 against 0.707); the interval is scaled by it in nanoseconds (Linux's and
//! ns-3's 1.024 µs time unit is not modelled). The unit tests check both laws against
//! hand-computed values.
//!
//! The RFC's pseudocode only drops; the ECN handling above is Linux's (`codel_dequeue`: on
//! entering the dropping state a marked packet is sent and no second packet is dequeued). One
//! RFC/Linux difference is FQ-CoDel's: Linux measures MAXPACKET against the whole qdisc's
//! backlog, the RFC per flow queue (see `fq_codel.rs`).
//!
//! Parameters and units (RFC 8289 section 4.2–4.3 defaults): `target` 5 ms, `interval`
//! 100 ms, `mtu` 1500 B (MAXPACKET; Linux uses the device MTU plus the link-layer header),
//! `limit` 1000 packets (Linux sch_codel's default; the RFC leaves the buffer to the
//! implementation; an arrival that does not fit is an `overflow` drop), `ecn` false (Linux
//! sch_codel's default), `ce_threshold` none.
//!
//! Drops by the control law count as `early` (an AQM's congestion signal below its hard
//! limit), overflows as `overflow`. Monitors: `count` and `drop_next` (seconds) whenever CoDel
//! drops or marks, and `dropping` (1 on entering the state, 0 on leaving it).
//!
//! Structure: [`CodelParams`] (fixed), [`CodelVars`] (the state machine, which also runs each
//! flow queue of FQ-CoDel through [`CodelQueue`]), [`CodelStats`]; the packets in a [`Fifo`].
//! Owns the CoDel state (the drop schedule, `count`) and its FIFO. Must not touch: the link, the
//! world or any endpoint; it sees only the packets it is given and its `QdiscCx`.

use super::fifo::{default_limit, validate_limit, Fifo};
use super::{Backlog, Dequeued, DropReason, Qdisc, QdiscCx};
use crate::error::ConfigError;
use crate::packet::{ecn, Packet};
use crate::units::{Bytes, Dur, Limit, Time};
use serde::{Deserialize, Serialize};

/// RFC 8289 section 4.2: TARGET = 5 ms.
pub const DEFAULT_TARGET: Dur = Dur::from_millis(5);
/// RFC 8289 section 4.3: INTERVAL = 100 ms.
pub const DEFAULT_INTERVAL: Dur = Dur::from_millis(100);
/// RFC 8289 section 5.4: MAXPACKET, the largest packet; 1500 B, an Ethernet MTU (RFC 894).
pub const DEFAULT_MTU: Bytes = Bytes(1500);
/// RFC 8289 section 5.5: resume with the previous count if within 16 intervals.
const RESUME_INTERVALS: u64 = 16;
/// Linux `codel.h`: the reciprocal square root is kept in 16 bits (`REC_INV_SQRT_BITS`), the
/// top half of a Q0.32 fraction.
const REC_INV_SQRT_SHIFT: u32 = 16;

/// How the control law computes `interval/√count` (`control_law`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ControlLaw {
    /// The square root in f64 (RFC 8289 section 5.5's pseudocode).
    #[default]
    Exact,
    /// Linux's and ns-3's 16-bit reciprocal square root, one Newton step per change of count.
    Newton,
}

impl ControlLaw {
    pub fn is_exact(&self) -> bool {
        *self == ControlLaw::Exact
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodelConfig {
    #[serde(default = "default_limit")]
    pub limit: Limit,
    #[serde(default = "default_target")]
    pub target: Dur,
    #[serde(default = "default_interval")]
    pub interval: Dur,
    #[serde(default = "default_mtu")]
    pub mtu: Bytes,
    #[serde(default)]
    pub ecn: bool,
    /// Mark ECT packets leaving with a sojourn above this (Linux `ce_threshold`); none by default.
    #[serde(default)]
    pub ce_threshold: Option<Dur>,
    /// Left out of a written scenario when exact, so scenarios written before it read the same.
    #[serde(default, skip_serializing_if = "ControlLaw::is_exact")]
    pub control_law: ControlLaw,
}

pub fn default_target() -> Dur {
    DEFAULT_TARGET
}
pub fn default_interval() -> Dur {
    DEFAULT_INTERVAL
}
pub fn default_mtu() -> Bytes {
    DEFAULT_MTU
}

impl Default for CodelConfig {
    fn default() -> Self {
        serde_json::from_str("{}").expect("every CoDel field has a default")
    }
}

/// Which packets `ce_threshold` applies to (Linux `ce_threshold_selector` / `ce_threshold_mask`):
/// those whose DS byte ANDed with `mask` equals `value`. quench carries no DSCP, so a packet's
/// DS byte is its two ECN bits (DSCP 0): `{ value = 1, mask = 3 }` selects ECT(1), the L4S
/// identifier (RFC 9331 section 5.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CeSelector {
    pub value: u8,
    pub mask: u8,
}

impl CeSelector {
    /// Check that the selector can match something, naming the key otherwise.
    pub fn validate(&self) -> Result<(), ConfigError> {
        // Linux reads a zero mask as "no selector"; here leaving the key out says that.
        if self.mask == 0 {
            return Err(ConfigError::new("mask", "must select at least one bit (leave the selector out for all)"));
        }
        if self.value & !self.mask != 0 {
            return Err(ConfigError::new("value", format!("{:#x} has bits outside mask {:#x}", self.value, self.mask)));
        }
        Ok(())
    }

    /// Whether `pkt` is one of the selected packets: its DS byte is its ECN field (no DSCP).
    pub fn matches(&self, pkt: &Packet) -> bool {
        pkt.ecn & self.mask == self.value
    }
}

/// CoDel's fixed parameters (Linux `struct codel_params`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CodelParams {
    pub target: Dur,
    pub interval: Dur,
    /// MAXPACKET in bytes.
    pub mtu: u64,
    pub ecn: bool,
    pub ce_threshold: Option<Dur>,
    /// Restricts `ce_threshold` to the packets it matches; all ECT packets when None.
    pub ce_selector: Option<CeSelector>,
    pub control_law: ControlLaw,
}

impl CodelParams {
    /// Check the time and size parameters, naming the key of a bad one.
    pub fn new(
        target: Dur,
        interval: Dur,
        mtu: Bytes,
        ecn: bool,
        ce_threshold: Option<Dur>,
        control_law: ControlLaw,
    ) -> Result<Self, ConfigError> {
        if interval.is_zero() {
            return Err(ConfigError::new("interval", "must be positive"));
        }
        if target.is_zero() || target >= interval {
            return Err(ConfigError::new("target", format!("must be positive and below interval ({interval})")));
        }
        // MAXPACKET stands for the largest packet: none exceeds the largest IPv4 datagram.
        if mtu.0 == 0 || mtu > crate::limits::MAX_MTU {
            let why = format!("{mtu} is not between 1B and {}, the largest IPv4 datagram", crate::limits::MAX_MTU);
            return Err(ConfigError::new("mtu", why));
        }
        Ok(CodelParams { target, interval, mtu: mtu.0, ecn, ce_threshold, ce_selector: None, control_law })
    }

    /// These parameters with `ce_threshold` restricted to what `selector` matches.
    pub fn with_ce_selector(self, selector: Option<CeSelector>) -> Result<Self, ConfigError> {
        if let Some(s) = &selector {
            s.validate().map_err(|e| e.within("ce_threshold_selector"))?;
        }
        Ok(CodelParams { ce_selector: selector, ..self })
    }
}

/// The control law (RFC 8289 section 4.3): `t + interval/√count`, exact in f64 and rounded
/// to the nearest nanosecond.
pub fn control_law(t: Time, interval: Dur, count: u32) -> Time {
    let step = (interval.0 as f64 / (count.max(1) as f64).sqrt()).round() as u64;
    Time(t.0.saturating_add(step))
}

/// 1/√1 in the 16-bit reciprocal square root: all ones, just below 1.
pub const REC_INV_SQRT_ONE: u16 = u16::MAX;

/// One Newton step of the reciprocal square root of `count`, y ← y·(3 − count·y²)/2, in
/// Q0.32 arithmetic kept to 16 bits (Linux `codel_Newton_step`).
pub fn newton_step(rec_inv_sqrt: u16, count: u32) -> u16 {
    let y = (rec_inv_sqrt as u64) << REC_INV_SQRT_SHIFT; // Q0.32
    let y2 = (y * y) >> 32; // Q0.32
                            // 3 − count·y² in Q32.32, a quarter of it so that the product below fits 64 bits.
    let three_minus = (3u64 << 32).wrapping_sub(count as u64 * y2) >> 2;
    // (3 − count·y²)/4 · y, back to Q0.32 and halved: the shift is 32 − 2 + 1.
    let next = (three_minus * y) >> 31;
    (next >> REC_INV_SQRT_SHIFT) as u16
}

/// The control law with the reciprocal square root: `t + interval·rec_inv_sqrt`, the product
/// truncated to a nanosecond (Linux `reciprocal_scale`).
pub fn control_law_newton(t: Time, interval: Dur, rec_inv_sqrt: u16) -> Time {
    let scale = (rec_inv_sqrt as u64) << REC_INV_SQRT_SHIFT;
    let step = ((interval.0 as u128 * scale as u128) >> 32) as u64;
    Time(t.0.saturating_add(step))
}

/// What CoDel dequeues from: a FIFO, or one flow queue of FQ-CoDel (whose `pop` keeps the
/// discipline's totals too).
pub trait CodelQueue {
    fn pop(&mut self) -> Option<Packet>;
    /// Bytes still queued (for the MAXPACKET test).
    fn bytes(&self) -> u64;
}

impl CodelQueue for Fifo {
    fn pop(&mut self) -> Option<Packet> {
        Fifo::pop(self)
    }
    fn bytes(&self) -> u64 {
        Fifo::bytes(self)
    }
}

/// What CoDel did, by kind (Linux `struct codel_stats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CodelStats {
    /// Packets dropped by the control law.
    pub drop_count: u64,
    /// Packets marked CE by the control law instead of dropped.
    pub ecn_mark: u64,
    /// Packets marked CE for a sojourn above `ce_threshold` (apart from `ecn_mark`; as in
    /// Linux, a packet that already carried CE is counted too).
    pub ce_mark: u64,
    /// Arrivals that did not fit the buffer.
    pub overflow: u64,
    /// The largest packet seen, bytes.
    pub maxpacket: u64,
}

/// CoDel's state (Linux `struct codel_vars`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CodelVars {
    /// Drops (and marks) since entering the dropping state, as the control law counts them.
    pub count: u32,
    /// `count` when the dropping state was last entered.
    pub lastcount: u32,
    pub dropping: bool,
    /// When the sojourn will have been above target for an interval; None while below.
    pub first_above_time: Option<Time>,
    /// When the next drop is due in the dropping state.
    pub drop_next: Time,
    /// 1/√count in 16 bits, for `control_law = "newton"` (Linux `rec_inv_sqrt`).
    pub rec_inv_sqrt: u16,
}

/// The packet in hand after one `dodequeue`, and whether it may be dropped.
struct Taken {
    pkt: Option<Packet>,
    ok_to_drop: bool,
}

impl CodelVars {
    /// RFC 8289 section 5.4 `dodequeue`: take the head and judge its sojourn.
    fn dodequeue(&mut self, p: &CodelParams, q: &mut impl CodelQueue, now: Time) -> Taken {
        let Some(pkt) = q.pop() else {
            self.first_above_time = None;
            return Taken { pkt: None, ok_to_drop: false };
        };
        let sojourn = now - pkt.enqueued_at;
        let mut ok_to_drop = false;
        if sojourn < p.target || q.bytes() <= p.mtu {
            self.first_above_time = None;
        } else {
            match self.first_above_time {
                None => self.first_above_time = Some(now + p.interval),
                Some(t) if now >= t => ok_to_drop = true,
                Some(_) => {}
            }
        }
        Taken { pkt: Some(pkt), ok_to_drop }
    }

    /// Signal congestion on `pkt`: mark it (returned, to be sent) or drop it (None).
    fn signal(p: &CodelParams, mut pkt: Packet, stats: &mut CodelStats, cx: &mut QdiscCx) -> Option<Packet> {
        if p.ecn && pkt.ecn != ecn::NOT_ECT {
            pkt.ecn = ecn::CE;
            stats.ecn_mark += 1;
            cx.note_mark();
            Some(pkt)
        } else {
            stats.drop_count += 1;
            cx.drop(pkt, DropReason::Early);
            None
        }
    }

    /// RFC 8289 section 5.5 `dequeue`: the packet to send, if any, after the drops (or marks)
    /// the state calls for. `report`: put `count`, `drop_next` and `dropping` in the monitors.
    pub fn dequeue(
        &mut self,
        p: &CodelParams,
        q: &mut impl CodelQueue,
        stats: &mut CodelStats,
        cx: &mut QdiscCx,
        report: bool,
    ) -> Option<Packet> {
        let now = cx.now;
        let mut r = self.dodequeue(p, q, now);
        let was_dropping = self.dropping;
        if r.pkt.is_none() {
            self.dropping = false;
        } else if self.dropping {
            if !r.ok_to_drop {
                self.dropping = false;
            }
            while self.dropping && now >= self.drop_next {
                let pkt = r.pkt.take().expect("the dropping state holds a packet");
                self.count = self.count.saturating_add(1);
                self.rec_inv_sqrt = newton_step(self.rec_inv_sqrt, self.count);
                if let Some(marked) = Self::signal(p, pkt, stats, cx) {
                    self.drop_next = self.law(p, self.drop_next);
                    r.pkt = Some(marked);
                    self.report_law(cx, report);
                    break;
                }
                r = self.dodequeue(p, q, now);
                if r.ok_to_drop {
                    self.drop_next = self.law(p, self.drop_next);
                } else {
                    self.dropping = false;
                }
                self.report_law(cx, report);
            }
        } else if r.ok_to_drop {
            let pkt = r.pkt.take().expect("ok to drop a packet in hand");
            r.pkt = match Self::signal(p, pkt, stats, cx) {
                Some(marked) => Some(marked),
                None => self.dodequeue(p, q, now).pkt,
            };
            self.dropping = true;
            let delta = self.count.wrapping_sub(self.lastcount);
            let since_due = now.0 as i128 - self.drop_next.0 as i128;
            let resume = delta > 1 && since_due < (RESUME_INTERVALS * p.interval.0) as i128;
            self.count = if resume { delta } else { 1 };
            // Linux restarts the reciprocal at 1 and refines it from the old value on resuming.
            self.rec_inv_sqrt = if resume { newton_step(self.rec_inv_sqrt, self.count) } else { REC_INV_SQRT_ONE };
            self.drop_next = self.law(p, now);
            self.lastcount = self.count;
            self.report_law(cx, report);
        }
        if report && self.dropping != was_dropping {
            cx.monitor("dropping", self.dropping as u8 as f64);
        }
        let mut pkt = r.pkt?;
        if let Some(th) = p.ce_threshold {
            if now - pkt.enqueued_at > th {
                Self::mark_above_threshold(p, &mut pkt, stats, cx);
            }
        }
        Some(pkt)
    }

    /// `ce_threshold`'s mark on a packet that left above it: ECT packets only, and only those
    /// the selector matches. The selector sees the ECN field as the control law left it, so a
    /// packet the law just marked CE does not match an ECT(1) selector (as in Linux).
    fn mark_above_threshold(p: &CodelParams, pkt: &mut Packet, stats: &mut CodelStats, cx: &mut QdiscCx) {
        if pkt.ecn == ecn::NOT_ECT || p.ce_selector.is_some_and(|s| !s.matches(pkt)) {
            return;
        }
        if pkt.ecn != ecn::CE {
            cx.note_mark();
        }
        pkt.ecn = ecn::CE;
        stats.ce_mark += 1;
    }

    /// The next drop time after `t` by the configured control law.
    fn law(&self, p: &CodelParams, t: Time) -> Time {
        match p.control_law {
            ControlLaw::Exact => control_law(t, p.interval, self.count),
            ControlLaw::Newton => control_law_newton(t, p.interval, self.rec_inv_sqrt),
        }
    }

    fn report_law(&self, cx: &mut QdiscCx, report: bool) {
        if report {
            cx.monitor("count", self.count as f64);
            cx.monitor("drop_next", self.drop_next.as_secs_f64());
        }
    }
}

/// CoDel over a [`Fifo`].
pub struct Codel {
    params: CodelParams,
    vars: CodelVars,
    stats: CodelStats,
    fifo: Fifo,
}

impl Codel {
    pub fn new(cfg: &CodelConfig) -> Result<Self, ConfigError> {
        validate_limit(&cfg.limit, "limit")?;
        let params = CodelParams::new(cfg.target, cfg.interval, cfg.mtu, cfg.ecn, cfg.ce_threshold, cfg.control_law)?;
        Ok(Codel { params, vars: CodelVars::default(), stats: CodelStats::default(), fifo: Fifo::new(cfg.limit) })
    }

    pub fn params(&self) -> &CodelParams {
        &self.params
    }
    pub fn vars(&self) -> &CodelVars {
        &self.vars
    }
    pub fn stats(&self) -> CodelStats {
        self.stats
    }
}

impl Qdisc for Codel {
    fn enqueue(&mut self, mut pkt: Packet, cx: &mut QdiscCx) {
        // The link stamps arrivals too; stamping here keeps the qdisc whole on its own.
        pkt.enqueued_at = cx.now;
        self.stats.maxpacket = self.stats.maxpacket.max(pkt.size as u64);
        if self.fifo.has_room(&pkt) {
            self.fifo.push(pkt);
        } else {
            self.stats.overflow += 1;
            cx.drop(pkt, DropReason::Overflow);
        }
    }

    fn dequeue(&mut self, cx: &mut QdiscCx) -> Dequeued {
        let pkt = self.vars.dequeue(&self.params, &mut self.fifo, &mut self.stats, cx, true);
        pkt.map_or(Dequeued::Empty, Dequeued::Packet)
    }

    fn backlog(&self) -> Backlog {
        self.fifo.backlog()
    }
}

#[cfg(test)]
#[path = "codel_tests.rs"]
mod tests;
