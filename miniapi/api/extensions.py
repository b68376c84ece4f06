"""GET /extensions[/{alias}] (nova's extension_info.py).

The v2.1 API has no extensions; upstream still lists the v2 names its
v2.1 features stand for, for old clients, each with a placeholder
namespace and date. This list names the ones whose features ministack
serves (sorted by alias, as upstream sorts them).
"""

import flask

from ministack import exception as ms_exception

bp = flask.Blueprint("extensions", __name__, url_prefix="/v2.1")

NAMESPACE = "http://docs.openstack.org/compute/ext/fake_xml"
UPDATED = "2014-12-03T00:00:00Z"

# alias -> (name, description)
_EXTENSIONS = {
    "OS-DCF": ("DiskConfig", "Disk Management Extension."),
    "OS-EXT-AZ": ("ExtendedAvailabilityZone",
                  "Extended Availability Zone support."),
    "OS-EXT-SRV-ATTR": ("ExtendedServerAttributes",
                        "Extended Server Attributes support."),
    "OS-EXT-STS": ("ExtendedStatus", "Extended Status support."),
    "OS-FLV-DISABLED": ("FlavorDisabled", "Support to show the disabled "
                                          "status of a flavor."),
    "OS-FLV-EXT-DATA": ("FlavorExtraData", "Provide additional data for "
                                           "flavors."),
    "OS-SRV-USG": ("ServerUsage", "Adds launched_at and terminated_at on "
                                  "Servers."),
    "os-availability-zone": ("AvailabilityZone",
                             "1. Add availability_zone to the Create "
                             "Server API. 2. Add availability zones "
                             "describing."),
    "os-console-output": ("ConsoleOutput", "Console log output support, "
                                           "with tailing ability."),
    "os-extended-volumes": ("ExtendedVolumes",
                            "Extended Volumes support."),
    "os-flavor-access": ("FlavorAccess", "Flavor access support."),
    "os-flavor-extra-specs": ("FlavorExtraSpecs",
                              "Flavors extra specs support."),
    "os-flavor-manage": ("FlavorManage", "Flavor create/delete API "
                                         "support."),
    "os-flavor-swap": ("FlavorSwap", "Support to show the swap status of "
                                     "a flavor."),
    "os-hypervisors": ("Hypervisors", "Admin-only hypervisor "
                                      "administration."),
    "os-instance-actions": ("InstanceActions", "View a log of actions "
                                               "and events taken on an "
                                               "instance."),
    "os-migrations": ("Migrations", "Provide data on migrations."),
    "os-server-start-stop": ("ServerStartStop", "Start/Stop instance "
                                                "compute API support."),
    "os-services": ("Services", "Services support."),
    "os-used-limits": ("UsedLimits", "Provide data on limited resources "
                                     "that are being used."),
    "os-volumes": ("Volumes", "Volumes support."),
}


def _view(alias):
    name, description = _EXTENSIONS[alias]
    return {"name": name, "alias": alias, "description": description,
            "namespace": NAMESPACE, "updated": UPDATED, "links": []}


@bp.get("/extensions")
def index():
    return flask.jsonify({"extensions": [_view(a)
                                         for a in sorted(_EXTENSIONS)]})


@bp.get("/extensions/<alias>")
def show(alias):
    if alias not in _EXTENSIONS:
        raise ms_exception.NotFound(
            message="The resource could not be found.")
    return flask.jsonify({"extension": _view(alias)})
