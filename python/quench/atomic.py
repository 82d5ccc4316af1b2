"""Atomic file writes: a result file is either whole or absent. A write goes to a hidden
temporary beside its target ('.<name>.tmp<pid>', which a killed run may leave behind) and is
renamed over it, an atomic step on one file system. Output folders (a run's files) are
replaced whole the same way, and every file name is checked to stay inside its folder (see
"Output folders" below)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any


def write_atomic(path: Path, write: Callable[[Path], None]) -> None:
    """Call `write` on a temporary path beside `path`, then move it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_text_atomic(path: Path, text: str) -> None:
    write_atomic(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def write_json_atomic(path: Path, data: Any) -> None:
    """Indented JSON; values JSON cannot hold (numpy scalars) are written as floats."""
    write_text_atomic(path, json.dumps(data, indent=2, default=float) + "\n")


# --- Output folders -----------------------------------------------------------------------
#
# A run's files go into a hidden staging folder beside the output folder, which then takes the
# output folder's place in one rename (an earlier run's folder is renamed aside first and
# deleted), so the output folder is always either a whole run or absent, and never holds a file
# of another run. Staging and set-aside folders are named '.<name>.quench-tmp-<pid>-<random>'
# and '.<name>.quench-old-<pid>-<random>'; a save removes those of processes no longer running
# (a save that was killed) from the folder it saves into.

# The file that marks a folder as a quench run's output (with scenario.json beside it).
RUN_MARKER = "meta.json"
# The kinds of file a run writes; a folder holding anything else is not (only) a quench run.
RUN_FILE_SUFFIXES = (".parquet", ".csv", ".pcap", ".png", ".json")
NAME_MAX_BYTES = 255
_LEFTOVER = re.compile(r"\..*\.quench-(?:tmp|old)-(\d+)-[0-9a-f]+", re.DOTALL)


#: The meta.json key naming the pcap a `quench trace` output was made from.
TRACE_MARKER_KEY = "trace_of"


class OutputError(ValueError):
    """An output folder quench will not write into, or a file name that would leave it."""


def safe_child(folder: Path, name: str) -> Path:
    """`folder / name`, checked to be a plain file name directly inside `folder`: no path
    separator, no '.' or '..', not hidden, not too long, and resolving inside `folder`."""
    if (
        not name
        or name.startswith(".")
        or any(sep in name for sep in ("/", "\\", "\0", os.sep, os.altsep or "/"))
        or len(os.fsencode(name)) > NAME_MAX_BYTES
    ):
        raise OutputError(f"refusing to write {name!r}: not a plain file name")
    path = folder / name
    if path.resolve().parent != folder.resolve():
        raise OutputError(f"refusing to write {name!r}: it would land outside {folder}")
    return path


def is_quench_run(folder: Path) -> bool:
    """Whether `folder` holds an earlier quench output and nothing else: a meta.json naming the
    quench version and either a scenario.json (a run) or the pcap it analysed (`quench trace`),
    beside only files of the kinds quench writes."""
    try:
        entries = list(folder.iterdir())
        meta = json.loads((folder / RUN_MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(meta, dict) or "quench_version" not in meta:
        return False
    if not ((folder / "scenario.json").is_file() or isinstance(meta.get(TRACE_MARKER_KEY), str)):
        return False
    return all(e.is_file() and not e.is_symlink() and e.name.endswith(RUN_FILE_SUFFIXES) for e in entries)


def check_output_dir(
    out: str | os.PathLike[str], *, force: bool = False, keep: Iterable[str | os.PathLike[str]] = ()
) -> Path:
    """Check, before anything runs, that a run may be saved into `out`; return its absolute
    path. `out` may be absent (it is created), an empty folder, or a folder holding an earlier
    quench run (see `is_quench_run`), which is replaced; any other folder only with `force`,
    which replaces its contents too. Never the current folder or one holding it, nor a folder
    holding a path of `keep` (the scenario file)."""
    if not str(out).strip():
        raise OutputError("the output folder is an empty name; name a folder, e.g. results/run1")
    path = Path(out).expanduser().resolve()
    if path == Path(path.anchor):
        raise OutputError(f"{path} is the root of a file system; name a folder below it")
    cwd = Path.cwd().resolve()
    if path == cwd or path in cwd.parents:
        raise OutputError(f"{out} is the current folder or holds it; name a folder of its own")
    for k in keep:
        if path in Path(k).resolve().parents:
            raise OutputError(f"{out} holds {k}, which replacing it would delete; name another folder")
    if len(os.fsencode(path.name)) > NAME_MAX_BYTES:
        raise OutputError(f"the output folder's name is longer than {NAME_MAX_BYTES} bytes")
    if path.exists():
        if not path.is_dir():
            raise OutputError(f"{out} exists and is not a folder")
        try:
            empty = not any(path.iterdir())
        except OSError as e:
            raise OutputError(f"cannot read the output folder {out}: {e.strerror}") from None
        if not (empty or force or is_quench_run(path)):
            raise OutputError(
                f"{out} is not empty and holds no earlier quench run (a meta.json and a scenario.json "
                "beside only .parquet/.csv/.pcap/.png/.json files); choose another folder, or replace "
                "its contents with --force (force=True)"
            )
    existing = path.parent
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise OutputError(f"cannot create {out}: {existing} is not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise OutputError(f"cannot create {out}: no permission to write into {existing}")
    return path


def pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists but belongs to someone else
        return True
    return True


def remove_orphans(parent: Path, name: re.Pattern[str]) -> list[Path]:
    """Remove the folders in `parent` whose name matches `name`, whose first group is the id
    of the process that made them, when that process is gone; returns what was removed."""
    removed = []
    try:
        entries = list(parent.iterdir())
    except OSError:
        return removed
    for entry in entries:
        m = name.fullmatch(entry.name)
        if m and entry.is_dir() and not entry.is_symlink() and not pid_alive(int(m[1])):
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed


def clean_leftovers(parent: Path) -> list[Path]:
    """Remove the staging and set-aside folders that saves killed midway left in `parent`
    (their process is gone); returns what was removed."""
    return remove_orphans(parent, _LEFTOVER)


def _sibling(path: Path, kind: str) -> Path:
    """A new, empty, hidden folder beside `path` (created with the umask's permissions)."""
    stem = path.name
    while len(os.fsencode(stem)) > 64:
        stem = stem[:-1]
    while True:
        candidate = path.with_name(f".{stem}.quench-{kind}-{os.getpid()}-{secrets.token_hex(4)}")
        try:
            candidate.mkdir()
            return candidate
        except FileExistsError:
            continue


@contextlib.contextmanager
def staged_dir(out: Path, *, force: bool = False) -> Iterator[Path]:
    """Yield an empty staging folder; when the block ends normally, the staging folder replaces
    `out` (checked again with `check_output_dir`); when it raises, the staging folder is removed
    and `out` is left as it was."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    clean_leftovers(out.parent)
    tmp = _sibling(out, "tmp")
    try:
        yield tmp
        for entry in tmp.iterdir():
            if not entry.is_file() or entry.is_symlink():
                raise OutputError(f"refusing to save {entry.name!r}: not a plain file")
        out = check_output_dir(out, force=force)
        if out.exists():
            old = _sibling(out, "old")
            os.replace(out, old)  # `old` is an empty folder: the rename replaces it
            try:
                os.replace(tmp, out)
            except BaseException:
                os.replace(old, out)
                raise
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
