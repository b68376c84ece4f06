"""Run minicinder or minicompute with keystone tokens, before their own
code offers it (a stop-gap for the functional tests; delete it once the
lead wires ``keystone`` into minicinder and the compute engineer uses
``ministack.identity.client`` in the Cinder adapter).

It runs each daemon's real ``main()`` and adds only what is missing:

* minicinder: ``keystone`` among the ``auth_strategy`` choices. Its app
  already builds ``ministack.wsgi.ContextMiddleware(auth_strategy=...)``,
  which then validates tokens with the key file named by
  ``$MINISTACK_SIGNING_KEY_FILE``.
* minicompute: its Cinder adapter forwards the user's token plus nova's
  service token (``miniapi.cinder_keystone.KeystoneAPI``, the subclass
  miniapi itself uses) instead of noauth headers.

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


def _minicompute():
    from miniapi import cinder_keystone
    from minicompute.volume import cinder
    cinder.API = cinder_keystone.KeystoneAPI
    from minicompute.cmd import compute
    compute.main()


if __name__ == "__main__":
    name = sys.argv.pop(1)
    {"minicinder": _minicinder, "minicompute": _minicompute}[name]()
