//! FAST TCP against its equilibrium (Jin, Wei, Low 2004; docs/mechanisms.md#fast-tcp): at the
//! fixed point of `w ← (1−γ)w + γ(baseRTT/avgRTT·w + α)` each flow keeps α packets queued at the
//! bottleneck (w·(avgRTT − baseRTT)/avgRTT = α, and rate·queueing delay = packets queued).

mod common;
use common::*;
use serde_json::{json, Value};

/// A bottleneck of 100 Mb/s and 2·(1 + 20 + 1) = 44 ms base RTT: BDP ≈ 367 packets of 1500 B.
/// The buffer (2000 packets) never overflows at these windows.
fn fast_path(n: usize, alpha: f64, initial_window: u64, duration: f64) -> Value {
    let mut sc = dumbbell(n, "1Gbps", "1ms", "100Mbps", "20ms", json!({"kind": "droptail", "limit": "2000p"}));
    sc["duration"] = json!(format!("{duration}s"));
    sc["record"] = json!({"queues": true, "cwnd": false, "rtt": false, "drops": true, "links": ["r1->r2"]});
    let tcp = json!({"rtt_sampling": "every_ack", "send_buffer": "8MB", "receive_window": "8MB"});
    let cc = json!({"kind": "fast", "alpha": alpha, "initial_window": initial_window});
    sc["flows"] = json!((0..n)
        .map(|i| json!({"kind": "tcp", "src": format!("s{i}"), "dst": "d", "cc": cc, "tcp": tcp}))
        .collect::<Vec<_>>());
    sc
}

fn check_equilibrium(n: usize, alpha: f64, initial_window: u64) -> quench_core::RunResult {
    let r = run(&fast_path(n, alpha, initial_window, 30.0));
    assert_eq!(link_value(&r, "r1->r2", "dropped_packets"), 0.0, "the buffer must not overflow");
    let q = mean_queue(&r, 20.0, 30.0);
    let what = format!("{n} FAST flow(s), alpha {alpha}, initial window {initial_window}: mean queue over [20, 30] s");
    check_rel(&what, q, n as f64 * alpha, 0.15);
    r
}

/// From below: start-up from 2 segments, then FAST climbs to α = 50 packets queued.
#[test]
fn fast_converges_to_alpha_packets_queued_from_below() {
    check_equilibrium(1, 50.0, 2);
}

/// From above: an initial window of 800 segments leaves ≈430 packets queued at first; FAST
/// drains it down to α.
#[test]
fn fast_converges_to_alpha_packets_queued_from_above() {
    let r = check_equilibrium(1, 50.0, 800);
    let early = mean_queue(&r, 0.1, 0.5);
    eprintln!("mean queue over [0.1, 0.5] s: {early:.1} packets");
    assert!(early > 4.0 * 50.0, "the run must start well above alpha: {early}");
}

/// Two flows keep 2α between them.
#[test]
fn two_fast_flows_keep_alpha_each() {
    check_equilibrium(2, 40.0, 2);
}

/// Vegas (Brakmo, Peterson 1995) on the same path: each flow keeps between α and β packets
/// queued (diff = cwnd·(rtt − baseRTT)/rtt ∈ [α, β] is Vegas's hold region), so the mean
/// bottleneck queue of n flows lies between n·α and n·β.
fn check_vegas_band(n: usize, alpha: f64, beta: f64) {
    let mut sc = fast_path(n, alpha, 2, 30.0);
    let cc = json!({"kind": "vegas", "alpha": alpha, "beta": beta});
    for f in sc["flows"].as_array_mut().unwrap() {
        f["cc"] = cc.clone();
    }
    let r = run(&sc);
    assert_eq!(link_value(&r, "r1->r2", "dropped_packets"), 0.0, "the buffer must not overflow");
    let q = mean_queue(&r, 20.0, 30.0);
    let (lo, hi) = (n as f64 * alpha, n as f64 * beta);
    eprintln!("{n} Vegas flow(s), alpha {alpha}, beta {beta}: mean queue over [20, 30] s = {q:.1} packets");
    // One packet of slack per flow: the window moves by one segment per RTT around the band.
    assert!(q >= lo - n as f64 && q <= hi + n as f64, "mean queue {q:.1} outside [{lo}, {hi}]");
}

#[test]
fn vegas_keeps_between_alpha_and_beta_packets_queued() {
    check_vegas_band(1, 20.0, 40.0);
}

#[test]
fn two_vegas_flows_keep_the_band_each() {
    check_vegas_band(2, 10.0, 20.0);
}

/// FAST with burstiness control (X = cwnd/RTT, threshold 100 packets) on the path above with a
/// 200-packet buffer. Growing its window on every ACK (ns-2), the start-up doubles it per RTT
/// until the delay signal, an RTT late, stops it: an overshoot of up to a bandwidth-delay
/// product (≈367 packets) that the buffer cannot hold. Growing it only on ACKs that find it
/// full (Linux's `tcp_ack`, `cwnd_limited_growth`), the controlled sender, which holds packets
/// back, seldom fills its window and climbs slowly, without loss, to the equilibrium of α
/// packets queued (the slides' "slow convergence" with X = cwnd/RTT, PFLDnet 2005 slide 25).
/// Measured: 0 drops and 49.5 packets queued over [50, 60] s, against 17 drops on every ACK.
#[test]
fn burstiness_controlled_fast_converges_without_overshoot_when_growth_needs_a_full_window() {
    let alpha = 50.0;
    let run_with = |limited: bool| {
        let mut sc = fast_path(1, alpha, 2, 60.0);
        sc["links"][1]["qdisc"]["limit"] = json!("200p");
        let tcp = &mut sc["flows"][0]["tcp"];
        tcp["burstiness_control"] = json!({"threshold": 100, "rate": "cwnd/rtt", "max_rate": "1Gbps"});
        tcp["cwnd_limited_growth"] = json!(limited);
        run(&sc)
    };
    let (limited, every_ack) = (run_with(true), run_with(false));
    let drops = |r: &quench_core::RunResult| link_value(r, "r1->r2", "dropped_packets");
    let q = mean_queue(&limited, 50.0, 60.0);
    eprintln!(
        "burstiness control, 200-packet buffer: growth while full {} drops, mean queue {q:.1} over [50, 60] s; \
         growth on every ACK {} drops",
        drops(&limited),
        drops(&every_ack)
    );
    assert_eq!(drops(&limited), 0.0);
    check_rel("mean queue, growth while full", q, alpha, 0.15);
    assert!(drops(&every_ack) > 0.0, "the ns-2 start-up must overshoot a 200-packet buffer");
}
