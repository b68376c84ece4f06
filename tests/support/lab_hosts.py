"""The compute hosts the deployed lab runs now, for the tests that must
pass on both lab shapes: a one-host lab (``./lab.sh``, as CI deploys it)
and a two-host one (``COMPUTE_HOSTS=2 ./lab.sh``)."""

import collections.abc

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


class Hosts(collections.abc.Sequence):
    """:func:`running_hosts`, read each time it is used rather than once
    at import: the multinode tier turns the lab into two hosts after its
    tests are collected (its ``two_host_lab`` fixture)."""

    def __getitem__(self, index):
        return running_hosts()[index]

    def __len__(self):
        return len(running_hosts())
