//! Stochastic fair queueing: McKenney, "Stochastic Fairness Queueing", INFOCOM '90.
//!
//! Flows are hashed (5-tuple of `classify::FlowKey` under a salt) into a fixed number of
//! `buckets`, and the buckets are served by deficit round robin with `quantum` (as Linux's
//! sch_sfq does; McKenney's round robin sends one packet per bucket per round). Flows that
//! collide share a bucket's share; to keep collisions from lasting, the salt is redrawn from
//! the qdisc's seeded stream every `perturb` (0 = never): at the first arrival at or after each
//! deadline, every queued packet is rehashed into its new bucket in order, so no flow is
//! reordered (Linux `sfq_rehash`). The first salt is drawn at the first arrival.
//!
//! Buffer: one shared `limit`; an overflow drops the last packet of the longest bucket in
//! bytes (Linux `sfq_drop` without headdrop), possibly the arrival. Such drops count as
//! `Overflow`.
//!
//! Parameters: `limit` (default 1000 packets), `buckets` (default 1024, at most 65536),
//! `quantum` (default 1500 B), `perturb` (default 0 s).
//! Owns the buckets, their round robin and the salt. Must not touch: the link, the world or any
//! endpoint; it sees only the packets it is given and its `QdiscCx`.

use super::classify::FlowKey;
use super::drr::{RoundRobin, DEFAULT_QUANTUM};
use super::fifo::{default_limit, validate_limit};
use super::{Backlog, Dequeued, Qdisc, QdiscCx};
use crate::error::ConfigError;
use crate::packet::Packet;
use crate::units::{Bytes, Dur, Limit, Time};
use serde::{Deserialize, Serialize};

/// Linux sch_sfq: SFQ_DEFAULT_HASH_DIVISOR = 1024 buckets; the divisor may not exceed 65536.
const DEFAULT_BUCKETS: u32 = 1024;
const MAX_BUCKETS: u32 = 65536;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SfqConfig {
    pub limit: Limit,
    pub buckets: u32,
    pub quantum: Bytes,
    /// Interval between salt redraws; 0 never redraws (Linux's default `perturb 0`).
    pub perturb: Dur,
}

impl Default for SfqConfig {
    fn default() -> Self {
        SfqConfig { limit: default_limit(), buckets: DEFAULT_BUCKETS, quantum: DEFAULT_QUANTUM, perturb: Dur::ZERO }
    }
}

pub struct Sfq {
    limit: Limit,
    buckets: u64,
    perturb: Dur,
    salt: Option<u64>,
    next_perturb: Time,
    rr: RoundRobin,
}

impl Sfq {
    pub fn new(cfg: &SfqConfig) -> Result<Self, ConfigError> {
        validate_limit(&cfg.limit, "limit")?;
        if !(1..=MAX_BUCKETS).contains(&cfg.buckets) {
            return Err(ConfigError::new("buckets", format!("{} is not in 1..={MAX_BUCKETS}", cfg.buckets)));
        }
        Ok(Sfq {
            limit: cfg.limit,
            buckets: cfg.buckets as u64,
            perturb: cfg.perturb,
            salt: None,
            next_perturb: Time::MAX,
            rr: RoundRobin::new(cfg.quantum)?,
        })
    }

    /// The bucket of `p`'s flow under the current salt (multiply-shift onto 0..buckets).
    fn bucket(&self, p: &Packet) -> usize {
        let h = FlowKey::of(p).hash(self.salt.unwrap_or(0));
        ((h as u128 * self.buckets as u128) >> 64) as usize
    }

    /// Draw the first salt, or a new one when the perturbation interval has passed, and move
    /// every queued packet to its new bucket.
    fn maybe_perturb(&mut self, cx: &mut QdiscCx) {
        let due = self.salt.is_none() || cx.now >= self.next_perturb;
        if !due {
            return;
        }
        self.salt = Some(cx.rng.next_u64());
        if !self.perturb.is_zero() {
            self.next_perturb = cx.now + self.perturb;
        }
        for p in self.rr.drain() {
            self.rr.push(self.bucket(&p), p);
        }
    }
}

impl Qdisc for Sfq {
    fn enqueue(&mut self, pkt: Packet, cx: &mut QdiscCx) {
        self.maybe_perturb(cx);
        let b = self.bucket(&pkt);
        self.rr.push(b, pkt);
        self.rr.enforce(&self.limit, b, cx);
    }

    fn dequeue(&mut self, _cx: &mut QdiscCx) -> Dequeued {
        self.rr.pop().map_or(Dequeued::Empty, Dequeued::Packet)
    }

    fn backlog(&self) -> Backlog {
        self.rr.backlog()
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::{check_conservation, packet, Bench};
    use super::super::QdiscSpec;
    use super::*;
    use crate::units::BitRate;

    const LINK: BitRate = BitRate(10_000_000);

    fn sfq(buckets: u32, quantum: u64, perturb: Dur) -> Sfq {
        let limit = Limit { packets: Some(10_000), bytes: None };
        Sfq::new(&SfqConfig { limit, buckets, quantum: Bytes(quantum), perturb }).unwrap()
    }

    /// Four backlogged flows with 200, 576, 1500 and 1000-byte packets in distinct buckets:
    /// over any stretch where all are backlogged, DRR keeps the bytes sent by any two within
    /// Max + 2·Quantum (SV95 Theorem 1, the fairness measure), here 1500 + 2·1500 = 4500 B.
    #[test]
    fn distinct_flows_in_distinct_buckets_share_equally() {
        let sizes = [200u16, 576, 1500, 1000];
        let mut q = sfq(1024, 1500, Dur::ZERO);
        let mut b = Bench::new(11);
        let mut uid = 0;
        for round in 0..400 {
            for (f, &size) in sizes.iter().enumerate() {
                let copies = if size < 1000 { 1500 / size as u32 } else { 1 } + round % 2;
                for _ in 0..copies {
                    uid += 1;
                    b.offer(&mut q, packet(uid, f as u32, size), Time::ZERO, LINK);
                }
            }
        }
        let buckets: Vec<usize> = (0..4).map(|f| q.bucket(&packet(0, f, 100))).collect();
        let mut distinct = buckets.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), 4, "buckets {buckets:?}");
        let mut sent = [0u64; 4];
        let total_bytes = 1_000_000;
        while sent.iter().sum::<u64>() < total_bytes {
            let p = b.take(&mut q, Time::ZERO).unwrap();
            sent[p.flow.0 as usize] += p.size as u64;
        }
        let spread = sent.iter().max().unwrap() - sent.iter().min().unwrap();
        eprintln!("bytes sent per flow {sent:?}, spread {spread}");
        assert!(spread <= 4500, "sent {sent:?}");
    }

    /// The salt comes from the qdisc's own stream: the same seed gives the same buckets and
    /// departures through every perturbation; another seed gives other buckets.
    #[test]
    fn perturbation_is_deterministic_for_a_seed() {
        let run = |seed: u64| {
            let mut q = sfq(16, 1500, Dur::from_millis(100));
            let mut b = Bench::new(seed);
            let mut buckets = vec![];
            let mut order = vec![];
            for step in 0..2000u32 {
                let now = Time(0) + Dur::from_millis(step as u64);
                b.offer(&mut q, packet(step, step % 8, 500), now, LINK);
                if step % 100 == 0 {
                    buckets.push((0..8).map(|f| q.bucket(&packet(0, f, 1))).collect::<Vec<_>>());
                }
                if step % 3 != 0 {
                    order.push(b.take(&mut q, now).unwrap().uid);
                }
            }
            (buckets, order)
        };
        let (a, b, c) = (run(3), run(3), run(4));
        assert_eq!(a, b);
        assert_ne!(a.0, c.0, "another seed hashes differently");
        assert!(a.0.windows(2).any(|w| w[0] != w[1]), "the salt changes every 100 ms");
    }

    #[test]
    fn one_bucket_is_a_fifo() {
        let mut q = sfq(1, 1500, Dur::ZERO);
        let mut b = Bench::new(1);
        for uid in 0..6 {
            b.offer(&mut q, packet(uid, uid % 3, 100 + 300 * (uid as u16 % 2)), Time::ZERO, LINK);
        }
        let order: Vec<u32> = (0..6).map(|_| b.take(&mut q, Time::ZERO).unwrap().uid).collect();
        assert_eq!(order, vec![0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn conserves_packets_and_bytes_and_keeps_each_flow_in_order_across_rehashes() {
        // The harness's clock steps 1 µs: a 50 µs perturbation rehashes about 400 times.
        let limit = Limit { packets: Some(8), bytes: None };
        let cfg = SfqConfig { limit, buckets: 4, quantum: Bytes(300), perturb: Dur::from_micros(50) };
        let (departed, dropped) = check_conservation(&mut Sfq::new(&cfg).unwrap(), 20_000, 9);
        assert!(departed > 0 && dropped > 0);
    }

    #[test]
    fn bad_config_names_the_key() {
        let cfg = |buckets, quantum| SfqConfig { buckets, quantum: Bytes(quantum), ..SfqConfig::default() };
        assert_eq!(Sfq::new(&cfg(0, 1500)).err().unwrap().path, "buckets");
        assert_eq!(Sfq::new(&cfg(1 << 20, 1500)).err().unwrap().path, "buckets");
        assert_eq!(Sfq::new(&cfg(1024, 0)).err().unwrap().path, "quantum");
        let e = serde_json::from_str::<QdiscSpec>(r#"{"kind":"sfq","bucket":8}"#).unwrap_err().to_string();
        assert!(e.contains("unknown field `bucket`"), "{e}");
    }
}
