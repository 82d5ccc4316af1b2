"""The scale curve: how quench's speed and memory change with the number of flows, the link
rate and the topology. A benchmark, not a test: it prints a table and checks nothing.

Three series, each point run in a fresh child process (this script with --point) so that the
peak resident set size is that child's own (ru_maxrss from os.wait4); recording is off:
  flows     quench.scenarios.dumbbell, NewReno with SACK, a 10 Gb/s bottleneck with a
            drop-tail buffer of one bandwidth-delay product, RTT 50 ms, 1 to 10,000 flows;
  rate      the same dumbbell with 100 flows, bottleneck 10 Mb/s to 100 Gb/s (access links at
            most 200 Gb/s: 10x of 100 Gb/s is beyond nanosecond time);
  parking   a parking lot: 4 bottlenecks of 1 Gb/s in a chain r0->r1->...->r4, 10 long flows
            across all four and 10 cross flows over each bottleneck.
Flows start spread over the first START_SPREAD_S, so that even 10,000 flows are all running
after a fraction of the run.

Per point: the run loop's wall and CPU time (Simulation.run_until), events and events/s,
delivered packets (data segments received by the TCP receivers) and packets/s, set-up time
(imports and building the scenario, including routes), peak RSS (the whole process's, and in
brackets the peak at the end of the run loop). Rates are per CPU second of
the run loop (time.process_time), which on a shared machine does not count waiting for a core.
Memory per flow of the flow series is (RSS(N) - RSS(1 flow)) / N, from the whole process's
peak RSS and (in brackets) from the peak at the end of the run loop, before the results are
collected and pandas is loaded to read them.

    .venv/bin/python benchmarks/bench_scale.py             # every point (a few minutes here)
    .venv/bin/python benchmarks/bench_scale.py --quick     # smoke test: short runs, few points
    .venv/bin/python benchmarks/bench_scale.py --series flows --json out.json
    .venv/bin/python benchmarks/bench_scale.py --series flows --flows 1,100,1000,10000
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MIB = 1024 * 1024
RTT = "50ms"
START_SPREAD_S = 0.1
# The TCP of every flow: NewReno with SACK and Limited Transmit (RFC 6675, RFC 3042); a 1 GiB
# send buffer and the largest window TCP can advertise (65535 << 14 bytes, RFC 7323 section
# 2.3), so that one flow alone comes near filling 100 Gb/s x 100 ms.
TCP = {"sack": True, "limited_transmit": True, "send_buffer": "1GiB", "receive_window": f"{65535 << 14}B"}

FLOW_COUNTS = (1, 10, 100, 1_000, 10_000)
FLOW_RATE = "10Gbps"
FLOW_DURATION_S = 2.0
# Rates and simulated durations: roughly a million bottleneck packets or more per point, and
# long enough at low rates for 100 flows to be past slow start.
RATES = (("10Mbps", 20.0), ("100Mbps", 10.0), ("1Gbps", 4.0), ("10Gbps", 2.0), ("100Gbps", 2.0))
RATE_FLOWS = 100
# The fastest access link of the rate series: quench's nanosecond clock serializes a 20-byte
# frame in at least 1 ns only up to 320 Gb/s (the builder's check).
MAX_ACCESS_RATE = "200Gbps"
PARKING_HOPS = 4
PARKING_RATE = "1Gbps"
PARKING_HOP_DELAY_S = 0.005
PARKING_FLOWS = 10  # long flows, and cross flows per bottleneck
PARKING_DURATION_S = 10.0

QUICK_FLOW_COUNTS = (1, 100)
QUICK_DURATION_S = 0.2


def dumbbell_net(flows: int, rate: str):
    """quench.scenarios.dumbbell; above 32 Gb/s the same topology built here with access links
    of MAX_ACCESS_RATE instead of 10x the bottleneck (1 Tb/s is beyond nanosecond time)."""
    from quench.network import Network, droptail
    from quench.scenarios import ACCESS_DELAY_S, ACCESS_RATE_FACTOR, PACKET_BYTES, dumbbell
    from quench.units import parse_duration, parse_rate

    spacing = START_SPREAD_S / flows
    bps = parse_rate(rate)
    if bps * ACCESS_RATE_FACTOR <= parse_rate(MAX_ACCESS_RATE):
        return dumbbell(flows, rate=rate, rtt=RTT, seed=1, start_spacing=spacing, tcp=dict(TCP), tcp_profile="rfc")
    rtt = parse_duration(RTT)
    net = Network(seed=1, name=f"dumbbell-{flows}", tcp_profile="rfc")
    net.routers("r1", "r2")
    buffer = math.ceil(bps * rtt / 8 / PACKET_BYTES)
    net.link("r1", "r2", rate=bps, delay=rtt / 2 - 2 * ACCESS_DELAY_S, qdisc=droptail(f"{buffer}p"))
    access = dict(rate=MAX_ACCESS_RATE, delay=ACCESS_DELAY_S, qdisc=droptail("100000p"))
    for i in range(flows):
        net.hosts(f"s{i}", f"d{i}")
        net.link(f"s{i}", "r1", **access)
        net.link("r2", f"d{i}", **access)
        net.tcp(f"s{i}", f"d{i}", start=i * spacing, name=f"flow{i}", **TCP)
    return net


def parking_lot_net():
    """r0 -> r1 -> r2 -> r3 -> r4, each hop a PARKING_RATE bottleneck with a one-BDP buffer of
    the long flows' RTT; long flows l<i> from a host at r0 to one at r4, cross flows c<h>_<i>
    from a host at r<h> to one at r<h+1>. Access links run 10x faster with 1 ms delay."""
    from quench.network import Network, droptail
    from quench.units import parse_rate

    rate = parse_rate(PARKING_RATE)
    long_rtt = 2 * (PARKING_HOPS * PARKING_HOP_DELAY_S + 2 * 0.001)
    buffer = max(1, round(rate * long_rtt / 8 / 1500))
    net = Network(seed=1, name="parking-lot", tcp_profile="rfc")
    routers = [f"r{h}" for h in range(PARKING_HOPS + 1)]
    net.routers(*routers)
    for a, b in zip(routers, routers[1:]):
        net.link(a, b, rate=rate, delay=PARKING_HOP_DELAY_S, qdisc=droptail(f"{buffer}p"))
    access = dict(rate=10 * rate, delay=0.001, qdisc=droptail("100000p"))
    spacing = START_SPREAD_S / (PARKING_FLOWS * (PARKING_HOPS + 1))
    n = 0

    def flow(src_router: str, dst_router: str, name: str):
        nonlocal n
        net.hosts(f"{name}s", f"{name}d")
        net.link(f"{name}s", src_router, **access)
        net.link(dst_router, f"{name}d", **access)
        net.tcp(f"{name}s", f"{name}d", start=n * spacing, name=name, **TCP)
        n += 1

    for i in range(PARKING_FLOWS):
        flow(routers[0], routers[-1], f"l{i}")
    for h in range(PARKING_HOPS):
        for i in range(PARKING_FLOWS):
            flow(routers[h], routers[h + 1], f"c{h}_{i}")
    return net, [f"{a}->{b}" for a, b in zip(routers, routers[1:])]


def run_point(spec: dict) -> dict:
    """Run one point in this process and return its measurements."""
    t0 = time.perf_counter()
    import quench

    if spec["kind"] == "dumbbell":
        net = dumbbell_net(spec["flows"], spec["rate"])
        bottlenecks = ["r1->r2"]
    else:
        net, bottlenecks = parking_lot_net()
    net.record(queues=False, drops=False, cwnd=False, rtt=False, monitors=False)
    duration = spec["duration"]
    sim = quench._core.Simulation(json.dumps(net.to_dict(duration)))
    t1, c1 = time.perf_counter(), time.process_time()
    sim.run_until(duration)
    t2, c2 = time.perf_counter(), time.process_time()
    # The peak so far: the run's, before its results are collected and pandas is imported.
    run_peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    res = quench.Results.from_raw(sim.finish(), {}, wall_run_s=t2 - t1)
    links = res.links.set_index("name")
    return {
        "flows": len(res.flows),
        "wall_setup_s": t1 - t0,
        "wall_run_s": t2 - t1,
        "cpu_run_s": c2 - c1,
        "run_peak_rss_kib": run_peak_kib,
        "events": int(res.meta["events_executed"]),
        "delivered_packets": int(res.flows["packets_received"].sum()),
        "bottleneck_utilization": [float(links.loc[b, "utilization"]) for b in bottlenecks],
    }


def measure(spec: dict, python: str) -> dict | None:
    """Run one point in a child process of its own; add its peak RSS (os.wait4's rusage, so
    this driver's memory is not counted) and its whole-process wall time."""
    cmd = [python, __file__, "--point", json.dumps(spec)]
    start = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=err)
        out = proc.stdout.read()  # one short JSON line, read before the wait
        _, status, rusage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            err.seek(0)
            print(f"point {spec} failed ({code}):\n{err.read().decode(errors='replace')}", file=sys.stderr)
            return None
    result = json.loads(out)
    cpu = rusage.ru_utime + rusage.ru_stime
    return {**spec, **result, "process_wall_s": wall, "process_cpu_s": cpu, "peak_rss_kib": rusage.ru_maxrss}


def points(series: list[str], quick: bool, flow_counts: tuple[int, ...] | None = None) -> list[dict]:
    out = []
    if "flows" in series:
        for n in flow_counts or (QUICK_FLOW_COUNTS if quick else FLOW_COUNTS):
            d = QUICK_DURATION_S if quick else FLOW_DURATION_S
            out.append({"series": "flows", "kind": "dumbbell", "flows": n, "rate": FLOW_RATE, "duration": d})
    if "rate" in series:
        for rate, d in RATES[:2] if quick else RATES:
            d = QUICK_DURATION_S if quick else d
            out.append({"series": "rate", "kind": "dumbbell", "flows": RATE_FLOWS, "rate": rate, "duration": d})
    if "parking" in series:
        d = QUICK_DURATION_S if quick else PARKING_DURATION_S
        out.append({"series": "parking", "kind": "parking", "rate": PARKING_RATE, "duration": d})
    return out


HEADER = [
    "series",
    "flows",
    "rate",
    "sim s",
    "bottleneck util",
    "set-up s",
    "run-loop s (CPU)",
    "events",
    "events/s",
    "delivered pkts",
    "delivered pkts/s",
    "events/pkt",
    "peak RSS MiB",
    "per flow KiB",
]


def row(p: dict, base: dict | None) -> list[str]:
    # Rates per CPU second of the run loop: on a shared machine wall time also counts the
    # time the process waited for a core.
    run = p["cpu_run_s"]
    per_flow = ""
    if base is not None and p["series"] == "flows" and p["flows"] > 1:
        whole = (p["peak_rss_kib"] - base["peak_rss_kib"]) / p["flows"]
        at_run = (p["run_peak_rss_kib"] - base["run_peak_rss_kib"]) / p["flows"]
        per_flow = f"{whole:.2f} ({at_run:.2f})"
    pkts = p["delivered_packets"]
    return [
        p["series"],
        f"{p['flows']:,}",
        p["rate"],
        f"{p['duration']:g}",
        "/".join(f"{u:.2f}" for u in p["bottleneck_utilization"]),
        f"{p['wall_setup_s']:.2f}",
        f"{p['wall_run_s']:.2f} ({run:.2f})",
        f"{p['events']:,}",
        f"{p['events'] / run:.3g}" if run else "n/a",
        f"{pkts:,}",
        f"{pkts / run:.3g}" if run else "n/a",
        f"{p['events'] / pkts:.1f}" if pkts else "n/a",
        f"{p['peak_rss_kib'] / 1024:.0f} ({p['run_peak_rss_kib'] / 1024:.0f})",
        per_flow,
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="short runs of a few points (smoke test)")
    ap.add_argument("--series", default="flows,rate,parking", help="comma-separated: flows, rate, parking")
    ap.add_argument(
        "--flows",
        help="comma-separated flow counts of the flow series (default: all); per-flow memory needs 1 among them",
    )
    ap.add_argument("--json", help="also write every measurement to this JSON file")
    ap.add_argument("--python", default=sys.executable, help="interpreter with quench installed")
    ap.add_argument("--point", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.point:
        print(json.dumps(run_point(json.loads(args.point))))
        return 0
    series = [s.strip() for s in args.series.split(",") if s.strip()]
    unknown = sorted(set(series) - {"flows", "rate", "parking"})
    if unknown:
        ap.error(f"unknown series: {', '.join(unknown)}")
    flow_counts = None
    if args.flows:
        try:
            flow_counts = tuple(int(n) for n in args.flows.split(",") if n.strip())
        except ValueError:
            ap.error(f"--flows: not a comma-separated list of integers: {args.flows}")
        if not flow_counts or min(flow_counts) < 1:
            ap.error("--flows: flow counts must be at least 1")
    results = []
    for spec in points(series, args.quick, flow_counts):
        print(f"running {spec}", file=sys.stderr, flush=True)
        p = measure(spec, args.python)
        if p is not None:
            print(f"  {p}", file=sys.stderr, flush=True)
            results.append(p)
    base = next((p for p in results if p["series"] == "flows" and p["flows"] == 1), None)
    print("| " + " | ".join(HEADER) + " |")
    print("|" + "---|" * len(HEADER))
    for p in results:
        print("| " + " | ".join(row(p, base)) + " |")
    if args.json:
        Path(args.json).write_text(json.dumps({"quick": args.quick, "points": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
