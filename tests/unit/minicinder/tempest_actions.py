"""Two helpers the tempest-feature tests share: a volume action, and the
message of an expected fault (after checking its status code)."""


def action(client, volume_id, name, args=None):
    """POST ``{name: args}`` to the volume's ``/action``."""
    return client.post("/volumes/%s/action" % volume_id,
                       {name: {} if args is None else args})


def fault(response, code):
    """Assert the status code; the fault body's message."""
    assert response.status_code == code, response.body
    return next(iter(response.body.values()))["message"]
