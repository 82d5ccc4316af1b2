"""docs/tables.md documents every results table's columns, in order, with the dtypes that
quench.schema derives from the engine; and the pcap addressing it states is what a capture
holds (10.0.0.(node+1), sender port 10000 + flow id, receiver port 5001)."""

from __future__ import annotations

import re
import struct
from pathlib import Path

from test_schemas import EVERYTHING, _raw_run

import quench
from quench.schema import raw_schema

DOC = Path(__file__).resolve().parents[1] / "docs" / "tables.md"
SECTION = re.compile(r"^## `(\w+)`$")
ROW = re.compile(r"^\| `(\w+)` \| (\w+) \|")
PCAP_HEADER = 24  # libpcap file header
RECORD_HEADER = 16  # per-packet record header
IPV4_HEADER = 20  # quench writes no IP options


def documented() -> dict[str, list[tuple[str, str]]]:
    """Each `## \\`table\\`` section's (column, dtype) rows."""
    tables: dict[str, list[tuple[str, str]]] = {}
    current = None
    for line in DOC.read_text().splitlines():
        if m := SECTION.match(line):
            current = tables.setdefault(m[1], [])
        elif line.startswith("## "):
            current = None
        elif current is not None and (m := ROW.match(line)):
            current.append((m[1], m[2]))
    return tables


def test_every_table_and_column_is_documented() -> None:
    raw = _raw_run(EVERYTHING, busy=True)
    schemas = {name: raw_schema(name, cols) for name, cols in raw["tables"].items()}
    docs = documented()
    assert list(docs) == list(schemas)
    for name, schema in schemas.items():
        assert docs[name] == schema, name


def test_pcap_addressing_is_as_documented(tmp_path: Path) -> None:
    net = quench.Network(seed=1)
    net.hosts("x", "a", "b").routers("r")  # `a` is node 1: its address is 10.0.0.2
    net.link("a", "r", rate="10Mbps", delay="1ms")
    net.link("r", "b", rate="10Mbps", delay="1ms")
    net.link("x", "r", rate="10Mbps", delay="1ms")
    net.tcp("x", "b", bytes="3KB", name="other")
    net.tcp("a", "b", bytes="3KB", name="f1")
    net.record(pcap=["a->r"])
    res = net.run("1s")
    nodes = dict(zip(res.nodes["name"], res.nodes["node"]))
    flow = int(res.flows.loc[res.flows["name"] == "f1", "flow"].iloc[0])
    data = res.pcaps["a->r"]
    ip = data[PCAP_HEADER + RECORD_HEADER :]
    src, dst = ip[12:16], ip[16:20]
    sport, dport = struct.unpack(">HH", ip[IPV4_HEADER : IPV4_HEADER + 4])
    assert tuple(src) == (10, 0, 0, nodes["a"] + 1) and tuple(dst) == (10, 0, 0, nodes["b"] + 1)
    assert (sport, dport) == (10000 + flow, 5001)
