"""minicinder.volume.tgt: parsing tgtadm output and the commands it runs."""

from minicinder.volume import tgt

SHOW = """\
Target 1: iqn.2010-10.org.openstack:volume-aaa
    System information:
        Driver: iscsi
        State: ready
    I_T nexus information:
        I_T nexus: 3
            Initiator: iqn.1994-05.com.example:host1 alias: none
            Connection: 0
                IP Address: 127.0.0.1
    LUN information:
        LUN: 0
            Type: controller
            SCSI ID: IET     00010000
            Size: 0 MB, Block size: 1
            Backing store type: null
            Backing store path: None
            Backing store flags:
        LUN: 1
            Type: disk
            SCSI ID: IET     00010001
            Size: 1074 MB, Block size: 512
            Backing store type: rdwr
            Backing store path: /dev/loop3
            Backing store flags:
    Account information:
        chapuser
        outuser (outgoing)
    ACL information:
        iqn.1994-05.com.example:host1
Target 4: iqn.2010-10.org.openstack:volume-bbb
    System information:
        Driver: iscsi
        State: ready
    I_T nexus information:
    LUN information:
        LUN: 0
            Type: controller
            Backing store path: None
    Account information:
    ACL information:
"""

IQN_A = "iqn.2010-10.org.openstack:volume-aaa"
IQN_NEW = "iqn.2010-10.org.openstack:volume-new"


class FakeTgtadm:
    """Records tgtadm calls; `show` answers come from the attributes."""

    def __init__(self, targets=SHOW, accounts=("chapuser", "outuser")):
        self.targets = targets
        self.accounts = list(accounts)
        self.calls = []

    def __call__(self, *argv, **kwargs):
        argv = tuple(str(a) for a in argv)
        assert argv[:3] == ("tgtadm", "--lld", "iscsi")
        self.calls.append(argv[3:])
        if argv[3:] == ("--mode", "target", "--op", "show"):
            return self.targets, ""
        if argv[3:] == ("--mode", "account", "--op", "show"):
            return "Account list:\n" + "".join(
                "    %s\n" % a for a in self.accounts), ""
        if argv[3:7] == ("--mode", "target", "--op", "delete"):
            self._drop_target(argv[-1])
        return "", ""

    def _drop_target(self, tid):
        """Forget target ``tid`` so later `show`s no longer list it."""
        blocks = ("\n" + self.targets).split("\nTarget ")[1:]
        self.targets = "".join("Target " + b + "\n" for b in blocks
                               if not b.startswith(tid + ":"))

    def changes(self):
        """Calls other than the show commands."""
        return [c for c in self.calls if "show" not in c]


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
    tid = tgt.TgtAdm(execute=fake).create_target(
        IQN_NEW, "/dev/loop9", chap=("u1", "p1"),
        initiators=["iqn.1994-05.com.example:host2"])
    assert tid == 5
    assert fake.changes() == [
        ("--mode", "target", "--op", "new", "--tid", "5",
         "--targetname", IQN_NEW),
        ("--mode", "logicalunit", "--op", "new", "--tid", "5", "--lun", "1",
         "--backing-store", "/dev/loop9"),
        ("--mode", "account", "--op", "new", "--user", "u1",
         "--password", "p1"),
        ("--mode", "account", "--op", "bind", "--tid", "5", "--user", "u1"),
        ("--mode", "target", "--op", "bind", "--tid", "5",
         "--initiator-name", "iqn.1994-05.com.example:host2"),
    ]


def test_create_target_reuses_an_existing_target():
    """Same IQN: no new target, LUN or ACL; CHAP is re-set (new password)."""
    fake = FakeTgtadm()
    tid = tgt.TgtAdm(execute=fake).create_target(
        IQN_A, "/dev/loop3", chap=("chapuser", "newpass"),
        initiators=["iqn.1994-05.com.example:host1"])
    assert tid == 1
    assert fake.changes() == [
        ("--mode", "account", "--op", "delete", "--user", "chapuser"),
        ("--mode", "account", "--op", "new", "--user", "chapuser",
         "--password", "newpass"),
        ("--mode", "account", "--op", "bind", "--tid", "1",
         "--user", "chapuser"),
    ]


def test_first_target_gets_tid_1():
    fake = FakeTgtadm(targets="", accounts=())
    assert tgt.TgtAdm(execute=fake).create_target(IQN_NEW, "/dev/x") == 1


def test_acl_binds_by_initiator_name_never_by_address():
    fake = FakeTgtadm()
    tgt.TgtAdm(execute=fake).bind_initiator(1, "iqn.x:y")
    (call,) = fake.changes()
    assert "--initiator-name" in call
    assert "-I" not in call and "--initiator-address" not in call


def test_unbind_initiator_is_idempotent():
    fake = FakeTgtadm()
    adm = tgt.TgtAdm(execute=fake)
    adm.unbind_initiator(IQN_A, "iqn.1994-05.com.example:host1")
    adm.unbind_initiator(IQN_A, "iqn.1994-05.com.example:other")
    adm.unbind_initiator(IQN_NEW, "iqn.1994-05.com.example:host1")
    assert fake.changes() == [
        ("--mode", "target", "--op", "unbind", "--tid", "1",
         "--initiator-name", "iqn.1994-05.com.example:host1")]


def test_delete_target_forces_and_drops_its_unused_accounts():
    fake = FakeTgtadm()
    adm = tgt.TgtAdm(execute=fake)
    adm.delete_target(IQN_A)
    assert fake.changes() == [
        ("--mode", "target", "--op", "delete", "--force", "--tid", "1"),
        ("--mode", "account", "--op", "delete", "--user", "chapuser"),
    ]


def test_delete_missing_target_is_a_no_op():
    fake = FakeTgtadm()
    tgt.TgtAdm(execute=fake).delete_target(IQN_NEW)
    assert fake.changes() == []
