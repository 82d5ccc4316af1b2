"""Property test of scenario validation (Hypothesis): a valid scenario with one value replaced,
one key added or one key removed, at any depth, is either accepted or refused with a
`quench.ScenarioError` whose `.path` names a key and whose message is one line; nothing else
may escape (no other exception, no abort, no hang). CI runs a bounded number of examples;
`QUENCH_FUZZ_EXAMPLES=100000 pytest tests/test_fuzz_scenario.py` runs a long campaign."""

from __future__ import annotations

import copy
import os
import time
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import quench
from quench.scenario import validate_scenario

EXAMPLES = int(os.environ.get("QUENCH_FUZZ_EXAMPLES", "300"))
# A validation that takes longer than this counts as a hang: the largest scenario here
# validates in milliseconds, and validation must cost O(1) in a workload's length.
SLOW_S = 2.0

BASE: dict[str, Any] = {
    "seed": 1,
    "duration": "2s",
    "hosts": ["s0", "s1", "d0"],
    "routers": ["r"],
    "links": [
        {"from": "s0", "to": "r", "rate": "100Mbps", "delay": "1ms"},
        {"from": "s1", "to": "r", "rate": "100Mbps", "delay": "1ms", "loss": 0.01},
        {
            "from": "r",
            "to": "d0",
            "rate": "10Mbps",
            "delay": "20ms",
            "qdisc": {"kind": "red", "min_th": 5, "max_th": 15, "max_p": 0.1, "limit": "50p"},
        },
    ],
    "flows": [
        {"kind": "tcp", "src": "s0", "dst": "d0", "cc": "newreno", "tcp": {"sack": True, "mss": 1460}},
        {"kind": "udp", "src": "s1", "dst": "d0", "rate": "1Mbps", "pattern": "poisson", "size": 1000},
    ],
    "workloads": [
        {"pairs": [["s0", "d0"]], "arrival_rate": 5.0, "size": "50KB", "flow": {"kind": "tcp", "cc": "reno"}}
    ],
    "record": {"cwnd": True, "pcap": ["r->d0"]},
}

UNIT_WORDS = ["bps", "Kbps", "Mbps", "Gbps", "Tbps", "ns", "us", "ms", "s", "B", "KB", "MiB", "p", "", "x"]
numbers = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
)
quantities = st.builds(
    lambda n, u: f"{n}{u}",
    st.one_of(st.integers(-(2**66), 2**66), st.floats(allow_nan=True, allow_infinity=True)),
    st.sampled_from(UNIT_WORDS),
)
scalars = st.one_of(st.none(), st.booleans(), numbers, st.text(max_size=20), quantities)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12,
)


def _containers(node: Any, path: tuple = ()) -> list[tuple]:
    """Every path to a dict or list inside `node` (the places a mutation can act)."""
    found = [path]
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else []
    for k, v in items:
        if isinstance(v, dict | list):
            found += _containers(v, (*path, k))
    return found


def _at(node: Any, path: tuple) -> Any:
    for k in path:
        node = node[k]
    return node


@st.composite
def mutated(draw: st.DrawFn) -> dict[str, Any]:
    spec = copy.deepcopy(BASE)
    target = _at(spec, draw(st.sampled_from(_containers(spec))))
    keys = list(target) if isinstance(target, dict) else list(range(len(target)))
    action = draw(st.sampled_from(["replace", "add", "remove"] if keys else ["add"]))
    if action == "replace":
        target[draw(st.sampled_from(keys))] = draw(values)
    elif action == "remove":
        del target[draw(st.sampled_from(keys))]
    elif isinstance(target, dict):
        target[draw(st.text(min_size=1, max_size=10))] = draw(values)
    else:
        target.append(draw(values))
    return spec


def test_the_base_scenario_is_valid():
    assert validate_scenario(copy.deepcopy(BASE))["duration"]


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_a_mutated_scenario_is_accepted_or_refused_naming_its_key(spec):
    started = time.perf_counter()
    try:
        validate_scenario(spec)
    except quench.ScenarioError as e:
        assert isinstance(e.path, str) and isinstance(e.reason, str) and e.reason
        assert "\n" not in str(e), str(e)
        assert "untagged enum" not in str(e) and "at line 1 column" not in str(e), str(e)
    assert time.perf_counter() - started < SLOW_S
