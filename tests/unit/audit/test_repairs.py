"""The one repair table of the reconciler and ``ministack-audit --fix``,
with hands that record what they are asked to do (no I/O)."""

from ministack import exception
from ministack.ledgers import repairs
from ministack.ledgers import snapshot

VOL = "11111111-2222-4333-8444-555555555555"
INST = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"


class Recorder(repairs.Hands):
    def __init__(self, may_reset=True, fail=None):
        self.calls = []
        self.may_reset = may_reset
        self.fail = fail

    def __getattribute__(self, name):
        if name in vars(repairs.Hands) and not name.startswith("_") \
                and name != "may_reset_volume":
            def record(*args):
                self.calls.append((name,) + args)
                if self.fail:
                    raise self.fail
            return record
        return object.__getattribute__(self, name)

    def may_reset_volume(self, volume_id):
        self.calls.append(("may_reset_volume", volume_id))
        return self.may_reset


def _snap(serial=VOL):
    return snapshot.Snapshot(
        instances={INST: {"uuid": INST, "domain": "instance-1",
                          "deleted": False}},
        domains={"instance-1": {"instance_uuid": INST, "disks": {
            "vdb": {"serial": serial, "live": True, "config": True}}}},
        bdms=[{"id": 7, "instance_uuid": INST, "volume_id": VOL,
               "device_name": "/dev/vdb", "connection_info": {"x": 1}}],
        attachments=[{"id": "a1", "volume_id": VOL, "initiator": "iqn.b"},
                     {"id": "a2", "volume_id": VOL, "initiator": "iqn.a"}])


def _div(kind, **data):
    return snapshot.Divergence(kind, "s", "d", "f", data=data)


def test_every_kind_has_one_repair():
    assert set(repairs.REPAIRS) == set(snapshot.KINDS)
    assert set(repairs.COMPUTE_KINDS) < set(snapshot.KINDS)


def test_bdm_without_attachment_unplugs_only_its_own_volume():
    data = {"bdm_id": 7, "volume_id": VOL, "instance_uuid": INST,
            "device_name": "/dev/vdb"}
    hands = Recorder()
    div = _div("bdm_without_attachment", **data)
    assert repairs.apply(div, _snap(), hands) and div.fixed
    assert hands.calls == [("unplug_disk", INST, "instance-1", "vdb"),
                           ("destroy_bdm", 7)]
    hands = Recorder()
    repairs.apply(_div("bdm_without_attachment", **data),
                  _snap(serial="another-volume"), hands)
    assert hands.calls == [("destroy_bdm", 7)]


def test_missing_export_admits_every_initiator_of_the_volume():
    hands = Recorder()
    repairs.apply(_div("missing_export", volume_id=VOL), _snap(), hands)
    assert hands.calls == [("ensure_export", VOL, ["iqn.a", "iqn.b"])]


def test_reset_waits_for_the_last_look():
    hands = Recorder(may_reset=False)
    div = _div("in_use_without_attachment", volume_id=VOL)
    assert not repairs.apply(div, _snap(), hands)
    assert (div.fixed, div.fix_error) == (False, None)
    assert hands.calls == [("may_reset_volume", VOL)]
    hands = Recorder()
    assert repairs.apply(_div("in_use_without_attachment", volume_id=VOL),
                         _snap(), hands)
    assert hands.calls[-1] == ("reset_volume", VOL, "available", "detached")


def test_a_failed_step_is_reported_not_raised():
    hands = Recorder(fail=exception.MinistackException("tgtd is down"))
    div = _div("export_without_volume", iqn="iqn.x")
    assert not repairs.apply(div, _snap(), hands)
    assert (div.fixed, div.fix_error) == (False, "tgtd is down")
