"""TOML text for the plain data of a scenario, as the sweep tests write their spec files."""

import json


def toml_value(value) -> str:
    """A TOML value: inline tables and arrays, keys and scalars quoted as JSON (valid TOML for
    strings, numbers and booleans)."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return json.dumps(value)
