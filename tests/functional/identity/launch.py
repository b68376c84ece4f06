"""Run minicinder with keystone tokens, before its own code offers it (a
stop-gap for the functional tests; delete it once minicinder's
``auth_strategy`` accepts ``keystone``).

It runs the daemon's real ``main()`` and adds only ``keystone`` among the
``auth_strategy`` choices. Its app already builds
``ministack.wsgi.ContextMiddleware(auth_strategy=...)``, which then
validates tokens with the key file named by ``$MINISTACK_SIGNING_KEY_FILE``.

Usage: ``python -m tests.functional.identity.launch minicinder
--config-file F``.
"""

import sys

from oslo_config import types


def _minicinder():
    from minicinder import conf
    for opt in conf.api_opts:
        if opt.name == "auth_strategy" and \
                "keystone" not in (opt.type.choices or {}):
            opt.type = types.String(choices=["noauth", "keystone"])
    from minicinder.cmd import cinder
    cinder.main()


if __name__ == "__main__":
    name = sys.argv.pop(1)
    {"minicinder": _minicinder}[name]()
