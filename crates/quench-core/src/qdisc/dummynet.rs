//! Dummynet pipe (L. Rizzo, "Dummynet: a simple approach to the evaluation of network
//! protocols", CCR 27(1), 1997; the code is FreeBSD's `ip_dummynet.c`, the same in Apple xnu
//! `bsd/netinet/ip_dummynet.c`): a queue drained at `bandwidth` by a clock that runs once per
//! kernel tick, so packets leave in bursts, one burst per tick, back-to-back at the speed of
//! the emulator's NIC (the link this qdisc sits on, which must be faster than `bandwidth`).
//!
//! The pipe, as `ready_event()` / `SET_TICKS` / `move_pkt()` implement it:
//! - credit: every tick the queue earns `bandwidth × tick` bits (`q->numbytes += (curr_time −
//!   q->sched_time) · p->bandwidth`); at a tick the head packets the credit covers are released
//!   at once to the NIC (`move_pkt`), the rest wait for the tick at which the credit covers the
//!   head (`SET_TICKS`). Unused credit carries over while the queue stays backlogged and is
//!   reset to zero when it empties (`q->numbytes = 0`), so an idle pipe earns nothing.
//! - a packet reaching an idle pipe starts the credit at the current tick (`q->sched_time =
//!   curr_time`): it leaves at the next tick or later, never between ticks.
//! - the queue limit counts only packets not yet released (`dummynet_io`: `q->len >= qsize`
//!   for slots, `q->len_bytes > qsize` for bytes — the byte rule admits one packet past it).
//! - without `bandwidth` the pipe only delays (`p->bandwidth == 0` moves every packet to the
//!   delay line at once); the delay line is emptied on ticks too (`transmit_event`), so such a
//!   pipe releases everything that arrived during a tick at the next tick instant: this is how
//!   a delay-only Dummynet pipe compresses ACKs.
//!
//! The pipe's propagation delay is the link's `delay`. Dummynet's delay line applies the delay
//! from the release tick, which is the same thing since the release happens at a tick.
//! Ticks are global instants k·tick from time zero (one kernel clock for every pipe); the tick
//! handler runs before a packet arriving at the same instant.
//!
//! Parameters: `bandwidth` (absent: a delay-only pipe), `limit` ("50p" default, ipfw(8):
//! "Default value is 50 slots"), `tick` ("1ms" default: HZ = 1000, the rate at which xnu's
//! `dummynet()` handler runs, "This is called every 1ms", and the value dummynet users set).
//! Owns the pipe's queue and its release schedule. Must not touch: the link, the world or any
//! endpoint; it sees only the packets it is given and its `QdiscCx`.

use super::fifo::{validate_limit, Fifo};
use super::{Backlog, Dequeued, DropReason, Qdisc, QdiscCx};
use crate::error::ConfigError;
use crate::packet::Packet;
use crate::units::{BitRate, Dur, Limit, Time};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// ipfw(8), `queue`: "Default value is 50 slots".
const DEFAULT_SLOTS: u64 = 50;
/// HZ = 1000: one tick per millisecond.
const DEFAULT_TICK: Dur = Dur::from_millis(1);
/// Credit is kept in bit·ns/s (10⁻⁹ bit), so `bandwidth × tick` is an exact integer.
const NANOBITS_PER_BIT: u128 = 1_000_000_000;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DummynetConfig {
    /// The pipe's rate; a delay-only pipe when absent.
    #[serde(default)]
    pub bandwidth: Option<BitRate>,
    #[serde(default = "default_slots")]
    pub limit: Limit,
    #[serde(default = "default_tick")]
    pub tick: Dur,
}

fn default_slots() -> Limit {
    Limit { packets: Some(DEFAULT_SLOTS), bytes: None }
}

fn default_tick() -> Dur {
    DEFAULT_TICK
}

pub struct Dummynet {
    /// Credit earned per tick, in nanobits (0: delay-only pipe).
    per_tick: u128,
    tick: Dur,
    /// Packets waiting for credit (`q->head`); they count toward the limit.
    queue: Fifo,
    /// Released packets with the tick they were released at, waiting for the NIC.
    ready: VecDeque<(Time, Packet)>,
    ready_bytes: u64,
    /// Unspent credit in nanobits (`q->numbytes`).
    credit: u128,
    /// The tick up to which credit has been earned (`q->sched_time`).
    sched_tick: u64,
}

impl Dummynet {
    pub fn new(cfg: &DummynetConfig) -> Result<Self, ConfigError> {
        if cfg.bandwidth.is_some_and(|b| b.0 == 0) {
            return Err(ConfigError::new("bandwidth", "must be positive (omit it for a delay-only pipe)"));
        }
        if cfg.tick.is_zero() {
            return Err(ConfigError::new("tick", "must be positive"));
        }
        validate_limit(&cfg.limit, "limit")?;
        Ok(Dummynet {
            per_tick: cfg.bandwidth.map_or(0, |b| b.0 as u128 * cfg.tick.0 as u128),
            tick: cfg.tick,
            queue: Fifo::new(cfg.limit),
            ready: VecDeque::new(),
            ready_bytes: 0,
            credit: 0,
            sched_tick: 0,
        })
    }

    /// The last tick at or before `now` (`curr_time`).
    fn tick_of(&self, now: Time) -> u64 {
        now.0 / self.tick.0
    }

    fn tick_time(&self, k: u64) -> Time {
        Time(k * self.tick.0)
    }

    fn cost(p: &Packet) -> u128 {
        p.size as u128 * 8 * NANOBITS_PER_BIT
    }

    /// `dummynet_io`'s overflow test on the unreleased queue. Not `Fifo::has_room`: the byte
    /// rule looks at the bytes already queued only, so one packet may pass the limit.
    fn full(&self) -> bool {
        let limit = self.queue.limit();
        limit.packets.is_some_and(|n| self.queue.len() as u64 >= n)
            || limit.bytes.is_some_and(|b| self.queue.bytes() > b.0)
    }

    /// Earn the credit of every tick up to `now` and release what it covers (`ready_event`).
    /// Running it lazily, before every arrival and departure, releases the same packets as
    /// running it at each tick: nothing arrives in between, and credit grows linearly.
    fn catch_up(&mut self, now: Time) {
        let k = self.tick_of(now);
        if self.queue.is_empty() || k <= self.sched_tick {
            return;
        }
        self.credit += (k - self.sched_tick) as u128 * self.per_tick;
        self.sched_tick = k;
        let at = self.tick_time(k);
        while let Some(head) = self.queue.peek() {
            let cost = Self::cost(head);
            if cost > self.credit {
                break;
            }
            self.credit -= cost;
            let p = self.queue.pop().expect("head exists");
            self.release(at, p);
        }
        if self.queue.is_empty() {
            self.credit = 0;
        }
    }

    fn release(&mut self, at: Time, p: Packet) {
        self.ready_bytes += p.size as u64;
        self.ready.push_back((at, p));
    }

    /// The tick at which the credit will cover the head packet (`curr_time + SET_TICKS`).
    fn head_due(&self, head: &Packet) -> Time {
        let missing = Self::cost(head).saturating_sub(self.credit);
        let ticks = missing.div_ceil(self.per_tick) as u64;
        self.tick_time(self.sched_tick + ticks.max(1))
    }
}

impl Qdisc for Dummynet {
    fn enqueue(&mut self, pkt: Packet, cx: &mut QdiscCx) {
        if self.per_tick == 0 {
            let next = self.tick_time(self.tick_of(cx.now) + 1);
            return self.release(next, pkt);
        }
        self.catch_up(cx.now);
        if self.full() {
            return cx.drop(pkt, DropReason::Overflow);
        }
        if self.queue.is_empty() {
            self.sched_tick = self.tick_of(cx.now);
        }
        self.queue.push(pkt);
    }

    fn dequeue(&mut self, cx: &mut QdiscCx) -> Dequeued {
        self.catch_up(cx.now);
        if let Some(&(at, _)) = self.ready.front() {
            if at > cx.now {
                return Dequeued::NotBefore(at);
            }
            let (_, p) = self.ready.pop_front().expect("front exists");
            self.ready_bytes -= p.size as u64;
            return Dequeued::Packet(p);
        }
        match self.queue.peek() {
            Some(head) => Dequeued::NotBefore(self.head_due(head)),
            None => Dequeued::Empty,
        }
    }

    fn backlog(&self) -> Backlog {
        let queued = self.queue.backlog();
        Backlog { packets: queued.packets + self.ready.len() as u64, bytes: queued.bytes + self.ready_bytes }
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::{check_conservation, packet, Bench};
    use super::super::QdiscSpec;
    use super::*;
    use crate::units::Bytes;

    fn pipe(bandwidth: Option<u64>, slots: u64) -> Dummynet {
        let cfg = DummynetConfig {
            bandwidth: bandwidth.map(BitRate),
            limit: Limit { packets: Some(slots), bytes: None },
            tick: DEFAULT_TICK,
        };
        Dummynet::new(&cfg).unwrap()
    }

    fn us(x: u64) -> Time {
        Time(x * 1000)
    }

    /// Drive the pipe as a link of `nic` bit/s does: try to send when idle, after each
    /// transmission and at a "not before" instant (arrivals do not cut a wait short); offer
    /// arrivals at their times (before a send attempt at the same instant).
    /// Returns (departure time, uid) pairs until `until`.
    fn drain(q: &mut Dummynet, arrivals: &[(Time, Packet)], nic: BitRate, until: Time) -> Vec<(Time, u32)> {
        let mut bench = Bench::new(1);
        let (mut next, mut attempt, mut out) = (0, Some(Time::ZERO), vec![]);
        loop {
            let arrival = arrivals.get(next).map(|a| a.0);
            let now = match (arrival, attempt) {
                (Some(a), Some(t)) => a.min(t),
                (Some(a), None) => a,
                (None, Some(t)) => t,
                (None, None) => break,
            };
            if now >= until {
                break;
            }
            if arrival == Some(now) {
                bench.offer(q, arrivals[next].1, now, nic);
                next += 1;
                attempt = attempt.or(Some(now));
                continue;
            }
            let mut cx = bench.cx(now, nic);
            attempt = match q.dequeue(&mut cx) {
                Dequeued::NotBefore(t) => Some(t),
                next => next.into_packet(cx.slab).map(|p| {
                    out.push((now, p.uid));
                    now + nic.tx_time(Bytes(p.size as u64))
                }),
            };
        }
        out
    }

    #[test]
    fn releases_per_tick_what_the_credit_covers() {
        // 10 Mb/s, 1 ms tick: 10,000 bits of credit per tick; 500-byte packets cost 4,000 bits.
        // Ten arrive at 0.3 ms (idle pipe: credit starts at tick 0). By hand:
        // tick 1: 10,000 → 2 leave, 2,000 left; tick 2: 12,000 → 3, 0 left;
        // tick 3: 10,000 → 2, 2,000 left; tick 4: 12,000 → 3; the queue is empty, credit reset.
        // An eleventh at 4.5 ms waits for tick 5. On a 100 Mb/s NIC a packet takes 40 µs.
        let mut q = pipe(Some(10_000_000), 100);
        let mut arrivals: Vec<_> = (0..10).map(|i| (us(300), packet(i, 0, 500))).collect();
        arrivals.push((us(4500), packet(10, 0, 500)));
        let got = drain(&mut q, &arrivals, BitRate(100_000_000), us(10_000));
        let want: Vec<(Time, u32)> = [
            (1000, 0),
            (1040, 1),
            (2000, 2),
            (2040, 3),
            (2080, 4),
            (3000, 5),
            (3040, 6),
            (4000, 7),
            (4040, 8),
            (4080, 9),
            (5000, 10),
        ]
        .iter()
        .map(|&(t, u)| (us(t), u))
        .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn the_limit_counts_only_unreleased_packets() {
        // 3 slots; 5 arrive at 0.5 ms: 2 dropped. At tick 1 two are released (credit 10,000 bits
        // at 10 Mb/s covers two 500-byte packets), so two more fit although none has left yet.
        let mut q = pipe(Some(10_000_000), 3);
        let mut bench = Bench::new(1);
        let nic = BitRate(100_000_000);
        let drops: Vec<_> = (0..5).map(|i| bench.offer(&mut q, packet(i, 0, 500), us(500), nic)).collect();
        assert_eq!(drops.iter().filter(|d| d.is_some()).count(), 2);
        let at_tick: Vec<_> = (5..8).map(|i| bench.offer(&mut q, packet(i, 0, 500), us(1000), nic)).collect();
        assert_eq!(at_tick, vec![None, None, Some(DropReason::Overflow)]);
        assert_eq!(q.backlog().packets, 5, "2 released (awaiting the NIC) + 3 queued");
    }

    #[test]
    fn long_run_rate_is_the_bandwidth() {
        // 622 Mb/s over a 1 Gb/s NIC, 1500-byte packets offered at 1 Gb/s for 2 s into a large
        // buffer: over 2000 ticks the pipe sends bandwidth × 2 s, less the unspent credit
        // (under one packet).
        let bandwidth = 622_000_000u64;
        let mut q = pipe(Some(bandwidth), 1_000_000);
        let nic = BitRate(1_000_000_000);
        let gap = nic.tx_time(Bytes(1500));
        let n = 2_000_000_000 / gap.0;
        let arrivals: Vec<_> = (0..n).map(|i| (Time(i * gap.0), packet(i as u32, 0, 1500))).collect();
        // Ticks 1..=2000 and the last burst (52 packets, 624 µs at the NIC rate).
        let got = drain(&mut q, &arrivals, nic, us(2_000_900));
        let sent_bits = got.len() as f64 * 12_000.0;
        let want_bits = bandwidth as f64 * 2.0;
        assert!(sent_bits <= want_bits && want_bits - sent_bits < 12_000.0, "sent {sent_bits} bits, want {want_bits}");
        let first_tick: Vec<_> = got.iter().filter(|(t, _)| *t < us(2000)).collect();
        assert_eq!(first_tick.len(), 51, "tick 1 releases floor(622,000 / 12,000) = 51 packets");
        assert_eq!(first_tick[0].0, us(1000));
        assert_eq!(first_tick[50].0, us(1000) + Dur(50 * gap.0), "back-to-back at the NIC rate");
    }

    #[test]
    fn delay_only_pipe_releases_everything_at_the_next_tick() {
        let mut q = pipe(None, 50);
        let arrivals: Vec<_> = [100, 400, 999, 1000, 1700].iter().map(|&t| (us(t), packet(t as u32, 0, 40))).collect();
        let got = drain(&mut q, &arrivals, BitRate(1_000_000_000), us(5000));
        let times: Vec<Time> = got.iter().map(|g| g.0).collect();
        // 40 bytes at 1 Gb/s: 320 ns each.
        let want = [Time(1_000_000), Time(1_000_320), Time(1_000_640), Time(2_000_000), Time(2_000_320)];
        assert_eq!(times, want);
    }

    #[test]
    fn byte_limit_admits_while_at_or_under_the_limit() {
        // dummynet_io drops when q->len_bytes > qsize: 1000 bytes hold three 400-byte packets.
        let cfg = DummynetConfig {
            bandwidth: Some(BitRate(1_000_000)),
            limit: Limit { packets: None, bytes: Some(Bytes(1000)) },
            tick: DEFAULT_TICK,
        };
        let mut q = Dummynet::new(&cfg).unwrap();
        let mut bench = Bench::new(1);
        let drops: Vec<_> = (0..4).map(|i| bench.offer(&mut q, packet(i, 0, 400), us(10), BitRate(1))).collect();
        assert_eq!(drops, vec![None, None, None, Some(DropReason::Overflow)]);
    }

    #[test]
    fn conserves_packets_and_bytes() {
        let mut q = pipe(Some(5_000_000), 8);
        let (departed, dropped) = check_conservation(&mut q, 50_000, 5);
        assert!(departed > 0 && dropped > 0);
    }

    #[test]
    fn bad_parameters_name_the_field() {
        let parse = |s: &str| serde_json::from_str::<QdiscSpec>(s).unwrap().build().err().unwrap().path;
        assert_eq!(parse(r#"{"kind":"dummynet","bandwidth":0}"#), "bandwidth");
        assert_eq!(parse(r#"{"kind":"dummynet","bandwidth":"1Mbps","tick":0}"#), "tick");
        assert_eq!(parse(r#"{"kind":"dummynet","limit":"0p"}"#), "limit");
        let s: QdiscSpec =
            serde_json::from_str(r#"{"kind":"dummynet","bandwidth":"622Mbps","limit":"2000p"}"#).unwrap();
        assert_eq!(s.kind(), "dummynet");
    }
}
