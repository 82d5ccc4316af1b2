"""The engine's corpus of malformed and extreme scenarios (tests/corpus/rust/*.toml; the files,
names and folders of tests/corpus/python/ are tests/test_output_safety.py's): each file begins with
`# expect: KEY`, and both the Python API and `quench validate` must refuse it naming that key:
a ScenarioError whose `.path` is KEY, and one line on stderr, `quench: error: KEY: ...`, with
exit status 2. No case may hang, abort the allocator, or show a traceback."""

import time
from pathlib import Path

import pytest

import quench
from quench.cli import EXIT_BAD_INPUT, main
from quench.scenario import load_scenario, validate_scenario

CORPUS = Path(__file__).parent / "corpus"
CASES = sorted((CORPUS / "rust").glob("*.toml"))
# Each case is refused while reading or building the scenario: well under a second.
SECONDS_PER_CASE = 1.0


def expected_key(path: Path) -> str:
    first = path.read_text().splitlines()[0]
    prefix = "# expect: "
    assert first.startswith(prefix), f"{path} must begin with '{prefix}<key>'"
    return first[len(prefix) :].strip()


def test_the_corpus_is_there():
    assert len(list((CORPUS / "rust").glob("*.toml"))) >= 60


@pytest.mark.parametrize("path", CASES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_api_refuses_naming_the_key(path):
    key = expected_key(path)
    started = time.perf_counter()
    with pytest.raises(quench.ScenarioError) as e:
        validate_scenario(load_scenario(path))
    assert time.perf_counter() - started < SECONDS_PER_CASE
    assert e.value.path == key, str(e.value)
    assert str(e.value).startswith(f"{key}: ")


@pytest.mark.parametrize("path", CASES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_cli_refuses_with_one_line(path, capsys):
    key = expected_key(path)
    started = time.perf_counter()
    status = main(["validate", str(path)])
    assert time.perf_counter() - started < SECONDS_PER_CASE
    out, err = capsys.readouterr()
    assert status == EXIT_BAD_INPUT
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"quench: error: {key}: "), err
    assert "Traceback" not in err
    for internal in (
        "untagged enum",
        "did not match any variant",
        " at line ",
        "expected u64",
        "expected u32",
        "expected f64",
    ):
        assert internal not in err, err
