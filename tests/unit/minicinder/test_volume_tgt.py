"""minicinder.volume.targets.tgt: parsing tgtadm output and the commands
it runs."""

import pytest

from minicinder.volume.targets import tgt
from tests.support.fake_storage import TGTADM_SHOW as SHOW
from tests.support.fake_storage import FakeTgtadm

IQN_A = "iqn.2010-10.org.openstack:volume-aaa"
IQN_NEW = "iqn.2010-10.org.openstack:volume-new"


def _adm(fake):
    """The adapter over ``fake`` for both its commands and its socket."""
    return tgt.TgtAdm(execute=fake, new_account=fake.new_account)


def test_parse_targets():
    """Every field of a target, incl. sessions, CHAP users and ACLs."""
    first, second = tgt.parse_targets(SHOW)
    assert first == {
        "tid": 1, "iqn": IQN_A, "state": "ready",
        "luns": [{"lun": 0, "type": "controller", "size": "0 MB",
                  "backing_store": None},
                 {"lun": 1, "type": "disk", "size": "1074 MB",
                  "backing_store": "/dev/loop3"}],
        "sessions": [{"initiator": "iqn.1994-05.com.example:host1",
                      "addresses": ["127.0.0.1"]}],
        "accounts": ["chapuser"],
        "acls": ["iqn.1994-05.com.example:host1"]}
    assert second["tid"] == 4
    assert second["sessions"] == second["accounts"] == second["acls"] == []


def test_parse_empty():
    assert tgt.parse_targets("") == []


def test_create_target_takes_the_next_tid_and_sets_everything():
    fake = FakeTgtadm()
    tid = _adm(fake).create_target(
        IQN_NEW, "/dev/loop9", chap=("u1", "p1"),
        initiators=["iqn.1994-05.com.example:host2"])
    assert tid == 5
    assert fake.changes() == [
        ("--mode", "target", "--op", "new", "--tid", "5",
         "--targetname", IQN_NEW),
        ("--mode", "logicalunit", "--op", "new", "--tid", "5", "--lun", "1",
         "--backing-store", "/dev/loop9"),
        ("socket", "account", "new", "u1", "p1"),
        ("--mode", "account", "--op", "bind", "--tid", "5", "--user", "u1"),
        ("--mode", "target", "--op", "bind", "--tid", "5",
         "--initiator-name", "iqn.1994-05.com.example:host2"),
    ]


def test_create_target_reuses_an_existing_target():
    """Same IQN: no new target, LUN or ACL; CHAP is re-set (new password)."""
    fake = FakeTgtadm()
    tid = _adm(fake).create_target(
        IQN_A, "/dev/loop3", chap=("chapuser", "newpass"),
        initiators=["iqn.1994-05.com.example:host1"])
    assert tid == 1
    assert fake.changes() == [
        ("--mode", "account", "--op", "delete", "--user", "chapuser"),
        ("socket", "account", "new", "chapuser", "newpass"),
        ("--mode", "account", "--op", "bind", "--tid", "1",
         "--user", "chapuser"),
    ]


def test_first_target_gets_tid_1():
    fake = FakeTgtadm(targets="", accounts=())
    assert _adm(fake).create_target(IQN_NEW, "/dev/x") == 1


def test_acl_binds_by_initiator_name_never_by_address():
    fake = FakeTgtadm()
    _adm(fake).bind_initiator(1, "iqn.2024-01.test:y")
    (call,) = fake.changes()
    assert "--initiator-name" in call
    assert "-I" not in call and "--initiator-address" not in call


def test_unbind_initiator_is_idempotent():
    fake = FakeTgtadm()
    adm = _adm(fake)
    adm.unbind_initiator(IQN_A, "iqn.1994-05.com.example:host1")
    adm.unbind_initiator(IQN_A, "iqn.1994-05.com.example:other")
    adm.unbind_initiator(IQN_NEW, "iqn.1994-05.com.example:host1")
    assert fake.changes() == [
        ("--mode", "target", "--op", "unbind", "--tid", "1",
         "--initiator-name", "iqn.1994-05.com.example:host1")]


def test_delete_target_forces_and_drops_its_unused_accounts():
    fake = FakeTgtadm()
    adm = _adm(fake)
    adm.delete_target(IQN_A)
    assert fake.changes() == [
        ("--mode", "target", "--op", "delete", "--force", "--tid", "1"),
        ("--mode", "account", "--op", "delete", "--user", "chapuser"),
    ]


def test_delete_missing_target_is_a_no_op():
    fake = FakeTgtadm()
    _adm(fake).delete_target(IQN_NEW)
    assert fake.changes() == []


# --- hostile names: the parser refuses to guess ---------------------------

def _planted(acl):
    """SHOW with ``acl`` bound to the last target, as tgtd echoes it."""
    return SHOW + "        %s\n" % acl


def test_a_planted_target_line_is_refused():
    """An ACL name with a newline forges "Target 1: <name>" after tid 4:
    out of order, so parse_targets raises instead of handing out tid 1."""
    forged = ("iqn.2024-01.org.x:y\nTarget 1: "
              "iqn.2010-10.org.openstack:volume-evil\n"
              "    LUN information:\n        LUN: 1")
    with pytest.raises(tgt.UnexpectedOutput) as exc:
        tgt.parse_targets(_planted(forged))
    assert "tid 1 out of order" in str(exc.value)
    assert "tid 4" in str(exc.value)


def test_a_planted_duplicate_of_a_later_target_is_refused():
    later = SHOW.replace("Target 4:", "Target 9:")
    forged = "iqn.2024-01.org.x:y\nTarget 9: " + IQN_A.replace("aaa", "zzz")
    text = later.replace(
        "        iqn.1994-05.com.example:host1\nTarget 9",
        "        %s\nTarget 9" % forged)
    with pytest.raises(tgt.UnexpectedOutput, match="out of order"):
        tgt.parse_targets(text)


def test_a_target_name_listed_twice_is_refused():
    forged = "iqn.2024-01.org.x:y\nTarget 5: " + IQN_A
    with pytest.raises(tgt.UnexpectedOutput, match="listed twice"):
        tgt.parse_targets(_planted(forged))


@pytest.mark.parametrize("line", [
    "        iqn.2024-01.org.x:y alias",          # not a name
    "        iqn.2024-01.org.x:y\tTarget 7: x",   # tab-separated forgery
    "    Something new:",                        # unknown section
    "Targets 7: iqn.2024-01.org.x:y",             # not a target line
    "Target 7: not-an-iqn",                      # target with a bad name
    "  half-indented",                           # no place for it
])
def test_unexpected_lines_fail_loudly(line):
    with pytest.raises(tgt.UnexpectedOutput):
        tgt.parse_targets(SHOW + line + "\n")


def test_text_before_the_first_target_is_refused():
    with pytest.raises(tgt.UnexpectedOutput, match="before the first"):
        tgt.parse_targets("    ACL information:\n" + SHOW)


def test_address_rules_and_outgoing_accounts_still_parse():
    text = SHOW.replace("        iqn.1994-05.com.example:host1\nTarget 4",
                        "        iqn.1994-05.com.example:host1\n"
                        "        ALL\n        192.168.0.0/24\nTarget 4")
    first = tgt.parse_targets(text)[0]
    assert first["acls"] == ["iqn.1994-05.com.example:host1", "ALL",
                             "192.168.0.0/24"]
    assert first["accounts"] == ["chapuser"]


@pytest.mark.parametrize("name", [
    "iqn.2024-01.org.x:y\nTarget 1: iqn.2024-01.org.x:z",
    "iqn.2024-01.org.x:y\n", "", "iqn.x", "iqn.2024-01.org.x y",
    "iqn.2024-01.org.x:" + "a" * 220])
def test_bind_refuses_what_is_not_an_iscsi_name(name):
    fake = FakeTgtadm()
    with pytest.raises(Exception, match="not an iSCSI initiator name"):
        _adm(fake).bind_initiator(1, name)
    assert fake.changes() == []


def test_unbind_matches_the_name_exactly_and_the_recorded_tid():
    fake = FakeTgtadm()
    adm = _adm(fake)
    adm.unbind_initiator(IQN_A, "iqn.1994-05.com.example:HOST1")
    adm.unbind_initiator(IQN_A, "iqn.1994-05.com.example:host")
    adm.unbind_initiator(IQN_A, "iqn.1994-05.com.example:host1", tid=4)
    assert fake.changes() == []
    adm.unbind_initiator(IQN_A, "iqn.1994-05.com.example:host1", tid=1)
    assert len(fake.changes()) == 1


def test_a_chap_password_is_never_in_argv():
    fake = FakeTgtadm(targets="", accounts=())
    _adm(fake).create_target(
        IQN_NEW, "/dev/loop9", chap=("u1", "s3cret"))
    argv_calls = [c for c in fake.calls if c[0] != "socket"]
    assert argv_calls and not [c for c in argv_calls if "s3cret" in c]


# --- one target's lookup (parse_target, issue 16) -------------------------

IQN_B = "iqn.2010-10.org.openstack:volume-bbb"


def _many(count=30):
    """SHOW's first target listed ``count`` times, tids 1..count."""
    block = SHOW[:SHOW.index("Target 4:")]
    return "".join(block.replace("Target 1: " + IQN_A,
                                 "Target %d: %s-%d" % (tid, IQN_A, tid))
                   for tid in range(1, count + 1))


@pytest.mark.parametrize("text", [SHOW, _many(), ""])
def test_one_target_reads_as_the_whole_listing_shows_it(text):
    everything = tgt.parse_targets(text)
    tids = [target["tid"] for target in everything]
    for target in everything:
        assert tgt.parse_target(text, tid=target["tid"]) == (target, tids)
        assert tgt.parse_target(text, iqn=target["iqn"]) == (target, tids)
    assert tgt.parse_target(text, tid=99) == (None, tids)
    assert tgt.parse_target(text, iqn=IQN_NEW) == (None, tids)


def test_the_lookups_parse_one_target():
    fake = FakeTgtadm()
    adm = _adm(fake)
    assert adm.find_target(IQN_B)["tid"] == 4
    assert adm.target_by_tid(1)["iqn"] == IQN_A
    assert adm.target_by_tid(2) is None
    assert adm.find_target(IQN_NEW) is None


@pytest.mark.parametrize("text,match", [
    # Target lines are the boundaries: every one is checked, wherever
    # it is planted and whichever target is looked up.
    (_planted("iqn.2024-01.org.x:y\nTarget 1: "
              "iqn.2010-10.org.openstack:volume-evil"), "out of order"),
    (_planted("iqn.2024-01.org.x:y\nTarget 5: " + IQN_A), "listed twice"),
    (_planted("iqn.2024-01.org.x:y\x85Target 9: " + IQN_A), "listed twice"),
    (_planted("iqn.2024-01.org.x:y\rTargets 7: x"), "not a target line"),
    (SHOW + "Target 7: not-an-iqn\n", "not a target line"),
    ("    ACL information:\n" + SHOW, "before the first"),
])
def test_a_planted_target_line_refuses_every_lookup(text, match):
    for lookup in ({"tid": 1}, {"iqn": IQN_A}, {"tid": 4}, {"tid": 99}):
        with pytest.raises(tgt.UnexpectedOutput, match=match):
            tgt.parse_target(text, **lookup)
    with pytest.raises(tgt.UnexpectedOutput, match=match):
        tgt.parse_targets(text)


@pytest.mark.parametrize("line", [
    "        iqn.2024-01.org.x:y alias",
    "    Something new:",
    "  half-indented",
])
def test_a_bad_line_refuses_its_own_target_only(line):
    """A malformed line in tid 4's listing (an ACL or a session of tid 4
    planted it): tid 4 is refused, tid 1 still reads as it is. The full
    listing (the export check) refuses it all."""
    text = SHOW + line + "\n"
    with pytest.raises(tgt.UnexpectedOutput, match="tid 4"):
        tgt.parse_target(text, tid=4)
    with pytest.raises(tgt.UnexpectedOutput):
        tgt.parse_target(text, iqn=IQN_B)
    with pytest.raises(tgt.UnexpectedOutput):
        tgt.parse_targets(text)
    assert tgt.parse_target(text, tid=1) == tgt.parse_target(SHOW, tid=1)
