"""The scenario errors the Python side raises: ScenarioError (the engine's type, from
quench._core) built the way the engine builds it, with the key it names, and one-line error
text. It owns no reading or checking of its own; scenario.py, dist.py, ns3.py and cli.py import
it, and it imports nothing of the package but the extension, so any module can.
"""

from __future__ import annotations

from quench import _core


def one_line(text: str) -> str:
    """`text` with line breaks and other unprintable characters escaped: an error is one line,
    even when a key of the user's is "\n" (as the engine's errors are)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def scenario_error(path: str, reason: str) -> _core.ScenarioError:
    """A ScenarioError like the engine's: `path` names the key ('' for the whole scenario)."""
    path, reason = one_line(path), one_line(reason)
    e = _core.ScenarioError(f"{path}: {reason}" if path else reason)
    e.path = path
    e.reason = reason
    return e
