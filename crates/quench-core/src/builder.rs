//! Scenario -> World: resolve names, validate every parameter once (errors name the key),
//! expand generated fabrics (`topology/`), build links with their qdiscs and random streams,
//! compute routes with each switch's multipath policy, create endpoints.
//!
//! It owns the making of the world and of its flows (the flow factory, which the world sees as
//! its `Arrivals` source); once the world is assembled the builder touches it no more.

use crate::changes::Timetable;
use crate::dependencies::Dependencies;
use crate::error::ConfigError;
use crate::flow_paths::{path_links, LinkIndex};
use crate::link::{Link, LinkParams};
use crate::packet::{AgentId, FlowId, LinkId, NodeId};
use crate::pfc::Pfc;
use crate::rng::{Rng, StreamKind};
use crate::routing::{MultipathPolicy, Routes};
use crate::scenario::{LinkSpec, Scenario};
use crate::topology::{self, Expansion};
use crate::trace::pcap::{Captures, PcapWriter};
use crate::trace::Recorder;
use crate::transport::contract::{FlowsShare, Topology};
use crate::transport::{Agent, FlowBuild, FlowSpec};
use crate::units::{Bytes, Dur, Time};
use crate::workload;
use crate::workload::WorkloadRun;
use crate::world::{link_is_named, link_name, Arrivals, FlowInfo, Node, World, WorldParts};
use std::collections::{HashMap, HashSet};

struct Names(HashMap<String, NodeId>);

impl Names {
    fn resolve(&self, name: &str, path: &str) -> Result<NodeId, ConfigError> {
        self.0.get(name).copied().ok_or_else(|| ConfigError::new(path, format!("no host or router named '{name}'")))
    }
}

/// The longest node name, in characters.
pub const NODE_NAME_MAX: usize = 64;

/// A node name is `[A-Za-z0-9_][A-Za-z0-9_.-]*`, at most `NODE_NAME_MAX` characters. Names
/// become file names (a captured link `a->b` is written as `a-b.pcap`), so the set has no path
/// separator, no `..` component, no hidden or option-like leading `.` or `-`, and no `>`, which
/// keeps a link's name `a->b` unambiguous.
pub fn check_node_name(name: &str) -> Result<(), ConfigError> {
    let rule = "a node name may hold only ASCII letters, digits, '_', '-' and '.', \
                may not start with '.' or '-', and has 1 to 64 characters";
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    let ok = !name.is_empty()
        && name.chars().count() <= NODE_NAME_MAX
        && name.chars().all(allowed)
        && !name.starts_with(['.', '-']);
    if ok {
        return Ok(());
    }
    // Quote the name with control characters escaped, and cut a long one short.
    let shown: String = name.chars().take(NODE_NAME_MAX).flat_map(char::escape_debug).collect();
    let more = name.chars().count() > NODE_NAME_MAX;
    let quoted =
        format!("'{shown}{}'", if more { format!("... ({} characters)", name.chars().count()) } else { String::new() });
    Err(ConfigError::new("", format!("{quoted}: {rule}")))
}

fn build_nodes(sc: &Scenario, fabrics: &[Expansion]) -> Result<(Vec<Node>, Names), ConfigError> {
    // Exact sizes: at 10,000 flows a vector grown by doubling holds room never touched.
    let generated: usize = fabrics.iter().map(|x| x.hosts.len() + x.switches.len()).sum();
    let count = sc.hosts.len() + sc.routers.len() + generated;
    let mut nodes = Vec::with_capacity(count);
    let mut names = HashMap::with_capacity(count);
    let all = sc.hosts.iter().map(|n| ("hosts", n, false)).chain(sc.routers.iter().map(|n| ("routers", n, true)));
    for (i, (key, name, is_router)) in all.enumerate() {
        let index = if is_router { i - sc.hosts.len() } else { i };
        check_node_name(name).map_err(|e| e.within(&format!("{key}[{index}]")))?;
        if names.insert(name.clone(), NodeId(nodes.len() as u32)).is_some() {
            return Err(ConfigError::new(format!("{key}[{index}]"), format!("node '{name}' is declared twice")));
        }
        nodes.push(Node { name: name.clone(), is_router });
    }
    for (t, x) in fabrics.iter().enumerate() {
        let all = x.hosts.iter().map(|n| (n, false)).chain(x.switches.iter().map(|n| (n, true)));
        for (name, is_router) in all {
            check_node_name(name).map_err(|e| e.within(&format!("topologies[{t}].prefix")))?;
            if names.insert(name.clone(), NodeId(nodes.len() as u32)).is_some() {
                let why = format!("node '{name}' is declared twice; give the fabric a `prefix` of its own");
                return Err(ConfigError::new(format!("topologies[{t}]"), why));
            }
            nodes.push(Node { name: name.clone(), is_router });
        }
    }
    Ok((nodes, Names(names)))
}

fn build_links(sc: &Scenario, fabrics: &[Expansion], names: &Names) -> Result<Vec<Link>, ConfigError> {
    // Exact size: a vector of 40,002 links of 512 bytes grown by doubling held room for 25,534
    // more (13 MB) it never touched.
    let generated: usize = fabrics.iter().map(|x| 2 * x.links.len()).sum();
    let mut links: Vec<Link> =
        Vec::with_capacity(sc.links.iter().map(|l| 1 + l.duplex as usize).sum::<usize>() + generated);
    // Names taken so far: a set, as a scan of `links` per link made set-up quadratic (40,000
    // links of a 10,000-flow dumbbell: half a minute).
    let mut taken = HashSet::with_capacity(links.capacity());
    for (i, spec) in sc.links.iter().enumerate() {
        let path = format!("links[{i}]");
        spec.validate().map_err(|e| e.within(&path))?;
        let from = names.resolve(&spec.from, &format!("{path}.from"))?;
        let to = names.resolve(&spec.to, &format!("{path}.to"))?;
        add_link(&mut links, &mut taken, sc.seed, spec, (from, to), false).map_err(|e| e.within(&path))?;
        if spec.duplex {
            add_link(&mut links, &mut taken, sc.seed, spec, (to, from), true).map_err(|e| e.within(&path))?;
        }
    }
    // A fabric's tiers were validated as it expanded (`topology/`); its names resolve.
    for (t, x) in fabrics.iter().enumerate() {
        let path = format!("topologies[{t}]");
        for spec in &x.links {
            let from = names.resolve(&spec.from, &path)?;
            let to = names.resolve(&spec.to, &path)?;
            add_link(&mut links, &mut taken, sc.seed, spec, (from, to), false).map_err(|e| e.within(&path))?;
            add_link(&mut links, &mut taken, sc.seed, spec, (to, from), true).map_err(|e| e.within(&path))?;
        }
    }
    Ok(links)
}

/// The links' scheduled changes: each listed link's own schedule (both directions of a duplex
/// link), then the changes of named links.
fn link_changes(sc: &Scenario, nodes: &[Node], links: &[Link]) -> Result<Timetable, ConfigError> {
    let mut table = Timetable::default();
    let find = |name: &str| links.iter().position(|l| link_is_named(nodes, l, name)).map(|i| LinkId(i as u32));
    for (i, spec) in sc.links.iter().enumerate().filter(|(_, s)| !s.schedule.is_empty()) {
        spec.validate_schedule(sc.duration).map_err(|e| e.within(&format!("links[{i}]")))?;
        let forward = find(&format!("{}->{}", spec.from, spec.to));
        let reverse = spec.duplex.then(|| find(&format!("{}->{}", spec.to, spec.from))).flatten();
        let ids: Vec<LinkId> = forward.into_iter().chain(reverse).collect();
        for change in &spec.schedule {
            table.add(ids.clone(), change.clone());
        }
    }
    for (i, change) in sc.link_changes.iter().enumerate() {
        let key = format!("link_changes[{i}]");
        let Some(name) = &change.link else {
            return Err(ConfigError::new(format!("{key}.link"), "names the link changed, e.g. 'a->b'"));
        };
        let id = find(name).ok_or_else(|| ConfigError::new(format!("{key}.link"), format!("no link '{name}'")))?;
        let link = &links[id.index()];
        let smallest = Bytes(crate::limits::SMALLEST_PACKET.0 + link.framing_overhead.0);
        change.validate(sc.duration, smallest).map_err(|e| e.within(&key))?;
        let reverse = |l: &Link| l.from == link.to && l.to == link.from;
        let back = change.both_directions.then(|| links.iter().position(reverse)).flatten();
        let ids = std::iter::once(id).chain(back.map(|i| LinkId(i as u32))).collect();
        table.add(ids, change.clone());
    }
    Ok(table)
}

/// Each node's multipath policy: `first` (the routing table's route) unless a generated fabric
/// gives its switches one, or `multipath` names the router.
fn multipath_policies(
    sc: &Scenario,
    fabrics: &[Expansion],
    nodes: &[Node],
    names: &Names,
) -> Result<Vec<MultipathPolicy>, ConfigError> {
    let mut policies = vec![MultipathPolicy::First; nodes.len()];
    for x in fabrics {
        for s in &x.switches {
            policies[names.resolve(s, "")?.index()] = x.multipath;
        }
    }
    for (name, &policy) in &sc.multipath {
        let key = format!("multipath.{name}");
        let n = names.resolve(name, &key)?;
        if !nodes[n.index()].is_router {
            return Err(ConfigError::new(key, format!("'{name}' is a host; only routers choose among next hops")));
        }
        policies[n.index()] = policy;
    }
    Ok(policies)
}

fn add_link(
    links: &mut Vec<Link>,
    taken: &mut HashSet<String>,
    seed: u64,
    spec: &LinkSpec,
    (from, to): (NodeId, NodeId),
    reverse: bool,
) -> Result<(), ConfigError> {
    let (a, b) = if reverse { (&spec.to, &spec.from) } else { (&spec.from, &spec.to) };
    let name = format!("{a}->{b}");
    if !taken.insert(name.clone()) {
        return Err(ConfigError::new("", format!("link {name} is declared twice")));
    }
    let (qdisc_spec, qdisc_key) = match (&spec.reverse_qdisc, reverse) {
        (Some(q), true) => (&**q, "reverse_qdisc"),
        _ => (&spec.qdisc, "qdisc"),
    };
    let qdisc = qdisc_spec.build().map_err(|e| e.within(qdisc_key))?;
    let id = LinkId(links.len() as u32);
    let params = LinkParams {
        from,
        to,
        rate: spec.rate,
        delay: spec.delay,
        mtu: spec.mtu,
        framing_overhead: spec.framing_overhead,
        min_packet_gap: spec.packet_rate.map_or(Dur::ZERO, |r| Dur::from_secs_f64(1.0 / r)),
        fragment_rule: spec.fragmentation,
        loss: if reverse { spec.reverse_loss.clone() } else { spec.loss.clone() },
        jitter: if reverse { spec.reverse_jitter } else { spec.jitter },
        corrupt: if reverse { spec.reverse_corrupt } else { spec.corrupt },
        device_queue: spec.device_queue,
        capacity: if reverse { &spec.reverse_capacity } else { &spec.capacity }.as_deref().cloned(),
    };
    let qdisc_rng = Rng::stream(seed, StreamKind::Qdisc, id.0 as u64);
    let loss_rng = Rng::stream(seed, StreamKind::LinkLoss, id.0 as u64);
    let wire_rng = Rng::stream(seed, StreamKind::Wire, id.0 as u64);
    links.push(Link::new(params, qdisc, qdisc_rng, (loss_rng, wire_rng)));
    Ok(())
}

/// Check that `src` reaches `dst` and, for datagrams that may not be fragmented, that
/// `unfragmentable` bytes fit every link's MTU.
fn check_path(
    routes: &Routes,
    ends: &[(NodeId, NodeId)],
    links: &[Link],
    nodes: &[Node],
    (src, dst): (NodeId, NodeId),
    unfragmentable: Option<u64>,
) -> Result<(), ConfigError> {
    let path = routes.path(ends, src, dst).ok_or_else(|| {
        ConfigError::new(
            "dst",
            format!("'{}' is unreachable from '{}'", nodes[dst.index()].name, nodes[src.index()].name),
        )
    })?;
    let Some(size) = unfragmentable else { return Ok(()) };
    if let Some(l) = path.iter().map(|l| &links[l.index()]).find(|l| l.mtu.0 < size) {
        return Err(ConfigError::new(
            "",
            format!(
                "{size}-byte datagrams with don't-fragment set exceed the {} MTU of link {}",
                l.mtu,
                link_name(nodes, l)
            ),
        ));
    }
    Ok(())
}

struct FlowContext<'a> {
    seed: u64,
    names: &'a Names,
    nodes: &'a [Node],
    links: &'a [Link],
    ends: &'a [(NodeId, NodeId)],
    routes: &'a Routes,
    shared: &'a FlowsShare,
}

impl Topology for FlowContext<'_> {
    fn check_path(&self, ends: (NodeId, NodeId), dont_fragment: Option<u64>) -> Result<(), ConfigError> {
        check_path(self.routes, self.ends, self.links, self.nodes, ends, dont_fragment)
    }
    fn path_facts(&self, (src, dst): (NodeId, NodeId), (data, ack): (u64, u64)) -> crate::cc::PathFacts {
        let hops = |from, to| -> Vec<crate::fct::Hop> {
            let path = self.routes.path(self.ends, from, to).unwrap_or_default();
            path.iter().map(|l| crate::fct::Hop::of(&self.links[l.index()])).collect()
        };
        let (forward, reverse) = (hops(src, dst), hops(dst, src));
        let round_trip = crate::fct::one_way_s(&forward, data) + crate::fct::one_way_s(&reverse, ack);
        crate::cc::PathFacts {
            hops: forward.len().saturating_sub(1).min(u8::MAX as usize) as u8,
            base_rtt: crate::units::Dur::from_secs_f64(round_trip),
            line_rate: crate::units::BitRate(forward.first().map_or(0, |h| h.rate_bps as u64)),
        }
    }
    fn last_hop_rate(&self, (src, dst): (NodeId, NodeId)) -> Option<crate::units::BitRate> {
        let path = self.routes.path(self.ends, src, dst)?;
        path.last().map(|l| self.links[l.index()].rate())
    }
    fn shared(&self) -> &FlowsShare {
        self.shared
    }
}

impl FlowContext<'_> {
    fn endpoints(&self, (src, dst): (&str, &str)) -> Result<(NodeId, NodeId), ConfigError> {
        let s = self.names.resolve(src, "src")?;
        let d = self.names.resolve(dst, "dst")?;
        for (key, n) in [("src", s), ("dst", d)] {
            if self.nodes[n.index()].is_router {
                return Err(ConfigError::new(
                    key,
                    format!("'{}' is a router; flows run between hosts", self.nodes[n.index()].name),
                ));
            }
        }
        if s == d {
            return Err(ConfigError::new("dst", "a flow needs two different hosts"));
        }
        Ok((s, d))
    }

    /// Build one flow with the given ids: resolve its hosts, let its transport build its
    /// endpoints.
    fn flow(
        &self,
        (id, sender, receiver): (FlowId, AgentId, AgentId),
        spec: &FlowSpec,
        end: Time,
    ) -> Result<(FlowInfo, Agent, Agent), ConfigError> {
        let f = spec.spec();
        f.validate()?;
        let (src, dst) = self.endpoints(f.endpoints())?;
        let cx = FlowBuild { id, src, dst, sender, receiver, seed: self.seed, end, topology: self };
        let built = f.build(&cx)?;
        let info = FlowInfo {
            name: f.name().map_or_else(|| format!("{}{}", spec.kind(), id.0), str::to_string),
            kind: spec.kind(),
            cc: built.cc,
            src,
            dst,
            sender,
            start: Time::ZERO + f.start(),
            bytes: built.bytes,
            handshake: f.handshake(),
            ideal_fct_s: self.ideal_fct_s(spec, (built.bytes, shim_of(built.telemetry)), (src, dst)),
            telemetry: built.telemetry,
            priority: 0,
        };
        Ok((info, built.sender, built.receiver))
    }
}

impl FlowContext<'_> {
    /// The flow alone on the idle network (`fct.rs`), over the routes just computed.
    fn ideal_fct_s(&self, spec: &FlowSpec, size: (Option<u64>, u32), (src, dst): (NodeId, NodeId)) -> f64 {
        let (Some(fwd), Some(rev)) = (self.routes.path(self.ends, src, dst), self.routes.path(self.ends, dst, src))
        else {
            return f64::NAN;
        };
        crate::fct::ideal_fct_s(spec, size, self.links, &fwd, &rev)
    }
}

/// What the world needs to build a workload's arrivals as they come: the workloads, and the
/// parts of the topology a transport's `build` may ask about.
pub(crate) struct FlowFactory {
    seed: u64,
    end: Time,
    names: Names,
    ends: Vec<(NodeId, NodeId)>,
    shared: FlowsShare,
    pub workloads: Vec<WorkloadRun>,
}

impl Arrivals for FlowFactory {
    fn workloads(&self) -> usize {
        self.workloads.len()
    }

    fn next_at(&self, w: usize) -> Option<Dur> {
        self.workloads[w].next_at()
    }

    /// Its template was checked for its pair before the run (`check_workloads`), so it builds.
    fn build_next(
        &mut self,
        w: usize,
        (nodes, links, routes): (&[Node], &[Link], &Routes),
        ids: (FlowId, AgentId, AgentId),
    ) -> Option<(FlowInfo, Agent, Agent)> {
        let priority = self.workloads[w].spec().priority;
        let spec = self.workloads[w].take()?;
        let cx = FlowContext {
            seed: self.seed,
            names: &self.names,
            nodes,
            links,
            ends: &self.ends,
            routes,
            shared: &self.shared,
        };
        let (info, sender, receiver) =
            cx.flow(ids, &spec, self.end).expect("a workload's template was checked for every pair");
        Some((FlowInfo { priority, ..info }, sender, receiver))
    }
}

/// Bytes of the telemetry header, if any, every packet of a flow carries on the wire.
fn shim_of(telemetry: Option<crate::telemetry::IntHeader>) -> u32 {
    telemetry.map_or(0, |h| h.wire_bytes())
}

fn link_index(nodes: &[Node], links: &[Link], name: &str, path: &str) -> Result<usize, ConfigError> {
    links.iter().position(|l| link_is_named(nodes, l, name)).ok_or_else(|| {
        let known: Vec<String> = links.iter().map(|l| link_name(nodes, l)).take(8).collect();
        ConfigError::new(path, format!("no link named '{name}' (links are named like {})", known.join(", ")))
    })
}

fn build_recorder(sc: &Scenario, nodes: &[Node], links: &[Link]) -> Result<(Recorder, Captures), ConfigError> {
    let mut wanted = vec![sc.record.links.is_none(); links.len()];
    for (i, name) in sc.record.links.iter().flatten().enumerate() {
        wanted[link_index(nodes, links, name, &format!("record.links[{i}]"))?] = true;
    }
    let mut pcap = Captures::default();
    for (i, name) in sc.record.pcap.iter().enumerate() {
        let l = link_index(nodes, links, name, &format!("record.pcap[{i}]"))?;
        pcap.insert(LinkId(l as u32), PcapWriter::new());
    }
    if let Some(times) = &sc.record.snapshots {
        times.validate(sc.duration).map_err(|why| ConfigError::new("record.snapshots", why))?;
    }
    Ok((Recorder::new(sc.record.clone(), wanted, sc.flows.len()), pcap))
}

/// Check each workload's template against the topology once per pair, with shared state of
/// its own (a check must not leave anything behind for the run), and the flow budget.
fn check_workloads(sc: &Scenario, cx: &FlowContext, runs: &[WorkloadRun], end: Time) -> Result<(), ConfigError> {
    let scratch = FlowsShare::default();
    let cx = FlowContext { shared: &scratch, ..*cx };
    let ids = (FlowId(0), AgentId(0), AgentId(1));
    for run in runs {
        for check in run.pair_checks() {
            let (pair, spec) = check?;
            cx.flow(ids, &spec, end).map_err(|e| workload::error_path(e, run.index, pair))?;
        }
    }
    let expected: f64 = runs.iter().map(|w| w.spec().expected_arrivals(sc.duration)).sum();
    sc.budget.check_flows(sc.flows.len() as f64 + expected)
}

/// Every host in node order, with the rate of its one outgoing link (a traffic matrix's hosts
/// and their access rates).
fn host_access(nodes: &[Node], links: &[Link]) -> Vec<workload::HostAccess> {
    let mut out: Vec<(u32, Option<crate::units::BitRate>)> = vec![(0, None); nodes.len()];
    for l in links {
        let o = &mut out[l.from.index()];
        *o = (o.0 + 1, Some(l.rate()));
    }
    nodes
        .iter()
        .zip(out)
        .filter(|(n, _)| !n.is_router)
        .map(|(n, (count, rate))| workload::HostAccess { name: n.name.clone(), rate: rate.filter(|_| count == 1) })
        .collect()
}

/// Build a ready-to-run world from a scenario.
pub fn build(sc: &Scenario) -> Result<World, ConfigError> {
    if sc.duration.is_zero() {
        return Err(ConfigError::new("duration", "must be positive"));
    }
    let end = Time::ZERO + sc.duration;
    let fabrics = topology::expand_all(&sc.topologies)?;
    let (nodes, names) = build_nodes(sc, &fabrics)?;
    let links = build_links(sc, &fabrics, &names)?;
    let policies = multipath_policies(sc, &fabrics, &nodes, &names)?;
    drop(fabrics);
    let ends: Vec<(NodeId, NodeId)> = links.iter().map(|l| (l.from, l.to)).collect();
    check_flowlet_gap(sc.flowlet_gap)?;
    let mut routes = Routes::compute_with(nodes.len(), &ends, &policies, (sc.seed, sc.flowlet_gap));
    let changes = link_changes(sc, &nodes, &links)?;
    let shared = FlowsShare::default();
    let cx = FlowContext {
        seed: sc.seed,
        names: &names,
        nodes: &nodes,
        links: &links,
        ends: &ends,
        routes: &routes,
        shared: &shared,
    };
    let mut agents = Vec::with_capacity(sc.flows.len() * 2);
    let mut flows = Vec::with_capacity(sc.flows.len());
    for (i, spec) in sc.flows.iter().enumerate() {
        if spec.start() >= sc.duration {
            return Err(ConfigError::new(format!("flows[{i}].start"), "starts after the run ends"));
        }
        let id = flows.len() as u32;
        let ids = (FlowId(id), AgentId(2 * id), AgentId(2 * id + 1));
        let (flow, sender, receiver) = cx.flow(ids, spec, end).map_err(|e| e.within(&format!("flows[{i}]")))?;
        crate::packet::check_priority(format!("flows[{i}].priority"), spec.routing.priority)?;
        flows.push(FlowInfo { priority: spec.routing.priority, ..flow });
        agents.extend([sender, receiver]);
    }
    let packets: Vec<(usize, f64)> =
        sc.flows.iter().enumerate().map(|(i, f)| (i, f.spec().expected_packets(sc.duration))).collect();
    sc.budget.check_packets(&packets)?;
    sc.budget.check_record_bytes()?;
    let expanded = workload::expand(&sc.workloads, || host_access(&nodes, &links), sc.seed)?;
    let workloads = workload::prepare(&expanded, sc.seed, sc.duration)?;
    check_workloads(sc, &cx, &workloads, end)?;
    pin_flows(sc, &names, (&nodes, &links), &ends, &mut routes, &mut flows)?;
    let dependencies = flow_dependencies(sc, &flows)?;
    let pfc = build_pfc(sc, &names, &nodes, &links)?;
    let (mut rec, pcap) = build_recorder(sc, &nodes, &links)?;
    let arrival_names = |name: &str| workloads.iter().any(|w| w.names_flow(name));
    crate::trace::flow_monitor::configure(&mut rec, flows.iter().map(|f| f.name.as_str()), arrival_names, end)?;
    crate::trace::delay::configure(&mut rec, flows.iter().map(|f| f.name.as_str()))?;
    // The names and link ends serve the workloads' arrivals; without a workload the factory
    // never builds, and keeping them would hold a map entry per node for the whole run.
    let (names, ends) = if workloads.is_empty() { (Names(HashMap::new()), Vec::new()) } else { (names, ends) };
    let factory = FlowFactory { seed: sc.seed, end, names, ends, shared, workloads };
    let ip = sc.ip.clone();
    let budget = sc.budget.clone();
    let arrivals = Box::new(factory);
    let routing_convergence = sc.routing_convergence;
    let parts = WorldParts {
        end,
        seed: sc.seed,
        nodes,
        links,
        routes,
        agents,
        flows,
        arrivals,
        budget,
        rec,
        pcap,
        ip,
        changes,
        routing_convergence,
        dependencies,
        pfc,
    };
    Ok(World::assemble(parts))
}

/// The longest flowlet gap: a second of silence is no longer a gap within one transfer.
const MAX_FLOWLET_GAP: Dur = Dur::from_secs(1);

fn check_flowlet_gap(gap: Dur) -> Result<(), ConfigError> {
    if gap.is_zero() || gap > MAX_FLOWLET_GAP {
        let why = format!("must be positive and at most {} s (CONGA's is 500 us)", MAX_FLOWLET_GAP.as_secs_f64());
        return Err(ConfigError::new("flowlet_gap", why));
    }
    Ok(())
}

/// Pin the listed flows that name a `path` (or a `reverse_path`) to it (`flow_paths.rs`), and
/// give each its ideal FCT over the links it takes.
fn pin_flows(
    sc: &Scenario,
    names: &Names,
    (nodes, links): (&[Node], &[Link]),
    ends: &[(NodeId, NodeId)],
    routes: &mut Routes,
    flows: &mut [FlowInfo],
) -> Result<(), ConfigError> {
    let pinned = |f: &crate::scenario::ListedFlow| f.routing.path.is_some() || f.routing.reverse_path.is_some();
    if !sc.flows.iter().any(pinned) {
        return Ok(());
    }
    let index = LinkIndex::new(ends);
    let resolve = |name: &str, key: &str| names.resolve(name, key);
    let name_of = |n: NodeId| nodes[n.index()].name.clone();
    for (i, (spec, info)) in sc.flows.iter().zip(flows.iter_mut()).enumerate().filter(|(_, (f, _))| pinned(f)) {
        let id = FlowId(i as u32);
        let ways = [(false, "path", &spec.routing.path), (true, "reverse_path", &spec.routing.reverse_path)];
        for (reverse, key, path) in ways {
            let Some(path) = path else { continue };
            let way = if reverse { (info.dst, info.src) } else { (info.src, info.dst) };
            let taken = path_links(path, &format!("flows[{i}].{key}"), way, resolve, name_of, &index)?;
            routes.pin(id, reverse, &taken, ends);
        }
        let fwd = routes.pinned_path(id, false).or_else(|| routes.path(ends, info.src, info.dst));
        let rev = routes.pinned_path(id, true).or_else(|| routes.path(ends, info.dst, info.src));
        if let (Some(fwd), Some(rev)) = (fwd, rev) {
            let size = (info.bytes, shim_of(info.telemetry));
            info.ideal_fct_s = crate::fct::ideal_fct_s(spec, size, links, &fwd, &rev);
        }
    }
    Ok(())
}

/// PFC at the switches the scenario names (every router if it names none), checked.
fn build_pfc(sc: &Scenario, names: &Names, nodes: &[Node], links: &[Link]) -> Result<Option<Box<Pfc>>, ConfigError> {
    let Some(spec) = &sc.pfc else { return Ok(None) };
    spec.validate()?;
    let mut switches = vec![spec.switches.is_empty(); nodes.len()];
    for (n, node) in switches.iter_mut().zip(nodes) {
        *n &= node.is_router;
    }
    for (i, name) in spec.switches.iter().enumerate() {
        let key = format!("pfc.switches[{i}]");
        let n = names.resolve(name, &key)?;
        if !nodes[n.index()].is_router {
            return Err(ConfigError::new(key, format!("'{name}' is a host; PFC runs at switches")));
        }
        switches[n.index()] = true;
    }
    let ends = links.iter().map(|l| (l.from, l.to)).collect();
    let pfc = Pfc::new(spec, switches, ends).map_err(|l| {
        let why = format!("link '{}' has no link back to carry its pause frames", link_name(nodes, &links[l.index()]));
        ConfigError::new("pfc", why)
    })?;
    Ok(Some(Box::new(pfc)))
}

/// The listed flows' `after` declarations (`dependencies.rs`), checked.
fn flow_dependencies(sc: &Scenario, flows: &[FlowInfo]) -> Result<Option<Box<Dependencies>>, ConfigError> {
    let names: Vec<&str> = flows.iter().map(|f| f.name.as_str()).collect();
    let after: Vec<&[String]> = sc.flows.iter().map(|f| f.routing.after.as_slice()).collect();
    let starts: Vec<Dur> = sc.flows.iter().map(|f| f.start()).collect();
    Ok(Dependencies::new(&names, &after, &starts)?.map(Box::new))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn node_names_come_from_a_safe_set() {
        for good in ["a", "r1", "ucl_sink", "gw_back", "s0", "A-b.c_9", "x".repeat(64).as_str()] {
            assert_eq!(check_node_name(good), Ok(()), "{good}");
        }
        for bad in ["", ".", "..", "../../escaped", "/abs", "a/b", "a\\b", "-a", ".hidden", "a b", "a->b", "é", "a\nb"]
        {
            let e = check_node_name(bad).unwrap_err();
            assert!(e.message.contains("a node name may hold only"), "{bad}: {e}");
        }
        let long = "h".repeat(300);
        let e = check_node_name(&long).unwrap_err();
        assert!(e.message.contains("(300 characters)") && e.message.len() < 300, "{e}");
        assert!(check_node_name("a\nb").unwrap_err().message.starts_with("'a\\nb'"));
    }

    /// Run `check` on a network without nodes or links, whose flows share one `FlowsShare`.
    fn on_an_empty_network(check: impl FnOnce(&FlowContext)) {
        let names = Names(HashMap::new());
        let routes = Routes::compute(0, &[]);
        let shared = FlowsShare::default();
        let cx =
            FlowContext { seed: 1, names: &names, nodes: &[], links: &[], ends: &[], routes: &routes, shared: &shared };
        check(&cx);
    }

    /// What a flow from `src` builds with (to `src` itself: no path is asked for).
    fn build_at<'a>(cx: &'a FlowContext, src: NodeId) -> FlowBuild<'a> {
        let (sender, receiver) = (AgentId(0), AgentId(1));
        FlowBuild { id: FlowId(0), src, dst: src, sender, receiver, seed: 1, end: Time::ZERO, topology: cx }
    }

    /// `host_shared` hands every flow of a host the same value of a type, and keeps hosts and
    /// types apart.
    #[test]
    fn host_shared_is_one_value_per_host_and_type() {
        on_an_empty_network(|cx| {
            let (a, b) = (NodeId(0), NodeId(1));
            let first: Arc<u32> = build_at(cx, a).host_shared(a, || Arc::new(1));
            let again: Arc<u32> = build_at(cx, a).host_shared(a, || Arc::new(2));
            let other_host: Arc<u32> = build_at(cx, b).host_shared(b, || Arc::new(3));
            let other_type: Arc<u64> = build_at(cx, a).host_shared(a, || Arc::new(4));
            assert!(Arc::ptr_eq(&first, &again), "the second flow of a host gets the first one's value");
            assert_eq!((*again, *other_host, *other_type), (1, 3, 4));
        });
    }

    /// `shared` hands back one copy of equal values, and a new one for a value unlike the
    /// recent ones; a value that fell out of the recent ones gets a copy of its own again
    /// (equal, not the same).
    #[test]
    fn shared_values_are_one_copy_per_distinct_recent_value() {
        use crate::transport::contract::SHARED_RECENT;
        on_an_empty_network(|cx| {
            let at = build_at(cx, NodeId(0));
            let first = at.shared(String::from("cubic"));
            let other = at.shared(String::from("bbr"));
            let again = build_at(cx, NodeId(1)).shared(String::from("cubic"));
            assert!(Arc::ptr_eq(&first, &again), "an equal value gets the first copy, whichever flow asks");
            assert!(!Arc::ptr_eq(&first, &other));
            assert_eq!(*at.shared(7u32), 7, "types are kept apart");
            for i in 0..SHARED_RECENT {
                at.shared(format!("kind {i}"));
            }
            let evicted = at.shared(String::from("cubic"));
            assert_eq!(*evicted, "cubic");
            assert!(!Arc::ptr_eq(&first, &evicted), "past the recent values a copy of its own");
        });
    }
}
