"""Cold migration with an attached volume between the two hosts
(``openstack server migrate``, admin): the server and its volume move
to the other host, VERIFY_RESIZE there, then the confirm; one migration
record, ``confirmed``, from the first host to the second; the audit is
clean. The steps and checks are test_resize.py's (the functional tier's
resize on one host)."""

from tests.functional.minicompute import test_extend_attached as lab_mod
from tests.functional.minicompute import test_resize as resize

lab = lab_mod.lab
cleanup = resize.cleanup


def test_cold_migration_moves_the_server_and_its_volume(hosts, lab,
                                                        cleanup):
    first, second = list(hosts)
    server_id, volume_id = resize._server_with_volume(lab, cleanup, first)
    resize._action(lab, server_id, {"migrate": None})
    resize._wait(lab, server_id, "VERIFY_RESIZE")
    assert resize._host_of(lab, server_id) == second
    resize._check(lab, server_id, volume_id, 128)
    resize._action(lab, server_id, {"confirmResize": None}, expected=204)
    resize._wait(lab, server_id, "ACTIVE")
    assert resize._host_of(lab, server_id) == second
    resize._check(lab, server_id, volume_id, 128)
    [migration] = resize._migrations(lab, server_id)
    assert (migration["migration_type"], migration["status"],
            migration["source_compute"], migration["dest_compute"]) == (
        "migration", "confirmed", first, second)
    cleanup.run()
    lab_mod._audit_clean()
