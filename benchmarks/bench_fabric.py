"""Fabric speed: quench beside htsim on k-ary fat-trees. A benchmark, not a test: it prints a
table and checks nothing.

The traffic is htsim's own fat-tree benchmark, `htsim_tcp` (datacenter/main_tcp.cpp in
Broadcom/csg-htsim): a permutation of long TCP flows (each host sends to one other), one path
per flow chosen at random among the equal-cost ones (quench: ECMP's per-flow hash), 8-packet
drop-tail buffers (htsim: `RandomQueue` with `memFromPkt(8)`), 1500-byte packets. quench runs
the same fabric and traffic with NewReno, recording its summary tables only (htsim's driver
logs sampled figures only), as a fresh child process per point (this script with
--point) so that the peak resident set size is the point's own (ru_maxrss from os.wait4).

htsim is built from its public source by this script, into target/htsim (git-ignored, never
committed): `--htsim-src` is a checkout or a git URL (the default, cloned with --depth 1; the
machine needs the network then). main_tcp.cpp fixes its run length (4 s), NIC rate
(HOST_NIC, 100 Gb/s) and seed (the time of day) at compile time; the script edits those
three in its copy, and adds a count of each flow's data packets and path length, printed at
the end (`BENCH ...`). Every edit is anchored on a line of the source and fails loudly if that
line is not found.

What is compared, per point:
  wall       the run loop's wall time (quench: Simulation.run_until; htsim: the process's
             wall time less its set-up, measured by a run of zero length);
  data pkt-hops/s   data packets sent x links on their path, per second of wall time: the
             work both simulators do. htsim's main_tcp returns ACKs to the sender directly
             (its reverse route holds only the source), quench forwards every ACK hop by hop,
             so quench's all-packet hops (every link's departures) are printed beside;
  MiB/host   peak RSS over the number of hosts (quench: the child's peak less that of a child
             that only imported quench, and the whole peak in brackets).

    .venv/bin/python benchmarks/bench_fabric.py                       # k = 4, 8, 16
    .venv/bin/python benchmarks/bench_fabric.py --htsim-src ~/csg-htsim --ks 4,8
    .venv/bin/python benchmarks/bench_fabric.py --no-htsim            # quench's column only
    .venv/bin/python benchmarks/bench_fabric.py --quick               # smoke test
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HTSIM_URL = "https://github.com/Broadcom/csg-htsim"
WORK = ROOT / "target" / "htsim"
MIB = 1024 * 1024

RATE_MBPS = 10_000  # every link, both simulators (htsim's HOST_NIC is in Mb/s)
BUFFER_PACKETS = 8  # htsim main_tcp's memFromPkt(8)
PACKET_BYTES = 1500  # htsim's default data packet (network.h DEFAULTDATASIZE); quench's MTU
SEED = 1
# Simulated time per k: roughly 0.3-0.9 M data packets per point at 10 Gb/s per host.
DURATION_US = {4: 20_000, 8: 5_000, 16: 1_000}
QUICK_DURATION_US = {4: 2_000, 8: 500, 16: 100}
SETUP_US = 1  # the set-up run's length: htsim's packets need longer than this to cross a link


# ---------------------------------------------------------------------------------------
# Building htsim


def anchored_edit(text: str, anchor: str, replacement: str, path: str) -> str:
    """Replace the one occurrence of `anchor`; fail if the upstream source has moved on."""
    count = text.count(anchor)
    if count != 1:
        sys.exit(f"bench_fabric: {path}: expected one {anchor!r}, found {count}")
    return text.replace(anchor, replacement)


def edit_main_tcp(text: str, duration_us: int) -> str:
    path = "datacenter/main_tcp.cpp"
    text = anchored_edit(
        text,
        "eventlist.setEndtime(timeFromSec(4));",
        f"eventlist.setEndtime(timeFromUs((uint32_t){duration_us}));",
        path,
    )
    text = anchored_edit(text, "srand(time(NULL));", f"srand({SEED});", path)
    text = anchored_edit(
        text,
        "EventList eventlist;",
        "EventList eventlist;\nstatic std::vector<std::pair<TcpSrc*, size_t>> bench_flows;",
        path,
    )
    connect = "tcpSrc->connect(*routeout, *routein, *tcpSnk, timeFromMs(extrastarttime));"
    text = anchored_edit(text, connect, connect + "\n bench_flows.push_back({tcpSrc, routeout->size()});", path)
    count = (
        "while (eventlist.doNextEvent()) {\n"
        "    }\n"
        "    uint64_t bench_pkts = 0, bench_hops = 0;\n"
        "    for (auto& f : bench_flows) {\n"
        "        uint64_t n = f.first->_packets_sent / Packet::data_packet_size();\n"
        # A route is (queue, pipe) per link, then the sink.
        "        bench_pkts += n; bench_hops += n * ((f.second - 1) / 2);\n"
        "    }\n"
        '    cout << "BENCH data_packets " << bench_pkts << " data_packet_hops " << bench_hops << endl;\n'
    )
    return anchored_edit(text, "while (eventlist.doNextEvent()) {\n    }\n", count, path)


def fetch_source(src: str) -> Path:
    """A local checkout as it is, or a clone of a URL into the work folder."""
    if Path(src).expanduser().is_dir():
        return Path(src).expanduser()
    dest = WORK / "src"
    if not (dest / "sim").is_dir():
        shutil.rmtree(dest, ignore_errors=True)
        subprocess.run(["git", "clone", "--depth", "1", src, str(dest)], check=True)
    return dest


def build_htsim(src: str, duration_us: int) -> Path:
    """htsim_tcp for one run length (a compile-time constant there), built once and kept."""
    source = fetch_source(src)
    main_tcp = (source / "sim/datacenter/main_tcp.cpp").read_text()
    main_h = (source / "sim/datacenter/main.h").read_text()
    edited_main = edit_main_tcp(main_tcp, duration_us)
    edited_h = re.sub(r"#define HOST_NIC \d+", f"#define HOST_NIC {RATE_MBPS}", main_h, count=1)
    tag = hashlib.sha256((edited_main + edited_h).encode()).hexdigest()[:12]
    binary = WORK / f"htsim_tcp-{tag}"
    if binary.exists():
        return binary
    tree = WORK / "build"
    if not (tree / "sim/libhtsim.a").exists():
        shutil.rmtree(tree, ignore_errors=True)
        shutil.copytree(source / "sim", tree / "sim")
        subprocess.run(["make", "-j2", "libhtsim.a"], cwd=tree / "sim", check=True, stdout=subprocess.DEVNULL)
    (tree / "sim/datacenter/main_tcp.cpp").write_text(edited_main)
    (tree / "sim/datacenter/main.h").write_text(edited_h)
    datacenter = tree / "sim/datacenter"
    (datacenter / "main_tcp.o").unlink(missing_ok=True)
    subprocess.run(["make", "-j2", "htsim_tcp"], cwd=datacenter, check=True, stdout=subprocess.DEVNULL)
    shutil.copy2(datacenter / "htsim_tcp", binary)
    return binary


def timed_child(cmd: list[str], cwd: Path | None = None) -> tuple[str, float, float]:
    """Run `cmd`; its stdout, wall seconds and peak RSS in MiB (its own, from wait4)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = proc.stdout.read() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"bench_fabric: {' '.join(cmd)} failed:\n{out[-2000:]}")
    return out, wall, usage.ru_maxrss / 1024  # Linux: ru_maxrss in KiB


def htsim_point(src: str, k: int, duration_us: int) -> dict:
    hosts = k**3 // 4
    # Its log is a file it reads back at the end (not /dev/null); kept in the work folder.
    args = ["-nodes", str(hosts), "-conns", str(hosts), "-o", str(WORK / "logout.dat")]
    # htsim reads an end time of 0 as none, so the set-up run simulates SETUP_US.
    empty = build_htsim(src, SETUP_US)
    _, setup_wall, _ = timed_child([str(empty), *args], cwd=WORK)
    out, wall, rss = timed_child([str(build_htsim(src, duration_us)), *args], cwd=WORK)
    match = re.search(r"BENCH data_packets (\d+) data_packet_hops (\d+)", out)
    if not match:
        sys.exit(f"bench_fabric: htsim printed no BENCH line:\n{out[-2000:]}")
    run_wall = max(wall - setup_wall, 1e-9)
    return {
        "sim": "htsim",
        "k": k,
        "hosts": hosts,
        "wall_s": run_wall,
        "data_packets": int(match[1]),
        "data_packet_hops": int(match[2]),
        "all_packet_hops": None,
        "rss_mib": rss,
        "rss_net_mib": rss,
    }


# ---------------------------------------------------------------------------------------
# quench


def fat_tree_hops(k: int, src: int, dst: int) -> int:
    """Links on a shortest path between hosts `src` and `dst` of a k-ary fat-tree (k/2 hosts
    per edge switch, k²/4 per pod): 2 under one edge switch, 4 within a pod, 6 across."""
    per_edge, per_pod = k // 2, k * k // 4
    if src // per_edge == dst // per_edge:
        return 2
    return 4 if src // per_pod == dst // per_pod else 6


def quench_child(k: int, duration_us: int) -> None:
    """One point, in this child process: print the run's figures as JSON."""
    from quench import Network

    if duration_us == 0:  # the baseline: the interpreter, quench and pandas (results' tables)
        import pandas  # noqa: F401

        print(json.dumps({}))
        return
    net = Network(seed=SEED, name=f"fabric-k{k}")
    buffer = {"kind": "droptail", "limit": f"{BUFFER_PACKETS}p"}
    net.fat_tree(k, f"{RATE_MBPS}Mbps", "1us", qdisc=buffer, multipath="ecmp")
    net.workload(matrix="permutation", size="100GB", flow={"kind": "tcp", "cc": "newreno"}, name="perm")
    # htsim's driver logs only sampled sink and queue figures; quench's like for like is its
    # summary tables alone, not a row per queue change, drop, window change and RTT sample.
    net.record(queues=False, sojourn=False, drops=False, cwnd=False, rtt=False, segments=False, monitors=False)
    res = net.run(duration=f"{duration_us}us")
    flows = res.flows
    hops = [fat_tree_hops(k, int(s[1:]), int(d[1:])) for s, d in zip(flows["src"], flows["dst"], strict=True)]
    sent = flows["packets_sent"].to_numpy()
    print(
        json.dumps(
            {
                "wall_s": res.meta["wall_run_s"],
                "data_packets": int(sent.sum()),
                "data_packet_hops": int((sent * hops).sum()),
                "all_packet_hops": int(res.links["departed_packets"].sum()),
                "events": res.meta["events_executed"],
            }
        )
    )


def quench_point(k: int, duration_us: int) -> dict:
    def child(us: int) -> tuple[dict, float]:
        cmd = [sys.executable, __file__, "--point", str(k), str(us)]
        out, _, rss = timed_child(cmd)
        return json.loads(out.strip().splitlines()[-1]), rss

    _, baseline_rss = child(0)
    figures, rss = child(duration_us)
    return {"sim": "quench", "k": k, "hosts": k**3 // 4, **figures, "rss_mib": rss, "rss_net_mib": rss - baseline_rss}


# ---------------------------------------------------------------------------------------
# The table


def print_table(rows: list[dict]) -> None:
    head = f"{'k':>3} {'hosts':>6} {'sim':>7} {'sim time':>9} {'wall s':>8} {'data pkts':>10}"
    head += f" {'data pkt-hops/s':>16} {'all pkt-hops/s':>15} {'MiB/host':>16}"
    print(head)
    for r in rows:
        all_rate = f"{r['all_packet_hops'] / r['wall_s'] / 1e6:.2f} M" if r["all_packet_hops"] else "-"
        memory = f"{r['rss_net_mib'] / r['hosts']:.3f} ({r['rss_mib'] / r['hosts']:.3f})"
        print(
            f"{r['k']:>3} {r['hosts']:>6} {r['sim']:>7} {r['duration_us'] / 1e3:>7.1f}ms {r['wall_s']:>8.2f}"
            f" {r['data_packets']:>10} {r['data_packet_hops'] / r['wall_s'] / 1e6:>14.2f} M {all_rate:>15}"
            f" {memory:>16}"
        )
    by_k: dict[int, dict[str, dict]] = {}
    for r in rows:
        by_k.setdefault(r["k"], {})[r["sim"]] = r
    for k, pair in sorted(by_k.items()):
        if "htsim" in pair and "quench" in pair:
            q, h = pair["quench"], pair["htsim"]
            speed = (q["data_packet_hops"] / q["wall_s"]) / (h["data_packet_hops"] / h["wall_s"])
            memory = q["rss_net_mib"] / h["rss_mib"]
            print(f"k={k}: quench/htsim data packet-hops per second {speed:.2f}x, memory per host {memory:.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ks", default="4,8,16", help="fat-tree k values, comma-separated")
    ap.add_argument("--htsim-src", default=HTSIM_URL, help="htsim checkout or git URL")
    ap.add_argument("--no-htsim", action="store_true", help="quench's column only")
    ap.add_argument("--quick", action="store_true", help="short runs (a smoke test)")
    ap.add_argument("--json", help="write the rows to this file")
    ap.add_argument("--point", nargs=2, type=int, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.point:
        quench_child(*a.point)
        return
    durations = QUICK_DURATION_US if a.quick else DURATION_US
    ks = [int(k) for k in a.ks.split(",")]
    if any(k not in durations for k in ks):
        sys.exit(f"bench_fabric: --ks: each k one of {sorted(durations)}")
    WORK.mkdir(parents=True, exist_ok=True)
    rows = []
    for k in ks:
        us = durations[k]
        rows.append({**quench_point(k, us), "duration_us": us})
        if not a.no_htsim:
            rows.append({**htsim_point(a.htsim_src, k, us), "duration_us": us})
        print(f"k={k} done", file=sys.stderr)
    print(f"fat-tree permutation, NewReno-like TCP, {RATE_MBPS / 1e3:g} Gb/s links, {BUFFER_PACKETS}-packet buffers")
    print_table(rows)
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    main()
