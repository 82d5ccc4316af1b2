//! CHOKe unit tests: choose-and-kill traced by hand, the comparison with the drawn packet, RED's
//! behaviour below `min_th`, conservation and per-flow order, and configuration errors. Tests only:
//! they drive the discipline by hand through the harness's `Bench` (what a `QdiscCx` borrows),
//! never a link or a world.

use super::super::harness::{check_conservation, packet, Bench};
use super::super::QdiscSpec;
use super::*;
use crate::units::{BitRate, Time};

const LINK: BitRate = BitRate(10_000_000);

/// min_th 2, max_th 10 packets, w_q 1 (the average is the queue the arrival finds), 100 p.
fn choke() -> Choke {
    let cfg: ChokeConfig = serde_json::from_str(r#"{"min_th":2,"max_th":10,"w_q":1,"limit":"100p"}"#).unwrap();
    Choke::new(&cfg).unwrap()
}

fn uids(q: &Choke) -> Vec<u32> {
    q.queued().map(|p| p.uid).collect()
}

/// The step by hand on the queue [A0, B1, A2, B3] (flows A = 0, B = 1): an arrival of A
/// compared with position 2 (A2) kills A2; compared with position 1 (B1) it kills nothing.
#[test]
fn choose_and_kill_by_hand() {
    let mut q = choke();
    for (uid, flow) in [(0, 0), (1, 1), (2, 0), (3, 1)] {
        q.fifo.push(packet(uid, flow, 500));
    }
    let mut b = Bench::new(1);
    let mut cx = b.cx(Time::ZERO, LINK);
    assert!(q.kill_if_same_flow(&packet(4, 0, 500), 2, &mut cx));
    assert!(!q.kill_if_same_flow(&packet(5, 0, 500), 1, &mut cx));
    assert!(!q.kill_if_same_flow(&packet(6, 2, 500), 0, &mut cx), "flow C matches nobody");
    assert_eq!(uids(&q), vec![0, 1, 3]);
    assert_eq!(b.drops.iter().map(|d| (d.0.uid, d.1)).collect::<Vec<_>>(), vec![(2, DropReason::Early)]);
    assert_eq!(q.stats().matched, 1);
}

/// The whole arrival with the draw scripted: the qdisc's stream is the bench's, so a copy of
/// it tells which position the arrival will be compared with. The queue [A0, B1, A2, B3]
/// is built by arrivals (avg = 0, 1 below min_th 2: no draw; A2 and B3 find 2 and 3 queued:
/// drawn against, and the seeds are chosen so that those draws miss; B3 then takes RED's own
/// draw, pa = 0.02·(3 − 2)/8 spaced by count 2, which keeps it for these seeds). The fifth
/// arrival, A4, finds 4: for a draw of 0 or 2 both A's go (`early`); for 1 or 3 it is kept
/// by RED (pa ≈ 0.005).
#[test]
fn an_arrival_above_min_th_is_compared_with_the_drawn_packet() {
    let mut seen = [false, false];
    for seed in 0..200 {
        let mut q = choke();
        let mut b = Bench::new(seed);
        let mut script = b.rng.clone();
        let (d2, d3) = (script.range_inclusive(0, 1), script.range_inclusive(0, 2));
        // A2 is compared with position d2 of [A0, B1]: a miss needs B1; B3 with [A0, B1, A2]: A's.
        if d2 != 1 || d3 == 1 {
            continue;
        }
        for (uid, flow) in [(0, 0), (1, 1), (2, 0), (3, 1)] {
            assert_eq!(b.offer(&mut q, packet(uid, flow, 500), Time::ZERO, LINK), None);
        }
        assert_eq!(uids(&q), vec![0, 1, 2, 3]);
        script.uniform(); // RED's draw for B3 (its second arrival in the early region)
        let d4 = script.range_inclusive(0, 3) as usize;
        b.offer(&mut q, packet(4, 0, 500), Time::ZERO, LINK);
        let dropped: Vec<(u32, DropReason)> = b.drops.iter().map(|d| (d.0.uid, d.1)).collect();
        if d4.is_multiple_of(2) {
            assert_eq!(dropped, vec![(d4 as u32, DropReason::Early), (4, DropReason::Early)], "seed {seed}");
            let mut left = vec![0, 1, 2, 3];
            left.remove(d4);
            assert_eq!(uids(&q), left);
        } else {
            // Kept: RED's first arrival in the early region is accepted (count restarts).
            assert!(dropped.is_empty(), "seed {seed}: {dropped:?}");
            assert_eq!(uids(&q), vec![0, 1, 2, 3, 4]);
        }
        seen[d4 % 2] = true;
    }
    assert_eq!(seen, [true, true], "both outcomes scripted");
}

/// Below min_th nothing is drawn: a burst of one flow is queued whole.
#[test]
fn below_min_th_it_is_red() {
    let mut q = choke();
    let mut b = Bench::new(9);
    b.offer(&mut q, packet(0, 0, 500), Time::ZERO, LINK);
    b.offer(&mut q, packet(1, 0, 500), Time::ZERO, LINK);
    assert!(b.drops.is_empty());
    assert_eq!(uids(&q), vec![0, 1]);
}

#[test]
fn conserves_packets_and_bytes_and_keeps_each_flow_in_order() {
    let cfg: ChokeConfig = serde_json::from_str(r#"{"min_th":3,"max_th":9,"w_q":0.5,"limit":"12p"}"#).unwrap();
    let mut q = Choke::new(&cfg).unwrap();
    let (departed, dropped) = check_conservation(&mut q, 20_000, 7);
    assert!(departed > 0 && dropped > 0);
    assert!(q.stats().matched > 0, "{:?}", q.stats());
}

#[test]
fn bad_config_names_the_key() {
    let err = |json: &str| Choke::new(&serde_json::from_str::<ChokeConfig>(json).unwrap()).err().unwrap().path;
    assert_eq!(err(r#"{"min_th":15,"max_th":5}"#), "max_th");
    assert_eq!(err(r#"{"max_p":1.5}"#), "max_p");
    let e = serde_json::from_str::<QdiscSpec>(r#"{"kind":"choke","minth":5}"#).unwrap_err().to_string();
    assert!(e.contains("unknown field `minth`"), "{e}");
}
