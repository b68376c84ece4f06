"""What the test tiers share: the one waiter (``waiting``), the daemon and
client helpers of the functional suites (``daemons``, ``miniapi_daemon``,
``minicinder_daemon``, ``private_stack``, ``journey``,
``database_servers``, ``keystone``, and the recovery tier's
``fault_stack``), the fixtures of the tiers that attack the deployed lab
(``lab_sessions``, with the LIFO ``cleanups``), and of the unit tests the
cast-as-call RPC client (``rpc``) and the one Cinder fake
(``fake_cinder``). No conftest imports another conftest or a test
module: what two of them share lives here."""
