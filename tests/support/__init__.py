"""What the test tiers share: the one waiter (``waiting``), the daemon and
client helpers of the functional suites (``daemons``, ``miniapi_daemon``,
``minicinder_daemon``, ``private_stack``, ``journey``,
``database_servers``, ``keystone``), and of the unit tests the
cast-as-call RPC client (``rpc``) and the one Cinder fake
(``fake_cinder``)."""
