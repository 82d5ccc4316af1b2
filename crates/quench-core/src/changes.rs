//! Scheduled changes of links: a link's rate, its delay, and whether it is up, changed at
//! given times during a run, once or periodically (`every`, cycling through a list of values:
//! a satellite path's RTT at each handover, a link that flaps).
//!
//! A scenario writes them on a link (`schedule = [{ at = "10s", rate = "5Mbps" }, ...]`, both
//! directions of a duplex link) or at the top level (`link_changes = [{ link = "agg0_0->core1",
//! at = "1s", up = false }]`, for links a fabric generated; the reverse direction too unless
//! `both_directions = false`). What a change does to a link is the link's business
//! (`Link::set_rate`, `Link::set_delay`, `Link::go_down`, `Link::come_up`); when routing
//! recomputes after a link goes down or up is the world's (`routing_convergence`).
//!
//! Only the next occurrence of each entry has an event pending: a periodic change over a long
//! run costs one event at a time, not a list made up front.
//!
//! Owns the changes' specification, their validation and their timetable (which value applies
//! at the k-th occurrence, and when the next one comes). It never touches a link or the event
//! queue: the world applies what `Timetable::due` answers.

use crate::error::ConfigError;
use crate::limits;
use crate::packet::LinkId;
use crate::units::{BitRate, Bytes, Dur, Time};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// The shortest period of a periodic change: below a microsecond a change would come more
/// often than the fastest link quench accepts sends a minimum-size packet, and the run would
/// be all changes.
pub const MIN_CHANGE_PERIOD: Dur = Dur::from_micros(1);

/// The most values one periodic change cycles through (a satellite constellation's handovers
/// over an orbit are some tens; a longer pattern belongs in a capacity trace, `capacity.rs`).
pub const MAX_CYCLE_VALUES: usize = 4096;

/// One value, or a list cycled through by a periodic change (its k-th occurrence takes value
/// k mod len). Read by hand, so that a bad element is reported with its own type's message.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Values<T> {
    One(T),
    Cycle(Vec<T>),
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Values<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        match Value::deserialize(d)? {
            Value::Array(items) => {
                let values = items.into_iter().map(T::deserialize).collect::<Result<Vec<T>, _>>();
                values.map(Values::Cycle).map_err(D::Error::custom)
            }
            one => T::deserialize(one).map(Values::One).map_err(D::Error::custom),
        }
    }
}

impl<T: Copy> Values<T> {
    /// The value of the `k`-th occurrence (the first is 0).
    fn at(&self, k: u64) -> T {
        match self {
            Values::One(v) => *v,
            Values::Cycle(vs) => vs[(k % vs.len() as u64) as usize],
        }
    }

    fn len(&self) -> usize {
        match self {
            Values::One(_) => 1,
            Values::Cycle(vs) => vs.len(),
        }
    }

    fn all(&self) -> &[T] {
        match self {
            Values::One(v) => std::slice::from_ref(v),
            Values::Cycle(vs) => vs,
        }
    }
}

fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

/// A change as a scenario writes it (see the module header).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkChangeSpec {
    /// The link changed, by name ("from->to"): at the top level only; a link's own schedule
    /// names none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    /// With `link`: change the reverse direction too, if there is one (a cable fails both ways).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub both_directions: bool,
    /// When the change first applies, from the run's start.
    #[serde(default)]
    pub at: Dur,
    /// Applies again every this long after `at`, cycling through the values' lists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every: Option<Dur>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Values<BitRate>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<Values<Dur>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub up: Option<Values<bool>>,
}

impl LinkChangeSpec {
    /// Check the change against the run's `duration`; `smallest` is the smallest packet the
    /// link sends, with its framing (a rate too fast for nanosecond time is refused as a
    /// link's own rate is).
    pub fn validate(&self, duration: Dur, smallest: Bytes) -> Result<(), ConfigError> {
        if self.rate.is_none() && self.delay.is_none() && self.up.is_none() {
            return Err(ConfigError::new("", "changes nothing: give `rate`, `delay` or `up`"));
        }
        if self.at > duration {
            return Err(ConfigError::new("at", format!("{} is after the run's end at {duration}", self.at)));
        }
        if let Some(every) = self.every {
            if !(MIN_CHANGE_PERIOD..=duration).contains(&every) {
                let why = format!("{every} must be between {MIN_CHANGE_PERIOD} and the run's duration, {duration}");
                return Err(ConfigError::new("every", why));
            }
        }
        let lens = [("rate", self.rate.as_ref().map(Values::len)), ("delay", self.delay.as_ref().map(Values::len))];
        for (key, len) in lens.into_iter().chain([("up", self.up.as_ref().map(Values::len))]) {
            match len {
                Some(0) => return Err(ConfigError::new(key, "an empty list")),
                Some(n) if n > MAX_CYCLE_VALUES => {
                    return Err(ConfigError::new(key, format!("{n} values exceed {MAX_CYCLE_VALUES}")))
                }
                Some(n) if n > 1 && self.every.is_none() => {
                    return Err(ConfigError::new(key, "a list of values is cycled through: it needs `every`"))
                }
                _ => {}
            }
        }
        for &rate in self.rate.as_ref().map_or(&[][..], Values::all) {
            if rate.0 == 0 {
                return Err(ConfigError::new("rate", "must be positive (take a link down with `up = false`)"));
            }
            if let Some(why) = limits::too_fast_for_nanoseconds(rate, smallest, "the smallest packet with framing") {
                return Err(ConfigError::new("rate", why));
            }
        }
        Ok(())
    }
}

/// What one occurrence of a change sets.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Change {
    pub rate: Option<BitRate>,
    pub delay: Option<Dur>,
    pub up: Option<bool>,
}

/// One validated change and the links it applies to.
struct Entry {
    links: Vec<LinkId>,
    spec: LinkChangeSpec,
    /// Occurrences applied so far.
    done: u64,
}

/// Every change of a run, and which occurrence of each comes next.
#[derive(Default)]
pub struct Timetable {
    entries: Vec<Entry>,
}

impl Timetable {
    /// Add a validated change that applies to `links`.
    pub fn add(&mut self, links: Vec<LinkId>, spec: LinkChangeSpec) {
        self.entries.push(Entry { links, spec, done: 0 });
    }

    /// Every entry's first occurrence: (entry, time), for the world to schedule.
    pub fn first_times(&self) -> impl Iterator<Item = (u32, Time)> + '_ {
        self.entries.iter().enumerate().map(|(i, e)| (i as u32, Time::ZERO + e.spec.at))
    }

    /// The links whose pipe a change may alter: a new delay, or going down (which cuts off
    /// the packets on it). Sorted, without repeats.
    pub fn links_whose_pipe_changes(&self) -> Vec<LinkId> {
        let touched = self.entries.iter().filter(|e| e.spec.delay.is_some() || e.spec.up.is_some());
        let mut links: Vec<LinkId> = touched.flat_map(|e| e.links.iter().copied()).collect();
        links.sort_unstable_by_key(|l| l.0);
        links.dedup();
        links
    }

    /// Whether any change takes a link down or up (routing may then recompute).
    pub fn takes_links_down(&self) -> bool {
        self.entries.iter().any(|e| e.spec.up.is_some())
    }

    /// Entry `i`'s occurrence due now: the links it applies to, what it sets, and when the
    /// entry's next occurrence comes (None: it was the last).
    pub fn due(&mut self, i: u32) -> (&[LinkId], Change, Option<Time>) {
        let e = &mut self.entries[i as usize];
        let k = e.done;
        e.done += 1;
        let s = &e.spec;
        let change = Change {
            rate: s.rate.as_ref().map(|v| v.at(k)),
            delay: s.delay.as_ref().map(|v| v.at(k)),
            up: s.up.as_ref().map(|v| v.at(k)),
        };
        let next = s.every.and_then(|every| {
            let offset = every.0.checked_mul(e.done)?.checked_add(s.at.0)?;
            Some(Time(offset))
        });
        (&e.links, change, next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A change from the JSON of its fields (a scenario's TOML reaches the core as JSON).
    fn spec(fields: &str) -> Result<LinkChangeSpec, String> {
        serde_json::from_str(&format!("{{{fields}}}")).map_err(|e| e.to_string())
    }

    /// A periodic change cycles through its values at `at + k·every`: a satellite path whose
    /// delay changes every 15 s among three values.
    #[test]
    fn a_periodic_change_cycles_through_its_values() {
        let s = spec(r#""at": "15s", "every": "15s", "delay": ["300ms", "350ms", "320ms"]"#).unwrap();
        s.validate(Dur::from_secs(100), Bytes(40)).unwrap();
        let mut t = Timetable::default();
        t.add(vec![LinkId(3)], s);
        assert_eq!(t.first_times().collect::<Vec<_>>(), vec![(0, Time(15_000_000_000))]);
        let mut seen = vec![];
        for _ in 0..4 {
            let (links, change, next) = t.due(0);
            assert_eq!(links, &[LinkId(3)]);
            seen.push((change.delay.unwrap().0 / 1_000_000, next.unwrap().0 / 1_000_000_000));
        }
        assert_eq!(seen, vec![(300, 30), (350, 45), (320, 60), (300, 75)]);
    }

    #[test]
    fn bad_changes_name_their_key() {
        let d = Dur::from_secs(10);
        let refused = |text: &str| spec(text).and_then(|s| s.validate(d, Bytes(40)).map_err(|e| e.to_string()));
        for (text, key) in [
            (r#""at": "1s""#, "changes nothing"),
            (r#""at": "11s", "up": false"#, "at: "),
            (r#""every": "0s", "up": [false, true]"#, "every: "),
            (r#""at": "1s", "up": [false, true]"#, "up: a list of values is cycled through"),
            (r#""every": "1s", "rate": []"#, "rate: an empty list"),
            (r#""rate": "0bps""#, "rate: must be positive"),
            (r#""rate": "1Tbps""#, "too fast for nanosecond time"),
        ] {
            let e = refused(text).unwrap_err();
            assert!(e.contains(key), "{text}: {e}");
        }
        assert!(spec(r#""delay": ["1ms", "soon"]"#).unwrap_err().contains("soon"));
        assert!(spec(r#""up": "no""#).is_err());
        assert!(spec(r#""at": "1s", "when": "2s", "up": true"#).unwrap_err().contains("when"));
    }
}
