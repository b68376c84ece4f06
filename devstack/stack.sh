#!/usr/bin/env bash
#
# stack.sh - bring up the ministack lab on this machine (Debian 12, root)
#
# Installs the Debian packages and the Python venv, then starts RabbitMQ,
# memcached (keystone's cache), tgtd, virtlogd and libvirtd, creates the
# LVM volume group and builds the guest image. Every step checks what is
# already there: running stack.sh again changes nothing. Undo with
# unstack.sh (stop what stack.sh started) or clean.sh (also remove all
# state).
#
# Settings: stackrc, overridden by local.conf (see local.conf.sample).
#
# Files: stack.sh runs with umask 077, so everything it and the daemons
# write (configs, databases, keys, client files, logs) is readable by
# root only; the steps that install software for every user (packages,
# the venv) and what QEMU must read (lib/permissions) set their modes
# themselves. Passwords not set in local.conf are generated once and kept
# in $PASSWORDS_FILE (root-only).

set -o errexit -o pipefail
[[ -n $STACK_DEBUG ]] && set -o xtrace

TOP_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$TOP_DIR/functions"
run_exclusively "$0" "$@"
source "$TOP_DIR/stackrc"
[[ $EUID -eq 0 ]] || die $LINENO "stack.sh must run as root"
umask 077

# DevStack's LOGFILE: this run's whole output, kept (appended) while the
# terminal shows it too, except what apt-get, dpkg and pip say (quietly,
# in functions: in the log only, with a live counter on the terminal).
LOGFILE=${LOGFILE:-$LOGDIR/stack.sh.log}
mkdir -p "$(dirname "$LOGFILE")"
echo "=== stack.sh $(date -u '+%Y-%m-%d %H:%M:%S') UTC" >> "$LOGFILE"
STACK_TTY=no
[[ -t 1 ]] && STACK_TTY=yes
exec > >(tee -a "$LOGFILE") 2>&1

for lib in packages python permissions database rabbitmq memcached tgt iscsi libvirt lvm image compute_hosts; do
    source "$TOP_DIR/lib/$lib"
done

# HOOK: keystone (upstream's, lib/keystone) and the daemons' libs,
# written by their owners. Each may define install_<svc>, configure_<svc>,
# init_<svc>, start_<svc> (called below, in this order of services),
# stop_<svc> (unstack.sh) and cleanup_<svc> (clean.sh). Keystone comes
# first: its accounts and catalog exist before a daemon validates a token.
# lib/minicompute should call configure_virt_type after writing
# minicompute.conf.
MINISTACK_SERVICES=(keystone minicinder miniapi minicompute)
for svc in "${MINISTACK_SERVICES[@]}"; do
    if is_service_enabled "$svc" && [[ -r $TOP_DIR/lib/$svc ]]; then
        source "$TOP_DIR/lib/$svc"
    fi
done

STACK_START=$SECONDS
mkdir -p "$LOGDIR" "$STATUS_DIR" "$DATA_DIR" "$CONF_DIR"
# QEMU's user and group first: they own the way into the state directory.
if is_service_enabled libvirt; then
    ensure_qemu_user
fi
init_permissions
save_passwords

# The lab's servers, volumes and exports are rows of one database: switching
# DATABASE_TYPE under them would orphan them all (and the new nova's
# instance-00000001 would collide with the old one's domain).
DATABASE_TYPE_FILE=$DATA_DIR/database_type
if [[ -s $DATABASE_TYPE_FILE &&
      $(canonical_database_type "$(<"$DATABASE_TYPE_FILE")") != "$DATABASE_TYPE" ]]; then
    die $LINENO "this lab was deployed with DATABASE_TYPE=$(<"$DATABASE_TYPE_FILE");" \
        "run devstack/clean.sh before switching to DATABASE_TYPE=$DATABASE_TYPE"
fi
echo "$DATABASE_TYPE" > "$DATABASE_TYPE_FILE"
# A subnode (docs/multinode.md) runs only its compute host, against the
# controller at SERVICE_HOST: the controller's passwords, not new ones.
if is_subnode; then
    check_subnode_settings || die $LINENO "this subnode's local.conf is incomplete"
fi
if (( COMPUTE_HOSTS > 1 )) && [[ $DATABASE_TYPE == postgresql ]]; then
    die $LINENO "COMPUTE_HOSTS=$COMPUTE_HOSTS needs DATABASE_TYPE=mysql or sqlite" \
        "(the lab's PostgreSQL listens on loopback only)"
fi
echo "$COMPUTE_HOSTS" > "$DATA_DIR/compute_hosts"

# --- install -------------------------------------------------------------------
timed packages install_packages
timed python install_python

# --- configure and start the infrastructure ------------------------------------
# The lab's link first: with more compute hosts, every service listens on
# the controller's address there.
if (( COMPUTE_HOSTS > 1 )); then
    timed link init_lab_link
fi
# The SQL server (none for sqlite) before the daemons that migrate it.
if [[ $DATABASE_TYPE != sqlite ]] && ! is_subnode; then
    install_database
    timed database start_database
    init_database
fi
if is_service_enabled rabbit; then
    timed rabbitmq start_rabbitmq
    init_rabbitmq
fi
# Keystone's cache (lib/memcached), up before keystone starts.
if is_service_enabled keystone; then
    timed memcached start_memcached
fi
if is_service_enabled tgt; then
    timed tgt start_tgt
fi
# The kernel iSCSI initiator, where minicompute takes the kernel path.
if is_service_enabled minicompute; then
    timed iscsi start_iscsi
fi
if is_service_enabled libvirt; then
    configure_libvirt
    timed libvirt start_libvirt
fi
if is_service_enabled lvm; then
    timed lvm init_lvm
fi
if is_service_enabled image; then
    timed image init_image
fi
if is_service_enabled libvirt && is_service_enabled image; then
    timed virt_type init_virt_type
    # minicompute.conf may not exist yet: the key waits there for
    # lib/minicompute, which only adds its own options.
    configure_virt_type
fi

# --- the ministack daemons (HOOK) ----------------------------------------------
for phase in install configure init start; do
    for svc in "${MINISTACK_SERVICES[@]}"; do
        is_service_enabled "$svc" && call_if_defined "${phase}_${svc}"
    done
done

# --- the other compute hosts of this machine (lib/compute_hosts) ----------------
if is_service_enabled minicompute && ! is_subnode; then
    timed compute_hosts start_compute_hosts
fi

# --- the demo cloud: a server to walk the journey on, the suite's config ---
DEMO_ENABLED=False
if is_service_enabled minicinder && is_service_enabled miniapi &&
        is_service_enabled minicompute; then
    DEMO_ENABLED=True
    source "$TOP_DIR/lib/demo"
    source "$TOP_DIR/lib/tempest"
    timed demo init_demo
    configure_tempest
    # Upstream tempest (./run_tests.sh upstream-tempest) needs keystone.
    if is_service_enabled tempest && [[ ${AUTH_STRATEGY:-keystone} == keystone ]]; then
        source "$TOP_DIR/lib/upstream_tempest"
        timed upstream-tempest install_upstream_tempest
        configure_upstream_tempest
    fi
fi

# Whatever this run created or found (a lab deployed before these rules):
# owner-only, QEMU's group where it must read.
init_permissions

echo_summary "ministack lab is up ($((SECONDS - STACK_START))s)"
printf '    %s\n' "${STACK_TIMINGS[@]}"
echo "    transport_url: rabbit://$RABBIT_USERID:***@$RABBIT_HOST:$RABBIT_PORT/$RABBIT_VHOST"
if is_service_enabled lvm; then
    echo "    volume group:  $VOLUME_GROUP_NAME on $(backing_loop)"
fi
if is_service_enabled tgt; then
    echo "    iSCSI portal:  $TGT_HOST:$TGT_PORT"
fi
if is_subnode; then
    echo "    subnode of:    $SERVICE_HOST (RabbitMQ, database, keystone, Cinder)"
fi
echo "    image:         $GUEST_IMAGE_NAME ($GUEST_IMAGE_ID) in $IMAGES_DIR"
echo "    virt_type:     $(cat "$VIRT_TYPE_FILE" 2>/dev/null)"
echo "    passwords:     $PASSWORDS_FILE (root only; local.conf settings win)"
echo "    compute hosts: $COMPUTE_HOST ($HOST_IP)$(for h in $(compute_host_names); do printf ', %s (%s)' "$h" "$(compute_host_ip "$h")"; done)"
echo "    database:      $DATABASE_TYPE ($(database_summary))"
echo "                   $(database_query)"
echo "    stack.sh log:  $LOGFILE"
echo "    clients:       $VENV_CLIENTS ministackctl (in $CLIENT_BIN_DIR);" \
     "source $TOP_DIR/openrc admin admin (or demo demo)"
if [[ $DEMO_ENABLED == True ]]; then
    summary_demo
fi
