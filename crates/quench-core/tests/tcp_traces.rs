//! Hand-computed TCP traces on tiny paths where every time can be worked out on paper.
//! Path for the Tahoe cases: hosts a and b joined by one 8 Mb/s, 10 ms link; MSS 960, so a
//! data segment is 1000 bytes on the wire = 1 ms to transmit, an ACK or SYN 40 bytes = 40 µs.
//! One-way times: data 11 ms, ACK 10.04 ms; handshake RTT 20.08 ms.

mod common;
use common::*;
use serde_json::{json, Value};

const MSS: f64 = 960.0;
const MS: f64 = 1e-3;

fn near(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

fn two_hosts(limit: &str, flow: Value, duration: &str) -> Value {
    json!({
        "duration": duration, "hosts": ["a", "b"],
        "links": [{"from": "a", "to": "b", "rate": "8Mbps", "delay": "10ms",
                   "qdisc": {"kind": "droptail", "limit": limit}}],
        "flows": [flow]
    })
}

fn events(r: &quench_core::RunResult) -> Vec<(f64, u64)> {
    f64s(r, "tcp_events", "time_s").into_iter().zip(u64s(r, "tcp_events", "event")).collect()
}

/// Tahoe (IW 1, +1 segment per ACK below ssthresh), delayed ACKs off, no loss. Established at
/// 20.08 ms; the ACK of segment j of round r (r ≥ 1, 0 ≤ j < 2^(r−1)) arrives at
/// 20.08 + 21.04·r + j ms (data 11 ms + ACK 10.04 ms per round, back-to-back segments 1 ms
/// apart while the window is below the 20-segment BDP), and cwnd becomes 2^(r−1) + j + 1
/// segments: 1, 2, 4, 8, 16, 32 at the end of rounds 0..5.
#[test]
fn tahoe_slow_start_by_hand() {
    let flow = json!({"kind": "tcp", "src": "a", "dst": "b", "cc": "tahoe",
                      "tcp": {"mss": 960, "rto": {"k": 2}, "delayed_ack": {"enabled": false}}});
    let r = run(&two_hosts("1000p", flow, "150ms"));
    let t = f64s(&r, "cwnd", "time_s");
    let cwnd = f64s(&r, "cwnd", "cwnd");
    assert!(near(t[0], 20.08 * MS) && cwnd[0] == MSS, "first record ({}, {})", t[0], cwnd[0]);
    let mut i = 1;
    for round in 1..=5u32 {
        for j in 0..(1u32 << (round - 1)) {
            let want_t = (20.08 + 21.04 * round as f64 + j as f64) * MS;
            let want_w = ((1u32 << (round - 1)) + j + 1) as f64 * MSS;
            assert!(
                near(t[i], want_t) && cwnd[i] == want_w,
                "round {round} ack {j}: got ({}, {}), want ({want_t}, {want_w})",
                t[i],
                cwnd[i]
            );
            i += 1;
        }
    }
    assert!(events(&r).is_empty(), "no loss events expected");
    assert_eq!(flow_value(&r, 0, "retransmitted_segments"), 0.0);
}

/// Tahoe with IW 3 and rto.k = 2 sends a 3-segment (2880-byte) transfer at once into a
/// one-packet drop-tail queue: segment 1 is transmitted, 2 waits, 3 (with the FIN) is dropped.
/// By hand (ms):
///   SYN RTT m0 = 20.08: srtt = 20.08, rttvar = 10.04.
///   seg 1 sent 20.08 (timed), ACKed 41.12: m1 = 21.04, err = 0.96, srtt = 20.08 + 0.12 = 20.20,
///     rttvar = 10.04 + (0.96 − 10.04)/4 = 7.77, RTO = 20.20 + 2·7.77 = 35.74 (rto.min 1 ms);
///     cwnd 3 -> 4 segments.
///   seg 2 ACKed 42.12: cwnd 5 segments; timer restarted: expires 42.12 + 35.74 = 77.86.
///   Timeout at 77.86: ssthresh = max(min(wnd, cwnd)/2/MSS, 2)·MSS = floor(2.5)·MSS = 2 MSS,
///     cwnd = 1 MSS, seg 3 resent 77.86, delivered 77.86 + 11 = 88.86 = completion.
#[test]
fn tahoe_retransmission_timeout_by_hand() {
    let flow = json!({"kind": "tcp", "src": "a", "dst": "b", "bytes": "2880B",
                      "cc": {"kind": "tahoe", "initial_window": 3},
                      "tcp": {"mss": 960, "rto": {"k": 2, "min": "1ms"}, "delayed_ack": {"enabled": false}}});
    let r = run(&two_hosts("1p", flow, "1s"));
    assert_eq!(u64s(&r, "drops", "size"), vec![1000], "exactly the third segment is dropped");
    let rto = f64s(&r, "rtt", "rto_s");
    let rtt_t = f64s(&r, "rtt", "time_s");
    assert!(near(rtt_t[0], 20.08 * MS) && near(rto[0], 40.16 * MS), "RTO after the SYN sample: {}", rto[0]);
    assert!(near(rtt_t[1], 41.12 * MS) && near(rto[1], 35.74 * MS), "RTO after the second sample: {}", rto[1]);
    let got: Vec<(f64, f64, f64)> = f64s(&r, "cwnd", "time_s")
        .into_iter()
        .zip(f64s(&r, "cwnd", "cwnd"))
        .zip(f64s(&r, "cwnd", "ssthresh"))
        .map(|((t, c), s)| (t, c, s))
        .take(4)
        .collect();
    let want = [(20.08, 3.0), (41.12, 4.0), (42.12, 5.0), (77.86, 1.0)];
    for (g, w) in got.iter().zip(want) {
        assert!(near(g.0, w.0 * MS) && g.1 == w.1 * MSS, "cwnd trace {got:?}, want {want:?}");
    }
    assert_eq!(got[3].2, 2.0 * MSS, "ssthresh after the timeout");
    let ev = events(&r);
    assert_eq!(ev.len(), 1, "{ev:?}");
    assert!(near(ev[0].0, 77.86 * MS) && ev[0].1 == event::TIMEOUT, "{ev:?}");
    assert_eq!(flow_value(&r, 0, "bytes_delivered"), 2880.0);
    assert!(near(flow_value(&r, 0, "response_time_s"), 88.86 * MS), "{}", flow_value(&r, 0, "response_time_s"));
    assert_eq!(flow_value(&r, 0, "timeouts"), 1.0);
    assert_eq!(flow_value(&r, 0, "retransmitted_segments"), 1.0);
    // The tail was lost, so its retransmission arrives in order: neither overtaken nor twice.
    assert_eq!((flow_value(&r, 0, "reordered_segments"), flow_value(&r, 0, "duplicate_segments")), (0.0, 0.0));
}

/// NewReno (RFC 6582) with exactly one drop: IW 10 into a queue of 8 packets drops segment
/// 10; the receive window (12 segments) then keeps the queue short, so nothing else is lost.
/// Segments 11, 12, 13 produce three duplicate ACKs: one fast retransmit with
/// ssthresh = FlightSize/2 = 12·960/2 = 5760 and cwnd = ssthresh + 3·MSS = 8640 on entry; the
/// retransmission's ACK covers `recover`, so recovery ends with cwnd = ssthresh; no timeout.
/// A finite transfer (60 segments) then completes with every byte delivered once.
#[test]
fn newreno_fast_recovery_with_one_drop() {
    let n = 60.0 * MSS;
    let flow = json!({"kind": "tcp", "src": "a", "dst": "b", "bytes": format!("{n}B"),
                      "cc": {"kind": "newreno", "initial_window": 10},
                      "tcp": {"mss": 960, "receive_window": "11520B", "delayed_ack": {"enabled": false}}});
    let r = run(&two_hosts("8p", flow, "5s"));
    assert_eq!(f64s(&r, "drops", "time_s").len(), 1, "exactly one drop");
    let ev = events(&r);
    assert_eq!(ev.len(), 1, "exactly one fast retransmit, no timeout, no partial ACK: {ev:?}");
    assert_eq!(ev[0].1, event::FAST_RETRANSMIT);
    let t = f64s(&r, "cwnd", "time_s");
    let cwnd = f64s(&r, "cwnd", "cwnd");
    let ss = f64s(&r, "cwnd", "ssthresh");
    let entry = t.iter().position(|&x| x == ev[0].0).expect("a cwnd record at the fast retransmit");
    assert_eq!(ss[entry], 5760.0, "ssthresh = FlightSize/2");
    assert_eq!(cwnd[entry], 5760.0 + 3.0 * MSS, "cwnd = ssthresh + 3 MSS on entry");
    // Further duplicate ACKs inflate cwnd by one MSS each; the first decrease ends recovery.
    let exit = (entry + 1..cwnd.len()).find(|&i| cwnd[i] < cwnd[i - 1]).expect("recovery exit");
    assert!((entry + 1..exit).all(|i| cwnd[i] == cwnd[i - 1] + MSS), "inflation by one MSS per dup ACK");
    assert_eq!(cwnd[exit], 5760.0, "cwnd = ssthresh on exit");
    assert_eq!(flow_value(&r, 0, "timeouts"), 0.0);
    assert_eq!(flow_value(&r, 0, "fast_retransmits"), 1.0);
    assert_eq!(flow_value(&r, 0, "retransmitted_segments"), 1.0);
    assert_eq!(flow_value(&r, 0, "bytes_delivered"), n);
    // The receiver saw the segments after the drop arrive above the hole, then the
    // retransmission fill it: one segment with new data below the highest received, and
    // nothing twice.
    assert_eq!(flow_value(&r, 0, "reordered_segments"), 1.0);
    assert_eq!(flow_value(&r, 0, "duplicate_segments"), 0.0);
}

/// A segment delayed past the RTO, not lost: the retransmission is spurious and the receiver
/// gets the segment twice. One 960-byte transfer (one segment, NewReno, RTO per RFC 6298 with
/// its 1 s minimum); at 15 ms, after the SYN-ACK has left b, the link's one-way delay becomes
/// 1.2 s each way. By hand (ms): SYN RTT 20.08, so RTO = max(20.08 + 4·10.04, 1000) = 1000;
/// the segment, sent at 20.08, arrives at 20.08 + 1 + 1200 = 1221.08. The RTO fires at
/// 1020.08 and resends it (arriving at 2221.08, every byte already received: one duplicate);
/// the ACK of the original reaches a at 1221.08 + 1200.04 = 2421.12, before the backed-off
/// timer (1020.08 + 2000 = 3020.08), so nothing else is resent.
#[test]
fn a_segment_delayed_past_the_rto_arrives_twice() {
    let flow = json!({"kind": "tcp", "src": "a", "dst": "b", "bytes": "960B", "cc": "newreno",
                      "tcp": {"mss": 960, "delayed_ack": {"enabled": false}}});
    let mut sc = two_hosts("100p", flow, "5s");
    sc["links"][0]["schedule"] = json!([{"at": "15ms", "delay": "1200ms"}]);
    let r = run(&sc);
    let ev = events(&r);
    assert_eq!(ev.len(), 1, "one timeout: {ev:?}");
    assert!(near(ev[0].0, 1020.08 * MS) && ev[0].1 == event::TIMEOUT, "{ev:?}");
    assert!(near(flow_value(&r, 0, "completion_s"), 1221.08 * MS), "{}", flow_value(&r, 0, "completion_s"));
    assert_eq!(flow_value(&r, 0, "retransmitted_segments"), 1.0);
    assert_eq!(flow_value(&r, 0, "duplicate_segments"), 1.0, "the retransmission arrives after the original");
    assert_eq!(flow_value(&r, 0, "reordered_segments"), 0.0);
    assert_eq!(flow_value(&r, 0, "bytes_delivered"), 960.0);
}

/// A lossless transfer of N bytes: every byte arrives exactly once, and the response time
/// (from the application's open, handshake included) is at least the physical minimum
/// 1.5·RTT + N/C (SYN + SYN-ACK + the data's one-way trip, plus serialising N bytes at the
/// bottleneck rate C; headers make the true value larger).
#[test]
fn finite_transfer_completes_with_all_bytes() {
    let n = 500_000.0;
    let mut sc = dumbbell(1, "100Mbps", "1ms", "10Mbps", "18ms", json!({"kind": "droptail", "limit": "1000p"}));
    sc["duration"] = json!("10s");
    sc["flows"] =
        json!([{"kind": "tcp", "src": "s0", "dst": "d", "cc": "newreno", "bytes": format!("{n}B"), "start": "0.5s"}]);
    let r = run(&sc);
    assert_eq!(flow_value(&r, 0, "bytes_delivered"), n);
    let rtt = 2.0 * (1.0 + 18.0 + 1.0) * MS;
    let bound = 1.5 * rtt + n * 8.0 / 10e6;
    let resp = flow_value(&r, 0, "response_time_s");
    eprintln!("transfer of {n} B: response time {resp:.4} s, lower bound {bound:.4} s");
    assert!(resp >= bound, "response time {resp} below the physical bound {bound}");
    assert!(resp < 3.0 * bound, "response time {resp} implausibly long (bound {bound})");
    assert!(near(flow_value(&r, 0, "completion_s"), 0.5 + resp));
}
