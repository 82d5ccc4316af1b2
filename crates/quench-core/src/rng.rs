//! Seeded random streams: one independent stream per component, derived from
//! (master seed, component kind, component index), so adding a flow never perturbs the random
//! choices of a link and results are bit-identical across runs and platforms.
//!
//! The generator is xoshiro256++ (Blackman & Vigna, 2018) seeded through SplitMix64, written
//! here rather than taken from a crate so its output can never change under a dependency update.
//! Owns the generator and the derivation of streams; it depends on no other part of the crate, and
//! each component keeps its own stream.

/// Which kind of component owns a stream; part of the stream's derivation key.
#[derive(Clone, Copy, Debug)]
#[repr(u64)]
pub enum StreamKind {
    Qdisc = 1,
    LinkLoss = 2,
    Agent = 3,
    Workload = 4,
    /// A switch's multipath choices (`routing.rs`): its ECMP hash salt and spraying draws.
    Routing = 5,
    /// A workload's traffic matrix (`workload.rs`): the permutation's derangement.
    Matrix = 6,
    /// A link's jitter and corruption draws (`wire.rs`).
    Wire = 7,
}

#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

/// SplitMix64's increment (Steele, Lea and Flood, "Fast splittable pseudorandom number
/// generators", OOPSLA 2014): the golden ratio in 64 bits.
pub const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64's output function (Steele, Lea and Flood 2014): a bijection on u64 whose every
/// output bit depends on every input bit. The one mixer of the engine's fixed hashes (ISNs,
/// ECMP's salts, the equal-time arbitration, classifiers) and of the seeding below.
#[inline(always)]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// SplitMix64's output for the state after `x` (one increment, then [`mix64`]): a fixed hash
/// of `x` for keys that must not depend on any seeded stream (ISNs, classifiers, the
/// equal-time arbitration).
#[inline(always)]
pub fn splitmix_at(x: u64) -> u64 {
    mix64(x.wrapping_add(GOLDEN_GAMMA))
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(GOLDEN_GAMMA);
    mix64(*state)
}

impl Rng {
    pub fn from_seed(seed: u64) -> Self {
        let mut st = seed;
        let s = [splitmix64(&mut st), splitmix64(&mut st), splitmix64(&mut st), splitmix64(&mut st)];
        Rng { s }
    }

    /// The stream of component `index` of `kind` under `master` seed.
    pub fn stream(master: u64, kind: StreamKind, index: u64) -> Self {
        let mut st = master ^ (kind as u64).wrapping_mul(0xD1B5_4A32_D192_ED03);
        let mixed = splitmix64(&mut st) ^ index.wrapping_mul(0x8CB9_2BA7_2F3D_8DD7);
        Rng::from_seed(mixed)
    }

    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform on [0, 1) with 53 bits of precision.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p`.
    pub fn bernoulli(&mut self, p: f64) -> bool {
        p > 0.0 && self.uniform() < p
    }

    /// Exponential with the given mean (inverse transform; 1 − U avoids ln 0).
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.uniform()).ln()
    }

    /// Uniform integer in [lo, hi] inclusive (multiply-shift; bias < 2^-64 per draw).
    pub fn range_inclusive(&mut self, lo: u64, hi: u64) -> u64 {
        let span = hi - lo + 1;
        lo + ((self.next_u64() as u128 * span as u128) >> 64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: Vec<u64> = (0..4).map(|_| Rng::stream(7, StreamKind::Agent, 3).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        let mut x = Rng::stream(7, StreamKind::Agent, 3);
        let mut y = Rng::stream(7, StreamKind::Agent, 4);
        let mut z = Rng::stream(7, StreamKind::Qdisc, 3);
        let (vx, vy, vz) = (x.next_u64(), y.next_u64(), z.next_u64());
        assert!(vx != vy && vx != vz && vy != vz);
    }

    #[test]
    fn uniform_and_exponential_moments() {
        let mut r = Rng::from_seed(42);
        let n = 200_000;
        let mean_u: f64 = (0..n).map(|_| r.uniform()).sum::<f64>() / n as f64;
        assert!((mean_u - 0.5).abs() < 0.005, "{mean_u}");
        let mean_e: f64 = (0..n).map(|_| r.exponential(2.0)).sum::<f64>() / n as f64;
        assert!((mean_e - 2.0).abs() < 0.03, "{mean_e}");
        assert!((0..1000).all(|_| (5..=9).contains(&r.range_inclusive(5, 9))));
    }
}
