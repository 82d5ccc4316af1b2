//! The per-packet paths allocate nothing: once a run is in its steady state, a packet's hops
//! (queue, transmitter, pipe, routing) and its sender's and receiver's handling of it take
//! their memory from structures already grown. Reference: a count of every allocation and
//! reallocation this test's thread makes (a counting global allocator), from half time to
//! the end of the run. A per-packet or per-ACK allocation would show as one or more per
//! packet; what may show instead is a buffer of some flow growing to a new high (a receiver's
//! out-of-order ranges, a sender's per-segment records), which doubles its capacity each time.
//!
//! The scenario is `benchmarks/bench_aqm.py`'s: N flows from one host through a 100 Mb/s
//! bottleneck, base RTT 40 ms, recording off. The hash maps of the engine are off these
//! paths (Source Quench senders by host pair, fragments by datagram), which this test does
//! not count.

use quench_core::table::Column;
use quench_core::units::NS_PER_SEC;
use quench_core::{Simulation, Time};
use serde_json::{json, Value};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Counts the allocations of the thread that makes them: the test harness's own threads
/// stay out of the count.
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn count() {
    // `try_with`: a thread being torn down has no counter left and is not counted.
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

const SECONDS: u64 = 10;
const FLOWS: usize = 64;

/// `bench_aqm.py`'s network with `FLOWS` flows of controller `cc`; flow i starts at i·0.1 ms.
fn scenario(cc: &str, qdisc: Value) -> String {
    let flows: Vec<Value> = (0..FLOWS)
        // The plain RFC sender: the path whose steady state must allocate nothing.
        .map(|i| {
            json!({"kind": "tcp", "src": "s", "dst": "d", "start": format!("{}ms", i as f64 * 0.1), "cc": {"kind": cc},
                        "tcp": {"profile": "rfc"}})
        })
        .collect();
    json!({
        "duration": format!("{SECONDS}s"), "seed": 1,
        "hosts": ["s", "d"], "routers": ["r1", "r2"],
        "links": [{"from": "s", "to": "r1", "rate": "1Gbps", "delay": "1ms"},
                  {"from": "r1", "to": "r2", "rate": "100Mbps", "delay": "18ms", "qdisc": qdisc},
                  {"from": "r2", "to": "d", "rate": "1Gbps", "delay": "1ms"}],
        "flows": flows,
        "record": {"queues": false, "cwnd": false, "rtt": false, "drops": false, "links": []}
    })
    .to_string()
}

/// Packets the bottleneck has sent when `sim` finishes.
fn departed(sim: Simulation) -> u64 {
    let result = sim.finish();
    let links = result.table("links");
    let Some(Column::Str(names)) = links.column("name") else { panic!("links.name") };
    let row = names.iter().position(|n| n == "r1->r2").expect("the bottleneck");
    let Some(Column::U64(departed)) = links.column("departed_packets") else { panic!("departed_packets") };
    departed[row]
}

/// Allocations from half time to the end, and the packets the bottleneck sent meanwhile.
fn second_half(cc: &str, qdisc: Value) -> (u64, u64) {
    let json = scenario(cc, qdisc);
    let half = Time(SECONDS * NS_PER_SEC / 2);
    let mut sim = Simulation::from_json(&json).expect("a valid scenario");
    sim.run_until(half);
    let before = allocations();
    sim.run_until(Time(SECONDS * NS_PER_SEC));
    let allocated = allocations() - before;
    let packets = departed(sim);
    let mut first_half = Simulation::from_json(&json).expect("a valid scenario");
    first_half.run_until(half);
    (allocated, packets - departed(first_half))
}

/// NewReno over drop-tail, the speed benchmark's path: not one allocation in the second half
/// (40,000 packets through the bottleneck and their ACKs).
#[test]
fn newreno_over_drop_tail_allocates_nothing() {
    let (allocated, packets) = second_half("newreno", json!({"kind": "droptail", "limit": "1000p"}));
    assert!(packets > 40_000, "the bottleneck is busy: {packets} packets");
    assert_eq!(allocated, 0, "{allocated} allocations for {packets} packets");
}

/// Other controllers and disciplines: their buffers may still reach new highs in the second
/// half (BBR's receivers acknowledge out-of-order segments at once, so their ranges grow), but
/// at most one allocation per 100 packets, where one per packet or per ACK would be 50 to 100.
#[test]
fn other_paths_allocate_only_to_grow() {
    for (cc, qdisc) in [
        ("cubic", json!({"kind": "droptail", "limit": "1000p"})),
        ("dctcp", json!({"kind": "red"})),
        ("bbr", json!({"kind": "fq_codel"})),
    ] {
        let (allocated, packets) = second_half(cc, qdisc.clone());
        assert!(packets > 30_000, "{cc} over {qdisc}: {packets} packets");
        assert!(allocated * 100 <= packets, "{cc} over {qdisc}: {allocated} allocations for {packets} packets");
    }
}
