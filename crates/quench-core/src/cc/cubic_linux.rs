//! CUBIC's window arithmetic as Linux computes it (net/ipv4/tcp_cubic.c: `bictcp_update`,
//! `cubictcp_recalc_ssthresh`, `cubictcp_state`, and `cubictcp_acked`'s `delay_min`), which
//! CUBIC runs under `growth = "linux"` in place of RFC 9438's real-valued one (`cubic.rs`).
//!
//! Where Linux differs from the RFC's curve, and so from `growth = "rfc5681"`:
//! - Whole segments and a clock of jiffies (`CONFIG_HZ`, the `hz` key): the cubic is evaluated
//!   at most once per jiffy, and not again while cwnd is unchanged within HZ/32; time since the
//!   epoch's start is counted in jiffies and then in 1/1024 s (`BICTCP_HZ`).
//! - The look-ahead is the connection's minimum RTT (`delay_min`, rounded up to a jiffy), not
//!   the smoothed RTT: `W_cubic(t + delay_min)` is the target.
//! - The window grows by one segment per `cnt` acknowledged segments (`tcp_cong_avoid_ai`),
//!   `cnt = cwnd / (target − cwnd)` by integer division, at least 2 (the 1.5x-per-RTT cap), and
//!   `100·cwnd` at or above the target (1 % per RTT where the RFC adds nothing).
//! - The Reno-friendly estimate grows by one segment per `cwnd · beta_scale / 8` acknowledged
//!   segments, `beta_scale = 8(1024 + β)/3/(1024 − β)` = 15 for β = 717: 0.533 segments per
//!   RTT, with no switch to 1 once back at the window of the last event (RFC 9438 §4.3 has one).
//! - β is 717/1024 and C is `bic_scale`/1024 with `bic_scale` = 41 for the default 0.4; the
//!   configured `beta` and `c` are rounded to these scales.
//! - A timeout (`cubictcp_state` on TCP_CA_Loss, `bictcp_reset`) forgets everything, the last
//!   maximum and `delay_min` included.
//!
//! Left out: Linux's `cubic_root` (a 64-entry table and one Newton step, about 0.2 % from the
//! true root on average) is computed here exactly, as the integer part of the cube root; the
//! jiffy clock starts at the simulation's zero (a kernel's starts at boot, at an arbitrary
//! phase); `cubictcp_cwnd_event`'s shift of the epoch after an idle period is not modelled
//! (quench's controllers see no start of transmission after idle); `snd_cwnd_clamp` is not.
//!
//! Owns `struct bictcp`'s window part and `delay_min`. Must not touch: the window itself (CUBIC
//! applies `cnt` through `tcp_cong_avoid_ai`), HyStart's rounds (`hystart_linux.rs`).

use super::AckSample;
use crate::error::ConfigError;
use crate::units::{Dur, Time, NS_PER_SEC};

/// `BICTCP_BETA_SCALE`: β and the Reno-friendly scale are in 1/1024.
const BETA_SCALE: u32 = 1024;
/// `BICTCP_HZ`: the cubic's clock runs in 1/2^10 s.
const CUBIC_CLOCK_SHIFT: u32 = 10;
/// `bic_scale` is C in 1/1024 units, times `cube_rtt_scale = bic_scale · 10` (Linux folds a
/// reference RTT of 100 ms into its constants, `cubictcp_register`).
const BIC_SCALE_PER_C: f64 = 1024.0 / 10.0;
const CUBE_RTT_SCALE_PER_BIC_SCALE: u32 = 10;
/// `if (ca->last_max_cwnd == 0 && ca->cnt > 20) ca->cnt = 20`: while no plateau is known, at
/// least 5 % growth per RTT.
const UNKNOWN_PLATEAU_MAX_CNT: u32 = 20;
/// `ca->cnt = 100 * cwnd` at or above the target: 1 % per RTT.
const ABOVE_TARGET_CNT_PER_SEGMENT: u32 = 100;
/// `ca->cnt = max(ca->cnt, 2U)`: at most one segment per two acknowledged, 1.5x per RTT.
const MIN_CNT: u32 = 2;
/// `(s32)(tcp_jiffies32 - ca->last_time) <= HZ / 32`: an unchanged window is not re-evaluated
/// within 1/32 s.
const SAME_WINDOW_HOLD_DIVISOR: u64 = 32;
/// `max(cwnd · β / 1024, 2U)`: the smallest ssthresh after an event.
const MIN_SSTHRESH_SEGMENTS: u32 = 2;
/// `(s32)(tcp_jiffies32 - ca->epoch_start) < HZ` in `cubictcp_acked`: RTT samples within a
/// second of an epoch's start ("right after fast recovery") are left out of `delay_min`.
const EPOCH_SETTLING_SECONDS: u64 = 1;
/// A zero RTT sample counts as 1 µs (`if (delay == 0) delay = 1`).
const SMALLEST_SAMPLE: Dur = Dur::from_micros(1);
const MICROS_PER_SECOND: u64 = 1_000_000;

/// The `CONFIG_HZ` values a kernel can be built with (kernel/Kconfig.hz).
pub const KERNEL_HZ_CHOICES: [u32; 4] = [100, 250, 300, 1000];
/// `CONFIG_HZ_1000`, as the server kernels of Red Hat Enterprise Linux and Fedora are built
/// (kernel/Kconfig.hz's own default is 250, Debian's kernels keep it): on short paths the
/// jiffy sets the look-ahead, and with it how fast the window returns to its plateau.
pub const DEFAULT_HZ: u32 = 1000;

/// `cubictcp_acked`'s `delay_min`: the smallest RTT sample, leaving out those in the first
/// second of an epoch; a zero sample counts as 1 µs. Shared by the arithmetic below and Linux's
/// HyStart, as the kernel shares it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DelayMin(Option<Dur>);

impl DelayMin {
    /// One ACK's sample: the delay as Linux takes it (None when the ACK carries no sample, or
    /// it falls in the first second of the epoch that started at `epoch_start`).
    pub fn on_ack(&mut self, s: &AckSample, epoch_start: Option<Time>) -> Option<Dur> {
        let rtt = s.rtt?;
        if epoch_start.is_some_and(|start| s.now.saturating_sub(start) < Dur::from_secs(EPOCH_SETTLING_SECONDS)) {
            return None;
        }
        let delay = rtt.max(SMALLEST_SAMPLE);
        self.0 = Some(self.0.map_or(delay, |d| d.min(delay)));
        Some(delay)
    }

    pub fn get(&self) -> Option<Dur> {
        self.0
    }

    /// `bictcp_reset`: a timeout forgets it.
    pub fn reset(&mut self) {
        self.0 = None;
    }
}

/// The parameters, scaled as `cubictcp_register` scales them.
#[derive(Clone, Copy, Debug)]
struct Scales {
    hz: u64,
    /// β in 1/1024 (`beta`, 717).
    beta: u32,
    fast_convergence: bool,
    tcp_friendliness: bool,
    /// `beta_scale`: Reno's growth with CUBIC's β, in 1/8 segment per RTT's inverse.
    beta_scale: u32,
    /// `cube_rtt_scale = bic_scale · 10`.
    cube_rtt_scale: u64,
    /// `cube_factor = 2^40 / (bic_scale · 10)`.
    cube_factor: u64,
}

/// `struct bictcp`'s window part; times in jiffies.
#[derive(Clone, Copy, Debug, Default)]
struct Bictcp {
    cnt: u32,
    last_max_cwnd: u32,
    last_cwnd: u32,
    last_time: u64,
    origin_point: u32,
    /// Time from the epoch's start to the plateau, in 1/1024 s.
    k: u64,
    epoch_start: Option<u64>,
    ack_cnt: u32,
    tcp_cwnd: u32,
}

#[derive(Clone, Debug)]
pub struct LinuxCubic {
    scales: Scales,
    state: Bictcp,
}

impl LinuxCubic {
    /// `c` in segments/s³ and `beta` as CUBIC's keys give them; `hz` is `CONFIG_HZ`.
    pub fn new(
        c: f64,
        beta: f64,
        fast_convergence: bool,
        tcp_friendliness: bool,
        hz: u32,
    ) -> Result<Self, ConfigError> {
        if !KERNEL_HZ_CHOICES.contains(&hz) {
            return Err(ConfigError::new(
                "hz",
                format!("must be one of a kernel's CONFIG_HZ values {KERNEL_HZ_CHOICES:?}"),
            ));
        }
        let bic_scale = (c * BIC_SCALE_PER_C).round();
        if bic_scale < 1.0 {
            let why = format!(
                "under growth = \"linux\" C is bic_scale/102.4 for a whole bic_scale: at least {}",
                0.5 / BIC_SCALE_PER_C
            );
            return Err(ConfigError::new("c", why));
        }
        let beta = (beta * f64::from(BETA_SCALE)).round() as u32;
        if !(1..BETA_SCALE).contains(&beta) {
            return Err(ConfigError::new("beta", "under growth = \"linux\" β is a whole number of 1/1024 in (0, 1)"));
        }
        let cube_rtt_scale = bic_scale as u64 * u64::from(CUBE_RTT_SCALE_PER_BIC_SCALE);
        let scales = Scales {
            hz: u64::from(hz),
            beta,
            fast_convergence,
            tcp_friendliness,
            beta_scale: 8 * (BETA_SCALE + beta) / 3 / (BETA_SCALE - beta),
            cube_rtt_scale,
            cube_factor: (1u64 << (CUBIC_CLOCK_SHIFT + 3 * CUBIC_CLOCK_SHIFT)) / cube_rtt_scale,
        };
        Ok(LinuxCubic { scales, state: Bictcp::default() })
    }

    /// The jiffy `t` falls in (exact for any HZ: 300's jiffy is no whole number of ns).
    fn jiffies(&self, t: Time) -> u64 {
        (t.0 as u128 * self.scales.hz as u128 / NS_PER_SEC as u128) as u64
    }

    /// The start of the current epoch, as a time (None between an event and the next growth).
    pub fn epoch_start(&self) -> Option<Time> {
        self.state.epoch_start.map(|j| Time((j as u128 * NS_PER_SEC as u128).div_ceil(self.scales.hz as u128) as u64))
    }

    /// `usecs_to_jiffies`: whole microseconds, rounded up to jiffies.
    fn delay_jiffies(&self, delay: Option<Dur>) -> u64 {
        let us = delay.map_or(0, |d| d.0 / (NS_PER_SEC / MICROS_PER_SECOND));
        (us * self.scales.hz).div_ceil(MICROS_PER_SECOND)
    }

    /// `bictcp_update(ca, cwnd, acked)` at `now`: returns `cnt`, the acknowledged segments per
    /// one segment of growth that `tcp_cong_avoid_ai` then applies.
    pub fn update(&mut self, now: Time, cwnd: u32, acked: u32, delay_min: Option<Dur>) -> u32 {
        let jiffies = self.jiffies(now);
        let hold = self.scales.hz / SAME_WINDOW_HOLD_DIVISOR;
        let st = &mut self.state;
        st.ack_cnt = st.ack_cnt.wrapping_add(acked);
        if st.last_cwnd == cwnd && jiffies - st.last_time <= hold {
            return st.cnt;
        }
        // The cubic is evaluated at most once per jiffy; the Reno estimate on every ACK.
        if !(st.epoch_start.is_some() && jiffies == st.last_time) {
            self.evaluate_cubic(jiffies, cwnd, acked, delay_min);
        }
        self.reno_friendliness(cwnd);
        self.state.cnt = self.state.cnt.max(MIN_CNT);
        self.state.cnt
    }

    /// The cubic part of `bictcp_update`: a new epoch if none runs, then `cnt` toward
    /// `W_cubic(t + delay_min)`.
    fn evaluate_cubic(&mut self, jiffies: u64, cwnd: u32, acked: u32, delay_min: Option<Dur>) {
        let delay = self.delay_jiffies(delay_min);
        let sc = self.scales;
        let st = &mut self.state;
        st.last_cwnd = cwnd;
        st.last_time = jiffies;
        let epoch_start = *st.epoch_start.get_or_insert_with(|| {
            st.ack_cnt = acked;
            st.tcp_cwnd = cwnd;
            if st.last_max_cwnd <= cwnd {
                st.k = 0;
                st.origin_point = cwnd;
            } else {
                st.k = integer_cube_root(sc.cube_factor * u64::from(st.last_max_cwnd - cwnd));
                st.origin_point = st.last_max_cwnd;
            }
            jiffies
        });
        let t = ((jiffies - epoch_start + delay) << CUBIC_CLOCK_SHIFT) / sc.hz;
        let offs = t.abs_diff(st.k);
        // Linux's u64 product, which wraps for epochs longer than about 340 s.
        let cube = sc.cube_rtt_scale.wrapping_mul(offs).wrapping_mul(offs).wrapping_mul(offs);
        let delta = (cube >> (CUBIC_CLOCK_SHIFT + 3 * CUBIC_CLOCK_SHIFT)) as u32;
        let target = if t < st.k { st.origin_point.wrapping_sub(delta) } else { st.origin_point.wrapping_add(delta) };
        st.cnt = if target > cwnd { cwnd / (target - cwnd) } else { ABOVE_TARGET_CNT_PER_SEGMENT.wrapping_mul(cwnd) };
        if st.last_max_cwnd == 0 {
            st.cnt = st.cnt.min(UNKNOWN_PLATEAU_MAX_CNT);
        }
    }

    /// `tcp_friendliness`: Reno's window with CUBIC's β, one segment per `cwnd·beta_scale/8`
    /// acknowledged; where it is ahead, `cnt` is at most what closes the gap in a round.
    fn reno_friendliness(&mut self, cwnd: u32) {
        if !self.scales.tcp_friendliness {
            return;
        }
        let st = &mut self.state;
        let per_segment = ((u64::from(cwnd) * u64::from(self.scales.beta_scale)) >> 3).max(1);
        let ack_cnt = u64::from(st.ack_cnt);
        if ack_cnt > per_segment {
            // The kernel's loop of subtractions, in one step.
            let segments = (ack_cnt - 1) / per_segment;
            st.ack_cnt = (ack_cnt - segments * per_segment) as u32;
            st.tcp_cwnd = st.tcp_cwnd.wrapping_add(segments as u32);
        }
        if st.tcp_cwnd > cwnd {
            st.cnt = st.cnt.min(cwnd / (st.tcp_cwnd - cwnd));
        }
    }

    /// `cubictcp_recalc_ssthresh`: the epoch ends; the last maximum (lowered further under fast
    /// convergence); returns ssthresh in segments.
    pub fn recalc_ssthresh(&mut self, cwnd: u32) -> u32 {
        let sc = self.scales;
        let st = &mut self.state;
        st.epoch_start = None;
        st.last_max_cwnd = if cwnd < st.last_max_cwnd && sc.fast_convergence {
            (u64::from(cwnd) * u64::from(BETA_SCALE + sc.beta) / u64::from(2 * BETA_SCALE)) as u32
        } else {
            cwnd
        };
        ((u64::from(cwnd) * u64::from(sc.beta) / u64::from(BETA_SCALE)) as u32).max(MIN_SSTHRESH_SEGMENTS)
    }

    /// `cubictcp_state(TCP_CA_Loss)`: `bictcp_reset`.
    pub fn reset(&mut self) {
        self.state = Bictcp::default();
    }

    #[cfg(test)]
    fn k(&self) -> u64 {
        self.state.k
    }
}

/// The integer part of the cube root of `a`.
fn integer_cube_root(a: u64) -> u64 {
    let mut x = (a as f64).cbrt() as u64;
    // The float's guess is within one of the root for every u64; settle it exactly.
    while x > 0 && x.checked_pow(3).is_none_or(|c| c > a) {
        x -= 1;
    }
    while (x + 1).checked_pow(3).is_some_and(|c| c <= a) {
        x += 1;
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    fn linux(hz: u32) -> LinuxCubic {
        LinuxCubic::new(0.4, 0.7, true, true, hz).unwrap()
    }

    /// cubictcp_register's constants for the defaults: bic_scale 41, β 717: beta_scale =
    /// 8·1741/3/307 = 15, cube_rtt_scale 410, cube_factor = 2^40/410 = 2,681,735,677.
    #[test]
    fn scales_as_cubictcp_register_computes_them() {
        let s = linux(1000).scales;
        assert_eq!((s.beta, s.beta_scale, s.cube_rtt_scale, s.cube_factor), (717, 15, 410, 2_681_735_677));
    }

    #[test]
    fn integer_cube_root_is_exact() {
        for a in [0u64, 1, 7, 8, 26, 27, 999_999, 1_000_000, u64::MAX] {
            let x = integer_cube_root(a);
            assert!(x.pow(3) <= a && (x + 1).checked_pow(3).is_none_or(|c| c > a), "{a}: {x}");
        }
    }

    /// ssthresh and the plateau by hand: cwnd 100 → ssthresh 100·717/1024 = 70, last_max 100;
    /// then an event at cwnd 80 < 100 with fast convergence: last_max = 80·1741/2048 = 68,
    /// ssthresh 56; a window of 2 keeps ssthresh 2.
    #[test]
    fn ssthresh_and_fast_convergence_by_hand() {
        let mut c = linux(1000);
        assert_eq!(c.recalc_ssthresh(100), 70);
        assert_eq!(c.state.last_max_cwnd, 100);
        assert_eq!(c.recalc_ssthresh(80), 56);
        assert_eq!(c.state.last_max_cwnd, 68);
        assert_eq!(c.recalc_ssthresh(2), 2);
    }

    /// One epoch by hand at HZ = 1000, after a loss at cwnd 100 (last_max 100) and a recovery
    /// that ends at ssthresh 70, delay_min 20 ms. K = ⌊∛(2,681,735,677 · 30)⌋ = 4,316 in 1/1024
    /// s (4.21 s, as ∛(30/0.4)). The epoch's first ACK: t = (0 + 20 jiffies)·1024/1000 = 20,
    /// offs = 4,296, delta = 410 · 4,296³ >> 40 = 29, target = 100 − 29 = 71, cnt = 70/1 = 70;
    /// Reno's estimate (70, one segment per 70·15/8 = 131 ACKed) is not ahead. 4.196 s later:
    /// t = 4,216 · 1024/1000 = 4,317, offs 1, delta 0, target 100: cnt = 70/30 = 2.
    #[test]
    fn an_epoch_by_hand() {
        let mut c = linux(1000);
        c.recalc_ssthresh(100);
        let rtt = Some(Dur::from_millis(20));
        let cnt = c.update(Time(5_000_000_000), 70, 1, rtt);
        assert_eq!(c.k(), 4316);
        assert_eq!(c.epoch_start(), Some(Time(5_000_000_000)));
        assert_eq!(cnt, 70);
        let cnt = c.update(Time(5_000_000_000 + 4_196_000_000), 70, 1, rtt);
        assert_eq!(cnt, 2);
    }

    /// `cubictcp_acked`: samples in the first second of an epoch do not count; a zero sample
    /// counts as 1 µs; a reset forgets the minimum.
    #[test]
    fn delay_min_leaves_out_the_epochs_first_second() {
        let sample = |at_ms: u64, rtt_us: u64| AckSample {
            now: Time(at_ms * 1_000_000),
            acked: 1000,
            rtt: Some(Dur::from_micros(rtt_us)),
            srtt: None,
            ece_bytes: 0,
            ack_delay: None,
            rate: None,
            telemetry: None,
        };
        let mut d = DelayMin::default();
        assert_eq!(d.on_ack(&sample(0, 50_000), None), Some(Dur::from_millis(50)));
        assert_eq!(d.on_ack(&sample(500, 20_000), Some(Time::ZERO)), None);
        assert_eq!(d.get(), Some(Dur::from_millis(50)));
        assert_eq!(d.on_ack(&sample(1000, 30_000), Some(Time::ZERO)), Some(Dur::from_millis(30)));
        assert_eq!(d.on_ack(&sample(1001, 0), Some(Time::ZERO)), Some(Dur::from_micros(1)));
        assert_eq!(d.get(), Some(Dur::from_micros(1)));
        d.reset();
        assert_eq!(d.get(), None);
    }
}
