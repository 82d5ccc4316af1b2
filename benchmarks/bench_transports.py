"""What each datacenter transport costs the engine: run-loop wall time per delivered data packet
on one leaf-spine under one traffic pattern, against NewReno's with the same ACK policy. A
benchmark, not a test: it prints a table and checks nothing (the goal, at most 1.5x NewReno,
is read off the table).

The fabric: a leaf-spine of 4 leaves of 8 hosts and 4 spines, 10 Gb/s links of 1 us, ECMP
(spraying for NDP, whose paper sprays), 100-packet drop-tail buffers (DCTCP: the step marker
at K = 65, DCTCP's 10 Gb/s setting; NDP: the trimming queue). The traffic: a permutation of
long transfers, every host sending to one other for the whole run. Each transport at its
defaults under the linux TCP profile; Swift and HPCC acknowledge every packet, as their NICs
do, and NDP acknowledges every packet by design, so they are set against NewReno acknowledging
every packet too: that policy alone makes NewReno several times dearer per delivered packet
than with Linux's delayed ACKs (docs/benchmarks.md). HPCC and DCQCN also run over PFC
(xoff 6 KB per ingress port, so that a leaf's twelve ports at xoff and the headroom of a
10 Gb/s, 1 us link fit one port's 100 packets; the hosts' own queues 10,000 packets; DCQCN's
switches mark at 5 KB), and MPTCP with 8 subflows and LIA over ECMP. NewReno acknowledging every
packet runs over PFC too, and the last column sets each lossless transport against it: the
same lossless fabric, so that what PFC costs the engine (its ingress counts, pause frames and
links that never run unseen) is told apart from what the transport costs. Each point is the
fastest of `--repeats` runs (the machine is shared and noisy).

    .venv/bin/python benchmarks/bench_transports.py
    .venv/bin/python benchmarks/bench_transports.py --duration-ms 5 --repeats 1   # smoke test
"""

from __future__ import annotations

import argparse
from typing import Any, NamedTuple

from quench import Network, droptail, step, trim

PER_PACKET_ACKS = {"delayed_ack": {"enabled": False}}
BASELINE = "newreno"
PER_PACKET_BASELINE = "newreno, ACK per packet"
LOSSLESS_BASELINE = "newreno over PFC, ACK per packet"
# Lossless runs: the hosts' own (NIC) queue, which holds what a paused transport sends.
NIC_QUEUE = droptail("10000p")
PFC_XOFF = "6KB"


class Transport(NamedTuple):
    """How one transport runs in the benchmark."""

    flow: dict[str, Any]  # the workload's flow template
    queue: dict[str, Any]  # the switches' queue discipline
    multipath: str  # the switches' forwarding policy
    baseline: str  # the NewReno it is set against (a key of TRANSPORTS)
    lossless: bool = False  # over PFC, with the hosts' NIC queue


TRANSPORTS = {
    BASELINE: Transport({"kind": "tcp", "cc": "newreno"}, droptail("100p"), "ecmp", BASELINE),
    PER_PACKET_BASELINE: Transport(
        {"kind": "tcp", "cc": "newreno", "tcp": PER_PACKET_ACKS}, droptail("100p"), "ecmp", PER_PACKET_BASELINE
    ),
    LOSSLESS_BASELINE: Transport(
        {"kind": "tcp", "cc": "newreno", "tcp": PER_PACKET_ACKS}, droptail("100p"), "ecmp", PER_PACKET_BASELINE, True
    ),
    "dctcp": Transport({"kind": "tcp", "cc": "dctcp"}, step("65p", "100p"), "ecmp", BASELINE),
    "swift": Transport(
        {"kind": "tcp", "cc": "swift", "tcp": PER_PACKET_ACKS}, droptail("100p"), "ecmp", PER_PACKET_BASELINE
    ),
    "hpcc": Transport(
        {"kind": "tcp", "cc": "hpcc", "tcp": PER_PACKET_ACKS}, droptail("100p"), "ecmp", PER_PACKET_BASELINE
    ),
    "hpcc over PFC": Transport(
        {"kind": "tcp", "cc": "hpcc", "tcp": PER_PACKET_ACKS}, droptail("100p"), "ecmp", PER_PACKET_BASELINE, True
    ),
    "dcqcn over PFC": Transport(
        {"kind": "tcp", "cc": "dcqcn", "tcp": PER_PACKET_ACKS},
        step("5KB", "100p,150KB"),
        "ecmp",
        PER_PACKET_BASELINE,
        True,
    ),
    "ndp": Transport({"kind": "ndp"}, trim(), "spray", PER_PACKET_BASELINE),
    "mptcp, 8 subflows": Transport({"kind": "mptcp", "subflows": 8}, droptail("100p"), "ecmp", BASELINE),
}


def point(name: str, duration_ms: float) -> dict:
    flow, queue, multipath, _, lossless = TRANSPORTS[name]
    net = Network(seed=1, name=f"transport-cost-{name.replace(' ', '-').replace(',', '')}")
    access = {"qdisc": NIC_QUEUE, "down_qdisc": queue} if lossless else None
    net.leaf_spine(8, 4, 4, "10Gbps", "1us", qdisc=queue, multipath=multipath, access=access)
    if lossless:
        net.pfc(PFC_XOFF)
    net.workload(matrix="permutation", size="100GB", flow=flow, name="perm")
    net.record(queues=False, sojourn=False, drops=False, cwnd=False, rtt=False, segments=False)
    res = net.run(duration=f"{duration_ms}ms")
    delivered = int(res.flows["packets_received"].sum())
    wall = float(res.meta["wall_run_s"])
    return {"transport": name, "wall_s": wall, "delivered": delivered, "ns_per_packet": wall / delivered * 1e9}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration-ms", type=float, default=20.0, help="simulated time per run")
    ap.add_argument("--repeats", type=int, default=3, help="runs per transport; the fastest counts")
    a = ap.parse_args()
    rows = {t: min((point(t, a.duration_ms) for _ in range(a.repeats)), key=lambda r: r["wall_s"]) for t in TRANSPORTS}
    print(f"leaf-spine 4x8 hosts, 4 spines, 10 Gb/s, permutation, {a.duration_ms:g} ms simulated")
    print(
        f"{'transport':>32} {'wall s':>8} {'delivered':>10} {'ns/packet':>10} {'x its NewReno':>14}"
        f" {'x NewReno, same fabric':>23}"
    )
    for t, r in rows.items():
        base = rows[TRANSPORTS[t].baseline]["ns_per_packet"]
        lossless = TRANSPORTS[t].lossless and t != LOSSLESS_BASELINE
        fabric_base = rows[LOSSLESS_BASELINE]["ns_per_packet"] if lossless else base
        print(
            f"{t:>32} {r['wall_s']:>8.3f} {r['delivered']:>10} {r['ns_per_packet']:>10.0f}"
            f" {r['ns_per_packet'] / base:>14.2f} {r['ns_per_packet'] / fabric_base:>23.2f}"
        )


if __name__ == "__main__":
    main()
