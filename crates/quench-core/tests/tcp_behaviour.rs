//! TCP behaviour against independent references: link saturation with a buffer of at least
//! the bandwidth-delay product, slow-start doubling, the Padhye et al. throughput model under
//! random loss, and fairness among equal-RTT flows.

mod common;
use common::*;
use serde_json::{json, Value};

const MSS: f64 = 1460.0;
const WIRE: f64 = MSS + 40.0;

/// One sender -> r1 -> r2 -> receiver path, `cc` flow, bottleneck r1->r2.
fn single_flow(cc: Value, duration: f64, rate: &str, delay: &str, limit: &str, tcp: Value) -> Value {
    let mut sc = dumbbell(1, "1Gbps", "1ms", rate, delay, json!({"kind": "droptail", "limit": limit}));
    sc["duration"] = json!(format!("{duration}s"));
    sc["flows"] = json!([{"kind": "tcp", "src": "s0", "dst": "d", "cc": cc, "tcp": tcp}]);
    sc
}

/// Reference: a window-limited flow whose window exceeds the bandwidth-delay product keeps the
/// bottleneck busy all the time (a queue of window − BDP packets always waits), so the
/// bottleneck utilization is 1 after start-up. 10 Mb/s, 2·(1+20+1) ms = 44 ms base RTT:
/// BDP = 55 KB ≈ 37 packets; the window is 100 KB (68 segments) and the buffer 100 packets,
/// so nothing is ever dropped (window − BDP ≈ 31 packets < 100).
/// The goodput is measured over [5 s, 25 s] as the difference of two runs of the same
/// deterministic scenario (so start-up is excluded exactly).
#[test]
fn reno_saturates_a_bottleneck_with_a_bdp_buffer() {
    let tcp = json!({"receive_window": "100KB", "send_buffer": "100KB"});
    let delivered = |t: f64| {
        let r = run(&single_flow(json!("reno"), t, "10Mbps", "20ms", "100p", tcp.clone()));
        assert_eq!(link_value(&r, "r1->r2", "dropped_packets"), 0.0, "the path must be lossless");
        assert_eq!(flow_value(&r, 0, "retransmitted_segments"), 0.0);
        flow_value(&r, 0, "bytes_delivered")
    };
    let (t1, t2) = (5.0, 25.0);
    let bytes = delivered(t2) - delivered(t1);
    // Every 1460-byte segment occupies 1500 bytes of the bottleneck.
    let utilization = bytes / MSS * WIRE * 8.0 / ((t2 - t1) * 10e6);
    eprintln!("reno bottleneck utilization over [{t1}, {t2}] s: {utilization:.5} (reference 1, must be >= 0.98)");
    assert!(utilization >= 0.98, "utilization {utilization}");
    assert!(utilization <= 1.0 + 1e-3, "utilization above capacity: {utilization}");
}

/// Reference: RFC 5681 slow start with appropriate byte counting (RFC 3465, L = 2): with one
/// ACK per two segments each ACK grows cwnd by 2·MSS, so cwnd doubles every RTT. The path is
/// fast (100 Mb/s, 40 ms base RTT, BDP ≈ 340 segments), so for the first rounds the RTT stays
/// at the base RTT and cwnd sampled at successive RTT boundaries grows by a factor in [1.8, 2.2].
#[test]
fn slow_start_doubles_cwnd_every_rtt() {
    let mut sc = single_flow(json!("reno"), 0.6, "100Mbps", "18ms", "1000p", json!({}));
    sc["record"] = json!({"queues": false});
    let r = run(&sc);
    let t = f64s(&r, "cwnd", "time_s");
    let cwnd = f64s(&r, "cwnd", "cwnd");
    let ssthresh = f64s(&r, "cwnd", "ssthresh");
    // The first record is the initial window at connection establishment (one RTT after the SYN).
    let (t0, rtt) = (t[0], t[0]);
    assert_eq!(cwnd[0], 3.0 * MSS, "RFC 5681 initial window for a 1460-byte MSS is 3 segments");
    let at = |time: f64| {
        let i = t.partition_point(|&x| x <= time);
        assert!(ssthresh[i - 1] > 1e15, "left slow start before {time}");
        cwnd[i - 1]
    };
    // Sample half an RTT into each round (away from the ACK bursts at the round boundaries).
    let samples: Vec<f64> = (0..6).map(|k| at(t0 + (k as f64 + 0.5) * rtt)).collect();
    eprintln!(
        "slow start: RTT {rtt:.6} s, cwnd in segments per round: {:?}",
        samples.iter().map(|c| c / MSS).collect::<Vec<_>>()
    );
    // With an odd window one segment always waits for the next round's data to be ACKed
    // (RFC 1122 delayed ACK), so the bytes ACKed in a round are W − 1 segments and the exact
    // law is W' = 2W − 1: 3, 5, 9, 17, ... The ratio tends to 2; the first round (3 -> 5,
    // 1.67) is outside [1.8, 2.2] for that reason alone, so the ratio is checked from W = 5.
    for k in 1..samples.len() {
        assert_eq!(samples[k], 2.0 * samples[k - 1] - MSS, "round {k}: not W' = 2W - 1");
    }
    for k in 2..samples.len() {
        let g = samples[k] / samples[k - 1];
        assert!((1.8..=2.2).contains(&g), "round {k}: cwnd grew by {g} (from {} to {})", samples[k - 1], samples[k]);
    }
}

/// Padhye, Firoiu, Towsley, Kurose, "Modeling TCP Throughput: A Simple Model and its Empirical
/// Validation", SIGCOMM 1998, eq. (32) (the "full" approximate model, without the receiver
/// window term, which never binds here):
///   B(p) = 1 / (RTT·sqrt(2bp/3) + T0·min(1, 3·sqrt(3bp/8))·p·(1 + 32p²))   segments/s
/// with b = 2 (delayed ACKs: congestion avoidance adds one segment per two RTTs, as our Reno
/// does with one ACK per two segments), RTT = the flow's measured mean RTT and T0 = the mean
/// RTO over the run's RTT samples (1 s here: the RFC 6298 floor binds for a 100 ms path).
/// B is a send rate; we compare goodput, which is lower by the retransmitted fraction (≈ p,
/// at most 2% here), well inside the 25% tolerance that the model's own validation shows.
/// The path has Bernoulli loss on the forward bottleneck and no queueing losses (100 Mb/s,
/// 1000-packet buffer for windows of tens of segments).
fn padhye(cc: &str, p: f64, duration: f64) {
    let mut sc = single_flow(json!(cc), duration, "100Mbps", "48ms", "1000p", json!({}));
    sc["links"][1]["loss"] = json!(p);
    sc["seed"] = json!(7);
    sc["record"] = json!({"queues": false, "cwnd": false, "drops": false});
    let r = run(&sc);
    assert_eq!(link_value(&r, "r1->r2", "dropped_packets"), 0.0, "no queue overflow wanted");
    let losses = link_value(&r, "r1->r2", "drops_link_loss");
    assert!(losses >= 200.0, "only {losses} loss events");
    let rtt = flow_value(&r, 0, "mean_rtt_s");
    let rtos = f64s(&r, "rtt", "rto_s");
    let t0 = rtos.iter().sum::<f64>() / rtos.len() as f64;
    let b = 2.0;
    let model = 1.0
        / (rtt * (2.0 * b * p / 3.0).sqrt()
            + t0 * (3.0 * (3.0 * b * p / 8.0).sqrt()).min(1.0) * p * (1.0 + 32.0 * p * p));
    let goodput = flow_value(&r, 0, "goodput_bps") / 8.0 / MSS;
    eprintln!(
        "{cc} p={p}: RTT {rtt:.4} s, T0 {t0:.3} s, {losses} losses, {} timeouts, {} fast retransmits",
        flow_value(&r, 0, "timeouts"),
        flow_value(&r, 0, "fast_retransmits")
    );
    check_rel(&format!("{cc} p={p} goodput vs Padhye [segments/s]"), goodput, model, 0.25);
}

#[test]
fn reno_goodput_matches_padhye_at_half_percent_loss() {
    padhye("reno", 0.005, 600.0);
}

#[test]
fn reno_goodput_matches_padhye_at_two_percent_loss() {
    padhye("reno", 0.02, 400.0);
}

#[test]
fn newreno_goodput_matches_padhye_at_half_percent_loss() {
    padhye("newreno", 0.005, 600.0);
}

#[test]
fn newreno_goodput_matches_padhye_at_two_percent_loss() {
    padhye("newreno", 0.02, 400.0);
}

/// Reference: AIMD flows with equal RTTs converge to equal shares (Chiu & Jain 1989), so
/// Jain's fairness index of their goodputs approaches 1; we require ≥ 0.95 over 100 s.
/// 8 NewReno flows, 10 Mb/s bottleneck, 40 ms base RTT for all, drop-tail buffer of one BDP
/// (35 packets); starts staggered by 10 ms as independent applications would be. (With all
/// flows starting at 0 the index was 0.974 when this test was written: also a pass.)
#[test]
fn eight_newreno_flows_share_a_droptail_bottleneck_fairly() {
    let n = 8;
    let mut sc = dumbbell(n, "100Mbps", "1ms", "10Mbps", "18ms", json!({"kind": "droptail", "limit": "35p"}));
    sc["duration"] = json!("100s");
    sc["flows"] = json!((0..n)
        .map(|i| json!({"kind": "tcp", "src": format!("s{i}"), "dst": "d", "cc": "newreno", "start": format!("{}ms", 10 * i)}))
        .collect::<Vec<_>>());
    sc["record"] = json!({"queues": false, "cwnd": false, "rtt": false, "drops": false});
    let r = run(&sc);
    let goodputs = f64s(&r, "flows", "goodput_bps");
    let j = jain(&goodputs);
    let total: f64 = goodputs.iter().sum();
    eprintln!(
        "8 NewReno flows: goodputs {:?} Mb/s, total {:.3} Mb/s, Jain index {j:.4} (must be >= 0.95)",
        goodputs.iter().map(|g| (g / 1e4).round() / 100.0).collect::<Vec<_>>(),
        total / 1e6
    );
    assert!(link_value(&r, "r1->r2", "dropped_packets") > 0.0, "the bottleneck should be congested");
    assert!(j >= 0.95, "Jain's index {j}");
    // Sanity: the flows together fill the bottleneck (payload share of 1500-byte packets).
    assert!(total >= 0.9 * 10e6 * MSS / WIRE, "total goodput {total}");
}

/// Linux 2.4-2.6 `tcp_ack` grows the window only on an ACK that arrived while the window was
/// full (`prior_in_flight >= snd_cwnd`; `tcp.cwnd_limited_growth`). Hand count: a receive
/// window of 10 segments caps the flight at 10 segments. The ACK that finds 10 in flight
/// under a 10-segment window grows it to 11 (slow start, one segment per ACK); from then on no
/// ACK finds the window full (room for an 11th segment is always left), so the window stays
/// at exactly 11 segments. Growing on every ACK (ns-2, the default) the window climbs by one
/// segment per ACK for as long as the flow runs, whatever it has in flight.
#[test]
fn window_grows_only_while_full_with_cwnd_limited_growth() {
    let final_cwnd = |limited: bool| {
        let tcp = json!({"receive_window": format!("{}B", 10 * MSS as u64), "cwnd_limited_growth": limited});
        let r = run(&single_flow(json!("newreno"), 3.0, "10Mbps", "20ms", "100p", tcp));
        assert_eq!(flow_value(&r, 0, "retransmitted_segments"), 0.0, "the path must be lossless");
        flow_value(&r, 0, "final_cwnd_bytes") / MSS
    };
    let (limited, every_ack) = (final_cwnd(true), final_cwnd(false));
    eprintln!("window after 3 s, rwnd 10 segments: {limited} segments growing while full, {every_ack} on every ACK");
    assert_eq!(limited, 11.0);
    assert!(every_ack > 100.0, "{every_ack}");
}
