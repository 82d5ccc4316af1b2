//! The TCP timestamp option (RFC 7323, `tcp.timestamps = true`) in whole runs: 12 more header
//! bytes on every segment, taken from the payload of a full segment as Linux does (so a
//! 1500-byte packet carries 1448 bytes instead of 1460); an RTT sample on every ACK of new data
//! equal, tick for tick, to what RFC 7323 section 4.3's echo rule gives when recomputed by hand
//! from the run's segment trace; and samples from ACKs of retransmitted data, which Karn's rule
//! discards without the option.

mod common;
use common::*;
use serde_json::json;

/// The timestamp clock's tick (microseconds), restated for the hand computation.
const TICK_S: f64 = 1e-6;
const MSS: u64 = 1460;
const TS_OPTION: u64 = 12;

fn path(loss: f64, bytes: u64, timestamps: bool, sack: bool) -> quench_core::RunResult {
    let mut sc = dumbbell(1, "1Gbps", "1ms", "10Mbps", "20ms", json!({"kind": "droptail", "limit": "100p"}));
    sc["links"][1]["loss"] = json!(loss);
    sc["duration"] = json!("20s");
    sc["flows"] = json!([{"kind": "tcp", "src": "s0", "dst": "d", "bytes": format!("{bytes}B"),
                          "cc": {"kind": "newreno", "initial_window": 10},
                          "tcp": {"timestamps": timestamps, "sack": sack}}]);
    sc["record"] = json!({"segments": true});
    run(&sc)
}

/// 100 full segments of 1448 bytes: with the option, 100 packets of 20 + 20 + 12 + 1448 = 1500
/// bytes and a 52-byte SYN cross the bottleneck; without it the same bytes take 99 packets of
/// 1500 and one of 300 (260 bytes of data) after a 40-byte SYN. Every ACK is 52 bytes instead
/// of 40.
#[test]
fn the_option_takes_twelve_bytes_from_every_full_segment() {
    let bytes = 100 * (MSS - TS_OPTION);
    let on = path(0.0, bytes, true, false);
    let off = path(0.0, bytes, false, false);
    let forward = |r: &quench_core::RunResult| {
        (link_value(r, "r1->r2", "departed_packets"), link_value(r, "r1->r2", "departed_bytes"))
    };
    assert_eq!(forward(&on), (101.0, (52 + 100 * 1500) as f64));
    assert_eq!(forward(&off), (101.0, (40 + 99 * 1500 + 300) as f64));
    let lens = u64s(&on, "segments", "len");
    let is_ack = u64s(&on, "segments", "is_ack");
    assert!((0..lens.len()).filter(|&i| is_ack[i] == 0 && lens[i] > 0).all(|i| lens[i] == MSS - TS_OPTION));
    let back = |r: &quench_core::RunResult| {
        link_value(r, "r2->r1", "departed_bytes") / link_value(r, "r2->r1", "departed_packets")
    };
    assert_eq!((back(&on), back(&off)), (52.0, 40.0), "SYN-ACK and ACKs");
    for r in [&on, &off] {
        assert_eq!(flow_value(r, 0, "bytes_delivered"), bytes as f64);
    }
}

/// Every ACK of new data carries a sample, and each equals RFC 7323 section 4.3's by hand: the
/// receiver echoes the TSval of the segment that starts at its last ACK (the first one a
/// delayed ACK covers, or the one that filled a hole), so the sample is the ACK's arrival less
/// that segment's latest send, on the microsecond clock. With 1 % loss some of these ACKs cover
/// retransmissions; without the option Karn's rule gives them no sample, and the timed segment
/// gives one per window.
#[test]
fn every_ack_of_new_data_carries_the_echoed_sample() {
    let r = path(0.01, 2_000_000, true, true);
    let (t, seq, is_ack) =
        (f64s(&r, "segments", "time_s"), u64s(&r, "segments", "seq"), u64s(&r, "segments", "is_ack"));
    let (len, rexmit) = (u64s(&r, "segments", "len"), u64s(&r, "segments", "retransmit"));
    let (rtt_t, rtt) = (f64s(&r, "rtt", "time_s"), f64s(&r, "rtt", "rtt_s"));
    let mut latest_send = std::collections::HashMap::<u64, (f64, bool)>::new();
    let (mut una, mut expected, mut from_retransmissions) = (1u64, vec![], 0);
    for i in 0..t.len() {
        if is_ack[i] == 0 && len[i] > 0 {
            latest_send.insert(seq[i], (t[i], rexmit[i] == 1));
        } else if is_ack[i] == 1 && seq[i] > una {
            let (sent, was_retransmitted) = latest_send[&una];
            from_retransmissions += was_retransmitted as usize;
            expected.push((t[i], t[i] - sent));
            una = seq[i];
        } else if is_ack[i] == 1 {
            // A duplicate ACK: the receiver's last ACK is unchanged.
        }
    }
    // The first recorded sample is the handshake's.
    assert_eq!(rtt.len() - 1, expected.len(), "one sample per ACK of new data");
    for (k, &(at, m)) in expected.iter().enumerate() {
        assert_eq!(rtt_t[k + 1], at);
        assert!((rtt[k + 1] - m).abs() < 2.0 * TICK_S, "ACK at {at}: sample {} vs {m} by hand", rtt[k + 1]);
    }
    assert!(from_retransmissions > 0, "some samples time retransmissions");
    let without = path(0.01, 2_000_000, false, true);
    eprintln!(
        "samples: {} with timestamps ({from_retransmissions} from retransmissions), {} without",
        expected.len(),
        f64s(&without, "rtt", "rtt_s").len() - 1
    );
    assert!(f64s(&without, "rtt", "rtt_s").len() * 3 < rtt.len(), "one timed segment per window");
}
