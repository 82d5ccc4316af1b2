//! Traffic classes: a switch port's queues per class of priority (IEEE 802.1Q section 8.6.6,
//! priority to traffic class; section 8.6.8, strict priority transmission selection), so that
//! PFC (IEEE 802.1Qbb, `pfc.rs`) can pause one priority while the others keep going. Each class
//! is a queue discipline of its own (`qdisc`: drop-tail, RED's marking for DCQCN, ...) for the
//! packets of its `priorities` (a flow's priority, IEEE 802.1p: `FlowPriorities`); a packet of
//! a priority no class lists joins the last class. The link takes the next packet from the
//! first class, in the order written, that has one and none of whose priorities is paused:
//! strict priority, as switches serve their lossless and control classes. Classes with a
//! `quantum` share what the strict ones leave by Enhanced Transmission Selection (IEEE 802.1Qaz
//! section 37.3), as Linux's `sch_ets` runs it (net/sched/sch_ets.c): deficit round robin
//! among the sharing classes that hold packets, a class entering the round with its quantum of
//! credit, sending while its head packet fits the credit, and going to the back of the round
//! with one quantum more when it does not; a class that empties leaves the round. Its head is
//! taken from its own discipline to be measured and kept until it leaves (`sch_ets` peeks the
//! same way, `qdisc_peek_dequeued`). Quanta in proportion give the classes that share of the
//! bandwidth, as 802.1Qaz's percentages do. A class whose priorities are all paused keeps its
//! packets until a resume, while the others leave, and is passed by in the round without
//! credit; a class holding a paused priority holds the packets of its other priorities behind
//! it (the head-of-line blocking one queue for several priorities has).
//!
//! Parameters: `classes`, 1 to 8 of `{ priorities = [...], qdisc = {...}, quantum = "..." }`
//! (each priority in at most one class; `qdisc` drop-tail's defaults when left out; `quantum`
//! in bytes, 1 B to 4 GiB, for a class that shares by ETS, none for a strict one; the strict
//! classes come first, as `sch_ets`'s strict bands do); one class of every priority when left
//! out.
//! Must not touch: the link, the world, PFC or any endpoint; it sees the packets it is given,
//! its `QdiscCx`'s flow priorities and the priorities paused on its link (`set_paused`).

use super::{AnyQdisc, Backlog, Dequeued, Qdisc, QdiscCx, QdiscSpec, SlabEnqueue};
use crate::error::ConfigError;
use crate::packet::{FlowId, Packet, PRIORITIES};
use crate::slab::EntryId;
use crate::units::{Bytes, Time};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// The largest quantum: `sch_ets`'s quanta are 32-bit byte counts.
const MAX_QUANTUM: Bytes = Bytes(u32::MAX as u64);

/// One class: the priorities whose packets it queues, and its discipline.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassSpec {
    #[serde(default)]
    pub priorities: Vec<u8>,
    #[serde(default)]
    pub qdisc: QdiscSpec,
    /// Bytes a round of ETS gives the class; none: the class is strict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantum: Option<Bytes>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassesConfig {
    /// The classes, served in this order; one of every priority, drop-tail, when left out.
    #[serde(default = "one_class")]
    pub classes: Vec<ClassSpec>,
}

fn one_class() -> Vec<ClassSpec> {
    vec![ClassSpec::default()]
}

/// One class as it runs.
struct Class {
    /// Bit `p`: the class queues priority `p`.
    priorities: u8,
    queue: AnyQdisc,
    /// ETS's quantum in bytes; 0 for a strict class.
    quantum: u64,
    /// ETS's credit in bytes, while the class is in the round.
    deficit: u64,
    /// The head packet taken from `queue` to be measured, and its size, until it leaves.
    head: Option<(Dequeued, u64)>,
}

impl Class {
    fn shares(&self) -> bool {
        self.quantum > 0
    }

    fn is_empty(&self) -> bool {
        self.head.is_none() && self.queue.backlog().packets == 0
    }

    /// The class's next packet and its size, taken from its discipline if not already held:
    /// `Err` with what the discipline said when it hands out nothing.
    fn peek(&mut self, cx: &mut QdiscCx) -> Result<u64, Dequeued> {
        if let Some((_, size)) = self.head {
            return Ok(size);
        }
        let next = self.queue.dequeue(cx);
        let size = match next {
            Dequeued::Packet(ref p) => p.size as u64,
            Dequeued::Held(id) => cx.slab.held(id).size as u64,
            other => return Err(other),
        };
        self.head = Some((next, size));
        Ok(size)
    }
}

pub struct Classes {
    classes: Vec<Class>,
    /// Per priority: the index of its class.
    class_of: [u8; PRIORITIES as usize],
    /// The priorities paused on the link, bit `p` for priority `p` (`Qdisc::set_paused`).
    paused: u8,
    /// ETS's round: the sharing classes that hold packets, the one to serve first.
    round: VecDeque<u8>,
}

impl Classes {
    pub fn new(cfg: &ClassesConfig) -> Result<Self, ConfigError> {
        if cfg.classes.is_empty() || cfg.classes.len() > PRIORITIES as usize {
            return Err(ConfigError::new("classes", format!("must list 1 to {PRIORITIES} classes")));
        }
        let last = (cfg.classes.len() - 1) as u8;
        let mut class_of = [last; PRIORITIES as usize];
        let mut listed = 0u8;
        let mut classes: Vec<Class> = Vec::with_capacity(cfg.classes.len());
        for (i, c) in cfg.classes.iter().enumerate() {
            let key = format!("classes[{i}]");
            let quantum = quantum(c, classes.last(), &key)?;
            let mut mask = 0u8;
            for (j, &p) in c.priorities.iter().enumerate() {
                let at = || format!("{key}.priorities[{j}]");
                crate::packet::check_priority(at(), p)?;
                if listed & 1 << p != 0 {
                    return Err(ConfigError::new(at(), format!("priority {p} is in an earlier class")));
                }
                listed |= 1 << p;
                mask |= 1 << p;
                class_of[p as usize] = i as u8;
            }
            let queue = c.qdisc.build().map_err(|e| e.within(&format!("{key}.qdisc")))?;
            classes.push(Class { priorities: mask, queue, quantum, deficit: 0, head: None });
        }
        // The last class takes every priority no class lists.
        classes.last_mut().expect("checked above").priorities |= !listed;
        Ok(Classes { classes, class_of, paused: 0, round: VecDeque::new() })
    }

    /// The class a packet of `flow` joins.
    fn class_of(&self, flow: FlowId, cx: &QdiscCx) -> usize {
        self.class_of[cx.priorities.of(flow) as usize] as usize
    }

    /// After an enqueue to class `i`: a sharing class that now holds packets and was not in
    /// ETS's round joins it at the back, with one quantum of credit (`ets_qdisc_enqueue`).
    fn join_round(&mut self, i: usize) {
        let class = &mut self.classes[i];
        if class.shares() && !self.round.contains(&(i as u8)) && !class.is_empty() {
            class.deficit = class.quantum;
            self.round.push_back(i as u8);
        }
    }

    /// The strict classes in order: the first not paused that hands out a packet.
    fn dequeue_strict(&mut self, cx: &mut QdiscCx, wait: &mut Option<Time>) -> Option<Dequeued> {
        let paused = self.paused;
        for class in self.classes.iter_mut().filter(|c| !c.shares() && c.priorities & paused == 0) {
            match class.queue.dequeue(cx) {
                Dequeued::Empty => {}
                Dequeued::NotBefore(t) => *wait = Some(wait.map_or(t, |w| w.min(t))),
                handed_out => return Some(handed_out),
            }
        }
        None
    }

    /// ETS's round (`ets_qdisc_dequeue`): the class at the front sends its head if the head
    /// fits its credit, else goes to the back with a quantum more. A paused class, or one
    /// whose discipline asks to wait, is passed by without credit; the round ends when every
    /// class in it has been passed by so since the last one that could send.
    fn dequeue_shared(&mut self, cx: &mut QdiscCx, wait: &mut Option<Time>) -> Option<Dequeued> {
        let mut passed_by = 0;
        while let Some(&front) = self.round.front() {
            if passed_by >= self.round.len() {
                return None;
            }
            let i = front as usize;
            let paused = self.classes[i].priorities & self.paused != 0;
            let size = if paused { Err(Dequeued::Empty) } else { self.classes[i].peek(cx) };
            match size {
                Err(Dequeued::Empty) if !paused => {
                    // Its discipline dropped what it held (an AQM at dequeue): out of the round.
                    self.round.pop_front();
                    continue;
                }
                Err(other) => {
                    if let Dequeued::NotBefore(t) = other {
                        *wait = Some(wait.map_or(t, |w| w.min(t)));
                    }
                    self.round.rotate_left(1);
                    passed_by += 1;
                }
                Ok(size) if size <= self.classes[i].deficit => {
                    let class = &mut self.classes[i];
                    class.deficit -= size;
                    let (pkt, _) = class.head.take().expect("peeked");
                    if class.is_empty() {
                        self.round.pop_front();
                    }
                    return Some(pkt);
                }
                Ok(_) => {
                    let class = &mut self.classes[i];
                    class.deficit += class.quantum;
                    self.round.rotate_left(1);
                    passed_by = 0;
                }
            }
        }
        None
    }
}

/// Class `c`'s quantum (0: strict), checked: in range, and no strict class after a sharing
/// one (`previous`).
fn quantum(c: &ClassSpec, previous: Option<&Class>, key: &str) -> Result<u64, ConfigError> {
    let at = || format!("{key}.quantum");
    match c.quantum {
        None if previous.is_some_and(Class::shares) => Err(ConfigError::new(
            at(),
            "a strict class (no quantum) after one that shares by ETS; list strict classes first",
        )),
        None => Ok(0),
        Some(q) if q.0 == 0 || q > MAX_QUANTUM => {
            Err(ConfigError::new(at(), format!("must be 1 to {} bytes", MAX_QUANTUM.0)))
        }
        Some(q) => Ok(q.0),
    }
}

impl SlabEnqueue for Classes {
    fn enqueue_held(&mut self, id: EntryId, cx: &mut QdiscCx) {
        let i = self.class_of(cx.slab.held(id).flow, cx);
        self.classes[i].queue.enqueue_held(id, cx);
        self.join_round(i);
    }
}

impl Qdisc for Classes {
    fn enqueue(&mut self, pkt: Packet, cx: &mut QdiscCx) {
        let i = self.class_of(pkt.flow, cx);
        self.classes[i].queue.enqueue(pkt, cx);
        self.join_round(i);
    }

    /// The first strict class, in order, none of whose priorities is paused and which hands
    /// out a packet; then ETS's round among the sharing classes; else the earliest time a
    /// class asked to wait until, or nothing.
    fn dequeue(&mut self, cx: &mut QdiscCx) -> Dequeued {
        let mut wait: Option<Time> = None;
        if let Some(pkt) = self.dequeue_strict(cx, &mut wait) {
            return pkt;
        }
        if let Some(pkt) = self.dequeue_shared(cx, &mut wait) {
            return pkt;
        }
        wait.map_or(Dequeued::Empty, Dequeued::NotBefore)
    }

    fn backlog(&self) -> Backlog {
        let held =
            |c: &Class| c.head.as_ref().map_or(Backlog::default(), |&(_, size)| Backlog { packets: 1, bytes: size });
        self.classes.iter().map(|c| c.queue.backlog() + held(c)).sum()
    }

    fn keeps_priorities_apart(&self) -> bool {
        true
    }

    fn set_paused(&mut self, paused: u8) {
        self.paused = paused;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::harness::{packet, Bench};
    use crate::units::BitRate;

    fn classes(json: &str) -> Result<Classes, ConfigError> {
        Classes::new(&serde_json::from_str(json).unwrap())
    }

    /// Two classes: priority 3 first, everything else after. Flows 0 and 1 are in priority 0,
    /// flow 3 in priority 3. Strict priority hands out priority 3's packets first; with
    /// priority 3 paused the other class's leave and priority 3's wait; with priority 0
    /// paused, priority 3's leave and then nothing; a priority no class lists joins the last.
    #[test]
    fn strict_priority_around_the_paused_classes() {
        let mut q = classes(r#"{"classes": [{"priorities": [3]}, {"priorities": [0]}]}"#).unwrap();
        let mut bench = Bench::new(1);
        let mut priorities = crate::packet::FlowPriorities::default();
        priorities.set(FlowId(3), 3);
        priorities.set(FlowId(5), 5);
        let mut cx = bench.cx(Time::ZERO, BitRate(1_000_000_000));
        cx.priorities = &priorities;
        for (uid, flow) in [(1, 0), (2, 3), (3, 1), (4, 3), (5, 5)] {
            q.enqueue(packet(uid, flow, 1000), &mut cx);
        }
        assert_eq!(q.backlog(), Backlog { packets: 5, bytes: 5000 });
        let mut take = |q: &mut Classes, paused: u8| {
            q.set_paused(paused);
            q.dequeue(&mut cx).into_packet(cx.slab).map(|p| p.uid)
        };
        assert_eq!(take(&mut q, 1 << 3), Some(1), "priority 3 paused: the other class's first");
        assert_eq!(take(&mut q, 0), Some(2), "resumed: priority 3 goes first");
        assert_eq!(take(&mut q, 1), Some(4), "priority 0 paused: priority 3's");
        assert_eq!(take(&mut q, 1), None, "the last class holds priority 0 (and 5) behind the pause");
        assert_eq!(take(&mut q, 0), Some(3));
        assert_eq!(take(&mut q, 0), Some(5), "priority 5 joined the last class");
        assert_eq!(take(&mut q, 0), None);
    }

    /// The uids `q` hands out, one dequeue at a time, with `paused` set, until it has none.
    fn drain(q: &mut Classes, cx: &mut QdiscCx, paused: u8) -> Vec<u32> {
        q.set_paused(paused);
        std::iter::from_fn(|| q.dequeue(cx).into_packet(cx.slab).map(|p| p.uid)).collect()
    }

    /// ETS by hand (sch_ets's deficit round robin): classes A (priority 1, quantum 3000 B)
    /// and B (priority 2, quantum 1500 B), each with four 1500-byte packets, A's enqueued
    /// first, so A leads the round with 3000 B of credit and B follows with 1500. A sends two
    /// (credit 0), cannot send a third and goes to the back with 3000; B sends one (0) and
    /// goes back with 1500; A sends two more, and so on: A A B A A B B B, the last two B's
    /// alone. Over the four rounds where both send, two to one: the quanta's ratio.
    #[test]
    fn ets_shares_by_quantum() {
        let json = r#"{"classes": [{"priorities": [1], "quantum": "3000B"}, {"priorities": [2], "quantum": "1500B"}]}"#;
        let mut q = classes(json).unwrap();
        let mut bench = Bench::new(1);
        let mut priorities = crate::packet::FlowPriorities::default();
        priorities.set(FlowId(1), 1);
        priorities.set(FlowId(2), 2);
        let mut cx = bench.cx(Time::ZERO, BitRate(1_000_000_000));
        cx.priorities = &priorities;
        for uid in 10..14 {
            q.enqueue(packet(uid, 1, 1500), &mut cx);
        }
        for uid in 20..24 {
            q.enqueue(packet(uid, 2, 1500), &mut cx);
        }
        assert_eq!(drain(&mut q, &mut cx, 0), [10, 11, 20, 12, 13, 21, 22, 23]);
        assert_eq!(q.backlog(), Backlog::default());
    }

    /// A strict class (no quantum) goes before the sharing ones; a paused sharing class is
    /// passed by without credit and holds its packets (and its measured head) until resumed;
    /// with every class paused nothing leaves. Priority 3 strict; 1 and 2 share equally.
    #[test]
    fn ets_after_strict_and_around_pauses() {
        let json = r#"{"classes": [{"priorities": [3]}, {"priorities": [1], "quantum": "1500B"},
            {"priorities": [2], "quantum": "1500B"}]}"#;
        let mut q = classes(json).unwrap();
        let mut bench = Bench::new(1);
        let mut priorities = crate::packet::FlowPriorities::default();
        for p in 1..=3 {
            priorities.set(FlowId(p), p as u8);
        }
        let mut cx = bench.cx(Time::ZERO, BitRate(1_000_000_000));
        cx.priorities = &priorities;
        for (uid, flow) in [(10, 1), (11, 1), (20, 2), (21, 2), (30, 3)] {
            q.enqueue(packet(uid, flow, 1500), &mut cx);
        }
        q.set_paused(1 << 1);
        let mut take = |q: &mut Classes| q.dequeue(&mut cx).into_packet(cx.slab).map(|p| p.uid);
        assert_eq!(take(&mut q), Some(30), "the strict class first");
        assert_eq!(take(&mut q), Some(20), "priority 1 paused: priority 2's class");
        assert_eq!(take(&mut q), Some(21));
        assert_eq!(take(&mut q), None, "only the paused class holds packets");
        assert_eq!(q.backlog(), Backlog { packets: 2, bytes: 3000 });
        q.set_paused(0);
        assert_eq!((take(&mut q), take(&mut q), take(&mut q)), (Some(10), Some(11), None));
    }

    /// The shared harness (every packet and byte arrives, leaves, drops or waits; each flow in
    /// order) over an ETS class whose head is held while measured: behind a drop-tail of 8
    /// packets, and behind CoDel, which drops at dequeue, with a quantum smaller than most
    /// packets.
    #[test]
    fn ets_conserves_packets_and_bytes() {
        for (child, quantum) in
            [(r#"{"kind": "droptail", "limit": "8p"}"#, 1500), (r#"{"kind": "codel", "limit": "8p"}"#, 300)]
        {
            let json = format!(r#"{{"classes": [{{"priorities": [0], "quantum": "{quantum}B", "qdisc": {child}}}]}}"#);
            let mut q = classes(&json).unwrap();
            let (departed, dropped) = crate::qdisc::harness::check_conservation(&mut q, 20_000, 7);
            assert!(departed > 0 && dropped > 0, "{child}: {departed} departed, {dropped} dropped");
        }
    }

    #[test]
    fn bad_classes_are_refused_naming_the_key() {
        let err = |json: &str| classes(json).err().unwrap().path;
        assert_eq!(err(r#"{"classes": []}"#), "classes");
        assert_eq!(err(r#"{"classes": [{"priorities": [9]}]}"#), "classes[0].priorities[0]");
        assert_eq!(err(r#"{"classes": [{"priorities": [1]}, {"priorities": [2, 1]}]}"#), "classes[1].priorities[1]");
        let bad_child = r#"{"classes": [{"qdisc": {"kind": "step", "threshold": "200p", "limit": "100p"}}]}"#;
        assert!(err(bad_child).starts_with("classes[0].qdisc"), "{}", err(bad_child));
        assert_eq!(err(r#"{"classes": [{"priorities": [1], "quantum": "0B"}]}"#), "classes[0].quantum");
        let strict_after = r#"{"classes": [{"priorities": [1], "quantum": "1500B"}, {"priorities": [2]}]}"#;
        assert_eq!(err(strict_after), "classes[1].quantum");
    }
}
