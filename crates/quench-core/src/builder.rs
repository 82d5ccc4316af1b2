//! Scenario -> World: resolve names, validate every parameter once (errors name the key),
//! build links with their qdiscs and random streams, compute routes, create endpoints.

use crate::error::ConfigError;
use crate::link::{Link, LinkParams};
use crate::packet::{AgentId, FlowId, LinkId, NodeId};
use crate::rng::{Rng, StreamKind};
use crate::routing::Routes;
use crate::scenario::{AssistedFlowSpec, FlowSpec, LinkSpec, PcpFlowSpec, Scenario, TcpFlowSpec, UdpFlowSpec};
use crate::trace::pcap::PcapWriter;
use crate::trace::Recorder;
use crate::transport::assisted::{AssistedReceiver, AssistedSender};
use crate::transport::pcp::{HostHistory, PcpReceiver, PcpSender, SharedHistory};
use crate::transport::tcp::{Connection, TcpReceiver, TcpSender, HEADERS};
use crate::transport::udp::{UdpSink, UdpSource, UdpSourceParams};
use crate::transport::Agent;
use crate::units::{Dur, Time};
use crate::workload;
use crate::world::{FlowInfo, Node, World, WorldParts};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};

struct Names(HashMap<String, NodeId>);

impl Names {
    fn resolve(&self, name: &str, path: &str) -> Result<NodeId, ConfigError> {
        self.0.get(name).copied().ok_or_else(|| ConfigError::new(path, format!("no host or router named '{name}'")))
    }
}

fn build_nodes(sc: &Scenario) -> Result<(Vec<Node>, Names), ConfigError> {
    let mut nodes = Vec::new();
    let mut names = HashMap::new();
    let all = sc.hosts.iter().map(|n| ("hosts", n, false)).chain(sc.routers.iter().map(|n| ("routers", n, true)));
    for (i, (key, name, is_router)) in all.enumerate() {
        let index = if is_router { i - sc.hosts.len() } else { i };
        if name.is_empty() || name.contains("->") || name.contains(char::is_whitespace) {
            return Err(ConfigError::new(format!("{key}[{index}]"), format!("'{name}' is not a usable node name")));
        }
        if names.insert(name.clone(), NodeId(nodes.len() as u32)).is_some() {
            return Err(ConfigError::new(format!("{key}[{index}]"), format!("node '{name}' is declared twice")));
        }
        nodes.push(Node { name: name.clone(), is_router });
    }
    Ok((nodes, Names(names)))
}

fn build_links(sc: &Scenario, names: &Names) -> Result<Vec<Link>, ConfigError> {
    let mut links: Vec<Link> = Vec::new();
    for (i, spec) in sc.links.iter().enumerate() {
        let path = format!("links[{i}]");
        spec.validate().map_err(|e| e.within(&path))?;
        let from = names.resolve(&spec.from, &format!("{path}.from"))?;
        let to = names.resolve(&spec.to, &format!("{path}.to"))?;
        add_link(&mut links, sc.seed, spec, (from, to), false).map_err(|e| e.within(&path))?;
        if spec.duplex {
            add_link(&mut links, sc.seed, spec, (to, from), true).map_err(|e| e.within(&path))?;
        }
    }
    Ok(links)
}

fn add_link(
    links: &mut Vec<Link>,
    seed: u64,
    spec: &LinkSpec,
    (from, to): (NodeId, NodeId),
    reverse: bool,
) -> Result<(), ConfigError> {
    let (a, b) = if reverse { (&spec.to, &spec.from) } else { (&spec.from, &spec.to) };
    let name = format!("{a}->{b}");
    if links.iter().any(|l| l.name == name) {
        return Err(ConfigError::new("", format!("link {name} is declared twice")));
    }
    let (qdisc_spec, qdisc_key) = match (&spec.reverse_qdisc, reverse) {
        (Some(q), true) => (q, "reverse_qdisc"),
        _ => (&spec.qdisc, "qdisc"),
    };
    let qdisc = qdisc_spec.build().map_err(|e| e.within(qdisc_key))?;
    let id = LinkId(links.len() as u32);
    let params = LinkParams {
        name,
        from,
        to,
        rate: spec.rate,
        delay: spec.delay,
        mtu: spec.mtu,
        framing_overhead: spec.framing_overhead,
        min_packet_gap: spec.packet_rate.map_or(Dur::ZERO, |r| Dur::from_secs_f64(1.0 / r)),
        fragment_rule: spec.fragmentation,
        loss_probability: if reverse { spec.reverse_loss } else { spec.loss },
    };
    let qdisc_rng = Rng::stream(seed, StreamKind::Qdisc, id.0 as u64);
    let loss_rng = Rng::stream(seed, StreamKind::LinkLoss, id.0 as u64);
    links.push(Link::new(id, params, qdisc, qdisc_rng, loss_rng));
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
            format!("{size}-byte datagrams with don't-fragment set exceed the {} MTU of link {}", l.mtu, l.name),
        ));
    }
    Ok(())
}

/// Give a path-less error (an MTU violation from `check_path`) the key that caused it.
fn name_key(e: ConfigError, key: &str) -> ConfigError {
    if e.path.is_empty() {
        ConfigError::new(key, e.message)
    } else {
        e
    }
}

struct FlowContext<'a> {
    seed: u64,
    names: &'a Names,
    nodes: &'a [Node],
    links: &'a [Link],
    ends: &'a [(NodeId, NodeId)],
    routes: &'a Routes,
    /// PCP's per-destination history, one table per source host shared by its PCP flows.
    pcp_history: RefCell<BTreeMap<NodeId, SharedHistory>>,
}

impl FlowContext<'_> {
    fn endpoints(&self, src: &str, dst: &str) -> Result<(NodeId, NodeId), ConfigError> {
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

    fn tcp(&self, id: FlowId, f: &TcpFlowSpec, agents: &mut Vec<Agent>) -> Result<FlowInfo, ConfigError> {
        let (src, dst) = self.endpoints(&f.src, &f.dst)?;
        f.tcp.validate().map_err(|e| e.within("tcp"))?;
        let cc = f.cc.build().map_err(|e| e.within("cc"))?;
        let size = f.tcp.dont_fragment.then_some((f.tcp.mss + HEADERS) as u64);
        // An MTU error is about the MSS: name that key (check_path leaves the path empty).
        check_path(self.routes, self.ends, self.links, self.nodes, (src, dst), size)
            .map_err(|e| name_key(e, "tcp.mss"))?;
        check_path(self.routes, self.ends, self.links, self.nodes, (dst, src), None)
            .map_err(|e| ConfigError::new("src", format!("ACKs cannot return: {}", e.message)))?;
        let (sender, receiver) = (AgentId(agents.len() as u32), AgentId(agents.len() as u32 + 1));
        let bytes = f.bytes.map(|b| b.0);
        let forward = Connection { flow: id, local: src, remote: dst, peer: receiver };
        let backward = Connection { flow: id, local: dst, remote: src, peer: sender };
        agents.push(Agent::TcpSender(Box::new(TcpSender::new(forward, f.tcp.clone(), cc, bytes))));
        agents.push(Agent::TcpReceiver(Box::new(TcpReceiver::new(backward, f.tcp.clone(), bytes))));
        Ok(FlowInfo {
            name: f.name.clone().unwrap_or_else(|| format!("tcp{}", id.0)),
            kind: "tcp",
            cc: f.cc.kind(),
            src,
            dst,
            sender,
            receiver,
            start: Time::ZERO + f.start,
            bytes,
        })
    }

    fn flow(&self, id: FlowId, spec: &FlowSpec, end: Time, agents: &mut Vec<Agent>) -> Result<FlowInfo, ConfigError> {
        match spec {
            FlowSpec::Tcp(f) => self.tcp(id, f, agents),
            FlowSpec::Udp(f) => self.udp(id, f, end, agents),
            FlowSpec::Pcp(f) => self.pcp(id, f, agents),
            FlowSpec::Assisted(f) => self.assisted(id, f, agents),
        }
    }

    fn assisted(&self, id: FlowId, f: &AssistedFlowSpec, agents: &mut Vec<Agent>) -> Result<FlowInfo, ConfigError> {
        let (src, dst) = self.endpoints(&f.src, &f.dst)?;
        f.assisted.validate().map_err(|e| e.within("assisted"))?;
        check_path(self.routes, self.ends, self.links, self.nodes, (src, dst), None)?;
        check_path(self.routes, self.ends, self.links, self.nodes, (dst, src), None)
            .map_err(|e| ConfigError::new("src", format!("ACKs cannot return: {}", e.message)))?;
        let (sender, receiver) = (AgentId(agents.len() as u32), AgentId(agents.len() as u32 + 1));
        let bytes = f.bytes.map(|b| b.0);
        let forward = Connection { flow: id, local: src, remote: dst, peer: receiver };
        let backward = Connection { flow: id, local: dst, remote: src, peer: sender };
        agents.push(Agent::AssistedSender(Box::new(AssistedSender::new(forward, f.assisted.clone(), bytes))));
        agents.push(Agent::AssistedReceiver(Box::new(AssistedReceiver::new(backward, bytes))));
        Ok(FlowInfo {
            name: f.name.clone().unwrap_or_else(|| format!("assisted{}", id.0)),
            kind: "assisted",
            cc: "",
            src,
            dst,
            sender,
            receiver,
            start: Time::ZERO + f.start,
            bytes,
        })
    }

    fn pcp(&self, id: FlowId, f: &PcpFlowSpec, agents: &mut Vec<Agent>) -> Result<FlowInfo, ConfigError> {
        let (src, dst) = self.endpoints(&f.src, &f.dst)?;
        f.pcp.validate().map_err(|e| e.within("pcp"))?;
        check_path(self.routes, self.ends, self.links, self.nodes, (src, dst), None)?;
        check_path(self.routes, self.ends, self.links, self.nodes, (dst, src), None)
            .map_err(|e| ConfigError::new("src", format!("ACKs cannot return: {}", e.message)))?;
        let (sender, receiver) = (AgentId(agents.len() as u32), AgentId(agents.len() as u32 + 1));
        let bytes = f.bytes.map(|b| b.0);
        let history =
            f.pcp.history.then(|| self.pcp_history.borrow_mut().entry(src).or_insert_with(HostHistory::shared).clone());
        let rng = Rng::stream(self.seed, StreamKind::Agent, sender.0 as u64);
        let forward = Connection { flow: id, local: src, remote: dst, peer: receiver };
        let backward = Connection { flow: id, local: dst, remote: src, peer: sender };
        agents.push(Agent::PcpSender(Box::new(PcpSender::new(forward, f.pcp.clone(), bytes, history, rng))));
        agents.push(Agent::PcpReceiver(Box::new(PcpReceiver::new(backward, &f.pcp, bytes))));
        Ok(FlowInfo {
            name: f.name.clone().unwrap_or_else(|| format!("pcp{}", id.0)),
            kind: "pcp",
            cc: "",
            src,
            dst,
            sender,
            receiver,
            start: Time::ZERO + f.start,
            bytes,
        })
    }

    fn udp(&self, id: FlowId, f: &UdpFlowSpec, end: Time, agents: &mut Vec<Agent>) -> Result<FlowInfo, ConfigError> {
        f.validate()?;
        let (src, dst) = self.endpoints(&f.src, &f.dst)?;
        check_path(self.routes, self.ends, self.links, self.nodes, (src, dst), None)?;
        let (source, sink) = (AgentId(agents.len() as u32), AgentId(agents.len() as u32 + 1));
        let params = UdpSourceParams {
            flow: id,
            node: src,
            dst,
            peer: sink,
            pattern: f.pattern,
            rate: f.rate,
            size: f.size.clone(),
            stop: f.stop.map_or(end, |s| Time::ZERO + s),
        };
        let rng = Rng::stream(self.seed, StreamKind::Agent, source.0 as u64);
        agents.push(Agent::UdpSource(UdpSource::new(params, rng)));
        agents.push(Agent::UdpSink(UdpSink { node: dst, ..Default::default() }));
        Ok(FlowInfo {
            name: f.name.clone().unwrap_or_else(|| format!("udp{}", id.0)),
            kind: "udp",
            cc: "",
            src,
            dst,
            sender: source,
            receiver: sink,
            start: Time::ZERO + f.start,
            bytes: None,
        })
    }
}

fn link_index(links: &[Link], name: &str, path: &str) -> Result<usize, ConfigError> {
    links.iter().position(|l| l.name == name).ok_or_else(|| {
        let known: Vec<&str> = links.iter().map(|l| l.name.as_str()).take(8).collect();
        ConfigError::new(path, format!("no link named '{name}' (links are named like {})", known.join(", ")))
    })
}

fn build_recorder(sc: &Scenario, links: &[Link]) -> Result<(Recorder, Vec<Option<PcapWriter>>), ConfigError> {
    let mut wanted = vec![sc.record.links.is_none(); links.len()];
    for (i, name) in sc.record.links.iter().flatten().enumerate() {
        wanted[link_index(links, name, &format!("record.links[{i}]"))?] = true;
    }
    let mut pcap: Vec<Option<PcapWriter>> = links.iter().map(|_| None).collect();
    for (i, name) in sc.record.pcap.iter().enumerate() {
        pcap[link_index(links, name, &format!("record.pcap[{i}]"))?] = Some(PcapWriter::new());
    }
    Ok((Recorder::new(sc.record.clone(), wanted), pcap))
}

/// Build a ready-to-run world from a scenario.
pub fn build(sc: &Scenario) -> Result<World, ConfigError> {
    if sc.duration.is_zero() {
        return Err(ConfigError::new("duration", "must be positive"));
    }
    let end = Time::ZERO + sc.duration;
    let (nodes, names) = build_nodes(sc)?;
    let links = build_links(sc, &names)?;
    let ends: Vec<(NodeId, NodeId)> = links.iter().map(|l| (l.from, l.to)).collect();
    let routes = Routes::compute(nodes.len(), &ends);
    let cx = FlowContext {
        seed: sc.seed,
        names: &names,
        nodes: &nodes,
        links: &links,
        ends: &ends,
        routes: &routes,
        pcp_history: Default::default(),
    };
    let workload_flows = workload::expand(&sc.workloads, sc.seed, sc.duration)?;
    let total = sc.flows.len() + workload_flows.len();
    let mut agents = Vec::with_capacity(total * 2);
    let mut flows = Vec::with_capacity(total);
    for (i, spec) in sc.flows.iter().enumerate() {
        if spec.start() >= sc.duration {
            return Err(ConfigError::new(format!("flows[{i}].start"), "starts after the run ends"));
        }
        let flow = cx
            .flow(FlowId(flows.len() as u32), spec, end, &mut agents)
            .map_err(|e| e.within(&format!("flows[{i}]")))?;
        flows.push(flow);
    }
    for (workload, pair, spec) in &workload_flows {
        let flow = cx
            .flow(FlowId(flows.len() as u32), spec, end, &mut agents)
            .map_err(|e| workload::error_path(e, *workload, *pair))?;
        flows.push(flow);
    }
    let (mut rec, pcap) = build_recorder(sc, &links)?;
    crate::trace::flow_monitor::configure(&mut rec, flows.iter().map(|f| f.name.as_str()), end)?;
    let ip = sc.ip.clone();
    Ok(World::assemble(WorldParts { end, seed: sc.seed, nodes, links, routes, agents, flows, rec, pcap, ip }))
}
