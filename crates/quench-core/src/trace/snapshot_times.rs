//! When a run takes its snapshots (`record.snapshots`): the instants as the scenario names
//! them, checked against the run's duration. Taking them, and the tables they fill, belong to
//! `snapshots.rs`, which reads the world; this module reads nothing but the instants, so the
//! recorder's configuration can hold them.

use crate::limits::MAX_DURATION;
use crate::units::{Dur, Time};
use serde::{Deserialize, Serialize};

/// The most instants a scenario may ask for: each writes a row per link and per flow, so
/// 10⁶ instants of a 10-link, 10-flow dumbbell are 2·10⁷ rows (about 2 GB as a DataFrame).
pub const MAX_SNAPSHOTS: u64 = 1_000_000;

/// When to take snapshots: every `interval` from the start (`"100ms"`), or at listed instants
/// (`["10s", "30s"]`, strictly increasing). Instants past the run's end are not taken.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SnapshotTimes {
    Every(Dur),
    At(Vec<Dur>),
}

impl SnapshotTimes {
    /// Check the instants against the run's `duration`; the message for `record.snapshots`.
    pub fn validate(&self, duration: Dur) -> Result<(), String> {
        match self {
            SnapshotTimes::Every(d) if d.is_zero() => Err("the interval must be positive".into()),
            SnapshotTimes::Every(d) if duration.0 / d.0 > MAX_SNAPSHOTS => Err(format!(
                "every {d} over {duration} is {} snapshots, more than the {MAX_SNAPSHOTS} allowed",
                duration.0 / d.0
            )),
            SnapshotTimes::At(ts) if ts.len() as u64 > MAX_SNAPSHOTS => {
                Err(format!("{} instants, more than the {MAX_SNAPSHOTS} allowed", ts.len()))
            }
            SnapshotTimes::At(ts) => match ts.windows(2).position(|w| w[0] >= w[1]) {
                Some(i) => Err(format!("instants must increase: [{}] = {} is not after {}", i + 1, ts[i + 1], ts[i])),
                None => Ok(()),
            },
            SnapshotTimes::Every(_) => Ok(()),
        }
    }

    /// The `i`th instant, if there is one at or before `end`.
    pub(crate) fn nth(&self, i: u64, end: Time) -> Option<Time> {
        let at = match self {
            SnapshotTimes::Every(d) => Dur(d.0.checked_mul(i + 1).filter(|&ns| ns <= MAX_DURATION.0)?),
            SnapshotTimes::At(ts) => *ts.get(i as usize)?,
        };
        Some(Time::ZERO + at).filter(|&t| t <= end)
    }
}
