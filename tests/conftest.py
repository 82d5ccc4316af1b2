import pytest

import quench


def small_net(**record) -> quench.Network:
    """a -> r -> b with a 1 Mb/s, 10 ms bottleneck and a 20-packet drop-tail queue."""
    net = quench.Network(seed=7)
    net.hosts("a", "b").router("r")
    net.link("a", "r", rate="10Mbps", delay="1ms")
    net.link("r", "b", rate="1Mbps", delay="10ms", qdisc=quench.droptail("20p"))
    net.record(**record)
    return net


@pytest.fixture
def net() -> quench.Network:
    return small_net()
