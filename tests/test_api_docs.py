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


def _flow(kind: str) -> dict:
    # TCP under the rfc profile: its controller, NewReno, has exactly the keys every window
    # controller shares (which Network.tcp names); each controller's own are its helper's.
    net = quench.Network(tcp_profile="rfc")
    net.hosts("a", "b")
    net.link("a", "b", rate="10Mbps", delay="1ms")
    getattr(net, kind)("a", "b", **({"rate": "1Mbps"} if kind == "udp" else {"bytes": "10KB"}))
    return quench.validate_scenario(net.to_dict(1.0))["flows"][0]


def _keys(table: dict) -> list[str]:
    """Every key of a resolved table, those of nested tables included."""
    out = []
    for k, v in table.items():
        out.append(k)
        if isinstance(v, dict):
            out += _keys(v)
    return out


@pytest.mark.parametrize("kind", ["tcp", "udp", "pcp", "assisted", "ndp", "roce"])
def test_every_transport_helper_names_its_keys(kind: str) -> None:
    """The engine's resolved defaults of each transport are the list of keys the helper's
    docstring must name, so a key added to the engine cannot go undocumented."""
    flow = _flow(kind)
    params = flow.get(kind, {k: v for k, v in flow.items() if k not in ("kind", "src", "dst", "name")})
    keys = _keys(params) + (_keys(flow["cc"]) if kind == "tcp" else [])
    doc = getattr(quench.Network, kind).__doc__ or ""
    missing = sorted({k for k in keys if k != "kind" and not re.search(rf"\b{k}\b", doc)})
    assert not missing, f"Network.{kind}'s docstring does not name {missing}"


def _controller_kinds() -> list[str]:
    """The controllers the engine's registry accepts, from its answer to an unknown one."""
    with pytest.raises(quench.ScenarioError) as e:
        _resolved_cc({"kind": "no-such-controller"})
    return re.findall(r"`(\w+)`", str(e.value).split("expected one of", 1)[1])


def _resolved_cc(cc: dict) -> dict:
    net = quench.Network()
    net.hosts("a", "b")
    net.link("a", "b", rate="10Mbps", delay="1ms")
    net.tcp("a", "b", cc=cc, rtt_sampling="every_ack", ecn=True)
    return quench.validate_scenario(net.to_dict(1.0))["flows"][0]["cc"]


def test_every_controller_has_a_helper_naming_its_keys() -> None:
    from quench import controllers

    kinds = _controller_kinds()
    assert "newreno" in kinds and "bbr" in kinds
    for kind in kinds:
        helper = getattr(controllers, kind, None)
        assert callable(helper) and kind in quench.__all__, f"no helper for controller {kind!r}"
        table = helper(alpha=100) if kind == "fast" else helper()
        doc = helper.__doc__ or ""
        missing = [k for k in _resolved_cc(table) if k != "kind" and not re.search(rf"\b{k}\b", doc)]
        assert not missing, f"{kind}'s docstring does not name {missing}"
        assert "default" in doc, kind
