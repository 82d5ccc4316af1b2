"""The `quench` command: run scenario files, the demo, and (per seed issue) reproductions."""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

from quench import _core
from quench.atomic import OutputError, check_output_dir, staged_dir
from quench.errors import one_line
from quench.results import FORMATS, Results, Tables
from quench.scenario import dump, load_scenario, run_scenario, validate_scenario
from quench.stream import RecordStream, pcap_file_names

EXIT_BAD_INPUT = 2

EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130  # 128 + SIGINT, the shell's convention


OUT_HELP = (
    "output folder: absent, empty, or an earlier quench run's (one holding meta.json and "
    "scenario.json beside only .parquet/.csv/.pcap/.png/.json files), which is replaced whole"
)
FORCE_HELP = "also replace a non-empty --out that holds no quench run (its contents are deleted)"


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line, like every other error."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"quench: error: {one_line(message)} (see {self.prog} --help)\n")


def _out_path(text: str) -> Path:
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty name; name a folder, e.g. --out results/run1")
    return Path(text)


def _gain(text: str) -> float:
    from quench.trace import check_gain

    try:
        return check_gain(float(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number in (0, 1]") from None


def _ipv4(text: str) -> str:
    from quench.trace import check_source

    try:
        return check_source(text) or ""
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not an IPv4 address such as 10.0.0.1") from None


def _formats(text: str) -> list[str]:
    fmts = [f.strip() for f in text.split(",") if f.strip()]
    bad = [f for f in fmts if f not in FORMATS]
    if bad:
        raise argparse.ArgumentTypeError(f"unknown format(s) {bad}; choose from {list(FORMATS)}")
    return fmts


def _rows(res: Results, table: str, columns: tuple[str, ...]) -> list[dict[str, Any]]:
    """Rows of a summary table as dicts of Python values; read from the engine's columns when
    the table is still in that form, so a summary needs neither pandas nor numpy."""
    tables = res.tables
    if isinstance(tables, Tables):
        cols = [tables.column(table, c) for c in columns]
    else:
        cols = [tables[table][c].tolist() for c in columns]
    return [dict(zip(columns, values)) for values in zip(*cols)]


def _jain(values: list[float]) -> float:
    """Jain's fairness index, as results.jain_index computes it, over a few Python floats."""
    if not values or not any(values):
        return float("nan")
    return sum(values) ** 2 / (len(values) * sum(v * v for v in values))


def summary_table(res: Results) -> str:
    """A plain-text summary: the bottleneck (the busiest link, the first of equals) and every flow."""
    links = _rows(res, "links", ("name", "utilization", "dropped_packets", "mean_backlog_packets", "mean_sojourn_s"))
    b = links[max(range(len(links)), key=lambda i: (links[i]["utilization"], -i))]
    flows = _rows(
        res,
        "flows",
        ("name", "kind", "cc", "goodput_bps", "bytes_delivered", "retransmitted_segments", "timeouts", "srtt_s"),
    )
    lines = [
        f"bottleneck {b['name']}: utilization {b['utilization']:.3f}, drops {b['dropped_packets']}, "
        f"mean queue {b['mean_backlog_packets']:.1f} pkts, mean sojourn {1e3 * b['mean_sojourn_s']:.2f} ms",
        f"{'flow':<10} {'kind':<5} {'cc':<8} {'goodput Mb/s':>12} {'delivered MB':>12} "
        f"{'rexmit':>7} {'timeouts':>8} {'srtt ms':>8}",
    ]
    for f in flows:
        lines.append(
            f"{f['name']:<10} {f['kind']:<5} {f['cc']:<8} {f['goodput_bps'] / 1e6:>12.3f} "
            f"{f['bytes_delivered'] / 1e6:>12.3f} {f['retransmitted_segments']:>7} {f['timeouts']:>8} "
            f"{1e3 * f['srtt_s']:>8.1f}"
        )
    lines.append(
        f"Jain's fairness index of goodput: {_jain([f['goodput_bps'] for f in flows]):.4f}; "
        f"{res.meta['events_executed']:,} events in {res.meta['wall_run_s']:.3f} s wall"
    )
    return "\n".join(lines)


def _check_pcaps(resolved: dict[str, Any]) -> None:
    """Before the run: every captured link's file name is a plain name, and no two share one."""
    pcap_file_names(resolved.get("record", {}).get("pcap", []))


def cmd_run(args: argparse.Namespace) -> int:
    spec = load_scenario(args.scenario)
    if args.seed is not None:
        spec["seed"] = args.seed
    if args.duration is not None:
        spec["duration"] = args.duration
    # Every output check happens before the run, so a bad --out costs nothing. The run streams
    # its records into the output's staging folder, which takes --out's place once whole.
    out = check_output_dir(args.out, force=args.force, keep=[args.scenario])
    with staged_dir(out, force=args.force) as tmp:
        stream = RecordStream(tmp, str(args.out))
        res = run_scenario(spec, progress=None if not args.quiet else False, before_run=_check_pcaps, stream=stream)
        res.write_into(tmp, formats=args.format, plots=not args.no_plots)
    if not args.quiet:
        print(summary_table(res))
        print(f"results written to {args.out}")
    return 0


def _scenario_with_overrides(args: argparse.Namespace) -> dict[str, Any]:
    spec = load_scenario(args.scenario)
    if args.seed is not None:
        spec["seed"] = args.seed
    if args.duration is not None:
        spec["duration"] = args.duration
    return spec


def cmd_ns3(args: argparse.Namespace) -> int:
    from quench import ns3

    if (args.scenario is None or args.out is None) and not (args.setup and args.scenario is None):
        raise ValueError("quench ns3 needs a scenario and --out (or only --setup)")
    # The scenario and --out are checked before anything slow (the set-up's download, ns-3).
    spec = _scenario_with_overrides(args) if args.scenario is not None else None
    out = check_output_dir(args.out, force=args.force, keep=[args.scenario]) if spec is not None else None
    if args.setup:
        print(f"setting up ns3=={ns3.NS3_VERSION} in {ns3.venv_dir()} ({ns3.DOWNLOAD}, on first use)")
        py = ns3.setup()
        print(f"ns-3 environment ready: {py}")
    if spec is None or out is None:
        return 0
    plan = ns3.translate(spec)  # refuses what ns-3 cannot run before it starts
    ns3.ns3_python()
    res = ns3.run_ns3(spec)
    with staged_dir(out, force=args.force) as tmp:
        res.write_into(tmp, formats=args.format, plots=not args.no_plots)
    if not args.quiet:
        for note in plan["notes"]:
            print(f"note: {note}")
        print(summary_table(res))
        print(f"ns-3 results written to {args.out}")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from quench import ns3
    from quench.atomic import write_json_atomic

    if args.seeds < 1:
        raise ValueError(f"--seeds must be at least 1, got {args.seeds}")
    spec = _scenario_with_overrides(args)
    out = check_output_dir(args.out, force=args.force, keep=[args.scenario])  # before either simulator runs
    plan = ns3.translate(spec)
    ns3.ns3_python()
    base_seed = int(plan["resolved"]["seed"])
    specs = [{**spec, "seed": base_seed + i} for i in range(args.seeds)]
    q_runs = [run_scenario(s, progress=False) for s in specs]
    # One ns-3 process for every seed: its start-up (~14 s) is paid once.
    n_runs = ns3.run_ns3_many(specs)
    table, rows = ns3.compare_table(q_runs, n_runs)
    with staged_dir(out, force=args.force) as tmp:
        for prefix, res in (("quench", q_runs[0]), ("ns3", n_runs[0])):
            for name in ("links", "flows", "queue", "cwnd"):
                if name in res.tables:
                    res.tables[name].to_parquet(tmp / f"{prefix}_{name}.parquet", index=False)
        (tmp / "scenario.json").write_text(json.dumps(plan["resolved"], indent=2) + "\n")
        meta = {
            "quench_version": _core.__version__,
            "command": "compare",
            "seeds": [base_seed + i for i in range(args.seeds)],
            "ns3": n_runs[0].meta,
            "ns3_approximations": plan["notes"],
        }
        write_json_atomic(tmp / "meta.json", meta)
        write_json_atomic(tmp / "comparison.json", rows)
        if not args.no_plots:
            # A figure's notices (an empty legend where a simulator recorded nothing) would
            # land between the tables; the figures say the same by what they show.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _overlay_queue(q_runs[0], n_runs[0], tmp / "compare_queue.png")
                _overlay_cwnd(q_runs[0], n_runs[0], tmp / "compare_cwnd.png")
    for note in plan["notes"]:
        print(f"note: {note}")
    print(table)
    print()
    print(ns3.flow_table(q_runs, n_runs))
    failed = [r["metric"] for r in rows if not r["ok"]]
    print(f"{len(rows) - len(failed)} of {len(rows)} metrics within tolerance; results in {args.out}")
    return 0


def _finish_plot(fig: Any, ax: Any, path: Path) -> None:
    """Legend, grid, layout; write the figure to `path` and free it."""
    import matplotlib.pyplot as plt

    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _overlay_queue(q: Results, n: Results, path: Path) -> None:
    """The bottleneck queue of both simulators on one plot (when both recorded it)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    link = q.bottleneck()
    fig, ax = plt.subplots(figsize=(8, 4))
    for label, res in (("quench", q), ("ns-3", n)):
        t = res.tables.get("queue")
        if t is None or t.empty:
            continue
        t = t[t["link_name"] == link]
        ax.step(t["time_s"], t["packets"], where="post", lw=0.8, label=label)
    ax.set(xlabel="time (s)", ylabel="queue (packets)", title=f"queue at {link}")
    _finish_plot(fig, ax, path)


def _overlay_cwnd(q: Results, n: Results, path: Path) -> None:
    """The first TCP flow's window in both simulators on one plot (when both recorded it)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tq, tn = q.tables.get("cwnd"), n.tables.get("cwnd")
    if tq is None or tn is None or tq.empty or tn.empty:
        return
    flow = int(tn["flow"].iloc[0])
    fig, ax = plt.subplots(figsize=(8, 4))
    for label, t in (("quench", tq), ("ns-3", tn)):
        t = t[t["flow"] == flow]
        ax.step(t["time_s"], t["cwnd"] / 1e3, where="post", lw=0.8, label=label)
    ax.set(xlabel="time (s)", ylabel="cwnd (kB)", title=f"congestion window of {q.flows['name'].iloc[flow]}")
    _finish_plot(fig, ax, path)


def cmd_validate(args: argparse.Namespace) -> int:
    written = load_scenario(args.scenario)
    resolved = validate_scenario(written)
    print(dump(resolved) if args.toml else json.dumps(resolved, indent=2), end="" if args.toml else "\n")
    # Where each TCP setting came from, on stderr so that stdout stays a scenario to save.
    for line in tcp_key_sources(written, resolved):
        print(line, file=sys.stderr)
    return 0


def tcp_key_sources(written: dict, resolved: dict) -> list[str]:
    """One line per resolved `cc` and `tcp` key of every listed TCP flow:
    `flows[0].tcp.sack = true  (profile linux)`, or `(scenario)` where the scenario wrote it.
    A workload's template is resolved for each flow as it arrives, so it is not listed."""
    lines = []
    given_flows = written.get("flows") or []
    for i, flow in enumerate(resolved.get("flows") or []):
        if flow.get("kind") != "tcp":
            continue
        given = given_flows[i] if i < len(given_flows) else {}
        profile = flow.get("tcp", {}).get("profile", "linux")
        for key in ("cc", "tcp"):
            lines += _sources(f"flows[{i}]", key, flow.get(key), _as_table(given.get(key)), profile)
    return lines


def _as_table(v: object) -> object:
    """A controller written by name stands for the table with that `kind`."""
    return {"kind": v} if isinstance(v, str) else v


def _sources(prefix: str, key: str, value: object, given: object, profile: str) -> list[str]:
    if isinstance(value, dict):
        lines = []
        for k, v in value.items():
            sub = given.get(k) if isinstance(given, dict) else None
            lines += _sources(f"{prefix}.{key}", k, v, sub, profile)
        return lines
    source = "scenario" if given is not None else f"profile {profile}"
    return [f"{prefix}.{key} = {json.dumps(value)}  ({source})"]


def cmd_demo(args: argparse.Namespace) -> int:
    from quench.scenarios import dumbbell

    duration = "10s" if args.quick else "60s"
    check_output_dir(args.out, force=args.force)
    net = dumbbell(flows=args.flows, rate="10Mbps", rtt="50ms", seed=args.seed)
    net.record(segments=True, links=["r1->r2"])
    res = net.run(duration)
    out = res.save(args.out, formats=args.format, force=args.force)
    print(
        f"dumbbell: {args.flows} NewReno flows (Linux TCP profile), 10 Mb/s bottleneck, 50 ms RTT, "
        f"one-BDP drop-tail buffer, {duration}"
    )
    print(summary_table(res))
    print(f"results and plots written to {out}")
    return 0


def cmd_reproduce(args: argparse.Namespace) -> int:
    from quench.experiments import EXPERIMENTS, reproduce
    from quench.report import write_report

    names = list(EXPERIMENTS) if args.name == "all" else [args.name]
    base = args.out or Path("results")
    summaries = {}
    for name in names:
        out = base / name if (args.name == "all" or args.out is None) else base
        print(f"== {name} ({'quick' if args.quick else 'full'}) -> {out}")
        summaries[name] = (out, reproduce(name, out, quick=args.quick, seed=args.seed, progress=True))
        verdict = "all criteria pass" if summaries[name][1]["passed"] else "some criteria FAIL (see summary.json)"
        print(f"{name}: {verdict}; summary.json, Parquet results and plots in {out}\n")
    if args.name == "all":
        report = write_report(base, summaries)
        print(f"report: {report} (Markdown twin: {report.with_suffix('.md')})")
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from quench.sweep import EXIT_POINTS_FAILED, format_failures, format_summary, run_sweep

    try:
        summary = run_sweep(
            args.spec,
            args.out,
            jobs=args.jobs,
            cluster=args.cluster,
            retries=args.retries,
            quiet=args.quiet,
            point_timeout=args.point_timeout,
            point_memory=args.point_memory,
        )
    except KeyboardInterrupt:
        print(
            f"quench: sweep interrupted; finished points are kept in {args.out}: run again to resume", file=sys.stderr
        )
        return EXIT_INTERRUPTED
    if not args.quiet:
        print(format_summary(summary))
        print(f"points in {args.out}/points, summary statistics in {args.out}/stats.csv")
    elif summary["failed"]:  # quiet on success only: one line per failed point
        print("\n".join(format_failures(summary)), file=sys.stderr)
    return EXIT_POINTS_FAILED if summary["failed"] else 0


def cmd_trace(args: argparse.Namespace) -> int:
    from quench.trace import PcapError, analyze, flows, read_pcap

    try:
        summary = analyze(args.pcap, args.out, src=args.src, gain=args.gain, force=args.force)
        table = flows(read_pcap(args.pcap))
    except PcapError as e:
        raise ValueError(str(e)) from None
    with pd_options():
        print(table.to_string(index=False))
    print(f"{summary['packets']} packets in {summary['flows']} flows; tables and trace.png in {summary['out']}")
    return 0


def pd_options():
    import pandas as pd

    return pd.option_context("display.width", 200, "display.max_columns", 20)


class _ExperimentNames:
    """The choices of `quench reproduce`: every experiment and "all". The experiments (and the
    numpy and pandas they use) are imported only when the names are asked for, when that
    command's argument is checked or its help shown, so every other command starts fast."""

    def _names(self) -> list[str]:
        from quench.experiments import EXPERIMENTS

        return [*EXPERIMENTS, "all"]

    def __contains__(self, name: object) -> bool:
        return name in self._names()

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())


def _ns3_run_options(p: argparse.ArgumentParser, *, out_required: bool, seed_help: str, plots: str) -> None:
    """The options `quench ns3` and `quench compare` share: the output folder and the scenario
    overrides."""
    p.add_argument("--out", type=_out_path, required=out_required, help=OUT_HELP)
    p.add_argument("--force", action="store_true", help=FORCE_HELP)
    p.add_argument("--seed", type=int, help=seed_help)
    p.add_argument("--duration", help="override the scenario's duration, e.g. 5s")
    p.add_argument("--no-plots", action="store_true", help=f"skip {plots}")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="quench", description="Packet-level simulator of congestion control and AQM.")
    p.add_argument("--version", action="version", version=f"quench {_core.__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    run = sub.add_parser(
        "run",
        help="run a TOML scenario file",
        description="Run a TOML scenario and save results into --out, whole or not at all: they are "
        "written into a hidden folder beside it (.NAME.quench-tmp-PID-XXXX, removed if the save fails, "
        "and by a later save into the same parent if the process was killed), which then takes its "
        "place. --out may be absent, empty, or an earlier quench run's folder: one holding a meta.json "
        "that names the quench version and a scenario.json, beside only .parquet, .csv, .pcap, .png and "
        ".json files; it is replaced whole, so no file of that run remains. Any other non-empty folder "
        "is refused unless --force. --out is checked before the run starts.",
    )
    run.add_argument("scenario", type=Path, help="scenario file (TOML)")
    run.add_argument("--out", type=_out_path, required=True, help=OUT_HELP)
    run.add_argument("--force", action="store_true", help=FORCE_HELP)
    run.add_argument("--seed", type=int, help="override the scenario's seed")
    run.add_argument("--duration", help="override the scenario's duration, e.g. 30s")
    run.add_argument("--format", type=_formats, default=["parquet"], help="parquet, csv, or parquet,csv")
    run.add_argument("--no-plots", action="store_true", help="skip the standard plots")
    run.add_argument("--quiet", action="store_true", help="print nothing on success")
    run.set_defaults(func=cmd_run)

    val = sub.add_parser("validate", help="check a scenario and print it with defaults filled in")
    val.add_argument("scenario", type=Path, help="a TOML scenario, or a run's scenario.json")
    val.add_argument("--toml", action="store_true", help="print TOML (a scenario file) instead of JSON")
    val.set_defaults(func=cmd_validate)

    rep = sub.add_parser(
        "reproduce",
        help="reproduce a seed experiment (or all) with the source's figures beside ours",
        description="Run a seed experiment, print the source's figures beside ours, and write "
        "summary.json (every pass criterion), Parquet results and plots.",
    )
    rep.add_argument(
        "name",
        choices=_ExperimentNames(),
        metavar="NAME",
        help="an experiment, or all (every one, and REPORT.md): %(choices)s",
    )
    rep.add_argument("--out", type=_out_path, help="output folder (default results/NAME)")
    rep.add_argument("--quick", action="store_true", help="shorter runs and sweeps (CI)")
    rep.add_argument("--seed", type=int, default=1)
    rep.set_defaults(func=cmd_reproduce)

    tr = sub.add_parser(
        "trace",
        help="analyze a pcap (quench's or tcpdump's): flows, time-sequence, arrival rate",
        description="Per-flow bytes, throughput and retransmissions, time-sequence data, and Van "
        "Jacobson's smoothed instantaneous arrival rate, as tables (Parquet and CSV) and a plot.",
    )
    tr.add_argument("pcap", type=Path)
    tr.add_argument("--out", type=_out_path, required=True, help="output folder")
    tr.add_argument("--src", type=_ipv4, help="arrival rate of packets from this IPv4 source only (default: all)")
    tr.add_argument(
        "--gain", type=_gain, default=0.125, help="EWMA gain smoothing inter-arrival times, in (0, 1] (default 0.125)"
    )
    tr.add_argument("--force", action="store_true", help=FORCE_HELP)
    tr.set_defaults(func=cmd_trace)

    sw = sub.add_parser(
        "sweep",
        help="run a parameter sweep (grid/sample x seeds) locally or on a Dask cluster",
        description="Run every point of a sweep spec (docs/sweeps.md) into a partitioned Parquet dataset; "
        "points already in --out are reused. Exit status 1 when some points failed (each listed on one line).",
    )
    sw.add_argument("spec", type=Path, help="sweep spec (TOML)")
    sw.add_argument("--out", type=_out_path, required=True, help="output folder (resumed if it exists)")
    sw.add_argument("--cluster", metavar="ADDR", help="Dask scheduler address, e.g. tcp://host:8786")
    sw.add_argument("--jobs", type=int, help="local processes (default: the cores available)")
    sw.add_argument("--retries", type=int, help="retries after a point fails (default: the spec's, else 1)")
    sw.add_argument(
        "--point-timeout",
        type=float,
        metavar="SECONDS",
        help="stop a point after this many wall-clock seconds and record it as failed (default: from the "
        "point's budget, 360 s for the default budget; 0: no limit)",
    )
    sw.add_argument(
        "--point-memory",
        type=float,
        metavar="MB",
        help="stop a point that grows its worker's memory by more than this many MB and record it as failed "
        "(default: physical memory / worker processes; 0: no limit)",
    )
    sw.add_argument("--quiet", action="store_true", help="no progress bar and no summary on success")
    sw.set_defaults(func=cmd_sweep)

    n3 = sub.add_parser(
        "ns3",
        help="run a TOML scenario in ns-3 (translated; see docs/validation.md)",
        description="Translate a scenario into ns-3 and run it in a child process with the ns-3 environment's "
        "interpreter; the tables (links, flows, queue) have quench's columns. Output folder rules as for "
        "`quench run`. Elements without an ns-3 counterpart are refused with the key named. --setup creates "
        "the ns-3 environment (ns3 wheel from PyPI) at $QUENCH_NS3_VENV, benchmarks/.venv-ns3 in a source "
        "checkout, else ~/.local/share/quench/ns3-venv.",
    )
    n3.add_argument("scenario", type=Path, nargs="?", help="scenario file (TOML)")
    _ns3_run_options(n3, out_required=False, seed_help="override the scenario's seed", plots="the queue plot")
    n3.add_argument("--setup", action="store_true", help="create the ns-3 environment if it is missing")
    n3.add_argument("--format", type=_formats, default=["parquet"], help="parquet, csv, or parquet,csv")
    n3.add_argument("--quiet", action="store_true", help="print nothing on success")
    n3.set_defaults(func=cmd_ns3)

    cmp_ = sub.add_parser(
        "compare",
        help="run a scenario in quench and in ns-3 and compare them",
        description="Run the scenario in both simulators (--seeds K: seeds s..s+K-1, means and spread) and "
        "print utilization, total goodput, Jain index, drops and mean queue at the bottleneck side by side "
        "with relative differences, tolerances and verdicts, then each flow's goodput share, goodput, "
        "smoothed RTT and retransmissions in both; writes both runs' tables, comparison.json and "
        "compare_queue.png (and compare_cwnd.png when the scenario records cwnd) into --out.",
    )
    cmp_.add_argument("scenario", type=Path)
    seed_help = "override the scenario's (first) seed"
    _ns3_run_options(cmp_, out_required=True, seed_help=seed_help, plots="compare_queue.png and compare_cwnd.png")
    cmp_.add_argument("--seeds", type=int, default=1, help="seeds per simulator (default 1)")
    cmp_.set_defaults(func=cmd_compare)

    demo = sub.add_parser("demo", help="the dumbbell demo: N NewReno flows through a drop-tail bottleneck")
    demo.add_argument("--out", type=_out_path, default=Path("results/demo"), help=f"{OUT_HELP} (default results/demo)")
    demo.add_argument("--force", action="store_true", help=FORCE_HELP)
    demo.add_argument("--flows", type=int, default=4)
    demo.add_argument("--seed", type=int, default=1)
    demo.add_argument("--quick", action="store_true", help="10 s instead of 60 s")
    demo.add_argument("--format", type=_formats, default=["parquet", "csv"])
    demo.set_defaults(func=cmd_demo)
    return p


def main(argv: list[str] | None = None) -> int:
    """Run one command. Every failure is one line on stderr: `quench: error: ...` and exit
    status 2 for bad input (a scenario, an output folder, a file that cannot be read or
    written), `quench: internal error: ...` and 3 for a bug; never a traceback (set
    QUENCH_TRACEBACK=1 to see one)."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as e:  # --help, --version, or a usage error (already printed)
        return e.code if isinstance(e.code, int) else EXIT_BAD_INPUT
    try:
        return args.func(args)
    except (_core.ScenarioError, OutputError, ValueError, OSError, RecursionError) as e:
        if os.environ.get("QUENCH_TRACEBACK"):
            raise
        text = str(e) if not isinstance(e, RecursionError) else "input nested too deeply"
        print(f"quench: error: {one_line(text)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("quench: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as e:  # a bug: one line, and the status says so
        if os.environ.get("QUENCH_TRACEBACK"):
            raise
        prefix = "" if isinstance(e, _core.InternalError) else f"internal error: {type(e).__name__}: "
        print(f"quench: {prefix}{one_line(str(e))}", file=sys.stderr)
        return EXIT_INTERNAL
    except BaseException as e:
        if not is_engine_panic(e) or os.environ.get("QUENCH_TRACEBACK"):
            raise
        what = f"{args.command} failed: the engine panicked"
        print(f"quench: internal error: {what}: {one_line(str(e))}", file=sys.stderr)
        return EXIT_INTERNAL


def is_engine_panic(e: BaseException) -> bool:
    """A Rust panic that reached Python as pyo3's PanicException (`pyo3_runtime.PanicException`,
    a BaseException, so `except Exception` lets it through). The bindings turn the engine's
    panics into InternalError (crates/quench-py/src/lib.rs, `guarded`); this is one that got
    past them. pyo3 creates the type when a panic first crosses, so it is known by name."""
    t = type(e)
    return any(c.__name__ == "PanicException" and c.__module__ == "pyo3_runtime" for c in t.__mro__)


if __name__ == "__main__":
    sys.exit(main())
