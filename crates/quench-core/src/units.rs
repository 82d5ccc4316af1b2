//! Physical units as types: time in integer nanoseconds, rates in bit/s, sizes in bytes.
//!
//! One parser serves Rust and Python (the Python package calls it through the extension), so
//! `"9600bps"`, `"10Mbps"`, `"25ms"`, `"64KB"` and `"100p"` mean the same thing everywhere.
//! Decimal prefixes are SI (k = 1000, as in bit rates and RFCs); binary ones are explicit
//! (`KiB` = 1024). Bare numbers in a scenario are read in the base unit: seconds, bit/s, bytes.
//!
//! Serialization time is computed in `u128` so that no rate or size overflows, and callers that
//! transmit repeatedly carry the remainder (see [`Serializer`]) so a link's long-run rate is exact.
//!
//! Each unit type's own range (the longest duration, the fastest rate, the largest size and
//! buffer) lives here with it, so that the parser checks it; every other key's range is in
//! `limits.rs`, which builds on this module and depends on nothing else of the crate.
//!
//! It depends on no other part of the crate; every component measures in its types.

use serde::{de, Deserialize, Deserializer, Serialize, Serializer as SerdeSerializer};
use std::fmt;
use std::ops::{Add, AddAssign, Sub};

pub const NS_PER_SEC: u64 = 1_000_000_000;

/// An instant of simulated time, in nanoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

/// A span of simulated time, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Dur(pub u64);

/// A size on the wire or in a buffer, in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bytes(pub u64);

/// A transmission rate in bit/s.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BitRate(pub u64);

impl Time {
    pub const ZERO: Time = Time(0);
    pub const MAX: Time = Time(u64::MAX);
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NS_PER_SEC as f64
    }
    pub fn saturating_sub(self, other: Time) -> Dur {
        Dur(self.0.saturating_sub(other.0))
    }
}

impl Dur {
    pub const ZERO: Dur = Dur(0);
    pub const fn from_secs(s: u64) -> Dur {
        Dur(s * NS_PER_SEC)
    }
    pub const fn from_millis(ms: u64) -> Dur {
        Dur(ms * 1_000_000)
    }
    pub const fn from_micros(us: u64) -> Dur {
        Dur(us * 1_000)
    }
    pub fn from_secs_f64(s: f64) -> Dur {
        Dur((s * NS_PER_SEC as f64).round().max(0.0) as u64)
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NS_PER_SEC as f64
    }
    pub fn is_zero(self) -> bool {
        self.0 == 0
    }
}

impl Add<Dur> for Time {
    type Output = Time;
    fn add(self, d: Dur) -> Time {
        Time(self.0.saturating_add(d.0))
    }
}
impl AddAssign<Dur> for Time {
    fn add_assign(&mut self, d: Dur) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub for Time {
    type Output = Dur;
    fn sub(self, earlier: Time) -> Dur {
        debug_assert!(self >= earlier, "time went backwards");
        Dur(self.0 - earlier.0)
    }
}
impl Add for Dur {
    type Output = Dur;
    fn add(self, o: Dur) -> Dur {
        Dur(self.0.saturating_add(o.0))
    }
}

impl BitRate {
    pub fn bytes_per_sec(self) -> f64 {
        self.0 as f64 / 8.0
    }
    /// Exact time to serialize `size` at this rate, rounded down; the remainder in
    /// bit-nanoseconds is returned so a caller can carry it to the next packet.
    pub fn tx_time_with_remainder(self, size: Bytes, carried: u64) -> (Dur, u64) {
        // Packets (< 2^16 bytes) fit 64-bit arithmetic, which is several times faster than
        // 128-bit division on the per-packet path; anything larger takes the wide path.
        let bit_ns = (size.0 * 8).checked_mul(NS_PER_SEC).and_then(|b| b.checked_add(carried));
        match bit_ns {
            Some(b) => (Dur(b / self.0), b % self.0),
            None => {
                let wide = size.0 as u128 * 8 * NS_PER_SEC as u128 + carried as u128;
                let rate = self.0 as u128;
                (Dur((wide / rate) as u64), (wide % rate) as u64)
            }
        }
    }
    /// Serialization time rounded up to the next nanosecond (for one-off estimates).
    pub fn tx_time(self, size: Bytes) -> Dur {
        let bit_ns = size.0 as u128 * 8 * NS_PER_SEC as u128;
        Dur(bit_ns.div_ceil(self.0 as u128) as u64)
    }
    /// Bytes that this rate carries in `d`.
    pub fn bytes_in(self, d: Dur) -> f64 {
        self.bytes_per_sec() * d.as_secs_f64()
    }
    /// The rate that carries `bits` in `d` (rounded down; `d` of zero counts as 1 ns).
    pub fn from_bits_per(bits: u64, d: Dur) -> BitRate {
        BitRate((bits as u128 * NS_PER_SEC as u128 / d.0.max(1) as u128).min(u64::MAX as u128) as u64)
    }
}

/// Serializes packets back to back at a fixed rate with the sub-nanosecond remainder carried,
/// so a long run transmits exactly `rate` bits per second.
#[derive(Clone, Debug)]
pub struct Serializer {
    rate: BitRate,
    remainder: u64,
    /// The size last sent and its own time at this rate (whole ns, remainder in bit·ns): a
    /// link carries runs of one size (full segments one way, ACKs the other), and reusing
    /// the quotient saves a 64-bit division (tens of cycles) per packet.
    last: Option<(Bytes, Dur, u64)>,
}

impl Serializer {
    pub fn new(rate: BitRate) -> Self {
        Serializer { rate, remainder: 0, last: None }
    }
    pub fn rate(&self) -> BitRate {
        self.rate
    }
    /// `rate.tx_time_with_remainder(size, carried)`, exactly: with size·8·10⁹ = q·rate + r,
    /// adding the carried c (< rate) to r (< rate) can add at most one nanosecond.
    /// Inlined into the link's start of transmission, with the division out of line: the
    /// common case (the size of the last packet) is a few instructions.
    #[inline]
    pub fn next_tx_time(&mut self, size: Bytes) -> Dur {
        let (whole, part) = match self.last {
            Some((s, d, r)) if s == size => (d, r),
            _ => self.divide(size),
        };
        // The true sum r + c is below 2·rate; an overflow of u64 means it is at least 2^64 > rate.
        let (sum, overflowed) = part.overflowing_add(self.remainder);
        let carry = overflowed || sum >= self.rate.0;
        self.remainder = if carry { sum.wrapping_sub(self.rate.0) } else { sum };
        Dur(whole.0 + carry as u64)
    }

    /// A size other than the last: divide, and keep the quotient for the next packet.
    #[cold]
    fn divide(&mut self, size: Bytes) -> (Dur, u64) {
        let (d, r) = self.rate.tx_time_with_remainder(size, 0);
        self.last = Some((size, d, r));
        (d, r)
    }
}

/// A buffer limit: in packets, in bytes, or both (whichever is reached first).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limit {
    pub packets: Option<u64>,
    pub bytes: Option<Bytes>,
}

impl Limit {
    pub fn unlimited() -> Self {
        Limit::default()
    }
    /// Would a queue holding `pkts`/`bytes` overflow if `size` more bytes arrived?
    pub fn exceeded_by(&self, pkts: u64, bytes: u64, size: u64) -> bool {
        self.packets.is_some_and(|p| pkts + 1 > p) || self.bytes.is_some_and(|b| bytes + size > b.0)
    }
}

/// A parsed quantity, tagged by its dimension.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Quantity {
    Time(Dur),
    Rate(BitRate),
    Size(Bytes),
    Packets(u64),
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct UnitError(pub String);

const TIME_UNITS: &[(&str, f64)] =
    &[("ns", 1e-9), ("us", 1e-6), ("µs", 1e-6), ("ms", 1e-3), ("s", 1.0), ("sec", 1.0), ("min", 60.0)];
const RATE_UNITS: &[(&str, f64)] =
    &[("bps", 1.0), ("b/s", 1.0), ("kbps", 1e3), ("Kbps", 1e3), ("Mbps", 1e6), ("Gbps", 1e9), ("Tbps", 1e12)];
const SIZE_UNITS: &[(&str, f64)] = &[
    ("B", 1.0),
    ("KB", 1e3),
    ("kB", 1e3),
    ("MB", 1e6),
    ("GB", 1e9),
    ("KiB", 1024.0),
    ("MiB", 1048576.0),
    ("GiB", 1073741824.0),
];
const PACKET_UNITS: &[&str] = &["p", "pkt", "pkts", "packets"];

/// Parse a quantity with its unit, e.g. `"10Mbps"`, `"25 ms"`, `"64KB"`, `"100p"`.
pub fn parse_quantity(text: &str) -> Result<Quantity, UnitError> {
    let s = text.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E')))
        .ok_or_else(|| UnitError(format!("'{text}' has no unit (expected e.g. 10Mbps, 25ms, 64KB, 100p)")))?;
    // 'e' inside a unit such as "sec" must not be eaten by the number: re-split on the last digit.
    let split = s[..split].rfind(|c: char| c.is_ascii_digit() || c == '.').map_or(split, |i| i + 1);
    let (num, unit) = (s[..split].trim(), s[split..].trim());
    let value: f64 = num.parse().map_err(|_| UnitError(format!("'{text}': '{num}' is not a number")))?;
    if !value.is_finite() || value < 0.0 {
        return Err(UnitError(format!("'{text}': quantities must be finite and non-negative")));
    }
    let lookup = |table: &[(&str, f64)]| table.iter().find(|(u, _)| *u == unit).map(|(_, f)| value * f);
    // Never saturate: a value that does not fit 64 bits of its base unit is an error.
    let fits = |base: f64, unit: &str| {
        whole(base).ok_or_else(|| UnitError(format!("'{text}' does not fit in 64 bits of {unit}")))
    };
    if let Some(secs) = lookup(TIME_UNITS) {
        return Ok(Quantity::Time(Dur(fits(secs * NS_PER_SEC as f64, "nanoseconds")?)));
    }
    if let Some(bps) = lookup(RATE_UNITS) {
        return Ok(Quantity::Rate(BitRate(fits(bps, "bit/s")?)));
    }
    if let Some(b) = lookup(SIZE_UNITS) {
        return Ok(Quantity::Size(Bytes(fits(b, "bytes")?)));
    }
    if PACKET_UNITS.contains(&unit) {
        if value.fract() != 0.0 {
            return Err(UnitError(format!("'{text}': a packet count must be a whole number")));
        }
        return Ok(Quantity::Packets(fits(value, "packets")?));
    }
    Err(UnitError(format!(
        "'{text}': unknown unit '{unit}' (time: ns us ms s; rate: bps kbps Mbps Gbps; size: B KB MB KiB MiB; packets: p)"
    )))
}

/// `x` rounded to a whole number, if it is finite, non-negative and fits u64 (no saturation).
fn whole(x: f64) -> Option<u64> {
    let r = x.round();
    // 2^64 is exactly representable; every f64 below it converts without saturating.
    (0.0..18_446_744_073_709_551_616.0).contains(&r).then_some(r as u64)
}

fn wrong_kind(text: &str, want: &str) -> UnitError {
    UnitError(format!("'{text}' is not a {want}"))
}

pub fn parse_dur(text: &str) -> Result<Dur, UnitError> {
    match parse_quantity(text)? {
        Quantity::Time(d) => Ok(d),
        _ => Err(wrong_kind(text, "duration (e.g. 25ms)")),
    }
}

pub fn parse_rate(text: &str) -> Result<BitRate, UnitError> {
    match parse_quantity(text)? {
        Quantity::Rate(r) => Ok(r),
        _ => Err(wrong_kind(text, "rate (e.g. 10Mbps)")),
    }
}

pub fn parse_bytes(text: &str) -> Result<Bytes, UnitError> {
    match parse_quantity(text)? {
        Quantity::Size(b) => Ok(b),
        _ => Err(wrong_kind(text, "size (e.g. 64KB)")),
    }
}

/// A buffer limit: `"100p"`, `"64KB"`, or both separated by a comma (`"100p,64KB"`).
pub fn parse_limit(text: &str) -> Result<Limit, UnitError> {
    let mut limit = Limit::default();
    for part in text.split(',') {
        match parse_quantity(part)? {
            Quantity::Size(b) if limit.bytes.is_none() => limit.bytes = Some(b),
            Quantity::Packets(p) if limit.packets.is_none() => limit.packets = Some(p),
            Quantity::Size(_) | Quantity::Packets(_) => {
                return Err(UnitError(format!("'{text}': give at most one packet and one byte limit")))
            }
            _ => return Err(wrong_kind(text, "buffer limit (e.g. 100p, 64KB or 100p,64KB)")),
        }
    }
    Ok(limit)
}

impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0;
        if ns.is_multiple_of(NS_PER_SEC) {
            write!(f, "{}s", ns / NS_PER_SEC)
        } else if ns.is_multiple_of(1_000_000) {
            write!(f, "{}ms", ns / 1_000_000)
        } else if ns.is_multiple_of(1_000) {
            write!(f, "{}us", ns / 1_000)
        } else {
            write!(f, "{ns}ns")
        }
    }
}

impl fmt::Display for BitRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = self.0;
        match r {
            r if r >= 1_000_000_000_000 && r % 1_000_000_000_000 == 0 => write!(f, "{}Tbps", r / 1_000_000_000_000),
            r if r >= 1_000_000_000 && r % 1_000_000_000 == 0 => write!(f, "{}Gbps", r / 1_000_000_000),
            r if r >= 1_000_000 && r % 1_000_000 == 0 => write!(f, "{}Mbps", r / 1_000_000),
            r if r >= 1_000 && r % 1_000 == 0 => write!(f, "{}kbps", r / 1_000),
            r => write!(f, "{r}bps"),
        }
    }
}

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}B", self.0)
    }
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.packets, self.bytes) {
            (Some(p), None) => write!(f, "{p}p"),
            (None, Some(b)) => write!(f, "{b}"),
            (Some(p), Some(b)) => write!(f, "{p}p,{b}"),
            (None, None) => write!(f, "unlimited"),
        }
    }
}

/// The range of each unit type: a value read from a scenario outside it is refused, naming
/// the bound (every other key's range is in `limits.rs`).
/// The longest duration of any key (the run, delays, timers, starts): 10⁶ s, about 11.6 days.
/// The longest run in this repository's scenarios, experiments and tests is 2000 s; 10⁶ s is
/// 10¹⁵ ns, so an instant plus a delay (both at most this) never nears u64's 1.8·10¹⁹ ns.
pub const MAX_DURATION: Dur = Dur(1_000_000 * NS_PER_SEC);

/// The fastest rate of any key: 10 Tbit/s, a thousand times the fastest link in the repository
/// (10 Gbit/s). A link or source must also pass [`too_fast_for_nanoseconds`].
pub const MAX_RATE: BitRate = BitRate(10_000_000_000_000);

/// The largest size of any key (flow bytes, windows, buffers): 10¹⁵ bytes (1 PB). At the
/// ~10⁷ events per second the engine runs, carrying 10¹⁵ bytes in 1500-byte packets already
/// takes days; and 10¹⁵·8 bits fits u64 with a factor 2000 to spare.
pub const MAX_SIZE: Bytes = Bytes(1_000_000_000_000_000);

/// The most packets a buffer limit may name: 10⁹. A queued packet costs about 100 bytes of
/// memory, so a queue that reached it would need ~100 GB; the largest limit in the repository
/// is a few thousand packets.
pub const MAX_LIMIT_PACKETS: u64 = 1_000_000_000;

/// A number as a message shows it: plain, or in e-notation when very large or small (1e30,
/// not thirty-one digits).
pub fn shown(v: f64) -> String {
    if v != 0.0 && !(1e-4..1e15).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// Is `d` within [`MAX_DURATION`]? The message names the bound.
pub fn check_duration(d: Dur, shown: &str) -> Result<(), String> {
    if d > MAX_DURATION {
        return Err(format!("{shown} is longer than {MAX_DURATION}, the longest duration quench accepts"));
    }
    Ok(())
}

pub fn check_rate(r: BitRate, shown: &str) -> Result<(), String> {
    if r > MAX_RATE {
        return Err(format!("{shown} is faster than {MAX_RATE}, the fastest rate quench accepts"));
    }
    Ok(())
}

pub fn check_size(b: Bytes, shown: &str) -> Result<(), String> {
    if b > MAX_SIZE {
        return Err(format!("{shown} is larger than {:e} bytes, the largest size quench accepts", MAX_SIZE.0));
    }
    Ok(())
}

/// A unit value as written: a string with a unit, or a bare number in the base unit.
enum Raw {
    Int(u64),
    Float(f64),
    Text(String),
}

/// How a JSON value that is neither a number nor a string is named in an error.
pub(crate) fn describe(v: &serde_json::Value) -> String {
    use serde_json::Value;
    match v {
        Value::Null => "nothing (null)".into(),
        Value::Bool(b) => format!("{b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => format!("the string \"{s}\""),
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "a table".into(),
    }
}

impl Raw {
    /// Read a number or a string; anything else is an error listing the accepted forms.
    fn read<'de, D: Deserializer<'de>>(d: D, expected: &str) -> Result<Raw, D::Error> {
        use serde_json::Value;
        match Value::deserialize(d)? {
            Value::Number(n) => match (n.as_u64(), n.as_f64()) {
                (Some(v), _) => Ok(Raw::Int(v)),
                (None, Some(v)) => Ok(Raw::Float(v)),
                (None, None) => Err(de::Error::custom(format!("{n} is not a number quench can read"))),
            },
            Value::String(s) => Ok(Raw::Text(s)),
            other => Err(de::Error::custom(format!("expected {expected}, found {}", describe(&other)))),
        }
    }

    /// A bare number, in the base unit, as a whole u64 of `scale` base units (no saturation).
    fn base(self, what: &str, unit: &str, scale: f64) -> Result<Result<u64, String>, String> {
        let v = match self {
            Raw::Int(v) => v as f64,
            Raw::Float(v) if v.is_finite() && v >= 0.0 => v,
            Raw::Float(v) => return Err(format!("{what} {} must be finite and non-negative", shown(v))),
            Raw::Text(s) => return Ok(Err(s)),
        };
        whole(v * scale).map(Ok).ok_or_else(|| format!("{what} {} does not fit in 64 bits of {unit}", shown(v)))
    }
}

/// `Deserialize` (a string with a unit, or a bare number in the base unit, checked against the
/// type's range above) and `Serialize` (the string) for a unit type.
macro_rules! serde_unit {
    ($ty:ty, $parse:ident, $what:literal, $expected:literal, $unit:literal, $scale:expr, $from:expr, $check:expr) => {
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let raw = Raw::read(d, $expected)?;
                let (value, shown) = match raw.base($what, $unit, $scale).map_err(de::Error::custom)? {
                    Ok(base) => {
                        let value: $ty = $from(base);
                        let shown = value.to_string();
                        (value, shown)
                    }
                    Err(text) => ($parse(&text).map_err(de::Error::custom)?, format!("'{text}'")),
                };
                let check: fn(&$ty, &str) -> Result<(), String> = $check;
                check(&value, &shown).map_err(de::Error::custom)?;
                Ok(value)
            }
        }
        impl Serialize for $ty {
            fn serialize<S: SerdeSerializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.to_string())
            }
        }
    };
}

serde_unit!(
    Dur,
    parse_dur,
    "duration",
    "a duration such as \"25ms\", or a number of seconds",
    "nanoseconds",
    NS_PER_SEC as f64,
    Dur,
    |d, shown| check_duration(*d, shown)
);
serde_unit!(
    BitRate,
    parse_rate,
    "rate",
    "a rate such as \"10Mbps\", or a number of bit/s",
    "bit/s",
    1.0,
    BitRate,
    |r, shown| check_rate(*r, shown)
);
serde_unit!(
    Bytes,
    parse_bytes,
    "size",
    "a size such as \"1500B\" or \"64KB\", or a number of bytes",
    "bytes",
    1.0,
    Bytes,
    |b, shown| check_size(*b, shown)
);
serde_unit!(
    Limit,
    parse_limit,
    "limit",
    "a buffer limit such as \"100p\", \"64KB\" or \"100p,64KB\", or a number of packets",
    "packets",
    1.0,
    |p| Limit { packets: Some(p), bytes: None },
    |l, shown| {
        if l.packets.is_some_and(|p| p > MAX_LIMIT_PACKETS) {
            return Err(format!(
                "{shown} holds more than {:e} packets, the largest buffer quench accepts",
                MAX_LIMIT_PACKETS
            ));
        }
        l.bytes.map_or(Ok(()), |b| check_size(b, shown))
    }
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_examples() {
        assert_eq!(parse_rate("9600bps").unwrap(), BitRate(9600));
        assert_eq!(parse_rate("10Mbps").unwrap(), BitRate(10_000_000));
        assert_eq!(parse_rate("1.5 Mbps").unwrap(), BitRate(1_500_000));
        assert_eq!(parse_dur("25ms").unwrap(), Dur(25_000_000));
        assert_eq!(parse_dur("1.5s").unwrap(), Dur(1_500_000_000));
        assert_eq!(parse_dur("2sec").unwrap(), Dur::from_secs(2));
        assert_eq!(parse_bytes("64KB").unwrap(), Bytes(64_000));
        assert_eq!(parse_bytes("64KiB").unwrap(), Bytes(65_536));
        assert_eq!(parse_limit("100p").unwrap().packets, Some(100));
        assert_eq!(parse_limit("80KB").unwrap().bytes, Some(Bytes(80_000)));
        let both = parse_limit("100p, 64KB").unwrap();
        assert_eq!((both.packets, both.bytes), (Some(100), Some(Bytes(64_000))));
        assert!(parse_limit("1p,2p").is_err());
        assert_eq!(parse_quantity("1e3bps").unwrap(), Quantity::Rate(BitRate(1000)));
    }

    #[test]
    fn rejects_typos_and_wrong_dimensions_with_a_reason() {
        let e = parse_rate("10Mbsp").unwrap_err().0;
        assert!(e.contains("unknown unit 'Mbsp'"), "{e}");
        assert!(parse_rate("25ms").unwrap_err().0.contains("not a rate"));
        assert!(parse_dur("-1s").unwrap_err().0.contains("non-negative"));
        assert!(parse_dur("10").unwrap_err().0.contains("no unit"));
        assert!(parse_limit("1.5p").is_err());
    }

    #[test]
    fn serializer_carries_the_remainder_so_long_runs_are_exact() {
        // 1500 B at 9600 bit/s = 1.25 s exactly; 1 B at 3 bit/s is 8/3 s: carried, 3 bytes = 8 s.
        let mut s = Serializer::new(BitRate(3));
        let total: u64 = (0..3).map(|_| s.next_tx_time(Bytes(1)).0).sum();
        assert_eq!(total, 8 * NS_PER_SEC);
        assert_eq!(BitRate(9600).tx_time(Bytes(1500)), Dur(1_250_000_000));
    }

    /// The serializer's reuse of the last size's time gives exactly the carried division,
    /// at link rates from 3 bit/s to near u64::MAX (where r + c overflows 64 bits).
    #[test]
    fn serializer_matches_the_carried_division() {
        let mut rng = crate::rng::Rng::from_seed(11);
        for rate in [3, 9600, 622_000_000, 1_000_000_000, 40_000_000_007, u64::MAX / 3, u64::MAX - 1] {
            let mut s = Serializer::new(BitRate(rate));
            let mut carried = 0;
            for _ in 0..2000 {
                // Runs of a few sizes, as on a link, and now and then a new one.
                let size = Bytes([40, 52, 1500][rng.range_inclusive(0, 2) as usize] + rng.range_inclusive(0, 1) * 7);
                let (want, rem) = BitRate(rate).tx_time_with_remainder(size, carried);
                carried = rem;
                assert_eq!(s.next_tx_time(size), want, "rate {rate}, size {size:?}");
                assert_eq!(s.remainder, carried);
            }
        }
    }

    #[test]
    fn display_round_trips() {
        for s in ["25ms", "1s", "10Mbps", "9600bps", "100us", "2Tbps"] {
            let q = parse_quantity(s).unwrap();
            let shown = match q {
                Quantity::Time(d) => d.to_string(),
                Quantity::Rate(r) => r.to_string(),
                _ => unreachable!(),
            };
            assert_eq!(shown, s);
        }
    }
}
