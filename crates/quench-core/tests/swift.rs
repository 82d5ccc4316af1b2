//! Swift against its paper's claims (Kumar et al., SIGCOMM 2020, sections 3 and 5;
//! docs/mechanisms.md#swift): under an incast into a deep buffer Swift holds the bottleneck's
//! queuing delay near its target, where loss-based controllers fill the buffer, while the link
//! stays busy and nothing is dropped; and Swift flows share a bottleneck fairly.

mod common;
use common::*;
use serde_json::{json, Value};

const LINE_RATE_BPS: f64 = 10e9;
/// Wire bytes of a full segment (MSS 1460 + 40 header bytes).
const PACKET_BYTES: f64 = 1500.0;
/// The measurement window, seconds: after the first round of decreases.
const FROM_S: f64 = 0.02;
const TO_S: f64 = 0.1;

/// The base RTT by hand: 6 links of 1 µs, a 1500-byte segment serialized on 3 links of 10 Gb/s
/// (1.2 µs each) and its 40-byte ACK on 3 (0.032 µs each): 9.696 µs.
const BASE_RTT_US: f64 = 6.0 + 3.0 * 1.2 + 3.0 * 0.032;

/// `n` senders into one receiver through a 10 Gb/s dumbbell with 1 µs links (base RTT about
/// 10 µs) and a 2000-packet drop-tail buffer (2.4 ms at line rate): a datacenter incast.
/// Delayed ACKs off: at a fair share below two segments a delayed ACK waits for its timer, an
/// endpoint stall that Swift's endpoint window (not modelled) would be the answer to.
fn incast(n: usize, cc: Value) -> quench_core::RunResult {
    let qdisc = json!({"kind": "droptail", "limit": "2000p"});
    let mut sc = dumbbell(n, "10Gbps", "1us", "10Gbps", "1us", qdisc);
    sc["duration"] = json!("100ms");
    sc["record"] = json!({"queues": true, "cwnd": false, "rtt": false, "drops": true, "links": ["r1->r2"]});
    let tcp = json!({"send_buffer": "4MB", "receive_window": "4MB", "rtt_sampling": "every_ack", "sack": true,
                     "delayed_ack": {"enabled": false}});
    sc["flows"] = (0..n)
        .map(|i| json!({"kind": "tcp", "src": format!("s{i}"), "dst": "d", "cc": cc.clone(), "tcp": tcp}))
        .collect::<Vec<_>>()
        .into();
    run(&sc)
}

/// A coarse retransmission timer (BSD's ticks, `rto.tick`, as htsim's 10 ms timeout scanner)
/// leaves the delay Swift reads exact: the 16-to-1 incast's queue is the one with exact timers
/// (with every sample rounded up to a 10 ms tick, Swift saw 10,000 µs of delay on every ACK and
/// held its window at the floor).
#[test]
fn a_coarse_timer_tick_leaves_the_delay_swift_reads_exact() {
    let n = 16;
    let exact = queue_delay_us_and_utilization(&incast(n, json!("swift")), n);
    let qdisc = json!({"kind": "droptail", "limit": "2000p"});
    let mut sc = dumbbell(n, "10Gbps", "1us", "10Gbps", "1us", qdisc);
    sc["duration"] = json!("100ms");
    sc["record"] = json!({"queues": true, "cwnd": false, "rtt": false, "drops": true, "links": ["r1->r2"]});
    let tcp = json!({"send_buffer": "4MB", "receive_window": "4MB", "rtt_sampling": "every_ack", "sack": true,
                     "delayed_ack": {"enabled": false}, "rto": {"tick": "10ms"}});
    sc["flows"] = (0..n)
        .map(|i| json!({"kind": "tcp", "src": format!("s{i}"), "dst": "d", "cc": "swift", "tcp": tcp}))
        .collect::<Vec<_>>()
        .into();
    let ticked = queue_delay_us_and_utilization(&run(&sc), n);
    eprintln!("queue delay and utilization, exact timers {exact:?}, 10 ms ticks {ticked:?}");
    assert!((ticked.0 - exact.0).abs() < 0.05 * exact.0, "{ticked:?} against {exact:?}");
    assert!((ticked.1 - exact.1).abs() < 0.01, "{ticked:?} against {exact:?}");
}

/// Mean queuing delay at the bottleneck over the window, in µs, and utilization.
fn queue_delay_us_and_utilization(r: &quench_core::RunResult, n: usize) -> (f64, f64) {
    let q = mean_queue(r, FROM_S, TO_S);
    let goodput: f64 = (0..n).map(|i| flow_value(r, i, "goodput_bps")).sum();
    (q * PACKET_BYTES * 8.0 / LINE_RATE_BPS * 1e6, goodput / (LINE_RATE_BPS * 1460.0 / PACKET_BYTES))
}

/// Swift's target for this path at `cwnd` packets with the defaults: 20 µs + 3.053 µs per
/// router (two) + flow scaling 32.655/√cwnd − 3.266 µs, clamped to [0, 100] µs.
fn default_target_us(cwnd_packets: f64) -> f64 {
    let alpha = 100.0 / (1.0 / 0.1f64.sqrt() - 0.1);
    20.0 + 2.0 * 3.053 + (alpha / cwnd_packets.sqrt() - alpha / 10.0).clamp(0.0, 100.0)
}

/// 16-to-1: Swift's fabric delay (base RTT plus the bottleneck's queuing delay) stays near its
/// target, the link busy, no drop; NewReno and CUBIC fill the 2.4 ms buffer.
#[test]
fn swift_holds_the_incast_queue_near_its_target_where_loss_based_controllers_fill_the_buffer() {
    let n = 16;
    let r = incast(n, json!("swift"));
    let (queue_us, utilization) = queue_delay_us_and_utilization(&r, n);
    let drops = link_value(&r, "r1->r2", "dropped_packets");
    let fabric_us = BASE_RTT_US + queue_us;
    // The fair window: the packets a fabric delay's worth of line rate holds, shared by 16.
    let fair_cwnd = fabric_us * 1e-6 * LINE_RATE_BPS / 8.0 / PACKET_BYTES / n as f64;
    let target = default_target_us(fair_cwnd);
    eprintln!(
        "Swift 16-to-1: queuing delay {queue_us:.1} µs, fabric delay {fabric_us:.1} µs, target {target:.1} µs \
         at {fair_cwnd:.2} packets, utilization {utilization:.3}, drops {drops}"
    );
    assert_eq!(drops, 0.0, "Swift must not overflow the buffer");
    assert!(utilization > 0.95, "utilization {utilization}");
    let ratio = fabric_us / target;
    assert!(ratio > 0.7 && ratio < 1.3, "fabric delay {fabric_us} µs against a {target} µs target");
    for cc in ["newreno", "cubic"] {
        let r = incast(n, json!(cc));
        let (other_us, other_utilization) = queue_delay_us_and_utilization(&r, n);
        let other_drops = link_value(&r, "r1->r2", "dropped_packets");
        eprintln!(
            "{cc} 16-to-1: queuing delay {other_us:.1} µs, utilization {other_utilization:.3}, drops {other_drops}"
        );
        assert!(other_us > 10.0 * queue_us, "{cc}: {other_us} µs against Swift's {queue_us} µs");
    }
}

/// Two Swift flows, the second starting 20 ms into a 150 ms run, share a 10 Gb/s bottleneck.
/// Each flow's goodput is over its own life: with the payload rate P = 9.733 Gb/s, equal shares
/// once both run give the second P/2 = 4.867 Gb/s and the first (20·P + 130·P/2)/150 = 5.516
/// Gb/s (Jain 0.996 for those two figures, 1 for the shares themselves).
#[test]
fn two_swift_flows_converge_to_fair_shares() {
    let qdisc = json!({"kind": "droptail", "limit": "2000p"});
    let mut sc = dumbbell(2, "10Gbps", "1us", "10Gbps", "1us", qdisc);
    sc["duration"] = json!("150ms");
    sc["record"] = json!({"queues": false, "cwnd": false, "rtt": false, "drops": true});
    let tcp = json!({"send_buffer": "4MB", "receive_window": "4MB", "rtt_sampling": "every_ack", "sack": true});
    sc["flows"] = json!([
        {"kind": "tcp", "src": "s0", "dst": "d", "cc": "swift", "tcp": tcp},
        {"kind": "tcp", "src": "s1", "dst": "d", "cc": "swift", "tcp": tcp, "start": "20ms"},
    ]);
    let r = run(&sc);
    let goodputs = [flow_value(&r, 0, "goodput_bps"), flow_value(&r, 1, "goodput_bps")];
    let j = jain(&goodputs);
    eprintln!("two Swift flows: goodput {:.3} and {:.3} Gb/s, Jain {j:.4}", goodputs[0] / 1e9, goodputs[1] / 1e9);
    let payload = LINE_RATE_BPS * 1460.0 / PACKET_BYTES;
    check_rel("the later flow's goodput, half the payload rate", goodputs[1], payload / 2.0, 0.03);
    check_rel("the first flow's goodput", goodputs[0], (20.0 * payload + 130.0 * payload / 2.0) / 150.0, 0.03);
    assert!(j > 0.99, "Jain index {j}");
}

/// A window capped at one segment behind a receiver that delays its ACK (no second segment
/// ever comes, so each ACK waits out a 10 ms timer): the RTT is 10 ms, but the receiver's ACK
/// delay carried with each ACK leaves a fabric delay of about 10 µs, below target, so the
/// window stays at one segment and one segment is delivered per 10 ms.
/// With the timestamp option the ACK delay is not carried, Swift sees 40 ms and cuts to its
/// least window, paced at one segment per thousand RTTs.
#[test]
fn the_receivers_ack_delay_is_kept_out_of_the_fabric_delay() {
    let run_one = |timestamps: bool| {
        let mut sc = dumbbell(1, "10Gbps", "1us", "10Gbps", "1us", json!({"kind": "droptail", "limit": "2000p"}));
        sc["duration"] = json!("1s");
        sc["record"] = json!({"queues": false, "cwnd": false, "rtt": false});
        let delayed_ack = json!({"enabled": true, "segments": 2, "timeout": "10ms"});
        let tcp = json!({"rtt_sampling": "every_ack", "timestamps": timestamps, "delayed_ack": delayed_ack});
        sc["flows"] = json!([{"kind": "tcp", "src": "s0", "dst": "d", "tcp": tcp,
                              "cc": {"kind": "swift", "max_cwnd": 1.0, "initial_window": 1}}]);
        run(&sc)
    };
    let r = run_one(false);
    let delivered = flow_value(&r, 0, "bytes_delivered");
    let cwnd = flow_value(&r, 0, "final_cwnd_bytes");
    eprintln!("ACK delay carried: {delivered} bytes in 1 s, final cwnd {cwnd} B");
    // After the handshake, one 1460-byte segment per 10 ms (and 10 µs) for about 1 s.
    let segments = delivered / 1460.0;
    assert!((97.0..=100.0).contains(&segments), "{segments} segments");
    assert_eq!(cwnd, 1460.0);
    let r = run_one(true);
    let without = flow_value(&r, 0, "bytes_delivered");
    eprintln!("ACK delay not carried (timestamps): {without} bytes in 1 s");
    assert!(without < delivered / 10.0, "{without} bytes without the ACK delay");
}
