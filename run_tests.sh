#!/usr/bin/env bash
# The test command: bring up the lab, then run the test tiers.
#
#   ./run_tests.sh            # everything: ./lab.sh, lint, unit,
#                             # quickstart, functional, tempest-style,
#                             # security, fuzz, upstream-tempest
#   ./run_tests.sh quickstart # what README and docs/ tell people to type,
#                             # as typed (tests/quickstart): ./lab.sh
#                             # again, unstack/clean then ./lab.sh, every
#                             # command block of the docs
#   ./run_tests.sh multinode  # COMPUTE_HOSTS=2 ./lab.sh, then the tests
#                             # of two compute hosts (tests/multinode);
#                             # the lab keeps two hosts afterwards
#   ./run_tests.sh fuzz       # the fuzz tier (tests/fuzz/README.md)
#   ./run_tests.sh upstream-tempest  # upstream tempest, unmodified
#                             # (tools/upstream-tempest)
#   ./run_tests.sh labvm      # ./lab.sh --vm from no VM, then the lab VM's
#                             # tests (tests/labvm, docs/labvm.md); needs
#                             # no lab on this machine
#   ./run_tests.sh unit       # one tier (unit needs no root and no lab)
#
# It must work on a fresh Debian 12 machine as root: devstack/stack.sh
# installs the Debian packages, the venv, RabbitMQ, tgtd, libvirtd, the
# volume group and the guest image, idempotently.
set -o errexit -o nounset -o pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$TOP"
VENV=${VENV_DIR:-/opt/stack/venv}
# The functional tier may restart the shared services (RabbitMQ, libvirtd,
# tgtd) to prove recovery; that is safe here, where nothing else runs.
export MINISTACK_SHARED_FAULTS=${MINISTACK_SHARED_FAULTS:-1}
# A missing lab is a failure, not a skip, when the lab was just brought up.
export MINISTACK_REQUIRE_LAB=${MINISTACK_REQUIRE_LAB:-1}
tiers=("$@")
# The single-host tiers first; multinode turns the lab into two hosts,
# which upstream tempest then runs on (min_compute_nodes = 2).
# The labvm tier (./run_tests.sh labvm) is not in the default run: from
# no VM it takes about 34 minutes on two cores, past CI's time budget
# (docs/labvm.md).
[ ${#tiers[@]} -gt 0 ] || tiers=(lint unit quickstart functional tempest security fuzz multinode upstream-tempest)

needs_lab=0 quickstart=0
for tier in "${tiers[@]}"; do
    case $tier in quickstart|functional|tempest|security|fuzz|multinode|upstream-tempest) needs_lab=1 ;; esac
    [ "$tier" = quickstart ] && quickstart=1
done

# With the quickstart tier, the lab comes up the way README's first
# command brings it up: ./lab.sh, as typed (on CI, on a fresh machine).
# Its transcript is what tests/quickstart/test_lab_sh.py reads first.
BRING_UP_LOG=/opt/stack/logs/lab.sh.bring-up.log
if [ $quickstart = 1 ]; then
    echo "== ./lab.sh (lab bring-up, README's first command; transcript in $BRING_UP_LOG)"
    (umask 077 && mkdir -p "$(dirname "$BRING_UP_LOG")")
    ./lab.sh 2>&1 | tee "$BRING_UP_LOG"
elif [ $needs_lab = 1 ] || [ ! -x "$VENV/bin/pytest" ]; then
    echo "== devstack/stack.sh (lab bring-up)"
    bash devstack/stack.sh
fi

# A test run that was killed (CI's runner ends every process) cleans up
# nothing: the private stacks it left (domains, targets, LVs) would be
# the next run's audit findings.
if [ $needs_lab = 1 ]; then
    echo "== leftovers of killed test runs (tests/support/private_stack.py)"
    "$VENV/bin/python" -m tests.support.private_stack
fi

# run_tier NAME DIR [ALLOW_EMPTY]: pytest exits 5 when it collects nothing;
# that is accepted only for a tier that has no tests yet.
run_tier() {
    local name=$1 dir=$2 allow_empty=${3:-no} rc=0
    echo "== $name tests ($dir)"
    # The ten slowest, after the summary: where a tier's time goes.
    "$VENV/bin/pytest" -q -p no:cacheprovider --durations=10 "$dir" || rc=$?
    if [ $rc = 5 ] && [ "$allow_empty" = yes ]; then
        echo "   ($name tier has no tests yet)"
        return 0
    fi
    return $rc
}

# The unit tier needs no lab. In a run with the quickstart tier too it
# runs beside it (that tier mostly waits on deployments and guests), its
# output kept in UNIT_LOG and printed when both are done: the unit tests
# then cost CI no time of their own.
UNIT_LOG=/opt/stack/logs/unit-tier.log
unit_beside=no unit_pid=
if [[ " ${tiers[*]} " == *" unit "* && " ${tiers[*]} " == *" quickstart "* ]]; then
    unit_beside=yes
fi

# unit_result: wait for the unit tier run beside quickstart, print it, and
# give its exit status.
unit_result() {
    local rc=0
    [ -n "$unit_pid" ] || return 0
    wait "$unit_pid" || rc=$?
    unit_pid=
    cat "$UNIT_LOG"
    return $rc
}

for tier in "${tiers[@]}"; do
    case $tier in
        lint)
            # The same checks as tox -e pep8, with the lab venv's tools.
            PATH="$VENV/bin:$PATH" tools/lint.sh ;;
        unit)
            if [ $unit_beside = yes ]; then
                echo "== unit tests (tests/unit), beside the quickstart tier; output below it"
                (umask 077 && mkdir -p "$(dirname "$UNIT_LOG")")
                run_tier unit tests/unit > "$UNIT_LOG" 2>&1 &
                unit_pid=$!
            else
                run_tier unit tests/unit
            fi ;;
        quickstart)
            rc=0
            run_tier quickstart tests/quickstart || rc=$?
            unit_result || rc=$?
            [ $rc = 0 ] || exit $rc ;;
        functional) run_tier functional tests/functional ;;
        tempest)    run_tier tempest-style tests/tempest_style yes ;;
        security)   run_tier security tests/security ;;
        fuzz)       run_tier fuzz tests/fuzz ;;
        multinode)  run_tier multinode tests/multinode ;;
        upstream-tempest) tools/upstream-tempest ;;
        labvm)
            # From no VM (the image is rebuilt only when stale).
            MINISTACK_LABVM_FRESH=${MINISTACK_LABVM_FRESH:-1} run_tier labvm tests/labvm ;;
        *) echo "unknown tier $tier (lint, unit, quickstart, functional, tempest, security, fuzz, multinode, upstream-tempest, labvm)" >&2; exit 2 ;;
    esac
done
# A unit tier started beside quickstart and not yet waited for.
unit_result
