"""Output safety: no name can steer a file out of --out, --out is checked before the run, an
output folder is a whole run or absent (never merged with another run's files), temporaries of
killed saves are cleaned, and every malformed input of tests/corpus/python/ is one line."""

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import small_net

import quench
from quench import cli
from quench.atomic import OutputError, check_output_dir, clean_leftovers, is_quench_run, safe_child
from quench.cli import main

CORPUS = Path(__file__).resolve().parent / "corpus" / "python"
CORPUS_FILES = sorted(CORPUS.glob("*.toml"))

SCENARIO = """\
duration = "1s"
hosts = [{hosts}]
routers = ["r"]
[[links]]
from = {a}
to = "r"
rate = "10Mbps"
delay = "1ms"
[[links]]
from = "r"
to = "b"
rate = "1Mbps"
delay = "10ms"
[[flows]]
kind = "tcp"
src = {a}
dst = "b"
[record]
pcap = [{pcap}]
"""


def scenario(tmp_path: Path, a: str = "a", pcap: str = "r->b", name: str = "s.toml") -> Path:
    path = tmp_path / name
    q = json.dumps
    path.write_text(SCENARIO.format(hosts=f"{q(a)}, {q('b')}", a=q(a), pcap=q(pcap)))
    return path


def one_error_line(capsys) -> str:
    """The single stderr line of a failed command (asserting there is exactly one)."""
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("quench: error: "), lines[0]
    assert "Traceback" not in captured.err + captured.out
    return lines[0].removeprefix("quench: error: ")


def hidden(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def saved_result() -> quench.Results:
    net = small_net()
    net.tcp("a", "b")
    net.record(pcap=["r->b"])
    return net.run("1s")


def never_run(*args, **kwargs):
    raise AssertionError("the run started although its output could not be saved")


# --- names -----------------------------------------------------------------------------------


def test_a_node_name_climbing_out_of_out_is_refused_before_the_run(tmp_path, capsys, monkeypatch):
    work = tmp_path / "x" / "y"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    path = scenario(tmp_path, a="../../escaped", pcap="../../escaped->r")
    assert main(["run", str(path), "--out", "out"]) == 2
    assert one_error_line(capsys).startswith("hosts[0]: '../../escaped': a node name may hold only")
    assert not list(tmp_path.rglob("*.pcap")) and not (work / "out").exists()


@pytest.mark.parametrize("name", ["/tmp/quench-absolute", "x/y", "..", ".hidden", "-rf", "h" * 65, "a b", "é"])
def test_the_engine_accepts_node_names_only_from_a_safe_set(name):
    net = quench.Network().hosts("a", "b", name)
    net.link("a", "b", rate="1Mbps", delay="1ms")
    net.tcp("a", "b")
    with pytest.raises(quench.ScenarioError) as e:
        net.run("1s")
    assert e.value.path == "hosts[2]" and e.value.reason.startswith("'")
    assert "a node name may hold only ASCII letters, digits, '_', '-' and '.'" in e.value.reason


def test_names_used_by_the_project_stay_valid():
    net = quench.Network().hosts("ucl_sink", "s0", "A-b.c_9", "h" * 64).routers("gw_back", "r1")
    net.link("s0", "r1", rate="1Mbps", delay="1ms").link("r1", "ucl_sink", rate="1Mbps", delay="1ms")
    net.tcp("s0", "ucl_sink")
    quench.validate_scenario(net.to_dict("1s"))


@pytest.mark.parametrize("link", ["../../escaped->b", "/tmp/quench-absolute->b", "a/..->b", "..->"])
def test_save_refuses_a_file_name_that_leaves_the_folder_whatever_the_engine_allowed(tmp_path, link):
    # Defence in depth: a name the engine let through must still not leave the folder.
    res = saved_result()
    res.pcaps[link] = b"\x00"
    out = tmp_path / "a" / "b" / "out"
    with pytest.raises(OutputError, match="refusing to write"):
        res.save(out)
    assert list(tmp_path.iterdir()) == []  # refused before even the parent folder was made
    assert not Path("/tmp/quench-absolute-b.pcap").exists()


def test_two_captured_links_sharing_a_file_name_are_refused_before_the_run(tmp_path, capsys):
    path = tmp_path / "s.toml"
    path.write_text(
        'duration = "1s"\nhosts = ["a-b", "c", "a", "b-c"]\n'
        '[[links]]\nfrom = "a-b"\nto = "c"\nrate = "1Mbps"\ndelay = "1ms"\n'
        '[[links]]\nfrom = "a"\nto = "b-c"\nrate = "1Mbps"\ndelay = "1ms"\n'
        '[[flows]]\nkind = "tcp"\nsrc = "a"\ndst = "b-c"\n'
        '[record]\npcap = ["a-b->c", "a->b-c"]\n'
    )
    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 2
    assert "a-b->c and a->b-c would both be written to a-b-c.pcap" in one_error_line(capsys)
    assert not (tmp_path / "out").exists()


def test_safe_child():
    folder = Path("/some/where")
    assert safe_child(folder, "a-b.pcap") == folder / "a-b.pcap"
    for bad in ["", ".", "..", "../x", "/etc/passwd", "a/b", "a\\b", ".hidden", "x" * 256, "a\0b"]:
        with pytest.raises(OutputError):
            safe_child(folder, bad)


# --- --out -----------------------------------------------------------------------------------


def test_an_empty_out_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = scenario(tmp_path)
    assert main(["run", str(path), "--out", ""]) == 2
    assert one_error_line(capsys).startswith("argument --out: an empty name")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.toml"]
    with pytest.raises(OutputError, match="empty name"):
        saved_result().save("")


@pytest.mark.parametrize("out", [".", "..", "{tmp}", "/"])
def test_the_current_folder_or_one_holding_it_is_refused(tmp_path, capsys, monkeypatch, out):
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setattr(cli, "run_scenario", never_run)
    path = scenario(tmp_path / "work")
    assert main(["run", str(path), "--out", out.format(tmp=tmp_path), "--force"]) == 2
    message = one_error_line(capsys)
    assert "is the current folder or holds it" in message or "is the root of a file system" in message
    assert sorted(p.name for p in work.iterdir()) == ["s.toml"]


def test_an_out_holding_the_scenario_file_is_refused_even_forced(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cli, "run_scenario", never_run)
    (tmp_path / "d").mkdir()
    path = scenario(tmp_path / "d")
    assert main(["run", str(path), "--out", str(tmp_path / "d"), "--force"]) == 2
    assert "holds" in one_error_line(capsys) and path.exists()


def test_an_out_that_is_a_file_is_refused_before_the_run(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cli, "run_scenario", never_run)
    path = scenario(tmp_path)
    (tmp_path / "afile").write_text("keep")
    assert main(["run", str(path), "--out", str(tmp_path / "afile")]) == 2
    assert one_error_line(capsys).endswith("afile exists and is not a folder")
    assert main(["run", str(path), "--out", str(tmp_path / "afile" / "out")]) == 2
    assert "is not a folder" in one_error_line(capsys)
    assert (tmp_path / "afile").read_text() == "keep"


def test_a_non_empty_foreign_out_is_refused_unless_forced(tmp_path, capsys, monkeypatch):
    path = scenario(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "thesis.tex").write_text("precious")
    with monkeypatch.context() as m:
        m.setattr(cli, "run_scenario", never_run)
        assert main(["run", str(path), "--out", str(out), "--quiet"]) == 2
    assert "is not empty and holds no earlier quench run" in one_error_line(capsys)
    assert (out / "thesis.tex").read_text() == "precious"
    assert main(["run", str(path), "--out", str(out), "--quiet", "--force"]) == 0
    assert not (out / "thesis.tex").exists() and is_quench_run(out) and (out / "r-b.pcap").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "s.toml"]


def test_an_earlier_run_is_replaced_whole_so_no_stale_file_stays(tmp_path, capsys):
    out = tmp_path / "out"
    first = scenario(tmp_path, pcap="r->b", name="first.toml")
    assert main(["run", str(first), "--out", str(out), "--quiet", "--format", "parquet,csv"]) == 0
    assert (out / "r-b.pcap").exists() and (out / "flows.csv").exists()
    second = scenario(tmp_path, pcap="a->r", name="second.toml")
    assert main(["run", str(second), "--out", str(out), "--quiet", "--no-plots"]) == 0
    names = {p.name for p in out.iterdir()}
    assert "a-r.pcap" in names and "r-b.pcap" not in names and "flows.csv" not in names and "queue.png" not in names
    assert json.loads((out / "scenario.json").read_text())["record"]["pcap"] == ["a->r"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["first.toml", "out", "second.toml"]


def test_a_run_folder_with_a_foreign_file_added_is_not_replaced_silently(tmp_path):
    out = tmp_path / "out"
    saved_result().save(out)
    assert is_quench_run(out)
    (out / "notes.txt").write_text("mine")
    assert not is_quench_run(out)
    with pytest.raises(OutputError, match="not empty"):
        saved_result().save(out)
    saved_result().save(out, force=True)
    assert not (out / "notes.txt").exists()


def test_check_output_dir_accepts_absent_and_empty_folders(tmp_path):
    assert check_output_dir(tmp_path / "new" / "deeper") == tmp_path / "new" / "deeper"
    (tmp_path / "empty").mkdir()
    assert check_output_dir(tmp_path / "empty") == tmp_path / "empty"
    assert not (tmp_path / "new").exists()  # a check writes nothing


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_an_unwritable_parent_is_refused_before_the_run(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(OutputError, match="no permission"):
            check_output_dir(locked / "out")
    finally:
        locked.chmod(0o700)


def test_the_output_folder_gets_the_umask_permissions(tmp_path):
    umask = os.umask(0o022)
    try:
        saved_result().save(tmp_path / "out")
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "out").stat().st_mode) == 0o755


# --- temporaries -----------------------------------------------------------------------------


def dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_leftovers_of_killed_saves_are_cleaned_and_live_ones_kept(tmp_path):
    dead = dead_pid()
    stale = [tmp_path / f".out.quench-tmp-{dead}-0123abcd", tmp_path / f".other.quench-old-{dead}-89ef"]
    live = tmp_path / f".out.quench-tmp-{os.getppid()}-0123abcd"
    lookalike = tmp_path / f".out.quench-tmp-{dead}-notours"
    for d in [*stale, live, lookalike]:
        d.mkdir()
        (d / "queue.parquet").write_text("half")
    saved_result().save(tmp_path / "out")
    assert hidden(tmp_path) == sorted([live.name, lookalike.name])
    assert clean_leftovers(tmp_path) == []


def test_a_failed_save_removes_its_temporary_and_keeps_the_earlier_run(tmp_path, monkeypatch):
    out = tmp_path / "out"
    saved_result().save(out, formats=["csv"])
    before = sorted(p.name for p in out.iterdir())

    def fail_midway(self, paths, formats, plots_dir):
        next(iter(paths.values())).write_text("half")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(quench.Results, "_write_all", fail_midway)
    with pytest.raises(OSError, match="No space"):
        saved_result().save(out)
    assert sorted(p.name for p in out.iterdir()) == before
    assert hidden(tmp_path) == []
    with pytest.raises(OSError, match="No space"):
        saved_result().save(tmp_path / "fresh")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_save_killed_midway_leaves_nothing_half_written_and_the_next_save_cleans_up(tmp_path):
    out = tmp_path / "out"
    saved_result().save(out)
    script = textwrap.dedent(
        f"""
        import sys, time
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        import quench.plot
        from conftest import small_net

        def stall(res, d):
            print("saving", flush=True)
            time.sleep(60)

        quench.plot.save_standard_plots = stall
        net = small_net()
        net.tcp("a", "b")
        net.run("1s").save({str(out)!r})
        """
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == "saving\n"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()
    leftovers = hidden(tmp_path)
    assert len(leftovers) == 1 and ".quench-tmp-" in leftovers[0]
    assert is_quench_run(out)  # the earlier run, whole
    saved_result().save(tmp_path / "another")
    assert hidden(tmp_path) == []


# --- the corpus ------------------------------------------------------------------------------


def expectation(path: Path) -> str:
    sidecar = path.with_suffix(".expect")
    if sidecar.exists():
        return sidecar.read_text(encoding="utf-8").strip()
    first = path.read_bytes().decode("utf-8-sig").splitlines()[0]
    assert first.startswith("# expect: "), f"{path.name} has no '# expect:' line nor a .expect file"
    return first.removeprefix("# expect: ")


def test_the_corpus_is_large_enough():
    assert len(CORPUS_FILES) >= 60


def snapshot(folder: Path) -> list[tuple[str, int]]:
    return sorted((str(p.relative_to(folder)), p.stat().st_size) for p in folder.rglob("*"))


@pytest.mark.parametrize("path", CORPUS_FILES, ids=[p.stem for p in CORPUS_FILES])
def test_every_corpus_file_is_one_line_naming_the_problem(path, tmp_path, capsys, monkeypatch):
    expect = expectation(path)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    corpus_before = snapshot(CORPUS)
    out = tmp_path / "out"
    for argv in (["validate", str(path)], ["run", str(path), "--out", str(out), "--quiet"]):
        assert main(argv) == 2, argv
        message = one_error_line(capsys)
        assert message.removeprefix(f"{path}: ").startswith(expect), (argv, message)
    assert not out.exists() and hidden(tmp_path) == [] and list(work.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["work"]
    assert snapshot(CORPUS) == corpus_before
    assert not list(tmp_path.parent.glob("*escaped*")) and not list(Path("/tmp").glob("quench-abs*"))
    # The API raises ScenarioError with the key and the reason for each of them.
    with pytest.raises(quench.ScenarioError) as e:
        quench.validate_scenario(quench.load_scenario(path))
    assert isinstance(e.value.path, str) and isinstance(e.value.reason, str)
    assert str(e.value).removeprefix(f"{path}: ").startswith(expect)


@pytest.mark.parametrize("command", [["ns3"], ["ns3", "--setup"], ["compare"]], ids=["ns3", "ns3 --setup", "compare"])
def test_ns3_and_compare_check_out_before_ns3_is_set_up_or_run(tmp_path, capsys, monkeypatch, command):
    """A bad --out is reported first, before the ns-3 environment is looked for or downloaded
    (about 1 GB), as `quench run` reports it before its run."""
    from quench import ns3

    def no_setup(*args, **kwargs):
        raise AssertionError("the ns-3 set-up ran before --out was checked")

    monkeypatch.setattr(ns3, "setup", no_setup)
    monkeypatch.setenv("QUENCH_NS3_VENV", str(tmp_path / "no-ns3-here"))
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    path = scenario(tmp_path)
    assert main([command[0], str(path), "--out", str(busy), *command[1:]]) == 2
    line = one_error_line(capsys)
    assert f"{busy} is not empty and holds no earlier quench run" in line, line
    assert (busy / "notes.txt").read_text() == "mine"
