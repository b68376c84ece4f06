"""An in-memory driver with the real driver's contract, for unit tests.

It keeps the same bookkeeping a real backend has (which volumes exist,
which are exported, which initiators each export admits) so tests can
assert on it, and it can be told to fail a named method once to exercise
the manager's undo paths.
"""

from minicinder import exception
from minicinder.volume import driver


class FakeDriver(driver.VolumeDriver):
    """Volumes, exports and ACLs as dicts."""

    def __init__(self, target_prefix="iqn.2010-10.org.openstack:",
                 portal="127.0.0.1:3260"):
        self.target_prefix = target_prefix
        self.portal = portal
        self.volumes = {}      # id -> size
        self.exports = {}      # id -> set of admitted initiators
        self.wiped = []        # ids wiped before removal
        self.images = {}       # id -> image id copied in
        self.clones = {}       # id -> id of the volume it was cloned from
        self.fail = {}         # method name -> exception to raise once
        self.calls = []

    def _maybe_fail(self, name):
        self.calls.append(name)
        error = self.fail.pop(name, None)
        if error is not None:
            raise error

    def check_for_setup_error(self):
        self._maybe_fail("check_for_setup_error")

    def create_volume(self, volume):
        self._maybe_fail("create_volume")
        self.volumes[volume.id] = volume.size
        return {}

    def create_cloned_volume(self, volume, src_vref):
        self._maybe_fail("create_cloned_volume")
        if src_vref.id not in self.volumes:
            raise exception.VolumeBackendError(
                reason="volume %s has no device" % src_vref.id)
        self.volumes[volume.id] = volume.size
        self.clones[volume.id] = src_vref.id
        return {}

    def delete_volume(self, volume):
        self._maybe_fail("delete_volume")
        self.exports.pop(volume.id, None)
        if self.volumes.pop(volume.id, None) is not None:
            self.wiped.append(volume.id)

    def copy_image_to_volume(self, volume, image):
        self._maybe_fail("copy_image_to_volume")
        self.images[volume.id] = image["id"]

    def extend_volume(self, volume, new_size):
        self._maybe_fail("extend_volume")
        if volume.id not in self.volumes:
            raise exception.VolumeBackendError(
                reason="volume %s has no device" % volume.id)
        self.exports.pop(volume.id, None)
        self.volumes[volume.id] = new_size
        return {"provider_location": None}

    def extend_attached_volume(self, volume, new_size):
        """In place: the export (and its ACL) stays."""
        self._maybe_fail("extend_attached_volume")
        if volume.id not in self.volumes:
            raise exception.VolumeBackendError(
                reason="volume %s has no device" % volume.id)
        self.volumes[volume.id] = new_size

    def create_export(self, volume):
        self._maybe_fail("create_export")
        if volume.id not in self.volumes:
            raise exception.VolumeBackendError(
                reason="volume %s has no device" % volume.id)
        self.exports.setdefault(volume.id, set())
        auth = volume.provider_auth
        if not driver.parse_provider_auth(auth):
            auth = "CHAP %s %s" % driver.generate_chap()
        return {"provider_location": "%s,1 %s 1" % (self.portal,
                                                    self._iqn(volume)),
                "provider_auth": auth}

    def remove_export(self, volume):
        self._maybe_fail("remove_export")
        self.exports.pop(volume.id, None)

    def ensure_export(self, volume, initiators):
        self._maybe_fail("ensure_export")
        self.exports.setdefault(volume.id, set()).update(initiators)
        return {}

    def missing_exports(self, expected):
        self._maybe_fail("missing_exports")
        return [volume for volume, initiators in expected
                if volume.id not in self.exports
                or not set(initiators) <= self.exports[volume.id]]

    def initialize_connection(self, volume, connector):
        initiator = driver.require_initiator(connector)
        self._maybe_fail("initialize_connection")
        self.exports[volume.id].add(initiator)
        user, password = driver.parse_provider_auth(volume.provider_auth)
        return {"driver_volume_type": "iscsi",
                "data": {"target_discovered": False,
                         "target_iqn": self._iqn(volume),
                         "target_portal": self.portal,
                         "target_lun": 1, "volume_id": volume.id,
                         "auth_method": "CHAP", "auth_username": user,
                         "auth_password": password,
                         "encrypted": False, "discard": False}}

    def terminate_connection(self, volume, connector):
        self._maybe_fail("terminate_connection")
        initiator = (connector or {}).get("initiator")
        self.exports.get(volume.id, set()).discard(initiator)

    def _iqn(self, volume):
        return "%svolume-%s" % (self.target_prefix, volume.id)
