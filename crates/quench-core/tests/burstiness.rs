//! The burstiness theorem of Wei, Hegde, Low (PFLDnet 2005, slide 35: "the queue length is
//! bounded by the sum of window prediction and burstiness"), checked on a recorded trace.
//!
//! Definitions (one flow alone on a FIFO bottleneck of C packets/s, all data packets of one
//! size, sender-to-bottleneck delay constant except for waiting in the access queue):
//! - t_n: send time of data packet n; a_n its arrival at the bottleneck; w_n its wait in the
//!   sender's access queue, δ = max w_n.
//! - q(n) = C·(bottleneck sojourn of n): the work queued ahead of n when it arrived, in packets.
//! - u(n): the first unacknowledged packet when n is sent (sent about one RTT earlier).
//! - B(n) = max over u ≤ m ≤ n of [(n − m + 1) − C·(t_n − t_m)] (burstiness with X = C).
//!
//! Theorem: q(n) ≤ q(u) + B(n) − 1 + C·δ. Proof: Lindley's recursion unrolled back to u gives
//! q(n) + 1 = max(q(u) + (n − u + 1) − C(a_n − a_u), max_{u<m≤n} [(n − m + 1) − C(a_n − a_m)]),
//! and a_n − a_m ≥ t_n − t_m − δ; each bracket is at most B(n) + C·δ and q(u) ≥ 0.
//! q(u) is the "window prediction": the backlog the window control left one RTT earlier.

mod common;
use common::*;
use serde_json::json;

const WIRE_BITS: f64 = 1500.0 * 8.0;

/// FAST start-up and convergence (bursty: +1 segment per ACK) on 100 Mb/s, 44 ms base RTT,
/// a 10 Gb/s access link, a buffer that never overflows.
fn fast_trace() -> quench_core::RunResult {
    bursty_trace(json!({"kind": "fast", "alpha": 100}), json!({"rtt_sampling": "every_ack"}))
}

/// One flow of controller `cc` on the path above; `tcp` adds to the TCP settings.
fn bursty_trace(cc: serde_json::Value, extra: serde_json::Value) -> quench_core::RunResult {
    let mut sc = dumbbell(1, "10Gbps", "1ms", "100Mbps", "20ms", json!({"kind": "droptail", "limit": "5000p"}));
    sc["duration"] = json!("4s");
    sc["record"] = json!({"queues": false, "cwnd": false, "rtt": false, "segments": true, "sojourn": true});
    let mut tcp = json!({"send_buffer": "8MB", "receive_window": "8MB"});
    for (k, v) in extra.as_object().unwrap() {
        tcp[k] = v.clone();
    }
    sc["flows"] = json!([{"kind": "tcp", "src": "s0", "dst": "d", "cc": cc, "tcp": tcp}]);
    run(&sc)
}

/// Per data packet n of a lossless trace: (q(n), q(u(n)), B(n) with X = C), and δ.
struct Terms {
    q: Vec<f64>,
    q_u: Vec<f64>,
    b: Vec<f64>,
    delta: f64,
}

fn trace_terms(r: &quench_core::RunResult, c: f64) -> Terms {
    assert_eq!(flow_value(r, 0, "retransmitted_segments"), 0.0, "the trace must be lossless");
    let (time, seq, len, is_ack) = (
        f64s(r, "segments", "time_s"),
        u64s(r, "segments", "seq"),
        u64s(r, "segments", "len"),
        u64s(r, "segments", "is_ack"),
    );
    let mut sends = vec![]; // (time, end seq, highest ack received by then)
    let mut acked = 0;
    for i in 0..time.len() {
        if is_ack[i] == 1 {
            acked = acked.max(seq[i]);
        } else if len[i] > 0 {
            sends.push((time[i], seq[i] + len[i], acked));
        }
    }
    let sojourns = |link: &str| -> Vec<f64> {
        let id = link_row(r, link) as u64;
        let (l, s) = (u64s(r, "sojourn", "link"), f64s(r, "sojourn", "sojourn_s"));
        // The first row of each link is the SYN.
        l.iter().zip(&s).filter(|(&li, _)| li == id).map(|(_, &s)| s).skip(1).collect()
    };
    let q: Vec<f64> = sojourns("r1->r2").iter().map(|s| s * c).collect();
    let delta = sojourns("s0->r1").iter().cloned().fold(0.0, f64::max);
    let (mut u, mut q_u, mut b) = (0, vec![], vec![]);
    for n in 0..q.len() {
        let (t, _, ack) = sends[n];
        while sends[u].1 <= ack {
            u += 1;
        }
        q_u.push(q[u]);
        b.push((u..=n).map(|m| (n - m + 1) as f64 - c * (t - sends[m].0)).fold(f64::NEG_INFINITY, f64::max));
    }
    Terms { q, q_u, b, delta }
}

const C_PACKETS: f64 = 100e6 / WIRE_BITS;

/// The burst excess max_n [q(n) − q(u)]: how far the queue rises above the window prediction.
fn burst_excess(t: &Terms) -> f64 {
    t.q.iter().zip(&t.q_u).map(|(q, qu)| q - qu).fold(f64::NEG_INFINITY, f64::max)
}

/// With control every send keeps B_X(n) < threshold. While X = cwnd/srtt ≤ C, B_C(n) ≤ B_X(n)
/// and by the theorem the queue rises at most threshold − 1 + C·δ above the window prediction.
/// X ≤ C is guaranteed here by a window-limited NewReno flow (send buffer 200 KB = 137
/// segments, X ≤ 137/44 ms ≈ 3100 < C ≈ 8333 packets/s); its slow-start bursts (3 segments per
/// ACK at 10 Gb/s) raise the queue far more without control. Goodput is unchanged.
/// (With FAST's start-up cwnd/srtt overshoots C, and the bound then does not follow: the
/// slides' under-/over-estimation caveat.)
#[test]
fn burstiness_control_bounds_the_burst_excess() {
    let threshold = 10.0;
    let window_limited = json!({"send_buffer": "200KB", "receive_window": "200KB"});
    let mut controlled = window_limited.clone();
    controlled["burstiness_control"] = json!({"threshold": threshold, "rate": "cwnd/rtt"});
    let (off, on) = (bursty_trace(json!("newreno"), window_limited), bursty_trace(json!("newreno"), controlled));
    let (t_off, t_on) = (trace_terms(&off, C_PACKETS), trace_terms(&on, C_PACKETS));
    let (x_off, x_on) = (burst_excess(&t_off), burst_excess(&t_on));
    let (good_off, good_on) = (flow_value(&off, 0, "bytes_delivered"), flow_value(&on, 0, "bytes_delivered"));
    eprintln!(
        "queue rise above the window prediction: {x_off:.1} packets without control, {x_on:.1} with \
         (threshold {threshold}); delivered {good_off} vs {good_on} bytes"
    );
    assert!(x_on <= threshold - 1.0 + C_PACKETS * t_on.delta + 1e-6);
    assert!(x_off > 2.0 * threshold);
    assert!(good_on >= 0.95 * good_off);
}

#[test]
fn burstiness_threshold_must_exceed_one_packet() {
    let mut sc = dumbbell(1, "10Gbps", "1ms", "100Mbps", "20ms", json!({"kind": "droptail", "limit": "50p"}));
    let tcp = json!({"burstiness_control": {"threshold": 1}});
    sc["duration"] = json!("1s");
    sc["flows"] = json!([{"kind": "tcp", "src": "s0", "dst": "d", "tcp": tcp}]);
    let e = config_error(&sc);
    assert!(e.to_string().contains("threshold"), "{e}");
}

#[test]
fn burstiness_bounds_the_bottleneck_queue_on_a_trace() {
    let r = fast_trace();
    let t = trace_terms(&r, C_PACKETS);
    assert!(t.q.len() > 10_000, "{} packets crossed the bottleneck", t.q.len());
    let worst = (0..t.q.len())
        .map(|n| t.q[n] - (t.q_u[n] + t.b[n] - 1.0 + C_PACKETS * t.delta))
        .fold(f64::NEG_INFINITY, f64::max);
    let max_b = t.b.iter().cloned().fold(0.0, f64::max);
    eprintln!(
        "{} packets: max queue {:.1}, max B {max_b:.1}, access wait δ {:.2} µs (C·δ = {:.3} packets); \
         max of q(n) − [q(u) + B(n) − 1 + C·δ] = {worst:.3e} (theorem: ≤ 0)",
        t.q.len(),
        t.q.iter().cloned().fold(0.0, f64::max),
        t.delta * 1e6,
        C_PACKETS * t.delta
    );
    assert!(max_b > 10.0, "the trace should contain bursts");
    assert!(worst <= 1e-6, "the bound is violated by {worst} packets");
}
