"""BBR beside ns-3's TcpBbr: each flow's figures over seeds, with one setting changed at a time.

    QUENCH_NS3_VENV=... .venv/bin/python benchmarks/ns3_bbr.py SCENARIO.toml [--seeds 5]
        [--set KEY=VALUE ...] [--ns3 ATTRIBUTE=TYPE:VALUE ...] [--only quench|ns3]

Runs the scenario as `quench compare` does (seeds S, S+1, ...: quench's `run_scenario` and one
ns-3 child through the translator) and prints, as mean ± s.d. over the seeds: the bottleneck's
utilization, drops and mean queue; per flow its goodput and share of the total, retransmitted
segments, timeouts, PROBE_RTT entries and largest window. `--set flows.*.tcp.loss_detection=rack`
changes the scenario of both simulators (`flows.0.cc.send_quantum=segment` one flow; the value
is read as JSON where it parses, else as a string); `--ns3 ns3::TcpSocket::DelAckCount=uint:1`
sets an ns-3 attribute default on top of the translation (ns-3 alone); `--ns3-traced-bbr` runs
ns-3's BBR flows as ns3_bbr_trace.py's TcpBbrTraced, whose switches give one of ns-3's rules
Linux's (`--ns3 quench_exp::TcpBbrTraced::NAME=bool:true`, NAME `LinuxLosses`,
`LinuxRateSample` or `LinuxRecoveryExit`).

PROBE_RTT entries: ns-3's TcpBbr has no trace of its mode, so they are counted by a proxy in
both simulators: the window falling onto exactly PROBE_RTT's 4-segment floor from above
(TcpBbr::ModulateCwndForProbeRTT: cwnd = min(cwnd, m_minPipeCwnd)), a second fall within a
second counted as the same PROBE_RTT; quench's also from its `pacing` table's mode, which checks
the proxy. The proxy is rough under losses (a recovery's packet conservation can also land on 4
segments, and a PROBE_RTT entered with a smaller window never falls onto it).
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import sys
from pathlib import Path
from typing import Any

import numpy as np
from ns3_bbr_trace import TRACED_BBR  # run from benchmarks/, as the other ns-3 scripts

from quench import ns3
from quench.scenario import load_scenario, run_scenario, validate_scenario

PROBE_RTT_SEGMENTS = 4
# PROBE_RTT lasts 200 ms and a round trip (draft-cardwell-iccrg-bbr-congestion-control-00
# section 4.3.5) and comes at most every 10 s: falls onto the floor within 1 s are one entry.
PROBE_RTT_GAP_S = 1.0


def set_key(spec: dict[str, Any], dotted: str, value: Any) -> None:
    """Set `dotted` (keys and list indexes, `*` for every element) in `spec` to `value`."""
    head, _, rest = dotted.partition(".")
    if isinstance(spec, list):
        for item in spec if head == "*" else [spec[int(head)]]:
            set_key(item, rest, value)
    elif not rest:
        spec[head] = value
    else:
        set_key(spec.setdefault(head, {}), rest, value)


def parse_value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def ns3_default(text: str) -> tuple[str, tuple[str, Any]]:
    """`ns3::Class::Attribute=kind:value` as a plan default."""
    name, _, typed = text.partition("=")
    kind, _, raw = typed.partition(":")
    value: Any = {"uint": int, "double": float, "bool": lambda v: v.lower() == "true", "time_s": float}.get(kind, str)(
        raw
    )
    return name, (kind, value)


def window_falls_to_floor(cwnd: Any, flow: int, segment: int) -> int:
    """Times the flow's window fell onto exactly PROBE_RTT's floor from above, more than
    PROBE_RTT_GAP_S after it last stood there (within one PROBE_RTT ns-3 raises the window by
    what each ACK delivers and cuts it back, a fall per ACK)."""
    rows = cwnd.loc[cwnd["flow"] == flow]
    w, t = rows["cwnd"].to_numpy(dtype=np.int64), rows["time_s"].to_numpy(dtype=float)
    floor = PROBE_RTT_SEGMENTS * segment
    entries, last = 0, -np.inf
    for i in range(1, len(w)):
        if w[i] == floor and w[i - 1] > floor and t[i] - last > PROBE_RTT_GAP_S:
            entries += 1
        if w[i] == floor:
            last = t[i]
    return entries


def mode_entries(res: Any, flow: int) -> float:
    """quench's PROBE_RTT entries from its `pacing` table (NaN where the table is absent)."""
    pacing = res.tables.get("pacing")
    if pacing is None or not len(pacing):
        return float("nan")
    mode = pacing.loc[pacing["flow"] == flow, "mode"].astype(str).to_numpy()
    probe = mode == "probe_rtt"
    return float(np.sum(probe[1:] & ~probe[:-1]) + (1 if len(probe) and probe[0] else 0))


def figures(res: Any, spec: dict[str, Any]) -> dict[str, float]:
    """The run's figures: the bottleneck's, then each flow's (keys suffixed by the flow id)."""
    b = res.link(res.bottleneck())
    out = {
        "utilization": float(b["utilization"]),
        "drops": float(b["dropped_packets"]),
        "mean_queue": float(b["mean_backlog_packets"]),
    }
    flows = res.flows
    total = float(flows["goodput_bps"].sum())
    cwnd = res.tables.get("cwnd")
    for _, f in flows.iterrows():
        k = int(f["flow"])
        segment = int(spec["flows"][k]["tcp"]["mss"])
        out[f"goodput_mbps_{k}"] = float(f["goodput_bps"]) / 1e6
        out[f"share_{k}"] = float(f["goodput_bps"]) / total if total else float("nan")
        out[f"retransmissions_{k}"] = float(f["retransmitted_segments"])
        out[f"timeouts_{k}"] = float(f["timeouts"])
        if cwnd is not None and len(cwnd):
            out[f"probe_rtt_{k}"] = float(window_falls_to_floor(cwnd, k, segment))
            w = cwnd.loc[cwnd["flow"] == k, "cwnd"]
            out[f"max_cwnd_segments_{k}"] = float(w.max()) / segment if len(w) else float("nan")
        out[f"probe_rtt_mode_{k}"] = mode_entries(res, k)
    return out


def runs(
    specs: list[dict[str, Any]], which: str, defaults: dict[str, tuple[str, Any]], extra: dict[str, Any]
) -> list[dict[str, float]]:
    if which == "quench":
        return [figures(run_scenario(s, progress=False), validate_scenario(s)) for s in specs]
    plans = [ns3.translate(s) for s in specs]
    for p in plans:
        p.update(extra)
        p["defaults"].update(defaults)
    raws = ns3.run_plans(plans)
    return [figures(ns3.to_results(p, r), p["resolved"]) for p, r in zip(plans, raws)]


def summary(rows: list[dict[str, float]]) -> dict[str, str]:
    out = {}
    for key in rows[0]:
        v = [r[key] for r in rows]
        if all(np.isnan(x) for x in v):
            out[key] = "n/a"
            continue
        m = statistics.fmean(v)
        sd = statistics.stdev(v) if len(v) > 1 else 0.0
        digits = 3 if abs(m) < 10 else 1 if abs(m) < 1000 else 0
        out[key] = f"{m:.{digits}f} ± {sd:.{digits}f}"
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("scenario", type=Path)
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--set", action="append", default=[], help="KEY=VALUE in the scenario (both simulators)")
    p.add_argument("--ns3", action="append", default=[], help="ns-3 attribute default NAME=TYPE:VALUE")
    p.add_argument(
        "--ns3-traced-bbr",
        action="store_true",
        help="ns-3's bbr flows run TcpBbrTraced (ns3_bbr_trace.py), whose switches --ns3 sets",
    )
    p.add_argument("--only", choices=("quench", "ns3"))
    p.add_argument("--per-seed", action="store_true", help="print each seed's figures too")
    args = p.parse_args()
    spec = load_scenario(args.scenario)
    for item in args.set:
        key, _, value = item.partition("=")
        set_key(spec, key, parse_value(value))
    base = int(spec.get("seed", 1))
    specs = []
    for i in range(args.seeds):
        s = copy.deepcopy(spec)
        s["seed"] = base + i
        specs.append(s)
    defaults = dict(ns3_default(d) for d in args.ns3)
    label = " ".join([str(args.scenario), *args.set, *args.ns3, *(["--ns3-traced-bbr"] if args.ns3_traced_bbr else [])])
    for which in ("quench", "ns3"):
        if args.only and which != args.only:
            continue
        rows = runs(specs, which, defaults, TRACED_BBR if args.ns3_traced_bbr else {})
        print(f"\n{which}: {label}, seeds {base}-{base + args.seeds - 1}")
        if args.per_seed:
            for s, r in zip(specs, rows):
                print(f"  seed {s['seed']}: " + ", ".join(f"{k} {v:.4g}" for k, v in r.items()))
        for k, v in summary(rows).items():
            print(f"  {k:24} {v}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
