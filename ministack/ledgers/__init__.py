"""The attach ledgers as plain data and the pure cross-checks over them.

Shared by the compute reconciler (``minicompute.reconcile``, its own
host's view) and the ``ministack-audit`` command (``ministack_audit``,
every ledger): both build a snapshot and run the same checks. Nothing
here does I/O or imports a service package.
"""
