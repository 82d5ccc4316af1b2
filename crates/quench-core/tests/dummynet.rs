//! The Dummynet pipe (qdisc/dummynet.rs) in whole runs: its long-run rate is its bandwidth,
//! packets leave only in bursts at tick instants, and a delay-only pipe on the ACK path
//! delivers a TCP sender its ACKs in per-tick bursts (ACK compression).

mod common;
use common::*;
use serde_json::json;

const TICK_S: f64 = 1e-3;

/// Offset of `t` after the last tick instant, in seconds.
fn since_tick(t: f64) -> f64 {
    let k = (t / TICK_S + 1e-9).floor();
    t - k * TICK_S
}

/// A 20 Mb/s CBR stream of 1000-byte packets into a 10 Mb/s pipe (1 ms tick, 50 slots) on a
/// 100 Mb/s link: the pipe is always backlogged.
#[test]
fn backlogged_pipe_sends_its_bandwidth_in_tick_bursts() {
    let pipe = json!({"kind": "dummynet", "bandwidth": "10Mbps", "limit": "50p", "tick": "1ms"});
    let mut sc = dumbbell(1, "100Mbps", "1ms", "100Mbps", "5ms", pipe);
    sc["duration"] = json!("10s");
    sc["flows"] = json!([{"kind": "udp", "src": "s0", "dst": "d", "rate": "20Mbps", "size": "972B"}]);
    sc["record"] = json!({"queues": false, "sojourn": true, "cwnd": false, "rtt": false, "links": ["r1->r2"]});
    let r = run(&sc);
    // 972-byte payloads make 1000-byte datagrams. Credit is 10,000 bits per tick, a packet
    // costs 8,000: 1.25 packets per tick. The first packet reaches the pipe at 1.08 ms, so
    // credit starts at tick 1 and the pipe, never empty again, has earned 9999 ticks of credit
    // by the tick at the end of the run (10 s): floor(9999 × 1.25) = 12,498 packets.
    let departed = link_value(&r, "r1->r2", "departed_packets");
    assert_eq!(departed, (9999.0_f64 * 10_000.0 / 8_000.0).floor());
    // Each tick releases at most two packets; they leave back-to-back at 100 Mb/s (80 µs
    // each), so every departure is 0 or 80 µs after a tick instant.
    let leave = f64s(&r, "sojourn", "time_s");
    assert!(leave.len() as f64 == departed);
    for t in leave {
        let off = since_tick(t);
        assert!(off.abs() < 1e-9 || (off - 80e-6).abs() < 1e-9, "departure {t} is {off} s after a tick");
    }
    assert!(link_value(&r, "r1->r2", "dropped_packets") > 0.0);
}

/// ACK arrival times at the sender of one NewReno flow, and the delay from the reverse
/// bottleneck's output to the sender (propagation r2->r1 and r1->s0, one ACK's wire time).
fn ack_times(reverse: Option<serde_json::Value>) -> Vec<f64> {
    let mut sc = dumbbell(1, "1Gbps", "1ms", "100Mbps", "20ms", json!({"kind": "droptail", "limit": "500p"}));
    if let Some(q) = reverse {
        sc["links"][1]["reverse_qdisc"] = q;
    }
    sc["duration"] = json!("3s");
    sc["record"] = json!({"queues": false, "cwnd": false, "rtt": false, "segments": true});
    sc["flows"] = json!([{"kind": "tcp", "src": "s0", "dst": "d", "cc": "newreno",
        "tcp": {"send_buffer": "2MB", "receive_window": "2MB", "delayed_ack": {"enabled": false}}}]);
    let r = run(&sc);
    let (t, ack) = (f64s(&r, "segments", "time_s"), u64s(&r, "segments", "is_ack"));
    t.iter().zip(ack).filter(|(_, a)| *a == 1).map(|(t, _)| *t).collect()
}

#[test]
fn delay_pipe_on_the_ack_path_compresses_acks_into_tick_bursts() {
    // An ACK released at tick k·T reaches the sender 20 ms + 1 ms later plus its queueing at
    // 100 Mb/s (3.2 µs per 40-byte ACK behind the others of its burst) and 0.32 µs at 1 Gb/s.
    let wire = 40.0 * 8.0 / 100e6 + 40.0 * 8.0 / 1e9;
    let offsets = |acks: &[f64]| -> Vec<f64> { acks.iter().map(|t| since_tick(t - 0.021 - wire)).collect() };
    let plain = offsets(&ack_times(None));
    let piped = offsets(&ack_times(Some(json!({"kind": "dummynet", "tick": "1ms"}))));
    assert!(piped.len() > 1000);
    // A tick's ACKs: at most 100 Mb/s × 1 ms / 1500 B ≈ 8.3 data packets per ms arrive at the
    // receiver, so a burst is at most ~9 ACKs, 9 × 3.2 µs behind its tick.
    let burst_span = 10.0 * 40.0 * 8.0 / 100e6;
    let late = piped.iter().filter(|&&o| o > burst_span + 1e-9).count();
    assert_eq!(late, 0, "every ACK arrives within {burst_span} s of a tick instant");
    // Without the pipe the ACKs are spread over the whole tick.
    let spread = plain.iter().filter(|&&o| o > 0.5 * TICK_S).count() as f64 / plain.len() as f64;
    assert!(spread > 0.3, "without the pipe {spread} of ACKs arrive in the second half of a tick");
}

#[test]
fn pipe_errors_name_the_key() {
    let pipe = json!({"kind": "dummynet", "bandwidth": "10Mbps", "tick": 0});
    let mut sc = dumbbell(1, "100Mbps", "1ms", "100Mbps", "5ms", pipe);
    sc["duration"] = json!("1s");
    let e = config_error(&sc);
    assert!(e.to_string().contains("tick"), "{e}");
}
