"""The compute API facade the blueprints call (nova's compute.api.API).

It holds the collaborators every operation needs (the Cinder adapter, the
compute RPC client, the service-down threshold) and mixes in the
operations, which live in modules by concept (``servers``, ``volumes``,
``block_devices``, ``rebuild``, ``shelve``, ``server_metadata``,
``pause_suspend``, ``resize``...).
"""

from miniapi.compute import block_devices
from miniapi.compute import live_migrate
from miniapi.compute import pause_suspend
from miniapi.compute import rebuild
from miniapi.compute import resize
from miniapi.compute import server_metadata
from miniapi.compute import servers
from miniapi.compute import shelve
from miniapi.compute import shelved_volumes
from miniapi.compute import volumes


class API(servers.ServerOperations, volumes.VolumeOperations,
          block_devices.BlockDeviceOperations, rebuild.RebuildOperations,
          shelve.ShelveOperations, shelved_volumes.ShelvedVolumeOperations,
          server_metadata.ServerMetadataOperations,
          pause_suspend.PauseSuspendOperations,
          live_migrate.LiveMigrateOperations,
          resize.ResizeOperations):
    """The API phase of compute operations.

    :param volume_api: ``minicompute.volume.cinder.API`` or a fake with the
        same methods.
    :param compute_rpcapi: ``minicompute.rpcapi.ComputeAPI`` or a fake.
    :param down_time: seconds after which a silent compute host is down.
    :param image_dir: where registered images live (None: the default).
    :param allow_resize_to_same_host: a resize may stay on its host.
    """

    def __init__(self, volume_api, compute_rpcapi, down_time=60,
                 image_dir=None, allow_resize_to_same_host=False):
        self.volume_api = volume_api
        self.compute_rpcapi = compute_rpcapi
        self.down_time = down_time
        self.image_dir = image_dir
        self.allow_resize_to_same_host = allow_resize_to_same_host
