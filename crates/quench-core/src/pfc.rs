//! Priority-based flow control (IEEE 802.1Qbb), the link-level back-pressure that makes an
//! Ethernet fabric lossless for RDMA (RoCE): a switch counts, per ingress port, the bytes it
//! holds that came in by that port; when the count reaches `xoff` it sends the port's upstream
//! neighbour a pause frame, and when it falls to `xon` a resume. A paused link finishes the
//! frame it is sending and starts no other until it is resumed; what it would send waits in
//! its queue, which in turn fills its own switch's ingress counts and pauses the links before
//! it: congestion spreads upstream hop by hop, with the head-of-line blocking and the
//! possibility of deadlock that PFC is known for (Guo et al., "RDMA over Commodity Ethernet at
//! Scale", SIGCOMM 2016; Hu et al., "Deadlocks in Datacenter Networks: Why Do They Form, and
//! How to Avoid Them", HotNets 2016).
//!
//! Priorities: a flow's packets travel in its priority (0 to 7, IEEE 802.1p; 0 unless the flow
//! sets `priority`). A switch counts each ingress port's bytes per priority, and pauses and
//! resumes each priority of the upstream link on its own thresholds, as 802.1Qbb's frame
//! carries a pause time per priority; PFC counts only the lossless priorities
//! (`priorities`, all eight unless set), so packets of the others are neither counted nor held
//! back. A paused priority stops only the packets of its class where the link's queue keeps
//! classes apart (`qdisc/classes.rs`: a queue per class, served around the paused ones); a
//! queue of one class holds every packet behind a pause of any priority (head-of-line blocking
//! across priorities). By default every flow is in priority 0, every priority is lossless, and
//! a pause stops the whole link (htsim's lossless queues; RoCE sends an acknowledgement in its
//! queue pair's traffic class, the data's). With `control = "priority"` the packets that
//! carry no data (acknowledgements, NAKs and the congestion notifications they
//! echo, pulls, handshakes) travel in a class of their own: every link into or out of a PFC
//! switch serves them before data (`Link::serve_control_first`), a switch does not count them,
//! and a pause does not hold them, as the HPCC and DCQCN artifacts' switches do
//! (alibaba-edu/High-Precision-Congestion-Control, `switch-node.cc`, `SendToDev`: CNPs, and
//! ACKs and NACKs with `ACK_HIGH_PRIO`, in queue 0, served first and admitted without PFC's
//! ingress check; quench's CNPs are the ECN echoes its ACKs carry). A packet counts from its
//! arrival at the switch until its transmission on the egress link starts (its buffer is then
//! freed, as the HPCC artifact's switch MMU frees it at dequeue) or until it is dropped.
//! Thresholds are static per port; the shared-buffer dynamic threshold of Broadcom switches is
//! not modelled. A pause frame leaves the switch when the frame its reverse link is sending
//! ends (a MAC control frame does not preempt one) and takes effect after its own serialization
//! and the reverse link's delay; it takes no capacity from data. A pause lasts until the
//! resume: a switch refreshes a pause before its quanta run out, which is modelled as no expiry
//! at all.
//!
//! Deadlock: whenever a pause takes effect, the links paused in its priority are searched for a
//! cycle through the newly paused one, each link's far end being the next one's near end: a
//! cyclic buffer dependency with every link of it paused (Hu et al.'s condition). Each cycle
//! found is reported with its time, links and priority; whether it was still paused when the
//! run ended (a deadlock that nothing resolved) is in the report too.
//!
//! What this module owns: the PFC settings as a scenario writes them, the ingress counts, the
//! map from each held packet to the port it came in by, each link's pause accounting, and the
//! cycles found. The world calls it when a packet arrives at a PFC switch, starts its
//! transmission there or is dropped there, and when a pause frame takes effect; it touches no
//! link and schedules nothing (it answers which frame to send).

use crate::error::ConfigError;
use crate::key_table::KeyTable;
use crate::packet::{LinkId, NodeId, Packet, PRIORITIES};
use crate::units::{BitRate, Bytes, Dur, Time};
use serde::{Deserialize, Serialize};

/// The bytes of a pause frame on the wire: a minimum-size Ethernet frame (IEEE 802.3 clause
/// 3.2.7; the PFC frame of IEEE 802.1Qbb / 802.3 annex 31D is a MAC control frame of that size).
pub const PAUSE_FRAME: Bytes = Bytes(64);

/// The default distance from `xoff` down to `xon`: the HPCC artifact's switch MMU resumes a
/// port once its use is `resume_offset` = 3 KiB under the pause threshold (Li et al., SIGCOMM
/// 2019, simulation/src/point-to-point/model/switch-mmu.cc), so that a resume is not followed
/// at once by another pause.
pub const DEFAULT_RESUME_OFFSET: Bytes = Bytes(3 * 1024);

/// The largest `xoff`: a gigabyte is beyond any switch's buffer.
const MAX_XOFF: Bytes = Bytes(1 << 30);

/// Cycles the report keeps; past this many, only their count grows (a cycle that forms and
/// breaks again and again would otherwise grow the report without bound).
pub const MAX_CYCLES_KEPT: usize = 1000;

/// PFC as a scenario writes it: `pfc = { xoff = "40KB", xon = "37KB", switches = [...] }`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PfcSpec {
    /// Bytes held from one ingress port at which the switch pauses the port's upstream link.
    pub xoff: Bytes,
    /// Bytes held from the port at or below which the switch resumes it; `xoff` less 3 KiB
    /// (`DEFAULT_RESUME_OFFSET`, at least 0) unless set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xon: Option<Bytes>,
    /// The switches (routers) that run PFC; every router when left out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub switches: Vec<String>,
    /// The class of the packets that carry no data.
    #[serde(default, skip_serializing_if = "ControlClass::is_lossless")]
    pub control: ControlClass,
    /// The lossless priorities, which the switches count and pause; all eight when left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priorities: Option<Vec<u8>>,
    /// Thresholds of their own for some lossless priorities; the others use `xoff` and `xon`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thresholds: Vec<PriorityThresholds>,
}

/// `xoff` and `xon` for the lossless priorities listed (`thresholds = [{ priorities = [3],
/// xoff = "20KB" }]`): a switch vendor's per-priority PFC thresholds, which let a class that
/// must pause early (a small buffer share) and one that may fill more share a port.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriorityThresholds {
    pub priorities: Vec<u8>,
    pub xoff: Bytes,
    /// `xoff` less 3 KiB (at least 0) unless set, as the scenario-wide `xon`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xon: Option<Bytes>,
}

/// Check a pair of thresholds written under `at` (`pfc` or `pfc.thresholds[i]`).
fn check_thresholds(at: &str, xoff: Bytes, xon: Option<Bytes>) -> Result<(), ConfigError> {
    if xoff.0 == 0 || xoff > MAX_XOFF {
        return Err(ConfigError::new(
            format!("{at}.xoff"),
            format!("must be positive and at most {} bytes", MAX_XOFF.0),
        ));
    }
    if xon.is_some_and(|xon| xon >= xoff) {
        return Err(ConfigError::new(format!("{at}.xon"), format!("must be below {at}.xoff")));
    }
    Ok(())
}

/// The resume threshold for a pause threshold `xoff` and a written `xon`, if any.
fn resume_at(xoff: Bytes, xon: Option<Bytes>) -> Bytes {
    xon.unwrap_or(Bytes(xoff.0.saturating_sub(DEFAULT_RESUME_OFFSET.0)))
}

/// Where a PFC fabric carries the packets that carry no data (see the module's header).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ControlClass {
    /// In the one lossless class, with the data.
    #[default]
    Lossless,
    /// In a class of their own, served first, neither counted nor paused.
    Priority,
}

impl ControlClass {
    fn is_lossless(&self) -> bool {
        *self == ControlClass::Lossless
    }
}

/// A packet of the control class when the fabric has one: it carries no data.
pub fn is_control(pkt: &Packet) -> bool {
    pkt.payload == 0
}

impl PfcSpec {
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_thresholds("pfc", self.xoff, self.xon)?;
        for (i, &p) in self.priorities.iter().flatten().enumerate() {
            crate::packet::check_priority(format!("pfc.priorities[{i}]"), p)?;
        }
        if self.priorities.as_ref().is_some_and(|p| p.is_empty()) {
            return Err(ConfigError::new("pfc.priorities", "lists no priority: leave PFC out instead"));
        }
        let mut given = 0u8;
        for (i, t) in self.thresholds.iter().enumerate() {
            let at = format!("pfc.thresholds[{i}]");
            check_thresholds(&at, t.xoff, t.xon)?;
            if t.priorities.is_empty() {
                return Err(ConfigError::new(format!("{at}.priorities"), "lists no priority"));
            }
            for (j, &p) in t.priorities.iter().enumerate() {
                let key = format!("{at}.priorities[{j}]");
                crate::packet::check_priority(key.clone(), p)?;
                if self.lossless() & 1 << p == 0 {
                    return Err(ConfigError::new(
                        key,
                        format!("{p} is not lossless (pfc.priorities): nothing pauses it"),
                    ));
                }
                if given & 1 << p != 0 {
                    return Err(ConfigError::new(key, format!("priority {p} is given thresholds twice")));
                }
                given |= 1 << p;
            }
        }
        Ok(())
    }

    /// Each priority's (xoff, xon) in bytes: its entry's in `thresholds`, else the
    /// scenario-wide pair.
    fn thresholds_by_priority(&self) -> [(u64, u64); PRIORITIES as usize] {
        let mut by = [(self.xoff.0, self.xon().0); PRIORITIES as usize];
        for t in &self.thresholds {
            for &p in &t.priorities {
                by[p as usize] = (t.xoff.0, resume_at(t.xoff, t.xon).0);
            }
        }
        by
    }

    /// The lossless priorities as a mask, bit `p` for priority `p`.
    fn lossless(&self) -> u8 {
        self.priorities.as_ref().map_or(u8::MAX, |ps| ps.iter().fold(0, |m, &p| m | 1 << p))
    }

    /// The resume threshold in force.
    pub fn xon(&self) -> Bytes {
        resume_at(self.xoff, self.xon)
    }
}

/// A frame a switch sends the upstream end of one of its ingress links.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame {
    Pause,
    Resume,
}

/// One link and priority, as an ingress port's priority at the PFC switch at the link's far
/// end and as what that port may pause.
#[derive(Clone, Debug, Default)]
struct Port {
    /// Bytes of this priority the far end holds that came in over this link.
    held: u64,
    /// The far end has sent a pause not yet followed by a resume.
    pause_sent: bool,
    /// When the link's current pause took effect, if it is paused.
    paused_since: Option<Time>,
    /// Time paused, pauses ended so far.
    paused_for: Dur,
    /// Pauses that took effect.
    pauses: u64,
    /// When the last frame sent for this link takes effect: a later frame is serialized
    /// behind it, so frames for one link take effect one after another, never at one instant.
    last_frame_at: Time,
}

/// A cycle of links paused in one priority, found when its last link was paused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PauseCycle {
    pub at: Time,
    /// The links, each one's far end being the next one's near end.
    pub links: Vec<LinkId>,
    pub priority: u8,
}

/// What a link's pause accounting says at the end of a run, its priorities together: pauses
/// and time paused summed over them, and the most bytes of all priorities held at once.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PortStats {
    pub pauses: u64,
    pub paused_for: Dur,
    pub max_held: Bytes,
}

/// The PFC state of a run.
pub struct Pfc {
    /// Per priority: (xoff, xon) in bytes.
    thresholds: [(u64, u64); PRIORITIES as usize],
    control: ControlClass,
    /// Bit `p`: priority `p` is lossless.
    lossless: u8,
    /// Per node: it runs PFC.
    switches: Vec<bool>,
    /// Per link: its ends.
    ends: Vec<(NodeId, NodeId)>,
    /// Per link: the link its pause frames travel back by (from its far end to its near end).
    reverse: Vec<Option<LinkId>>,
    /// Per node: the links leaving it (for the cycle search).
    out_links: Vec<Vec<LinkId>>,
    /// Per link and priority (`link · 8 + priority`).
    ports: Vec<Port>,
    /// Per link: the bytes of every priority its far end holds from it, and the most at once.
    held_by_link: Vec<(u64, u64)>,
    /// The ingress port, priority and size of every packet a PFC switch holds, by
    /// [`Packet::wire_key`] (a fragment counts apart from its datagram's other fragments).
    ///
    /// [`Packet::wire_key`]: crate::packet::Packet::wire_key
    held: KeyTable<(LinkId, u8, u16)>,
    cycles: Vec<PauseCycle>,
    cycles_found: u64,
}

impl Pfc {
    /// PFC on the given switches (by node), over links with the given ends. Every link into a
    /// PFC switch needs a link back, which carries its pause frames; the error is the first
    /// that has none.
    pub fn new(spec: &PfcSpec, switches: Vec<bool>, ends: Vec<(NodeId, NodeId)>) -> Result<Pfc, LinkId> {
        let mut out_links = vec![Vec::new(); switches.len()];
        for (i, (from, _)) in ends.iter().enumerate() {
            out_links[from.index()].push(LinkId(i as u32));
        }
        let back = |i: usize| {
            let (from, to) = ends[i];
            out_links[to.index()].iter().copied().find(|l: &LinkId| ends[l.index()].1 == from)
        };
        let reverse: Vec<Option<LinkId>> = (0..ends.len()).map(back).collect();
        if let Some(i) = (0..ends.len()).find(|&i| switches[ends[i].1.index()] && reverse[i].is_none()) {
            return Err(LinkId(i as u32));
        }
        Ok(Pfc {
            thresholds: spec.thresholds_by_priority(),
            control: spec.control,
            lossless: spec.lossless(),
            ports: vec![Port::default(); ends.len() * PRIORITIES as usize],
            held_by_link: vec![(0, 0); ends.len()],
            switches,
            ends,
            reverse,
            out_links,
            held: KeyTable::default(),
            cycles: Vec::new(),
            cycles_found: 0,
        })
    }

    /// Whether link `l` takes part: it leaves a PFC switch (its transmissions free buffer) or
    /// enters one (it may be paused).
    pub fn watches(&self, l: LinkId) -> bool {
        let (from, to) = self.ends[l.index()];
        self.switches[from.index()] || self.switches[to.index()]
    }

    /// Whether node `n` runs PFC.
    pub fn is_switch(&self, n: NodeId) -> bool {
        self.switches[n.index()]
    }

    /// Whether the links PFC watches serve the control class first (`control = "priority"`).
    pub fn serves_control_first(&self) -> bool {
        self.control == ControlClass::Priority
    }

    /// Whether a switch counts `pkt`, of `priority`, at its ingress: a packet of a lossless
    /// priority, but not of the control class.
    pub fn counts(&self, pkt: &Packet, priority: u8) -> bool {
        self.lossless & 1 << priority != 0 && !(self.serves_control_first() && is_control(pkt))
    }

    fn port(&mut self, l: LinkId, priority: u8) -> &mut Port {
        &mut self.ports[l.index() * PRIORITIES as usize + priority as usize]
    }

    /// The link that carries link `l`'s pause frames back.
    pub fn reverse(&self, l: LinkId) -> LinkId {
        self.reverse[l.index()].expect("checked when PFC was set up")
    }

    /// The packet of wire key `key` (`Packet::wire_key`), `size` bytes of `priority`, came in
    /// over `ingress` to its PFC switch and is offered to an egress queue there: it counts
    /// until it leaves. Answers a pause to send if the port's priority just reached `xoff`.
    pub fn admit(&mut self, key: u64, ingress: LinkId, priority: u8, size: u16) -> Option<Frame> {
        let before = self.held.insert(key, (ingress, priority, size));
        debug_assert!(before.is_none(), "a packet held twice: its count would never be released");
        let (all, most) = &mut self.held_by_link[ingress.index()];
        *all += size as u64;
        *most = (*most).max(*all);
        let (xoff, _) = self.thresholds[priority as usize];
        let port = self.port(ingress, priority);
        port.held += size as u64;
        (!port.pause_sent && port.held >= xoff).then(|| {
            port.pause_sent = true;
            Frame::Pause
        })
    }

    /// The packet of wire key `key` left its PFC switch's buffer (its transmission started, or
    /// it was dropped); nothing if it was not held. Answers the port and priority to resume if
    /// the port's priority just fell to `xon`.
    pub fn release(&mut self, key: u64) -> Option<(LinkId, u8)> {
        let (ingress, priority, size) = self.held.remove(key)?;
        self.held_by_link[ingress.index()].0 -= size as u64;
        let (_, xon) = self.thresholds[priority as usize];
        let port = self.port(ingress, priority);
        port.held -= size as u64;
        (port.pause_sent && port.held <= xon).then(|| {
            port.pause_sent = false;
            (ingress, priority)
        })
    }

    /// When a frame a switch sends now takes effect at the far end of its reverse link (the
    /// paused link's sending end): after the frame the reverse link is sending (`busy_until`),
    /// its own serialization at the reverse link's `rate`, and the reverse link's `delay`.
    pub fn frame_effect_at(now: Time, busy_until: Option<Time>, rate: BitRate, delay: Dur) -> Time {
        let leaves = busy_until.map_or(now, |t| t.max(now));
        leaves + rate.tx_time(PAUSE_FRAME) + delay
    }

    /// When a frame for `priority` the switch at link `l`'s far end sends now takes effect: as
    /// [`Pfc::frame_effect_at`], but after the previous frame for `l` and `priority` by one
    /// frame's serialization at the reverse link's `rate` (a MAC sends its control frames one
    /// by one), so a pause, a resume and a pause again in quick succession take effect in the
    /// order sent whatever the order of events at one instant.
    pub fn frame_due(
        &mut self,
        (l, priority): (LinkId, u8),
        now: Time,
        busy_until: Option<Time>,
        rate: BitRate,
        delay: Dur,
    ) -> Time {
        let port = self.port(l, priority);
        let at =
            Self::frame_effect_at(now, busy_until, rate, delay).max(port.last_frame_at + rate.tx_time(PAUSE_FRAME));
        port.last_frame_at = at;
        at
    }

    /// A frame for link `l`'s `priority` took effect now; answers whether its state changes (a
    /// frame repeating the state is ignored). A pause looks for a cycle of links paused in the
    /// priority through `l`.
    pub fn frame_arrived(&mut self, now: Time, (l, priority): (LinkId, u8), frame: Frame) -> bool {
        let port = self.port(l, priority);
        match (frame, port.paused_since) {
            (Frame::Pause, None) => {
                port.paused_since = Some(now);
                port.pauses += 1;
                self.look_for_cycle(now, l, priority);
                true
            }
            (Frame::Resume, Some(since)) => {
                port.paused_for = port.paused_for + (now - since);
                port.paused_since = None;
                true
            }
            _ => false,
        }
    }

    fn is_paused(&self, l: LinkId, priority: u8) -> bool {
        self.ports[l.index() * PRIORITIES as usize + priority as usize].paused_since.is_some()
    }

    /// A depth-first search over the links paused in `priority`, from `start`'s far end, for a
    /// path back to `start`'s near end; records the cycle if there is one. Only paused links
    /// are visited, so its cost follows the pauses in force, not the fabric's size.
    fn look_for_cycle(&mut self, now: Time, start: LinkId, priority: u8) {
        let home = self.ends[start.index()].0;
        let mut path = vec![start];
        let mut visited: Vec<LinkId> = vec![start];
        // Per depth: the next out-link of the path's last node to try.
        let mut next = vec![0usize];
        while let Some(&last) = path.last() {
            let at = self.ends[last.index()].1;
            let depth = path.len() - 1;
            let Some(&l) = self.out_links[at.index()].get(next[depth]) else {
                path.pop();
                next.pop();
                continue;
            };
            next[depth] += 1;
            if !self.is_paused(l, priority) || visited.contains(&l) {
                continue;
            }
            if self.ends[l.index()].1 == home {
                path.push(l);
                self.record_cycle(PauseCycle { at: now, links: path, priority });
                return;
            }
            visited.push(l);
            path.push(l);
            next.push(0);
        }
    }

    fn record_cycle(&mut self, cycle: PauseCycle) {
        self.cycles_found += 1;
        if self.cycles.len() < MAX_CYCLES_KEPT {
            self.cycles.push(cycle);
        }
    }

    /// The cycles found (at most `MAX_CYCLES_KEPT`), and how many were found in all.
    pub fn cycles(&self) -> (&[PauseCycle], u64) {
        (&self.cycles, self.cycles_found)
    }

    /// Whether every link of `cycle` is paused now in its priority.
    pub fn still_paused(&self, cycle: &PauseCycle) -> bool {
        cycle.links.iter().all(|&l| self.is_paused(l, cycle.priority))
    }

    /// Link `l`'s pause accounting up to `now` (a pause in force counts to now), its
    /// priorities together.
    pub fn port_stats(&self, l: LinkId, now: Time) -> PortStats {
        let ports = &self.ports[l.index() * PRIORITIES as usize..][..PRIORITIES as usize];
        let mut s = PortStats { max_held: Bytes(self.held_by_link[l.index()].1), ..PortStats::default() };
        for p in ports {
            s.pauses += p.pauses;
            s.paused_for = s.paused_for + p.paused_for + p.paused_since.map_or(Dur(0), |since| now - since);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(xoff: u64, xon: Option<u64>) -> PfcSpec {
        PfcSpec {
            xoff: Bytes(xoff),
            xon: xon.map(Bytes),
            switches: vec![],
            control: ControlClass::Lossless,
            priorities: None,
            thresholds: vec![],
        }
    }

    /// A ring of three switches (nodes 0, 1, 2), links both ways.
    fn ring() -> Pfc {
        let n = |i: u32| NodeId(i);
        let ends = vec![(n(0), n(1)), (n(1), n(2)), (n(2), n(0)), (n(1), n(0)), (n(2), n(1)), (n(0), n(2))];
        Pfc::new(&spec(10_000, None), vec![true; 3], ends).unwrap()
    }

    #[test]
    fn thresholds_are_checked_and_xon_defaults_to_three_kib_under_xoff() {
        assert_eq!(spec(0, None).validate().unwrap_err().path, "pfc.xoff");
        assert_eq!(spec(10_000, Some(10_000)).validate().unwrap_err().path, "pfc.xon");
        assert_eq!(spec(10_000, None).xon(), Bytes(10_000 - 3072));
        assert_eq!(spec(1_000, None).xon(), Bytes(0));
    }

    #[test]
    fn a_port_pauses_at_xoff_and_resumes_at_xon() {
        let mut pfc = ring();
        let port = LinkId(0);
        // 9 packets of 1,000 bytes: 9,000 held, under xoff.
        for uid in 0..9 {
            assert_eq!(pfc.admit(uid, port, 0, 1000), None);
        }
        assert_eq!(pfc.admit(9, port, 0, 1000), Some(Frame::Pause), "10,000 bytes reach xoff");
        assert_eq!(pfc.admit(10, port, 0, 1000), None, "one pause until the resume");
        // Resume at 10,000 - 3,072 = 6,928 bytes or less: after the 5th release (6,000 held).
        let resumed: Vec<Option<(LinkId, u8)>> = (0..5).map(|uid| pfc.release(uid)).collect();
        assert_eq!(resumed, vec![None, None, None, None, Some((port, 0))]);
        assert_eq!(pfc.release(3), None, "a packet released twice counts once");
        assert_eq!(pfc.port_stats(port, Time::ZERO).max_held, Bytes(11_000));
    }

    #[test]
    fn a_frame_takes_effect_after_the_reverse_links_frame_its_serialization_and_delay() {
        let rate = BitRate(10_000_000_000);
        let (now, delay) = (Time(1_000), Dur(2_000));
        // 64 bytes at 10 Gb/s: 51.2 ns, rounded up to 52 ns.
        assert_eq!(Pfc::frame_effect_at(now, None, rate, delay), Time(3_052));
        assert_eq!(Pfc::frame_effect_at(now, Some(Time(1_500)), rate, delay), Time(3_552));
    }

    #[test]
    fn paused_time_is_counted_and_repeated_frames_are_ignored() {
        let mut pfc = ring();
        let l = LinkId(3);
        assert!(pfc.frame_arrived(Time(100), (l, 0), Frame::Pause));
        assert!(!pfc.frame_arrived(Time(150), (l, 0), Frame::Pause));
        assert!(pfc.frame_arrived(Time(400), (l, 0), Frame::Resume));
        assert!(!pfc.frame_arrived(Time(450), (l, 0), Frame::Resume));
        assert!(pfc.frame_arrived(Time(1_000), (l, 0), Frame::Pause));
        let s = pfc.port_stats(l, Time(1_250));
        assert_eq!((s.pauses, s.paused_for), (2, Dur(300 + 250)));
    }

    #[test]
    fn a_ring_of_paused_links_is_reported_once_it_closes() {
        let mut pfc = ring();
        // Clockwise 0->1, 1->2, 2->0; and one counter-clockwise link, which closes nothing.
        pfc.frame_arrived(Time(10), (LinkId(0), 0), Frame::Pause);
        pfc.frame_arrived(Time(20), (LinkId(3), 0), Frame::Pause);
        pfc.frame_arrived(Time(30), (LinkId(1), 0), Frame::Pause);
        assert_eq!(pfc.cycles().1, 1, "0->1 and 1->0 form a cycle of two: {:?}", pfc.cycles().0);
        pfc.frame_arrived(Time(40), (LinkId(2), 0), Frame::Pause);
        let (cycles, found) = pfc.cycles();
        assert_eq!(found, 2);
        assert_eq!(cycles[1], PauseCycle { at: Time(40), links: vec![LinkId(2), LinkId(0), LinkId(1)], priority: 0 });
        assert!(pfc.still_paused(&cycles[1]));
        pfc.frame_arrived(Time(50), (LinkId(1), 0), Frame::Resume);
        assert!(!pfc.still_paused(&pfc.cycles().0[1]));
    }

    #[test]
    fn a_link_into_a_pfc_switch_needs_a_way_back() {
        let ends = vec![(NodeId(0), NodeId(1))];
        assert_eq!(Pfc::new(&spec(10_000, None), vec![false, true], ends).err(), Some(LinkId(0)));
    }

    /// Each priority of a port counts and pauses on its own: priority 3 reaching xoff pauses
    /// priority 3 alone, a lossy priority is not counted, and a cycle is one priority's.
    #[test]
    fn priorities_count_and_pause_apart() {
        let n = |i: u32| NodeId(i);
        let ends = vec![(n(0), n(1)), (n(1), n(0))];
        let spec = PfcSpec { priorities: Some(vec![0, 3]), ..spec(3_000, Some(1_000)) };
        spec.validate().unwrap();
        let mut pfc = Pfc::new(&spec, vec![true; 2], ends).unwrap();
        let port = LinkId(0);
        let data = crate::qdisc::harness::packet(1, 0, 1000);
        assert!(pfc.counts(&data, 3) && pfc.counts(&data, 0) && !pfc.counts(&data, 5), "5 is lossy");
        assert_eq!(pfc.admit(1, port, 0, 1000), None);
        assert_eq!(pfc.admit(2, port, 3, 1000), None);
        assert_eq!(pfc.admit(3, port, 3, 1000), None);
        assert_eq!(pfc.admit(4, port, 0, 1000), None, "priority 0 holds 2,000 bytes, under xoff");
        assert_eq!(pfc.admit(5, port, 3, 1000), Some(Frame::Pause), "priority 3 reaches 3,000");
        assert_eq!(pfc.release(2), None);
        assert_eq!(pfc.release(3), Some((port, 3)), "priority 3 back to 1,000: resume it");
        assert_eq!(pfc.port_stats(port, Time::ZERO).max_held, Bytes(5_000), "both priorities at once");
        // Paused in different priorities, the two links form no cycle; in one they do.
        pfc.frame_arrived(Time(10), (LinkId(0), 3), Frame::Pause);
        pfc.frame_arrived(Time(20), (LinkId(1), 0), Frame::Pause);
        assert_eq!(pfc.cycles().1, 0);
        pfc.frame_arrived(Time(30), (LinkId(1), 3), Frame::Pause);
        assert_eq!(pfc.cycles().0, &[PauseCycle { at: Time(30), links: vec![LinkId(1), LinkId(0)], priority: 3 }]);
        let s = pfc.port_stats(LinkId(1), Time(100));
        assert_eq!((s.pauses, s.paused_for), (2, Dur(80 + 70)), "summed over priorities");
        assert_eq!(
            PfcSpec { priorities: Some(vec![8]), ..spec.clone() }.validate().unwrap_err().path,
            "pfc.priorities[0]"
        );
        assert_eq!(PfcSpec { priorities: Some(vec![]), ..spec }.validate().unwrap_err().path, "pfc.priorities");
    }

    /// Thresholds per priority, by hand: priority 3 with xoff 4,000 and xon 1,000 pauses at
    /// its 4th packet of 1,000 bytes and resumes once 1,000 or less is held; priority 0, on
    /// the scenario's 10,000 and 10,000 − 3,072, at its 10th and once 6,928 or less is held.
    #[test]
    fn a_priority_with_thresholds_of_its_own_pauses_and_resumes_on_them() {
        let n = |i: u32| NodeId(i);
        let own = PriorityThresholds { priorities: vec![3], xoff: Bytes(4_000), xon: Some(Bytes(1_000)) };
        let spec = PfcSpec { thresholds: vec![own], ..spec(10_000, None) };
        spec.validate().unwrap();
        let mut pfc = Pfc::new(&spec, vec![true; 2], vec![(n(0), n(1)), (n(1), n(0))]).unwrap();
        let port = LinkId(0);
        let admit = |pfc: &mut Pfc, uids: std::ops::Range<u64>, priority| -> Vec<Option<Frame>> {
            uids.map(|uid| pfc.admit(uid, port, priority, 1000)).collect()
        };
        assert_eq!(admit(&mut pfc, 0..4, 3), [None, None, None, Some(Frame::Pause)]);
        let mut zero = vec![None; 9];
        zero.push(Some(Frame::Pause));
        assert_eq!(admit(&mut pfc, 100..110, 0), zero);
        let released: Vec<_> = (0..3).map(|uid| pfc.release(uid)).collect();
        assert_eq!(released, [None, None, Some((port, 3))], "4,000 − 3 × 1,000 = 1,000 held");
        let released: Vec<_> = (100..104).map(|uid| pfc.release(uid)).collect();
        assert_eq!(released, [None, None, None, Some((port, 0))], "10,000 − 4 × 1,000 = 6,000 ≤ 6,928");
        // Defaults, and what is refused, naming the key.
        let pair = |t: PriorityThresholds| PfcSpec { thresholds: vec![t], ..spec.clone() };
        let of = |priorities: Vec<u8>, xoff: u64, xon: Option<u64>| PriorityThresholds {
            priorities,
            xoff: Bytes(xoff),
            xon: xon.map(Bytes),
        };
        assert_eq!(pair(of(vec![5], 5_000, None)).thresholds_by_priority()[5], (5_000, 5_000 - 3_072));
        let refused = |s: PfcSpec| s.validate().unwrap_err().path;
        assert_eq!(refused(pair(of(vec![3], 0, None))), "pfc.thresholds[0].xoff");
        assert_eq!(refused(pair(of(vec![3], 4_000, Some(4_000)))), "pfc.thresholds[0].xon");
        assert_eq!(refused(pair(of(vec![], 4_000, None))), "pfc.thresholds[0].priorities");
        assert_eq!(refused(pair(of(vec![2, 9], 4_000, None))), "pfc.thresholds[0].priorities[1]");
        let twice = PfcSpec { thresholds: vec![of(vec![3], 4_000, None), of(vec![1, 3], 5_000, None)], ..spec.clone() };
        assert_eq!(refused(twice), "pfc.thresholds[1].priorities[1]");
        let lossy = PfcSpec { priorities: Some(vec![0]), ..pair(of(vec![3], 4_000, None)) };
        assert_eq!(refused(lossy), "pfc.thresholds[0].priorities[0]");
    }
}
