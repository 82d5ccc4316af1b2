"""Round trips of scenarios through TOML (quench.scenario.dump, Network.to_toml, `quench
validate --toml`) and of a run's scenario.json: what is written reads back to the same engine
input. Property tests (Hypothesis) over arbitrary scenario-shaped data and over the mutated
scenarios of test_fuzz_scenario that the engine accepts."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_fuzz_scenario import mutated

import quench
from quench.scenario import dump, load_scenario, run_scenario, validate_scenario
from quench.scenarios import dumbbell

SCENARIOS = sorted(p for p in (Path(__file__).parent.parent / "scenarios").glob("*.toml") if "sweep" not in p.name)

# Scenario-shaped data: tables of scalars, lists and tables, without None inside lists (TOML
# has no null; a None value of a key is left out, and the engine reads an absent key as None).
keys = st.text(max_size=8)
scalars = st.one_of(
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
)
data = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(keys, inner, max_size=3)),
    max_leaves=10,
)
documents = st.dictionaries(keys, st.one_of(st.none(), data), max_size=5)


def without_none(d: dict[str, Any]) -> dict[str, Any]:
    return {k: without_none(v) if isinstance(v, dict) else v for k, v in d.items() if v is not None}


def same(a: Any, b: Any) -> bool:
    """Equal, with NaN equal to NaN (TOML's nan reads back as a NaN)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


@settings(max_examples=300, deadline=None)
@given(documents)
def test_any_scenario_shaped_data_reads_back(doc):
    assert same(tomllib.loads(dump(doc)), without_none(doc))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_an_accepted_scenario_reads_back_to_the_same_engine_input(spec):
    try:
        resolved = validate_scenario(spec)
    except quench.ScenarioError:
        return
    assert validate_scenario(tomllib.loads(dump(spec))) == resolved
    assert validate_scenario(tomllib.loads(dump(resolved))) == resolved


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.name)
def test_scenario_files_read_back(path):
    spec = load_scenario(path)
    resolved = validate_scenario(spec)
    assert tomllib.loads(dump(spec)) == without_none(spec)
    assert validate_scenario(tomllib.loads(dump(resolved))) == resolved


def test_a_network_and_a_runs_scenario_json_load_back(tmp_path):
    net = dumbbell(2, rate="10Mbps", rtt="40ms").record(snapshots=["1s"])
    (tmp_path / "net.toml").write_text(net.to_toml("2s"))
    first = run_scenario(load_scenario(tmp_path / "net.toml"), progress=False)
    first.save(tmp_path / "out", plots=False)
    again = run_scenario(load_scenario(tmp_path / "out" / "scenario.json"), progress=False)
    assert again.scenario == first.scenario == validate_scenario(net.to_dict("2s"))
    assert again.links.equals(first.links) and again.flows.equals(first.flows)


def test_quench_validate_writes_toml_that_validates_the_same(tmp_path):
    path = SCENARIOS[0]
    cli = [sys.executable, "-m", "quench.cli", "validate"]
    out = subprocess.run([*cli, "--toml", str(path)], capture_output=True, text=True, check=True).stdout
    (tmp_path / "again.toml").write_text(out)
    assert validate_scenario(load_scenario(tmp_path / "again.toml")) == validate_scenario(load_scenario(path))
    as_json = subprocess.run([*cli, str(path)], capture_output=True, text=True, check=True).stdout
    assert json.loads(as_json) == validate_scenario(load_scenario(path))


def test_a_bad_json_scenario_is_one_line_naming_the_file(tmp_path):
    bad = tmp_path / "scenario.json"
    bad.write_text('{"duration": "1s",\n  "hosts": [}')
    with pytest.raises(quench.ScenarioError, match=r"scenario.json: line 2, column 13: "):
        load_scenario(bad)
    bad.write_text("[1, 2]")
    with pytest.raises(quench.ScenarioError, match=r"a scenario is a JSON object, not list"):
        load_scenario(bad)
