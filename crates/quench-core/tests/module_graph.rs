//! The core's top-level modules depend on each other without a cycle: each module can be read,
//! tested and replaced from the ones below it. A dependency is any path `crate::m::...` (or
//! `$crate::m::...` in a macro) written in module `m'`'s files outside comments and test code;
//! test code is a `#[cfg(test)]` item, and the files the crate's convention keeps for tests alone
//! (`tests.rs`, `*_tests.rs`).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Cycles known and accepted, each as its sorted set of modules, with the reason it stands.
/// None: a new cycle is an error wherever it appears.
const KNOWN_CYCLES: &[&[&str]] = &[];

type Graph = BTreeMap<String, BTreeSet<String>>;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("the source folder is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The text without `//` comments (doc comments included: a link in prose is no dependency).
fn without_comments(text: &str) -> String {
    text.lines().map(|line| line.find("//").map_or(line, |i| &line[..i])).collect::<Vec<_>>().join("\n")
}

/// The end (exclusive) of the item that starts at byte `from`: its `;` or `,` (a statement, or
/// a field of a struct or of its initializer), the brace that closes its first `{`, or the
/// closing bracket of what encloses it. Parentheses and square brackets nest as braces do, so
/// the commas of a parameter list or a generic's arguments in brackets do not end it.
fn item_end(text: &[u8], from: usize) -> usize {
    let mut depth = 0usize;
    for (i, &c) in text.iter().enumerate().skip(from) {
        match c {
            b';' | b',' if depth == 0 => return i + 1,
            b'{' | b'(' | b'[' => depth += 1,
            b'}' | b')' | b']' if depth == 0 => return i,
            b'}' | b')' | b']' => {
                depth -= 1;
                if depth == 0 && c == b'}' {
                    return i + 1;
                }
            }
            _ => {}
        }
    }
    text.len()
}

/// The text without its `#[cfg(test)]` items.
fn without_tests(text: &str) -> String {
    const MARK: &str = "#[cfg(test)]";
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(MARK) {
        out.push_str(&rest[..i]);
        let after = i + MARK.len();
        rest = &rest[item_end(rest.as_bytes(), after)..];
    }
    out.push_str(rest);
    out
}

/// The top-level modules that `text` names as `crate::m`.
fn named_modules(text: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let mut deps = BTreeSet::new();
    for (i, _) in text.match_indices("crate::") {
        let name: String = text[i + 7..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        if modules.contains(&name) {
            deps.insert(name);
        }
    }
    deps
}

fn module_graph() -> Graph {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let top = |p: &Path| {
        let first = p.strip_prefix(&src).unwrap().components().next().unwrap();
        first.as_os_str().to_string_lossy().trim_end_matches(".rs").to_string()
    };
    let modules: BTreeSet<String> = files.iter().map(|p| top(p)).filter(|m| m != "lib").collect();
    let mut graph: Graph = modules.iter().map(|m| (m.clone(), BTreeSet::new())).collect();
    for path in &files {
        let (module, stem) = (top(path), path.file_stem().unwrap().to_string_lossy().to_string());
        if module == "lib" || stem == "tests" || stem.ends_with("_tests") {
            continue;
        }
        let text = without_tests(&without_comments(&fs::read_to_string(path).unwrap()));
        let deps = named_modules(&text, &modules);
        graph.get_mut(&module).unwrap().extend(deps.into_iter().filter(|d| *d != module));
    }
    graph
}

/// The strongly connected components of more than one module (Tarjan's algorithm).
fn cycles(graph: &Graph) -> Vec<BTreeSet<String>> {
    struct State<'a> {
        graph: &'a Graph,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        found: Vec<BTreeSet<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        for w in &s.graph[v] {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                s.low.entry(v).and_modify(|l| *l = (*l).min(lw));
            } else if s.stack.contains(&w) {
                let iw = s.index[w];
                s.low.entry(v).and_modify(|l| *l = (*l).min(iw));
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = BTreeSet::new();
            loop {
                let w = s.stack.pop().unwrap();
                component.insert(w.to_string());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                s.found.push(component);
            }
        }
    }
    let mut s = State { graph, index: BTreeMap::new(), low: BTreeMap::new(), stack: Vec::new(), found: Vec::new() };
    for v in graph.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.found
}

#[test]
fn the_core_modules_form_no_cycle() {
    let graph = module_graph();
    let known: Vec<BTreeSet<String>> = KNOWN_CYCLES.iter().map(|c| c.iter().map(|m| m.to_string()).collect()).collect();
    let unexpected: Vec<String> = cycles(&graph)
        .into_iter()
        .filter(|c| !known.contains(c))
        .map(|c| {
            let edges: Vec<String> =
                c.iter().map(|m| format!("{m} -> {:?}", graph[m].intersection(&c).collect::<Vec<_>>())).collect();
            edges.join("; ")
        })
        .collect();
    assert!(unexpected.is_empty(), "module cycles: {}", unexpected.join(" | "));
}

/// The reader finds what it must: a hand-made chain a -> b -> c -> a is one cycle, a test
/// module's and a comment's paths are no dependency, and a dependency in a macro counts.
#[test]
fn the_reader_sees_dependencies_and_only_them() {
    let modules: BTreeSet<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
    let text = "use crate::b::X;\n// crate::c in prose\n#[cfg(test)]\nmod tests { use crate::c::Y; }\n$crate::a::m!();";
    let deps = named_modules(&without_tests(&without_comments(text)), &modules);
    assert_eq!(deps, ["a", "b"].iter().map(|s| s.to_string()).collect());
    let mut graph = Graph::new();
    for (from, to) in [("a", "b"), ("b", "c"), ("c", "a"), ("d", "a")] {
        graph.entry(from.to_string()).or_default().insert(to.to_string());
    }
    graph.entry("e".to_string()).or_default();
    let found = cycles(&graph);
    assert_eq!(found, vec![["a", "b", "c"].iter().map(|s| s.to_string()).collect::<BTreeSet<_>>()]);
}
