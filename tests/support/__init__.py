"""What the test tiers share: the one waiter (``waiting``), the daemon and
client helpers of the functional suites (``daemons``, ``miniapi_daemon``,
``minicinder_daemon``, ``private_stack``, ``journey``,
``database_servers``, ``keystone``, and the recovery tier's
``fault_stack``), the fixtures of the tiers that attack the deployed lab
(``lab_sessions``, with the LIFO ``cleanups``), and of the unit tests the
cast-as-call RPC client (``rpc``), the one Cinder fake (``fake_cinder``)
and the fakes of the storage commands (``fake_storage``).

No conftest or test module imports another conftest or test module: what
two of them share lives here (or, within one unit package, in that
package's ``inprocess`` module)."""
