"""``GET /v3/{project_id}/extensions``: the API extensions this service
really has, named as upstream cinder names them (the extension API is
deprecated upstream, but clients still read it)."""

import flask

from minicinder.api import common
from minicinder.api import validation

bp = flask.Blueprint("extensions", __name__, url_prefix="/v3/<project_id>")
bp.url_value_preprocessor(common.drop_project)

# (alias, name, description, updated) of each extension implemented.
EXTENSIONS = (
    ("os-admin-actions", "AdminActions", "Enable admin actions.",
     "2012-08-25T00:00:00+00:00"),
    ("os-availability-zone", "AvailabilityZones",
     "Describe Availability Zones.", "2013-06-27T00:00:00+00:00"),
    ("os-extended-services", "ExtendedServices",
     "Extended services support.", "2014-01-10T00:00:00-00:00"),
    ("os-quota-sets", "Quotas", "Quota management support.",
     "2011-08-08T00:00:00+00:00"),
    ("os-services", "Services", "Services support.",
     "2012-10-28T00:00:00-00:00"),
    ("os-types-extra-specs", "TypesExtraSpecs", "Type extra specs support.",
     "2011-08-24T00:00:00+00:00"),
    ("os-types-manage", "TypesManage", "Types manage support.",
     "2011-08-24T00:00:00+00:00"),
    ("os-used-limits", "UsedLimits",
     "Provide data on limited resources that are being used.",
     "2013-10-03T00:00:00+00:00"),
    ("os-vol-host-attr", "VolumeHostAttribute",
     "Expose host as an attribute of a volume.",
     "2011-11-03T00:00:00+00:00"),
    ("os-vol-mig-status-attr", "VolumeMigStatusAttribute",
     "Expose migration_status as an attribute of a volume.",
     "2013-08-08T00:00:00+00:00"),
    ("os-vol-tenant-attr", "VolumeTenantAttribute",
     "Expose the internal project_id as an attribute of a volume.",
     "2011-11-03T00:00:00+00:00"),
    ("os-volume-actions", "VolumeActions", "Enable volume actions.",
     "2012-05-31T00:00:00+00:00"),
)


@bp.get("/extensions")
def index():
    validation.query(())
    return flask.jsonify({"extensions": [
        {"alias": alias, "name": name, "description": description,
         "updated": updated, "links": []}
        for alias, name, description, updated in EXTENSIONS]})
