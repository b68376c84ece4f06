#!/usr/bin/env bash
# The test command: bring up the lab, then run the test tiers.
#
#   ./run_tests.sh            # everything: stack.sh, unit, functional,
#                             # tempest-style, security, fuzz,
#                             # upstream-tempest
#   ./run_tests.sh fuzz       # the fuzz tier (tests/fuzz/README.md)
#   ./run_tests.sh upstream-tempest  # upstream tempest, unmodified
#                             # (tools/upstream-tempest)
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
[ ${#tiers[@]} -gt 0 ] || tiers=(lint unit functional tempest security fuzz upstream-tempest)

needs_lab=0
for tier in "${tiers[@]}"; do
    case $tier in functional|tempest|security|fuzz|upstream-tempest) needs_lab=1 ;; esac
done

if [ $needs_lab = 1 ] || [ ! -x "$VENV/bin/pytest" ]; then
    echo "== devstack/stack.sh (lab bring-up)"
    bash devstack/stack.sh
fi

# run_tier NAME DIR [ALLOW_EMPTY]: pytest exits 5 when it collects nothing;
# that is accepted only for a tier that has no tests yet.
run_tier() {
    local name=$1 dir=$2 allow_empty=${3:-no} rc=0
    echo "== $name tests ($dir)"
    "$VENV/bin/pytest" -q -p no:cacheprovider "$dir" || rc=$?
    if [ $rc = 5 ] && [ "$allow_empty" = yes ]; then
        echo "   ($name tier has no tests yet)"
        return 0
    fi
    return $rc
}

for tier in "${tiers[@]}"; do
    case $tier in
        lint)
            echo "== ruff"
            "$VENV/bin/ruff" check ministack miniapi minicompute minicinder ministack_audit tests tools
            echo "== import-linter (the contracts in pyproject.toml)"
            "$VENV/bin/lint-imports"
            echo "== RPC seam (topics and method names only in rpcapi)"
            "$VENV/bin/python" tools/lint_rpc_seam.py ;;
        unit)       run_tier unit tests/unit ;;
        functional) run_tier functional tests/functional ;;
        tempest)    run_tier tempest-style tests/tempest_style yes ;;
        security)   run_tier security tests/security ;;
        fuzz)       run_tier fuzz tests/fuzz ;;
        upstream-tempest) tools/upstream-tempest ;;
        *) echo "unknown tier $tier (lint, unit, functional, tempest, security, fuzz, upstream-tempest)" >&2; exit 2 ;;
    esac
done
