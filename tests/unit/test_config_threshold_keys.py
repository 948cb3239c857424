"""`config --check` reads a [thresholds] key as the grader does: ``collector.field`` or
``collector.instance.field`` (an instance may hold spaces: ``oracle_waits.log file sync.p99``)."""

from __future__ import annotations

from pathlib import Path

from sgmon.config import check_config


def _problems(tmp_path: Path, key: str) -> list[str]:
    cfg = tmp_path / "sgmon.toml"
    cfg.write_text(f'[thresholds]\n"{key}" = {{ warn = 32 }}\n')
    cfg.chmod(0o600)
    return check_config(str(cfg)).problems


def test_instance_key_is_accepted(tmp_path: Path) -> None:
    assert _problems(tmp_path, "oracle_waits.log file sync.p99") == []
    assert _problems(tmp_path, "disk.sdb.w_await") == []


def test_unknown_field_is_still_reported(tmp_path: Path) -> None:
    (line,) = _problems(tmp_path, "oracle_waits.log file sync.p999")
    assert line.endswith("'oracle_waits.log file sync.p999': oracle_waits has no field 'p999'")
    (line,) = _problems(tmp_path, "disk.w_awat")
    assert line.endswith("disk has no field 'w_awat'")
