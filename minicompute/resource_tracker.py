"""The resource tracker: this host's node facts into ``compute_nodes``.

As nova's ``ResourceTracker.update_available_resource``: the driver says
what the node has (``get_available_resource``), the tracker adds the
host's ``[DEFAULT] my_ip`` as ``host_ip`` and writes the node's row,
which miniapi's os-hypervisors and scheduler read. The service runs it
at start-up, right after the first heartbeat (so the row links to the
service row), and after every heartbeat (``[compute]
report_interval``); a report with nothing new writes nothing.

Not tracked here: the used figures (vCPUs, memory and disk of the
instances), which the API sums from the host's live instances when it
shows a hypervisor, and claims (there is no placement: the API places
servers by instance count).
"""

from minicompute.db import api as db_api


class ResourceTracker:
    """Reports the node of one compute host.

    :param conf: the service's config (``host``, ``my_ip``).
    :param driver: a ``ComputeDriver``.
    """

    def __init__(self, conf, driver):
        self.conf = conf
        self.driver = driver

    @property
    def nodename(self):
        """The node's name: the host's own (one node per host)."""
        return self.conf.host

    def update_available_resource(self, ctxt):
        """Read the node's facts from the driver and store them.

        :returns: the node's row.
        """
        facts = self.driver.get_available_resource(self.nodename)
        facts["host_ip"] = self.conf.my_ip
        return db_api.compute_node_report(
            ctxt, self.conf.host, facts["hypervisor_hostname"], facts)
