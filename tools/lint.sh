#!/usr/bin/env bash
# tools/lint.sh - the static checks, the same for `./run_tests.sh lint`
# and `tox -e pep8` (both run this script).
#
# The Python tools (ruff, lint-imports, python) come from PATH: the lab
# venv's bin under run_tests.sh, the tox environment's under tox.
# ShellCheck is Debian's package (devstack/lib/packages installs it);
# its settings are in .shellcheckrc.
set -o errexit -o nounset -o pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

# shell_scripts - the shell scripts of devstack/, tools/ and the top
# level, found by their #! line (devstack/lib/* and stackrc have one too).
function shell_scripts {
    local f
    for f in lab.sh run_tests.sh tools/* $(find devstack -type f | sort); do
        [[ -f $f ]] || continue
        head -n 1 "$f" | grep -qE '^#!.*[/ ](ba|da)?sh( |$)' && echo "$f"
    done
    return 0
}

# check title command... - run one check; every check runs, and the
# script fails at the end if any did.
failed=()
function check {
    local title=$1
    shift
    echo "== $title"
    "$@" || failed+=("$title")
}

check "ruff" ruff check ministack miniapi minicompute minicinder \
    ministack_audit ministack_course tests tools
check "import-linter (the contracts in pyproject.toml)" lint-imports
check "RPC seam (topics and method names only in rpcapi)" \
    python tools/lint_rpc_seam.py
check "module size (production modules of 400 lines at most)" \
    python tools/lint_module_size.py
if ! command -v shellcheck >/dev/null; then
    echo "shellcheck is not installed (apt-get install shellcheck)" >&2
    exit 1
fi
mapfile -t scripts < <(shell_scripts)
check "shellcheck (devstack/, tools/, lab.sh, run_tests.sh)" \
    shellcheck "${scripts[@]}"

if [[ ${#failed[@]} -gt 0 ]]; then
    printf 'lint failed: %s\n' "${failed[@]}" >&2
    exit 1
fi
echo "lint: all checks passed"
