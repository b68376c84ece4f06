"""minicinder: a small Cinder v3 block-storage service (REST API + LVM/tgt)."""
