"""quench side of the RED cross-check (see compare_red.py): the scenario of ns3_red.py, the same
flags, the same JSON keys.

The dumbbell of quench.scenarios with the bottleneck r1->r2 queue replaced by RED in packet
mode (ACK direction r2->r1: drop-tail). Figures cover [--warmup, --duration]: the simulator is
deterministic for a seed, so the counters of a run stopped at --warmup are subtracted from those
of the full run. RED's average is the `avg_queue` monitor (one value per arrival, held until the
next), integrated over the window.
"""

from __future__ import annotations

import argparse
import json
import os

import numpy as np
from quench_dumbbell import ns3_matched_dumbbell

import quench
from quench.network import droptail, red

BOTTLENECK = "r1->r2"


def scenario(a, duration: float) -> dict:
    # The TCP of the dumbbell benchmark (ns-3's TcpNewReno settings), SACK and Limited Transmit on.
    ecn = a.ecn == "on"
    net = ns3_matched_dumbbell(a.flows, a.rate, a.rtt, a.limit, a.seed, sack=True, limited_transmit=True, ecn=ecn)
    spec = net.to_dict(duration)
    link = spec["links"][0]
    assert (link["from"], link["to"]) == ("r1", "r2")
    link["qdisc"] = red(
        min_th=f"{a.min_th:g}p",
        max_th=f"{a.max_th:g}p",
        limit=f"{a.limit}p",
        mode="packets",
        max_p=a.max_p,
        w_q=a.w_q,
        mean_packet_size=f"{a.mean_pkt}B",
        curve="gentle",
        spacing="wait",
        signal="mark" if a.ecn == "on" else "drop",
        forced="drop",  # ns-3 UseHardDrop = true
        adapt="none",
    )
    link["reverse_qdisc"] = droptail(f"{a.limit}p")
    spec["record"] = {
        "queues": False,
        "drops": False,
        "cwnd": False,
        "rtt": False,
        "monitors": True,
        "links": [BOTTLENECK],
    }
    return spec


def run(spec: dict, until: float):
    sim = quench._core.Simulation(json.dumps(spec))
    sim.run_until(until)
    return quench.Results.from_raw(sim.finish(), spec, wall_run_s=0.0)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--flows", type=int, default=16)
    p.add_argument("--rate", type=int, default=10_000_000, help="bottleneck rate, bit/s")
    p.add_argument("--rtt", type=float, default=0.05, help="base RTT, seconds")
    p.add_argument("--duration", type=float, default=60.0, help="simulated seconds")
    p.add_argument("--warmup", type=float, default=10.0, help="seconds left out of the figures")
    p.add_argument("--min-th", type=float, default=10.0, help="packets")
    p.add_argument("--max-th", type=float, default=30.0, help="packets")
    p.add_argument("--limit", type=int, default=60, help="RED buffer, packets")
    p.add_argument("--max-p", type=float, default=0.1)
    p.add_argument("--w-q", type=float, default=0.002)
    p.add_argument("--mean-pkt", type=int, default=1500, help="bytes")
    p.add_argument("--ecn", choices=("on", "off"), default="off")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", required=True)
    a = p.parse_args()

    full = run(scenario(a, a.duration), a.duration)
    warm = run(scenario(a, a.duration), a.warmup)
    t0, t1 = a.warmup, a.duration
    span = t1 - t0
    b1, b0 = full.link(BOTTLENECK), warm.link(BOTTLENECK)
    d = lambda k: int(b1[k]) - int(b0[k])  # noqa: E731

    m = full.monitors
    m = m[(m["link_name"] == BOTTLENECK) & (m["name"] == "avg_queue")]
    t, v = m["time_s"].to_numpy(float), m["value"].to_numpy(float)
    # Step function: each value holds until the next arrival; clip to the window.
    i0 = max(np.searchsorted(t, t0, side="right") - 1, 0)
    tt = np.concatenate([[t0], t[i0 + 1 :][t[i0 + 1 :] < t1], [t1]])
    vv = v[i0 : i0 + len(tt) - 1]
    avg_mean = float(np.sum(vv * np.diff(tt)) / span)

    backlog = (float(b1["mean_backlog_packets"]) * t1 - float(b0["mean_backlog_packets"]) * t0) / span
    f1 = full.flows.set_index("name")["bytes_delivered"]
    f0 = warm.flows.set_index("name")["bytes_delivered"].reindex(f1.index)
    goodput = ((f1 - f0) * 8 / span).tolist()
    ecn = a.ecn == "on"
    marked = d("marked_packets")
    out = {
        "simulator": "quench",
        "version": quench.__version__,
        "config": {k: v for k, v in vars(a).items() if k != "json"},
        "window_s": [t0, t1],
        "arrived_packets": d("arrived_packets"),
        "early_drops": d("drops_early"),
        "forced_drops": d("drops_forced"),
        "overflow_drops": d("drops_overflow"),
        # forced = "drop": every mark is an early mark.
        "early_marks": marked if ecn else 0,
        "forced_marks": 0,
        "red_avg_time_mean": avg_mean,
        "red_avg_arrival_mean": float(vv.mean()),
        "qdisc_queue_time_mean": backlog,
        "utilization": d("departed_bytes") * 8 / (a.rate * span),
        "busy_utilization": (float(b1["utilization"]) * t1 - float(b0["utilization"]) * t0) / span,
        "bottleneck_tx_packets": d("departed_packets"),
        "aggregate_goodput_bps": float(sum(goodput)),
        "goodput_bps": goodput,
        "tcp": {
            "fast_recoveries": int(full.flows["fast_retransmits"].sum() - warm.flows["fast_retransmits"].sum()),
            "timeouts": int(full.flows["timeouts"].sum() - warm.flows["timeouts"].sum()),
        },
        "other_drops": {"reverse": int(full.link("r2->r1")["dropped_packets"])},
    }
    tmp = f"{a.json}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(out, f, indent=2)
    os.replace(tmp, a.json)


if __name__ == "__main__":
    main()
