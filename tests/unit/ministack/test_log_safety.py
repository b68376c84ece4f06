"""A caller's text cannot forge or corrupt a log line."""

import logging

from oslo_config import cfg
from oslo_log import log as oslo_logging

from ministack import log_safety


def _logger(tmp_path):
    conf = cfg.ConfigOpts()
    oslo_logging.register_options(conf)
    log_file = tmp_path / "svc.log"
    conf([], project="ministack-test")
    conf.set_override("log_file", str(log_file))
    oslo_logging.setup(conf, "ministack-test")
    log_safety.install()
    return logging.getLogger("ministack.test"), log_file


def test_a_path_with_a_newline_stays_on_its_line(tmp_path):
    log, log_file = _logger(tmp_path)
    try:
        forged = ('/v3/p/volumes/x\n2026-12-01 00:00:00.000 1 INFO '
                  'minicinder.api.app [-] "DELETE /v3/p/volumes/y"')
        log.info('"%s %s" status: %s', "GET", forged, 404)
        log.info('%(uri)s status: %(status)s', {"uri": "/a\x00\x1b[2J",
                                                 "status": 404})
        log.warning("refused: %s", ValueError("bad\rname"))
    finally:
        for handler in logging.getLogger().handlers[:]:
            logging.getLogger().removeHandler(handler)
    lines = log_file.read_text().splitlines()
    assert len(lines) == 3
    assert '/volumes/x\\x0a2026-12-01' in lines[0]
    assert lines[1].endswith("/a\\x00\\x1b[2J status: 404")
    assert lines[2].endswith("refused: bad\\x0dname")
    assert all(line.isprintable() for line in lines)


def test_our_own_formats_and_tracebacks_keep_their_lines(tmp_path):
    log, log_file = _logger(tmp_path)
    try:
        try:
            raise RuntimeError("boom")
        except RuntimeError:
            log.exception("attach failed for %s", "vol-1")
        log.info("two\nlines")
        log.info("%d volumes, %.1f s", 3, 0.25)
    finally:
        for handler in logging.getLogger().handlers[:]:
            logging.getLogger().removeHandler(handler)
    text = log_file.read_text()
    assert "attach failed for vol-1" in text
    assert "Traceback (most recent call last):" in text
    assert "RuntimeError: boom" in text
    assert "two\nlines" in text
    assert "3 volumes, 0.2 s" in text or "3 volumes, 0.3 s" in text


def test_printable_leaves_unicode_names_alone():
    assert log_safety.printable("vol-é-日本") == "vol-é-日本"
    assert log_safety.printable("a\u2028b") == "a\\u2028b"
