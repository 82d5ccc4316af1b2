"""The `quench` command: run scenario files, the demo, and (per seed issue) reproductions."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

from quench import _core
from quench.atomic import OutputError, check_output_dir, staged_dir
from quench.results import FORMATS, Results, pcap_file_names
from quench.scenario import load_scenario, one_line, run_scenario, validate_scenario
from quench.stream import RecordStream

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


def _formats(text: str) -> list[str]:
    fmts = [f.strip() for f in text.split(",") if f.strip()]
    bad = [f for f in fmts if f not in FORMATS]
    if bad:
        raise argparse.ArgumentTypeError(f"unknown format(s) {bad}; choose from {list(FORMATS)}")
    return fmts


def summary_table(res: Results) -> str:
    """A plain-text summary: the bottleneck and every flow."""
    b = res.link(res.bottleneck())
    lines = [
        f"bottleneck {b['name']}: utilization {b['utilization']:.3f}, drops {b['dropped_packets']}, "
        f"mean queue {b['mean_backlog_packets']:.1f} pkts, mean sojourn {1e3 * b['mean_sojourn_s']:.2f} ms",
        f"{'flow':<10} {'kind':<5} {'cc':<8} {'goodput Mb/s':>12} {'delivered MB':>12} "
        f"{'rexmit':>7} {'timeouts':>8} {'srtt ms':>8}",
    ]
    for _, f in res.flows.iterrows():
        lines.append(
            f"{f['name']:<10} {f['kind']:<5} {f['cc']:<8} {f['goodput_bps'] / 1e6:>12.3f} "
            f"{f['bytes_delivered'] / 1e6:>12.3f} {f['retransmitted_segments']:>7} {f['timeouts']:>8} "
            f"{1e3 * f['srtt_s']:>8.1f}"
        )
    lines.append(
        f"Jain's fairness index of goodput: {res.jain_index():.4f}; "
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


def cmd_validate(args: argparse.Namespace) -> int:
    resolved = validate_scenario(load_scenario(args.scenario))
    print(json.dumps(resolved, indent=2))
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from quench.scenarios import dumbbell

    duration = "10s" if args.quick else "60s"
    check_output_dir(args.out, force=args.force)
    net = dumbbell(flows=args.flows, rate="10Mbps", rtt="50ms", seed=args.seed)
    net.record(segments=True, links=["r1->r2"])
    res = net.run(duration)
    out = res.save(args.out, formats=args.format, force=args.force)
    print(f"dumbbell: {args.flows} NewReno flows, 10 Mb/s bottleneck, 50 ms RTT, one-BDP drop-tail buffer, {duration}")
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
        summaries[name] = (out, reproduce(name, out, quick=args.quick, seed=args.seed))
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
    val.add_argument("scenario", type=Path)
    val.set_defaults(func=cmd_validate)

    from quench.experiments import EXPERIMENTS

    rep = sub.add_parser(
        "reproduce",
        help="reproduce a seed experiment (or all) with the source's figures beside ours",
        description="Run a seed experiment, print the source's figures beside ours, and write "
        "summary.json (every pass criterion), Parquet results and plots.",
    )
    rep.add_argument("name", choices=[*EXPERIMENTS, "all"], help="experiment, or all (writes REPORT.md)")
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
    tr.add_argument("--src", help="arrival rate of packets from this IPv4 source only (default: all)")
    tr.add_argument("--gain", type=float, default=0.125, help="EWMA gain smoothing inter-arrival times")
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
        help="stop a point after this many wall-clock seconds and record it as failed (default, or 0: no limit)",
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


if __name__ == "__main__":
    sys.exit(main())
