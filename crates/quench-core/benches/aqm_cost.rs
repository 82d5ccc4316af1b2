//! Per-discipline cost without Python: the scenario of `benchmarks/bench_aqm.py` (N NewReno
//! flows from one host through a 100 Mb/s bottleneck, base RTT 40 ms, each queue discipline
//! with its defaults), the best wall time of the run loop over REPEATS runs per packet the
//! bottleneck sent, relative to drop-tail's, and the heap allocations per 1,000 packets in
//! the second half of the run (counted by a global allocator; the first half holds start-up
//! and the amortised growth of queues and tables). Prints a digest of every result table per
//! discipline (equal digests = bit-identical results). Run:
//! `cargo bench -p quench-core --bench aqm_cost -- [SECONDS] [REPEATS] [FLOWS,...] [DISCIPLINE,...]`

mod common;

use quench_core::{Simulation, Time};
use serde_json::{json, Value};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Every allocation (and reallocation) the process makes, counted.
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// bench_aqm.py's defaults: 10 simulated seconds, best of 3, 8 and 1,024 flows.
const DEFAULT_SECONDS: f64 = 10.0;
const DEFAULT_REPEATS: usize = 3;
const DEFAULT_FLOWS: [usize; 2] = [8, 1024];

/// The disciplines as `quench.droptail()`, `quench.red()`, ... write them.
fn disciplines() -> Vec<(&'static str, Value)> {
    vec![
        ("drop-tail", json!({"kind": "droptail", "limit": "1000p"})),
        ("RED", json!({"kind": "red", "min_th": "auto", "max_th": "auto", "limit": "1000p"})),
        ("CoDel", json!({"kind": "codel"})),
        ("FQ-CoDel", json!({"kind": "fq_codel"})),
        ("PIE", json!({"kind": "pie"})),
        ("FQ-PIE", json!({"kind": "fq_pie"})),
        ("CHOKe", json!({"kind": "choke"})),
    ]
}

/// bench_aqm.py's network: s -> r1 (1 Gb/s, 1 ms) -> r2 (100 Mb/s, 18 ms, the discipline)
/// -> d (1 Gb/s, 1 ms); flow i starts at (i mod 1000)·0.1 ms.
fn scenario(qdisc: &Value, flows: usize, seconds: f64) -> String {
    let flows: Vec<Value> = (0..flows)
        // The plain RFC sender, as the cost figures in docs/benchmarks.md were measured with.
        .map(|i| {
            json!({"kind": "tcp", "src": "s", "dst": "d", "start": format!("{}ms", (i % 1000) as f64 * 0.1),
                   "cc": "newreno", "tcp": {"profile": "rfc"}})
        })
        .collect();
    json!({
        "duration": format!("{seconds}s"), "seed": 1,
        "hosts": ["s", "d"], "routers": ["r1", "r2"],
        "links": [{"from": "s", "to": "r1", "rate": "1Gbps", "delay": "1ms"},
                  {"from": "r1", "to": "r2", "rate": "100Mbps", "delay": "18ms", "qdisc": qdisc},
                  {"from": "r2", "to": "d", "rate": "1Gbps", "delay": "1ms"}],
        "flows": flows,
        "record": {"queues": false, "cwnd": false, "rtt": false, "links": ["r1->r2"]}
    })
    .to_string()
}

struct Run {
    secs: f64,
    packets: u64,
    allocations_second_half: u64,
    digest: u64,
}

/// Packets the bottleneck `r1->r2` sent.
fn departed(result: &quench_core::RunResult) -> u64 {
    use quench_core::table::Column;
    let Some(Column::Str(names)) = result.table("links").column("name") else { panic!("links.name") };
    let row = names.iter().position(|n| n == "r1->r2").expect("the bottleneck");
    let Some(Column::U64(v)) = result.table("links").column("departed_packets") else { panic!("departed_packets") };
    v[row]
}

/// One run: the wall time of the run loop, and the allocations in its second half.
fn run_once(json: &str) -> Run {
    let mut sim = Simulation::from_json(json).expect("a valid scenario");
    let (end, start) = (sim.end(), Instant::now());
    sim.run_until(Time(end.0 / 2));
    let allocations = ALLOCATIONS.load(Ordering::Relaxed);
    sim.run_until(end);
    let allocations_second_half = ALLOCATIONS.load(Ordering::Relaxed) - allocations;
    let secs = start.elapsed().as_secs_f64();
    let result = sim.finish();
    Run { secs, packets: departed(&result), allocations_second_half, digest: common::digest(&result) }
}

/// Packets the bottleneck sent by half time (a separate run, finished there).
fn packets_by_half(json: &str) -> u64 {
    let mut sim = Simulation::from_json(json).expect("a valid scenario");
    let half = Time(sim.end().0 / 2);
    sim.run_until(half);
    departed(&sim.finish())
}

fn main() {
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    let seconds: f64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(DEFAULT_SECONDS);
    let repeats: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(DEFAULT_REPEATS);
    let flows: Vec<usize> =
        args.next().map(|s| s.split(',').filter_map(|f| f.parse().ok()).collect()).unwrap_or(DEFAULT_FLOWS.to_vec());
    // Optionally only some disciplines (names as printed, comma-separated); drop-tail's row
    // stays the reference and runs first.
    let only: Option<Vec<String>> = args.next().map(|s| s.split(',').map(str::to_string).collect());
    println!("| flows | discipline | packets | wall s (best) | ns/packet | cost per packet vs drop-tail | allocations per 1,000 packets (second half) | digest |");
    println!("|---|---|---|---|---|---|---|---|");
    for &n in &flows {
        let mut base = None;
        for (name, qdisc) in disciplines() {
            if name != "drop-tail" && only.as_ref().is_some_and(|o| !o.iter().any(|x| x == name)) {
                continue;
            }
            let json = scenario(&qdisc, n, seconds);
            let runs: Vec<Run> = (0..repeats.max(1)).map(|_| run_once(&json)).collect();
            let best = runs.iter().map(|r| r.secs).fold(f64::MAX, f64::min);
            let r = &runs[0];
            assert!(runs.iter().all(|x| x.digest == r.digest), "{name}: runs differ");
            let second_half = r.packets - packets_by_half(&json);
            let per_packet = best / r.packets as f64;
            let base = *base.get_or_insert(per_packet);
            println!(
                "| {n} | {name} | {} | {best:.3} | {:.0} | {:.2}x | {:.2} | {:016x} |",
                r.packets,
                per_packet * 1e9,
                per_packet / base,
                r.allocations_second_half as f64 * 1000.0 / second_half as f64,
                r.digest
            );
        }
    }
}
