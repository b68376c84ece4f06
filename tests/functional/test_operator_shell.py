"""What an operator types in a new root shell after stack.sh, verbatim.

Each command runs in a fresh login shell (``bash -lc``): nothing of this
test's environment (no venv on PATH, no OS_* variables) reaches it, as
for someone who just logged in (``tests/support/login_shell.py``).
DevStack habits: the clients are on PATH, ``source devstack/openrc admin
admin`` (or ``demo demo``) sets the credentials. The command blocks of
README.md and docs/ (the By-hand journey and the triage among them) are
run by ``tests/quickstart/test_doc_blocks.py``.
"""

import json
import os
import shutil

import pytest
import sqlalchemy

from tests.support.login_shell import login_shell
from tests.tempest_style import config

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OPENRC = os.path.join(REPO, "devstack", "openrc")


@pytest.fixture(scope="module", autouse=True)
def lab():
    if not os.path.exists("/etc/openstack/clouds.yaml") or \
            shutil.which("openstack", path="/usr/local/bin") is None:
        pytest.skip("no deployed lab (devstack/stack.sh)")


@pytest.mark.parametrize("client", ["openstack", "cinder", "nova",
                                    "ministack-audit", "ministack-fault",
                                    "ministack-guest"])
def test_clients_are_on_path(client):
    done = login_shell("command -v %s && %s --help" % (client, client))
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.splitlines()[0] == "/usr/local/bin/" + client


@pytest.mark.parametrize("user, project", [("admin", "admin"),
                                           ("demo", "demo")])
def test_openrc_as_in_devstack(user, project):
    done = login_shell(
        "source %s %s %s && openstack token issue -f json" % (
            OPENRC, user, project))
    assert done.returncode == 0, done.stderr[-500:]
    token = json.loads(done.stdout)
    assert token["id"]
    listed = login_shell(
        "source %s %s %s && openstack project list --my-projects -f json"
        % (OPENRC, user, project))
    assert listed.returncode == 0, listed.stderr[-500:]
    assert project in [p["Name"] for p in json.loads(listed.stdout)]


def test_openrc_defaults_to_demo_and_feeds_the_legacy_clients():
    done = login_shell(
        "source %s && echo $OS_USERNAME/$OS_PROJECT_NAME && "
        "cinder --os-volume-api-version 3.44 list && nova list" % OPENRC)
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.splitlines()[0] == "demo/demo"


def test_clouds_yaml_works_from_a_new_shell():
    done = login_shell("openstack --os-cloud ministack server list -f json")
    assert done.returncode == 0, done.stderr[-500:]
    assert isinstance(json.loads(done.stdout), list)


def test_ministackctl_status_table_and_restart():
    done = login_shell("ministackctl status")
    assert done.returncode == 0, done.stdout + done.stderr[-500:]
    table, _, faults = done.stdout.partition("\n\n")
    rows = table.splitlines()
    assert rows[0].split() == ["SERVICE", "PID", "UP", "SINCE", "HEALTH"]
    services = {row.split()[0]: row for row in rows[1:]}
    # Then what ministack-fault has armed: nothing, on a lab at rest.
    assert faults.splitlines()[:2] == ["FAULTS (ministack-fault status)",
                                       "no fault armed"], faults
    expected = {"rabbitmq", "memcached", "tgtd", "libvirtd", "keystone",
                "minicinder", "miniapi", "ministack-course", "minicompute"}
    if _deployed_database_type() in ("mysql", "mariadb"):
        expected.add("mysql")      # the MariaDB server stack.sh runs
        logs = login_shell("ministackctl logs mysql")
        assert logs.returncode == 0, logs.stderr
    assert set(services) == expected
    assert all(" ok (" in row for row in services.values()), done.stdout
    before = services["miniapi"].split()[1]
    # A restart asked for is a fresh daemon and supervisor, not a crash.
    done = login_shell("ministackctl restart miniapi", timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr[-500:]
    done = login_shell("ministackctl status miniapi")
    assert done.returncode == 0, done.stdout
    after = done.stdout.splitlines()[1].split()[1]
    assert after != before
    # The journey page is started again with miniapi.
    done = login_shell("ministackctl status ministack-course")
    assert done.returncode == 0, done.stdout
    # The supervisor logged a requested stop, not an exit it counts.
    logs = login_shell("ministackctl logs miniapi")
    assert logs.returncode == 0
    tail = logs.stdout.split("supervise[miniapi]: stopped")[-1]
    assert "supervise[miniapi]: stopped" in logs.stdout
    assert "exited with" not in tail and "started pid" in tail


def test_reconcile_grace_is_a_local_conf_setting():
    done = login_shell(
        "sed -n '/^\\[compute\\]/,/^\\[/p' /etc/ministack/minicompute.conf")
    assert "reconcile_grace = 120" in done.stdout
    assert "reconcile_interval = 60" in done.stdout


def test_ministack_guest_runs_a_command_in_the_demo_server():
    """The seed's last check, lsblk inside the guest, in one line."""
    done = login_shell("ministack-guest demo -- lsblk")
    assert done.returncode == 0, done.stderr[-500:]
    assert "vda" in done.stdout
    done = login_shell("ministack-guest demo -- sh -c 'echo out; "
                        "echo err >&2; exit 3'")
    assert (done.returncode, done.stdout, done.stderr) == (3, "out\n",
                                                           "err\n")
    done = login_shell("ministack-guest no-such-server -- true")
    assert done.returncode == 2
    assert "no server 'no-such-server'" in done.stderr


def test_journey_teaches_the_commands_and_hides_the_secrets():
    """tools/journey.py (what ./lab.sh runs): each step's operator
    command, connection_info with its CHAP secret masked, the volume
    delete waited for, a total time."""
    done = login_shell("/opt/stack/venv/bin/python %s/tools/journey.py"
                       % REPO, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-1000:]
    out = done.stdout
    for expected in ("$ openstack volume create --size 1 journey-",
                     "$ openstack server add volume ",
                     "$ openstack --os-volume-api-version 3.44 volume "
                     "attachment list --volume-id ",
                     "block_device_mapping WHERE volume_id=",
                     "$ virsh domblklist instance-",
                     "-- lsblk", "$ openstack server remove volume ",
                     "$ openstack server event list ",
                     "$ openstack volume delete "):
        assert expected in out, expected
    infos = [json.loads(line.split("connection_info: ", 1)[1])
             for line in out.splitlines() if "connection_info: {" in line]
    assert infos and all(i["auth_password"] == "***" for i in infos)
    assert " is gone" in out
    assert "journey complete in " in out


def _deployed_database_type():
    with open("/var/lib/ministack/database_type") as handle:
        return handle.read().strip()


def _live_bdms():
    """How many BDM rows are live, through the suite's read-only nova
    database URL (tempest.conf's ``[validation] nova_db_url``)."""
    engine = sqlalchemy.create_engine(config.load().nova_db_url)
    try:
        with engine.connect() as conn:
            return conn.execute(sqlalchemy.text(
                "SELECT COUNT(*) FROM block_device_mapping WHERE deleted=0"
            )).scalar()
    finally:
        engine.dispose()


def _bdm_listing_shown(stdout, header):
    """Whether the seed's BDM query printed ``header`` (in one of its
    first lines), or nothing because no BDM is live: mysql and sqlite3 print no
    column names for an empty result (the lab is often without one)."""
    if not stdout.strip():
        return _live_bdms() == 0
    return any(header in line for line in stdout.splitlines()[:3])


def test_seed_sql_runs_as_written_through_mysql():
    """The seed's triage SQL, typed as in a DevStack: root's ``mysql``
    reaches the lab's nova database with no password and no options."""
    kind = _deployed_database_type()
    if kind not in ("mysql", "mariadb"):
        pytest.skip("the lab runs DATABASE_TYPE=%s" % kind)
    done = login_shell(
        'mysql -e "SELECT device_name, attachment_id, connection_info IS NOT'
        ' NULL FROM nova.block_device_mapping WHERE deleted=0"')
    assert done.returncode == 0, done.stderr[-500:]
    assert _bdm_listing_shown(done.stdout, "\t".join([
        "device_name", "attachment_id", "connection_info IS NOT NULL"])), \
        done.stdout[:500]
    done = login_shell('mysql -e "SHOW DATABASES"')
    assert {"nova", "cinder", "keystone"} <= set(done.stdout.split())


def test_stack_summary_names_the_database_and_its_query():
    """stack.sh's summary says which database the lab uses and prints the
    seed's query for it; that query runs as printed."""
    with open("/opt/stack/logs/stack.sh.log") as handle:
        lines = handle.read().splitlines()
    at = max(i for i, line in enumerate(lines)
             if line.strip().startswith("database:"))
    assert _deployed_database_type() in lines[at]
    query = lines[at + 1].strip()
    assert "block_device_mapping" in query
    done = login_shell(query)
    assert done.returncode == 0, done.stderr[-500:]
    assert _bdm_listing_shown(done.stdout, "device_name"), done.stdout[:500]
