//! CoDel unit tests: the control law (square root and Newton's iteration) against hand values, the
//! drop schedule against hand traces, the count's restart, ECN marking and the CE threshold,
//! overflow counting, conservation and configuration errors. Tests only: they drive the discipline
//! by hand through the harness's `Bench` (what a `QdiscCx` borrows), never a link or a world.

use super::super::harness::{check_conservation, packet, Bench};
use super::super::QdiscSpec;
use super::*;
use crate::units::BitRate;

const LINK: BitRate = BitRate(10_000_000);
const MS: u64 = 1_000_000;

fn codel(ecn: bool) -> Codel {
    Codel::new(&CodelConfig { ecn, ..CodelConfig::default() }).unwrap()
}

/// Queue `n` packets of 1000 B at `t`.
fn fill(q: &mut Codel, b: &mut Bench, t: Time, n: u32, ect: bool) {
    for uid in 0..n {
        let mut p = packet(uid, 0, 1000);
        if ect {
            p.ecn = ecn::ECT0;
        }
        b.offer(q, p, t, LINK);
    }
}

/// Dequeue at `ns`, which must send a packet; the packets dropped on the way.
fn at(q: &mut Codel, b: &mut Bench, ns: u64) -> usize {
    let before = b.drops.len();
    assert!(b.take(q, Time(ns)).is_some(), "a packet at {ns} ns");
    b.drops.len() - before
}

/// interval/√count for interval 100 ms, by hand: 100 ms/√2 = 70.7106781 ms → 70 710 678 ns;
/// 100 ms/√3 = 57.7350269 ms → 57 735 027 ns; 100 ms/√4 = 50 ms; 100 ms/√100 = 10 ms.
#[test]
fn control_law_matches_hand_values() {
    let i = DEFAULT_INTERVAL;
    let t = Time(1_000);
    assert_eq!(control_law(t, i, 1), Time(1_000 + 100_000_000));
    assert_eq!(control_law(t, i, 2), Time(1_000 + 70_710_678));
    assert_eq!(control_law(t, i, 3), Time(1_000 + 57_735_027));
    assert_eq!(control_law(t, i, 4), Time(1_000 + 50_000_000));
    assert_eq!(control_law(t, i, 100), Time(1_000 + 10_000_000));
}

/// The Newton-step law, by hand from the real recurrence y ← y·(3 − count·y²)/2 started at
/// y = 1 − 2⁻¹⁶ (16 bits of all ones), 100 ms scaled by y and truncated to a nanosecond:
/// count 1: 99 998 474 ns; 2: y = 0.500015259 → 50 001 525; 3: y = 0.5625 → 56 250 000;
/// 4: y = 0.48779296875 → 48 779 296. The integer steps equal the recurrence to 2⁻¹⁶. Held
/// at count 100 from 1/√99, the step settles at 9 999 084 ns, within 0.01 % of 10 ms.
#[test]
fn newton_law_matches_hand_values() {
    let i = DEFAULT_INTERVAL;
    let law = |r: u16| control_law_newton(Time::ZERO, i, r).0;
    let mut r = REC_INV_SQRT_ONE;
    let mut y = 65535.0 / 65536.0;
    let mut steps = vec![law(r)];
    for count in 2..=8u32 {
        r = newton_step(r, count);
        y = y * (3.0 - count as f64 * y * y) / 2.0;
        assert!((r as f64 / 65536.0 - y).abs() < 1.0 / 65536.0, "count {count}: {r} against {y}");
        steps.push(law(r));
    }
    assert_eq!(steps[..4], [99_998_474, 50_001_525, 56_250_000, 48_779_296]);
    let mut r = (65536.0 / 99f64.sqrt()) as u16;
    for _ in 0..3 {
        r = newton_step(r, 100);
    }
    assert_eq!(law(r), 9_999_084);
}

/// The hand trace below with `control_law = "newton"`: entering at 110 ms, count 1, the next
/// drop 99 998 474 ns later (209.998474 ms); then count 2 (y = 0.500015), 50 001 525 ns later
/// (259.999999 ms); then count 3 (y = 0.5625), drop_next 316.249999 ms. Resumed at 1.110 s
/// with count 2, y is refined from 0.5625: 0.5625·(3 − 2·0.5625²)/2 = 0.665771484375, so
/// drop_next = 1.110 s + 66 577 148 ns (the exact law: 70 710 678).
#[test]
fn newton_drop_schedule_follows_the_hand_trace() {
    let cfg = CodelConfig { control_law: ControlLaw::Newton, ..CodelConfig::default() };
    let mut q = Codel::new(&cfg).unwrap();
    let mut b = Bench::new(1);
    fill(&mut q, &mut b, Time::ZERO, 200, false);
    assert_eq!(at(&mut q, &mut b, 10 * MS), 0);
    assert_eq!(at(&mut q, &mut b, 110 * MS), 1);
    assert_eq!((q.vars().count, q.vars().drop_next), (1, Time(209_998_474)));
    assert_eq!(at(&mut q, &mut b, 209_998_473), 0);
    assert_eq!(at(&mut q, &mut b, 209_998_474), 1);
    assert_eq!((q.vars().count, q.vars().drop_next), (2, Time(259_999_999)));
    assert_eq!(at(&mut q, &mut b, 259_999_999), 1);
    assert_eq!((q.vars().count, q.vars().drop_next), (3, Time(316_249_999)));
    while b.take(&mut q, Time(300 * MS)).is_some() {}
    fill(&mut q, &mut b, Time(1_000 * MS), 200, false);
    assert_eq!(at(&mut q, &mut b, 1_010 * MS), 0);
    assert_eq!(at(&mut q, &mut b, 1_110 * MS), 1);
    let v = q.vars();
    assert_eq!((v.count, v.rec_inv_sqrt, v.drop_next), (2, 43_632, Time(1_110 * MS + 66_577_148)));
}

/// A standing queue of 200 packets queued at 0, dequeued by hand (RFC 8289 section 5.4-5.5):
/// 10 ms: sojourn 10 ms ≥ 5 ms → first_above_time = 110 ms, sent. 50 ms: sent (not yet).
/// 110 ms: ok to drop → dropped, the next sent, dropping, count 1, drop_next 210 ms.
/// 150 ms: sent (before drop_next). 210 ms: dropped, count 2, drop_next 280.710678 ms.
/// 280.710677 ms: sent. 280.710678 ms: dropped, count 3, drop_next 338.445705 ms.
/// 300 ms: drain the rest: the last leaves an empty queue (≤ MAXPACKET) → state left.
/// Refill at 1 s; 1.010 s sets first_above_time 1.110 s; at 1.110 s the state is entered
/// again 0.77 s after drop_next (< 16 intervals) with delta = count − lastcount = 3 − 1 = 2:
/// count 2, drop_next = 1.110 s + 70.710678 ms.
#[test]
fn drop_schedule_follows_the_hand_trace() {
    let mut q = codel(false);
    let mut b = Bench::new(1);
    fill(&mut q, &mut b, Time::ZERO, 200, false);
    assert_eq!(at(&mut q, &mut b, 10 * MS), 0);
    assert_eq!(q.vars().first_above_time, Some(Time(110 * MS)));
    assert_eq!(at(&mut q, &mut b, 50 * MS), 0);
    assert_eq!(at(&mut q, &mut b, 110 * MS), 1);
    assert_eq!((q.vars().dropping, q.vars().count, q.vars().drop_next), (true, 1, Time(210 * MS)));
    assert_eq!(at(&mut q, &mut b, 150 * MS), 0);
    assert_eq!(at(&mut q, &mut b, 210 * MS), 1);
    assert_eq!((q.vars().count, q.vars().drop_next), (2, Time(280_710_678)));
    assert_eq!(at(&mut q, &mut b, 280_710_677), 0);
    assert_eq!(at(&mut q, &mut b, 280_710_678), 1);
    assert_eq!((q.vars().count, q.vars().drop_next), (3, Time(338_445_705)));
    assert!(b.drops.iter().all(|d| d.1 == DropReason::Early));
    while b.take(&mut q, Time(300 * MS)).is_some() {}
    assert!(!q.vars().dropping);
    assert_eq!(q.stats().drop_count, 3);
    fill(&mut q, &mut b, Time(1_000 * MS), 200, false);
    assert_eq!(at(&mut q, &mut b, 1_010 * MS), 0);
    assert_eq!(at(&mut q, &mut b, 1_110 * MS), 1);
    let v = q.vars();
    assert_eq!((v.dropping, v.count, v.lastcount, v.drop_next), (true, 2, 2, Time(1_110 * MS + 70_710_678)));
}

/// Far from the last dropping state (more than 16 intervals), the count restarts at 1.
#[test]
fn count_restarts_after_sixteen_intervals() {
    let mut q = codel(false);
    let mut b = Bench::new(1);
    fill(&mut q, &mut b, Time::ZERO, 100, false);
    for t in [10, 110, 210, 281] {
        b.take(&mut q, Time(t * MS));
    }
    assert_eq!(q.vars().count, 3);
    while b.take(&mut q, Time(300 * MS)).is_some() {}
    let start = 300 * MS + 17 * 100 * MS;
    fill(&mut q, &mut b, Time(start), 100, false);
    b.take(&mut q, Time(start + 10 * MS));
    b.take(&mut q, Time(start + 110 * MS));
    assert_eq!((q.vars().count, q.vars().drop_next), (1, Time(start + 210 * MS)));
}

/// With ECN on, ECT packets are marked CE and sent where the trace above drops them; the
/// law advances the same way.
#[test]
fn ecn_marks_instead_of_dropping() {
    let mut q = codel(true);
    let mut b = Bench::new(1);
    fill(&mut q, &mut b, Time::ZERO, 200, true);
    let mut ce = vec![];
    for t in [10 * MS, 50 * MS, 110 * MS, 150 * MS, 210 * MS, 280_710_678] {
        let mut bench_cx = b.cx(Time(t), LINK);
        let Dequeued::Packet(p) = q.dequeue(&mut bench_cx) else { panic!("empty") };
        ce.push(p.ecn == ecn::CE);
    }
    assert!(b.drops.is_empty());
    assert_eq!(ce, vec![false, false, true, false, true, true]);
    assert_eq!((q.stats().ecn_mark, q.vars().count, q.vars().drop_next), (3, 3, Time(338_445_705)));
}

/// The MAXPACKET rule: a queue of at most one MTU behind the packet never counts as above
/// target, however long the sojourn (RFC 8289 section 5.4).
#[test]
fn a_queue_of_one_mtu_is_never_above_target() {
    let mut q = codel(false);
    let mut b = Bench::new(1);
    fill(&mut q, &mut b, Time::ZERO, 2, false);
    b.take(&mut q, Time(500 * MS));
    assert_eq!(q.vars().first_above_time, None);
}

#[test]
fn ce_threshold_marks_ect_packets_with_long_sojourns() {
    let cfg = CodelConfig { ce_threshold: Some(Dur::from_millis(1)), ..CodelConfig::default() };
    let mut q = Codel::new(&cfg).unwrap();
    let mut b = Bench::new(1);
    fill(&mut q, &mut b, Time::ZERO, 3, true);
    let p = b.take(&mut q, Time(MS / 2)).unwrap();
    assert_eq!(p.ecn, ecn::ECT0);
    let p = b.take(&mut q, Time(2 * MS)).unwrap();
    assert_eq!((p.ecn, q.stats().ce_mark), (ecn::CE, 1));
}

#[test]
fn overflow_is_counted_as_such() {
    let cfg = CodelConfig { limit: Limit { packets: Some(2), bytes: None }, ..CodelConfig::default() };
    let mut q = Codel::new(&cfg).unwrap();
    let mut b = Bench::new(1);
    fill(&mut q, &mut b, Time::ZERO, 3, false);
    assert_eq!(b.drops.iter().map(|d| d.1).collect::<Vec<_>>(), vec![DropReason::Overflow]);
}

#[test]
fn conserves_packets_and_bytes() {
    // The harness's clock steps 1 µs: a 20 µs target makes CoDel drop often.
    let cfg = CodelConfig {
        limit: Limit { packets: Some(16), bytes: None },
        target: Dur::from_micros(20),
        interval: Dur::from_micros(200),
        mtu: Bytes(100),
        ..CodelConfig::default()
    };
    let mut q = Codel::new(&cfg).unwrap();
    let (departed, dropped) = check_conservation(&mut q, 20_000, 5);
    assert!(departed > 0 && dropped > 0);
    assert!(q.stats().drop_count > 0, "{:?}", q.stats());
}

#[test]
fn bad_config_names_the_key() {
    let cfg = |target, interval, mtu| CodelConfig {
        target: Dur::from_millis(target),
        interval: Dur::from_millis(interval),
        mtu: Bytes(mtu),
        ..CodelConfig::default()
    };
    assert_eq!(Codel::new(&cfg(5, 0, 1500)).err().unwrap().path, "interval");
    assert_eq!(Codel::new(&cfg(0, 100, 1500)).err().unwrap().path, "target");
    assert_eq!(Codel::new(&cfg(100, 100, 1500)).err().unwrap().path, "target");
    assert_eq!(Codel::new(&cfg(5, 100, 0)).err().unwrap().path, "mtu");
    let e = serde_json::from_str::<QdiscSpec>(r#"{"kind":"codel","targt":"5ms"}"#).unwrap_err().to_string();
    assert!(e.contains("unknown field `targt`"), "{e}");
    let s: QdiscSpec = serde_json::from_str(r#"{"kind":"codel","target":"2ms","ecn":true}"#).unwrap();
    assert_eq!(s.kind(), "codel");
}
