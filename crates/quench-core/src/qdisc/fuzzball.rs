//! The NSFNET Fuzzball gateway's output queue (Mills, "Source-quench wrench", 26 Feb 1988;
//! Mills, "The Fuzzball", SIGCOMM '88; buffer policy as described by Demers, Keshav & Shenker,
//! SIGCOMM '89; docs/mechanisms.md#fuzzball-gateway).
//!
//! **Selective preemption.** All fuzzball queues of a gateway draw on one buffer pool
//! (`pool_limit`, packets and/or bytes) with bytes accounted per source host across every
//! output queue. When an arrival finds the pool full, the host with the most data queued
//! (counting the arrival) loses a packet: the arrival itself if it is that host's (ties go to
//! the arrival), otherwise that host's newest (`preempt = "newest"`) or oldest packet here.
//! If that host has nothing in this queue, its packets sit in another output queue: a debt
//! is recorded and that queue discards the host's next departing packet (deferred
//! preemption, our choice: the sources do not say how the Fuzzball reached other queues);
//! the arrival is then admitted only if there is room already.
//!
//! **Source quench.** A mean queue length (packets of this output queue) is estimated per
//! arrival, `qbar += gain·(q − qbar)`. While `qbar > threshold`, ICMP Source Quench messages go
//! to the host with the most data queued at `rate = min(max_rate, rate_per_excess·(qbar −
//! threshold))` per second: one is sent on an arrival when at least 1/rate has passed since
//! the last. The email gives only "a rate depending on the excess of the measured mean queue
//! length above a preset threshold, in this case about 1.5"; the estimator, its gain, the rate
//! law and its limit are ours and are parameters. The message quotes the newest packet of
//! that host in this queue (RFC 792: its IP header and first 8 data bytes).
//! Owns its FIFO and the time of its last source quench; it shares the node's buffer pool
//! (`NodeBuffers`) and emits ICMP source quenches through its `QdiscCx`. Must not touch: the link,
//! the world or any endpoint.

use super::fifo::{validate_limit, Fifo};
use super::{Backlog, Dequeued, DropReason, NodeBuffers, Qdisc, QdiscCx};
use crate::error::ConfigError;
use crate::icmp;
use crate::packet::{NodeId, Packet};
use crate::units::{Limit, Time};
use serde::{Deserialize, Serialize};

/// The email's threshold: "in this case about 1.5" (packets of mean queue).
const DEFAULT_THRESHOLD: f64 = 1.5;
/// Gain of the per-arrival mean: an eight-arrival time constant (as VJ's srtt gain of 1/8).
const DEFAULT_GAIN: f64 = 0.125;
/// Quenches per second per packet of excess mean queue.
const DEFAULT_RATE_PER_EXCESS: f64 = 0.1;
/// At most one quench a second.
const DEFAULT_MAX_RATE: f64 = 1.0;
/// Fuzzball buffers are counted in packets; 100 is "enough buffering" for the 1988 tests.
const DEFAULT_POOL_PACKETS: u64 = 100;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Preempt {
    Newest,
    Oldest,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FuzzballConfig {
    /// The gateway-wide buffer pool shared by all fuzzball queues of the node.
    #[serde(default = "default_pool")]
    pub pool_limit: Limit,
    #[serde(default = "default_preempt")]
    pub preempt: Preempt,
    /// Send ICMP Source Quench at all.
    #[serde(default = "yes")]
    pub quench: bool,
    /// Mean queue (packets) above which quenches are sent.
    #[serde(default = "default_threshold")]
    pub threshold: f64,
    /// Gain of the per-arrival mean queue estimator, in (0, 1].
    #[serde(default = "default_gain")]
    pub gain: f64,
    /// Quench rate (per second) per packet of mean queue above the threshold.
    #[serde(default = "default_rate_per_excess")]
    pub rate_per_excess: f64,
    /// Upper limit of the quench rate (per second).
    #[serde(default = "default_max_rate")]
    pub max_rate: f64,
}

fn default_pool() -> Limit {
    Limit { packets: Some(DEFAULT_POOL_PACKETS), bytes: None }
}
fn default_preempt() -> Preempt {
    Preempt::Newest
}
fn yes() -> bool {
    true
}
fn default_threshold() -> f64 {
    DEFAULT_THRESHOLD
}
fn default_gain() -> f64 {
    DEFAULT_GAIN
}
fn default_rate_per_excess() -> f64 {
    DEFAULT_RATE_PER_EXCESS
}
fn default_max_rate() -> f64 {
    DEFAULT_MAX_RATE
}

/// The quench rate law: quenches per second for a mean queue `qbar`.
pub fn quench_rate(cfg: &FuzzballConfig, qbar: f64) -> f64 {
    if qbar <= cfg.threshold {
        0.0
    } else {
        (cfg.rate_per_excess * (qbar - cfg.threshold)).min(cfg.max_rate)
    }
}

pub struct Fuzzball {
    cfg: FuzzballConfig,
    /// This output queue's packets; the limit is the node's pool, not this FIFO's.
    queue: Fifo,
    mean_queue: f64,
    last_quench: Option<Time>,
}

impl Fuzzball {
    pub fn new(cfg: &FuzzballConfig) -> Result<Self, ConfigError> {
        let positive = |v: f64| v.is_finite() && v > 0.0;
        validate_limit(&cfg.pool_limit, "pool_limit")?;
        if !(positive(cfg.gain) && cfg.gain <= 1.0) {
            return Err(ConfigError::new("gain", format!("{} is not in (0, 1]", cfg.gain)));
        }
        if !(cfg.threshold.is_finite() && cfg.threshold >= 0.0) {
            return Err(ConfigError::new("threshold", "must be a non-negative number of packets"));
        }
        for (key, v) in [("rate_per_excess", cfg.rate_per_excess), ("max_rate", cfg.max_rate)] {
            if !positive(v) {
                return Err(ConfigError::new(key, format!("{v} must be a positive rate per second")));
            }
        }
        Ok(Fuzzball { cfg: cfg.clone(), queue: Fifo::unlimited(), mean_queue: 0.0, last_quench: None })
    }

    pub fn mean_queue(&self) -> f64 {
        self.mean_queue
    }

    fn position_of(&self, src: NodeId) -> Option<usize> {
        match self.cfg.preempt {
            Preempt::Newest => self.queue.iter().rposition(|p| p.src == src),
            Preempt::Oldest => self.queue.iter().position(|p| p.src == src),
        }
    }

    fn remove_at(&mut self, i: usize, pool: &mut NodeBuffers) -> Packet {
        let p = self.queue.remove(i).expect("index from a search of the queue");
        pool.release(&p);
        p
    }

    /// Make room for `pkt` by preemption; false if `pkt` itself must go.
    fn make_room(&mut self, pkt: &Packet, cx: &mut QdiscCx) -> bool {
        let limit = self.cfg.pool_limit;
        while limit.exceeded_by(cx.node.packets(), cx.node.bytes(), pkt.size as u64) {
            let heaviest = cx.node.heaviest_with(pkt);
            if heaviest == pkt.src {
                return false;
            }
            match self.position_of(heaviest) {
                Some(i) => {
                    let victim = self.remove_at(i, cx.node);
                    cx.drop(victim, DropReason::Preempted);
                }
                None => {
                    cx.node.add_debt(heaviest);
                    return !limit.exceeded_by(cx.node.packets(), cx.node.bytes(), pkt.size as u64);
                }
            }
        }
        true
    }

    fn maybe_quench(&mut self, cx: &mut QdiscCx) {
        let rate = quench_rate(&self.cfg, self.mean_queue);
        if !self.cfg.quench || rate <= 0.0 {
            return;
        }
        let due = self.last_quench.is_none_or(|t| (cx.now - t).as_secs_f64() >= 1.0 / rate);
        if !due {
            return;
        }
        let Some(heaviest) = cx.node.heaviest() else { return };
        if let Some(i) = self.queue.iter().rposition(|p| p.src == heaviest) {
            let quoted = *self.queue.get(i).expect("index from a search of the queue");
            cx.emit(icmp::source_quench(cx.node_id, &quoted));
            self.last_quench = Some(cx.now);
        }
    }
}

impl Qdisc for Fuzzball {
    fn enqueue(&mut self, pkt: Packet, cx: &mut QdiscCx) {
        self.mean_queue += self.cfg.gain * (self.queue.len() as f64 - self.mean_queue);
        if !self.make_room(&pkt, cx) {
            cx.drop(pkt, DropReason::Overflow);
            return;
        }
        cx.node.hold(&pkt);
        self.queue.push(pkt);
        self.maybe_quench(cx);
    }

    fn dequeue(&mut self, cx: &mut QdiscCx) -> Dequeued {
        while let Some(p) = self.queue.pop() {
            cx.node.release(&p);
            if cx.node.pay_debt(p.src) {
                cx.drop(p, DropReason::Preempted);
                continue;
            }
            return Dequeued::Packet(p);
        }
        Dequeued::Empty
    }

    fn backlog(&self) -> Backlog {
        self.queue.backlog()
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::{check_conservation, packet, Bench};
    use super::*;
    use crate::packet::{NodeId, Proto};
    use crate::units::{BitRate, Dur};

    fn config(pool_packets: u64) -> FuzzballConfig {
        let mut cfg: FuzzballConfig = serde_json::from_str("{}").unwrap();
        cfg.pool_limit = Limit { packets: Some(pool_packets), bytes: None };
        cfg
    }

    const LINE: BitRate = BitRate(9600);

    fn from(src: u32, uid: u32, size: u16) -> Packet {
        let mut p = packet(uid, src, size);
        p.src = NodeId(src);
        p.proto = Proto::Tcp;
        p
    }

    /// A node without a pooled queue keeps a pointer for its pool, not the pool; the pool
    /// comes with its first packet and counts back to empty.
    #[test]
    fn a_node_pool_is_a_pointer_until_used() {
        assert_eq!(std::mem::size_of::<NodeBuffers>(), 8);
        let mut pool = NodeBuffers::default();
        assert_eq!((pool.packets(), pool.bytes(), pool.heaviest(), pool.pay_debt(NodeId(1))), (0, 0, None, false));
        let p = from(1, 0, 500);
        pool.hold(&p);
        assert_eq!((pool.packets(), pool.bytes(), pool.heaviest()), (1, 500, Some(NodeId(1))));
        pool.release(&p);
        assert_eq!((pool.packets(), pool.bytes(), pool.heaviest()), (0, 0, None));
    }

    #[test]
    fn rate_law_hand_computed() {
        let cfg = FuzzballConfig { rate_per_excess: 0.5, max_rate: 2.0, ..config(10) };
        assert_eq!(quench_rate(&cfg, 1.5), 0.0); // at the threshold: none
        assert_eq!(quench_rate(&cfg, 3.5), 1.0); // 0.5·(3.5 − 1.5)
        assert_eq!(quench_rate(&cfg, 9.5), 2.0); // 0.5·8 = 4, limited to 2
    }

    #[test]
    fn preemption_takes_from_the_heaviest_source() {
        // Pool of 4 packets: host 1 holds 3 × 500 B, host 2 holds 1 × 100 B.
        let mut q = Fuzzball::new(&FuzzballConfig { quench: false, ..config(4) }).unwrap();
        let mut b = Bench::new(1);
        for (uid, (src, size)) in [(1, 500), (1, 500), (2, 100), (1, 500)].into_iter().enumerate() {
            q.enqueue(from(src, uid as u32, size), &mut b.cx(Time::ZERO, LINE));
        }
        assert!(b.drops.is_empty());
        // Host 2 arrives with the pool full: host 1 is heaviest, its newest packet (uid 3) goes.
        q.enqueue(from(2, 10, 100), &mut b.cx(Time::ZERO, LINE));
        assert_eq!(b.drops.len(), 1);
        assert_eq!((b.drops[0].0.uid, b.drops[0].1), (3, DropReason::Preempted));
        assert_eq!(b.node.queued_by(NodeId(1)), 1000);
        assert_eq!(b.node.queued_by(NodeId(2)), 200);
        // Host 1 arrives with the pool full again: it is the heaviest, so its arrival goes.
        q.enqueue(from(1, 11, 500), &mut b.cx(Time::ZERO, LINE));
        assert_eq!((b.drops[1].0.uid, b.drops[1].1), (11, DropReason::Overflow));
        assert_eq!(q.backlog(), Backlog { packets: 4, bytes: 1200 });
    }

    #[test]
    fn oldest_preemption_and_ties_favour_the_arrival() {
        let mut q = Fuzzball::new(&FuzzballConfig { quench: false, preempt: Preempt::Oldest, ..config(2) }).unwrap();
        let mut b = Bench::new(1);
        q.enqueue(from(1, 0, 300), &mut b.cx(Time::ZERO, LINE));
        q.enqueue(from(1, 1, 300), &mut b.cx(Time::ZERO, LINE));
        q.enqueue(from(2, 2, 600), &mut b.cx(Time::ZERO, LINE)); // 600 vs 600 with the arrival: tie
        assert_eq!(b.drops[0].0.uid, 2);
        q.enqueue(from(2, 3, 100), &mut b.cx(Time::ZERO, LINE)); // host 1 heavier: its oldest goes
        assert_eq!(b.drops[1].0.uid, 0);
    }

    #[test]
    fn quenches_the_heaviest_host_at_the_law_s_rate() {
        // Gain 1: the mean is the queue length seen on arrival. Rate 1/s per packet of excess,
        // at most 2/s; host 1 is heaviest.
        let cfg = FuzzballConfig { gain: 1.0, threshold: 1.5, rate_per_excess: 1.0, max_rate: 2.0, ..config(100) };
        let mut q = Fuzzball::new(&cfg).unwrap();
        let mut b = Bench::new(1);
        let at = |ms: u64| Time::ZERO + Dur::from_millis(ms);
        q.enqueue(from(1, 0, 500), &mut b.cx(at(0), LINE)); // q seen 0
        q.enqueue(from(2, 1, 100), &mut b.cx(at(0), LINE)); // q seen 1
        q.enqueue(from(1, 2, 500), &mut b.cx(at(0), LINE)); // q seen 2: excess 0.5, rate 0.5/s: quench
        assert_eq!(b.emitted.len(), 1);
        let sq = b.emitted[0];
        assert_eq!((sq.dst, sq.src, sq.size), (NodeId(1), NodeId(99), icmp::SOURCE_QUENCH_SIZE));
        q.enqueue(from(2, 3, 100), &mut b.cx(at(1000), LINE)); // q 3: rate 1.5/s, 1 s ≥ 0.67 s: quench
        assert_eq!(b.emitted.len(), 2);
        q.enqueue(from(2, 4, 100), &mut b.cx(at(1400), LINE)); // q 4: rate 2/s (limit); 0.4 s < 0.5 s
        assert_eq!(b.emitted.len(), 2);
        q.enqueue(from(2, 5, 100), &mut b.cx(at(1500), LINE)); // 0.5 s since the last: quench
        assert_eq!(b.emitted.len(), 3);
        assert!(b.emitted.iter().all(|p| p.dst == NodeId(1)));
    }

    #[test]
    fn conserves_packets_and_bytes() {
        let mut q = Fuzzball::new(&config(6)).unwrap();
        let (departed, dropped) = check_conservation(&mut q, 20_000, 5);
        assert!(departed > 0 && dropped > 0);
    }

    #[test]
    fn rejects_bad_parameters_naming_them() {
        assert_eq!(Fuzzball::new(&FuzzballConfig { gain: 0.0, ..config(5) }).err().unwrap().path, "gain");
        assert_eq!(Fuzzball::new(&FuzzballConfig { max_rate: -1.0, ..config(5) }).err().unwrap().path, "max_rate");
        assert_eq!(Fuzzball::new(&config(0)).err().unwrap().path, "pool_limit");
    }
}
