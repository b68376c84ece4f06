"""The resize journey's attachment ledger: each of Cinder's attachments
of the volume as ``id/status/host/conn=yes|no``, read from a real SQLite
``volume_attachment`` table; the parked one (``reserved``, made with no
connector) shows no host and no connector."""

import json
import os
import sys

import sqlalchemy as sa

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..",
                                "tools"))
import journey_moves  # noqa: E402
import journey_resize  # noqa: E402

VOLUME = "7d4c5a0e-0000-4000-8000-000000000001"


def _cinder(tmp_path, rows):
    engine = sa.create_engine("sqlite:///%s" % (tmp_path / "cinder.sqlite"))
    with engine.begin() as conn:
        conn.execute(sa.text(
            "CREATE TABLE volume_attachment (id TEXT, volume_id TEXT, "
            "attach_status TEXT, connector TEXT, deleted INTEGER, "
            "created_at TEXT)"))
        for n, (att_id, status, connector, deleted) in enumerate(rows):
            conn.execute(sa.text(
                "INSERT INTO volume_attachment VALUES (:i, :v, :s, :c, :d, "
                ":t)"), {"i": att_id, "v": VOLUME, "s": status,
                         "c": json.dumps(connector) if connector else None,
                         "d": deleted, "t": "2026-12-07 22:0%d:00" % n})
    return engine


def test_parked_attachment_has_no_host_and_no_connector(tmp_path):
    engine = _cinder(tmp_path, [
        ("11111111-aaaa", "attached", {"host": "vm",
                                       "initiator": "iqn.vm"}, 1),
        ("22222222-bbbb", "reserved", None, 0)])
    found = journey_moves.attachments(engine, VOLUME)
    assert journey_resize.describe_attachments(found) == \
        "22222222/reserved/-/conn=no"


def test_updated_attachment_names_its_host_and_connector(tmp_path):
    engine = _cinder(tmp_path, [
        ("22222222-bbbb", "attached", {"host": "compute2",
                                       "initiator": "iqn.c2"}, 0)])
    found = journey_moves.attachments(engine, VOLUME)
    assert journey_resize.describe_attachments(found) == \
        "22222222/attached/compute2/conn=yes"


def test_no_attachment():
    assert journey_resize.describe_attachments([]) == "none"
