//! A map from packet keys (a uid, a flow id, [`crate::packet::Packet::wire_key`]) to small
//! values, for the state the engine keeps beside each packet in flight: a PFC switch's
//! ingress port of each packet it holds (`pfc.rs`), a packet's telemetry record
//! (`telemetry.rs`). Those are inserted and removed once per packet per switch, so the map is
//! on the per-packet path.
//!
//! Open addressing with linear probing, keys scattered by Fibonacci hashing (Knuth, TAOCP
//! vol. 3, section 6.4: multiply by 2^64 / phi and keep the high bits), at most half full,
//! and removal by backward shift (Knuth's Algorithm R), which leaves no tombstones, so a map
//! that sees a billion insertions and removals never degrades or rehashes in place. In place
//! of the standard library's `HashMap` (SwissTable probing, same multiplicative hash), it took
//! HPCC over PFC, where three such maps are on the path, from 1,615 M to 1,558 M instructions
//! for 5 ms of a 32-host leaf-spine (`benchmarks/bench_transports.py`'s fabric); a PFC
//! admission fell from 122 instructions to 71.
//!
//! What this module owns: the slots. It knows nothing of packets; lookups, insertions and
//! removals behave as a `HashMap`'s, and nothing iterates the map, so the order of slots
//! never shows in a result.

/// The golden-ratio multiplier of Fibonacci hashing: 2^64 / phi, odd.
const FIBONACCI: u64 = 0x9E37_79B9_7F4A_7C15;
/// The slots a map starts with once it holds anything (a power of two).
const FIRST_SLOTS: usize = 64;
/// A slot's key when it is empty: no uid, flow id or wire key reaches it (a wire key is at
/// most 48 bits: a 16-bit fragment offset over a 32-bit uid).
const EMPTY: u64 = u64::MAX;

/// A map from `u64` keys (any but `u64::MAX`) to `Copy` values.
#[derive(Clone, Debug)]
pub struct KeyTable<V> {
    keys: Vec<u64>,
    values: Vec<V>,
    len: usize,
    /// 64 less the bits of the slot count: a hash's high bits pick the slot.
    shift: u32,
}

impl<V: Copy + Default> Default for KeyTable<V> {
    fn default() -> Self {
        KeyTable { keys: Vec::new(), values: Vec::new(), len: 0, shift: 64 }
    }
}

impl<V: Copy + Default> KeyTable<V> {
    /// Entries held (for tests: the engine asks only for keys).
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Insert `value` under `key`; answers the value it replaces.
    #[inline]
    pub fn insert(&mut self, key: u64, value: V) -> Option<V> {
        debug_assert_ne!(key, EMPTY, "the empty slot's key is not a key");
        if (self.len + 1) * 2 > self.keys.len() {
            self.grow();
        }
        let mask = self.keys.len() - 1;
        let mut i = self.home(key);
        loop {
            match self.keys[i] {
                k if k == key => return Some(std::mem::replace(&mut self.values[i], value)),
                EMPTY => {
                    self.keys[i] = key;
                    self.values[i] = value;
                    self.len += 1;
                    return None;
                }
                _ => i = (i + 1) & mask,
            }
        }
    }

    #[inline]
    pub fn get(&self, key: u64) -> Option<&V> {
        self.slot_of(key).map(|i| &self.values[i])
    }

    /// Remove `key`; answers its value. The entries after it in its run move back over the
    /// hole, each if its own home is not after the hole, so no lookup ever crosses an
    /// empty slot to find its key.
    #[inline]
    pub fn remove(&mut self, key: u64) -> Option<V> {
        let mut hole = self.slot_of(key)?;
        let value = self.values[hole];
        let mask = self.keys.len() - 1;
        let mut i = (hole + 1) & mask;
        while self.keys[i] != EMPTY {
            let home = self.home(self.keys[i]);
            // Entry `i` may fill the hole if the hole lies on its probe path, from its home
            // to `i` (cyclically): `i` is at least as far from its home as from the hole.
            if (i.wrapping_sub(home) & mask) >= (i.wrapping_sub(hole) & mask) {
                self.keys[hole] = self.keys[i];
                self.values[hole] = self.values[i];
                hole = i;
            }
            i = (i + 1) & mask;
        }
        self.keys[hole] = EMPTY;
        self.len -= 1;
        Some(value)
    }

    /// The slot holding `key`, if any.
    #[inline]
    fn slot_of(&self, key: u64) -> Option<usize> {
        if self.len == 0 {
            return None;
        }
        let mask = self.keys.len() - 1;
        let mut i = self.home(key);
        loop {
            match self.keys[i] {
                k if k == key => return Some(i),
                EMPTY => return None,
                _ => i = (i + 1) & mask,
            }
        }
    }

    /// The slot where `key`'s probe starts.
    #[inline]
    fn home(&self, key: u64) -> usize {
        (key.wrapping_mul(FIBONACCI) >> self.shift) as usize
    }

    /// Double the slots (or take the first ones) and put every entry back.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let slots = (self.keys.len() * 2).max(FIRST_SLOTS);
        let keys = std::mem::replace(&mut self.keys, vec![EMPTY; slots]);
        let values = std::mem::replace(&mut self.values, vec![V::default(); slots]);
        self.shift = 64 - slots.trailing_zeros();
        self.len = 0;
        for (k, v) in keys.into_iter().zip(values) {
            if k != EMPTY {
                self.insert(k, v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// A million random operations on keys from a small range (so that runs form, wrap the
    /// table's end and shift back) give what `HashMap` gives, at every step.
    #[test]
    fn behaves_as_a_hash_map() {
        let mut table = KeyTable::<u32>::default();
        let mut reference = HashMap::new();
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        for step in 0..1_000_000u32 {
            // xorshift64 (Marsaglia 2003): deterministic operations, keys below 3,000.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let key = (state >> 8) % 3_000;
            match state % 5 {
                0 | 1 => assert_eq!(table.insert(key, step), reference.insert(key, step), "insert {key}"),
                2 | 3 => assert_eq!(table.remove(key), reference.remove(&key), "remove {key}"),
                _ => assert_eq!(table.get(key), reference.get(&key), "get {key}"),
            }
            assert_eq!(table.len(), reference.len());
        }
        for (k, v) in &reference {
            assert_eq!(table.get(*k), Some(v));
        }
    }

    /// Keys that share a home slot sit one after another, and removing the first moves the
    /// others back: the last stays reachable and no empty slot is left inside the run.
    #[test]
    fn a_removal_shifts_its_run_back() {
        let mut table = KeyTable::<u8>::default();
        table.insert(1, 0);
        let home = table.home(1);
        let mut same_home: Vec<u64> = (2..1_000_000).filter(|&k| table.home(k) == home).take(3).collect();
        same_home.insert(0, 1);
        for (v, &k) in same_home.iter().enumerate().skip(1) {
            table.insert(k, v as u8);
        }
        let mask = table.keys.len() - 1;
        assert_eq!(table.slot_of(same_home[3]), Some((home + 3) & mask));
        assert_eq!(table.remove(1), Some(0));
        assert_eq!(table.slot_of(same_home[3]), Some((home + 2) & mask), "moved back one slot");
        assert_eq!(table.get(same_home[3]), Some(&3));
        assert_eq!(table.keys[(home + 3) & mask], EMPTY);
    }

    #[test]
    fn it_stays_at_most_half_full() {
        let mut table = KeyTable::<u16>::default();
        for k in 0..10_000u64 {
            table.insert(k << 32 | k, k as u16);
            assert!(table.len() * 2 <= table.keys.len());
        }
        assert_eq!(table.keys.len(), 32_768);
        assert_eq!(table.get(7 << 32 | 7), Some(&7));
    }
}
