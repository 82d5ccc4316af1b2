//! HPCC against its paper's claims (Li et al., SIGCOMM 2019, sections 3 and 5;
//! docs/mechanisms.md#hpcc): with in-band telemetry from every switch, HPCC holds the
//! bottleneck near its target utilization η with a queue near zero, under an incast as with two
//! flows, where a loss-based controller fills the buffer; and its flows share fairly.

mod common;
use common::*;
use serde_json::{json, Value};

const LINE_RATE_BPS: f64 = 10e9;
/// Wire bytes of a full segment (MSS 1460 + 40 header bytes).
const PACKET_BYTES: f64 = 1500.0;
/// The measurement window, seconds: after the start-up at line rate has settled.
const FROM_S: f64 = 0.01;
const TO_S: f64 = 0.05;

/// `n` senders into one receiver through a 10 Gb/s dumbbell with 1 µs links (base RTT about
/// 10 µs) and a 2000-packet drop-tail buffer (2.4 ms at line rate), as Swift's incast test.
/// SACK and RACK: a loss-based flow whose retransmission is lost in start-up's overflow finds
/// it again, rather than idling through the rfc profile's 1 s minimum RTO (which, within the
/// measurement window, would leave the buffer empty whatever the controller).
fn incast(n: usize, cc: Value) -> quench_core::RunResult {
    let qdisc = json!({"kind": "droptail", "limit": "2000p"});
    let mut sc = dumbbell(n, "10Gbps", "1us", "10Gbps", "1us", qdisc);
    sc["duration"] = json!("50ms");
    sc["record"] = json!({"queues": true, "cwnd": false, "rtt": false, "drops": true, "links": ["r1->r2"]});
    let tcp = json!({"send_buffer": "4MB", "receive_window": "4MB", "sack": true, "loss_detection": "rack", "delayed_ack": {"enabled": false}});
    sc["flows"] = (0..n)
        .map(|i| json!({"kind": "tcp", "src": format!("s{i}"), "dst": "d", "cc": cc.clone(), "tcp": tcp}))
        .collect::<Vec<_>>()
        .into();
    run(&sc)
}

/// Mean queue at the bottleneck over the window, in packets; the link's utilization over the
/// run; each flow's goodput.
fn figures(r: &quench_core::RunResult, n: usize) -> (f64, f64, Vec<f64>) {
    let q = mean_queue(r, FROM_S, TO_S);
    let utilization = link_value(r, "r1->r2", "utilization");
    (q, utilization, (0..n).map(|i| flow_value(r, i, "goodput_bps")).collect())
}

/// 2-to-1 and 16-to-1: HPCC's queue stays within a few packets (CUBIC's fills the 2000-packet
/// buffer), nothing is dropped, the flows share alike, and the link runs near η (16 flows hold
/// windows under one segment, paced, and a queue of one or two packets stands in for part of
/// the utilization in HPCC's estimate).
#[test]
fn hpcc_holds_the_queue_near_zero_at_eta_where_cubic_fills_the_buffer() {
    for (n, least_utilization, most_queue) in [(2, 0.93, 1.0), (16, 0.85, 5.0)] {
        let r = incast(n, json!("hpcc"));
        let (queue, utilization, goodputs) = figures(&r, n);
        let drops = link_value(&r, "r1->r2", "dropped_packets");
        eprintln!(
            "HPCC {n}-to-1: mean queue {queue:.2} packets ({:.2} µs), utilization {utilization:.3}, drops {drops}, Jain {:.4}",
            queue * PACKET_BYTES * 8.0 / LINE_RATE_BPS * 1e6,
            jain(&goodputs)
        );
        assert_eq!(drops, 0.0);
        assert!(queue < most_queue, "{n} flows: queue {queue} packets");
        assert!(utilization > least_utilization && utilization < 1.0, "{n} flows: utilization {utilization}");
        assert!(jain(&goodputs) > 0.99, "{goodputs:?}");
        let r = incast(n, json!("cubic"));
        let (cubic_queue, _, _) = figures(&r, n);
        eprintln!("CUBIC {n}-to-1: mean queue {cubic_queue:.2} packets");
        assert!(cubic_queue > 100.0 * queue.max(1.0), "CUBIC's queue {cubic_queue}");
    }
}

/// The utilization HPCC settles at follows η: two flows with η = 0.8 and 0.95 run the link
/// within 0.02 of it (the additive step, 50 Mb/s per round, adds 0.5 % on this path).
#[test]
fn utilization_follows_eta() {
    for eta in [0.8, 0.95] {
        let r = incast(2, json!({"kind": "hpcc", "eta": eta}));
        let (queue, utilization, _) = figures(&r, 2);
        eprintln!("HPCC eta {eta}: utilization {utilization:.4}, queue {queue:.3} packets");
        assert!((utilization - eta).abs() < 0.02, "eta {eta}: utilization {utilization}");
    }
}

/// The records of a libpcap capture (nanosecond format): (captured bytes, original length).
fn pcap_records(file: &[u8]) -> Vec<(&[u8], usize)> {
    const GLOBAL_HEADER: usize = 24;
    const RECORD_HEADER: usize = 16;
    let word = |at: usize| u32::from_le_bytes(file[at..at + 4].try_into().unwrap()) as usize;
    let (mut at, mut out) = (GLOBAL_HEADER, Vec::new());
    while at < file.len() {
        let (captured, original) = (word(at + 8), word(at + 12));
        out.push((&file[at + RECORD_HEADER..at + RECORD_HEADER + captured], original));
        at += RECORD_HEADER + captured;
    }
    out
}

/// The telemetry header is on the wire, as HPCC's implementation carries it (int-header.h:
/// a 16-bit hop count and five 64-bit hops, 42 bytes): every packet of an HPCC flow counts it
/// in its size (a full segment makes room for it within the MSS, as for the TCP options: 1500
/// bytes on the wire, 1418 of payload), and a capture shows it after the TCP header with the
/// hops written so far. One
/// flow s0 -> d: leaving r1 its data holds r1's hop, leaving r2 both; its ACKs bring the two
/// back. Each captured hop is the `telemetry` table's row for that link and packet, packed
/// here by hand into HPCC's word (rate code 5 for 10 Gb/s; the time in ns, the transmitted
/// bytes in 128-byte units and the queue in 80-byte units, in fields of 24, 20 and 17 bits).
#[test]
fn the_telemetry_header_is_on_the_wire_and_in_the_capture() {
    const SHIM: usize = 42;
    let mut sc = dumbbell(1, "10Gbps", "1us", "10Gbps", "1us", json!({"kind": "droptail", "limit": "100p"}));
    sc["duration"] = json!("2ms");
    sc["flows"] = json!([{"kind": "tcp", "src": "s0", "dst": "d", "cc": "hpcc", "bytes": "200KB"}]);
    sc["record"] = json!({"telemetry": true, "pcap": ["r1->r2", "r2->d", "r2->r1"]});
    let r = run(&sc);
    let (links, uids, hops) =
        (u64s(&r, "telemetry", "link"), u64s(&r, "telemetry", "uid"), u64s(&r, "telemetry", "hop"));
    let (times, queues, sent) =
        (f64s(&r, "telemetry", "time_s"), u64s(&r, "telemetry", "queue_bytes"), u64s(&r, "telemetry", "tx_bytes"));
    let word_of = |row: usize| {
        let t_ns = (times[row] * 1e9).round() as u64;
        5u64 << 61
            | (t_ns % (1 << 24)) << 37
            | (sent[row] / 128 % (1 << 20)) << 17
            | (queues[row] / 80).min((1 << 17) - 1)
    };
    // By data packet (its IP identification): the words of its hops, in path order.
    let mut records: std::collections::HashMap<u64, Vec<u64>> = Default::default();
    for row in 0..uids.len() {
        let words = records.entry(uids[row] % (1 << 16)).or_default();
        assert_eq!(words.len() as u64, hops[row], "hops are written in path order");
        assert_eq!(links[row], link_row(&r, if hops[row] == 0 { "r1->r2" } else { "r2->d" }) as u64);
        words.push(word_of(row));
    }
    let capture = |name: &str| r.pcaps.iter().find(|(n, _)| n == name).map(|(_, b)| pcap_records(b)).unwrap();
    for (name, expected_hops) in [("r1->r2", 1usize), ("r2->d", 2), ("r2->r1", 2)] {
        let frames = capture(name);
        assert!(frames.len() > 50, "{name}: {} frames", frames.len());
        let mut full = 0;
        for (bytes, original) in &frames {
            assert_eq!(u16::from_be_bytes([bytes[2], bytes[3]]) as usize, *original, "IP total length");
            let tcp_header = 4 * (bytes[20 + 12] >> 4) as usize;
            let shim = &bytes[20 + tcp_header..];
            assert_eq!(shim.len(), SHIM, "{name}: the whole header is captured");
            let nhop = u16::from_be_bytes([shim[0], shim[1]]) as usize;
            if nhop == 0 {
                continue; // the handshake, and an ACK with no data since the last
            }
            assert_eq!(nhop, expected_hops, "{name}");
            full += 1;
            let words: Vec<u64> =
                shim[2..2 + 8 * nhop].chunks(8).map(|w| u64::from_be_bytes(w.try_into().unwrap())).collect();
            if name == "r2->r1" {
                // An ACK echoes the record of a data packet that reached d.
                assert!(records.values().any(|r| *r == words), "an echo of no data packet: {words:x?}");
            } else {
                let uid = u16::from_be_bytes([bytes[4], bytes[5]]) as u64;
                assert_eq!(words, records[&uid][..nhop], "{name}, packet {uid}");
            }
            assert!(shim[2 + 8 * nhop..].iter().all(|&b| b == 0), "empty slots are zero");
        }
        assert!(full > 50, "{name}: {full} frames with hops");
    }
    let data: Vec<usize> = capture("r1->r2").iter().map(|(_, original)| *original).collect();
    let full = data.iter().filter(|&&n| n == 1500).count();
    assert!(full >= 200_000 / 1418 && data.iter().all(|&n| n <= 1500), "{full} full segments");
    let mut bare = sc.clone();
    bare["flows"][0]["cc"] = json!({"kind": "hpcc", "int_on_wire": false});
    let without = run(&bare);
    let acks = link_value(&without, "r2->r1", "departed_bytes") / link_value(&without, "r2->r1", "departed_packets");
    let with = link_value(&r, "r2->r1", "departed_bytes") / link_value(&r, "r2->r1", "departed_packets");
    assert!((with - acks - SHIM as f64).abs() < 1e-9, "ACKs {with} bytes with the header, {acks} without");
}
