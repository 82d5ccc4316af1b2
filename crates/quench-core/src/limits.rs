//! The range of every quantity a scenario may give, in one place: a value outside its range is
//! refused when the scenario is read or validated, with the key that holds it, instead of being
//! clamped, wrapped or left to exhaust time or memory during the run. The unit types' own
//! ranges, which their parser checks, are defined with the types (`units.rs`) and re-exported
//! here; this module depends on nothing else of the crate.
//!
//! Every bound covers the largest legitimate use in this repository with room to spare (the
//! longest run is 2000 s, the fastest link 10 Gbit/s, the largest workload a few thousand
//! flows), and keeps the engine's integer arithmetic exact: times are u64 nanoseconds, rates
//! u64 bit/s and sizes u64 bytes, and `size · 8 · 10⁹` is computed in u128.

pub use crate::units::{shown, MAX_DURATION, MAX_LIMIT_PACKETS, MAX_SIZE};
use crate::units::{BitRate, Bytes, Dur, NS_PER_SEC};

/// RFC 791: every internet module must forward a 68-byte datagram.
pub const MIN_MTU: Bytes = Bytes(68);
/// IPv4's total-length field is 16 bits: no datagram, so no MTU, exceeds 65535 bytes.
pub const MAX_MTU: Bytes = Bytes(65_535);

/// Link-layer framing added to each packet's wire time: at most 65535 bytes, the largest IPv4
/// datagram (real framings add a few bytes: HDLC 8, Ethernet 38 with preamble and gap).
pub const MAX_FRAMING_OVERHEAD: Bytes = Bytes(65_535);

/// The smallest packet a link can carry: a bare 20-byte IPv4 header (a fragment or ICMP message
/// is never smaller). Its time on the wire decides whether a link rate fits nanosecond time.
pub const SMALLEST_PACKET: Bytes = Bytes(20);

/// A link's packet-rate limit: at most 10⁹ packets per second (a gap under 1 ns would round
/// away), at least one packet per [`MAX_DURATION`].
pub const MAX_PACKET_RATE: f64 = 1e9;
pub const MIN_PACKET_RATE: f64 = 1.0 / 1_000_000.0;

/// The flows a scenario may create by default (`budget.flows`): listed flows plus the
/// workloads' expected arrivals. Arrivals are built as they come and reclaimed when done, so
/// memory follows the concurrent flows; what grows with the total is the flows table, about
/// 200 bytes a row in memory (Python's frame) before it is written.
pub const DEFAULT_FLOW_BUDGET: u64 = 10_000_000;
/// Workload arrivals that may be in progress at once by default (`budget.active_flows`): an
/// arrival's endpoints and bookkeeping take about 2 KB (a TCP flow, measured in
/// `benchmarks/bench_memory.py`'s overload case), so 10⁶ of them about 2 GB. A workload that
/// offers more than its path carries piles up arrivals without end; the budget stops it with an
/// error instead of the allocator stopping the process.
pub const DEFAULT_ACTIVE_FLOW_BUDGET: u64 = 1_000_000;

/// The packets the sources that send at a rate of their own (UDP) may send by default
/// (`budget.packets`), estimated before the run as rate / mean packet size × sending time.
/// Each packet costs at least two events (sent, and queued or dropped at the first link) even
/// when the network drops it at once, so at the ~10⁷ events per second the engine runs, 10⁸
/// packets take half a minute or more; a 1 Tbit/s source of 1 KB datagrams reaches it in under
/// a simulated second. The largest UDP load in this repository sends a few thousand packets.
pub const DEFAULT_PACKET_BUDGET: u64 = 100_000_000;
/// The most `budget.packets` may allow: 10¹² packets is a day of events at 10⁷ a second.
pub const MAX_PACKET_BUDGET: u64 = 1_000_000_000_000;

/// The bytes a run may stream to disk by default (`budget.record_bytes`): its recorded tables'
/// spill files and its captures together, before its output files are written from them. A
/// killed run leaves them in its hidden staging folder, so they must not reach gigabytes
/// unasked: 10⁹ bytes is four times what the dumbbell's every record and capture take over
/// 3000 simulated seconds (about 125 MB per 1000 s, `benchmarks/bench_memory.py`), and a
/// longer or fuller recording raises it.
pub const DEFAULT_RECORD_BUDGET: u64 = 1_000_000_000;
/// The most `budget.record_bytes` may allow: 10¹⁴ bytes (100 TB), more than any disk holds.
pub const MAX_RECORD_BUDGET: u64 = 100_000_000_000_000;

/// The most unidirectional links a generated fabric may have: 10⁶. A link with its queue takes
/// about 600 bytes before it holds a packet, so 10⁶ of them 0.6 GB, and the routing set-up runs
/// one search over every link per switch (`routing.rs`). The largest fat-tree quench generates
/// (k = 64, `topology/fat_tree.rs`) has 393,216.
pub const MAX_LINKS: u64 = 1_000_000;

/// The most flows `budget.flows` may allow: flow ids are `u32` and each flow's two endpoints
/// take ids `2f` and `2f + 1`, so the ids last to 2³¹ flows; 10⁹ leaves a Poisson count far
/// above its mean (σ ≈ 3·10⁴) well inside.
pub const MAX_FLOW_BUDGET: u64 = 1_000_000_000;

/// Why `rate` is too fast for nanosecond time when its smallest packet is `smallest` bytes:
/// that packet's time on the wire, `smallest · 8 / rate`, would round to 0 ns (under 0.5 ns).
pub fn too_fast_for_nanoseconds(rate: BitRate, smallest: Bytes, what: &str) -> Option<String> {
    let bit_ns = smallest.0 as u128 * 8 * NS_PER_SEC as u128;
    // bit_ns / rate < 0.5 ns  <=>  2 · bit_ns < rate
    if 2 * bit_ns >= rate.0 as u128 {
        return None;
    }
    let ns = bit_ns as f64 / rate.0 as f64;
    let fastest = BitRate((2 * bit_ns).min(u64::MAX as u128) as u64);
    Some(format!(
        "{rate} is too fast for nanosecond time: {what} of {smallest} takes {ns:.3} ns, which rounds to 0 ns \
         (at most {fastest})"
    ))
}

/// The most packets a per-flow target may name (Vegas's and FAST's α and β, burstiness
/// control's threshold, PCP's smallest rate and increment): as many as the longest queue quench
/// accepts; no flow can keep more queued than any queue holds.
pub const MAX_PACKETS_TARGET: f64 = MAX_LIMIT_PACKETS as f64;

/// The most round-trip times a waiting period may span (PCP's probe span, back-off, jitter and
/// queue alarm, the assisted transport's timeout): a thousand round trips, two orders of
/// magnitude past every default here, keeps `RTT · n` inside nanosecond time even for a path
/// of round-trip time `MAX_DURATION`.
pub const MAX_RTT_MULTIPLE: f64 = 1e3;

/// The most a dimensionless tuning factor may be (PCP's slope tolerance and confidence,
/// tit-for-tat factor): three orders of magnitude past their defaults (at most 2).
pub const MAX_FACTOR: f64 = 1e3;

/// The shortest period of a queue controller's update (PIE's, FQ-PIE's and DualPI2's
/// `tupdate`): 100 µs. While its queue is busy a controller runs once a period and records
/// up to five monitor rows (DualPI2), so 100 µs bounds it to 10⁴ updates and 5·10⁴ rows per
/// simulated second, about the packet rate of a 600 Mbit/s link of 1500-byte packets: the
/// controller never outweighs the traffic it controls. Linux runs PIE and FQ-PIE on a timer of
/// whole jiffies (`usecs_to_jiffies(tupdate)`: 1 ms at HZ = 1000) and RFC 8033 and RFC 9332
/// recommend 15 ms and 16 ms, so 100 µs is ten times faster than any kernel runs them.
pub const MIN_CONTROLLER_PERIOD: Dur = Dur(100_000);

/// The largest gain of a PI controller (PIE's, FQ-PIE's and DualPI2's `alpha` and `beta`, in
/// Hz): 10³. The gain turns a delay error in seconds into a change of probability per update,
/// so at 10³ Hz an error of 1 ms already moves the probability from 0 to 1 in one update, and
/// a larger gain only switches between the two; the defaults are 0.125 to 3.2 Hz (RFC 8033,
/// RFC 9332). The ceiling also keeps `gain · error` finite for every error up to
/// [`MAX_DURATION`], so the probability never becomes NaN.
pub const MAX_CONTROLLER_GAIN: f64 = 1e3;

/// Refuse a controller's update period below [`MIN_CONTROLLER_PERIOD`].
pub fn check_controller_period(key: &str, period: Dur) -> Result<(), crate::ConfigError> {
    if period < MIN_CONTROLLER_PERIOD {
        let why = format!(
            "{period} is shorter than {MIN_CONTROLLER_PERIOD}, the shortest update period quench accepts (each \
             update runs the controller and records its monitors)"
        );
        return Err(crate::ConfigError::new(key, why));
    }
    Ok(())
}

/// Refuse a PI controller's gain that is not a positive number of Hz within
/// [`MAX_CONTROLLER_GAIN`].
pub fn check_controller_gain(key: &str, gain: f64) -> Result<(), crate::ConfigError> {
    if !(gain.is_finite() && gain > 0.0) {
        return Err(crate::ConfigError::new(key, format!("{gain} is not a positive gain in Hz")));
    }
    check_at_most(key, gain, MAX_CONTROLLER_GAIN, "the largest controller gain quench accepts, in Hz")
}

/// Refuse a setting above its ceiling (its lower bound is checked where it is defined): the
/// message names the ceiling and what it stands for, never a clamped value.
pub fn check_at_most(key: &str, v: f64, most: f64, what: &str) -> Result<(), crate::ConfigError> {
    if v > most {
        return Err(crate::ConfigError::new(key, format!("{} is more than {}, {what}", shown(v), shown(most))));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_is_too_fast_when_the_smallest_packet_rounds_to_zero() {
        // 20 bytes = 160 bits: 0.5 ns at 320 Gbit/s.
        assert!(too_fast_for_nanoseconds(BitRate(320_000_000_000), SMALLEST_PACKET, "a packet").is_none());
        let e = too_fast_for_nanoseconds(BitRate(320_000_000_001), SMALLEST_PACKET, "a packet").unwrap();
        assert!(e.contains("rounds to 0 ns") && e.contains("320Gbps"), "{e}");
        assert!(too_fast_for_nanoseconds(crate::units::MAX_RATE, Bytes(1500), "a packet").is_none());
    }
}
