"""How many events would cross partitions if a fat-tree were split by pod: the figure behind the
many-core design in docs/design.md. A measurement, not a test.

One k-ary fat-tree run (a permutation of long CUBIC flows, ECMP), then, from the links table:
the packets delivered over links whose two ends lie in different partitions, each one an
`Arrive` event handed from one partition to another, as a share of all events executed and of
all packet arrivals. Two ways to place the core switches: a partition of their own, or spread
over the pods' partitions (core i with pod i mod k).

    .venv/bin/python benchmarks/fabric_partitions.py            # k = 8, 5 ms
    .venv/bin/python benchmarks/fabric_partitions.py --k 16 --duration 1ms
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from quench import Network


def pod_of(k: int, node: str) -> int | None:
    """The pod of a host `h<i>`, edge switch `tor<i>` or aggregation switch `agg<pod>_<i>`
    (the fat-tree generator's names); None for a core switch."""
    if node.startswith("agg"):
        return int(node[3:].split("_")[0])
    if node.startswith("tor"):
        return int(node[3:]) // (k // 2)
    if node.startswith("h"):
        return int(node[1:]) // (k * k // 4)
    return None


def core_apart(k: int) -> Callable[[str], str]:
    return lambda n: f"pod{p}" if (p := pod_of(k, n)) is not None else "core"


def core_spread(k: int) -> Callable[[str], str]:
    return lambda n: f"pod{p}" if (p := pod_of(k, n)) is not None else f"pod{int(n[4:]) % k}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--k", type=int, default=8)
    ap.add_argument("--duration", default="5ms")
    ap.add_argument("--rate", default="10Gbps")
    ap.add_argument("--delay", default="1us")
    a = ap.parse_args()
    net = Network(seed=1, name=f"partitions-k{a.k}")
    net.fat_tree(a.k, a.rate, a.delay, qdisc={"kind": "droptail", "limit": "100p"}, multipath="ecmp")
    net.workload(matrix="permutation", size="100GB", flow={"kind": "tcp", "cc": "cubic"}, name="perm")
    res = net.run(duration=a.duration)
    links, events = res.links, res.meta["events_executed"]
    arrivals = int(links["delivered_packets"].sum())
    print(f"k={a.k}, {a.duration}: {events} events, {arrivals} packet arrivals")
    for label, partition in (("core switches apart", core_apart(a.k)), ("core switches spread", core_spread(a.k))):
        cut = [partition(s) != partition(d) for s, d in zip(links["from"], links["to"], strict=True)]
        crossing = int(links.loc[cut, "delivered_packets"].sum())
        shares = f"{crossing / events:.1%} of events, {crossing / arrivals:.1%} of arrivals"
        print(f"{label}: {crossing} crossing arrivals, {shares}")


if __name__ == "__main__":
    main()
