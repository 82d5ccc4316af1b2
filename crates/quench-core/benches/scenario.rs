//! The engine alone on a scenario file (no Python): wall time of the run loop, events per
//! second, packets per second and a digest of every result table (equal digests = bit-identical
//! results) and the peak resident set size. Run:
//! `cargo bench -p quench-core --bench scenario -- SCENARIO.json [REPEATS]`
//! (`python -c "from quench.scenarios import dumbbell; ..."` writes one with `to_dict`).

mod common;

use quench_core::{Scenario, Simulation};
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    let Some(path) = args.next() else {
        eprintln!("usage: cargo bench -p quench-core --bench scenario -- SCENARIO.json [REPEATS]");
        return;
    };
    let repeats: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(3);
    for _ in 0..repeats {
        // The file's text and the parsed scenario go before the run, as a caller's would: the
        // peak resident set below is the engine's (the build, the run or the results).
        let json = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
        let scenario = Scenario::from_json(&json).unwrap_or_else(|e| panic!("{path}: {e}"));
        drop(json);
        let mut sim = Simulation::new(&scenario).unwrap_or_else(|e| panic!("{path}: {e}"));
        drop(scenario);
        let start = Instant::now();
        sim.run_until(sim.end());
        let secs = start.elapsed().as_secs_f64();
        let heap_events = sim.heap_events();
        let result = sim.finish();
        let column = |name| match result.table("links").column(name) {
            Some(quench_core::table::Column::U64(v)) => v.clone(),
            _ => vec![],
        };
        let departed: u64 = column("departed_packets").iter().sum();
        // The busiest link's deliveries: on a dumbbell, the bottleneck's data packets.
        let delivered = column("delivered_packets").into_iter().max().unwrap_or(0);
        println!(
            "{path}: {secs:.3} s, {} events ({:.2e}/s), {departed} link transmissions ({:.2e}/s), \
             {heap_events} heap events ({:.2} per packet the busiest link delivered), digest {:016x}, \
             peak RSS {}",
            result.events_executed,
            result.events_executed as f64 / secs,
            departed as f64 / secs,
            heap_events as f64 / delivered.max(1) as f64,
            common::digest(&result),
            peak_rss()
        );
    }
}

/// The process's peak resident set so far (Linux's `VmHWM`), or "n/a" where /proc has none.
fn peak_rss() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let peak = status.lines().find_map(|l| l.strip_prefix("VmHWM:"));
    peak.map_or_else(|| "n/a".to_string(), |kib| kib.trim().to_string())
}
