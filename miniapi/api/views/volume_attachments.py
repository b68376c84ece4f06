"""os-volume_attachments views (nova's _translate_attachment_detail_view).

Keys by microversion (nova's api-ref, os-volume_attachments):

* 2.1–2.69: ``id`` (= volumeId), ``volumeId``, ``serverId``, ``device``
  (omitted when the BDM has no device name)
* 2.70: + ``tag``; 2.79: + ``delete_on_termination``
* 2.89 (GET only): ``id`` dropped; + ``attachment_id``, ``bdm_uuid``

The POST response is not affected by 2.89 (upstream says so explicitly),
and always carries ``device``.
"""

from miniapi.api.views import field


def attachment(bdm, server_id, version, for_create=False):
    volume_id = field(bdm, "volume_id")
    body = {}
    if for_create or version < "2.89":
        body["id"] = volume_id
    body["volumeId"] = volume_id
    body["serverId"] = server_id
    device = field(bdm, "device_name")
    if device or for_create:
        body["device"] = device
    if version >= "2.70":
        body["tag"] = field(bdm, "tag")
    if version >= "2.79":
        body["delete_on_termination"] = bool(
            field(bdm, "delete_on_termination"))
    if not for_create and version >= "2.89":
        body["attachment_id"] = field(bdm, "attachment_id")
        body["bdm_uuid"] = field(bdm, "uuid")
    return body


def visible(bdm, version):
    """Whether a GET at ``version`` shows this BDM.

    From 2.89 a BDM whose Cinder attachment is not recorded yet is hidden
    (bug 2160224): showing it would return an empty ``attachment_id``.
    """
    if version >= "2.89" and not field(bdm, "attachment_id"):
        return False
    return True
