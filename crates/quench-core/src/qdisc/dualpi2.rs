//! DualPI2, the Coupled Dual-Queue AQM for L4S: De Schepper, Briscoe & White, RFC 9332 (2023)
//! (docs/mechanisms.md#dualpi2). Read beside Linux `net/sched/sch_dualpi2.c`, whose choices are
//! offered as named policies where they differ from the RFC's pseudocode.
//!
//! - **Classifier** (RFC 9332 section 2.3, RFC 9331 section 5.1): an arriving packet with
//!   ECT(1) or CE (the ECN field's low bit set) joins the L4S queue, Not-ECT and ECT(0) the
//!   Classic queue. Both queues share one `limit` (packets, Linux's `sch->limit`; the RFC's
//!   Figure 3 limits the bytes of both queues together); an arrival that does not fit is an
//!   `overflow` drop. Every packet is timestamped on arrival.
//! - **Base PI2 controller** (Appendix A.1, the `dualpi2_update` pseudocode), every `tupdate`:
//!   with `curq` the queue delay in seconds and alpha, beta in Hz,
//!   `p' ← p' + alpha·(curq − target) + beta·(curq − prevq)`, clamped to [0, 1] (Appendix
//!   A.2; Linux clamps to its MAX_PROB), `prevq ← curq`. `curq` is the sojourn so far of the
//!   Classic queue's head packet (`cq.time()`, zero when it is empty); policy `pi_delay`:
//!   `"classic"` (the RFC's) or `"max"` (Linux's `calculate_probability`: the larger of both
//!   queues' head sojourns).
//! - **Coupling** (section 2.4, A.1): the Classic probability is `p_C = p'²` (squared, for a
//!   Reno-friendly response), the coupled L4S probability `p_CL = k·p'` (`coupling` k = 2).
//! - **Native L4S AQM** (A.1's `laqm`, as Linux's step): an L4S packet whose own sojourn
//!   exceeds `step_thresh` (1 ms) is marked with certainty; otherwise it is marked with
//!   probability `p_CL`: together `p_L = max(p'_L, p_CL)` (A.1, the combining function). The
//!   RFC's ramp between `minTh` and `minTh + range` is not implemented: a step is the ramp
//!   with range 0.
//! - **Th_len guard** (A.1 Figure 2's `Th_len = 1 pkt`, A.2 Figure 6 lines 5a-5d): the native
//!   AQM acts only while the L4S queue holds more than `th_len` packets, so that a queue of
//!   one packet is never marked for its own serialization time on a slow link (at 10 Mb/s a
//!   1500 B packet waits 1.2 ms behind one other, above the 1 ms step). Policy `th_len_at`:
//!   `"dequeue"` (the RFC's: `lq.len() > Th_len` right after `lq.dequeue(pkt)`, i.e. the
//!   packets left behind the departing one) or `"enqueue"` (Linux's `min_qlen_step`: the step
//!   applies to an L4S packet that found at least `th_len` packets in the L4S queue on
//!   arrival; Linux's default `min_qlen_step` is 0, always). `th_len = 0` with `"enqueue"` is
//!   the step without a guard.
//! - **Decisions at dequeue** (A.1 Figure 4, A.2 Figure 6): a Classic packet selected with
//!   probability `p_C` is dropped if Not-ECT, else marked CE. Policy `decisions`: `"recur"`
//!   (the RFC pseudocode's `recur()`: a per-queue accumulator, `count += p`, true and
//!   `count −= 1` once it exceeds 1: deterministic spacing) or `"random"` (Linux: a uniform draw
//!   per packet; Linux rolls twice against p' for `p_C`, here one draw against p'², the same
//!   probability).
//! - **Overload** (section 4.2.3, A.2 Figure 6), with `drop_overload` (default on, as Linux):
//!   once `p_CL ≥ 1` (p_Lmax), L4S packets are dropped with probability `p_C` like Classic
//!   ones and the rest marked; once `p_C ≥ p_Cmax = min(1/k², 1)` (0.25 for k = 2) Classic
//!   ECN packets are dropped instead of marked. Linux tests `k·p' > 1`, the same boundary.
//! - **Scheduler** (section 2.4, A.1): policy `scheduler`. `"time_shifted"` (the RFC's
//!   time-shifted FIFO): the L4S head leaves first unless the Classic head has waited more
//!   than `tshift` (40 ms) longer, i.e. L4S when `lq.time() + tshift ≥ cq.time()`. `"wrr"`
//!   (Linux's default): a byte-credit weighted round robin giving the Classic queue
//!   `c_protection` percent (10) of the link while both queues are busy: the credit starts at
//!   `mtu·(w_C − w_L)` (w_C = c_protection, w_L = 100 − w_C), L4S is served while it is at or
//!   below zero, a sent L4S packet adds `w_C·size`, a sent Classic packet subtracts
//!   `w_L·size` when the other queue is busy, and it resets when both queues are empty.
//!
//! Not implemented: Linux's 2-MTU guard (no drop or mark while the whole backlog is below two
//! MTUs), its `drop_early` (decisions at enqueue), its packet-count step threshold, and GSO
//! splitting. Drops by the controller (Classic drops, L4S overload drops) count as `early`,
//! the limit's as `overflow`; [`DualPi2Stats`] splits them, and the marks, by rule.
//!
//! The update timer is evaluated lazily, as PIE's (`pie.rs`): at the first arrival or
//! departure at or after each due time, with the head sojourns taken at the due time (the
//! queues are unchanged between events, so each update sees what it would have seen then).
//! While both queues are empty and p' and prevq are zero the updates change nothing and are
//! skipped in one step. Monitors at every update: `p_prime` (p'), `p_c`, `p_l` (the coupled
//! p_CL, capped at 1), `qdelay_c` and `qdelay_l` (the head sojourns, seconds).
//!
//! Parameters and units (RFC 9332 A.1 / Linux sch_dualpi2 defaults): `limit` 10000 packets
//! (Linux), `target` 15 ms, `tupdate` 16 ms, `alpha` 0.16 Hz, `beta` 3.2 Hz, `coupling` 2,
//! `step_thresh` 1 ms, `th_len` 1 packet (RFC 9332 A.1), `th_len_at` "dequeue", `tshift`
//! 40 ms, `drop_overload` true, `scheduler` "time_shifted", `c_protection` 10 (%), `mtu`
//! 1500 B (the WRR's initial credit), `pi_delay` "classic", `decisions` "recur".
//!
//! Structure: [`DualPi2Params`], [`DualPi2Vars`], [`DualPi2Stats`]; the packets in two
//! [`Fifo`]s.
//! Owns the L4S and Classic queues, the PI controller's state and the scheduler's credit. Must not
//! touch: the link, the world or any endpoint; it sees only the packets it is given and its
//! `QdiscCx`.

use super::fifo::{validate_limit, Fifo};
use super::{Backlog, Dequeued, DropReason, Qdisc, QdiscCx};
use crate::error::ConfigError;
use crate::limits;
use crate::packet::{ecn, Packet};
use crate::rng::Rng;
use crate::units::{Bytes, Dur, Limit, Time};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Linux sch_dualpi2 `dualpi2_init`: a limit of 10000 packets.
pub const DEFAULT_LIMIT_PACKETS: u64 = 10_000;
/// RFC 9332 A.1 (`target`) and Linux: 15 ms.
pub const DEFAULT_TARGET: Dur = Dur::from_millis(15);
/// Linux sch_dualpi2: `tupdate` 16 ms (RFC 9332 A.1: Tupdate = min(target, RTT_max/3)).
pub const DEFAULT_TUPDATE: Dur = Dur::from_millis(16);
/// RFC 9332 A.1 / Linux sch_dualpi2: alpha = 0.16 Hz (for Tupdate 16 ms, RTT_max 100 ms).
pub const DEFAULT_ALPHA: f64 = 0.16;
/// RFC 9332 A.1 / Linux sch_dualpi2: beta = 3.2 Hz.
pub const DEFAULT_BETA: f64 = 3.2;
/// RFC 9332 section 2.4 and A.1: the coupling factor k = 2.
pub const DEFAULT_COUPLING: f64 = 2.0;
/// Linux sch_dualpi2 `step_thresh`: 1 ms (RFC 9332 A.1's ramp: minTh 800 µs + range 400 µs).
pub const DEFAULT_STEP_THRESH: Dur = Dur::from_millis(1);
/// RFC 9332 A.1 Figure 2 (`Th_len = 1 pkt`): the native L4S AQM needs more than one packet
/// queued. (Linux's `min_qlen_step` defaults to 0, no guard.)
pub const DEFAULT_TH_LEN: u32 = 1;
/// RFC 9332 A.1 (time-shifted FIFO) and Linux: tshift = 40 ms.
pub const DEFAULT_TSHIFT: Dur = Dur::from_millis(40);
/// Linux sch_dualpi2: `c_protection` 10 % of the link for the Classic queue under WRR.
pub const DEFAULT_C_PROTECTION: u8 = 10;
/// Linux's WRR credit starts from `psched_mtu`: an Ethernet MTU, 1500 B.
pub const DEFAULT_MTU: Bytes = Bytes(1500);
/// RFC 9332 A.2: p_Lmax = 1, the coupled L4S probability at which overload begins.
const P_LMAX: f64 = 1.0;
/// The WRR weights are percentages of the link.
const WRR_TOTAL: i64 = 100;

/// How the queue delay fed to the PI controller is taken.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PiDelay {
    /// RFC 9332 A.1: the Classic queue's head sojourn.
    #[default]
    Classic,
    /// Linux: the larger of the two queues' head sojourns.
    Max,
}

/// Which queue sends next.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scheduler {
    /// RFC 9332 A.1: time-shifted FIFO.
    #[default]
    TimeShifted,
    /// Linux: byte-credit weighted round robin with `c_protection`.
    Wrr,
}

/// Where the `th_len` guard counts the L4S queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThLenAt {
    /// RFC 9332 A.2 Figure 6 line 5a: at dequeue, the packets left behind must exceed `th_len`.
    #[default]
    Dequeue,
    /// Linux `min_qlen_step`: at enqueue, the packets found ahead must be at least `th_len`.
    Enqueue,
}

/// How a probability becomes a decision.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decisions {
    /// RFC 9332 A.1's `recur()`: deterministic, by accumulating the probability per queue.
    #[default]
    Recur,
    /// Linux: a uniform draw per packet.
    Random,
}

fn default_limit() -> Limit {
    Limit { packets: Some(DEFAULT_LIMIT_PACKETS), bytes: None }
}
fn default_target() -> Dur {
    DEFAULT_TARGET
}
fn default_tupdate() -> Dur {
    DEFAULT_TUPDATE
}
fn default_alpha() -> f64 {
    DEFAULT_ALPHA
}
fn default_beta() -> f64 {
    DEFAULT_BETA
}
fn default_coupling() -> f64 {
    DEFAULT_COUPLING
}
fn default_step_thresh() -> Dur {
    DEFAULT_STEP_THRESH
}
fn default_th_len() -> u32 {
    DEFAULT_TH_LEN
}
fn default_tshift() -> Dur {
    DEFAULT_TSHIFT
}
fn default_c_protection() -> u8 {
    DEFAULT_C_PROTECTION
}
fn default_mtu() -> Bytes {
    DEFAULT_MTU
}
fn yes() -> bool {
    true
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DualPi2Config {
    /// Both queues together.
    #[serde(default = "default_limit")]
    pub limit: Limit,
    #[serde(default = "default_target")]
    pub target: Dur,
    #[serde(default = "default_tupdate")]
    pub tupdate: Dur,
    /// Integral gain, Hz.
    #[serde(default = "default_alpha")]
    pub alpha: f64,
    /// Proportional gain, Hz.
    #[serde(default = "default_beta")]
    pub beta: f64,
    /// The coupling factor k (p_CL = k·p').
    #[serde(default = "default_coupling")]
    pub coupling: f64,
    #[serde(default = "default_step_thresh")]
    pub step_thresh: Dur,
    /// The native L4S AQM's minimum queue, packets (RFC 9332's Th_len).
    #[serde(default = "default_th_len")]
    pub th_len: u32,
    #[serde(default)]
    pub th_len_at: ThLenAt,
    #[serde(default = "default_tshift")]
    pub tshift: Dur,
    #[serde(default = "yes")]
    pub drop_overload: bool,
    #[serde(default)]
    pub scheduler: Scheduler,
    /// The Classic queue's share under `scheduler = "wrr"`, percent.
    #[serde(default = "default_c_protection")]
    pub c_protection: u8,
    #[serde(default = "default_mtu")]
    pub mtu: Bytes,
    #[serde(default)]
    pub pi_delay: PiDelay,
    #[serde(default)]
    pub decisions: Decisions,
}

impl Default for DualPi2Config {
    fn default() -> Self {
        serde_json::from_str("{}").expect("every DualPI2 field has a default")
    }
}

/// DualPI2's fixed parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DualPi2Params {
    pub limit: Limit,
    pub target: Dur,
    pub tupdate: Dur,
    pub alpha: f64,
    pub beta: f64,
    pub coupling: f64,
    pub step_thresh: Dur,
    pub th_len: u32,
    pub th_len_at: ThLenAt,
    pub tshift: Dur,
    pub drop_overload: bool,
    pub scheduler: Scheduler,
    pub c_protection: u8,
    pub mtu: u64,
    pub pi_delay: PiDelay,
    pub decisions: Decisions,
}

impl DualPi2Params {
    pub fn new(cfg: &DualPi2Config) -> Result<Self, ConfigError> {
        validate_limit(&cfg.limit, "limit")?;
        if cfg.target.is_zero() {
            return Err(ConfigError::new("target", "must be positive"));
        }
        limits::check_controller_period("tupdate", cfg.tupdate)?;
        limits::check_controller_gain("alpha", cfg.alpha)?;
        limits::check_controller_gain("beta", cfg.beta)?;
        // k below 1 would make the L4S probability smaller than the base one; Linux takes an
        // integer of at least 1 (`coupling_factor`), the RFC recommends 2.
        if !(cfg.coupling.is_finite() && (1.0..=100.0).contains(&cfg.coupling)) {
            return Err(ConfigError::new("coupling", format!("{} is not in [1, 100]", cfg.coupling)));
        }
        if cfg.c_protection > WRR_TOTAL as u8 {
            return Err(ConfigError::new("c_protection", format!("{} is not a percentage (0-100)", cfg.c_protection)));
        }
        if cfg.mtu.0 == 0 || cfg.mtu.0 > u16::MAX as u64 {
            return Err(ConfigError::new("mtu", "must be between 1 B and 65535 B"));
        }
        // A guard at or above the packet limit would switch the native L4S AQM off for good.
        if let Some(limit) = cfg.limit.packets {
            if cfg.th_len as u64 >= limit {
                return Err(ConfigError::new(
                    "th_len",
                    format!("{} packets is not below the limit of {limit} packets", cfg.th_len),
                ));
            }
        }
        Ok(DualPi2Params {
            limit: cfg.limit,
            target: cfg.target,
            tupdate: cfg.tupdate,
            alpha: cfg.alpha,
            beta: cfg.beta,
            coupling: cfg.coupling,
            step_thresh: cfg.step_thresh,
            th_len: cfg.th_len,
            th_len_at: cfg.th_len_at,
            tshift: cfg.tshift,
            drop_overload: cfg.drop_overload,
            scheduler: cfg.scheduler,
            c_protection: cfg.c_protection,
            mtu: cfg.mtu.0,
            pi_delay: cfg.pi_delay,
            decisions: cfg.decisions,
        })
    }

    /// RFC 9332 A.1: p_Cmax = min(1/k², 1).
    pub fn p_cmax(&self) -> f64 {
        (1.0 / (self.coupling * self.coupling)).min(1.0)
    }

    /// The WRR credit with both queues idle: `mtu·(w_C − w_L)` (Linux `c_protection_init`).
    fn wrr_initial_credit(&self) -> i64 {
        let wc = self.c_protection as i64;
        self.mtu as i64 * (wc - (WRR_TOTAL - wc))
    }
}

/// DualPI2's state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DualPi2Vars {
    /// The base probability p'.
    pub p: f64,
    /// The delay of the previous update, seconds.
    pub prevq: f64,
    pub next_update: Time,
    /// `recur()` accumulators of the L4S and Classic queues.
    pub count_l: f64,
    pub count_c: f64,
    /// WRR credit, bytes × percent (≤ 0: the L4S queue's turn).
    pub credit: i64,
}

impl DualPi2Vars {
    pub fn new(p: &DualPi2Params) -> Self {
        DualPi2Vars {
            p: 0.0,
            prevq: 0.0,
            next_update: Time::ZERO + p.tupdate,
            count_l: 0.0,
            count_c: 0.0,
            credit: p.wrr_initial_credit(),
        }
    }

    /// The Classic probability p_C = p'².
    pub fn p_c(&self) -> f64 {
        self.p * self.p
    }

    /// The coupled L4S probability p_CL = k·p' (may exceed 1: overload).
    pub fn p_cl(&self, params: &DualPi2Params) -> f64 {
        params.coupling * self.p
    }

    /// One run of the PI2 controller (RFC 9332 A.1 `dualpi2_update`) on a delay `curq`.
    pub fn update(&mut self, params: &DualPi2Params, curq: Dur) {
        let (cur, target) = (curq.as_secs_f64(), params.target.as_secs_f64());
        self.p += params.alpha * (cur - target) + params.beta * (cur - self.prevq);
        self.p = self.p.clamp(0.0, 1.0);
        self.prevq = cur;
    }

    /// RFC 9332 A.1 `recur(q, likelihood)` on the accumulator `count`, or a uniform draw.
    fn decide(decisions: Decisions, count: &mut f64, likelihood: f64, rng: &mut Rng) -> bool {
        match decisions {
            Decisions::Recur => {
                *count += likelihood;
                if *count > 1.0 {
                    *count -= 1.0;
                    true
                } else {
                    false
                }
            }
            Decisions::Random => likelihood > 0.0 && (likelihood >= 1.0 || rng.uniform() < likelihood),
        }
    }
}

/// What DualPI2 did, by rule.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DualPi2Stats {
    /// Packets sent from each queue.
    pub l_sent: u64,
    pub c_sent: u64,
    /// Classic Not-ECT packets dropped with probability p_C (and ECN ones under overload).
    pub c_drops: u64,
    /// Classic ECN packets marked with probability p_C.
    pub c_marks: u64,
    /// L4S packets marked by the step (native AQM).
    pub l_step_marks: u64,
    /// L4S packets marked with the coupled probability p_CL.
    pub l_coupled_marks: u64,
    /// L4S packets dropped as Classic ones under overload (section 4.2.3).
    pub l_overload_drops: u64,
    /// Arrivals that did not fit `limit`.
    pub overflow: u64,
}

/// DualPI2: an L4S and a Classic [`Fifo`] under one limit.
pub struct DualPi2 {
    params: DualPi2Params,
    vars: DualPi2Vars,
    stats: DualPi2Stats,
    l: Fifo,
    c: Fifo,
    /// Under `th_len_at = "enqueue"`: for each packet of `l`, in order, whether it found at
    /// least `th_len` packets ahead on arrival (Linux's per-packet `apply_step`).
    l_guard: VecDeque<bool>,
}

/// The head packet's sojourn at `at` (zero for an empty queue).
fn head_sojourn(q: &Fifo, at: Time) -> Dur {
    q.peek().map_or(Dur::ZERO, |p| Dur(at.0.saturating_sub(p.enqueued_at.0)))
}

impl DualPi2 {
    pub fn new(cfg: &DualPi2Config) -> Result<Self, ConfigError> {
        let params = DualPi2Params::new(cfg)?;
        Ok(DualPi2 {
            vars: DualPi2Vars::new(&params),
            params,
            stats: DualPi2Stats::default(),
            l: Fifo::unlimited(),
            c: Fifo::unlimited(),
            l_guard: VecDeque::new(),
        })
    }
    pub fn params(&self) -> &DualPi2Params {
        &self.params
    }
    pub fn vars(&self) -> &DualPi2Vars {
        &self.vars
    }
    pub fn stats(&self) -> DualPi2Stats {
        self.stats
    }
    /// Packets in the L4S and the Classic queue.
    pub fn lengths(&self) -> (usize, usize) {
        (self.l.len(), self.c.len())
    }

    /// Run every update due by `cx.now` (see the module notes on laziness).
    fn catch_up(&mut self, cx: &mut QdiscCx) {
        let (params, v) = (&self.params, &mut self.vars);
        while cx.now >= v.next_update {
            let at = v.next_update;
            if self.l.is_empty() && self.c.is_empty() && v.p == 0.0 && v.prevq == 0.0 {
                let missed = (cx.now - at).0 / params.tupdate.0 + 1;
                v.next_update += Dur(missed * params.tupdate.0);
                break;
            }
            let (qc, ql) = (head_sojourn(&self.c, at), head_sojourn(&self.l, at));
            let curq = match params.pi_delay {
                PiDelay::Classic => qc,
                PiDelay::Max => qc.max(ql),
            };
            v.update(params, curq);
            v.next_update += params.tupdate;
            cx.monitor("p_prime", v.p);
            cx.monitor("p_c", v.p_c());
            cx.monitor("p_l", v.p_cl(params).min(P_LMAX));
            cx.monitor("qdelay_c", qc.as_secs_f64());
            cx.monitor("qdelay_l", ql.as_secs_f64());
        }
    }

    /// The queue to send from next: true for L4S, None when both are empty.
    fn pick_l4s(&self) -> Option<bool> {
        match (self.l.peek(), self.c.peek()) {
            (None, None) => None,
            (Some(_), None) => Some(true),
            (None, Some(_)) => Some(false),
            (Some(l), Some(c)) => Some(match self.params.scheduler {
                // lq.time() + tshift ≥ cq.time() ⇔ the L4S head arrived no later than
                // tshift after the Classic head.
                Scheduler::TimeShifted => l.enqueued_at.0 <= c.enqueued_at.0 + self.params.tshift.0,
                Scheduler::Wrr => self.vars.credit <= 0,
            }),
        }
    }

    fn mark(pkt: &mut Packet, cx: &mut QdiscCx) {
        pkt.ecn = ecn::CE;
        cx.note_mark();
    }
}

impl Qdisc for DualPi2 {
    fn enqueue(&mut self, mut pkt: Packet, cx: &mut QdiscCx) {
        self.catch_up(cx);
        let (packets, bytes) = ((self.l.len() + self.c.len()) as u64, self.l.bytes() + self.c.bytes());
        if self.params.limit.exceeded_by(packets, bytes, pkt.size as u64) {
            self.stats.overflow += 1;
            return cx.drop(pkt, DropReason::Overflow);
        }
        pkt.enqueued_at = cx.now;
        if ecn::is_l4s(pkt.ecn) {
            if self.params.th_len_at == ThLenAt::Enqueue {
                self.l_guard.push_back(self.l.len() as u64 >= self.params.th_len as u64);
            }
            self.l.push(pkt);
        } else {
            self.c.push(pkt);
        }
    }

    /// RFC 9332 A.2 Figure 6's loop: a dropped packet is followed by the next one.
    fn dequeue(&mut self, cx: &mut QdiscCx) -> Dequeued {
        self.catch_up(cx);
        loop {
            let Some(from_l) = self.pick_l4s() else {
                self.vars.credit = self.params.wrr_initial_credit();
                return Dequeued::Empty;
            };
            let (p, v, s) = (&self.params, &mut self.vars, &mut self.stats);
            let other_busy = if from_l { !self.c.is_empty() } else { !self.l.is_empty() };
            let (p_c, p_cl) = (v.p_c(), v.p_cl(p));
            let overload = p.drop_overload && p_cl >= P_LMAX;
            if from_l {
                let mut pkt = self.l.pop().expect("the L4S queue has a head");
                let sojourn = cx.now - pkt.enqueued_at;
                let guard_open = match p.th_len_at {
                    ThLenAt::Dequeue => self.l.len() as u64 > p.th_len as u64,
                    ThLenAt::Enqueue => self.l_guard.pop_front().expect("one guard per L4S packet"),
                };
                if overload {
                    // Section 4.2.3: L4S packets meet the Classic drop; the rest are marked
                    // (p_CL ≥ 1).
                    if DualPi2Vars::decide(p.decisions, &mut v.count_l, p_c, cx.rng) {
                        s.l_overload_drops += 1;
                        cx.drop(pkt, DropReason::Early);
                        continue;
                    }
                    s.l_coupled_marks += 1;
                    Self::mark(&mut pkt, cx);
                } else if sojourn > p.step_thresh && guard_open {
                    s.l_step_marks += 1;
                    Self::mark(&mut pkt, cx);
                } else if DualPi2Vars::decide(p.decisions, &mut v.count_l, p_cl, cx.rng) {
                    s.l_coupled_marks += 1;
                    Self::mark(&mut pkt, cx);
                }
                if other_busy {
                    v.credit += p.c_protection as i64 * pkt.size as i64;
                }
                s.l_sent += 1;
                return Dequeued::Packet(pkt);
            }
            let mut pkt = self.c.pop().expect("the Classic queue has a head");
            if DualPi2Vars::decide(p.decisions, &mut v.count_c, p_c, cx.rng) {
                let overloaded = p.drop_overload && p_c >= p.p_cmax();
                if pkt.ecn == ecn::NOT_ECT || overloaded {
                    s.c_drops += 1;
                    cx.drop(pkt, DropReason::Early);
                    continue;
                }
                s.c_marks += 1;
                Self::mark(&mut pkt, cx);
            }
            if other_busy {
                v.credit -= (WRR_TOTAL - p.c_protection as i64) * pkt.size as i64;
            }
            s.c_sent += 1;
            return Dequeued::Packet(pkt);
        }
    }

    fn backlog(&self) -> Backlog {
        self.l.backlog() + self.c.backlog()
    }
}

#[cfg(test)]
#[path = "dualpi2_tests.rs"]
mod tests;
