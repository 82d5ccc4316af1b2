//! DKS fair queueing against hand-computed traces: R(t), the finish tags and the departure
//! order worked out by hand in the comments, and the drop rule on a full buffer.
//! Tests only: they drive the discipline by hand through the harness's `Bench` (what a `QdiscCx`
//! borrows), never a link or a world.

use super::super::harness::{check_conservation, packet, Bench};
use super::super::QdiscSpec;
use super::*;
use crate::units::Dur;

/// 8000 bit/s: one byte per millisecond, so rounds and tags below read in bytes and times in ms.
const ONE_BYTE_PER_MS: BitRate = BitRate(8000);

fn at(ms: u64) -> Time {
    Time(0) + Dur::from_millis(ms)
}

fn fq(limit: Limit) -> Fq {
    Fq::new(&FqConfig { limit, advertise_rate: false }).unwrap()
}

fn uid_of(bench: &mut Bench, q: &mut Fq, ms: u64) -> u32 {
    bench.take(q, at(ms)).expect("a packet is queued").uid
}

/// Flows A, B, C, D (flow ids 0..3) on a 1 byte/ms link; R and tags in bytes.
///
/// | t ms | event            | N before | R(t)                          | S                | F    |
/// |------|------------------|----------|-------------------------------|------------------|------|
/// | 0    | A1 1000 B        | 0        | 0                             | 0                | 1000 |
/// | 0    | A1 starts (1 s)  |          |                               |                  |      |
/// | 0    | B1 500 B         | 1        | 0                             | 0                | 500  |
/// | 200  | C1 300 B         | 2        | 0 + 200/2 = 100               | 100              | 400  |
/// | 500  | B2 200 B         | 3        | 100 + 300/3 = 200             | max(500,200)=500 | 700  |
/// | 800  | A2 100 B         | 3        | 200 + 300/3 = 300             | 1000             | 1100 |
/// | 1000 | A1 ends: smallest F is C1 (400), sent 1000..1300                                  |
/// | 1200 | D1 100 B         | 3 then 2 | C leaves at R=400, reached at 800 + 100·3 = 1100;  |
/// |      |                  |          | then 400 + 100/2 = 450        | 450              | 550  |
/// | 1300 | B1 (500) sent 1300..1800; 1800 D1 (550); 1900 B2 (700); 2100 A2 (1100)            |
///
/// Fluid exits after 1200 (N = 3: A 1100, B 700, D 550): D at R=550, t = 1200 + 100·3 = 1500;
/// B at 700, t = 1500 + 150·2 = 1800; A at 1100, t = 1800 + 400·1 = 2200 — the same instant
/// the real link finishes its 2200 bytes. R then stays at 1100 while nothing is active.
/// FIFO would have sent A1 B1 C1 B2 A2 D1.
#[test]
fn finish_tags_and_departure_order_match_the_hand_trace() {
    let mut q = fq(default_limit());
    let mut b = Bench::new(1);
    let c = ONE_BYTE_PER_MS;
    b.offer(&mut q, packet(1, 0, 1000), at(0), c);
    assert_eq!(uid_of(&mut b, &mut q, 0), 1);
    b.offer(&mut q, packet(2, 1, 500), at(0), c);
    assert_eq!((q.round_bytes(), q.tags_bytes(1)), (0.0, vec![500.0]));
    b.offer(&mut q, packet(3, 2, 300), at(200), c);
    assert_eq!((q.round_bytes(), q.tags_bytes(2)), (100.0, vec![400.0]));
    b.offer(&mut q, packet(4, 1, 200), at(500), c);
    assert_eq!((q.round_bytes(), q.tags_bytes(1)), (200.0, vec![500.0, 700.0]));
    b.offer(&mut q, packet(5, 0, 100), at(800), c);
    assert_eq!((q.round_bytes(), q.tags_bytes(0)), (300.0, vec![1100.0]));
    assert_eq!(uid_of(&mut b, &mut q, 1000), 3);
    b.offer(&mut q, packet(6, 3, 100), at(1200), c);
    assert_eq!((q.round_bytes(), q.tags_bytes(3)), (450.0, vec![550.0]));
    let order: Vec<u32> = [1300, 1800, 1900, 2100].iter().map(|&t| uid_of(&mut b, &mut q, t)).collect();
    assert_eq!(order, vec![2, 6, 4, 5]);
    assert!(b.take(&mut q, at(2200)).is_none());
    // Idle since 2200: R stopped at A's last tag; a new flow starts there.
    b.offer(&mut q, packet(7, 4, 100), at(3000), c);
    assert_eq!((q.round_bytes(), q.tags_bytes(4)), (1100.0, vec![1200.0]));
    assert!(b.drops.is_empty());
}

/// Limit 3 packets, all at t = 0 (R = 0), so tags are cumulative bytes per flow.
/// A1 500, A2 500, B1 100 fill the buffer. C1 100 → A holds most (1000 B): drop A2, A's
/// F_last reverts to 500. A3 500 → A would hold 1000 B, the most: the arrival goes.
/// B2 600 → B would hold 700 > A's 500: the arrival goes. B3 100 → B 200, A 500: drop A1,
/// A's queue empties and its F_last reverts to 0 (nothing sent). Left: B1 (F 100, arrival 3),
/// C1 (F 100, arrival 4), B3 (F 200): ties leave in arrival order.
#[test]
fn full_buffer_drops_the_last_packet_of_the_heaviest_flow() {
    let mut q = fq(Limit { packets: Some(3), bytes: None });
    let mut b = Bench::new(1);
    let c = ONE_BYTE_PER_MS;
    for (uid, flow, size) in [(1, 0, 500), (2, 0, 500), (3, 1, 100), (4, 2, 100), (5, 0, 500), (6, 1, 600), (7, 1, 100)]
    {
        b.offer(&mut q, packet(uid, flow, size), at(0), c);
    }
    let dropped: Vec<(u32, DropReason)> = b.drops.iter().map(|d| (d.0.uid, d.1)).collect();
    let overflow = DropReason::Overflow;
    assert_eq!(dropped, vec![(2, overflow), (5, overflow), (6, overflow), (1, overflow)]);
    assert_eq!((q.tags_bytes(0), q.tags_bytes(1), q.tags_bytes(2)), (vec![], vec![100.0, 200.0], vec![100.0]));
    assert_eq!(q.backlog(), Backlog { packets: 3, bytes: 300 });
    let order: Vec<u32> = (0..3).map(|_| uid_of(&mut b, &mut q, 0)).collect();
    assert_eq!(order, vec![3, 4, 7]);
    // A starts afresh: its next packet's tag counts from R = 0, not from the dropped ones.
    b.offer(&mut q, packet(8, 0, 200), at(0), c);
    assert_eq!(q.tags_bytes(0), vec![200.0]);
}

#[test]
fn byte_limit_can_push_out_several_packets() {
    // 1000 B buffer, A holds 4 × 200 B. B's 600 B arrival makes 1400 B: A is the heaviest
    // (800 > 600), so A's last goes (1200 B); now A and B tie at 600 and ties go to the
    // arrival's flow, so B's arrival goes too (600 B left). One drop per pass until it fits.
    let mut q = fq(Limit { packets: None, bytes: Some(crate::units::Bytes(1000)) });
    let mut b = Bench::new(1);
    for uid in 0..4 {
        b.offer(&mut q, packet(uid, 0, 200), at(0), ONE_BYTE_PER_MS);
    }
    b.offer(&mut q, packet(9, 1, 600), at(0), ONE_BYTE_PER_MS);
    let dropped: Vec<u32> = b.drops.iter().map(|d| d.0.uid).collect();
    assert_eq!(dropped, vec![3, 9]);
    assert_eq!(q.backlog(), Backlog { packets: 3, bytes: 600 });
}

#[test]
fn conserves_packets_and_bytes_and_keeps_each_flow_in_order() {
    let mut q = fq(Limit { packets: Some(8), bytes: None });
    let (departed, dropped) = check_conservation(&mut q, 20_000, 5);
    assert!(departed > 0 && dropped > 0);
    let mut q = fq(Limit { packets: None, bytes: Some(crate::units::Bytes(6000)) });
    let (departed, dropped) = check_conservation(&mut q, 20_000, 6);
    assert!(departed > 0 && dropped > 0);
}

#[test]
fn bad_config_names_the_key() {
    let e = Fq::new(&FqConfig { limit: Limit { packets: Some(0), bytes: None }, advertise_rate: false }).err().unwrap();
    assert_eq!(e.path, "limit");
    let e = serde_json::from_str::<QdiscSpec>(r#"{"kind":"fq","limt":"5p"}"#).unwrap_err().to_string();
    assert!(e.contains("unknown field `limt`"), "{e}");
}
