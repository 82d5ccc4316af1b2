//! The floor: a bare discrete-event simulation of the dumbbell of `benchmarks/bench_dumbbell.py`
//! with nothing but what moving its packets needs, to measure how far quench's run loop is from
//! the cost of the event loop itself. `make bench` prints quench's ratio to it.
//!
//! The model: N senders with fixed windows (no TCP: no congestion control, no loss recovery,
//! no ACK packets), each behind its own access link (10x the bottleneck rate, 1 ms, as
//! `quench.scenarios.dumbbell`), one bottleneck FIFO at `rate` with `rtt/2 - 2 ms` of delay.
//! Four events per packet, through one binary heap:
//!   1. end of transmission on the sender's access link (the next queued packet starts);
//!   2. arrival at the bottleneck router (enqueue; start transmitting if idle);
//!   3. end of transmission on the bottleneck (the next packet starts);
//!   4. the ACK's return to the sender, which releases one packet of its window. The rest of
//!      the path (bottleneck propagation, the receiver's access link, the ACK's way back) is
//!      uncongested and carried out as arithmetic on the time of that event.
//!
//! The windows add up to one bandwidth-delay product plus half the buffer, so the bottleneck
//! is always busy and its queue holds about half the buffer; the queue is not bounded (fixed
//! windows never recover from a drop, and with these windows none would happen in steady state).
//!
//! Run: `cargo bench -p quench-core --bench floor -- --flows 16 --rate 100000000 --duration 30
//! [--rtt 0.05] [--buffer-pkts N] [--json PATH]`; without arguments, the three configurations
//! of bench_dumbbell.py.

use quench_core::units::{BitRate, Bytes, Dur, Time};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::time::Instant;

/// 1500-byte packets, as bench_dumbbell.py's buffer sizing (PACKET_BYTES there).
const PACKET: Bytes = Bytes(1500);
/// Access links: 10x the bottleneck, 1 ms (quench.scenarios ACCESS_RATE_FACTOR, ACCESS_DELAY_S).
const ACCESS_RATE_FACTOR: u64 = 10;
const ACCESS_DELAY: Dur = Dur::from_millis(1);
/// Flow i starts at i ms (quench.scenarios.dumbbell's default start_spacing).
const START_SPACING: Dur = Dur::from_millis(1);
/// bench_dumbbell.py's RTT_S.
const DEFAULT_RTT_S: f64 = 0.05;

#[derive(Clone, Copy)]
enum Ev {
    AccessDone(u32),
    Arrive(u32),
    BottleneckDone,
    AckBack(u32),
}

/// A sender: packets its window allows that wait for its access link, and whether that link
/// is transmitting.
#[derive(Clone, Copy, Default)]
struct Sender {
    waiting: u32,
    busy: bool,
}

struct Config {
    flows: u32,
    rate: BitRate,
    duration: Dur,
    rtt: Dur,
    buffer_pkts: u64,
}

struct Outcome {
    events: u64,
    delivered: u64,
    max_backlog: usize,
    wall_s: f64,
}

/// The event heap: (time, sequence) orders events, the sequence keeping equal times in the
/// order they were scheduled.
struct Heap {
    heap: BinaryHeap<Reverse<(Time, u64, EvKey)>>,
    seq: u64,
}

/// `Ev` as an ordered key (the heap needs Ord on the whole entry; the sequence decides first).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct EvKey(u8, u32);

impl Heap {
    fn push(&mut self, t: Time, ev: Ev) {
        let key = match ev {
            Ev::AccessDone(f) => EvKey(0, f),
            Ev::Arrive(f) => EvKey(1, f),
            Ev::BottleneckDone => EvKey(2, 0),
            Ev::AckBack(f) => EvKey(3, f),
        };
        self.heap.push(Reverse((t, self.seq, key)));
        self.seq += 1;
    }
    fn pop(&mut self) -> Option<(Time, Ev)> {
        let Reverse((t, _, EvKey(kind, f))) = self.heap.pop()?;
        let ev = match kind {
            0 => Ev::AccessDone(f),
            1 => Ev::Arrive(f),
            2 => Ev::BottleneckDone,
            _ => Ev::AckBack(f),
        };
        Some((t, ev))
    }
}

fn simulate(c: &Config) -> Outcome {
    let access = BitRate(c.rate.0 * ACCESS_RATE_FACTOR);
    let tx_access = access.tx_time(PACKET);
    let tx_bottleneck = c.rate.tx_time(PACKET);
    let one_way = Dur(c.rtt.0 / 2);
    let bottleneck_delay = Dur(one_way.0 - 2 * ACCESS_DELAY.0);
    // From the end of transmission on the bottleneck to the ACK back at the sender.
    let rest_of_loop = bottleneck_delay + tx_access + ACCESS_DELAY + one_way;
    let bdp = (c.rate.bytes_per_sec() * c.rtt.as_secs_f64() / PACKET.0 as f64).ceil() as u64;
    let window = ((bdp + c.buffer_pkts / 2) / c.flows as u64).max(1) as u32;
    let end = Time::ZERO + c.duration;

    let start = Instant::now();
    let mut heap = Heap { heap: BinaryHeap::new(), seq: 0 };
    let mut senders = vec![Sender::default(); c.flows as usize];
    let mut queue: VecDeque<u32> = VecDeque::new();
    let mut bottleneck_busy = false;
    let (mut events, mut delivered, mut max_backlog) = (0u64, 0u64, 0usize);
    // Each flow's window goes onto its access link when it starts.
    for f in 0..c.flows {
        let t = Time::ZERO + Dur(START_SPACING.0 * f as u64);
        senders[f as usize] = Sender { waiting: window - 1, busy: true };
        heap.push(t + tx_access, Ev::AccessDone(f));
    }
    while let Some((now, ev)) = heap.pop() {
        if now > end {
            break;
        }
        events += 1;
        match ev {
            Ev::AccessDone(f) => {
                heap.push(now + ACCESS_DELAY, Ev::Arrive(f));
                let s = &mut senders[f as usize];
                if s.waiting > 0 {
                    s.waiting -= 1;
                    heap.push(now + tx_access, Ev::AccessDone(f));
                } else {
                    s.busy = false;
                }
            }
            Ev::Arrive(f) => {
                if bottleneck_busy {
                    queue.push_back(f);
                    max_backlog = max_backlog.max(queue.len());
                } else {
                    bottleneck_busy = true;
                    queue.push_back(f);
                    heap.push(now + tx_bottleneck, Ev::BottleneckDone);
                }
            }
            Ev::BottleneckDone => {
                let f = queue.pop_front().expect("a transmission has its packet at the head");
                delivered += 1;
                heap.push(now + rest_of_loop, Ev::AckBack(f));
                if queue.is_empty() {
                    bottleneck_busy = false;
                } else {
                    heap.push(now + tx_bottleneck, Ev::BottleneckDone);
                }
            }
            Ev::AckBack(f) => {
                let s = &mut senders[f as usize];
                if s.busy {
                    s.waiting += 1;
                } else {
                    s.busy = true;
                    heap.push(now + tx_access, Ev::AccessDone(f));
                }
            }
        }
    }
    Outcome { events, delivered, max_backlog, wall_s: start.elapsed().as_secs_f64() }
}

fn arg<T: std::str::FromStr>(args: &[String], name: &str) -> Option<T> {
    let i = args.iter().position(|a| a == name)?;
    let v = args.get(i + 1).unwrap_or_else(|| panic!("{name} needs a value"));
    Some(v.parse().unwrap_or_else(|_| panic!("{name}: cannot parse '{v}'")))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let rtt_s: f64 = arg(&args, "--rtt").unwrap_or(DEFAULT_RTT_S);
    let bdp = |rate: u64| (rate as f64 * rtt_s / 8.0 / PACKET.0 as f64).ceil() as u64;
    // bench_dumbbell.py's CONFIGS: (flows, bottleneck bit/s, simulated seconds).
    let configs: Vec<(u32, u64, f64)> = match arg::<u32>(&args, "--flows") {
        Some(flows) => vec![(
            flows,
            arg(&args, "--rate").expect("--rate (bit/s) is needed with --flows"),
            arg(&args, "--duration").expect("--duration (s) is needed with --flows"),
        )],
        None => vec![(4, 10_000_000, 100.0), (16, 100_000_000, 30.0), (64, 1_000_000_000, 10.0)],
    };
    let mut json = Vec::new();
    for (flows, rate, duration) in configs {
        let c = Config {
            flows,
            rate: BitRate(rate),
            duration: Dur::from_secs_f64(duration),
            rtt: Dur::from_secs_f64(rtt_s),
            buffer_pkts: arg(&args, "--buffer-pkts").unwrap_or(bdp(rate)),
        };
        let o = simulate(&c);
        println!(
            "floor: {flows} flows, {rate} bit/s, {duration} s: {:.3} s, {} events ({:.3e}/s), {} packets ({:.3e}/s), \
             {:.2} events/packet, max backlog {} packets",
            o.wall_s,
            o.events,
            o.events as f64 / o.wall_s,
            o.delivered,
            o.delivered as f64 / o.wall_s,
            o.events as f64 / o.delivered as f64,
            o.max_backlog
        );
        json.push(format!(
            "{{\"flows\": {flows}, \"rate\": {rate}, \"duration\": {duration}, \"wall_run_s\": {}, \"events\": {}, \
             \"bottleneck_tx_packets\": {}, \"max_backlog\": {}}}",
            o.wall_s, o.events, o.delivered, o.max_backlog
        ));
    }
    if let Some(path) = arg::<String>(&args, "--json") {
        std::fs::write(&path, format!("[{}]\n", json.join(", "))).unwrap_or_else(|e| panic!("{path}: {e}"));
    }
}
