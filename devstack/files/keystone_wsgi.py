"""Keystone's WSGI application, for gunicorn (lib/keystone).

keystone.wsgi.api builds the application at import time, and its
oslo.config parser reads ``sys.argv``: under gunicorn that holds
gunicorn's own options (``--bind``, ``--workers``...), which keystone
would refuse. DevStack avoids it by running keystone under uwsgi's
``wsgi-file``; here the argv is cut to the program name before the
import. The config file is named by keystone's own variable,
``OS_KEYSTONE_CONFIG_FILES`` (lib/keystone sets it).
"""

import os
import sys

if not os.environ.get("OS_KEYSTONE_CONFIG_FILES"):
    raise SystemExit("keystone_wsgi: set OS_KEYSTONE_CONFIG_FILES to the "
                     "path of keystone.conf")
sys.argv = sys.argv[:1]

from keystone.wsgi.api import application  # noqa: E402,F401
