"""Result files are whole or absent: a write that fails leaves the old file and no temporary."""

import json
import os
import stat

import pytest

from quench.atomic import OutputError, staged_dir, write_atomic, write_json_atomic


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "summary.json"
    write_json_atomic(target, {"passed": True})

    def half_then_fail(tmp):
        tmp.write_text('{"passed": fa')
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_atomic(target, half_then_fail)
    assert json.loads(target.read_text()) == {"passed": True}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["summary.json"]


def test_written_files_get_the_umask_permissions_of_a_plain_open(tmp_path):
    umask = os.umask(0o022)
    try:
        write_json_atomic(tmp_path / "a" / "b.json", [1])
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "a" / "b.json").stat().st_mode) == 0o644


def test_a_staged_folder_replaces_its_target_whole_or_not_at_all(tmp_path):
    out = tmp_path / "out"
    with staged_dir(out) as tmp:
        (tmp / "a.csv").write_text("1")
    assert sorted(p.name for p in out.iterdir()) == ["a.csv"]
    with pytest.raises(RuntimeError):
        with staged_dir(out) as tmp:
            (tmp / "b.csv").write_text("2")
            raise RuntimeError("killed")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert sorted(p.name for p in out.iterdir()) == ["a.csv"]
    with pytest.raises(OutputError, match="not a plain file"):
        with staged_dir(out) as tmp:
            (tmp / "sub").mkdir()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
