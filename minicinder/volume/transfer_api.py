"""Volume transfers: a project offers an available volume, another
project accepts it with the transfer's id and auth key.

While offered the volume is ``awaiting-transfer`` (nothing can attach or
delete it); withdrawing the offer or accepting it makes it ``available``
again, accepted in the receiver's project, owned by the receiving user,
within the receiver's quotas. Only a salted SHA-256 of the auth key is
stored; it is shown once, in the create response.
"""

import hashlib
import hmac
import logging
import secrets
import uuid

from minicinder import exception
from minicinder.db import api as db
from minicinder.db import transfers as transfers_db
from minicinder.volume import quotas

LOG = logging.getLogger(__name__)

AUTH_KEY_LENGTH = 16


def _hash(salt, auth_key):
    return hashlib.sha256((salt + auth_key).encode()).hexdigest()


class TransferAPI:

    def __init__(self, database, conf):
        self.database = database
        self.conf = conf

    def create(self, ctx, volume_id, name=None, no_snapshots=False):
        """:param no_snapshots: leave the snapshots behind (3.55; none
            exist here, so it is only recorded).
        :returns: ``(transfer, auth_key)``.

        :raises VolumeNotFound: (404).
        :raises InvalidVolume: not available (400).
        """
        auth_key = secrets.token_hex(AUTH_KEY_LENGTH // 2)
        salt = secrets.token_hex(8)
        with self.database.write() as session:
            volume = db.volume_get(session, ctx, volume_id, for_update=True)
            if not db.volume_transition(session, volume, "transfer"):
                raise exception.InvalidVolume(
                    reason="Volume %s status must be available to "
                           "transfer, but it is %s." % (volume_id,
                                                        volume.status))
            transfer = transfers_db.transfer_create(session, {
                "id": str(uuid.uuid4()), "volume_id": volume_id,
                "display_name": name, "salt": salt,
                "crypt_hash": _hash(salt, auth_key),
                "source_project_id": volume.project_id,
                "accepted": False, "no_snapshots": bool(no_snapshots)})
        LOG.info("Volume %s offered for transfer (%s)", volume_id,
                 transfer.id)
        return transfer, auth_key

    def get(self, ctx, transfer_id):
        with self.database.read() as session:
            return transfers_db.transfer_get(session, ctx, transfer_id)

    def get_all(self, ctx, all_tenants=False):
        with self.database.read() as session:
            return transfers_db.transfer_get_all(session, ctx, all_tenants)

    def delete(self, ctx, transfer_id):
        """Withdraw the offer: the volume is available again."""
        with self.database.write() as session:
            transfer = transfers_db.transfer_get(session, ctx, transfer_id)
            volume = db.volume_get(session, ctx.elevated(),
                                   transfer.volume_id, for_update=True)
            transfers_db.transfer_destroy(session, transfer_id)
            db.volume_transition(session, volume, "transfer_cancel")
        LOG.info("Transfer %s of volume %s withdrawn", transfer_id,
                 transfer.volume_id)

    def accept(self, ctx, transfer_id, auth_key):
        """Move the volume into the caller's project.

        :raises TransferNotFound: (404).
        :raises InvalidAuthKey: the wrong key (400).
        :raises QuotaError: over the receiver's quotas (413).
        """
        with self.database.write() as session:
            transfer = transfers_db.transfer_get(session, ctx, transfer_id,
                                                 any_project=True)
            if not hmac.compare_digest(transfer.crypt_hash,
                                       _hash(transfer.salt, auth_key)):
                raise exception.InvalidAuthKey(transfer_id=transfer_id)
            volume = db.volume_get(session, ctx.elevated(),
                                   transfer.volume_id, for_update=True)
            quotas.check_volume(session, self.conf, ctx.project_id,
                                volumes=1, gigabytes=volume.size)
            if not db.volume_transition(
                    session, volume, "transfer_accept",
                    {"project_id": ctx.project_id,
                     "user_id": ctx.user_id}):
                raise exception.InvalidVolume(
                    reason="Volume %s is %s, not awaiting its transfer."
                    % (volume.id, volume.status))
            transfers_db.transfer_destroy(session, transfer_id, {
                "accepted": True,
                "destination_project_id": ctx.project_id})
        LOG.info("Transfer %s accepted: volume %s moved from project %s "
                 "to %s", transfer_id, transfer.volume_id,
                 transfer.source_project_id, ctx.project_id)
        return transfer
