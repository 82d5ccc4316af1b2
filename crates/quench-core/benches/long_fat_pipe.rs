//! The engine at the scale of wei05: one FAST flow (α = 500) through a 1 Gb/s NIC
//! with a 100-packet transmit queue into a 622 Mb/s, 360 ms RTT path with a 2000-packet
//! buffer, about 18,700 packets in flight. Prints wall time, events/s and a digest of every
//! result table (equal digests = bit-identical results). Run:
//! `cargo bench -p quench-core --bench long_fat_pipe -- [SECONDS] [CONTROL] [REPEATS]`
//! with CONTROL one of `none` (default), `burst`, `pacing`, `newreno` (NewReno instead of FAST).

mod common;

use quench_core::Simulation;
use serde_json::{json, Value};
use std::time::Instant;

/// Simulated seconds by default: long enough to leave start-up (about 20 s) well behind.
const DEFAULT_SECONDS: f64 = 60.0;
/// The path of wei05 (Wei, Hegde, Low, PFLDnet 2005): 622 Mb/s, 360 ms RTT, a
/// 2000-packet Dummynet buffer, FAST with α = 500 packets, 1460-byte segments.
const BOTTLENECK: &str = "622Mbps";
const RTT_MS: f64 = 360.0;
const ROUTER_BUFFER: &str = "2000p";
const ALPHA: f64 = 500.0;
const MSS: u64 = 1460;
/// The sending host of `python/quench/experiments/wei05.py`: a 1 Gb/s NIC behind Linux's
/// default txqueuelen of 100 packets, 0.1 ms access links; the far side's queue never fills.
const NIC: &str = "1Gbps";
const TXQUEUELEN: &str = "100p";
const ACCESS_MS: f64 = 0.1;
const FAR_QUEUE: &str = "10000p";
/// Burstiness control's threshold in packets (wei05.py's default).
const BURST_THRESHOLD: f64 = 100.0;

fn scenario(seconds: f64, control: &str) -> Value {
    let pipe_ms = RTT_MS / 2.0 - 2.0 * ACCESS_MS;
    let link = |from: &str, to: &str, rate: &str, ms: f64, limit: &str| {
        json!({"from": from, "to": to, "rate": rate, "delay": format!("{ms}ms"), "duplex": true,
               "qdisc": {"kind": "droptail", "limit": limit}})
    };
    let mut tcp = json!({"profile": "rfc", "mss": MSS, "sack": true, "send_buffer": "64MB", "receive_window": "64MB",
                         "rtt_sampling": "every_ack", "delayed_ack": {"enabled": false}});
    // MI only at start-up: the flow then holds ~586 Mb/s for the whole run (the heavy case;
    // with MI after every loss it idles in timeouts, see docs/reproductions.md).
    let mut cc = json!({"kind": "fast", "alpha": ALPHA, "mi_after_loss": false});
    match control {
        "none" => {}
        "burst" => {
            tcp["burstiness_control"] = json!({"threshold": BURST_THRESHOLD, "rate": "cwnd/rtt", "max_rate": NIC})
        }
        "pacing" => tcp["pacing"] = json!(true),
        "newreno" => cc = json!("newreno"),
        other => panic!("unknown control {other}: none, burst, pacing or newreno"),
    }
    json!({
        "seed": 1,
        "duration": format!("{seconds}s"),
        "hosts": ["sender", "receiver"],
        "routers": ["dummynet", "far"],
        "links": [
            link("sender", "dummynet", NIC, ACCESS_MS, TXQUEUELEN),
            link("dummynet", "far", BOTTLENECK, pipe_ms, ROUTER_BUFFER),
            link("far", "receiver", NIC, ACCESS_MS, FAR_QUEUE),
        ],
        "flows": [{"kind": "tcp", "src": "sender", "dst": "receiver", "cc": cc, "name": "fast", "tcp": tcp}],
        "record": {"queues": false, "cwnd": true, "rtt": false, "drops": false, "monitors": false},
    })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let seconds: f64 = args.first().and_then(|s| s.parse().ok()).unwrap_or(DEFAULT_SECONDS);
    let control = args.get(1).map_or("none", |s| s.as_str());
    let repeats: usize = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(1);
    let json = scenario(seconds, control).to_string();
    for _ in 0..repeats {
        let sim = Simulation::from_json(&json).unwrap_or_else(|e| panic!("scenario: {e}"));
        let start = Instant::now();
        let result = sim.run();
        let secs = start.elapsed().as_secs_f64();
        let delivered = result.table("flows").f64s("bytes_delivered")[0];
        println!(
            "long_fat_pipe {seconds} s {control}: {secs:.3} s, {} events ({:.3e}/s), goodput {:.1} Mb/s, digest {:016x}",
            result.events_executed,
            result.events_executed as f64 / secs,
            delivered * 8.0 / seconds / 1e6,
            common::digest(&result)
        );
    }
}
