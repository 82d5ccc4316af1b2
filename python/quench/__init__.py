"""quench: a fast, faithful packet-level simulator of congestion control and queue management.

Build a network in a few lines, run it, and get pandas DataFrames back::

    import quench
    net = quench.Network(seed=1)
    net.hosts("a", "b").router("r")
    net.link("a", "r", rate="100Mbps", delay="1ms")
    net.link("r", "b", rate="10Mbps", delay="20ms", qdisc=quench.droptail("50p"))
    net.tcp("a", "b", cc="newreno")
    res = net.run("30s")
    res.links, res.flows, res.queue, res.cwnd
"""

from quench._core import InternalError, ScenarioError, __version__
from quench.controllers import (
    bbr,
    bbr3,
    copa,
    cubic,
    dcqcn,
    dctcp,
    fast,
    hpcc,
    ledbat,
    lia,
    newreno,
    olia,
    prague,
    reno,
    swift,
    tahoe,
    vegas,
    vivace,
)
from quench.network import (
    Network,
    choke,
    classes,
    codel,
    droptail,
    drr,
    dualpi2,
    dummynet,
    fq,
    fq_codel,
    fq_pie,
    fuzzball,
    pie,
    red,
    sfq,
    step,
    trim,
)
from quench.results import Results
from quench.scenario import Simulation, load_scenario, run_scenario, validate_scenario
from quench.units import parse_bytes, parse_duration, parse_rate

__all__ = [
    "InternalError",
    "Network",
    "Results",
    "ScenarioError",
    "Simulation",
    "__version__",
    "bbr",
    "bbr3",
    "choke",
    "classes",
    "codel",
    "copa",
    "cubic",
    "dcqcn",
    "dctcp",
    "droptail",
    "drr",
    "dualpi2",
    "dummynet",
    "fast",
    "hpcc",
    "fq",
    "fq_codel",
    "fq_pie",
    "fuzzball",
    "ledbat",
    "lia",
    "load_scenario",
    "newreno",
    "olia",
    "parse_bytes",
    "parse_duration",
    "parse_rate",
    "pie",
    "prague",
    "red",
    "reno",
    "run_scenario",
    "sfq",
    "step",
    "trim",
    "swift",
    "tahoe",
    "validate_scenario",
    "vegas",
    "vivace",
]
