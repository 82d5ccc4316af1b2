//! Traffic classes: a switch port's queues per class of priority (IEEE 802.1Q section 8.6.6,
//! priority to traffic class; section 8.6.8, strict priority transmission selection), so that
//! PFC (IEEE 802.1Qbb, `pfc.rs`) can pause one priority while the others keep going. Each class
//! is a queue discipline of its own (`qdisc`: drop-tail, RED's marking for DCQCN, ...) for the
//! packets of its `priorities` (a flow's priority, IEEE 802.1p: `FlowPriorities`); a packet of
//! a priority no class lists joins the last class. The link takes the next packet from the
//! first class, in the order written, that has one and none of whose priorities is paused:
//! strict priority, as switches serve their lossless and control classes; the weighted round
//! robin of 802.1Qaz (ETS) is not modelled. A class whose priorities are all paused keeps its
//! packets until a resume, while the others leave; a class holding a paused priority holds the
//! packets of its other priorities behind it (the head-of-line blocking one queue for several
//! priorities has).
//!
//! Parameters: `classes`, 1 to 8 of `{ priorities = [...], qdisc = {...} }` (each priority in
//! at most one class; `qdisc` drop-tail's defaults when left out); one class of every priority
//! when left out.
//! Must not touch: the link, the world, PFC or any endpoint; it sees the packets it is given,
//! its `QdiscCx`'s flow priorities and the priorities paused on its link (`set_paused`).

use super::{AnyQdisc, Backlog, Dequeued, Qdisc, QdiscCx, QdiscSpec, SlabEnqueue};
use crate::error::ConfigError;
use crate::packet::{FlowId, Packet, PRIORITIES};
use crate::slab::EntryId;
use crate::units::Time;
use serde::{Deserialize, Serialize};

/// One class: the priorities whose packets it queues, and its discipline.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassSpec {
    #[serde(default)]
    pub priorities: Vec<u8>,
    #[serde(default)]
    pub qdisc: QdiscSpec,
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
}

pub struct Classes {
    classes: Vec<Class>,
    /// Per priority: the index of its class.
    class_of: [u8; PRIORITIES as usize],
    /// The priorities paused on the link, bit `p` for priority `p` (`Qdisc::set_paused`).
    paused: u8,
}

impl Classes {
    pub fn new(cfg: &ClassesConfig) -> Result<Self, ConfigError> {
        if cfg.classes.is_empty() || cfg.classes.len() > PRIORITIES as usize {
            return Err(ConfigError::new("classes", format!("must list 1 to {PRIORITIES} classes")));
        }
        let last = (cfg.classes.len() - 1) as u8;
        let mut class_of = [last; PRIORITIES as usize];
        let mut listed = 0u8;
        let mut classes = Vec::with_capacity(cfg.classes.len());
        for (i, c) in cfg.classes.iter().enumerate() {
            let key = format!("classes[{i}]");
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
            classes.push(Class { priorities: mask, queue });
        }
        // The last class takes every priority no class lists.
        classes.last_mut().expect("checked above").priorities |= !listed;
        Ok(Classes { classes, class_of, paused: 0 })
    }

    /// The queue of the class a packet of `flow` joins.
    fn class_for(&mut self, flow: FlowId, cx: &QdiscCx) -> &mut AnyQdisc {
        let class = self.class_of[cx.priorities.of(flow) as usize];
        &mut self.classes[class as usize].queue
    }
}

impl SlabEnqueue for Classes {
    fn enqueue_held(&mut self, id: EntryId, cx: &mut QdiscCx) {
        let flow = cx.slab.held(id).flow;
        self.class_for(flow, cx).enqueue_held(id, cx);
    }
}

impl Qdisc for Classes {
    fn enqueue(&mut self, pkt: Packet, cx: &mut QdiscCx) {
        self.class_for(pkt.flow, cx).enqueue(pkt, cx);
    }

    /// The first class, in order, none of whose priorities is paused and which hands out a
    /// packet; else the earliest time a class asked to wait until, or nothing.
    fn dequeue(&mut self, cx: &mut QdiscCx) -> Dequeued {
        let mut wait: Option<Time> = None;
        let paused = self.paused;
        for class in self.classes.iter_mut().filter(|c| c.priorities & paused == 0) {
            match class.queue.dequeue(cx) {
                Dequeued::Empty => {}
                Dequeued::NotBefore(t) => wait = Some(wait.map_or(t, |w| w.min(t))),
                handed_out => return handed_out,
            }
        }
        wait.map_or(Dequeued::Empty, Dequeued::NotBefore)
    }

    fn backlog(&self) -> Backlog {
        self.classes
            .iter()
            .map(|c| c.queue.backlog())
            .fold(Backlog::default(), |a, b| Backlog { packets: a.packets + b.packets, bytes: a.bytes + b.bytes })
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

    #[test]
    fn bad_classes_are_refused_naming_the_key() {
        let err = |json: &str| classes(json).err().unwrap().path;
        assert_eq!(err(r#"{"classes": []}"#), "classes");
        assert_eq!(err(r#"{"classes": [{"priorities": [9]}]}"#), "classes[0].priorities[0]");
        assert_eq!(err(r#"{"classes": [{"priorities": [1]}, {"priorities": [2, 1]}]}"#), "classes[1].priorities[1]");
        let bad_child = r#"{"classes": [{"qdisc": {"kind": "step", "threshold": "200p", "limit": "100p"}}]}"#;
        assert!(err(bad_child).starts_with("classes[0].qdisc"), "{}", err(bad_child));
    }
}
