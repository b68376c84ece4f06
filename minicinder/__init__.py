"""minicinder: a small Cinder v3 block-storage service (REST API + LVM/tgt)."""

import ministack  # noqa: F401,E402 (oslo.service threading backend first)
