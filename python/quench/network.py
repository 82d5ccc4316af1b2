"""A readable builder for scenarios: hosts, routers, links with queue disciplines, flows.

Every method returns the network, so calls chain. Quantities are strings with units
("10Mbps", "25ms", "64KB", "100p") or bare numbers in base units (seconds, bit/s, bytes);
the engine validates everything once, when the scenario is built, and names any bad key.
"""

from __future__ import annotations

import copy
from typing import Any

Quantity = str | int | float


def droptail(limit: Quantity = "1000p") -> dict[str, Any]:
    """A drop-tail FIFO; `limit` in packets ("100p"), bytes ("64KB") or both ("100p,64KB"),
    default "1000p"."""
    return {"kind": "droptail", "limit": limit}


def red(
    min_th: Quantity = "auto", max_th: Quantity = "auto", limit: Quantity = "1000p", **params: Any
) -> dict[str, Any]:
    """A RED queue (Floyd & Jacobson 1993). `min_th` and `max_th`: the average queue's
    thresholds, packets ("5p"), bytes ("20KB"), a bare number in the mode's unit, or "auto"
    (the default: ARED's max(5, target_delay x link packets/s / 2) packets, and 3 x min_th);
    `limit`: the buffer, default "1000p". Other parameters: mode ("packets", the default, or
    "bytes"), max_p (drop probability at max_th, default 0.02), w_q (the average's weight,
    default 0.002, or "auto": 1 - exp(-1/link packets per second)), mean_packet_size (bytes,
    default "500B"), target_delay (for the "auto" thresholds, default "5ms"), curve ("gentle",
    the default, or "classic"), spacing ("wait", ns-2's and the default, "fj93", or
    "independent": each arrival with pb alone, as DCQCN's switches mark), signal ("drop", the
    default, or "mark": ECN), forced ("drop", the default, or "mark"), adapt ("none", the
    default, "feng1999", "floyd2001", or a table with "kind")."""
    return {"kind": "red", "min_th": min_th, "max_th": max_th, "limit": limit, **params}


def fq(limit: Quantity | None = None, advertise_rate: bool | None = None) -> dict[str, Any]:
    """Fair queueing (Demers, Keshav, Shenker 1989): finish tags from a bit-by-bit round-robin
    virtual clock; on overflow the last packet of the flow holding the most buffer is dropped.
    `limit`: the buffer, packets or bytes, default "1000p". `advertise_rate` (default False):
    stamp the router-assisted flows' rate requests with their fair share."""
    return _clean({"kind": "fq", "limit": limit, "advertise_rate": advertise_rate})


def drr(limit: Quantity | None = None, quantum: Quantity | None = None) -> dict[str, Any]:
    """Deficit round robin (Shreedhar & Varghese 1995), one queue per flow. `limit`: the
    buffer, packets or bytes, default "1000p"; `quantum`: bytes each queue may send per round,
    default "1500B"."""
    return _clean({"kind": "drr", "limit": limit, "quantum": quantum})


def sfq(
    limit: Quantity | None = None, buckets: int | None = None, quantum: Quantity | None = None, perturb: Quantity = 0
) -> dict[str, Any]:
    """Stochastic fair queueing (McKenney 1990): flows hashed into `buckets` queues (default
    1024) served by DRR with `quantum` bytes (default "1500B"), under one `limit` (packets or
    bytes, default "1000p"); `perturb` redraws the hash salt at that interval (a duration,
    default 0: never)."""
    return _clean({"kind": "sfq", "limit": limit, "buckets": buckets, "quantum": quantum, "perturb": perturb})


def codel(
    target: Quantity | None = None,
    interval: Quantity | None = None,
    limit: Quantity | None = None,
    ecn: bool | None = None,
    **params: Any,
) -> dict[str, Any]:
    """CoDel, Controlled Delay (RFC 8289): drops (or, with `ecn`, marks) at dequeue once the
    sojourn time has stayed above `target` for `interval`, then at intervals of
    interval/sqrt(count). Defaults: target "5ms", interval "100ms", limit "1000p", ecn False.
    Other parameters: mtu (bytes, default "1500B": a queue of at most one MTU is never above
    target), ce_threshold (a duration; mark ECT packets whose sojourn exceeds it; off),
    control_law ("exact", RFC 8289's square root, or "newton", Linux's and ns-3's reciprocal
    square root refined by one Newton step per drop)."""
    return _clean({"kind": "codel", "target": target, "interval": interval, "limit": limit, "ecn": ecn, **params})


def fq_codel(
    flows: int | None = None,
    quantum: Quantity | None = None,
    limit: Quantity | None = None,
    memory_limit: Quantity | None = None,
    **params: Any,
) -> dict[str, Any]:
    """FQ-CoDel (RFC 8290): flows hashed into `flows` queues (default 1024) served by deficit
    round robin with `quantum` bytes (default "1514B"), new (sparse) queues first, CoDel on
    each queue. When the packets exceed `limit` (default "10240p") or their bytes
    `memory_limit` (default "32MiB"), up to drop_batch_size (default 64) packets go from the
    head of the fattest queue. CoDel's parameters: target ("5ms"), interval ("100ms"), mtu
    ("1500B"), ecn (default True), ce_threshold (off), control_law ("exact")."""
    return _clean(
        {"kind": "fq_codel", "flows": flows, "quantum": quantum, "limit": limit, "memory_limit": memory_limit, **params}
    )


def pie(
    target: Quantity | None = None,
    tupdate: Quantity | None = None,
    limit: Quantity | None = None,
    ecn: bool | None = None,
    **params: Any,
) -> dict[str, Any]:
    """PIE (RFC 8033): arrivals dropped with a probability that a PI controller updates every
    `tupdate` from the queue delay's distance to `target`. Defaults: target "15ms", tupdate
    "15ms", limit "1000p", ecn False (mark ECT packets while the probability is at most
    mark_ecnth, 0.1). Other parameters: alpha (0.125 Hz), beta (1.25 Hz), max_burst ("150ms"),
    dq_threshold ("16KiB"), mean_packet_size ("1500B"), delay_estimate ("departure_rate", the
    RFC's; "timestamp", Linux's default), derandomize (False; Linux always de-randomizes)."""
    return _clean({"kind": "pie", "target": target, "tupdate": tupdate, "limit": limit, "ecn": ecn, **params})


def fq_pie(
    flows: int | None = None,
    quantum: Quantity | None = None,
    limit: Quantity | None = None,
    memory_limit: Quantity | None = None,
    **params: Any,
) -> dict[str, Any]:
    """FQ-PIE (Linux sch_fq_pie): FQ-CoDel's flow queues (`flows`, default 1024, served by
    deficit round robin with `quantum` bytes, default "1514B", new queues first) with a PIE
    controller on each queue. An arrival is dropped when `limit` packets (default "10240p")
    are queued or its bytes would exceed `memory_limit` (default "32MiB"). PIE's parameters as
    in `pie()`: target ("15ms"), tupdate ("15ms"), alpha (0.125 Hz), beta (1.25 Hz), max_burst
    ("150ms"), ecn (False), mark_ecnth (0.1), dq_threshold ("16KiB"), mean_packet_size
    ("1500B"), derandomize (False); delay_estimate defaults to "timestamp" (Linux's)."""
    return _clean(
        {"kind": "fq_pie", "flows": flows, "quantum": quantum, "limit": limit, "memory_limit": memory_limit, **params}
    )


def dualpi2(
    target: Quantity | None = None,
    step_thresh: Quantity | None = None,
    coupling: float | None = None,
    limit: Quantity | None = None,
    **params: Any,
) -> dict[str, Any]:
    """DualPI2, the Coupled Dual-Queue AQM for L4S (RFC 9332): ECT(1) and CE packets go to an
    L4S queue, the rest to a Classic queue, under one `limit` (default "10000p", Linux's). A
    PI controller updates a base probability p' every tupdate ("16ms") from the Classic head's
    sojourn against `target` ("15ms") with gains alpha (0.16 Hz) and beta (3.2 Hz); Classic
    packets are dropped (Not-ECT) or marked with p' squared, L4S packets marked with
    `coupling`·p' (k, default 2) or with certainty once their sojourn exceeds `step_thresh`
    ("1ms") while more than th_len packets (default 1, RFC 9332's Th_len) are left in the L4S
    queue; th_len_at ("dequeue", the RFC's count after the dequeue; "enqueue", Linux's
    min_qlen_step: at least th_len found on arrival, Linux's default th_len being 0). Other
    parameters: tshift ("40ms", the time-shifted FIFO), drop_overload (True:
    past p_Cmax = 1/k² L4S packets are dropped like Classic ones), scheduler ("time_shifted",
    the RFC's; "wrr", Linux's, with c_protection 10 percent for the Classic queue and mtu
    "1500B"), pi_delay ("classic"; "max", Linux's larger head sojourn of both queues),
    decisions ("recur", the RFC pseudocode's deterministic one; "random", Linux's)."""
    return _clean(
        {
            "kind": "dualpi2",
            "target": target,
            "step_thresh": step_thresh,
            "coupling": coupling,
            "limit": limit,
            **params,
        }
    )


def choke(
    min_th: Quantity | None = None,
    max_th: Quantity | None = None,
    limit: Quantity | None = None,
    **params: Any,
) -> dict[str, Any]:
    """CHOKe (Pan, Prabhakar & Psounis, INFOCOM 2000): RED whose arrivals, once the average
    queue is at or above `min_th`, are compared with a packet drawn at random from the queue;
    if both belong to the same flow both are dropped, else RED decides. Takes RED's parameters
    with RED's defaults (see `red()`): min_th and max_th ("auto", or packets "5p", bytes
    "20KB", or a bare number in the mode's unit), limit (default "1000p"), max_p (0.02), w_q
    (0.002 or "auto"), mode, curve, spacing, signal, forced, adapt, mean_packet_size ("500B"),
    target_delay ("5ms")."""
    return _clean({"kind": "choke", "min_th": min_th, "max_th": max_th, "limit": limit, **params})


def step(threshold: Quantity | None = None, limit: Quantity | None = None) -> dict[str, Any]:
    """Step marking, as DCTCP's switches are configured (Alizadeh et al., SIGCOMM 2010,
    section 3.1; RFC 8257 section 3.1): a FIFO that sets CE on every ECN-capable arrival
    finding more than `threshold` queued (K: packets "20p" or bytes "30KB", at most `limit` in
    the same unit; default "65p", the paper's K at 10 Gb/s); other packets are dropped only
    when the buffer (`limit`, default "1000p") is full."""
    return _clean({"kind": "step", "threshold": threshold, "limit": limit})


def classes(
    *classes: tuple[list[int], dict[str, Any] | None] | tuple[list[int], dict[str, Any] | None, Quantity],
) -> dict[str, Any]:
    """A switch port's queues per traffic class (IEEE 802.1Q): each class a (priorities, qdisc)
    pair, e.g. classes(([3], quench.red(...)), ([0], None)): the packets of flows whose
    `priority` is listed join that class's queue (a qdisc of any kind; drop-tail's defaults for
    None), a priority no class lists the last class's. The link sends from the first class in
    order that has a packet and none of whose priorities PFC has paused (strict priority), so
    a paused lossless class does not block the others (`Network.pfc`). A third element, a
    quantum ("3000B"), makes a class share what the strict ones leave by ETS (IEEE 802.1Qaz,
    as Linux's sch_ets: deficit round robin, bandwidth in proportion to the quanta); strict
    classes come first. With no classes given, the default: one class of every priority,
    drop-tail."""
    listed = [
        _clean({"priorities": list(c[0]), "qdisc": c[1], "quantum": c[2] if len(c) > 2 else None}) for c in classes
    ]
    return _clean({"kind": "classes", "classes": listed or None})


def trim(
    data_limit: Quantity | None = None,
    header_limit: Quantity | None = None,
    header_weight: int | None = None,
    tail_trim_probability: float | None = None,
) -> dict[str, Any]:
    """NDP's trimming switch queue (Handley et al., SIGCOMM 2017; htsim's CompositeQueue): a
    small data queue (`data_limit`, packets or bytes, default "8p") and a header queue
    (`header_limit`, default "24000B") served `header_weight` headers per data packet while
    both wait (default 100000, htsim's ratio). An NDP data packet finding the data queue full is
    cut to its 64-byte header, or with probability `tail_trim_probability` (default 0.5) the
    packet queued last is; other protocols' packets are dropped there as by drop-tail. Trims
    are counted in the links table's marked_packets."""
    return _clean(
        {
            "kind": "trim",
            "data_limit": data_limit,
            "header_limit": header_limit,
            "header_weight": header_weight,
            "tail_trim_probability": tail_trim_probability,
        }
    )


def fuzzball(
    pool_limit: Quantity | None = None,
    preempt: str | None = None,
    quench: bool | None = None,
    **params: Any,
) -> dict[str, Any]:
    """The NSFNET Fuzzball gateway's output queue (Mills 1988; docs/mechanisms.md). All fuzzball
    queues of a node share one buffer pool, `pool_limit` (packets or bytes, default "100p");
    when it is full, the source host with the most data queued loses a packet: the arrival if
    it is that host's, else that host's "newest" (`preempt`'s default) or "oldest" packet.
    `quench` (default True): send ICMP Source Quench to that host while the mean queue, in
    packets, estimated per arrival with weight gain (default 0.125), exceeds threshold (packets,
    default 1.5), at min(max_rate, rate_per_excess x (mean - threshold)) messages per second
    (rate_per_excess default 0.1, max_rate default 1.0)."""
    return _clean({"kind": "fuzzball", "pool_limit": pool_limit, "preempt": preempt, "quench": quench, **params})


def dummynet(
    bandwidth: Quantity | None = None, limit: Quantity | None = None, tick: Quantity | None = None
) -> dict[str, Any]:
    """A Dummynet pipe (Rizzo 1997, FreeBSD ip_dummynet.c): a queue of `limit` (packets or
    bytes, default "50p") drained at `bandwidth` (bit/s; default none: a delay-only pipe) by a
    clock that runs once per `tick` (a duration, default "1ms"), so packets leave in one burst
    per tick at the link's own (faster) rate."""
    return _clean({"kind": "dummynet", "bandwidth": bandwidth, "limit": limit, "tick": tick})


# The keys every listed flow takes beside its transport's: its pinned paths and the flows it
# waits for (lists of names).
_ROUTING_KEYS = ("path", "reverse_path", "after")


def _clean(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


class Network:
    """A scenario under construction. `to_dict()` gives the scenario the engine runs."""

    def __init__(self, seed: int = 1, name: str = "", tcp_profile: str | None = None) -> None:
        """`tcp_profile`: the TCP profile ("linux", "ns3" or "rfc"; see `tcp`) of every TCP flow
        and workload of this network that does not name its own; None leaves each flow to the
        engine's default, "linux". It applies when the scenario is written (`to_dict`), so it may be
        set at any time before. An experiment pins the profile it was written for here."""
        self.seed = seed
        self.name = name
        self.tcp_profile = tcp_profile
        self._hosts: list[str] = []
        self._routers: list[str] = []
        self._links: list[dict[str, Any]] = []
        self._topologies: list[dict[str, Any]] = []
        self._multipath: dict[str, str] = {}
        self._link_changes: list[dict[str, Any]] = []
        self._routing_convergence: Quantity | None = None
        self._flowlet_gap: Quantity | None = None
        self._pfc: dict[str, Any] | None = None
        self._flows: list[dict[str, Any]] = []
        self._workloads: list[dict[str, Any]] = []
        self._record: dict[str, Any] = {}

    def hosts(self, *names: str) -> Network:
        """Add hosts. Node names (hosts and routers) become file names, so they hold only ASCII
        letters, digits, '_', '-' and '.', do not start with '.' or '-', and have 1 to 64
        characters; the engine refuses any other name, naming its key (`hosts[2]`)."""
        self._hosts.extend(names)
        return self

    host = hosts

    def routers(self, *names: str) -> Network:
        self._routers.extend(names)
        return self

    router = routers

    def link(
        self,
        a: str,
        b: str,
        rate: Quantity,
        delay: Quantity,
        *,
        qdisc: dict[str, Any] | None = None,
        reverse_qdisc: dict[str, Any] | None = None,
        mtu: Quantity | None = None,
        loss: float | dict[str, Any] | None = None,
        reverse_loss: float | dict[str, Any] | None = None,
        jitter: dict[str, Any] | None = None,
        reverse_jitter: dict[str, Any] | None = None,
        corrupt: float | None = None,
        reverse_corrupt: float | None = None,
        duplex: bool = True,
        framing_overhead: Quantity | None = None,
        packet_rate: float | None = None,
        fragmentation: str | None = None,
        device_queue: int | None = None,
        capacity: dict[str, Any] | None = None,
        reverse_capacity: dict[str, Any] | None = None,
        schedule: list[dict[str, Any]] | None = None,
    ) -> Network:
        """A duplex link a<->b (or a->b only with duplex=False); qdisc applies to both ways
        unless reverse_qdisc is given; loss is the loss a->b on the wire: a Bernoulli probability,
        or {"model": "gilbert-elliott", "p": ..., "r": ..., "h": 0.0, "k": 1.0} (netem's gemodel:
        per packet Good->Bad with p, Bad->Good with r, lost with 1-k in Good and 1-h in Bad), or
        {"model": "list", "packets": [3, 10]} (exactly those transmissions a->b, counted from 1);
        jitter a->b is {"sigma": "2ms", "dist": "uniform" | "normal", "reorder": True} (each
        packet's delay drawn around `delay`; reorder=False: no packet overtakes an earlier one);
        corrupt a->b is the probability that a packet is corrupted on the wire (the far node
        discards it: drops reason "corrupted"); the reverse_ keywords are b->a;
        packet_rate caps packets per second; fragmentation is "rfc791" or "unaligned";
        device_queue is a FIFO of that many packets under the qdisc (Linux's driver ring, ns-3's
        device queue; none by default). capacity a->b (reverse_capacity b->a) makes the rate
        follow a trace: {"mahimahi": "up.trace"} (Mahimahi delivery opportunities) or
        {"rates": "rates.csv"} (a rate over time), see quench.traces; `rate` is then the nominal
        rate the qdisc is told. schedule lists changes of both directions during the run:
        [{"at": "10s", "rate": "5Mbps"}, {"at": "30s", "up": False}, {"at": "31s", "up": True},
        {"at": "15s", "every": "15s", "delay": ["300ms", "350ms"]}] (a periodic change cycles
        through its list); a link that goes down drops what is on it and routing moves around
        it after `routing(convergence=...)`."""
        self._links.append(
            _clean(
                {
                    "from": a,
                    "to": b,
                    "rate": rate,
                    "delay": delay,
                    "duplex": duplex,
                    "qdisc": qdisc,
                    "reverse_qdisc": reverse_qdisc,
                    "mtu": mtu,
                    "loss": loss,
                    "reverse_loss": reverse_loss,
                    "jitter": jitter,
                    "reverse_jitter": reverse_jitter,
                    "corrupt": corrupt,
                    "reverse_corrupt": reverse_corrupt,
                    "framing_overhead": framing_overhead,
                    "packet_rate": packet_rate,
                    "fragmentation": fragmentation,
                    "device_queue": device_queue,
                    "capacity": capacity,
                    "reverse_capacity": reverse_capacity,
                    "schedule": schedule,
                }
            )
        )
        return self

    def fat_tree(
        self,
        k: int,
        rate: Quantity,
        delay: Quantity,
        *,
        qdisc: dict[str, Any] | None = None,
        multipath: str | None = None,
        prefix: str | None = None,
        access: dict[str, Any] | None = None,
        aggregation: dict[str, Any] | None = None,
        core: dict[str, Any] | None = None,
    ) -> Network:
        """A k-ary fat-tree (Al-Fares et al., SIGCOMM 2008), expanded by the engine: k pods
        (k even, 2 to 64), k³/4 hosts `h0`.., edge switches `tor<i>`, aggregation switches
        `agg<pod>_<i>`, core switches `core<i>`. `rate`, `delay` and `qdisc` (whose limit is the
        buffer) apply to every tier unless `access` (host to edge), `aggregation` (edge to
        aggregation) or `core` (aggregation to core), tables of `rate`, `delay` and `qdisc`, say
        otherwise; a tier's `down_qdisc` is the queue towards the hosts when it differs (on
        `access`: the switch's port to the host, `qdisc` then being the host's own).
        `multipath`: how switches choose among equal-cost next hops, "ecmp" (the default: a
        per-flow hash), "spray" (per-packet round robin), "spray_random", "spray_flow" (per
        packet, each flow cycling through the next hops in an order of its own per cycle),
        "flowlet" (a flow moves after a pause longer than `routing(flowlet_gap=...)`) or
        "first". `prefix` goes
        before every node name (two fabrics in one scenario). Listed hosts, routers and links may
        name the fabric's nodes."""
        entry = {"kind": "fat_tree", "k": k, "rate": rate, "delay": delay, "qdisc": qdisc}
        tiers = {"access": access, "aggregation": aggregation, "core": core}
        self._topologies.append(_clean({**entry, "multipath": multipath, "prefix": prefix, **tiers}))
        return self

    def leaf_spine(
        self,
        hosts_per_leaf: int,
        leaves: int,
        spines: int,
        rate: Quantity,
        delay: Quantity,
        *,
        qdisc: dict[str, Any] | None = None,
        oversubscription: float | None = None,
        multipath: str | None = None,
        prefix: str | None = None,
        access: dict[str, Any] | None = None,
        fabric: dict[str, Any] | None = None,
    ) -> Network:
        """A two-tier leaf-spine fabric, expanded by the engine: hosts `h0`.., leaves `tor<i>`,
        spines `spine<i>`, every leaf linked to every spine. `rate`, `delay` and `qdisc` apply to
        both tiers unless `access` (host to leaf) or `fabric` (leaf to spine) say otherwise; the
        leaf-spine rate is the host rate × hosts_per_leaf / (spines × `oversubscription`)
        (default 1, full bisection) unless `fabric` gives a rate. `multipath`, `prefix` and a
        tier's `down_qdisc` as for `fat_tree`."""
        entry = {"kind": "leaf_spine", "hosts_per_leaf": hosts_per_leaf, "leaves": leaves, "spines": spines}
        entry |= {"rate": rate, "delay": delay, "qdisc": qdisc, "oversubscription": oversubscription}
        tiers = {"access": access, "fabric": fabric}
        self._topologies.append(_clean({**entry, "multipath": multipath, "prefix": prefix, **tiers}))
        return self

    def change(
        self,
        link: str,
        *,
        at: Quantity = 0,
        every: Quantity | None = None,
        rate: Any = None,
        delay: Any = None,
        up: bool | list[bool] | None = None,
        both_directions: bool = True,
    ) -> Network:
        """Change the link named `link` ("from->to", listed or generated by a fabric) during the
        run: its `rate`, its `delay`, or whether it is `up`, at `at` and, with `every`, again
        every so long, cycling through a list of values. The reverse direction changes too
        unless both_directions=False."""
        entry = {"link": link, "at": at, "every": every, "rate": rate, "delay": delay, "up": up}
        if not both_directions:
            entry["both_directions"] = False
        self._link_changes.append(_clean(entry))
        return self

    def routing(self, *, convergence: Quantity | None = None, flowlet_gap: Quantity | None = None) -> Network:
        """`convergence`: how long routing takes to move around a link that went down (or back
        onto one that came up); until then packets sent over a down link are dropped there. 0,
        the default, moves at once. `flowlet_gap`: how long a flow must pause at a "flowlet"
        switch before its next packet may take another path (default "500us", CONGA's; at most
        "1s")."""
        if convergence is not None:
            self._routing_convergence = convergence
        if flowlet_gap is not None:
            self._flowlet_gap = flowlet_gap
        return self

    def pfc(
        self,
        xoff: Quantity,
        *,
        xon: Quantity | None = None,
        switches: list[str] | None = None,
        control: str | None = None,
        priorities: list[int] | None = None,
        thresholds: list[dict[str, Any]] | None = None,
    ) -> Network:
        """Priority-based flow control (IEEE 802.1Qbb) at the switches: lossless links. A switch
        pauses a priority of the link an ingress port is fed by once it holds `xoff` bytes of
        that priority that came in by it (e.g. "40KB"), and resumes it at `xon` (default: 3 KiB
        under `xoff`, as the HPCC artifact's switch). `priorities`: the lossless ones (0 to 7,
        a flow's `priority`), which the switches count and pause; all by default. A paused
        priority stops only its own packets on links whose queue keeps classes apart
        (`quench.classes`), the whole link on any other. `switches`: the routers that run it; every router by default.
        `control`: the class of packets that carry no data (ACKs, NAKs, pulls, handshakes):
        "lossless" (default; with the data, counted and paused) or "priority" (a class of
        their own, served first on every link into or out of a PFC switch, neither counted nor
        paused, as the HPCC and DCQCN artifacts run their ACKs and CNPs). `thresholds`: pairs of
        their own for some lossless priorities, e.g. [{"priorities": [3], "xoff": "20KB",
        "xon": "17KB"}] (`xon` 3 KiB under that `xoff` unless given); the others use `xoff`
        and `xon`. The
        links table gains each link's pauses, paused time and the most bytes held from it
        (`pfc_pauses`, `pfc_paused_s`, `pfc_max_ingress_bytes`), and the `pfc_cycles` table
        lists every cycle of paused links (a deadlock if `still_paused`)."""
        spec = {
            "xoff": xoff,
            "xon": xon,
            "switches": switches,
            "control": control,
            "priorities": priorities,
            "thresholds": thresholds,
        }
        self._pfc = _clean(spec)
        return self

    def multipath(self, router: str, policy: str) -> Network:
        """How `router` (listed or generated) chooses among equal-cost next hops: "first" (the
        routing table's one route, the default for listed routers), "ecmp", "spray",
        "spray_random", "spray_flow" (per packet, each flow cycling through the next hops in an
        order of its own per cycle) or "flowlet" (per flowlet: a new uniform draw after a pause
        longer than the flowlet gap, `routing(flowlet_gap=...)`)."""
        self._multipath[router] = policy
        return self

    def tcp(
        self,
        src: str,
        dst: str,
        *,
        cc: str | dict[str, Any] | None = None,
        bytes: Quantity | None = None,
        start: Quantity = 0,
        name: str | None = None,
        path: list[str] | None = None,
        reverse_path: list[str] | None = None,
        after: list[str] | None = None,
        priority: int | None = None,
        **tcp: Any,
    ) -> Network:
        """A TCP connection with a bulk transfer of `bytes` (unlimited when None), from `start`
        (a time, default 0).

        `path`: the nodes its data packets cross, from `src` to `dst` (e.g. ["h0", "tor0",
        "agg0_1", "core3", "agg1_1", "tor2", "h5"]), whatever the routes or switches' policies
        choose; `reverse_path` the same for its ACKs, from `dst` to `src` (routed as usual
        when absent). `after`: names of listed flows that must complete (last byte delivered)
        before it starts; `start` then counts from the last of their completions. `priority`:
        the IEEE 802.1p priority (0 to 7, default 0) its packets travel in, for switches whose
        queues keep classes apart (`quench.classes`) and PFC (`Network.pfc`). Every transport
        takes these four.

        Its defaults come from a profile, the keyword `profile`: "linux" (the default: a current
        Linux kernel's TCP, CUBIC with HyStart and an initial window of 10, SACK, timestamps,
        RACK-TLP with Linux's probe timeout, PRR, Limited Transmit by the SACK pipe, TCP Small
        Queues, window growth only while the window limits the sends, a 200 ms minimum RTO,
        40 ms delayed ACKs with Linux's quick-ack mode, ECN negotiated for dctcp and prague), "ns3" (ns-3
        3.44's defaults: CUBIC, 536-byte segments, SACK, timestamps, PRR, a 1 s minimum RTO) or
        "rfc" (the plain RFC 5681/6298 NewReno sender, as the seed experiments pin it). Every key
        written here overrides the profile; `quench validate` prints each resolved key.

        `cc`: a controller name or a table with `kind` and its keys (the profile's when absent):
        tahoe, reno, newreno, cubic (`hystart`: "linux" for Linux's HyStart, the linux
        profile's, or "rfc9406" for HyStart++; either needs every-ACK RTT samples or
        timestamps), vegas (`alpha`, `beta`, `gamma` packets, defaults 2, 4, 1; needs
        rtt_sampling="every_ack"), fast, bbr, dctcp (RFC 8257; turns ECN on, needs a marking
        queue; `g`, the estimation gain, default 1/16, and `initial_alpha`, default 1), prague,
        ledbat (RFC 6817, a 100 ms target; `variant` "ledbat++" for LEDBAT++; needs every-ACK RTT
        samples or timestamps), copa
        (NSDI 2018, `delta` 0.5; `mode` "competitive" adapts δ beside buffer-filling flows),
        swift (SIGCOMM 2020, a fabric-delay target of 20 µs plus hops and flow scaling; needs
        every-ACK RTT samples or timestamps, and without timestamps takes the receiver's ACK
        delay out of the RTT) or vivace (PCC Vivace, NSDI 2018: a paced rate learned from a
        utility of rate, RTT gradient and loss; losses need SACK); see docs/mechanisms.md.
        Every window controller also takes `initial_window` (segments; the profile's, or RFC
        5681's 2-4 by MSS under "rfc") and `abc_limit` (RFC 3465's L, segments per ACK in slow
        start; default 2); reno, newreno, cubic, dctcp and prague take `growth` ("rfc5681", or
        "linux", the linux profile's: Linux's per-segment slow start and congestion avoidance).

        Extra keyword arguments are TCP parameters (the "rfc" profile's values in brackets):
        - mss: payload bytes per full segment [1460];
        - send_buffer, receive_window: bytes [4 MiB each];
        - rto: {k [4], min ["1s"], max ["60s"], initial ["1s"], tick (a coarse timer's
          granularity, ["0s"]), tick_rule (with a tick: "bsd", up to a tick before the
          deadline, or "after", the first tick after it) ["bsd"], max_backoffs [12]}
          (RFC 6298);
        - delayed_ack: {enabled [True], segments [2], timeout ["200ms"], quick_ack (Linux's
          quick-ack mode: every segment ACKed at once at the start of a connection, after
          idle, after duplicate data and on a first CE mark) [False; True under "linux"]};
        - dupack_threshold: duplicate ACKs that mean a loss [3];
        - sack (RFC 2018 / 6675) [False]; limited_transmit: True or "rfc3042" (RFC 3042),
          "rfc6675" (RFC 6675 section 5 step 3, by the SACK pipe) [False];
        - dont_fragment: set DF on every segment [False, segments larger than a link's MTU
          are fragmented];
        - source_quench: the reaction to ICMP Source Quench: "ignore" [RFC 6633], "tahoe",
          "bsd43", "rfc1122" or "squid";
        - ecn (RFC 3168) [False];
        - rtt_sampling: "timed_segment" [one timed segment per window, BSD] or "every_ack";
        - burstiness_control: {threshold, rate="cwnd/rtt"} (Wei, Hegde, Low 2005) [off];
        - pacing: one full segment every srtt/cwnd [False];
        - local_drop: the sender's reaction to its own host queue dropping a segment: "loss"
          [as ns-2/ns-3] or "linux_cwr" (Linux's CWR);
        - small_queues: what the sender lets wait in its own host's queue: [False] whatever
          its window releases, "linux" (Linux's TCP Small Queues: about 1 ms at the pacing
          rate) or "nic" (an RDMA NIC's: one packet at a time);
        - cwnd_limited_growth: grow the window only when it was full at the ACK (True, Linux
          2.4-2.6) or while it limited the round's sends ("linux", tcp_is_cwnd_limited)
          [False, as ns-2];
        - recovery: what fast recovery sends per ACK: "standard" [RFC 6675 / 6582], "prr" (RFC
          6937 with the slow-start reduction bound), "prr_crb" (the conservative bound) or
          "prr_rfc9937" (RFC 9937: the slow-start bound only on a SafeACK);
        - loss_detection: with sack=True: "dupack" [RFC 6675], "rack" (RFC 8985 RACK with the
          tail loss probe) or "rack_no_tlp";
        - probe_timeout: the tail loss probe's wait with more than one segment in flight:
          ["rfc8985", 2 SRTT] or "linux" (2 SRTT + 2 ms, tcp_schedule_loss_probe);
        - newreno_timer: without SACK, when a NewReno recovery restarts the retransmission
          timer: ["impatient", the first partial ACK only] or "slow_but_steady" (every partial
          ACK, Linux's; RFC 6582 section 4.2);
        - dsack: with sack=True, the receiver reports duplicates in a D-SACK block (RFC 2883)
          and a RACK sender widens its reordering window per round trip that brings one (RFC
          8985 section 6.2) [False; True in the linux profile];
        - timestamps: the RFC 7323 option, 12 header bytes from each full segment and an RTT
          sample per ACK [False];
        - receiver: the receiving end's support, {sack, timestamps, ecn} [each True]: sack,
          timestamps and ecn above are the sending end's, and each is used only when both ends
          support it (RFC 2018, RFC 7323, RFC 3168), e.g. receiver={"sack": False}.
        The SYN and SYN-ACK count the options they carry (MSS, SACK-permitted, timestamps,
        window scale under "linux": 60 bytes; see docs/mechanisms.md#handshake-options)."""
        routing = {"path": path, "reverse_path": reverse_path, "after": after, "priority": priority}
        return self._connection("tcp", src, dst, bytes, start, name, tcp, cc=cc, **routing)

    def pcp(
        self,
        src: str,
        dst: str,
        *,
        bytes: Quantity | None = None,
        start: Quantity = 0,
        name: str | None = None,
        path: list[str] | None = None,
        reverse_path: list[str] | None = None,
        after: list[str] | None = None,
        **pcp: Any,
    ) -> Network:
        """A PCP connection (probe control protocol, NSDI '06) with a transfer of `bytes`
        (unlimited when None). Extra keyword arguments are PCP parameters: mss, receive_window,
        probe_packets, slope_tolerance, min_increment, min_rate, max_backoff_rtts,
        probe_jitter_rtts, queue_tolerance, queue_alarm_rtts, compensate_growth, drain_once,
        tit_for_tat_rounds, tit_for_tat_factor, reorder_threshold, history, history_owd,
        probe_span_rtts, slope_confidence, rto={k, min, initial, max, tick, max_backoffs} (as
        TCP's; defaults 4, "1s", "1s", "60s", "0s", 12). `path`, `reverse_path` and `after` as
        for `tcp`."""
        routing = {"path": path, "reverse_path": reverse_path, "after": after}
        return self._connection("pcp", src, dst, bytes, start, name, pcp, **routing)

    def assisted(
        self,
        src: str,
        dst: str,
        *,
        bytes: Quantity | None = None,
        start: Quantity = 0,
        name: str | None = None,
        path: list[str] | None = None,
        reverse_path: list[str] | None = None,
        after: list[str] | None = None,
        **params: Any,
    ) -> Network:
        """A flow of the router-assisted ideal (PCP's "fair queueing" baseline): it sends at the
        fair rate that fq(advertise_rate=True) queues stamp into its requests, less what drains
        its own queue in an RTT. Parameters: mss, rto_rtts, min_rto. `path`, `reverse_path` and
        `after` as for `tcp`."""
        routing = {"path": path, "reverse_path": reverse_path, "after": after}
        return self._connection("assisted", src, dst, bytes, start, name, params, **routing)

    def ndp(
        self,
        src: str,
        dst: str,
        *,
        bytes: Quantity | None = None,
        start: Quantity = 0,
        name: str | None = None,
        path: list[str] | None = None,
        reverse_path: list[str] | None = None,
        after: list[str] | None = None,
        priority: int | None = None,
        **params: Any,
    ) -> Network:
        """An NDP transfer of `bytes` (unlimited when None; Handley et al., SIGCOMM 2017): the
        sender starts at line rate with `initial_window` packets, then sends one packet per PULL
        of the receiver, whose host paces its PULLs at its access link's rate. It needs
        trimming queues, qdisc={"kind": "trim"} (`data_limit` "8p", `header_limit` "24000B",
        `header_weight` 100000, `tail_trim_probability` 0.5), and spreads best over a fabric
        whose switches spray (multipath "spray"). Parameters: mss (1436), initial_window (15),
        min_rto ("5ms"), pull_rate (the receiver's access link rate). `path`, `reverse_path`,
        `after` and `priority` as for `tcp` (a pinned path overrides the switches' spraying)."""
        routing = {"path": path, "reverse_path": reverse_path, "after": after, "priority": priority}
        return self._connection("ndp", src, dst, bytes, start, name, params, **routing)

    def roce(
        self,
        src: str,
        dst: str,
        *,
        bytes: Quantity | None = None,
        cc: str | dict[str, Any] = "dcqcn",
        start: Quantity = 0,
        name: str | None = None,
        path: list[str] | None = None,
        reverse_path: list[str] | None = None,
        after: list[str] | None = None,
        priority: int | None = None,
        **params: Any,
    ) -> Network:
        """A RoCEv2 reliable-connection transfer of `bytes` (unlimited when None), as an RDMA
        NIC runs it: one packet sequence number per packet, paced at the rate of its controller
        `cc` ("dcqcn" or "hpcc", a name or a table with the controller's keys), go-back-N from
        the PSN a NAK names, and an in-order receiver that discards what arrives beyond a gap
        and NAKs it once (docs/mechanisms.md#roce). It is meant for fabrics made lossless by
        PFC (`Network.pfc`). Parameters: mtu (payload bytes per packet, 1 to 4096, default
        1000), ack_interval (packets per ACK, 1 to 1024, default 1), nak_interval (before the
        same gap is NAKed again, default "500us"), rto (the local ACK timeout after which the
        sender goes back to its oldest unacknowledged packet, default 4.096 us x 2^14, about 67.1 ms), window
        (hold sends by the controller's window as well as its rate, default True). `path`,
        `reverse_path` (its ACKs and NAKs), `after` and `priority` as for `tcp`."""
        routing = {"path": path, "reverse_path": reverse_path, "after": after, "priority": priority}
        return self._connection("roce", src, dst, bytes, start, name, params, cc=cc, **routing)

    def mptcp(
        self,
        src: str,
        dst: str,
        *,
        bytes: Quantity | None = None,
        subflows: int = 8,
        coupling: str = "lia",
        cc: str | dict[str, Any] | None = None,
        reinject: bool = True,
        start: Quantity = 0,
        name: str | None = None,
        priority: int | None = None,
        **tcp: Any,
    ) -> Network:
        """A Multipath TCP connection (RFC 8684) with a bulk transfer of `bytes` (unlimited when
        None) over `subflows` TCP subflows (1 to 32; 8, Raiciu et al.'s on a FatTree), each on
        its own five-tuple so that ECMP hashes each onto its own path. A scheduler hands each
        segment of data to the subflow with the lowest smoothed RTT that has room in its
        window; the receiver reassembles the data once for the connection. `coupling`: "lia"
        (RFC 6356's coupled increase), "olia" (Khalili et al.'s, CoNEXT 2012) or "uncoupled" (each
        subflow its own `cc`; the profile's when None). The other keywords are every subflow's TCP keys, as `tcp`'s, on
        the defaults of the profile `profile` ("linux" by default, as a TCP flow's; e.g.
        profile="rfc", sack=True, rto={"min": "1ms"}); `receive_window` is the connection's one
        buffer. `reinject`: send a stalled subflow's data again on the others, as Linux's MPTCP
        does (docs/mechanisms.md#multipath-tcp-and-lia). `priority` as for `tcp`."""
        flow = {"kind": "mptcp", "src": src, "dst": dst, "bytes": bytes, "start": start, "name": name}
        flow["priority"] = priority
        flow |= {"subflows": subflows, "coupling": coupling, "cc": cc, "reinject": reinject, "tcp": tcp or None}
        self._flows.append(_clean(flow))
        return self

    def _connection(self, kind: str, src, dst, bytes, start, name, params: dict[str, Any], **extra: Any) -> Network:
        """A connection of transport `kind`; its own parameters go under the key of that name."""
        lists = {k: list(v) if v is not None else None for k, v in extra.items() if k in _ROUTING_KEYS}
        extra = {k: v for k, v in extra.items() if k not in _ROUTING_KEYS}
        flow = {"kind": kind, "src": src, "dst": dst, **extra, "bytes": bytes, "start": start, "name": name, **lists}
        if params:
            flow[kind] = params
        self._flows.append(_clean(flow))
        return self

    def _with_profile(self, flow: dict[str, Any]) -> dict[str, Any]:
        """`flow` with this network's TCP profile, if it is a TCP or MPTCP flow that names none."""
        tcp = flow.get("tcp", {})
        if self.tcp_profile is None or flow.get("kind") not in ("tcp", "mptcp") or not isinstance(tcp, dict):
            return flow  # a `tcp` that is not a table reaches the engine, which names it
        return {**flow, "tcp": {"profile": self.tcp_profile, **tcp}}

    def udp(
        self,
        src: str,
        dst: str,
        rate: Quantity,
        *,
        pattern: str = "cbr",
        size: Quantity | dict[str, Any] = "1000B",
        start: Quantity = 0,
        stop: Quantity | None = None,
        name: str | None = None,
        ecn: str | None = None,
        path: list[str] | None = None,
        after: list[str] | None = None,
        priority: int | None = None,
    ) -> Network:
        """A UDP source of `rate` bit/s of IP datagrams from `start` (default 0) to `stop` (default
        the run's end); `pattern` 'cbr' (default) or 'poisson' (the datagram rate is `rate` over
        the mean payload plus 28 header bytes). `size`: the payload, fixed ("1000B")
        or drawn per datagram: {"dist": "uniform", "min": ..., "max": ...}, {"dist":
        "exponential", "mean": ...} (rounded to whole bytes, at least 1) or {"dist": "choice",
        "values": [...], "weights": [...]} (equal weights when absent); quench.dist writes
        these and the lognormal, Pareto and empirical-CDF ones. `ecn`: the datagrams' ECN
        codepoint, "not_ect" (default), "ect0" or "ect1" (L4S, RFC 9331); the source does not
        react to marks. `path`, `after` and `priority` as for `tcp`."""
        flow = {
            "kind": "udp",
            "src": src,
            "dst": dst,
            "rate": rate,
            "pattern": pattern,
            "size": size,
            "start": start,
            "stop": stop,
            "name": name,
            "ecn": ecn,
            "path": list(path) if path is not None else None,
            "after": list(after) if after is not None else None,
            "priority": priority,
        }
        self._flows.append(_clean(flow))
        return self

    def workload(
        self,
        pairs: list[tuple[str, str]] | None = None,
        arrival_rate: float | None = None,
        size: Quantity | dict[str, Any] | None = None,
        *,
        flow: dict[str, Any] | None = None,
        start: Quantity | None = None,
        stop: Quantity | None = None,
        name: str | None = None,
        matrix: str | None = None,
        hosts: list[str] | None = None,
        receiver: str | None = None,
        load: float | None = None,
        priority: int | None = None,
    ) -> Network:
        """Finite flows arriving as a Poisson process of `arrival_rate` per second, each between
        a (src, dst) pair drawn uniformly from `pairs`, of `size` bytes ("250KB", or
        {"dist": "exponential", "mean": ...} / {"dist": "pareto", "mean": ..., "shape": ...}, or
        any quench.dist helper, e.g. quench.dist.websearch() or quench.dist.empirical("f.csv")).
        `flow` is the transport of every flow without src/dst/start/bytes/name, e.g.
        {"kind": "tcp"} (the default: TCP of the Linux profile, see `tcp`) or {"kind": "pcp"}. Flows are named
        NAME.k; their response times are in Results.flows.

        Instead of `pairs`, a traffic `matrix` over `hosts` (default: every host, fabrics'
        included): "permutation" (each host sends to one other, a random derangement from the
        seed), "all_to_all", or "incast" (every host but `receiver` sends to it). Instead of
        `arrival_rate`, `load` in (0, 1]: each sender offers that fraction of its access link,
        load × rate / (8 × mean size) flows per second. With neither rate nor load, every pair
        sends one flow at `start`, all at once (a synchronised incast). `priority`: every
        flow's, as for `tcp`."""
        workload = {
            "name": name,
            "pairs": [list(p) for p in pairs] if pairs is not None else None,
            "matrix": matrix,
            "hosts": list(hosts) if hosts is not None else None,
            "receiver": receiver,
            "arrival_rate": arrival_rate,
            "load": load,
            "size": size,
            "start": start,
            "stop": stop,
            "flow": flow if flow is not None else {"kind": "tcp"},
            "priority": priority,
        }
        self._workloads.append(_clean(workload))
        return self

    def record(self, **options: Any) -> Network:
        """What to record: queues, sojourn, drops, cwnd (TCP's window, and PCP's rate in its own
        `pcp_rate` table), rtt, segments (booleans), links
        (restrict per-link records), pcap (links to capture, by name "a->b"), cwnd_interval
        (e.g. "10ms": at most one cwnd row per flow per interval, every peak and trough kept),
        monitor_flow ({flow, start, stop}: every packet event of one flow), snapshots (an
        interval such as "100ms" or a list of instants such as ["10s", "30s"]: every link's and
        flow's counters then, for `Results.window` and `Results.timeseries`), flow_links (each
        listed flow's packets, bytes, drops and losses at every link it crossed: the
        `flow_links` table), delay (listed flows' names: every data packet's one-way delay, the
        `delay` table, summarised by `Results.delay(flow)`), telemetry (a boolean: every hop a
        switch egress writes into a packet's in-band telemetry record, HPCC's, with the queue,
        transmitted bytes and rate it reports: the `telemetry` table)."""
        self._record.update(options)
        return self

    def to_dict(self, duration: Quantity) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "seed": self.seed,
            "duration": duration,
            "hosts": list(self._hosts),
            "routers": list(self._routers),
            "links": copy.deepcopy(self._links),
            "flows": [self._with_profile(f) for f in copy.deepcopy(self._flows)],
            "record": dict(self._record),
        }
        if self._workloads:
            spec["workloads"] = [{**w, "flow": self._with_profile(w["flow"])} for w in copy.deepcopy(self._workloads)]
        if self._topologies:
            spec["topologies"] = copy.deepcopy(self._topologies)
        if self._multipath:
            spec["multipath"] = dict(self._multipath)
        if self._link_changes:
            spec["link_changes"] = copy.deepcopy(self._link_changes)
        if self._routing_convergence is not None:
            spec["routing_convergence"] = self._routing_convergence
        if self._flowlet_gap is not None:
            spec["flowlet_gap"] = self._flowlet_gap
        if self._pfc is not None:
            spec["pfc"] = self._pfc
        if self.name:
            spec["name"] = self.name
        return spec

    def to_toml(self, duration: Quantity) -> str:
        """The scenario as TOML text, the file `quench run` reads (quench.scenario.dump)."""
        from quench.scenario import dump

        return dump(self.to_dict(duration))

    def simulation(self, duration: Quantity):
        """The scenario ready to run in steps (quench.scenario.Simulation): `advance`,
        `snapshot`, `advance` again, `finish`."""
        from quench.scenario import Simulation

        return Simulation(self.to_dict(duration))

    def run(self, duration: Quantity, *, progress: bool | None = None):
        """Build and run for `duration`; returns quench.Results. Long time series and captures
        stream into a temporary folder that the Results own (quench.stream), so the run's
        memory does not grow with `duration`."""
        from quench.scenario import run_scenario

        return run_scenario(self.to_dict(duration), progress=progress)

    def run_ns3(self, duration: Quantity, *, timeout_s: float | None = None):
        """Translate and run the same network in ns-3 (`quench ns3`, docs/validation.md): Results
        with quench's tables and column names (links, flows, queue; cwnd when recorded). Needs
        the ns-3 environment (`quench ns3 --setup`); refuses, naming the key, what ns-3 cannot
        run."""
        from quench.ns3 import run_ns3

        return run_ns3(self.to_dict(duration), timeout_s=timeout_s)
