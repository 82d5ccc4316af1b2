//! The bytes each endpoint has waiting in its own host's queues, for endpoints that hold their
//! sends by it: Linux's TCP Small Queues (TSQ, `tcp_small_queue_check` in `tcp_output.c`:
//! a socket stops writing while more than its limit is queued below it, and the completion
//! of one of its packets, `tcp_wfree`, wakes it to write again) and an RDMA NIC, which takes a
//! queue pair's next packet only when the port can send it. Without either, a transport that
//! is not held by its window (a rate-based sender under PFC pauses, a burst at a host link
//! slower than the window) fills its host's queue without bound, and every packet behind
//! that backlog, its own ACKs and their congestion notifications, waits behind it.
//!
//! A packet counts from when its endpoint sends it until its transmission on the host's link
//! starts (or it is dropped before): the bytes still queued in the host, not those in
//! serialization. An endpoint that finds too much queued asks to be woken; the next of its
//! packets to leave the queue, by starting its transmission or by a drop (Linux's `tcp_wfree`
//! runs whenever the packet is freed), wakes it once, and it looks again. A packet that leaves
//! while it is being offered (its transmission starts at once, or the host's queue refuses it)
//! never waited, so it wakes no one: the count is what it was before the send. Without that
//! rule the subflows of one connection, which share its count, would wake each other without
//! end at one instant: one waits, another's segment is refused by a full queue, and the refusal
//! wakes the first, which finds the queue as full as before. A datagram fragmented at its
//! host's link leaves with its first fragment, which carries its uid.
//!
//! What this module owns: which endpoints are counted, the count of each, the packets being
//! counted (by uid, until they start or are dropped) and the endpoints waiting to be woken. The
//! world calls it when a counted endpoint sends, when a transmission starts on a host's link,
//! and when a packet is dropped; it touches no link and schedules nothing (it answers whom to
//! wake).

use crate::key_table::KeyTable;
use crate::packet::{AgentId, UidHasher};
use crate::units::Bytes;
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasherDefault;

/// Endpoint ids are consecutive counts like uids, so they take the uid's multiplicative hash
/// rather than SipHash: these maps are touched on every counted packet. Lookups only.
type ByAgent = BuildHasherDefault<UidHasher>;

#[derive(Default)]
pub(crate) struct HostQueues {
    /// The endpoints whose packets are counted.
    counted: HashSet<AgentId, ByAgent>,
    /// Each counted endpoint's bytes queued in its host, from its first packet until the
    /// endpoint is forgotten (an entry at zero stays: an RDMA NIC's flow empties its queue at
    /// every packet, and removing and inserting the entry each time cost two hash operations).
    queued: HashMap<AgentId, u64, ByAgent>,
    /// The packets being counted: their endpoint and size.
    packets: KeyTable<(AgentId, u16)>,
    /// The endpoints that asked to be woken when one of their packets leaves the queue.
    waiting: HashSet<AgentId, ByAgent>,
    /// The packet being offered to its host's queue, from `sent` to `offered`.
    offering: Option<u32>,
}

impl HostQueues {
    /// Count `agent`'s packets from now on.
    pub fn count(&mut self, agent: AgentId) {
        self.counted.insert(agent);
    }

    pub fn counts(&self, agent: AgentId) -> bool {
        self.counted.contains(&agent)
    }

    /// `agent`'s bytes queued in its host.
    pub fn queued(&self, agent: AgentId) -> Bytes {
        Bytes(self.queued.get(&agent).copied().unwrap_or(0))
    }

    /// Counted `agent` offered packet `uid` of `size` bytes to its host.
    pub fn sent(&mut self, agent: AgentId, uid: u32, size: u16) {
        self.packets.insert(uid as u64, (agent, size));
        *self.queued.entry(agent).or_default() += size as u64;
        self.offering = Some(uid);
    }

    /// The packet offered last has been queued, started or refused.
    pub fn offered(&mut self) {
        self.offering = None;
    }

    /// `agent` waits for one of its packets to leave the queue.
    pub fn wait(&mut self, agent: AgentId) {
        self.waiting.insert(agent);
    }

    /// Packet `uid` left its host's queue (its transmission started, or it was dropped): the
    /// endpoint to wake, if it was counted and waited, and the packet had waited in the queue.
    pub fn left(&mut self, uid: u32) -> Option<AgentId> {
        let agent = self.uncount(uid)?;
        if self.offering == Some(uid) {
            return None;
        }
        self.waiting.remove(&agent).then_some(agent)
    }

    /// An endpoint was reclaimed (none of its packets is in the network): forget it.
    pub fn forget(&mut self, agent: AgentId) {
        self.counted.remove(&agent);
        self.waiting.remove(&agent);
        self.queued.remove(&agent);
    }

    fn uncount(&mut self, uid: u32) -> Option<AgentId> {
        let (agent, size) = self.packets.remove(uid as u64)?;
        // An endpoint is forgotten only once none of its packets is in the network
        // (`Flows::reclaimable`), so a counted packet's endpoint still has its count.
        let left = self.queued.get_mut(&agent).expect("a counted packet's endpoint has a count");
        *left -= size as u64;
        Some(agent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_until_the_transmission_starts_and_wakes_a_waiter_once() {
        let mut h = HostQueues::default();
        let a = AgentId(4);
        h.count(a);
        h.sent(a, 1, 1500);
        h.sent(a, 2, 1500);
        assert_eq!(h.queued(a), Bytes(3000));
        h.wait(a);
        assert_eq!(h.left(1), Some(a), "the first packet to leave wakes the waiter");
        assert_eq!(h.queued(a), Bytes(1500));
        assert_eq!(h.left(2), None, "woken once: it waits again only if it asks");
        assert_eq!(h.queued(a), Bytes(0));
        assert_eq!(h.left(3), None, "an uncounted packet changes nothing");
        assert!(h.packets.is_empty(), "nothing is kept for a packet gone");
        h.forget(a);
        assert!(h.queued.is_empty() && h.counted.is_empty(), "nothing is kept for an endpoint gone");
    }

    /// A packet that leaves while it is offered (started at once, or refused) never waited:
    /// the waiter stays waiting, and the next packet that did wait wakes it.
    #[test]
    fn a_packet_that_never_waited_wakes_no_one() {
        let mut h = HostQueues::default();
        let a = AgentId(4);
        h.count(a);
        h.sent(a, 1, 1500);
        h.offered();
        h.wait(a);
        h.sent(a, 2, 1500);
        assert_eq!(h.left(2), None, "refused as it was offered: the count is as before");
        h.offered();
        assert_eq!(h.queued(a), Bytes(1500));
        assert_eq!(h.left(1), Some(a), "the packet that waited wakes the waiter");
    }
}
