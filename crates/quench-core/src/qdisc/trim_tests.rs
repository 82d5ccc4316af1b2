//! Trimming-queue unit tests: a hand trace of arrivals and departures in the weighted round
//! robin's order, the size of a trimmed packet, tail trimming, non-NDP packets dropped as by
//! drop-tail, a full header queue, configuration errors. Tests only: they drive the discipline
//! by hand through the harness's `Bench`, never a link or a world.

use super::super::harness::{check_conservation, packet, Bench};
use super::super::QdiscSpec;
use super::*;
use crate::units::{BitRate, Time};

const LINK: BitRate = BitRate(10_000_000_000);

fn trim(json: &str) -> Trim {
    let cfg: TrimConfig = serde_json::from_str(json).unwrap();
    Trim::new(&cfg).unwrap()
}

/// An NDP data packet of 1500 bytes (1436 of payload).
fn data(uid: u32) -> Packet {
    Packet { proto: Proto::Ndp, flags: ndp::DATA, payload: 1436, ..packet(uid, 0, 1500) }
}

/// An NDP control packet (an ACK): headers only.
fn control(uid: u32) -> Packet {
    let size = ndp::HEADER_BYTES as u16;
    Packet { proto: Proto::Ndp, flags: ndp::ACK, payload: 0, ..packet(uid, 0, size) }
}

fn drain(q: &mut Trim, b: &mut Bench) -> Vec<(u32, u16)> {
    std::iter::from_fn(|| b.take(q, Time::ZERO)).map(|p| (p.uid, p.size)).collect()
}

/// Data limit 2, header weight 2, never the tail: data 0, 1 fill the data queue; data 2 and 3
/// are trimmed to 64-byte headers; ACKs 4, 5, 6 join the header queue. With both queues
/// waiting the round robin serves two headers then one data packet: 2, 3, data 0, 4, 5, data
/// 1, then the headers left (6).
#[test]
fn hand_trace_follows_the_weighted_round_robin() {
    let mut q = trim(r#"{"data_limit":"2p","header_weight":2,"tail_trim_probability":0}"#);
    let mut b = Bench::new(1);
    for uid in 0..4 {
        b.offer(&mut q, data(uid), Time::ZERO, LINK);
    }
    for uid in 4..7 {
        b.offer(&mut q, control(uid), Time::ZERO, LINK);
    }
    assert!(b.drops.is_empty());
    assert_eq!(q.backlog(), Backlog { packets: 7, bytes: 2 * 1500 + 5 * 64 });
    let order = drain(&mut q, &mut b);
    assert_eq!(order, vec![(2, 64), (3, 64), (0, 1500), (4, 64), (5, 64), (1, 1500), (6, 64)]);
    assert_eq!(q.stats(), TrimStats { trimmed_packets: 2, trimmed_bytes: 2 * 1436, dropped_packets: 0 });
    assert_eq!(b.marks, 2, "each trim counts as a mark");
}

/// A trimmed packet keeps its identity (flow, sequence) and says it was trimmed; its size is
/// the header's and its payload 0.
#[test]
fn trimmed_packet_is_its_header_with_the_trimmed_bit() {
    let mut q = trim(r#"{"data_limit":"1p","tail_trim_probability":0}"#);
    let mut b = Bench::new(1);
    b.offer(&mut q, data(0), Time::ZERO, LINK);
    b.offer(&mut q, Packet { seq: 77, ..data(1) }, Time::ZERO, LINK);
    let first = b.take(&mut q, Time::ZERO).unwrap();
    assert_eq!((first.uid, first.seq, first.size, first.payload), (1, 77, 64, 0));
    assert!(first.has_flag(ndp::TRIMMED) && first.has_flag(ndp::DATA));
    let second = b.take(&mut q, Time::ZERO).unwrap();
    assert_eq!((second.uid, second.size, second.flags & ndp::TRIMMED), (0, 1500, 0));
}

/// With probability 1 the packet queued last is trimmed and the arrival takes its place.
#[test]
fn tail_trimming_cuts_the_last_queued_packet() {
    let mut q = trim(r#"{"data_limit":"2p","tail_trim_probability":1}"#);
    let mut b = Bench::new(1);
    for uid in 0..3 {
        b.offer(&mut q, data(uid), Time::ZERO, LINK);
    }
    assert_eq!(drain(&mut q, &mut b), vec![(1, 64), (0, 1500), (2, 1500)]);
}

/// A UDP packet that finds the data queue full is dropped (overflow), as drop-tail would, and
/// nothing is trimmed; a UDP packet without payload is not a header and waits with data.
#[test]
fn other_protocols_are_dropped_when_the_data_queue_is_full() {
    let mut q = trim(r#"{"data_limit":"2p"}"#);
    let mut b = Bench::new(1);
    for uid in 0..3 {
        b.offer(&mut q, packet(uid, 0, 1000), Time::ZERO, LINK);
    }
    assert_eq!(b.drops.len(), 1);
    assert_eq!((b.drops[0].0.uid, b.drops[0].1), (2, DropReason::Overflow));
    assert_eq!(q.stats().trimmed_packets, 0);
    assert_eq!(b.marks, 0);
    assert_eq!(drain(&mut q, &mut b), vec![(0, 1000), (1, 1000)]);
}

/// A header that finds the header queue full is dropped: return-to-sender is not modelled.
#[test]
fn full_header_queue_drops_the_header() {
    let mut q = trim(r#"{"data_limit":"1p","header_limit":"2p","tail_trim_probability":0}"#);
    let mut b = Bench::new(1);
    for uid in 0..4 {
        b.offer(&mut q, data(uid), Time::ZERO, LINK);
    }
    assert_eq!(q.stats(), TrimStats { trimmed_packets: 3, trimmed_bytes: 3 * 1436, dropped_packets: 1 });
    assert_eq!(b.drops.len(), 1);
    assert_eq!((b.drops[0].0.uid, b.drops[0].0.size, b.drops[0].1), (3, 64, DropReason::Overflow));
}

/// The byte identity of a trimming queue: arrived = departed + dropped + backlog + trimmed.
#[test]
fn bytes_balance_with_the_trimmed_bytes() {
    let mut q = trim(r#"{"data_limit":"3p","header_limit":"5p","header_weight":3}"#);
    let mut b = Bench::new(7);
    let mut rng = crate::rng::Rng::from_seed(3);
    let (mut arrived, mut departed) = (0u64, 0u64);
    for uid in 0..5000u32 {
        if rng.uniform() < 0.6 {
            let p = if rng.uniform() < 0.7 { data(uid) } else { control(uid) };
            arrived += p.size as u64;
            b.offer(&mut q, p, Time::ZERO, LINK);
        } else if let Some(p) = b.take(&mut q, Time::ZERO) {
            departed += p.size as u64;
        }
    }
    let dropped: u64 = b.drops.iter().map(|(p, _)| p.size as u64).sum();
    assert!(q.stats().trimmed_packets > 0 && dropped > 0);
    assert_eq!(arrived, departed + dropped + q.backlog().bytes + q.stats().trimmed_bytes);
}

/// Traffic of other protocols (the harness's UDP) meets a drop-tail FIFO: packets and bytes
/// conserved, each flow in order, drops once the 8 packets are full.
#[test]
fn conserves_packets_and_bytes_of_other_protocols() {
    let mut q = trim("{}");
    let (departed, dropped) = check_conservation(&mut q, 20_000, 5);
    assert!(departed > 0 && dropped > 0);
    assert_eq!(q.stats().trimmed_packets, 0);
}

#[test]
fn bad_parameters_name_their_key() {
    let err = |json: &str| Trim::new(&serde_json::from_str(json).unwrap()).err().unwrap().path;
    assert_eq!(err(r#"{"data_limit":"0p"}"#), "data_limit");
    assert_eq!(err(r#"{"header_limit":"10B"}"#), "header_limit");
    assert_eq!(err(r#"{"header_weight":0}"#), "header_weight");
    assert_eq!(err(r#"{"tail_trim_probability":1.5}"#), "tail_trim_probability");
}

#[test]
fn spec_parses_with_its_defaults() {
    let s: QdiscSpec = serde_json::from_str(r#"{"kind":"trim"}"#).unwrap();
    assert_eq!(s.kind(), "trim");
    let QdiscSpec::Trim(cfg) = s else { panic!("not trim") };
    assert_eq!(cfg.data_limit.packets, Some(8));
    assert_eq!(cfg.header_limit.bytes, Some(Bytes(24_000)));
    assert_eq!(cfg.header_weight, 100_000);
}
