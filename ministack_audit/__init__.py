"""ministack-audit: cross-check the attach ledgers and repair them."""
