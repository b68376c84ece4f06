#!/usr/bin/env bash
#
# clean.sh - stop the lab and remove all its state
#
# After unstack.sh: the daemons' own cleanups (HOOK), the lab's iSCSI
# targets, the RabbitMQ vhost and user, the volume group with its loop
# devices and backing file, the guest image and kernel cache, and
# everything under $DATA_DIR (databases), $CONF_DIR and $STATUS_DIR.
# Packages, the venv and the logs are kept. stack.sh rebuilds the rest.

set -o errexit -o pipefail
[[ -n $STACK_DEBUG ]] && set -o xtrace

TOP_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$TOP_DIR/functions"
run_exclusively "$0" "$@"
source "$TOP_DIR/stackrc"
use_deployed_database_type
[[ $EUID -eq 0 ]] || die $LINENO "clean.sh must run as root"

for lib in packages python permissions database rabbitmq tgt iscsi libvirt lvm image upstream_tempest compute_hosts; do
    source "$TOP_DIR/lib/$lib"
done
MINISTACK_SERVICES=(minicompute miniapi minicinder keystone)
for svc in "${MINISTACK_SERVICES[@]}"; do
    [[ -r $TOP_DIR/lib/$svc ]] && source "$TOP_DIR/lib/$svc"
done

# A subnode (docs/multinode.md) owns only its compute host: the
# controller's databases, broker, exports and accounts are not its to
# remove.
if is_subnode; then
    start_libvirt
    cleanup_minicompute
    cleanup_libvirt
    "$TOP_DIR/unstack.sh"
    cleanup_image
    echo_summary "Removing $DATA_DIR $CONF_DIR $STATUS_DIR"
    remove_state "${DATA_DIR:?}" "${CONF_DIR:?}" "${STATUS_DIR:?}"
    echo_summary "ministack subnode cleaned (its service stays in the controller's" \
        "list until removed there: openstack compute service delete)"
    exit 0
fi

# Cleanups that need the services running come first.
# The guests are removed through libvirtd: start it if unstack.sh stopped
# it (QEMU outlives libvirtd, so the domains are still there).
if is_service_enabled libvirt; then
    start_libvirt
fi
for svc in "${MINISTACK_SERVICES[@]}"; do
    call_if_defined "cleanup_$svc"
done
# The other compute hosts: guests and secrets through their libvirtd,
# then their daemons, namespaces, veths, files and the lab's bridge.
cleanup_compute_hosts
# The kernel initiator's sessions (guests gone), before their targets.
cleanup_iscsi
cleanup_tgt
cleanup_libvirt
cleanup_rabbitmq
cleanup_database

"$TOP_DIR/unstack.sh"

# Now that tgtd (and QEMU) let go of them: loops, VG, backing file.
cleanup_lvm
cleanup_image
cleanup_upstream_tempest
echo_summary "Removing $DATA_DIR $CONF_DIR $STATUS_DIR"
remove_state "${DATA_DIR:?}" "${CONF_DIR:?}" "${STATUS_DIR:?}"
# Under systemd: the devstack@ units and the drop-ins on Debian's units.
if uses_systemd; then
    remove_lab_units
fi
echo_summary "ministack lab cleaned"
