"""Reading a file the user names: a scenario, an empirical CDF's CSV file, a pcap.

A file is opened only if it is a regular file no larger than the cap its reader names, checked
before anything is read: a FIFO or a device such as /dev/zero would otherwise block the process
or be read without end, and a huge file would be met by the allocator. Each refusal is an
`UnreadableFile` whose message starts with the file's name; the caller adds the key that named
the file."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

KIB = 1024
MIB = 1024 * KIB

# A scenario file: the largest in this repository is a few KB; 64 MiB of TOML lists some 10⁵
# flows, and tomllib turns it into Python objects about ten times its size (under 1 GB). A
# larger population belongs in a workload (`workloads`), which draws its flows as it runs.
MAX_SCENARIO_BYTES = 64 * MIB

# An empirical CDF's CSV file: a line is a (size, p) point of about 20 bytes, so 16 MiB holds
# some 8·10⁵ points; published flow-size CDFs (web search, data mining) have a few dozen, and
# each point costs about 150 bytes of Python objects in the scenario (about 120 MB at the cap).
MAX_CDF_BYTES = 16 * MIB

# A pcap for `quench trace`: decoding keeps about 1 KB of Python objects per packet until the
# table is built; a record is at least 50 bytes (16 of record header, 14 of Ethernet, 20 of
# IPv4), so 256 MiB is at most 5·10⁶ packets, about 5 GB while decoding. A capture of
# full-size segments (1.5 KB a record) is 1.8·10⁵ packets at the cap.
MAX_PCAP_BYTES = 256 * MIB

UTF8_BOM = b"\xef\xbb\xbf"


class UnreadableFile(ValueError):
    """A named file that is absent, not a regular file, too large or unreadable; the message
    starts with the file's name and says why."""


def _shown(n: int) -> str:
    return f"{n / MIB:.0f} MiB" if n >= MIB else f"{n} bytes"


def open_regular(path: str | Path, limit: int, what: str) -> BinaryIO:
    """`path` opened for binary reading if it is a regular file of at most `limit` bytes;
    `what` names the file in messages ("scenario file", "pcap file")."""
    p = Path(path)
    try:
        # O_NONBLOCK: opening a FIFO with no writer must not wait for one (it is refused below).
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise UnreadableFile(f"{p}: {what} not found") from None
    except IsADirectoryError:
        raise UnreadableFile(f"{p}: is a folder, not a {what}") from None
    except OSError as e:
        raise UnreadableFile(f"{p}: cannot read the {what}: {e.strerror or e}") from None
    try:
        _check_regular(p, os.fstat(fd), limit, what)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _check_regular(p: Path, st: os.stat_result, limit: int, what: str) -> None:
    if stat.S_ISDIR(st.st_mode):
        raise UnreadableFile(f"{p}: is a folder, not a {what}")
    if not stat.S_ISREG(st.st_mode):
        raise UnreadableFile(f"{p}: is not a regular file (a FIFO, device or socket), so it is not read as a {what}")
    if st.st_size > limit:
        raise UnreadableFile(f"{p}: is {_shown(st.st_size)}, more than the {_shown(limit)} quench reads from a {what}")


def read_regular(path: str | Path, limit: int, what: str) -> bytes:
    """The whole of a regular file of at most `limit` bytes (see `open_regular`); a file that
    grows past the cap while it is read is refused too."""
    with open_regular(path, limit, what) as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise UnreadableFile(
            f"{path}: grew past {_shown(limit)} while it was read, the most quench reads from a {what}"
        )
    return data


def text_lines(f: BinaryIO, limit: int, name: str) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line of `f`, decoded as UTF-8 one line at a time (a byte
    order mark at the start is dropped), reading at most `limit` bytes; a line that is not
    UTF-8 is refused with its number, and nothing after it is read."""
    read = 0
    for number, raw in enumerate(f, start=1):
        read += len(raw)
        if read > limit:
            raise UnreadableFile(f"{name}: grew past {_shown(limit)} while it was read")
        if number == 1:
            raw = raw.removeprefix(UTF8_BOM)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise UnreadableFile(f"{name}: line {number}, column {e.start + 1}: not UTF-8 text") from None
        yield number, text
