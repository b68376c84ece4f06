"""The compute hosts the deployed lab runs now, for the tests that must
pass on both lab shapes: a one-host lab (``./lab.sh``, as CI deploys it)
and a two-host one (``COMPUTE_HOSTS=2 ./lab.sh``)."""

from minicompute import hosts as lab_hosts

HOSTS_FILE = "/var/lib/ministack/compute_hosts"


def running_hosts(conf_dir=lab_hosts.CONF_DIR, hosts_file=HOSTS_FILE):
    """Host names, the first host first: the first ``compute_hosts``
    (stack.sh's COMPUTE_HOSTS, remembered; 1 when not) of the hosts with
    a minicompute config (a host turned off later keeps its config).
    Empty without a deployed lab."""
    try:
        with open(hosts_file) as handle:
            count = int(handle.read().strip() or 1)
    except (OSError, ValueError):
        count = 1
    return list(lab_hosts.compute_hosts(conf_dir))[:max(count, 1)]
