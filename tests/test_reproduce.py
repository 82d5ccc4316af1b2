"""Seed experiments in quick mode: they run, print the comparison, their pass criteria,
computed from recorded results, hold, and every number they write matches its golden file.

`quench reproduce all --quick` runs once per module (the `quick` fixture); every test reads its
output. The golden files (tests/golden/<name>.summary.json) freeze each quick-mode summary.json:
the engine is bit-deterministic, so any changed number is a changed result, and it must be a
reviewed change. To refresh them on purpose, run

    QUENCH_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_reproduce.py

and commit the golden files' diff with the change that explains it."""

import contextlib
import gzip
import io
import json
import math
import os
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd
import pytest

from quench.cli import main
from quench.experiments import EXPERIMENTS
from quench.scenario import run_scenario

GOLDEN = Path(__file__).parent / "golden"
UPDATE_GOLDEN = os.environ.get("QUENCH_UPDATE_GOLDEN") == "1"
# The only fields of summary.json that change for reasons other than the simulation, left out
# of the golden files and of the comparison ("*" matches any key): the package version, which
# changes at a release, and wei05's wall-clock timings (each run's wall_s and the
# events-per-second rates computed from them).
IGNORED = [("quench_version",), ("measured", "*", "wall_s"), ("events_per_second",)]
# At most this many differing fields are listed in a failure message.
MAX_SHOWN = 40


class Reproduction(NamedTuple):
    out: Path
    printed: str


@pytest.fixture(scope="module")
def quick(tmp_path_factory) -> Reproduction:
    out = tmp_path_factory.mktemp("reproduce")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["reproduce", "all", "--quick", "--out", str(out)]) == 0
    return Reproduction(out, printed.getvalue())


def summary_of(quick: Reproduction, name: str) -> dict:
    return json.loads((quick.out / name / "summary.json").read_text())


def without_ignored(summary: dict) -> dict:
    """The summary less the IGNORED fields."""

    def drop(node: Any, path: tuple[str, ...]) -> None:
        if not isinstance(node, dict):
            return
        keys = list(node) if path[0] == "*" else [path[0]] if path[0] in node else []
        for key in keys:
            if len(path) == 1:
                del node[key]
            else:
                drop(node[key], path[1:])

    summary = json.loads(json.dumps(summary))
    for path in IGNORED:
        drop(summary, path)
    return summary


def differences(golden: Any, now: Any, where: str = "") -> list[str]:
    """Every field where `now` differs from `golden`, compared exactly (floats bit for bit, an
    int never equal to a float, NaN equal to NaN), as 'where: golden -> now'. List items that
    name themselves (criteria) are shown by name."""
    if isinstance(golden, dict) and isinstance(now, dict):
        out = []
        for key in [*golden, *(k for k in now if k not in golden)]:
            at = f"{where}.{key}" if where else key
            if key not in now or key not in golden:
                out.append(f"{at}: {'missing' if key not in now else 'new'}")
            else:
                out += differences(golden[key], now[key], at)
        return out
    if isinstance(golden, list) and isinstance(now, list):
        if len(golden) != len(now):
            return [f"{where}: {len(golden)} items -> {len(now)}"]
        out = []
        for i, (g, n) in enumerate(zip(golden, now)):
            label = f"{i} {g['name']!r}" if isinstance(g, dict) and "name" in g else str(i)
            out += differences(g, n, f"{where}[{label}]")
        return out
    both_nan = isinstance(golden, float) and isinstance(now, float) and math.isnan(golden) and math.isnan(now)
    if both_nan or (type(golden) is type(now) and golden == now):
        return []
    return [f"{where}: {golden!r} -> {now!r}"]


@pytest.mark.parametrize("name", list(EXPERIMENTS))
def test_quick_summary_matches_its_golden_file(name, quick):
    now = without_ignored(summary_of(quick, name))
    path = GOLDEN / f"{name}.summary.json"
    if UPDATE_GOLDEN:
        path.write_text(json.dumps(now, indent=2) + "\n")
        pytest.skip(f"refreshed {path}: review its diff before committing")
    diff = differences(json.loads(path.read_text()), now)
    if diff:
        more = len(diff) - MAX_SHOWN
        shown = "\n  ".join(diff[:MAX_SHOWN]) + (f"\n  ... and {more} more" if more > 0 else "")
        pytest.fail(
            f"{name}: quick-mode summary.json differs from {path} in {len(diff)} field(s) (golden -> now):\n  {shown}\n"
            "A changed number must be a reviewed change: if it is intended, refresh the golden files with "
            "QUENCH_UPDATE_GOLDEN=1 (see this module's docstring) and commit their diff with its reason.",
            pytrace=False,
        )


@pytest.mark.parametrize("name", ["mills88", "feng99"])
def test_quick_reproduction_passes_its_criteria(name, quick):
    out = quick.out / name
    assert "criterion" in quick.printed and "source" in quick.printed
    summary = summary_of(quick, name)
    failed = [c for c in summary["criteria"] if not c["passed"]]
    assert not failed, failed
    assert summary["seed"] == 1 and summary["parameters"]
    for plot in summary["plots"]:
        assert (out / plot).stat().st_size > 0
    saved = {"mills88": "quench", "feng99": "varying_feng"}[name]
    assert (out / saved / "flows.parquet").exists()


def test_reproduce_all_writes_a_report(quick):
    report = (quick.out / "REPORT.md").read_text()
    assert "## mills88" in report and "| criterion |" in report
    for name in EXPERIMENTS:
        assert f"Scenario: [{name}/scenarios.json.gz]" in report, name
        criteria = summary_of(quick, name)["criteria"]
        assert all(isinstance(c["passed"], bool) and isinstance(c["ours"], float) for c in criteria), name


def test_jacobson88_quick(quick):
    """jacobson88 reproduces the email's arithmetic, the calibrated 512-byte rate, the start-up
    loss with queue limit 8 and the MSS sweep's peaks. The 246-byte rate and the ratio are
    open (docs/reproductions.md): they are recorded in summary.json, not asserted here."""
    out = quick.out / "jacobson88"
    summary = summary_of(quick, "jacobson88")
    open_questions = {"throughput ratio 512/246", "throughput, 16 KB window, MSS 246 (KB/s)"}
    failed = [c for c in summary["criteria"] if not c["passed"] and c["name"] not in open_questions]
    assert not failed, failed
    assert {c["name"] for c in summary["criteria"]} >= open_questions
    assert len(summary["models"]) == 4
    for plot in summary["plots"]:
        assert (out / plot).stat().st_size > 0
    # Every run (calibration, cases, models, sweep) is recorded as the engine read it; the
    # 512-byte case at the calibrated rate, run again from its record, finishes at exactly the
    # recorded time.
    runs = json.loads(gzip.decompress((out / summary["scenarios"]["file"]).read_bytes()))
    assert len(runs) == summary["scenarios"]["runs"] > 4
    rate = summary["parameters"]["packet_rate"]
    case = next(
        r
        for r in runs
        if r["name"] == "jacobson88-mss512-window4096-queue8-echo"
        and any(link.get("packet_rate") == rate for link in r["links"])
    )
    flow = case["flows"][0]
    assert flow["cc"]["kind"] == "tahoe" and {"rto", "delayed_ack"} <= set(flow["tcp"])
    again = run_scenario(case, progress=False).flows["response_time_s"].iloc[0]
    assert again == summary["measured"]["mss512"]["completion_s"]


def test_wei05_quick(quick):
    """wei05 runs, separates host (transmit queue) drops from router drops and records the six
    criteria drawn from the slides (Wei, Hegde, Low, PFLDnet 2005, slides 3-4 and 25) with the
    time scaling. Asserted: host loss above router loss without control, and burstiness
    control all but removing the host loss and, with Linux's window growth (only on ACKs that
    find the window full), the router loss too, which the ns-2 rule (growth on every ACK)
    moves to the router instead. The loss totals are open (docs/reproductions.md); the
    throughput criterion needs the full run's 1000 s (the controlled sender converges slowly,
    slide 25)."""
    out = quick.out / "wei05"
    summary = summary_of(quick, "wei05")
    by_name = {c["name"]: c for c in summary["criteria"]}
    assert len(by_name) == 6
    assert by_name["host loss minus router loss without control"]["passed"]
    measured = summary["measured"]
    for bottleneck in ("dummynet", "droptail"):
        off, on = measured[f"no control, {bottleneck}"], measured[f"burstiness control, {bottleneck}"]
        assert off["host_loss"] > off["router_loss"] > 0, bottleneck
        assert on["host_loss"] < 0.05 * off["host_loss"], bottleneck
        assert on["router_loss"] < 0.5 * off["router_loss"], bottleneck
    ns2_growth = measured["burstiness control, dummynet, growth on every ACK"]
    assert ns2_growth["router_loss"] > measured["no control, dummynet"]["router_loss"]
    assert summary["parameters"]["cwnd_limited_growth"] is True
    assert "pacing, dummynet" in measured and "no control, dummynet, ACK pipe" in measured
    assert "1000" in summary["scaling"] and summary["parameters"]["txqueuelen"] == 100
    for plot in summary["plots"]:
        assert (out / plot).stat().st_size > 0


def test_pcp06_quick(quick):
    """pcp06 runs TCP, PCP and the router-assisted ideal over FIFO and FQ at three loads and
    records nine criteria drawn from the paper (Anderson, Collins, Krishnamurthy, Zahorjan,
    NSDI '06, §4.2-4.3). Asserted: TCP's loss rises with load and PCP's response time varies
    less over FQ at high load; the assisted ideal loses nothing at any of the quick loads and
    is the fastest configuration at 15 %. PCP against TCP's mean response time, PCP's zero
    loss in full mode, TCP over FQ against FIFO and the floor are open findings
    (docs/reproductions.md), recorded in summary.json, not asserted here."""
    out = quick.out / "pcp06"
    summary = summary_of(quick, "pcp06")
    by_name = {c["name"]: c for c in summary["criteria"]}
    assert len(by_name) == 9
    for name in ("TCP loss rises with load over fifo (Spearman)", "TCP loss rises with load over fq (Spearman)"):
        assert by_name[name]["passed"], by_name[name]
    assert by_name["PCP RT std over FQ - over FIFO, load >= 0.7 (s)"]["passed"]
    floor = next(c for c in summary["criteria"] if c["name"].startswith("best at load 0.15"))
    assert "assisted/fq" in floor["name"] and floor["ours"] < 1.5
    # The ideal's stamps track flows opened during a handshake: no loss at any quick load.
    table = pd.read_csv(out / "pcp06.csv")
    assert (table[table["transport"] == "assisted"]["drops"] == 0).all()
    for plot in summary["plots"]:
        assert (out / plot).stat().st_size > 0
    # The flows as the engine read them: the experiment's choices and every default.
    flows = summary["parameters"]["flows"]
    assert flows["pcp"]["pcp"]["mss"] == flows["tcp"]["tcp"]["mss"] == 1210
    assert {"slope_tolerance", "queue_alarm_rtts", "drain_once"} <= set(flows["pcp"]["pcp"])
    assert flows["tcp"]["cc"]["kind"] == "newreno" and flows["tcp"]["tcp"]["sack"] is True


def test_pcp06_warmup_fills_the_history():
    """The warm-up lasts until 95 % of the pairs have, in expectation, carried a flow (each pair
    sees Poisson arrivals at λ/pairs), and never less than the minimum."""
    from quench.experiments import pcp06

    p = pcp06.Params()
    # 15 % load: λ = 3 flows/s over 100 pairs, so -ln(0.05) / 0.03 = 99.86 s.
    assert p.warmup_s(0.15) == pytest.approx(-math.log(0.05) / 0.03)
    assert p.arrival_window_s(0.15) == pytest.approx(p.warmup_s(0.15) + p.measure_s)
    assert p.warmup_s(0.9) == pytest.approx(-math.log(0.05) / 0.18)
    assert pcp06.Params(history_coverage=0.01).warmup_s(0.9) == p.min_warmup_s


def test_aqm_quick(quick):
    """aqm runs the nine disciplines on the quick configuration (10 Mb/s, 20 ms, 4 NewReno
    flows, buffers of 1 and 4 BDP, without and with ECN) and one L4S pair (NewReno beside
    Prague through DualPI2), and records ten criteria stated from the RFCs. Asserted:
    CoDel's median queue delay within 2 x target and its utilization, FQ-CoDel's sparse flow
    under target, PIE's mean delay near its target, the drop-tail 4-BDP standing queue far
    above every AQM's, FQ-CoDel's short flows faster than drop-tail's, and DualPI2's three
    (the L4S delay under the bound in force, the coupling per packet for each class).
    FQ-CoDel's bulk Jain index in the 1-BDP buffer is an open finding
    (docs/reproductions.md#aqm), recorded in summary.json, not asserted here."""
    from quench.experiments import aqm

    out = quick.out / "aqm"
    summary = summary_of(quick, "aqm")
    assert len({c["name"] for c in summary["criteria"]}) == 10
    findings = ("FQ-CoDel: Jain",)
    asserted = [c for c in summary["criteria"] if not c["name"].startswith(findings)]
    failed = [c for c in asserted if not c["passed"]]
    assert not failed, failed
    assert summary["runs"] == 4 * len(aqm.DISCIPLINES) + 1
    coverage, *tables, l4s = summary["result_tables"]
    assert [row[0] for row in coverage["rows"]] == [c["name"] for c in summary["criteria"]]
    assert [t["title"] for t in tables] == [
        "10Mbps, RTT 20 ms, buffer 1 BDP, 4 x newreno",
        "10Mbps, RTT 20 ms, buffer 4 BDP, 4 x newreno",
        "10Mbps, RTT 20 ms, buffer 1 BDP, 4 x newreno, ECN",
        "10Mbps, RTT 20 ms, buffer 4 BDP, 4 x newreno, ECN",
    ]
    assert all([row[0] for row in t["rows"]] == [label for _, label in aqm.DISCIPLINES] for t in tables)
    assert l4s["title"].startswith("DualPI2") and len(l4s["rows"]) == 1
    for plot in summary["plots"]:
        assert (out / plot).stat().st_size > 0
    table = pd.read_csv(out / "aqm.csv")
    assert (table["short_flows"] > 0).all() and (table["utilization"] > 0.5).all()
    # Marks only where ECN is on, and there from CoDel (RFC 8289 §5: marking instead of dropping).
    assert (table.loc[~table["ecn"], "mark_rate"] == 0).all()
    assert (table.loc[table["ecn"] & (table["discipline"] == "codel"), "mark_rate"] > 0).all()
    report = (quick.out / "REPORT.md").read_text()
    assert "**10Mbps, RTT 20 ms, buffer 4 BDP, 4 x newreno**" in report
