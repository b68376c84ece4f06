"""What the compute manager's tests do around the manager: the API phase
of an attach (as miniapi runs it) and reading the instance's action
events. A helper module, so no test module imports another."""

from minicompute.db import api as db_api


def action_events(ctxt, server):
    """Every event of every action of the server."""
    return [e for a in db_api.action_get_all(ctxt, server["uuid"])
            for e in db_api.action_events_get(ctxt, a.id)]


def api_attach(ctxt, client, volume_api, server, volume_id, device=None,
               send_multiattach=True):
    """The API phase, as miniapi does it: reserve name, create, cast.

    :param send_multiattach: False casts as an API older than RPC 1.2
        did, without the volume's flag.
    """
    vol = volume_api.get(ctxt, volume_id)
    bdm = client.reserve_block_device_name(
        ctxt, server, device, volume_id, multiattach=vol["multiattach"])
    assert bdm["connection_info"] is None
    att = volume_api.attachment_create(ctxt, volume_id, server["uuid"])
    bdm = db_api.to_dict(db_api.bdm_update(ctxt, bdm["id"], {
        "attachment_id": att["id"]}))
    db_api.action_start(ctxt, server["uuid"], "attach_volume")
    client.attach_volume(ctxt, server, bdm, multiattach=vol["multiattach"]
                         if send_multiattach else None)
    return bdm
