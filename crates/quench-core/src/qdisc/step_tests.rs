//! Step-marking unit tests: marks exactly the arrivals that find more than `K` (packets or bytes),
//! no early drop of non-ECT packets, `K = 0`, the empty queue, conservation and configuration
//! errors. Tests only: they drive the discipline by hand through the harness's `Bench` (what a
//! `QdiscCx` borrows), never a link or a world.

use super::super::harness::{check_conservation, packet, Bench};
use super::super::QdiscSpec;
use super::*;
use crate::units::{BitRate, Time};

const LINK: BitRate = BitRate(10_000_000);

fn step(json: &str) -> Result<Step, ConfigError> {
    let cfg: StepConfig = serde_json::from_str(json).unwrap();
    Step::new(&cfg)
}

fn ect(uid: u32, size: u16) -> Packet {
    Packet { ecn: ecn::ECT0, ..packet(uid, 0, size) }
}

/// Offer `pkt`; returns (marked, dropped) for that arrival.
fn offer(q: &mut Step, b: &mut Bench, pkt: Packet) -> (bool, bool) {
    let (marks, drops) = (b.marks, b.drops.len());
    b.offer(q, pkt, Time::ZERO, LINK);
    (b.marks > marks, b.drops.len() > drops)
}

/// K = 2 packets, limit 5: seven ECT arrivals with no departure find 0, 1, 2, 3, 4, 5, 5
/// queued. Those that find more than 2 (the 4th and 5th) are marked; the 6th and 7th do not
/// fit. Then one departure, and the next arrival finds 4: marked.
#[test]
fn marks_exactly_the_arrivals_that_find_more_than_k() {
    let mut q = step(r#"{"threshold":"2p","limit":"5p"}"#).unwrap();
    let mut b = Bench::new(1);
    let verdicts: Vec<(bool, bool)> = (0..7).map(|uid| offer(&mut q, &mut b, ect(uid, 1000))).collect();
    let expect =
        [(false, false), (false, false), (false, false), (true, false), (true, false), (false, true), (false, true)];
    assert_eq!(verdicts, expect);
    let head = b.take(&mut q, Time::ZERO).unwrap();
    assert_eq!((head.uid, head.ecn), (0, ecn::ECT0));
    assert_eq!(offer(&mut q, &mut b, ect(7, 1000)), (true, false));
    let codepoints: Vec<(u32, u8)> =
        std::iter::from_fn(|| b.take(&mut q, Time::ZERO)).map(|p| (p.uid, p.ecn)).collect();
    let (e, c) = (ecn::ECT0, ecn::CE);
    assert_eq!(codepoints, vec![(1, e), (2, e), (3, c), (4, c), (7, c)]);
    assert_eq!(q.stats(), StepStats { marked: 3, unmarkable: 0 });
    assert_eq!(
        b.drops.iter().map(|d| (d.0.uid, d.1)).collect::<Vec<_>>(),
        vec![(5, DropReason::Overflow), (6, DropReason::Overflow)]
    );
}

/// A threshold in bytes compares the bytes queued: K = 2500 B, 1000-byte arrivals find 0,
/// 1000, 2000, 3000 B; only the 4th is above K. A 500-byte packet then finds 4000 B: marked.
#[test]
fn byte_threshold_counts_bytes() {
    let mut q = step(r#"{"threshold":"2500B","limit":"100p,10KB"}"#).unwrap();
    let mut b = Bench::new(1);
    let marked: Vec<bool> =
        (0..5).map(|uid| offer(&mut q, &mut b, ect(uid, if uid == 4 { 500 } else { 1000 })).0).collect();
    assert_eq!(marked, vec![false, false, false, true, true]);
}

/// Not-ECT arrivals above K are let in unmarked and never dropped early; only the limit drops.
#[test]
fn non_ect_is_not_dropped_early() {
    let mut q = step(r#"{"threshold":"1p","limit":"4p"}"#).unwrap();
    let mut b = Bench::new(1);
    let verdicts: Vec<(bool, bool)> = (0..5).map(|uid| offer(&mut q, &mut b, packet(uid, 0, 1000))).collect();
    assert_eq!(verdicts, vec![(false, false), (false, false), (false, false), (false, false), (false, true)]);
    assert_eq!(q.stats(), StepStats { marked: 0, unmarkable: 2 });
    assert!(std::iter::from_fn(|| b.take(&mut q, Time::ZERO)).all(|p| p.ecn == ecn::NOT_ECT));
}

#[test]
fn k_zero_marks_every_arrival_that_finds_a_packet() {
    let mut q = step(r#"{"threshold":"0p","limit":"10p"}"#).unwrap();
    let mut b = Bench::new(1);
    let marked: Vec<bool> = (0..3).map(|uid| offer(&mut q, &mut b, ect(uid, 100)).0).collect();
    assert_eq!(marked, vec![false, true, true]);
}

#[test]
fn an_empty_queue_passes_through() {
    let q = step(r#"{"threshold":"0p","limit":"1p"}"#).unwrap();
    assert!(q.passes_through(&ect(0, 1500)) && q.dequeue_is_inert());
}

#[test]
fn validation_names_each_key() {
    let e = step(r#"{"threshold":"11p","limit":"10p"}"#).err().unwrap();
    assert_eq!(e.path, "threshold");
    assert!(e.message.contains("above limit (10 packets)"), "{}", e.message);
    let e = step(r#"{"threshold":"30KB","limit":"100p"}"#).err().unwrap();
    assert_eq!(e.path, "threshold");
    assert!(e.message.contains("no bytes bound"), "{}", e.message);
    assert!(step(r#"{"threshold":"30KB","limit":"100p,30KB"}"#).is_ok(), "K equal to the limit");
    assert_eq!(step(r#"{"threshold":"0p","limit":"0p"}"#).err().unwrap().path, "limit");
    assert!(step(r#"{"threshold":"20p"}"#).is_ok(), "the default limit is 1000 packets");
    let e = serde_json::from_str::<QdiscSpec>(r#"{"kind":"step","threshold":"5ms"}"#).unwrap_err().to_string();
    assert!(e.contains("not a threshold"), "{e}");
    let default = step(r#"{}"#).unwrap();
    assert_eq!(default.params.threshold, StepThreshold::Packets(DEFAULT_THRESHOLD_PACKETS));
}

#[test]
fn conserves_packets_and_bytes() {
    let mut q = step(r#"{"threshold":"3p","limit":"8p"}"#).unwrap();
    let (departed, dropped) = check_conservation(&mut q, 20_000, 5);
    assert!(departed > 0 && dropped > 0);
}
