"""Per-discipline cost: delivered packets per second of wall time through one bottleneck.

The same traffic through each queue discipline (drop-tail, RED, CoDel, FQ-CoDel, PIE,
FQ-PIE, CHOKe, each with its defaults): N NewReno flows (8 and 1024) from one sender host
through a 100 Mb/s bottleneck (base RTT 40 ms) for `--seconds` simulated seconds. Prints a
Markdown table: packets sent by the bottleneck, the best wall time of the run loop over
`--repeats` runs, packets per wall second, and each discipline's wall time per packet
relative to drop-tail's (whole-simulation cost per delivered packet, TCP included, so a
ratio above 1 is the discipline's own cost plus what its different drops do to TCP).

    .venv/bin/python benchmarks/bench_aqm.py [--seconds 10] [--repeats 3] [--flows 8,1024]

`cargo bench -p quench-core --bench aqm_cost` runs the same scenario without Python, with a
digest of every result table and the allocations per packet (docs/benchmarks.md).
"""

import argparse

import quench

DISCIPLINES = [
    ("drop-tail", quench.droptail()),
    ("RED", quench.red()),
    ("CoDel", quench.codel()),
    ("FQ-CoDel", quench.fq_codel()),
    ("PIE", quench.pie()),
    ("FQ-PIE", quench.fq_pie()),
    ("CHOKe", quench.choke()),
]


def run(qdisc, flows: int, seconds: float):
    net = quench.Network(seed=1).hosts("s", "d").routers("r1", "r2")
    net.link("s", "r1", rate="1Gbps", delay="1ms")
    net.link("r1", "r2", rate="100Mbps", delay="18ms", qdisc=qdisc)
    net.link("r2", "d", rate="1Gbps", delay="1ms")
    for i in range(flows):
        net.tcp("s", "d", start=f"{(i % 1000) * 0.1}ms")
    net.record(queues=False, cwnd=False, rtt=False, links=["r1->r2"])
    res = net.run(f"{seconds}s", progress=False)
    return int(res.link("r1->r2")["departed_packets"]), res.meta["wall_run_s"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--flows", default="8,1024")
    a = ap.parse_args()
    print("| flows | discipline | packets | wall s (best) | packets/s | cost per packet vs drop-tail |")
    print("|---|---|---|---|---|---|")
    for flows in [int(f) for f in a.flows.split(",")]:
        base = None
        for name, qdisc in DISCIPLINES:
            runs = [run(qdisc, flows, a.seconds) for _ in range(a.repeats)]
            packets = runs[0][0]
            wall = min(w for _, w in runs)
            per_packet = wall / packets
            base = base or per_packet
            print(
                f"| {flows} | {name} | {packets} | {wall:.3f} | {packets / wall:,.0f} | {per_packet / base:.2f}x |",
                flush=True,
            )


if __name__ == "__main__":
    main()
