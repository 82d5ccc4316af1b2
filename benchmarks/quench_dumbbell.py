"""The quench side of the dumbbell benchmark (see bench_dumbbell.py): the scenario, flags and
JSON keys ns3_dumbbell.py shares."""

from __future__ import annotations

import argparse
import json
import os
import resource
import time

import quench
from quench.scenarios import dumbbell

# The TCP both simulators run (ns3_dumbbell.py translates this scenario): ns-3's
# TcpNewReno adds one segment per ACK in slow start (no byte counting, so abc_limit = 1),
# with SACK and Limited Transmit on by default, initial window 10.
INITIAL_WINDOW_SEGMENTS = 10
SLOW_START_SEGMENTS_PER_ACK = 1
BUFFER = "16MiB"
MSS = 1460


def ns3_matched_dumbbell(
    flows: int, rate: int, rtt: float, buffer_pkts: int, seed: int, cc_kind: str = "newreno", **tcp_options
):
    """quench.scenarios.dumbbell with a TCP that ns-3 runs alike; `tcp_options` add to it
    (e.g. sack, limited_transmit, ecn)."""
    tcp = {"mss": MSS, "send_buffer": BUFFER, "receive_window": BUFFER, **tcp_options}
    cc = {"kind": cc_kind, "initial_window": INITIAL_WINDOW_SEGMENTS, "abc_limit": SLOW_START_SEGMENTS_PER_ACK}
    return dumbbell(flows, rate=rate, rtt=rtt, buffer_packets=buffer_pkts, cc=cc, seed=seed, tcp=tcp, tcp_profile="rfc")


def parse_args(description: str) -> argparse.Namespace:
    """The benchmark's flags, shared with ns3_dumbbell.py."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--flows", type=int, required=True)
    p.add_argument("--rate", type=int, required=True, help="bottleneck rate, bit/s")
    p.add_argument("--duration", type=float, required=True, help="seconds")
    p.add_argument("--rtt", type=float, default=0.05, help="seconds")
    p.add_argument("--buffer-pkts", type=int, required=True)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", required=True)
    p.add_argument("--sack", choices=("on", "off"), default="on", help="SACK + Limited Transmit (default on)")
    p.add_argument("--cc", choices=("newreno", "cubic"), default="newreno")
    return p.parse_args()


def scenario(a: argparse.Namespace) -> dict:
    """The scenario both simulators run, recording off."""
    sack = a.sack == "on"
    net = ns3_matched_dumbbell(
        a.flows, a.rate, a.rtt, a.buffer_pkts, a.seed, cc_kind=a.cc, sack=sack, limited_transmit=sack
    )
    net.record(queues=False, drops=False, cwnd=False, rtt=False)
    return net.to_dict(a.duration)


def write_json_atomic(path: str, data: dict) -> None:
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=2)
    os.replace(tmp, path)


def main() -> None:
    t0 = time.perf_counter()
    a = parse_args(__doc__)
    spec = scenario(a)
    sim = quench._core.Simulation(json.dumps(spec))
    t1 = time.perf_counter()
    sim.run_until(a.duration)
    t2 = time.perf_counter()
    raw = sim.finish()
    res = quench.Results.from_raw(raw, {}, wall_run_s=t2 - t1)
    # Read as the engine's columns, not DataFrames: the whole process loads no pandas, as
    # `quench run` does not (benchmarks/bench_start.py).
    row = res.tables.column("links", "name").index("r1->r2")
    b = {c: res.tables.column("links", c)[row] for c in ("utilization", "dropped_packets", "departed_packets")}
    goodput = [delivered * 8 / a.duration for delivered in res.tables.column("flows", "bytes_delivered")]
    out = {
        "simulator": "quench",
        "version": quench.__version__,
        "config": vars(a),
        "utilization": float(b["utilization"]),
        "goodput_bps": goodput,
        "aggregate_goodput_bps": float(sum(goodput)),
        "drops": int(b["dropped_packets"]),
        "bottleneck_tx_packets": int(b["departed_packets"]),
        "events": int(res.meta["events_executed"]),
        "wall_setup_s": t1 - t0,
        "wall_run_s": t2 - t1,
        "peak_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    }
    write_json_atomic(a.json, out)


if __name__ == "__main__":
    main()
