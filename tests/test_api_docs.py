"""The API reference builds with pdoc without a warning (`make docs`, tests/build_api_docs.py),
and every queue discipline the engine knows has a helper in quench.network whose docstring
names each of the engine's keys for it (with its unit and default beside it)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from build_api_docs import build

import quench
from quench import network


def test_api_reference_builds_without_warnings(tmp_path: Path) -> None:
    assert build(tmp_path) == []
    assert (tmp_path / "index.html").exists() and (tmp_path / "quench" / "network.html").exists()


def _engine_kinds() -> list[str]:
    """The qdisc kinds the engine's registry accepts, from its answer to an unknown one."""
    with pytest.raises(quench.ScenarioError) as e:
        _resolved({"kind": "no-such-qdisc"})
    return re.findall(r"`(\w+)`", str(e.value).split("expected one of", 1)[1])


def _resolved(qdisc: dict) -> dict:
    net = quench.Network()
    net.hosts("a", "b")
    net.link("a", "b", rate="10Mbps", delay="1ms", qdisc=qdisc)
    return quench.validate_scenario(net.to_dict(1.0))["links"][0]["qdisc"]


def test_every_qdisc_has_a_helper_naming_its_keys() -> None:
    kinds = _engine_kinds()
    assert "droptail" in kinds and "fuzzball" in kinds
    for kind in kinds:
        helper = getattr(network, kind, None)
        assert callable(helper), f"quench.network has no helper for qdisc {kind!r}"
        assert helper.__name__ in quench.__all__, kind
        doc = helper.__doc__ or ""
        keys = [k for k in _resolved(helper()) if k != "kind"]
        missing = [k for k in keys if not re.search(rf"\b{k}\b", doc)]
        assert not missing, f"{kind}'s docstring does not name {missing}"
        assert "default" in doc, kind
