//! A TCP sender whose own host's transmit queue overflows (`tcp.local_drop`): by default the
//! refused segment is a loss found like any other; with `"linux_cwr"` it stays unsent and the
//! window enters CWR, as Linux 2.4-2.6 answer NET_XMIT_DROP (`sender/local_drop.rs`).

mod common;
use common::*;
use serde_json::json;

const MSS: u64 = 1460;
const LOCAL_CWR: u64 = 6; // "local_cwr" in quench_core::names::TCP_EVENTS

/// One NewReno+SACK flow of `segments` full segments from s0, whose NIC (`nic_rate`) has a
/// drop-tail transmit queue of `txqueue` packets, over a fast, deep path.
fn host_limited(reaction: &str, nic_rate: &str, txqueue: u32, segments: u64) -> quench_core::RunResult {
    let mut sc = dumbbell(1, nic_rate, "1ms", "1Gbps", "10ms", json!({"kind": "droptail", "limit": "1000p"}));
    sc["links"][0]["qdisc"] = json!({"kind": "droptail", "limit": format!("{txqueue}p")});
    sc["duration"] = json!("30s");
    sc["record"] = json!({"queues": false, "cwnd": true, "segments": true});
    sc["flows"] = json!([{"kind": "tcp", "src": "s0", "dst": "d", "cc": "newreno", "bytes": segments * MSS,
        "tcp": {"mss": MSS, "sack": true, "local_drop": reaction}}]);
    run(&sc)
}

#[test]
fn a_refused_segment_is_a_loss_by_default_and_taken_back_with_linux_cwr() {
    let segments = 700; // 1 MB: slow start overruns a 10-packet queue at the NIC
    let lost = host_limited("loss", "10Mbps", 10, segments);
    assert!(link_value(&lost, "s0->r1", "dropped_packets") > 0.0);
    assert!(flow_value(&lost, 0, "retransmitted_segments") > 0.0, "by default a host drop must be recovered");

    let kept = host_limited("linux_cwr", "10Mbps", 10, segments);
    let host_drops = link_value(&kept, "s0->r1", "dropped_packets");
    assert!(host_drops > 0.0, "the NIC queue must still refuse segments");
    for col in ["retransmitted_segments", "timeouts", "fast_retransmits"] {
        assert_eq!(flow_value(&kept, 0, col), 0.0, "{col}: nothing was lost to TCP");
    }
    assert_eq!(flow_value(&kept, 0, "bytes_delivered"), (segments * MSS) as f64);
    // Every byte left the host once: what TCP counts as sent is what the NIC carried.
    assert_eq!(flow_value(&kept, 0, "bytes_sent"), (segments * MSS) as f64);
    let nic_carried = link_value(&kept, "s0->r1", "arrived_packets") - host_drops;
    assert_eq!(nic_carried, flow_value(&kept, 0, "packets_sent") + 1.0, "data segments and the SYN");
    // At most one CWR per window, so no more entries than refusals.
    let cwr = u64s(&kept, "tcp_events", "event").iter().filter(|&&e| e == LOCAL_CWR).count() as f64;
    assert!(cwr >= 1.0 && cwr <= host_drops, "{cwr} CWR entries for {host_drops} refusals");
}

#[test]
fn the_first_refusal_sets_the_window_as_linux_does_by_hand() {
    // Initial window 3 segments (RFC 5681 for a 1460-byte MSS) into a 1 Mb/s NIC whose queue
    // holds one packet: the first goes on the wire, the second waits, the third is refused.
    // The refused segment never left, so two are in flight: ssthresh = NewReno's half flight
    // floored at two segments = 2920; cwnd = min(3 segments, flight + 1 segment) = 4380
    // (tcp_enter_cwr).
    // The delayed ACK of both segments acknowledges CWR's window: cwnd = min(cwnd, ssthresh) =
    // 2920 (tcp_complete_cwr), and the refused segment (sequence 1 + 2·1460) goes out again.
    let r = host_limited("linux_cwr", "1Mbps", 1, 20);
    let events = u64s(&r, "tcp_events", "event");
    let event_times = f64s(&r, "tcp_events", "time_s");
    let first_cwr = event_times[events.iter().position(|&e| e == LOCAL_CWR).expect("a local CWR")];
    let (t, cwnd, ssthresh) = (f64s(&r, "cwnd", "time_s"), u64s(&r, "cwnd", "cwnd"), u64s(&r, "cwnd", "ssthresh"));
    let at_cwr = t.iter().rposition(|&x| x == first_cwr).expect("a window row at the CWR");
    assert_eq!((cwnd[at_cwr], ssthresh[at_cwr]), (4380, 2920));
    assert_eq!(cwnd[at_cwr + 1], 2920, "the next window is CWR's end");

    let (st, seq, len, ack) = (
        f64s(&r, "segments", "time_s"),
        u64s(&r, "segments", "seq"),
        u64s(&r, "segments", "len"),
        u64s(&r, "segments", "is_ack"),
    );
    let refused = 1 + 2 * MSS;
    let tries: Vec<f64> =
        (0..st.len()).filter(|&i| ack[i] == 0 && len[i] > 0 && seq[i] == refused).map(|i| st[i]).collect();
    assert_eq!(tries.len(), 2, "offered once and refused, then sent: {tries:?}");
    assert_eq!(tries[0], first_cwr);
    assert!(tries[1] >= t[at_cwr + 1], "sent again only when CWR's window was acknowledged");
    assert_eq!(flow_value(&r, 0, "retransmitted_segments"), 0.0);
    assert_eq!(flow_value(&r, 0, "bytes_delivered"), (20 * MSS) as f64);
}

#[test]
fn a_flow_refused_everything_is_retried_without_a_timeout() {
    // Two flows of one host share its one-packet queue: a flow whose whole burst finds the
    // queue full of the other's packets has nothing in flight, so no ACK will ask again; it
    // retries one RTO later (Linux's probe timer), which is no timeout and no loss.
    let mut sc = dumbbell(1, "1Mbps", "1ms", "1Gbps", "10ms", json!({"kind": "droptail", "limit": "1000p"}));
    sc["links"][0]["qdisc"] = json!({"kind": "droptail", "limit": "1p"});
    sc["duration"] = json!("60s");
    let flow = |start: &str| {
        json!({"kind": "tcp", "src": "s0", "dst": "d", "cc": "newreno", "bytes": 100 * MSS,
        "start": start, "tcp": {"mss": MSS, "sack": true, "local_drop": "linux_cwr"}})
    };
    sc["flows"] = json!([flow("0s"), flow("5ms")]);
    let r = run(&sc);
    assert!(link_value(&r, "s0->r1", "dropped_packets") > 0.0);
    for f in 0..2 {
        assert_eq!(flow_value(&r, f, "bytes_delivered"), (100 * MSS) as f64, "flow {f}");
        assert_eq!(flow_value(&r, f, "timeouts"), 0.0, "flow {f}");
        assert_eq!(flow_value(&r, f, "retransmitted_segments"), 0.0, "flow {f}");
    }
}
