"""The studies of the seeds' open questions (docs/reproductions.md, "Studies") in quick mode:
each runs alone, writes a summary whose statistics, criteria and conclusion are computed from
the runs it records, and matches its golden file (the engine is bit-deterministic, so a
changed number is a changed result; refresh with QUENCH_UPDATE_GOLDEN=1 as in
tests/test_reproduce.py, which compares the same files after `reproduce all --quick`)."""

import contextlib
import gzip
import io
import json
import math

import numpy as np
import pytest
from test_reproduce import GOLDEN, UPDATE_GOLDEN, differences, without_ignored

from quench.cli import main
from quench.experiments import EXPERIMENTS
from quench.stats import confidence_interval

STUDIES = ["mills88-tuning", "pcp06-tcp", "jacobson88-mss", "feng99-fairness", "wei05-pacing"]


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    """Each study's quick mode, run once per module: name -> (name, out, summary, printed)."""
    done = {}

    def run(name):
        if name not in done:
            out = tmp_path_factory.mktemp(name)
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                assert main(["reproduce", name, "--quick", "--out", str(out)]) == 0
            done[name] = name, out, json.loads((out / "summary.json").read_text()), printed.getvalue()
        return done[name]

    return run


@pytest.fixture(params=STUDIES)
def study(request, quick_run):
    return quick_run(request.param)


def test_studies_are_registered():
    assert set(STUDIES) <= set(EXPERIMENTS)


def test_summary_structure(study):
    name, out, s, printed = study
    assert s["experiment"] == name and s["quick"] is True and s["seed"] == 1
    assert isinstance(s["conclusion"], str) and s["conclusion"] and isinstance(s["scope"], str)
    assert "inconclusive" in s["conclusion"] or "higher" in s["conclusion"] or "agrees" in s["conclusion"]
    assert all(isinstance(c["passed"], bool) and isinstance(c["ours"], float) for c in s["criteria"])
    assert s["passed"], [c for c in s["criteria"] if not c["passed"]]
    for table in s["result_tables"]:
        assert table["rows"] and all(len(r) == len(table["columns"]) for r in table["rows"])
        assert table["title"] in printed
    for plot in s["plots"]:
        assert (out / plot).stat().st_size > 0
    runs = s["runs"] if isinstance(s["runs"], list) else [r for rs in s["runs"].values() for r in rs]
    journal = json.loads(gzip.decompress((out / s["scenarios"]["file"]).read_bytes()))
    assert len(journal) == s["scenarios"]["runs"] == len(runs)


def _ci(values):
    return confidence_interval(np.asarray(values, dtype=float))


def test_feng99_fairness_statistics_come_from_its_runs(quick_run):
    _, _, s, _ = quick_run("feng99-fairness")
    runs = s["runs"]["fairness"]
    for key, stats in s["statistics"]["fairness"].items():
        policy, mix = key.split("/")
        jain = [r["jain"] for r in runs if r["policy"] == policy and r["ecn"] == mix]
        assert len(jain) == s["parameters"]["seeds"].__len__()
        mean, half = _ci(jain)
        assert stats["jain"]["mean"] == mean and stats["jain"]["half"] == half
    # A paired verdict follows from its interval.
    for c in s["statistics"]["jain_comparisons"]:
        a = [r[c["metric"]] for r in runs if r["policy"] == c["a"] and r["ecn"] == c["mix"]]
        b = [r[c["metric"]] for r in runs if r["policy"] == c["b"] and r["ecn"] == c["mix"]]
        mean, half = _ci(np.subtract(a, b))
        assert math.isclose(c["mean"], mean) and math.isclose(c["half"], half)
        assert c["verdict"] == _verdict(np.subtract(a, b))
    # The Mathis criterion is recomputed from the statistics.
    red = s["statistics"]["fairness"]["red/all-ecn"]
    gap = max(abs(red["class_shares"][k]["mean"] - red["mathis_shares"][k]["mean"]) for k in red["class_shares"])
    (crit,) = [c for c in s["criteria"] if "Mathis" in c["name"]]
    assert crit["ours"] == gap


def test_jacobson88_mss_statistics_come_from_its_runs(quick_run):
    _, _, s, _ = quick_run("jacobson88-mss")
    from quench.experiments.jacobson88_mss import best_k, efficiency, mss_of

    mtu = s["parameters"]["mtu"]
    # The closed form by hand at the email's numbers: MSS 512 is 3 fragments of a 250-byte MTU.
    assert efficiency(512, 250, 0.0) == pytest.approx(512 / 3)
    assert efficiency(210, 250, 0.1, acks=1.0) == pytest.approx(210 * 0.9 / 1.9)
    assert mss_of(2, 250) == 440 and best_k(250, 0.1) == 1
    for pt in s["statistics"]["points"]:
        eff = [
            r["efficiency"]
            for r in s["runs"]
            if r["path"] == pt["path"] and r["loss"] == pt["loss"] and r["k"] == pt["k"]
        ]
        assert pt["efficiency"]["mean"] == _ci(eff)[0]
        acks = 1.0 if pt["path"] == "echo" else 0.0
        assert pt["model"] == efficiency(mss_of(pt["k"], mtu), mtu, pt["loss"], acks)
    lossless = [abs(pt["relative_error"]) for pt in s["statistics"]["points"] if pt["loss"] == 0]
    assert s["criteria"][0]["ours"] == max(lossless)


def test_wei05_pacing_statistics_come_from_its_runs(quick_run):
    _, _, s, _ = quick_run("wei05-pacing")
    runs = s["runs"]["shares"]
    for cell in s["statistics"]["shares"]:

        def of(control, cell=cell):
            return [
                r["share_a"]
                for r in runs
                if (r["cc"], r["control"], r["other"], r["gateway"])
                == (cell["cc"], control, cell["other"], cell["gateway"])
            ]

        assert cell["share_a"]["mean"] == _ci(of(cell["control"]))[0]
        if cell["control"] != "none":
            mean, half = _ci(np.subtract(of(cell["control"]), of("none")))
            d = cell["share_vs_unpaced"]
            assert math.isclose(d["mean"], mean) and math.isclose(d["half"], half)
            assert d["verdict"] == _verdict(np.subtract(of(cell["control"]), of("none")))
    # Host loss is the senders' NIC queues' drops: none can exceed what the flows sent.
    for r in s["runs"]["txqueuelen"]:
        assert r["host_loss"] >= 0 and r["router_loss"] >= 0


def _verdict(diffs):
    mean, half = _ci(diffs)
    if all(d == 0 for d in diffs):
        return "identical"
    return "lower" if mean + half < 0 else "higher" if mean - half > 0 else "inconclusive"


def test_pcp06_tcp_statistics_come_from_its_runs(quick_run):
    _, _, s, _ = quick_run("pcp06-tcp")
    runs = s["runs"]
    for cell in s["statistics"]["cells"]:

        def of(qdisc, tft, cell=cell):
            return [r["pcp_share"] for r in runs if (r["qdisc"], r["tft"], r["load"]) == (qdisc, tft, cell["load"])]

        share = of(cell["qdisc"], cell["tft"])
        assert cell["pcp_share"]["mean"] == _ci(share)[0]
        assert cell["share_vs_fair"]["verdict"] == _verdict(np.subtract(share, 0.5))
        if cell["qdisc"] == "fq":
            assert cell["share_fq_minus_fifo"]["verdict"] == _verdict(np.subtract(share, of("fifo", cell["tft"])))


def test_mills88_tuning_statistics_come_from_its_runs(quick_run):
    _, _, s, _ = quick_run("mills88-tuning")
    from quench.experiments.mills88_tuning import MIN_JAIN, MIN_UTILIZATION

    runs = s["runs"]
    cells = s["statistics"]["cells"]
    for c in cells:
        delay = [
            r["mean_delay_s"]
            for r in runs
            if (r["flows"], r["reaction"], r["setting"]) == (c["flows"], c["reaction"], c["setting"])
        ]
        assert c["mean_delay_s"]["mean"] == _ci(delay)[0]
    # The best setting is the admissible cell of least mean delay, recomputed here.
    for n, best in s["statistics"]["best"].items():
        ok = [
            c
            for c in cells
            if c["flows"] == int(n) and c["utilization"]["mean"] >= MIN_UTILIZATION and c["jain"]["mean"] >= MIN_JAIN
        ]
        least = min(ok, key=lambda c: c["mean_delay_s"]["mean"])
        assert (best["reaction"], best["setting"]) == (least["reaction"], least["setting"])


def test_matches_its_golden_file(study):
    name, _, s, _ = study
    now = without_ignored(s)
    path = GOLDEN / f"{name}.summary.json"
    if UPDATE_GOLDEN:
        path.write_text(json.dumps(now, indent=2) + "\n")
        pytest.skip(f"refreshed {path}: review its diff before committing")
    diff = differences(json.loads(path.read_text()), now)
    assert not diff, "\n".join(diff[:40])


def test_a_seed_range_includes_both_ends():
    from quench.experiments.study import seed_range

    assert seed_range("1-3") == [1, 2, 3] and seed_range("7-7") == [7]
    for bad in ("3", "3-1", "a-b", "-2"):
        with pytest.raises(ValueError, match="--seeds"):
            seed_range(bad)
