//! Linux's HyStart (`cc = { kind = "cubic", hystart = "linux" }`, the linux profile's) in a whole
//! run under the linux profile (delayed ACKs, per-segment growth): slow start ends before the
//! first loss, where plain slow start overflows the buffer; and the ACK at which it ends, and
//! the window then, are recomputed from the run's own traces by tcp_cubic.c's rules (rounds
//! from `after(snd_una, end_seq)`, the ACK train within 2 ms past (delay_min + Linux's 1 ms
//! TSO cushion)/2, the delay
//! detector from a round's 9th sample past delay_min + clamp(delay_min/8, 4 ms, 16 ms)).

mod common;
use common::*;
use serde_json::json;

const MSS: u64 = 1448;
/// tcp_cubic.c's constants, restated for the hand computation (in nanoseconds).
const ACK_DELTA_NS: i64 = 2_000_000;
const MIN_SAMPLES: u32 = 8;
const INITIAL_WINDOW: u64 = 16;
/// `hystart_ack_delay`'s cushion, min(1 ms, 4 · 65,215 B at the pacing rate): here the rate
/// stays under 28 MB/s (2 · 1448 B · at most 420 segments / 44 ms), so the cushion is its cap.
const ACK_DELAY_NS: i64 = 1_000_000;

/// One CUBIC flow under the linux profile, 100 Mb/s with 2·(1 + 20 + 1) ms of base RTT (BDP ≈
/// 366 packets) and a drop-tail buffer of 1000 packets. An initial window of 16 segments keeps
/// `hystart_low_window` out of the hand computation.
fn run_cubic(hystart: &str) -> quench_core::RunResult {
    let mut sc = dumbbell(1, "1Gbps", "1ms", "100Mbps", "20ms", json!({"kind": "droptail", "limit": "1000p"}));
    sc["duration"] = json!("2s");
    let hystart = if hystart == "off" { json!(false) } else { json!(hystart) };
    sc["flows"] = json!([{"kind": "tcp", "src": "s0", "dst": "d",
                          "cc": {"kind": "cubic", "hystart": hystart, "initial_window": INITIAL_WINDOW},
                          "tcp": {"profile": "linux", "send_buffer": "16MiB", "receive_window": "16MiB"}}]);
    sc["record"] = json!({"segments": true, "links": ["r1->r2"]});
    run(&sc)
}

/// When ssthresh first became finite (slow start ended), in nanoseconds, and the window then.
fn slow_start_end(r: &quench_core::RunResult) -> (i64, u64) {
    let (t, ssthresh) = (f64s(r, "cwnd", "time_s"), u64s(r, "cwnd", "ssthresh"));
    let i = (0..t.len()).find(|&i| ssthresh[i] != u64::MAX).expect("slow start ends");
    (ns(t[i]), ssthresh[i])
}

fn ns(seconds: f64) -> i64 {
    (seconds * 1e9).round() as i64
}

/// Which detector fired, at which ACK, and the window then (cwnd before that ACK: the initial
/// window plus every segment acknowledged before it, Linux's slow start).
#[derive(Debug, PartialEq)]
struct Exit {
    detector: &'static str,
    at_ns: i64,
    cwnd: u64,
}

/// The per-round state of `hystart_update`.
#[derive(Default)]
struct Round {
    to_end: i64,
    start: i64,
    last_ack: i64,
    min: i64,
    samples: u32,
}

/// tcp_cubic.c over the recorded ACKs: each ACK of new data carries one RTT sample (recorded in
/// the same order, after the handshake's).
fn hand_computed_exit(r: &quench_core::RunResult) -> Exit {
    let (t, seq, is_ack) = (f64s(r, "segments", "time_s"), u64s(r, "segments", "seq"), u64s(r, "segments", "is_ack"));
    let len = u64s(r, "segments", "len");
    let (rtt_t, rtt) = (f64s(r, "rtt", "time_s"), f64s(r, "rtt", "rtt_s"));
    let (mut next_rtt, mut snd_max, mut una) = (1, 0u64, 1u64);
    let mut round = Round { to_end: -1, ..Round::default() };
    let mut delay_min = i64::MAX;
    for i in 0..t.len() {
        if is_ack[i] == 0 {
            snd_max = snd_max.max(seq[i] + len[i]);
            continue;
        }
        if seq[i] <= una {
            continue;
        }
        let cwnd = INITIAL_WINDOW * MSS + (una - 1);
        round.to_end -= (seq[i] - una) as i64;
        una = seq[i];
        let now = ns(t[i]);
        assert_eq!(ns(rtt_t[next_rtt]), now, "the sample of the ACK at {}", t[i]);
        let sample = ns(rtt[next_rtt]).max(1000);
        next_rtt += 1;
        delay_min = delay_min.min(sample);
        if round.to_end < 0 {
            round = Round { to_end: (snd_max - una) as i64, start: now, last_ack: now, min: i64::MAX, samples: 0 };
        }
        let mut detector = None;
        if now - round.last_ack <= ACK_DELTA_NS {
            round.last_ack = now;
            if now - round.start > (delay_min + ACK_DELAY_NS) / 2 {
                detector = Some("ack train");
            }
        }
        round.min = round.min.min(sample);
        if round.samples < MIN_SAMPLES {
            round.samples += 1;
        } else if round.min > delay_min + (delay_min / 8).clamp(4_000_000, 16_000_000) {
            detector = detector.or(Some("delay"));
        }
        if let Some(detector) = detector {
            return Exit { detector, at_ns: now, cwnd };
        }
    }
    panic!("no exit found by hand");
}

#[test]
fn linux_hystart_leaves_slow_start_before_the_first_loss_at_the_hand_computed_ack() {
    let plain = run_cubic("off");
    let plain_drop = f64s(&plain, "drops", "time_s").first().copied().expect("plain slow start overflows");
    let (plain_end, _) = slow_start_end(&plain);
    assert!(ns(plain_drop) < plain_end, "plain slow start ends by a loss");

    let r = run_cubic("linux");
    let (end, ssthresh) = slow_start_end(&r);
    let exit = hand_computed_exit(&r);
    let first_drop = f64s(&r, "drops", "time_s").first().copied();
    println!(
        "plain: first drop {plain_drop:.4} s; HyStart (Linux): {exit:?} ({} segments), first drop {first_drop:?}",
        exit.cwnd / MSS
    );
    assert_eq!((end, ssthresh), (exit.at_ns, exit.cwnd), "slow start ends at the hand-computed ACK and window");
    assert!(first_drop.is_none_or(|d| ns(d) > end), "before the first loss");
    assert_eq!(flow_value(&r, 0, "retransmitted_segments"), 0.0);
}
