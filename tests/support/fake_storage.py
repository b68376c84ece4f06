"""Fakes of the storage commands minicinder runs, for unit tests that
need no LVM and no tgtd: :class:`FakeExecute` stands in for
``ministack.executor.execute`` (an argv-prefix answer table; lvm's
``--config`` option is ignored when matching), :class:`FakeTgtadm` for
``tgtadm`` and tgtd's account socket (its ``show`` answers come from
:data:`TGTADM_SHOW`, a sample of two targets, unless given). Both record
every call."""

# `tgtadm --lld iscsi --mode target --op show` of two targets: one with a
# session, a disk LUN, CHAP accounts and an ACL; one bare.
TGTADM_SHOW = """\
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


class FakeExecute:
    """Records every argv; answers from a table of argv-prefix -> output.

    An answer may be a string (stdout) or an exception instance to raise.
    """

    def __init__(self, answers=None):
        self.calls = []
        self.answers = answers or {}

    def __call__(self, *argv, **kwargs):
        argv = tuple(str(a) for a in argv)
        self.calls.append(argv)
        for prefix, answer in self.answers.items():
            if argv[:len(prefix)] == prefix or strip_lvm_config(argv)[
                    :len(prefix)] == prefix:
                if isinstance(answer, Exception):
                    raise answer
                return answer, ""
        return "", ""

    def commands(self, name):
        return [c for c in self.calls if c[0] == name]


def strip_lvm_config(argv):
    """argv without lvm's --config option, to match answers simply."""
    if len(argv) > 2 and argv[1] == "--config":
        return argv[:1] + argv[3:]
    return argv


class FakeTgtadm:
    """Records tgtadm calls; `show` answers come from the attributes."""

    def __init__(self, targets=TGTADM_SHOW, accounts=("chapuser", "outuser")):
        self.targets = targets
        self.accounts = list(accounts)
        self.calls = []

    def new_account(self, user, password):
        """What the adapter sends over tgtd's socket instead of argv."""
        self.calls.append(("socket", "account", "new", user, password))
        self.accounts.append(user)

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
