"""Per-controller cost: wall time per ACK through the dumbbells of bench_dumbbell.py.

The same dumbbell (the 16-flow 100 Mb/s and the 64-flow 1 Gb/s configurations, 50 ms RTT,
one-BDP drop-tail buffer, ns-3's TCP settings as in quench_dumbbell.py) with every flow
running one controller: NewReno, CUBIC, DCTCP (with ECN negotiated, so its per-segment ECN
feedback runs, though drop-tail marks nothing) and BBR (SACK; rate sampling, pacing). Prints a
Markdown table: ACKs the senders received (packets leaving the reverse bottleneck), the best
run-loop wall time over `--repeats` runs, nanoseconds per ACK, and each controller's cost per
ACK relative to NewReno's. The whole simulation is timed, links and receivers included, so a
ratio above 1 is the controller's own cost plus what its different traffic does (BBR paces,
so its senders wake once per segment instead of once per ACK).

    .venv/bin/python benchmarks/bench_cc.py [--seconds-scale 0.3] [--repeats 3]
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_dumbbell import CONFIGS, PACKET_BYTES, RTT_S  # noqa: E402
from quench_dumbbell import BUFFER, INITIAL_WINDOW_SEGMENTS, MSS, SLOW_START_SEGMENTS_PER_ACK  # noqa: E402

import quench  # noqa: E402
from quench.scenarios import dumbbell  # noqa: E402

CONTROLLERS = [
    ("NewReno", "newreno", {}),
    ("CUBIC", "cubic", {}),
    ("DCTCP", "dctcp", {"ecn": True}),
    ("BBR", "bbr", {}),
]


def run(config: dict, cc: str, tcp: dict, seconds: float, seed: int) -> tuple[int, float]:
    buffer_pkts = max(1, round(config["rate"] * RTT_S / 8 / PACKET_BYTES))
    # quench_dumbbell.py's TCP (ns-3's settings); BBR has no byte-counting limit to set.
    controller = {"kind": cc, "initial_window": INITIAL_WINDOW_SEGMENTS}
    if cc != "bbr":
        controller["abc_limit"] = SLOW_START_SEGMENTS_PER_ACK
    tcp = {"mss": MSS, "send_buffer": BUFFER, "receive_window": BUFFER, "sack": True, "limited_transmit": True, **tcp}
    net = dumbbell(
        config["flows"],
        rate=config["rate"],
        rtt=RTT_S,
        buffer_packets=buffer_pkts,
        cc=controller,
        seed=seed,
        tcp=tcp,
        tcp_profile="rfc",
    )
    net.record(queues=False, drops=False, cwnd=False, rtt=False, monitors=False)
    sim = quench._core.Simulation(json.dumps(net.to_dict(seconds)))
    t0 = time.perf_counter()
    sim.run_until(seconds)
    wall = time.perf_counter() - t0
    res = quench.Results.from_raw(sim.finish(), {}, wall_run_s=wall)
    return int(res.link("r2->r1")["departed_packets"]), wall


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--configs", default="medium,large", help="of bench_dumbbell.py's configurations")
    ap.add_argument("--seconds-scale", type=float, default=0.3, help="fraction of each configuration's duration")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    print("| flows | controller | ACKs | wall s (best) | ns per ACK | cost per ACK vs NewReno |")
    print("|---|---|---|---|---|---|")
    for name in a.configs.split(","):
        config = CONFIGS[name]
        seconds = config["duration"] * a.seconds_scale
        base = None
        for label, cc, tcp in CONTROLLERS:
            results = [run(config, cc, tcp, seconds, a.seed) for _ in range(a.repeats)]
            acks = results[0][0]
            wall = min(w for _, w in results)
            per_ack = wall / acks
            base = base or per_ack
            print(f"| {config['flows']} | {label} | {acks} | {wall:.3f} | {per_ack * 1e9:.0f} | {per_ack / base:.2f} |")


if __name__ == "__main__":
    main()
