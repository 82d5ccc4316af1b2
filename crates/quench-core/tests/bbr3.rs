//! BBRv3 (`cc = "bbr3"`) in whole runs, against what draft-ietf-ccwg-bbr and Linux's v3
//! `tcp_bbr.c` say: one flow fills a clean bottleneck; in a drop-tail buffer of a quarter BDP
//! its loss response (a 2 % loss rate ends bandwidth probing and bounds `inflight_hi`, each
//! lossy round cuts the lower bounds to 0.7) keeps its retransmissions far below BBR v1's,
//! which does not respond to loss; two flows share the link fairly.

mod common;
use common::*;
use serde_json::json;

const MSS: f64 = 1460.0;
/// The bottleneck's rate of payload: 100 Mb/s carrying 1460 of every 1500 bytes.
const PAYLOAD_RATE_BPS: f64 = 100e6 * MSS / 1500.0;
/// The bandwidth-delay product in packets: 2·(1 + 20 + 1) ms of base RTT at 100 Mb/s.
const BDP_PACKETS: f64 = 100e6 / 8.0 * 0.044 / 1500.0;
/// `pacing` table modes (quench_core::names::PACING_MODES) and PROBE_BW phases (Linux order).
const PROBE_BW: u64 = 2;
const PROBE_RTT: u64 = 3;
const UP: u64 = 0;
const DOWN: u64 = 1;
const CRUISE: u64 = 2;
const REFILL: u64 = 3;

/// `n` flows of `cc` (cycled), flow i starting at i × `stagger_ms`, through 100 Mb/s with 44 ms
/// of base RTT and a drop-tail buffer of `buffer`.
fn dumbbell_run(n: usize, buffer: &str, secs: u64, cc: &[&str], stagger_ms: u64) -> quench_core::RunResult {
    let mut sc = dumbbell(n, "1Gbps", "1ms", "100Mbps", "20ms", json!({"kind": "droptail", "limit": buffer}));
    sc["duration"] = json!(format!("{secs}s"));
    let flows: Vec<_> = (0..n)
        .map(|i| {
            json!({"kind": "tcp", "src": format!("s{i}"), "dst": "d", "cc": cc[i % cc.len()],
                   "tcp": {"sack": true}, "start": format!("{}ms", stagger_ms * i as u64)})
        })
        .collect();
    sc["flows"] = json!(flows);
    sc["record"] = json!({"links": ["r1->r2"]});
    run(&sc)
}

/// Flow 0's `pacing` rows: (time, mode, cycle phase).
fn states(r: &quench_core::RunResult) -> Vec<(f64, u64, u64)> {
    let (t, flow) = (f64s(r, "pacing", "time_s"), u64s(r, "pacing", "flow"));
    let (mode, phase) = (u64s(r, "pacing", "mode"), u64s(r, "pacing", "cycle_phase"));
    (0..t.len()).filter(|&i| flow[i] == 0).map(|i| (t[i], mode[i], phase[i])).collect()
}

/// Retransmitted over sent segments, all flows together.
fn retransmission_rate(r: &quench_core::RunResult, n: usize) -> f64 {
    let retx: f64 = (0..n).map(|i| flow_value(r, i, "retransmitted_segments")).sum();
    let sent: f64 = (0..n).map(|i| flow_value(r, i, "packets_sent")).sum();
    retx / sent
}

#[test]
fn explore() {
    let r = dumbbell_run(1, "1000p", 20, &["bbr3"], 0);
    let s = states(&r);
    let mut last = (0.0, 99, 99);
    for x in &s {
        if (x.1, x.2) != (last.1, last.2) && x.0 < 12.0 {
            println!("{:.3} mode {} phase {}", x.0, x.1, x.2);
        }
        last = *x;
    }
    println!("util {}", link_value(&r, "r1->r2", "utilization"));
    println!("goodput {}", flow_value(&r, 0, "goodput_bps"));
    let buffer = format!("{}p", (0.25 * BDP_PACKETS).round());
    for n in [1, 2, 4] {
        for cc in ["bbr", "bbr3"] {
            let r = dumbbell_run(n, &buffer, 30, &[cc], 0);
            println!("{n} x {cc} buffer {buffer}: retx rate {:.5}, util {:.4}, drops {}", retransmission_rate(&r, n),
                link_value(&r, "r1->r2", "utilization"), link_value(&r, "r1->r2", "dropped_packets"));
        }
    }
    let r = dumbbell_run(2, "1000p", 30, &["bbr3"], 2000);
    let g: Vec<f64> = (0..2).map(|i| flow_value(&r, i, "goodput_bps")).collect();
    println!("two flows: {g:?} jain {}", jain(&g));
}
