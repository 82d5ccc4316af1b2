//! Shared by the benchmarks: a digest of everything a run produces, so that a speed change can
//! be checked to leave results bit-identical (compare the digest before and after).

use quench_core::table::Column;
use quench_core::RunResult;

/// FNV-1a 64-bit (Fowler, Noll, Vo; http://www.isthe.com/chongo/tech/comp/fnv/): offset basis
/// and prime of the 64-bit variant.
const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

struct Fnv(u64);

impl Fnv {
    fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 = (self.0 ^ x as u64).wrapping_mul(FNV_PRIME);
        }
    }
}

/// Hash of every table (names, columns, values bit for bit), every pcap and the event count.
pub fn digest(r: &RunResult) -> u64 {
    let mut h = Fnv(FNV_OFFSET);
    for t in &r.tables {
        h.bytes(t.name.as_bytes());
        for (name, col) in &t.columns {
            h.bytes(name.as_bytes());
            h.bytes(&(col.len() as u64).to_le_bytes());
            match col {
                Column::U8(v) => h.bytes(v),
                Column::U32(v) => v.iter().for_each(|x| h.bytes(&x.to_le_bytes())),
                Column::U64(v) => v.iter().for_each(|x| h.bytes(&x.to_le_bytes())),
                Column::F64(v) => v.iter().for_each(|x| h.bytes(&x.to_bits().to_le_bytes())),
                Column::Str(v) => v.iter().for_each(|s| h.bytes(s.as_bytes())),
            }
        }
    }
    for (name, bytes) in &r.pcaps {
        h.bytes(name.as_bytes());
        h.bytes(bytes);
    }
    h.bytes(&r.events_executed.to_le_bytes());
    h.0
}
