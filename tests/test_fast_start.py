"""A fast start: `import quench` and a `quench run` that saves Parquet load neither pandas nor
numpy nor matplotlib nor pyarrow (pandas alone took 0.28-0.40 s of a 0.5 s process, pyarrow with
numpy 0.10 s of a 0.17 s one); the tables still come back as the same DataFrames when used."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

HEAVY = ("pandas", "numpy", "matplotlib", "pyarrow")


def _loaded_after(code: str) -> list[str]:
    """The heavy modules loaded by a fresh interpreter after running `code`."""
    report = f"import json, sys\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))\n"
    probe = textwrap.dedent(code) + "\n" + report
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_quench_loads_no_heavy_module() -> None:
    assert _loaded_after("import quench, quench.cli, quench.scenarios") == []


def test_a_run_and_its_summary_need_no_pandas() -> None:
    code = """
    from quench.cli import summary_table
    from quench.scenarios import dumbbell
    res = dumbbell(2).run("1s")
    print(summary_table(res))
    """
    assert _loaded_after(code) == []


def test_tables_are_dataframes_when_used() -> None:
    import pandas as pd

    from quench.scenarios import dumbbell

    res = dumbbell(2).run("1s")
    assert isinstance(res.flows, pd.DataFrame) and len(res.flows) == 2
    assert res.tables.raw("flows") is None  # made a DataFrame once, then kept
    assert res.queue["link_name"].notna().all() and res.cwnd["flow_name"].isin(["flow0", "flow1"]).all()


def test_summary_without_pandas_matches_the_dataframes() -> None:
    from quench.cli import summary_table
    from quench.scenarios import dumbbell

    res = dumbbell(3).run("2s")
    text = summary_table(res)
    b = res.link(res.bottleneck())
    assert f"bottleneck {b['name']}: utilization {b['utilization']:.3f}, drops {b['dropped_packets']}," in text
    assert f"Jain's fairness index of goodput: {res.jain_index():.4f};" in text


def test_quench_run_saving_parquet_needs_no_pandas(tmp_path) -> None:
    """The engine's writer writes the Parquet files; pandas, numpy, pyarrow and matplotlib stay
    out, and the files are those pandas writes, read back (tests/test_schemas.py)."""
    scenario = Path(__file__).resolve().parents[1] / "scenarios" / "dumbbell.toml"
    out = tmp_path / "run"
    code = f"""
    from quench.cli import main
    assert main(["run", {str(scenario)!r}, "--out", {str(out)!r}, "--duration", "2s", "--no-plots", "--quiet"]) == 0
    """
    assert _loaded_after(code) == []
    assert (out / "drops.parquet").exists() and (out / "r1-r2.pcap").exists()
