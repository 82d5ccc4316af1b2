"""Multipath TCP from Python (docs/mechanisms.md#multipath-tcp-and-lia): `Network.mptcp` carries a
transfer over several subflows to completion at the connection level, the flows table showing
one row for the connection; bad keys give one line naming the key."""

import pytest

import quench


def _path() -> quench.Network:
    net = quench.Network()
    net.hosts("a", "b")
    net.routers("r")
    net.link("a", "r", rate="10Mbps", delay="1ms")
    net.link("r", "b", rate="10Mbps", delay="1ms")
    return net


def test_a_transfer_completes_over_four_subflows() -> None:
    net = _path()
    net.mptcp("a", "b", bytes="1MB", subflows=4, profile="rfc", sack=True)
    flows = net.run("2s").flows
    assert list(flows["kind"]) == ["mptcp"] and list(flows["cc"]) == ["lia"]
    assert int(flows["bytes_delivered"][0]) == 1_000_000
    # 1 MB in 1460-byte segments of 1500 bytes at 10 Mb/s: 0.822 s at the line rate.
    assert 0.822 < float(flows["completion_s"][0]) < 0.87


def test_reinjection_is_a_keyword_and_off_reaches_the_engine() -> None:
    net = _path()
    net.mptcp("a", "b", bytes="10KB", subflows=2, reinject=False)
    assert net.to_dict("1s")["flows"][0]["reinject"] is False
    assert "tcp" not in net.to_dict("1s")["flows"][0], "reinject is the connection's, not its subflows' TCP key"
    assert int(net.run("1s").flows["bytes_delivered"][0]) == 10_000


@pytest.mark.parametrize(
    ("kwargs", "key"),
    [({"subflows": 0}, "subflows"), ({"subflows": 33}, "subflows"), ({"coupling": "balia"}, "coupling")],
)
def test_bad_input_names_the_key(kwargs: dict, key: str) -> None:
    net = _path()
    net.mptcp("a", "b", bytes="10KB", **kwargs)
    with pytest.raises(quench.ScenarioError) as e:
        net.run("1s")
    message = str(e.value)
    assert key in message and "\n" not in message.strip(), message
