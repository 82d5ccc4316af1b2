//! HyStart++ (RFC 9406, `cc = { kind = "cubic", hystart = true }`) in a whole run: on a
//! deep-buffered path it leaves slow start before the first loss, where plain slow start
//! overshoots into the buffer's limit; and the round in which it enters Conservative Slow
//! Start and the ACK at which it enters congestion avoidance are recomputed by hand from the
//! run's own traces (the ACKs and per-ACK RTT samples, rounds delimited as section 4.2 says:
//! a round ends when the data outstanding at its start is acknowledged).

mod common;
use common::*;
use serde_json::json;

const MSS: u64 = 1460;
/// RFC 9406 section 4.3's constants, restated for the hand computation.
const N_RTT_SAMPLE: usize = 8;
const CSS_ROUNDS: usize = 5;

/// One CUBIC flow, 100 Mb/s with 2·(1 + 20 + 1) ms of base RTT (BDP ≈ 366 packets), a
/// drop-tail buffer of 10 BDP, per-ACK RTT samples. Deep: the RTT rise shows in the round
/// after the window passed the BDP, by when slow start has doubled it again (≈ 1040
/// segments), and five rounds of CSS multiply it by about 1.25⁵ ≈ 3 before congestion
/// avoidance, so only a buffer of several BDPs lets HyStart++ finish before a loss.
fn run_cubic(hystart: bool) -> quench_core::RunResult {
    let mut sc = dumbbell(1, "1Gbps", "1ms", "100Mbps", "20ms", json!({"kind": "droptail", "limit": "3660p"}));
    sc["duration"] = json!("4s");
    sc["flows"] = json!([{"kind": "tcp", "src": "s0", "dst": "d",
                          "cc": {"kind": "cubic", "hystart": hystart},
                          "tcp": {"sack": true, "rtt_sampling": "every_ack",
                                  "send_buffer": "16MiB", "receive_window": "16MiB"}}]);
    sc["record"] = json!({"segments": true, "links": ["r1->r2"]});
    run(&sc)
}

/// When ssthresh first became finite (slow start ended), and the window then.
fn slow_start_end(r: &quench_core::RunResult) -> (f64, f64) {
    let (t, cwnd, ssthresh) = (f64s(r, "cwnd", "time_s"), f64s(r, "cwnd", "cwnd"), u64s(r, "cwnd", "ssthresh"));
    let i = (0..t.len()).find(|&i| ssthresh[i] != u64::MAX).expect("slow start ends");
    (t[i], cwnd[i])
}

fn first_drop(r: &quench_core::RunResult) -> Option<f64> {
    f64s(r, "drops", "time_s").first().copied()
}

/// What the hand computation finds: when CSS began (the ACK's time) and when slow start ended.
#[derive(Debug, PartialEq)]
struct Exit {
    css_round: usize,
    css_at: f64,
    ca_at: f64,
}

/// RFC 9406 section 4.2 over the recorded ACKs: each ACK of new data carries one RTT sample
/// (recorded in the same order); a round ends at the ACK covering the highest byte sent before
/// the round began, and that ACK opens the next round.
fn hand_computed_exit(r: &quench_core::RunResult) -> Exit {
    let (t, seq, is_ack) = (f64s(r, "segments", "time_s"), u64s(r, "segments", "seq"), u64s(r, "segments", "is_ack"));
    let len = u64s(r, "segments", "len");
    let (rtt_t, rtt) = (f64s(r, "rtt", "time_s"), f64s(r, "rtt", "rtt_s"));
    let mut next_rtt = 1; // row 0 is the handshake's sample
    let (mut snd_max, mut una) = (0u64, 1u64);
    let (mut window_end, mut round) = (None::<u64>, 0usize);
    let (mut last_min, mut cur_min, mut samples) = (f64::INFINITY, f64::INFINITY, 0usize);
    let mut css: Option<(usize, f64, f64, usize)> = None; // (round, time, baseline, rounds done)
    for i in 0..t.len() {
        if is_ack[i] == 0 {
            snd_max = snd_max.max(seq[i] + len[i]);
            continue;
        }
        if seq[i] <= una {
            continue; // a duplicate
        }
        una = seq[i];
        if window_end.is_none_or(|end| una >= end) {
            window_end = Some(snd_max);
            round += 1;
            last_min = cur_min;
            cur_min = f64::INFINITY;
            samples = 0;
            if let Some((r0, at, base, done)) = css {
                if done + 1 == CSS_ROUNDS {
                    return Exit { css_round: r0, css_at: at, ca_at: t[i] };
                }
                css = Some((r0, at, base, done + 1));
            }
        }
        assert_eq!(rtt_t[next_rtt], t[i], "the sample of the ACK at {}", t[i]);
        cur_min = cur_min.min(rtt[next_rtt]);
        next_rtt += 1;
        samples += 1;
        if samples < N_RTT_SAMPLE {
            continue;
        }
        match css {
            None if last_min.is_finite() => {
                let thresh = (last_min / 8.0).clamp(0.004, 0.016);
                if cur_min >= last_min + thresh {
                    css = Some((round, t[i], cur_min, 0));
                }
            }
            Some((_, _, base, _)) if cur_min < base => css = None,
            _ => {}
        }
    }
    panic!("no exit found by hand");
}

#[test]
fn hystart_leaves_slow_start_before_the_first_loss_at_the_hand_computed_ack() {
    let plain = run_cubic(false);
    let (plain_end, plain_cwnd) = slow_start_end(&plain);
    let plain_drop = first_drop(&plain).expect("plain slow start overflows even a 10-BDP buffer");
    assert!(plain_drop < plain_end, "plain slow start ends by a loss: drop {plain_drop}, end {plain_end}");

    let r = run_cubic(true);
    let (end, cwnd) = slow_start_end(&r);
    let exit = hand_computed_exit(&r);
    println!(
        "plain: first drop {plain_drop:.4} s, slow start ends {plain_end:.4} s at {:.0} segments",
        plain_cwnd / MSS as f64
    );
    println!(
        "HyStart++: {exit:?}; slow start ends {end:.4} s at {:.0} segments, first drop {:?}",
        cwnd / MSS as f64,
        first_drop(&r)
    );
    assert_eq!(end, exit.ca_at, "congestion avoidance begins at the hand-computed ACK");
    assert!(first_drop(&r).is_none_or(|d| d > end), "before the first loss");
    assert_eq!(flow_value(&r, 0, "retransmitted_segments"), 0.0);
}

/// HyStart++ without an RTT sample per ACK could never count 8 samples in a round: refused,
/// naming the key to set.
#[test]
fn hystart_without_per_ack_rtt_samples_is_refused() {
    let mut sc = dumbbell(1, "1Gbps", "1ms", "100Mbps", "20ms", json!({"kind": "droptail", "limit": "100p"}));
    sc["duration"] = json!("1s");
    sc["flows"] = json!([{"kind": "tcp", "src": "s0", "dst": "d", "cc": {"kind": "cubic", "hystart": true}}]);
    expect_error(sc, "flows[0].tcp.rtt_sampling", "every_ack");
}
