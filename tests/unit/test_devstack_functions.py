"""devstack/functions: the shell helpers, run in a real bash."""

import os
import subprocess

FUNCTIONS = os.path.join(os.path.dirname(__file__), "..", "..", "devstack",
                         "functions")


def bash(script, **env):
    """Run ``script`` after sourcing devstack/functions; return stdout."""
    result = subprocess.run(
        ["bash", "-c", 'source "$FUNCTIONS"\n' + script],
        env=dict(os.environ, FUNCTIONS=FUNCTIONS, **env),
        capture_output=True, text=True, check=True)
    return result.stdout


def test_iniset_creates_file_and_section(tmp_path):
    conf = tmp_path / "etc" / "minicompute.conf"
    bash('iniset "$F" libvirt virt_type qemu', F=str(conf))
    assert conf.read_text() == "\n[libvirt]\nvirt_type = qemu\n"


def test_iniset_replaces_only_in_its_section(tmp_path):
    conf = tmp_path / "a.conf"
    conf.write_text("[DEFAULT]\nvirt_type = x\n\n[libvirt]\n"
                    "virt_type = kvm\nconnection_uri = qemu:///system\n"
                    "[cinder]\nhttp_timeout = 60\n")
    bash('iniset "$F" libvirt virt_type qemu\n'
         'iniset "$F" cinder http_retries 3\n'
         'iniset "$F" libvirt iscsi_initiator qemu', F=str(conf))
    assert conf.read_text() == (
        "[DEFAULT]\nvirt_type = x\n\n[libvirt]\nvirt_type = qemu\n"
        "connection_uri = qemu:///system\niscsi_initiator = qemu\n"
        "[cinder]\nhttp_timeout = 60\nhttp_retries = 3\n")


def test_iniget(tmp_path):
    conf = tmp_path / "a.conf"
    conf.write_text("[DEFAULT]\nvirt_type = x\n[libvirt]\nvirt_type = kvm\n")
    assert bash('iniget "$F" libvirt virt_type', F=str(conf)) == "kvm\n"
    assert bash('iniget "$F" libvirt nope', F=str(conf)) == ""


def test_pid_helpers(tmp_path):
    """A PID file counts only while its process lives and matches."""
    out = bash('write_pid me $$\n'
               'is_running me bash && echo running\n'
               # (the pattern comes from the environment: this script's own
               # text is part of bash's command line)
               'is_running me "$OTHER" || echo mismatch\n'
               'write_pid gone 999999999\n'
               'is_running gone bash || echo gone\n'
               'stop_process gone bash\n'
               '[[ -e $(pid_file gone) ]] || echo forgot',
               STATUS_DIR=str(tmp_path), OTHER="no-such-command")
    assert out.split() == ["running", "mismatch", "gone", "forgot"]


def test_is_service_enabled():
    out = bash('is_service_enabled tgt && echo yes\n'
               'is_service_enabled tg || echo no\n'
               'is_service_enabled nope lvm && echo any',
               ENABLED_SERVICES="rabbit,tgt,lvm")
    assert out.split() == ["yes", "no", "any"]


def test_unstack_and_clean_use_the_deployed_database_type(tmp_path):
    """stack.sh records DATABASE_TYPE; unstack.sh and clean.sh then stop
    and drop that server's databases even when run without the variable."""
    script = 'DATABASE_TYPE=sqlite\nuse_deployed_database_type\n' \
             'echo "$DATABASE_TYPE"'
    assert bash(script, DATA_DIR=str(tmp_path)) == "sqlite\n"
    (tmp_path / "database_type").write_text("postgresql\n")
    assert bash(script, DATA_DIR=str(tmp_path)) == "postgresql\n"
    # A lab recorded as mariadb (the older name) is DevStack's mysql.
    (tmp_path / "database_type").write_text("mariadb\n")
    assert bash(script, DATA_DIR=str(tmp_path)) == "mysql\n"


def test_iniset_keeps_the_value_verbatim(tmp_path):
    """The value reaches awk through the environment (not argv, which
    every local user can read), so no escape sequence is interpreted."""
    conf = tmp_path / "a.conf"
    bash('iniset "$F" service_user password "$V"', F=str(conf),
         V=r"a\tb'c$d")
    assert conf.read_text() == "\n[service_user]\npassword = a\\tb'c$d\n"


def test_run_process_gives_the_daemon_umask_077(tmp_path):
    """What a daemon creates later (a database, an overlay) is
    owner-only; its PID file names the daemon itself."""
    out = bash('umask 022\n'
               'run_process probe sh -c \'touch "$0/made"; sleep 5\' "$D"\n'
               'pid=$(read_pid probe)\n'
               'for _ in $(seq 100); do [[ -e $D/made ]] && break; '
               'sleep 0.05; done\n'
               'grep Umask /proc/$pid/status | tr -d "\\t "\n'
               'stat -c %a "$D/made" "$LOGDIR/probe.log"\n'
               'kill "$pid"',
               STATUS_DIR=str(tmp_path), LOGDIR=str(tmp_path / "logs"),
               D=str(tmp_path))
    assert out.split() == ["Umask:0077", "600", "600"]


def test_with_umask_restores_the_callers(tmp_path):
    out = bash('umask 077\n'
               'f() { umask; touch "$1"; }\n'
               'with_umask 022 f "$D/x"\n'
               'umask\n'
               'stat -c %a "$D/x"', D=str(tmp_path))
    assert out.split() == ["0022", "0077", "644"]


def test_running_with_config(tmp_path):
    """A daemon counts as up to date only with the config it started
    with."""
    conf = tmp_path / "d.conf"
    conf.write_text("a = 1\n")
    out = bash('write_pid d $$\n'
               'running_with_config d bash "$C" || echo unknown\n'
               'record_config d "$C"\n'
               'running_with_config d bash "$C" && echo same\n'
               'echo "a = 2" > "$C"\n'
               'running_with_config d bash "$C" || echo changed',
               STATUS_DIR=str(tmp_path), C=str(conf))
    assert out.split() == ["unknown", "same", "changed"]


def test_code_change_outside_git_restarts(tmp_path):
    """The lab VM's copy has no .git: a synced code change still counts
    (every file of the packages is fingerprinted, __pycache__ aside)."""
    repo = tmp_path / "repo"
    (repo / "minicinder" / "__pycache__").mkdir(parents=True)
    code = repo / "minicinder" / "api.py"
    code.write_text("x = 1\n")
    conf = tmp_path / "d.conf"
    conf.write_text("a = 1\n")
    out = bash('write_pid d $$\n'
               'record_config d "$C"\n'
               'echo junk > "$REPO_DIR/minicinder/__pycache__/api.pyc"\n'
               'running_with_config d bash "$C" && echo same\n'
               'echo "x = 2" > "$REPO_DIR/minicinder/api.py"\n'
               'running_with_config d bash "$C" || echo changed',
               STATUS_DIR=str(tmp_path), C=str(conf), REPO_DIR=str(repo))
    assert out.split() == ["same", "changed"]


def test_quietly_keeps_the_output_in_the_log_only(tmp_path):
    """pip and apt-get speak to LOGFILE, not to the terminal (stdout)."""
    log = tmp_path / "stack.sh.log"
    log.write_text("before\n")
    out = bash('quietly "pip install" sh -c "echo Collecting x; '
               'echo warn >&2"; echo "rc=$?"', LOGFILE=str(log))
    assert out == "rc=0\n"
    assert log.read_text() == ("before\n--- pip install (sh output follows)"
                               "\nCollecting x\nwarn\n")


def test_quietly_shows_the_end_of_a_failure_and_its_status(tmp_path):
    log = tmp_path / "stack.sh.log"
    log.write_text("an earlier step said this\n")
    result = subprocess.run(
        ["bash", "-c", 'source "$FUNCTIONS"\nquietly "apt-get install" '
         'sh -c "echo E: Unable to locate package nope; exit 100"\n'
         'echo "rc=$?"'],
        env=dict(os.environ, FUNCTIONS=FUNCTIONS, LOGFILE=str(log)),
        capture_output=True, text=True, check=True)
    assert result.stdout == "rc=100\n"
    assert "apt-get install failed (100)" in result.stderr
    assert "E: Unable to locate package nope" in result.stderr
    assert "an earlier step" not in result.stderr


def test_quietly_without_a_log_just_runs(tmp_path):
    out = bash('quietly "pip" echo hello', LOGFILE="")
    assert out == "hello\n"


def test_summary_lines_name_the_phase_and_the_elapsed_time():
    out = bash('STACK_START=$((SECONDS - 83))\n'
               'timed python echo_summary "Installing Python packages"\n'
               'echo_summary "done"\necho "${STACK_TIMINGS[0]}"')
    assert out == ("==> [python 1:23] Installing Python packages\n"
                   "==> done\npython: 0s\n")
