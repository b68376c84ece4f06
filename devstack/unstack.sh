#!/usr/bin/env bash
#
# unstack.sh - stop what stack.sh started
#
# Only processes with a PID file in $STATUS_DIR (i.e. started by
# stack.sh) are stopped, by PID. State stays: the volume group and its
# loop device, the image, the databases and configs. Use clean.sh to
# remove those too.

set -o errexit -o pipefail
[[ -n $STACK_DEBUG ]] && set -o xtrace

TOP_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$TOP_DIR/functions"
run_exclusively "$0" "$@"
source "$TOP_DIR/stackrc"
use_deployed_database_type
[[ $EUID -eq 0 ]] || die $LINENO "unstack.sh must run as root"

for lib in packages python database rabbitmq memcached tgt iscsi libvirt lvm image compute_hosts; do
    source "$TOP_DIR/lib/$lib"
done
# HOOK: the daemons' libs stop first, in reverse start order.
MINISTACK_SERVICES=(minicompute miniapi minicinder keystone)
for svc in "${MINISTACK_SERVICES[@]}"; do
    if [[ -r $TOP_DIR/lib/$svc ]]; then
        source "$TOP_DIR/lib/$svc"
        call_if_defined "stop_$svc"
    fi
done

# The other compute hosts of this machine: their minicompute, libvirtd
# and virtlogd (their namespaces stay, as this machine's network does).
stop_compute_hosts
stop_memcached
stop_libvirt
stop_iscsi
stop_tgt
stop_rabbitmq
stop_database
echo_summary "ministack lab stopped"
