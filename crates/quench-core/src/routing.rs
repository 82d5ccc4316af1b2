//! Static shortest-path routing, computed once when the world is built: for every destination
//! a breadth-first search over incoming links gives each node its next hop (fewest hops; ties
//! go to the link declared first, so routes are deterministic).

use crate::packet::{LinkId, NodeId};
use std::collections::VecDeque;

const NO_ROUTE: u32 = u32::MAX;

pub struct Routes {
    nodes: usize,
    /// next_hop[node * nodes + dst]
    next_hop: Vec<u32>,
}

impl Routes {
    /// `links[i] = (from, to)` of link i.
    pub fn compute(nodes: usize, links: &[(NodeId, NodeId)]) -> Routes {
        let mut incoming: Vec<Vec<u32>> = vec![Vec::new(); nodes];
        for (i, &(_, to)) in links.iter().enumerate() {
            incoming[to.index()].push(i as u32);
        }
        let mut next_hop = vec![NO_ROUTE; nodes * nodes];
        let mut seen = vec![false; nodes];
        let mut frontier = VecDeque::new();
        for dst in 0..nodes {
            seen.iter_mut().for_each(|s| *s = false);
            seen[dst] = true;
            frontier.push_back(dst);
            while let Some(n) = frontier.pop_front() {
                for &l in &incoming[n] {
                    let from = links[l as usize].0.index();
                    if !seen[from] {
                        seen[from] = true;
                        next_hop[from * nodes + dst] = l;
                        frontier.push_back(from);
                    }
                }
            }
        }
        Routes { nodes, next_hop }
    }

    #[inline]
    pub fn next_hop(&self, at: NodeId, dst: NodeId) -> Option<LinkId> {
        let l = self.next_hop[at.index() * self.nodes + dst.index()];
        (l != NO_ROUTE).then_some(LinkId(l))
    }

    /// The links of the path from `src` to `dst`, if one exists.
    pub fn path(&self, links: &[(NodeId, NodeId)], src: NodeId, dst: NodeId) -> Option<Vec<LinkId>> {
        let mut path = Vec::new();
        let mut at = src;
        while at != dst {
            let l = self.next_hop(at, dst)?;
            path.push(l);
            at = links[l.index()].1;
        }
        Some(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortest_paths_on_a_dumbbell_with_a_detour() {
        // 0 - 1 - 2 - 3 directly, plus a longer detour 1 - 4 - 5 - 2.
        let duplex = |a: u32, b: u32| [(NodeId(a), NodeId(b)), (NodeId(b), NodeId(a))];
        let links: Vec<_> = [duplex(0, 1), duplex(1, 2), duplex(2, 3), duplex(1, 4), duplex(4, 5), duplex(5, 2)]
            .into_iter()
            .flatten()
            .collect();
        let r = Routes::compute(6, &links);
        let p = r.path(&links, NodeId(0), NodeId(3)).unwrap();
        assert_eq!(p, vec![LinkId(0), LinkId(2), LinkId(4)]);
        let back = r.path(&links, NodeId(3), NodeId(0)).unwrap();
        assert_eq!(back, vec![LinkId(5), LinkId(3), LinkId(1)]);
        let isolated = Routes::compute(7, &links);
        assert!(isolated.path(&links, NodeId(0), NodeId(6)).is_none());
    }
}
