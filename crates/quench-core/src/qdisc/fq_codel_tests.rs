//! FQ-CoDel unit tests: new flows before old ones, the batch drop from the fattest queue under
//! either limit, CoDel on each queue alone, conservation and per-flow order, and configuration
//! errors. Tests only: they drive the discipline by hand through the harness's `Bench` (what a
//! `QdiscCx` borrows), never a link or a world.

use super::super::harness::{check_conservation, packet, Bench};
use super::super::QdiscSpec;
use super::*;
use crate::packet::ecn;
use crate::units::{BitRate, Time};

const LINK: BitRate = BitRate(10_000_000);

fn fq_codel(limit: u64, memory_limit: u64, drop_batch_size: u32) -> FqCodel {
    let cfg = FqCodelConfig {
        limit: Limit { packets: Some(limit), bytes: None },
        memory_limit: Bytes(memory_limit),
        drop_batch_size,
        ..FqCodelConfig::default()
    };
    FqCodel::new(&cfg).unwrap()
}

fn assert_distinct_queues(q: &FqCodel, flows: &[u32]) {
    let mut idx: Vec<usize> = flows.iter().map(|&f| q.queue_of(&packet(0, f, 1))).collect();
    idx.sort();
    idx.dedup();
    assert_eq!(idx.len(), flows.len(), "flows share a queue under this seed");
}

/// Quantum 1514 B. A sends 1000 B packets: turn 1 (deficit 1514) sends A0 (→ 514) and A1
/// (→ −486). B's packet arrives: the new list is [A, B]. A's deficit is spent: +1514 = 1028,
/// to the old list. B, new, goes next, ahead of A's backlog (RFC 8290 section 4.2).
#[test]
fn a_new_flow_is_served_before_the_old_ones() {
    let mut q = fq_codel(10240, 32 << 20, 64);
    let mut b = Bench::new(3);
    for uid in 0..10 {
        b.offer(&mut q, packet(uid, 0, 1000), Time::ZERO, LINK);
    }
    assert_distinct_queues(&q, &[0, 1]);
    let uid = |b: &mut Bench, q: &mut FqCodel| b.take(q, Time::ZERO).unwrap().uid;
    assert_eq!((uid(&mut b, &mut q), uid(&mut b, &mut q)), (0, 1));
    b.offer(&mut q, packet(100, 1, 200), Time::ZERO, LINK);
    assert_eq!(uid(&mut b, &mut q), 100);
    assert_eq!(uid(&mut b, &mut q), 2);
    assert_eq!(q.stats().new_flow_count, 2);
}

/// Limit 20 packets: A holds 15 × 1000 B (uids 0-14), B 5 × 100 B (15-19). C's arrival (20)
/// makes 21: the fattest queue, A (15 000 B), loses packets from its head until half its
/// bytes (7 500) are gone: 8 packets, uids 0-7. With a batch of 4, only uids 0-3 go.
#[test]
fn the_shared_limit_drops_a_batch_from_the_head_of_the_fattest_queue() {
    for (batch, expected) in [(64, 0..8), (4, 0..4)] {
        let mut q = fq_codel(20, 32 << 20, batch);
        let mut b = Bench::new(3);
        for uid in 0..15 {
            b.offer(&mut q, packet(uid, 0, 1000), Time::ZERO, LINK);
        }
        for uid in 15..20 {
            b.offer(&mut q, packet(uid, 1, 100), Time::ZERO, LINK);
        }
        assert!(b.drops.is_empty());
        b.offer(&mut q, packet(20, 2, 100), Time::ZERO, LINK);
        assert_distinct_queues(&q, &[0, 1, 2]);
        let dropped: Vec<u32> = b.drops.iter().map(|d| d.0.uid).collect();
        assert_eq!(dropped, expected.collect::<Vec<u32>>(), "batch {batch}");
        assert!(b.drops.iter().all(|d| d.1 == DropReason::Overflow));
        assert_eq!(q.backlog().packets, 21 - dropped.len() as u64);
        assert_eq!(q.stats().overflow_drop, dropped.len() as u64);
    }
}

/// memory_limit 5000 B: the sixth 1000 B packet of one flow exceeds it and half that queue's
/// bytes (3 000 of 6 000) go from its head: uids 0, 1, 2.
#[test]
fn the_memory_limit_drops_too() {
    let mut q = fq_codel(10240, 5000, 64);
    let mut b = Bench::new(3);
    for uid in 0..6 {
        b.offer(&mut q, packet(uid, 0, 1000), Time::ZERO, LINK);
    }
    let dropped: Vec<u32> = b.drops.iter().map(|d| d.0.uid).collect();
    assert_eq!(dropped, vec![0, 1, 2]);
    assert_eq!(q.stats().memory_drop, 3);
}

/// CoDel runs per queue: a queue whose packets have waited above target for an interval
/// is dropped from, and a queue whose packets pass quickly is not.
#[test]
fn codel_acts_on_each_queue_alone() {
    let mut q = fq_codel(10240, 32 << 20, 64);
    let mut b = Bench::new(3);
    let ms = |m: u64| Time(m * 1_000_000);
    for uid in 0..100 {
        b.offer(&mut q, packet(uid, 0, 1000), Time::ZERO, LINK);
    }
    // Flow 0 sends two packets at 10 ms (sojourn 10 ms: first_above_time 110 ms; its
    // deficit is spent) and is served again at 120 ms (above target for an interval: one
    // drop). Flow 1's fresh packet goes first, untouched.
    b.take(&mut q, ms(10));
    b.take(&mut q, ms(10));
    b.offer(&mut q, packet(1000, 1, 100), ms(119), LINK);
    let first = b.take(&mut q, ms(120)).unwrap();
    assert_eq!(first.uid, 1000, "the new flow goes first");
    assert!(b.drops.is_empty());
    let p = b.take(&mut q, ms(120)).unwrap();
    assert_eq!((p.flow.0, b.drops.len()), (0, 1));
    assert_eq!(b.drops[0].1, DropReason::Early);
    assert_eq!(q.stats().codel.drop_count, 1);
}

#[test]
fn conserves_packets_and_bytes_and_keeps_each_flow_in_order() {
    let cfg = FqCodelConfig {
        flows: 4,
        quantum: Bytes(300),
        limit: Limit { packets: Some(12), bytes: None },
        target: Dur::from_micros(2),
        interval: Dur::from_micros(10),
        mtu: Bytes(40),
        ecn: false,
        ..FqCodelConfig::default()
    };
    let mut q = FqCodel::new(&cfg).unwrap();
    let (departed, dropped) = check_conservation(&mut q, 20_000, 13);
    assert!(departed > 0 && dropped > 0);
    let s = q.stats();
    assert!(s.codel.drop_count > 0 && s.overflow_drop > 0, "{s:?}");
}

#[test]
fn bad_config_names_the_key() {
    let with = |f: &dyn Fn(&mut FqCodelConfig)| {
        let mut c = FqCodelConfig::default();
        f(&mut c);
        FqCodel::new(&c).err().unwrap().path
    };
    assert_eq!(with(&|c| c.flows = 0), "flows");
    assert_eq!(with(&|c| c.flows = 1 << 20), "flows");
    assert_eq!(with(&|c| c.quantum = Bytes(0)), "quantum");
    assert_eq!(with(&|c| c.memory_limit = Bytes(0)), "memory_limit");
    assert_eq!(with(&|c| c.drop_batch_size = 0), "drop_batch_size");
    assert_eq!(with(&|c| c.limit = Limit { packets: Some(0), bytes: None }), "limit");
    assert_eq!(with(&|c| c.target = Dur::from_millis(200)), "target");
    let sel = |value, mask| Some(CeSelector { value, mask });
    assert_eq!(with(&|c| c.ce_threshold_selector = sel(0, 0)), "ce_threshold_selector.mask");
    assert_eq!(with(&|c| c.ce_threshold_selector = sel(5, 3)), "ce_threshold_selector.value");
    let e = serde_json::from_str::<QdiscSpec>(r#"{"kind":"fq_codel","flow":8}"#).unwrap_err().to_string();
    assert!(e.contains("unknown field `flow`"), "{e}");
}

/// Limit 10 packets, one flow: the 11th 1000 B arrival makes 11 000 B in its queue, and the
/// batch drop takes packets from the head until half (5 500 B) are gone: 6 packets (uids
/// 0-5). Linux's `fq_codel_drop` then adds the 6 to that queue's CoDel count; the switch off
/// (the default) leaves it at 0.
///
/// The count then matters when CoDel enters the dropping state. Dequeues: at 10 ms uid 6
/// (sojourn 10 ms > target 5 ms, 3 000 B behind it > MAXPACKET: first_above_time = 110 ms);
/// at 110 ms uid 7 is ok to drop and is dropped, uid 8 sent. RFC 8289 section 5.5: delta =
/// count − lastcount = 6 − 0 > 1 and now − drop_next (0) < 16 intervals, so count resumes at
/// 6 and drop_next = 110 ms + 100 ms/√6 = 110 ms + 40.824829 ms = 150 824 829 ns. Without
/// the switch: count 1, drop_next 110 ms + 100 ms = 210 ms.
#[test]
fn batch_drop_count_adds_the_batch_to_the_fat_queue_count() {
    for (on, count_after_batch, count, drop_next) in [(true, 6, 6, 150_824_829), (false, 0, 1, 210_000_000)] {
        let cfg = FqCodelConfig {
            limit: Limit { packets: Some(10), bytes: None },
            batch_drop_count: on,
            ..FqCodelConfig::default()
        };
        let mut q = FqCodel::new(&cfg).unwrap();
        let mut b = Bench::new(3);
        for uid in 0..11 {
            b.offer(&mut q, packet(uid, 0, 1000), Time::ZERO, LINK);
        }
        let dropped: Vec<u32> = b.drops.iter().map(|d| d.0.uid).collect();
        assert_eq!(dropped, (0..6).collect::<Vec<u32>>());
        let i = q.queue_of(&packet(0, 0, 1000));
        assert_eq!(q.vars(i).count, count_after_batch, "switch {on}");
        assert_eq!(b.take(&mut q, Time(10_000_000)).unwrap().uid, 6);
        assert_eq!(b.take(&mut q, Time(110_000_000)).unwrap().uid, 8);
        assert_eq!(b.drops.last().map(|d| (d.0.uid, d.1)), Some((7, DropReason::Early)));
        let v = q.vars(i);
        assert_eq!((v.dropping, v.count, v.drop_next), (true, count, Time(drop_next)), "switch {on}");
    }
}

fn ect_packet(uid: u32, codepoint: u8) -> Packet {
    let mut p = packet(uid, 0, 1000);
    p.ecn = codepoint;
    p
}

/// FQ-CoDel with `ce_threshold` = 1 ms and `selector`, on its bench.
fn with_ce_threshold_of_1ms(selector: Option<CeSelector>) -> (FqCodel, Bench) {
    let cfg = FqCodelConfig {
        ce_threshold: Some(Dur::from_millis(1)),
        ce_threshold_selector: selector,
        ..FqCodelConfig::default()
    };
    (FqCodel::new(&cfg).unwrap(), Bench::new(3))
}

/// ce_threshold 1 ms; ECT(1), ECT(0), ECT(1), ECT(0) queued at 0 and sent at 2 ms (sojourn
/// 2 ms: above the threshold, below CoDel's 5 ms target, so the law does nothing). Without a
/// selector all four are marked; with `{ value = 1, mask = 3 }` (Linux `ce_threshold_selector
/// 0x1/0x3`) only the two ECT(1) packets.
#[test]
fn ce_threshold_selector_restricts_marking_to_ect1() {
    for (selector, expected) in [
        (None, [ecn::CE, ecn::CE, ecn::CE, ecn::CE]),
        (Some(CeSelector { value: ecn::ECT1, mask: 0b11 }), [ecn::CE, ecn::ECT0, ecn::CE, ecn::ECT0]),
    ] {
        let (mut q, mut b) = with_ce_threshold_of_1ms(selector);
        for (uid, cp) in [ecn::ECT1, ecn::ECT0, ecn::ECT1, ecn::ECT0].into_iter().enumerate() {
            b.offer(&mut q, ect_packet(uid as u32, cp), Time::ZERO, LINK);
        }
        let got: Vec<u8> = (0..4).map(|_| b.take(&mut q, Time(2_000_000)).unwrap().ecn).collect();
        assert_eq!(got, expected, "{selector:?}");
        let marked = expected.iter().filter(|&&e| e == ecn::CE).count() as u64;
        assert_eq!((q.stats().codel.ce_mark, q.stats().codel.ecn_mark), (marked, 0));
    }
}

/// The control law's marks and ce_threshold's are counted apart. 200 ECT(1) packets of
/// 1000 B queued at 0, dequeued at CoDel's ECN trace times (`codel_tests.rs`,
/// `ecn_marks_instead_of_dropping`: the law marks the 3rd, 5th and 6th). ce_threshold 1 ms:
/// every one of the six left with a sojourn above it. Without a selector all six count as
/// threshold marks (the three already CE too, as Linux counts them); with the ECT(1) selector
/// only the three the law left ECT(1).
#[test]
fn law_marks_and_threshold_marks_are_counted_apart() {
    for (selector, ce_mark) in [(None, 6), (Some(CeSelector { value: ecn::ECT1, mask: 0b11 }), 3)] {
        let (mut q, mut b) = with_ce_threshold_of_1ms(selector);
        for uid in 0..200 {
            b.offer(&mut q, ect_packet(uid, ecn::ECT1), Time::ZERO, LINK);
        }
        for t in [10_000_000, 50_000_000, 110_000_000, 150_000_000, 210_000_000, 280_710_678] {
            assert_eq!(b.take(&mut q, Time(t)).unwrap().ecn, ecn::CE);
        }
        assert!(b.drops.is_empty());
        let s = q.stats().codel;
        assert_eq!((s.ecn_mark, s.ce_mark), (3, ce_mark), "{selector:?}");
    }
}
