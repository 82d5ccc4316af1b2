"""Result files are whole or absent: a write that fails leaves the old file and no temporary."""

import json
import os
import stat

import pytest

from quench.atomic import write_atomic, write_json_atomic


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
