"""Bit-identity harness: run every quick reproduction, every shipped scenario and the demo, and
hash what they write, so that a refactor or a speed-up can be shown to change no output.

    python benchmarks/bit_identity.py record --out /tmp/before   # on the old code
    python benchmarks/bit_identity.py record --out /tmp/after    # on the new code
    python benchmarks/bit_identity.py compare /tmp/before /tmp/after

`record` writes MANIFEST.json (path -> SHA-256 of every file) beside the outputs; `compare`
prints each file that differs, is missing or is new, and exits 1 if any does. Files that hold
the wall-clock time (`meta.json`'s and the summaries' timing fields) or the paths of the output
folder and of the checkout are compared with those removed, since they differ between runs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUENCH = [sys.executable, "-m", "quench.cli"]
# Scenarios that are sweeps, not runs, or that need ns-3: not part of the harness.
SKIPPED_SCENARIOS = {"sweep_example.toml"}
# Keys whose values are the wall clock, the host or the software's own version string.
VOLATILE_KEYS = {"wall_run_s", "wall_s", "events_per_second"}


def _run(args: list[str]) -> None:
    print("+", " ".join(args), file=sys.stderr, flush=True)
    subprocess.run(args, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)


def record(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    _run(QUENCH + ["reproduce", "all", "--quick", "--out", str(out / "reproduce")])
    for scenario in sorted((ROOT / "scenarios").glob("*.toml")):
        if scenario.name in SKIPPED_SCENARIOS:
            continue
        target = out / "scenarios" / scenario.stem
        _run(QUENCH + ["run", str(scenario), "--out", str(target), "--quiet", "--force"])
    _run(QUENCH + ["demo", "--quick", "--out", str(out / "demo"), "--force"])
    manifest = {
        str(path.relative_to(out)): _digest(path, out)
        for path in sorted(out.rglob("*"))
        if path.is_file() and path.name != "MANIFEST.json"
    }
    (out / "MANIFEST.json").write_text(json.dumps(manifest, indent=1, sort_keys=True))
    print(f"{len(manifest)} files recorded in {out / 'MANIFEST.json'}")


def _digest(path: Path, root: Path) -> str:
    # The report names the folder each experiment wrote into and links into the checkout's docs
    # by a relative path: the same output from another checkout or under another root.
    checkout = os.path.relpath(ROOT, path.parent).encode()
    data = path.read_bytes().replace(str(root).encode(), b"OUT").replace(checkout + b"/", b"CHECKOUT/")
    if path.suffix == ".json":
        try:
            data = json.dumps(_without_volatile(json.loads(data)), sort_keys=True).encode()
        except ValueError:
            pass
    return hashlib.sha256(data).hexdigest()


def _without_volatile(value: object) -> object:
    if isinstance(value, dict):
        return {k: _without_volatile(v) for k, v in value.items() if k not in VOLATILE_KEYS}
    if isinstance(value, list):
        return [_without_volatile(v) for v in value]
    return value


def compare(before: Path, after: Path) -> int:
    old = json.loads((before / "MANIFEST.json").read_text())
    new = json.loads((after / "MANIFEST.json").read_text())
    differing = sorted(p for p in old.keys() & new.keys() if old[p] != new[p])
    missing = sorted(old.keys() - new.keys())
    added = sorted(new.keys() - old.keys())
    for label, paths in (("differs", differing), ("missing", missing), ("new", added)):
        for path in paths:
            print(f"{label}: {path}")
    print(
        f"{len(old)} files before, {len(new)} after: {len(differing)} differ, {len(missing)} missing, {len(added)} new"
    )
    return 1 if differing or missing or added else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    record_cmd = commands.add_parser("record", help="run everything and write MANIFEST.json")
    record_cmd.add_argument("--out", type=Path, required=True)
    compare_cmd = commands.add_parser("compare", help="compare two recorded manifests")
    compare_cmd.add_argument("before", type=Path)
    compare_cmd.add_argument("after", type=Path)
    args = parser.parse_args()
    os.environ.setdefault("QUENCH_PROGRESS", "0")
    if args.command == "record":
        record(args.out)
        return 0
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
