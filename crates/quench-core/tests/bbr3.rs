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
                   "tcp": {"profile": "linux"}, "start": format!("{}ms", stagger_ms * i as u64)})
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

/// One flow on a clean path (buffer 2.7 BDP): the link is filled (utilization above 90 %)
/// without a drop, and the state machine runs as Linux's v3 does: STARTUP, DRAIN, PROBE_BW;
/// within PROBE_BW only DOWN → CRUISE, DOWN or CRUISE → REFILL, REFILL → UP, UP → DOWN (and
/// CRUISE after PROBE_RTT); REFILL comes 2-3 s after the cycle began (the drawn wall-clock
/// wait, or 62-63 rounds of ~45 ms, Reno's bound, whichever is first) and lasts one round;
/// PROBE_RTT comes 5 s after the min RTT was last lowered or PROBE_RTT ended (+ up to a round).
#[test]
fn one_flow_fills_the_link_and_cycles_as_linux_v3_does() {
    let r = dumbbell_run(1, "1000p", 20, &["bbr3"], 0);
    let utilization = link_value(&r, "r1->r2", "utilization");
    println!("one flow: utilization {utilization:.4}, goodput {:.4e} b/s", flow_value(&r, 0, "goodput_bps"));
    assert!(utilization > 0.9, "utilization {utilization}");
    assert!(flow_value(&r, 0, "goodput_bps") > 0.9 * PAYLOAD_RATE_BPS);
    assert_eq!(link_value(&r, "r1->r2", "dropped_packets"), 0.0);
    let s = states(&r);
    let modes: Vec<u64> = s.iter().map(|x| x.1).fold(vec![], |mut v, m| {
        if v.last() != Some(&m) {
            v.push(m);
        }
        v
    });
    assert_eq!(modes[..3], [0, 1, PROBE_BW]);
    let (mut cycle_start, mut refill_at, mut probe_rtt_end) = (None, None, 0.0);
    let mut refills = 0;
    for w in s.windows(2) {
        let ((_, m0, p0), (t1, m1, p1)) = (w[0], w[1]);
        if m0 == PROBE_RTT && m1 == PROBE_BW {
            assert_eq!(p1, CRUISE, "PROBE_RTT returns to CRUISE at {t1}");
            (cycle_start, probe_rtt_end) = (Some(t1), t1);
        }
        if m1 == PROBE_RTT && m0 != PROBE_RTT {
            let since = t1 - probe_rtt_end;
            assert!(since > 5.0 && since < 5.5, "PROBE_RTT {since} s after the last at {t1}");
        }
        if m0 != PROBE_BW || m1 != PROBE_BW || p0 == p1 {
            continue;
        }
        assert!(
            matches!((p0, p1), (DOWN, CRUISE) | (DOWN, REFILL) | (CRUISE, REFILL) | (REFILL, UP) | (UP, DOWN)),
            "{p0} → {p1} at {t1}"
        );
        match p1 {
            DOWN => cycle_start = Some(t1),
            REFILL => {
                if let Some(c) = cycle_start {
                    let wait = t1 - c;
                    assert!((2.0..=3.0).contains(&wait), "REFILL {wait} s into the cycle at {t1}");
                    refills += 1;
                }
                refill_at = Some(t1);
            }
            UP => {
                let refill = t1 - refill_at.unwrap();
                assert!(refill > 0.04 && refill < 0.1, "REFILL held {refill} s at {t1}");
            }
            _ => {}
        }
    }
    assert!(refills >= 3, "{refills} timed cycles");
}

/// A drop-tail buffer of a quarter BDP (92 packets), 1, 2 and 4 flows for 30 s: BBR v1 does
/// not answer loss (its window is cwnd_gain × BtlBw × RTprop whatever is lost), so its probes
/// overflow the buffer every 8 rounds; BBRv3 ends a probe at a 2 % loss rate, remembers the
/// volume in `inflight_hi`, cruises 15 % below it, and cuts its lower bounds to 0.7 in lossy
/// rounds: it retransmits well under half as much, at the same utilization. Both with Linux's
/// TCP (RACK-TLP, `tcp.profile = "linux"`), where both run.
#[test]
fn bbr3_retransmits_far_less_than_bbr_v1_in_a_shallow_buffer() {
    let buffer = format!("{}p", (0.25 * BDP_PACKETS).round());
    for n in [1, 2, 4] {
        let rate = |cc: &str| {
            let r = dumbbell_run(n, &buffer, 30, &[cc], 0);
            (retransmission_rate(&r, n), link_value(&r, "r1->r2", "utilization"))
        };
        let ((v1, u1), (v3, u3)) = (rate("bbr"), rate("bbr3"));
        println!(
            "{n} flows, {buffer}: retransmitted {:.3} % (v1) vs {:.3} % (v3); utilization {u1:.4} vs {u3:.4}",
            100.0 * v1,
            100.0 * v3
        );
        assert!(v3 < 0.6 * v1, "{n} flows: v3 {v3} against v1 {v1}");
        assert!(u3 > 0.9, "{n} flows: utilization {u3}");
    }
}

/// Two flows starting together share the link: Jain's index of their goodputs over 30 s is
/// above 0.9 in a buffer of 0.25, 1 and 2.7 BDP.
#[test]
fn two_flows_share_the_link_fairly() {
    for buffer in ["92p", "366p", "1000p"] {
        let r = dumbbell_run(2, buffer, 30, &["bbr3"], 0);
        let g: Vec<f64> = (0..2).map(|i| flow_value(&r, i, "goodput_bps")).collect();
        println!("{buffer}: goodputs {:.4e} {:.4e} b/s, Jain {:.4}", g[0], g[1], jain(&g));
        assert!(jain(&g) > 0.9, "{buffer}: {g:?}");
        assert!(link_value(&r, "r1->r2", "utilization") > 0.9);
    }
}

/// A flow that starts 1 s or 5 s after the first converges slowly (docs/validation.md#bbrv3:
/// Jain 0.63-0.83 over 30 s where BBR v1 reaches 0.90-1.00); measured, not a claim of the
/// draft: `cargo test -p quench-core --release --test bbr3 staggered -- --ignored --nocapture`.
#[test]
#[ignore]
fn staggered_starts_measured() {
    for cc in ["bbr", "bbr3"] {
        for buffer in ["92p", "366p", "1000p"] {
            for stagger in [1000, 5000] {
                let r = dumbbell_run(2, buffer, 30, &[cc], stagger);
                let g: Vec<f64> = (0..2).map(|i| flow_value(&r, i, "goodput_bps")).collect();
                println!("{cc} {buffer} second flow at {stagger} ms: Jain {:.4}", jain(&g));
                assert!(link_value(&r, "r1->r2", "utilization") > 0.9);
            }
        }
    }
}

/// BBRv3 without SACK: two flows, the second starting 1 s after the first, 50 Mb/s, 40 ms of
/// base RTT, a drop-tail buffer of a quarter BDP, 20 s. The sender runs Linux's Reno emulation
/// for a `cong_control` module (each duplicate ACK counts as delivered and leaves the flight,
/// the head is marked lost) and writes no window of the controller's in recovery
/// (`tcp_cong_control` returns before `tcp_cwnd_reduction` whether or not the connection has
/// SACK), so the recovery procedure chosen changes nothing: RFC 6675's rules and the three
/// PRRs give bit-identical flows. What the runs measure (docs/validation.md, "BBRv3 without
/// SACK"): with SACK 116 MB delivered, 1,113 drops, no timeout; without, 37 MB, 66,251 drops
/// and 101 timeouts, the shallow-buffer weakness BBR v1 shows without SACK too.
#[test]
fn without_sack_bbr3_runs_under_the_reno_emulation() {
    let run_with = |sack: bool, recovery: &str| {
        let mut sc = dumbbell(2, "1Gbps", "1ms", "50Mbps", "18ms", json!({"kind": "droptail", "limit": "43p"}));
        sc["duration"] = json!("20s");
        let tcp = json!({"profile": "linux", "sack": sack, "recovery": recovery});
        sc["flows"] = json!([
            {"kind": "tcp", "src": "s0", "dst": "d", "cc": "bbr3", "tcp": tcp},
            {"kind": "tcp", "src": "s1", "dst": "d", "cc": "bbr3", "tcp": tcp, "start": "1s"}
        ]);
        run(&sc)
    };
    let flows = |r: &quench_core::RunResult| {
        let cols = ["bytes_delivered", "retransmitted_segments", "fast_retransmits", "timeouts"];
        cols.iter().map(|c| f64s(r, "flows", c)).collect::<Vec<_>>()
    };
    let with_sack = run_with(true, "prr_rfc9937");
    let without = run_with(false, "prr_rfc9937");
    let drops = |r: &quench_core::RunResult| link_value(r, "r1->r2", "dropped_packets");
    println!("SACK: {:?}, {} drops", flows(&with_sack), drops(&with_sack));
    println!("no SACK: {:?}, {} drops", flows(&without), drops(&without));
    assert!(flows(&without)[2].iter().sum::<f64>() > 0.0, "the test needs a fast recovery without SACK");
    for recovery in ["standard", "prr", "prr_crb"] {
        assert_eq!(flows(&run_with(false, recovery)), flows(&without), "tcp.recovery = {recovery}");
    }
}
