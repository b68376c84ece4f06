import ministack  # noqa: F401,E402 (oslo.service threading backend first)
