//! The paths listed flows are pinned to (`path`, `reverse_path`: node names, as htsim's
//! per-flow routes), checked and turned into links while the world is built: every name is a
//! node, the path starts at the flow's source and ends at its destination (the reverse, for
//! `reverse_path`), each node is joined to the next by a link, no node repeats, and there are
//! at most [`MAX_PATH_NODES`] nodes. Errors name the key (`flows[3].path[2]`).
//!
//! Owns only the check; the routes keep the result (`routing/pinned.rs`).

use crate::error::ConfigError;
use crate::packet::{LinkId, NodeId};
use std::collections::HashMap;

/// The most nodes a pinned path may name: far beyond any fabric's diameter, and a bound on
/// the per-hop scan of a pinned route.
pub const MAX_PATH_NODES: usize = 64;

/// Each directed link by its ends, for the check (built once, only when some flow is pinned).
pub(crate) struct LinkIndex(HashMap<(NodeId, NodeId), LinkId>);

impl LinkIndex {
    pub fn new(ends: &[(NodeId, NodeId)]) -> Self {
        // The builder refuses a second link between two nodes in one direction.
        LinkIndex(ends.iter().enumerate().map(|(i, &e)| (e, LinkId(i as u32))).collect())
    }
}

/// The links of path `names` (key `key`, e.g. `flows[3].path`) from `from` to `to`, with
/// `resolve` giving each name's node and `name_of` each node's name.
pub(crate) fn path_links(
    names: &[String],
    key: &str,
    (from, to): (NodeId, NodeId),
    resolve: impl Fn(&str, &str) -> Result<NodeId, ConfigError>,
    name_of: impl Fn(NodeId) -> String,
    links: &LinkIndex,
) -> Result<Vec<LinkId>, ConfigError> {
    if names.len() < 2 || names.len() > MAX_PATH_NODES {
        let why = format!(
            "names {} nodes; a path names 2 to {MAX_PATH_NODES}, from the source to the destination",
            names.len()
        );
        return Err(ConfigError::new(key, why));
    }
    let mut nodes = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        let at = format!("{key}[{i}]");
        let n = resolve(name, &at)?;
        if nodes.contains(&n) {
            return Err(ConfigError::new(at, format!("'{name}' comes twice; a path visits each node once")));
        }
        nodes.push(n);
    }
    let last = names.len() - 1;
    for (i, want) in [(0, from), (last, to)] {
        if nodes[i] != want {
            let end = if i == 0 { "start at" } else { "end at" };
            let why = format!("is '{}'; the path must {end} '{}'", names[i], name_of(want));
            return Err(ConfigError::new(format!("{key}[{i}]"), why));
        }
    }
    let mut out = Vec::with_capacity(last);
    for (i, pair) in nodes.windows(2).enumerate() {
        let Some(&l) = links.0.get(&(pair[0], pair[1])) else {
            let why = format!("no link joins '{}' to '{}'", names[i], names[i + 1]);
            return Err(ConfigError::new(format!("{key}[{}]", i + 1), why));
        };
        out.push(l);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// a - b - c in a line, and d joined to a only.
    fn check(path: &[&str]) -> Result<Vec<LinkId>, ConfigError> {
        let names = ["a", "b", "c", "d"];
        let n = |i| NodeId(i);
        let ends = [(n(0), n(1)), (n(1), n(0)), (n(1), n(2)), (n(2), n(1)), (n(0), n(3)), (n(3), n(0))];
        let resolve = |s: &str, key: &str| {
            names
                .iter()
                .position(|&x| x == s)
                .map(|i| NodeId(i as u32))
                .ok_or_else(|| ConfigError::new(key, format!("no host or router named '{s}'")))
        };
        let path: Vec<String> = path.iter().map(|s| s.to_string()).collect();
        let name_of = |x: NodeId| names[x.index()].to_string();
        path_links(&path, "flows[3].path", (n(0), n(2)), resolve, name_of, &LinkIndex::new(&ends))
    }

    #[test]
    fn a_joined_path_gives_its_links() {
        assert_eq!(check(&["a", "b", "c"]).unwrap(), vec![LinkId(0), LinkId(2)]);
    }

    #[test]
    fn bad_paths_name_the_key() {
        let e = check(&["a", "c"]).unwrap_err();
        assert_eq!((e.path.as_str(), e.message.as_str()), ("flows[3].path[1]", "no link joins 'a' to 'c'"));
        assert_eq!(check(&["a", "x", "c"]).unwrap_err().path, "flows[3].path[1]");
        assert_eq!(check(&["b", "c"]).unwrap_err().path, "flows[3].path[0]");
        assert_eq!(check(&["a", "b"]).unwrap_err().path, "flows[3].path[1]");
        assert_eq!(check(&["a", "b", "a", "b", "c"]).unwrap_err().path, "flows[3].path[2]");
        assert_eq!(check(&["a"]).unwrap_err().path, "flows[3].path");
        let long: Vec<&str> = vec!["a"; MAX_PATH_NODES + 1];
        assert_eq!(check(&long).unwrap_err().path, "flows[3].path");
    }
}
