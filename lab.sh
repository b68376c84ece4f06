#!/usr/bin/env bash
# The main job: deploy the stack, then walk the seed's attach/detach journey
# on the demo server, showing every ledger at each phase.
#
#   ./lab.sh                 # as root, on Debian 12 (a fresh machine is fine)
#   COMPUTE_HOSTS=2 ./lab.sh # two compute hosts: the journey on each
#   ./lab.sh --vm            # the same, inside the lab VM (tools/labvm,
#                            # docs/labvm.md): systemd, kernel iSCSI, LVM
#
# Both steps are safe to repeat. devstack/unstack.sh stops the stack;
# devstack/clean.sh also removes all its state.
set -o errexit -o nounset -o pipefail
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [[ ${1:-} == --vm ]]; then
    shift
    exec "$TOP/tools/labvm" lab "$@"
fi
bash "$TOP/devstack/stack.sh"
set +o nounset  # stackrc is written for devstack-style bash
source "$TOP/devstack/stackrc"
source "$TOP/devstack/lib/compute_hosts"
auth=()
[[ ${AUTH_STRATEGY:-keystone} == keystone ]] || auth=(--noauth)
journey=("$VENV_DIR/bin/python" "$TOP/tools/journey.py" "${auth[@]}"
         --image "$GUEST_IMAGE_NAME" --flavor "$DEMO_FLAVOR")
"${journey[@]}"
# With more compute hosts (COMPUTE_HOSTS=N), the journey on each one's
# demo server too.
for host in $(compute_host_names); do
    "${journey[@]}" --host "$host"
done
