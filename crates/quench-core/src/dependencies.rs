//! Flow dependencies: a listed flow declared with `after = ["a", "b"]` starts once every flow it
//! names has completed (its last byte delivered to the receiving application: the flows
//! table's `completion_s`), its own `start` then counted from the last of those completions
//! (an offset, 0 by default). A ring all-reduce is a set of such chains. A flow whose
//! predecessor never completes never starts, and its row says so (no completion: NaN FCT).
//!
//! The builder checks the declarations ([`Dependencies::new`]: every name is a listed flow,
//! at most [`MAX_AFTER`] of them, no cycle); the world asks, after each activation of a flow
//! others wait for, whether it has completed, and starts the flows it releases.
//!
//! Owns which flows wait and for whom; it reads no endpoint and schedules nothing itself.

use crate::error::ConfigError;
use crate::packet::FlowId;
use crate::units::{Dur, Time};
use std::collections::HashMap;

/// The most flows one flow may wait for (a ring's step waits for one, a barrier for a few).
pub const MAX_AFTER: usize = 64;

/// The listed flows' dependencies: who waits, for how many, and for whom.
#[derive(Debug)]
pub(crate) struct Dependencies {
    /// Per listed flow: predecessors not yet complete.
    waiting: Vec<u32>,
    /// Per listed flow: the flows waiting for it.
    dependents: Vec<Vec<FlowId>>,
    /// Per listed flow: whether some flow waits for it and it has not completed yet.
    awaited: Vec<bool>,
    /// Per listed flow: its `start`, an offset from its last predecessor's completion.
    offsets: Vec<Dur>,
}

impl Dependencies {
    /// The dependencies of listed flows named `names` (flow i's name is `names[i]`), flow i
    /// waiting for the flows `after[i]` names, starting `starts[i]` after the last; None when
    /// no flow waits. Errors name the key (`flows[i].after[j]`).
    pub fn new(names: &[&str], after: &[&[String]], starts: &[Dur]) -> Result<Option<Self>, ConfigError> {
        if after.iter().all(|a| a.is_empty()) {
            return Ok(None);
        }
        let mut index: HashMap<&str, Option<usize>> = HashMap::with_capacity(names.len());
        for (i, &n) in names.iter().enumerate() {
            index.entry(n).and_modify(|e| *e = None).or_insert(Some(i));
        }
        let count = names.len();
        let mut d = Dependencies {
            waiting: vec![0; count],
            dependents: vec![Vec::new(); count],
            awaited: vec![false; count],
            offsets: starts.to_vec(),
        };
        let mut preds: Vec<Vec<usize>> = vec![Vec::new(); count];
        for (i, names_after) in after.iter().enumerate() {
            if names_after.len() > MAX_AFTER {
                let why = format!("waits for {} flows; at most {MAX_AFTER}", names_after.len());
                return Err(ConfigError::new(format!("flows[{i}].after"), why));
            }
            for (j, name) in names_after.iter().enumerate() {
                let key = format!("flows[{i}].after[{j}]");
                let p = match index.get(name.as_str()) {
                    Some(Some(p)) => *p,
                    Some(None) => return Err(ConfigError::new(key, format!("two listed flows are named '{name}'"))),
                    None => return Err(ConfigError::new(key, format!("no listed flow named '{name}'"))),
                };
                if preds[i].contains(&p) {
                    return Err(ConfigError::new(key, format!("names '{name}' twice")));
                }
                preds[i].push(p);
                d.waiting[i] += 1;
                d.dependents[p].push(FlowId(i as u32));
                d.awaited[p] = true;
            }
        }
        if let Some(cycle) = find_cycle(&preds) {
            let names: Vec<&str> = cycle.iter().map(|&i| names[i]).collect();
            let why = format!("flows wait for each other in a cycle: {}", names.join(" -> "));
            return Err(ConfigError::new(format!("flows[{}].after", cycle[0]), why));
        }
        Ok(Some(d))
    }

    /// Whether listed flow `f` waits for others (its start is not scheduled up front).
    pub fn waits(&self, f: FlowId) -> bool {
        self.waiting[f.index()] > 0
    }

    /// Whether some flow waits for `f` and `f` has not completed yet.
    #[inline]
    pub fn awaited(&self, f: FlowId) -> bool {
        self.awaited.get(f.index()).copied().unwrap_or(false)
    }

    /// Flow `f` completed at `at`: the flows that no longer wait for anything, each with its
    /// start time (`at` plus its offset).
    pub fn completed(&mut self, f: FlowId, at: Time) -> Vec<(FlowId, Time)> {
        self.awaited[f.index()] = false;
        let mut ready = Vec::new();
        for &g in &self.dependents[f.index()] {
            let w = &mut self.waiting[g.index()];
            *w -= 1;
            if *w == 0 {
                ready.push((g, at + self.offsets[g.index()]));
            }
        }
        ready
    }
}

/// A cycle among the flows, where flow i waits for the flows `preds[i]`: the flows on it in
/// waiting order, the first repeated at the end (`[a, b, a]`: a waits for b, b for a).
fn find_cycle(preds: &[Vec<usize>]) -> Option<Vec<usize>> {
    // Depth-first, iteratively: 0 unvisited, 1 on the current path, 2 done.
    let mut state = vec![0u8; preds.len()];
    for root in 0..preds.len() {
        if state[root] != 0 {
            continue;
        }
        let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
        state[root] = 1;
        while let Some(&mut (n, ref mut next)) = stack.last_mut() {
            let Some(&p) = preds[n].get(*next) else {
                state[n] = 2;
                stack.pop();
                continue;
            };
            *next += 1;
            match state[p] {
                0 => {
                    state[p] = 1;
                    stack.push((p, 0));
                }
                1 => {
                    let from = stack.iter().position(|&(m, _)| m == p).expect("on the path");
                    let mut cycle: Vec<usize> = stack[from..].iter().map(|&(m, _)| m).collect();
                    cycle.push(p);
                    return Some(cycle);
                }
                _ => {}
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deps(after: &[&[&str]]) -> Result<Option<Dependencies>, ConfigError> {
        let names = ["a", "b", "c", "d"];
        let after: Vec<Vec<String>> = after.iter().map(|a| a.iter().map(|s| s.to_string()).collect()).collect();
        let refs: Vec<&[String]> = after.iter().map(Vec::as_slice).collect();
        Dependencies::new(&names[..after.len()], &refs, &vec![Dur::from_millis(1); after.len()])
    }

    /// A chain a <- b <- c: b starts at a's completion plus its offset, c at b's.
    #[test]
    fn a_chain_releases_one_flow_at_a_time() {
        let mut d = deps(&[&[], &["a"], &["b"]]).unwrap().unwrap();
        assert!(!d.waits(FlowId(0)) && d.waits(FlowId(1)) && d.waits(FlowId(2)));
        assert!(d.awaited(FlowId(0)) && d.awaited(FlowId(1)) && !d.awaited(FlowId(2)));
        let t = Time(5_000_000);
        assert_eq!(d.completed(FlowId(0), t), vec![(FlowId(1), Time(6_000_000))]);
        assert!(!d.awaited(FlowId(0)));
        assert_eq!(d.completed(FlowId(1), Time(9_000_000)), vec![(FlowId(2), Time(10_000_000))]);
    }

    /// A flow waiting for two starts only after both.
    #[test]
    fn a_join_waits_for_every_predecessor() {
        let mut d = deps(&[&[], &[], &["a", "b"]]).unwrap().unwrap();
        assert_eq!(d.completed(FlowId(1), Time(7)), vec![]);
        assert_eq!(d.completed(FlowId(0), Time(9)), vec![(FlowId(2), Time(9 + 1_000_000))]);
    }

    #[test]
    fn bad_declarations_name_the_key() {
        assert!(deps(&[&[], &[]]).unwrap().is_none(), "no flow waits: nothing kept");
        let e = deps(&[&[], &["a", "zz"]]).unwrap_err();
        assert_eq!((e.path.as_str(), e.message.as_str()), ("flows[1].after[1]", "no listed flow named 'zz'"));
        let e = deps(&[&["b"], &["c"], &["a"]]).unwrap_err();
        assert_eq!(e.message, "flows wait for each other in a cycle: a -> b -> c -> a", "{e}");
        assert_eq!(e.path, "flows[0].after");
        let e = deps(&[&["a"]]).unwrap_err();
        assert_eq!(e.message, "flows wait for each other in a cycle: a -> a");
        let e = deps(&[&[], &["a", "a"]]).unwrap_err();
        assert_eq!(e.path, "flows[1].after[1]");
        let many: Vec<&str> = vec!["a"; MAX_AFTER + 1];
        let e = deps(&[&[], &many]).unwrap_err();
        assert_eq!(e.path, "flows[1].after");
    }
}
