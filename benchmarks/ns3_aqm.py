"""Cross-check quench's AQMs against ns-3's queue discs through the translator (quench.ns3).

    QUENCH_NS3_VENV=... .venv/bin/python benchmarks/ns3_aqm.py [--seeds 5] [--duration 30s]
        [--cases tcp,udp] [--aqms codel,fq_codel,pie,fq_pie,red,ared,feng,droptail]
        [--tcp matched|default]
        [--qdisc KEY=VALUE ...] [--udp-rate R] [--json OUT.json] [--ns3-variant flightsize|abc2|...]
        [--ecn] [--recovery prr|standard] [--tcp-set KEY=VALUE ...]
        [--quench-tcp KEY=VALUE ...] [--quench-qdisc KEY=VALUE ...] [--quench-link KEY=VALUE ...]
        [--split T] [--ns3-default PATH=TYPE:VALUE ...]

Shared scenarios (`quench.scenarios.dumbbell`: 10 Mb/s bottleneck, 50 ms base RTT, 100 Mb/s
access links):
- `tcp`: 4 NewReno flows with quench's TCP set to ns-3's (IW 10, abc_limit 1, SACK, limited
  transmit, 16 MiB buffers; `--tcp default` keeps quench's defaults instead);
- `udp`: one CBR flow of 1500-byte IP datagrams at 12.5 Mb/s (rho = 1.25), which isolates
  the AQM from any transport.
Each AQM at its defaults (RED: packet mode, min_th 10, max_th 30, limit 60, w_q 0.002, max_p
0.1, gentle, wait; `ared` and `feng` the same RED with Floyd's or Feng's adaptation of max_p;
`droptail`, only when named, the dumbbell's own drop-tail queue of one BDP).
Every seed runs in both simulators; ns-3 runs all seeds of one case in one
child process. Prints, per case and AQM, the means over seeds of utilization, total goodput,
mean queue delay (Little's law in both: time-mean queue over the departure rate; ns-3's queue
is the queue disc + its 1-packet device queue), mean queue in packets and the drop + mark rate
per arrival at the bottleneck, with (quench - ns-3)/ns-3 against the targets (5 %, 5 %, 10 %,
-, 10 %). The tables and their explanations are in docs/validation.md ("AQMs against ns-3").
`--tcp-set` changes the matched TCP in both simulators (a dotted key names a nested table:
`delayed_ack.enabled=false`); `--quench-tcp` and `--quench-qdisc` change quench's run alone,
for experiments, and `--quench-link` quench's bottleneck link (`device_queue=1`: the
1-packet device queue ns-3 has under every queue disc). `--split T` also prints the
bottleneck's drops and marks apart, before T and from T on (a link snapshot at T in both);
`--ns3-default` sets an ns-3 Config default in ns-3's run alone
(`ns3::PieQueueDisc::MarkEcnThreshold=double:1`, a child queue disc's attribute that the
parent does not hand on).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time

from quench import ns3
from quench.scenario import run_scenario
from quench.scenarios import dumbbell
from quench.units import parse_bytes

MATCHED_TCP = {
    "mss": 1460,
    "send_buffer": "16MiB",
    "receive_window": "16MiB",
    "sack": True,
    "limited_transmit": True,
    "recovery": "prr",
}
MATCHED_CC = {"kind": "newreno", "initial_window": 10, "abc_limit": 1}
RED = {
    "kind": "red",
    "min_th": "10p",
    "max_th": "30p",
    "limit": "60p",
    "w_q": 0.002,
    "max_p": 0.1,
    "mean_packet_size": "1500B",
    "curve": "gentle",
    "spacing": "wait",
    "forced": "drop",
}
AQMS = {
    "codel": {"kind": "codel"},
    "fq_codel": {"kind": "fq_codel"},
    "pie": {"kind": "pie"},
    "fq_pie": {"kind": "fq_pie"},
    "red": RED,
    # The same RED with max_p adapted: Floyd, Gummadi & Shenker 2001 (every 0.5 s towards the
    # middle of [min_th, max_th]) and Feng et al. 1999 (on leaving [min_th, max_th]).
    "ared": {**RED, "adapt": "floyd2001"},
    "feng": {**RED, "adapt": "feng1999"},
}
# Not an AQM, so not in the default list: the dumbbell's own drop-tail queue of one
# bandwidth-delay product (quench.scenarios.dumbbell: 42 packets here).
DROPTAIL = "droptail"
# UDP overload: 12.5 Mb/s of 1500-byte IP datagrams (1472 B payload + 28 B of UDP/IP headers).
UDP_RATE = "12.5Mbps"
UDP_PAYLOAD = "1472B"
# (key, label, target as a relative difference, None: reported only)
METRICS = [
    ("utilization", "utilization", 0.05),
    ("goodput_mbps", "goodput Mb/s", 0.05),
    ("delay_ms", "mean queue delay ms", 0.10),
    ("queue_pkts", "mean queue pkts", None),
    ("signal_rate", "drop+mark rate", 0.10),
    ("timeouts", "TCP timeouts", None),
]


def scenario(
    case: str,
    aqm: str,
    duration: str,
    tcp: str,
    qdisc_set: dict,
    ecn: bool = False,
    recovery: str = "prr",
    udp_rate: str = UDP_RATE,
    tcp_set: dict | None = None,
    split: str | None = None,
) -> dict:
    if case == "tcp":
        if tcp == "matched":
            matched = {**MATCHED_TCP, "ecn": ecn, "recovery": recovery, **(tcp_set or {})}
            net = dumbbell(4, rate="10Mbps", rtt="50ms", cc=MATCHED_CC, tcp=matched, tcp_profile="rfc")
        else:
            net = dumbbell(4, rate="10Mbps", rtt="50ms", tcp_profile="rfc")
    else:
        net = dumbbell(1, rate="10Mbps", rtt="50ms", tcp_profile="rfc")
    net.record(queues=True, links=["r1->r2"], drops=False, cwnd=False, rtt=False)
    spec = net.to_dict(duration)
    if split:
        spec["record"]["snapshots"] = [split]
    if case == "udp":
        spec["flows"] = [
            {"kind": "udp", "src": "s0", "dst": "d0", "rate": udp_rate, "size": UDP_PAYLOAD, "name": "udp0"}
        ]
    if aqm == DROPTAIL:
        spec["links"][0]["qdisc"].update(qdisc_set)
    else:
        spec["links"][0]["qdisc"] = {**AQMS[aqm], **qdisc_set}
    if ecn and aqm != DROPTAIL:  # the AQM marks ECT packets instead of dropping them
        spec["links"][0]["qdisc"].update({"signal": "mark"} if aqm == "red" else {"ecn": True})
    spec["name"] = f"ns3-aqm-{case}-{aqm}"
    return spec


def duration_s(res) -> float:
    from quench.units import parse_duration

    return float(parse_duration(res.scenario["duration"]))


def figures(res) -> dict:
    b = res.link("r1->r2")
    arrived = float(b["arrived_packets"])
    return {
        "utilization": float(b["utilization"]),
        "goodput_mbps": float(res.flows["goodput_bps"].sum()) / 1e6,
        # Little's law in both: the time-mean queue over the departure rate (quench's own mean
        # sojourn leaves out the packets still queued at the end, ns-3 has no per-packet one).
        "delay_ms": float(b["mean_backlog_packets"]) / (float(b["departed_packets"]) / duration_s(res)) * 1e3,
        "queue_pkts": float(b["mean_backlog_packets"]),
        "signal_rate": float(b["dropped_packets"] + b["marked_packets"]) / arrived if arrived else math.nan,
        "drops": float(b["dropped_packets"]),
        "marks": float(b["marked_packets"]),
        "timeouts": float(res.flows["timeouts"].sum()),
        **split_figures(res),
    }


def split_figures(res) -> dict:
    """The bottleneck's drops and marks before the one link snapshot (`--split`) and after it."""
    ls = res.tables.get("link_snapshots")
    if ls is None or len(ls) == 0:
        return {}
    row = ls[ls["link_name"] == "r1->r2"].iloc[0]
    b = res.link("r1->r2")
    d0, m0 = float(row["dropped_packets"]), float(row["marked_packets"])
    return {
        "drops_before": d0,
        "marks_before": m0,
        "drops_after": float(b["dropped_packets"]) - d0,
        "marks_after": float(b["marked_packets"]) - m0,
    }


def run_case(case: str, aqm: str, args) -> dict:
    specs, qspecs = [], []
    for i in range(args.seeds):
        common = (case, aqm, args.duration, args.tcp)
        rest = (args.ecn, args.recovery, args.udp_rate)
        s = scenario(*common, args.qdisc, *rest, tcp_set=args.tcp_set, split=args.split)
        s["seed"] = 1 + i
        specs.append(s)
        # An experiment: quench alone run with other settings (--quench-tcp, --quench-qdisc).
        qs = scenario(
            *common, {**args.qdisc, **args.quench_qdisc}, *rest, {**args.tcp_set, **args.quench_tcp}, args.split
        )
        qs["links"][0].update(args.quench_link)
        qs["seed"] = 1 + i
        qspecs.append(qs)
    t0 = time.perf_counter()
    q = [figures(run_scenario(s, progress=False)) for s in qspecs]
    tq = time.perf_counter() - t0
    t0 = time.perf_counter()
    if args.ns3_variant or args.ns3_default or args.ns3_fq_quantum:
        # An experiment: ns-3's NewReno replaced by a variant (benchmarks/ns3_experiments.py).
        import ns3_experiments

        extra = {
            "flightsize": ns3_experiments.FLIGHTSIZE,
            "abc2": ns3_experiments.ABC2,
            "flightsize_rfc_pipe": ns3_experiments.FLIGHTSIZE_RFC_PIPE,
            "flightsize_rfc_prr": ns3_experiments.FLIGHTSIZE_RFC_PRR,
            "flightsize_rfc_prr_sack": ns3_experiments.FLIGHTSIZE_RFC_PRR_SACK,
            "flightsize_rfc_prr_sack_wide": ns3_experiments.FLIGHTSIZE_RFC_PRR_SACK_WIDE,
            "flightsize_rfc_prr_sack_ssrb": ns3_experiments.FLIGHTSIZE_RFC_PRR_SACK_SSRB,
            "flightsize_rfc_prr_sack_ssrb32": ns3_experiments.FLIGHTSIZE_RFC_PRR_SACK_SSRB32,
            "flightsize_rfc_prr_sack_ssrb_ece": ns3_experiments.FLIGHTSIZE_RFC_PRR_SACK_SSRB_ECE,
            "flightsize_rfc_prr_sack_cwr": ns3_experiments.FLIGHTSIZE_RFC_PRR_SACK_CWR,
            "flightsize_rfc_prr_sack_ssrb_cwr": ns3_experiments.FLIGHTSIZE_RFC_PRR_SACK_SSRB_CWR,
            "flightsize_rfc_prr_sack_ssrb_ece_cwr": ns3_experiments.FLIGHTSIZE_RFC_PRR_SACK_SSRB_ECE_CWR,
        }.get(args.ns3_variant, {})
        extra = {**extra, "defaults": {**extra.get("defaults", {}), **args.ns3_default}}
        plans = [ns3.translate(s) for s in specs]
        for pl in plans:
            pl.update({k: v for k, v in extra.items() if k != "defaults"})
            pl["defaults"].update(extra.get("defaults", {}))
            if args.ns3_fq_quantum:
                pl["experiment_cpp"] = [*pl.get("experiment_cpp", []), (ns3_experiments.FQ_QUANTUM_CPP, [])]
                pl["links"][0]["qdisc"]["experiment_quantum"] = parse_bytes(args.ns3_fq_quantum)
        n = [figures(ns3.to_results(pl, r)) for pl, r in zip(plans, ns3.run_plans(plans))]
    else:
        n = [figures(r) for r in ns3.run_ns3_many(specs)]
    tn = time.perf_counter() - t0
    return {"case": case, "aqm": aqm, "quench": q, "ns3": n, "wall_quench_s": tq, "wall_ns3_s": tn}


def mean(rows: list[dict], key: str) -> float:
    return statistics.fmean(r[key] for r in rows)


def table(results: list[dict]) -> str:
    head = "| case | AQM | metric | quench | ns-3 | diff | target |"
    lines = [head, "|---|---|---|---|---|---|---|"]
    for r in results:
        for key, label, tol in METRICS:
            if r["case"] == "udp" and key == "timeouts":
                continue
            qm, nm = mean(r["quench"], key), mean(r["ns3"], key)
            rel = (qm - nm) / nm if nm else (0.0 if qm == 0 else math.inf)
            verdict = "" if tol is None else ("ok" if abs(rel) <= tol else "DIFFERS")
            tol_s = "" if tol is None else f"{tol:.0%}"
            lines.append(
                f"| {r['case']} | {r['aqm']} | {label} | {qm:.4g} | {nm:.4g} | {rel:+.1%} | {tol_s} {verdict} |"
            )
    return "\n".join(lines)


def signals_table(results: list[dict], split: str | None) -> str:
    """The bottleneck's drops and marks apart, quench / ns-3, means over seeds."""
    keys = [("drops", "drops"), ("marks", "marks")]
    if split:
        for w, at in (("before", "before"), ("after", "from")):
            keys += [(f"{k}_{w}", f"{k} {at} {split}") for k in ("drops", "marks")]
    lines = ["| case | AQM | " + " | ".join(label for _, label in keys) + " |", "|---|---|" + "---|" * len(keys)]
    for r in results:
        cells = []
        for k, _ in keys:
            qm, nm = mean(r["quench"], k), mean(r["ns3"], k)
            cells.append(f"{qm:.1f} / {nm:.1f}" + (f" ({(qm - nm) / nm:+.1%})" if nm else ""))
        lines.append(f"| {r['case']} | {r['aqm']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def ns3_defaults(pairs: list[str]) -> dict:
    """PATH=TYPE:VALUE pairs as the ns-3 plan's Config defaults (TYPE as in quench.ns3: double,
    uint, bool, string, time_s)."""
    out = {}
    for kv in pairs:
        path, tv = kv.split("=", 1)
        typ, v = tv.split(":", 1)
        out[path] = (typ, json.loads(v) if typ in ("double", "uint", "bool", "time_s") else v)
    return out


def key_values(pairs: list[str]) -> dict:
    """KEY=VALUE pairs, each VALUE as JSON where it parses (true, 0, {...}), else a string
    (a quantity such as 10ms); a dotted KEY (delayed_ack.enabled) names a nested table."""
    out: dict = {}
    for kv in pairs:
        k, v = kv.split("=", 1)
        try:
            val = json.loads(v)
        except json.JSONDecodeError:
            val = v
        *outer, last = k.split(".")
        d = out
        for part in outer:
            d = d.setdefault(part, {})
        d[last] = val
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--duration", default="30s")
    p.add_argument("--cases", default="tcp,udp")
    p.add_argument("--aqms", default=",".join(AQMS), help=f"of {', '.join([*AQMS, DROPTAIL])}")
    p.add_argument("--tcp", choices=("matched", "default"), default="matched")
    p.add_argument("--qdisc", action="append", default=[], help="KEY=VALUE set on the bottleneck qdisc (both)")
    p.add_argument("--tcp-set", action="append", default=[], help="KEY=VALUE set in the matched TCP (both)")
    p.add_argument("--quench-tcp", action="append", default=[], help="experiment: KEY=VALUE in quench's TCP only")
    p.add_argument("--quench-qdisc", action="append", default=[], help="experiment: KEY=VALUE on quench's qdisc only")
    p.add_argument(
        "--quench-link",
        action="append",
        default=[],
        help="experiment: KEY=VALUE on quench's bottleneck link only (device_queue=1: ns-3's one-packet device queue)",
    )
    p.add_argument("--json", help="write the per-seed figures here")
    p.add_argument("--udp-rate", default=UDP_RATE, help="the UDP case's sending rate (IP bytes)")
    p.add_argument("--ecn", action="store_true", help="ECN: matched TCP negotiates it, the AQM marks")
    p.add_argument(
        "--recovery",
        choices=("prr", "standard"),
        default="prr",
        help="matched TCP's recovery (ns-3: TcpPrrRecovery / TcpClassicRecovery)",
    )
    p.add_argument(
        "--ns3-variant",
        choices=(
            "flightsize",
            "abc2",
            "flightsize_rfc_pipe",
            "flightsize_rfc_prr",
            "flightsize_rfc_prr_sack",
            "flightsize_rfc_prr_sack_wide",
            "flightsize_rfc_prr_sack_ssrb",
            "flightsize_rfc_prr_sack_ssrb32",
            "flightsize_rfc_prr_sack_ssrb_ece",
            "flightsize_rfc_prr_sack_cwr",
            "flightsize_rfc_prr_sack_ssrb_cwr",
            "flightsize_rfc_prr_sack_ssrb_ece_cwr",
        ),
        help="experiment: ns-3's NewReno halving FlightSize (as quench), with ABC L = 2, or halving "
        "FlightSize with PRR on RFC 6675's pipe (and RecoverFS = FlightSize, and DeliveredData "
        "counting SACKed bytes only; _wide: PRR's sndcnt in 64 bits, not ns-3 3.44's wrapping 32; "
        "_ssrb: that and PRR-SSRB's extra segment on every ACK as RFC 6937 and quench, not only on "
        "ACKs of retransmitted data as ns-3, RFC 9937 and Linux; _ssrb32: SSRB in 32 bits; _ssrb_ece: "
        "_ssrb and an ACK with ECE in fast recovery or after a timeout changes nothing, RFC 3168 6.1.2; "
        "_cwr: a loss found during ECN's window reduction starts fast recovery with that reduction's "
        "ssthresh, as quench and Linux, not ns-3 3.44's staying in CWR)",
    )
    p.add_argument(
        "--ns3-fq-quantum",
        help="experiment: the DRR quantum of ns-3's FQ-CoDel / FQ-PIE on the bottleneck (e.g. 1514B; "
        "ns-3 otherwise takes the device MTU, 1500 B)",
    )
    p.add_argument("--split", help="also count drops and marks apart before and after this instant (e.g. 3s)")
    p.add_argument(
        "--ns3-default",
        action="append",
        default=[],
        help="experiment: PATH=TYPE:VALUE as an ns-3 Config default, ns-3's run only",
    )
    args = p.parse_args()
    args.ns3_default = ns3_defaults(args.ns3_default)
    for name in ("qdisc", "tcp_set", "quench_tcp", "quench_qdisc", "quench_link"):
        setattr(args, name, key_values(getattr(args, name)))
    results = []
    for case in args.cases.split(","):
        for aqm in args.aqms.split(","):
            r = run_case(case, aqm, args)
            print(f"{case} {aqm}: quench {r['wall_quench_s']:.1f} s, ns-3 {r['wall_ns3_s']:.1f} s", file=sys.stderr)
            results.append(r)
    print(
        f"seeds 1..{args.seeds}, {args.duration}, TCP {args.tcp}"
        + (f", ns-3 variant {args.ns3_variant}" if args.ns3_variant else "")
        + (", ECN" if args.ecn else "")
        + (f", recovery {args.recovery}" if args.recovery != "prr" else "")
        + (f", qdisc {args.qdisc}" if args.qdisc else "")
        + (f", TCP {args.tcp_set}" if args.tcp_set else "")
        + (f", quench only: TCP {args.quench_tcp}" if args.quench_tcp else "")
        + (f", quench only: qdisc {args.quench_qdisc}" if args.quench_qdisc else "")
        + (f", quench only: link {args.quench_link}" if args.quench_link else "")
        + (f", UDP at {args.udp_rate}" if args.udp_rate != UDP_RATE else "")
        + (f", ns-3 only: defaults {args.ns3_default}" if args.ns3_default else "")
        + "; diff = (quench - ns-3)/ns-3"
    )
    print(table(results))
    print(signals_table(results, args.split))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
