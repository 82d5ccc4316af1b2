"""fabric's incast with DCTCP, one setting changed at a time: timeouts and drops at one sender
count, and the first collapse (goodput under half the line) over a grid of sender counts.

    .venv/bin/python studies/fabric_incast_settings.py [--senders 24] [--seeds 1-5]

Prints one row per setting (docs/reproductions.md, "DCTCP's incast collapse and the tail loss
probe"). Each row runs `fabric.incast_network` as the reproduction pins it, with one key of the
flows or of `fabric.Params` written over it; nothing else changes.
"""

from __future__ import annotations

import argparse
import dataclasses

from quench.experiments import fabric
from quench.network import Network

CONFIG = "dctcp_rto200ms"
GRID = (2, 8, 16, 24, 32)
# Setting name -> (keys of each flow's `tcp` table, keys of its `cc` table, fields of Params).
SETTINGS: dict[str, tuple[dict, dict, dict]] = {
    "as pinned": ({}, {}, {}),
    "loss_detection = rack_no_tlp": ({"loss_detection": "rack_no_tlp"}, {}, {}),
    "loss_detection = dupack": ({"loss_detection": "dupack"}, {}, {}),
    "K = 10 packets": ({}, {}, {"marking_threshold": "10p"}),
    "K = 40 packets": ({}, {}, {"marking_threshold": "40p"}),
    "K = 64 packets": ({}, {}, {"marking_threshold": "64p"}),
    "delayed ACKs off": ({"delayed_ack": {"enabled": False}}, {}, {}),
    "quick-ack off": ({"delayed_ack": {"quick_ack": False}}, {}, {}),
    "initial window 2": ({}, {}, {"incast_initial_window": 2}),
    "initial window 4": ({}, {}, {"incast_initial_window": 4}),
    "initial window 10": ({}, {}, {"incast_initial_window": 10}),
    "initial_alpha = 0": ({}, {"initial_alpha": 0.0}, {}),
    "rto.min = 1ms": ({"rto": {"min": "1ms"}}, {}, {}),
}


def network(p: fabric.Params, n: int, tcp: dict, cc: dict) -> Network:
    """The reproduction's incast of `n` senders with `tcp` and `cc` keys written over each flow."""
    net = fabric.incast_network(p, CONFIG, n)
    for flow in net._flows:
        keys = flow.setdefault("tcp", {})
        for k, v in tcp.items():
            keys[k] = {**keys.get(k, {}), **v} if isinstance(v, dict) else v
        flow["cc"] = {**flow["cc"], **cc}
    return net


def row(seed: int, senders: int, tcp: dict, cc: dict, params: dict) -> tuple[int, int, float]:
    """(timeouts and drops at `senders`, first collapse over GRID) for one seed."""
    p = dataclasses.replace(fabric.Params(seed=seed), **params)
    shares, at = [], (0, 0)
    for n in sorted({*GRID, senders}):
        g = fabric.incast_goodput(network(p, n, tcp, cc).run(p.incast_duration_s), p)
        if n in GRID:
            shares.append(g["goodput_bps"] / 1e9)
        if n == senders:
            at = (g["timeouts"], g["drops"])
    return (*at, fabric.collapse_point(GRID, shares))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--senders", type=int, default=24)
    ap.add_argument("--seeds", default="1-5", help="a range such as 1-5")
    args = ap.parse_args()
    first, _, last = args.seeds.partition("-")
    seeds = range(int(first), int(last or first) + 1)
    print(f"{'setting':32s} timeouts / drops at {args.senders} senders, first collapse, per seed")
    for name, (tcp, cc, params) in SETTINGS.items():
        cells = [row(s, args.senders, tcp, cc, params) for s in seeds]
        print(f"{name:32s} " + "  ".join(f"{t}/{d}/{c:g}" for t, d, c in cells), flush=True)


if __name__ == "__main__":
    main()
