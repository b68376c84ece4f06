"""ministack-audit's exit codes when it cannot run (no I/O beyond a
refused TCP connection and a throwaway SQLite file)."""

from ministack_audit import cmd
from ministack_audit import ledgers
from tests.support.daemons import free_port


def _configs(tmp_path, nova_url, cinder_url):
    compute = tmp_path / "minicompute.conf"
    compute.write_text("[database]\nconnection = %s\n" % nova_url)
    cinder = tmp_path / "minicinder.conf"
    cinder.write_text("[database]\nconnection = %s\n" % cinder_url)
    return ["--compute-config", str(compute), "--cinder-config", str(cinder)]


def test_unreachable_database_is_exit_3_without_the_password(tmp_path,
                                                             capsys):
    url = "postgresql+psycopg://ministack:hunter2@127.0.0.1:%d/nova" \
        % free_port()
    assert cmd.main(_configs(tmp_path, url, url)) == 3
    err = capsys.readouterr().err
    assert "cannot read" in err and "127.0.0.1" in err
    assert "hunter2" not in err


def test_database_without_the_schema_is_exit_3(tmp_path, capsys):
    empty = "sqlite:///%s" % (tmp_path / "empty.sqlite")
    assert cmd.main(_configs(tmp_path, empty, empty)) == 3
    assert "no such table" in capsys.readouterr().err


def test_a_bug_is_exit_3_not_found(tmp_path, capsys, monkeypatch):
    """Exit 1 means "divergences found": a crash must not look like it."""
    def broken(*args, **kwargs):
        raise KeyError("bug")
    monkeypatch.setattr(ledgers, "read_all", broken)
    empty = "sqlite:///%s" % (tmp_path / "empty.sqlite")
    assert cmd.main(_configs(tmp_path, empty, empty)) == 3
    assert "internal error" in capsys.readouterr().err
