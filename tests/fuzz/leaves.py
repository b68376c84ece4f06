"""What the leaves of a body's shape (``shapes.py``) are filled with:
``leaves`` for hostile requests (this run's ids among random text, odd
statuses, hosts and initiators), ``plausible_leaves`` for what a real
client would send, always naming the run's own resources."""

from hypothesis import strategies as st

from tests.fuzz import lab as lab_mod
from tests.fuzz import shapes
from tests.fuzz import strategies as fz

STATUSES = ["available", "in-use", "error", "attaching", "detaching",
            "reserved", "maintenance", "deleting", "creating",
            "error_deleting", "downloading", "uploading", "retyping",
            "extending", "backing-up", "restoring-backup"]
ATTACH_STATUSES = ["attached", "detached", "attaching", "detaching",
                   "reserved", "error_attaching", "error_detaching"]


def or_text(values, other=fz.text):
    values = [v for v in values if v is not None]
    if not values:
        return other
    return st.one_of(st.sampled_from(values), other)


def leaves(lab):
    """Strategies for the shapes' leaf kinds, over this run's pools."""
    run_iqn = "iqn.2004-10.org.fuzz:%s" % lab_mod.RUN
    ids = fz.uuids() | fz.text
    return {
        "name": fz.text, "text": fz.text, "any": fz.json_values,
        "size": fz.weighted(st.sampled_from([1, 1, 2, "1"]), fz.integerish,
                            odds=3),
        "bool": fz.booleanish,
        "uuid": fz.weighted(fz.uuids(), fz.text, odds=3),
        "volume_id": or_text(lab.pool("volume"), ids),
        "server_id": or_text(lab.pool("server"), ids),
        "attachment_id": or_text(lab.pool("attachment"), ids),
        "type_ref": or_text(lab.pool("type") + lab.pool("type_name"), ids),
        "flavor": or_text(lab.flavors, fz.integerish | fz.text),
        # Never a registered image: a server create must not boot.
        "image_ref": ids,
        "device": or_text(["/dev/vdb", "/dev/vdc", "/dev/sdb", "/dev/xvdb",
                            "vdb", "/dev/vd", "/dev/vdb1", "/dev/../vdb"]),
        "initiator": or_text([run_iqn, "eui.02004567A425678D",
                               "naa.52004567BA64678D", "iqn.",
                               run_iqn + "a" * 250],
                              fz.text | fz.json_values),
        "host": or_text(["fuzz-%s" % lab_mod.RUN, "localhost", "a" * 300,
                          "-bad-", "host_name", "xn--"]),
        "ip": or_text(["127.0.0.1", "::1", "10.0.0.1", "256.1.1.1",
                        "fe80::1%eth0", "1.2.3", ""]),
        "mode": or_text(["rw", "ro", "RW", "", "rwx"]),
        "status": or_text(STATUSES),
        "attach_status": or_text(ATTACH_STATUSES),
        "metadata": st.dictionaries(or_text(["key", "k" * 256, ""]),
                                    fz.weighted(fz.text, fz.json_values),
                                    max_size=3),
        "extra_specs": st.dictionaries(
            or_text(["multiattach", "volume_backend_name",
                      "capabilities:x", "RESKEY:availability_zones", ""]),
            fz.weighted(or_text(["<is> True", "<is> False", "True",
                                  "lvmdriver-1"]), fz.json_values),
            max_size=3),
        "action_pairs": st.dictionaries(
            or_text(list(shapes.VOLUME_ACTIONS) +
                     list(shapes.SERVER_ACTIONS) + ["os-complete"]),
            fz.json_values, max_size=2),
        "auth_method": or_text(["password", "token",
                                 "application_credential", "totp",
                                 "external", "mapped"]),
        "user_id": or_text([lab.demo.user_id, lab.admin.user_id], ids),
        "username": or_text(["demo", "admin", "nova"]),
        "password": or_text([lab.conf.user.password,
                              lab.conf.admin.password]),
        "domain_id": or_text(["default"]),
        "domain_name": or_text(["Default"]),
        "project_id": or_text([lab.demo.project_id, lab.admin.project_id],
                               ids),
        "project_name": or_text(["demo", "admin", "service"]),
        "token": fz.token_values(list(lab.tokens.values())),
    }


def plausible_leaves(lab):
    """Values a real client would send: a shape filled with these is a
    body the API should accept (it makes, attaches, exports for real,
    always on the run's own resources)."""
    word = st.text("abcdefghijklmnopqrstuvwxyz0123456789-_ \u00e9",
                   min_size=1, max_size=20).map(lambda t: "w" + t + "w")
    run_iqn = "iqn.2004-10.org.fuzz:%s" % lab_mod.RUN

    def pool(kind, fallback):
        return st.sampled_from(lab.pool(kind)) if lab.pool(kind) \
            else fallback
    return {
        "name": word, "text": word, "any": st.none(), "size": st.just(1),
        "bool": st.booleans(), "uuid": fz.uuids(),
        "volume_id": pool("volume", fz.uuids()),
        "server_id": pool("server", fz.uuids()),
        "attachment_id": pool("attachment", fz.uuids()),
        "type_ref": pool("type", st.just("default")),
        "flavor": st.sampled_from(lab.flavors or ["42"]),
        "image_ref": fz.uuids(),
        "device": st.sampled_from(["/dev/vdb", "/dev/vdc"]),
        "initiator": st.just(run_iqn), "host": st.just("fuzz-" + lab_mod.RUN),
        "ip": st.just("127.0.0.1"), "mode": st.sampled_from(["rw", "ro"]),
        "status": st.sampled_from(STATUSES),
        "attach_status": st.sampled_from(ATTACH_STATUSES),
        "metadata": st.dictionaries(word, word, max_size=2),
        "extra_specs": st.sampled_from([{}, {"multiattach": "<is> True"}]),
        "action_pairs": st.sampled_from(
            [{name: None} for name in list(shapes.VOLUME_ACTIONS) +
             list(shapes.SERVER_ACTIONS)]),
        "auth_method": st.sampled_from(["password", "token"]),
        "user_id": st.sampled_from([lab.demo.user_id, lab.admin.user_id]),
        "username": st.sampled_from(["demo", "admin"]),
        "password": st.sampled_from([lab.conf.user.password,
                                     lab.conf.admin.password]),
        "domain_id": st.just("default"), "domain_name": st.just("Default"),
        "project_id": st.sampled_from([lab.demo.project_id,
                                       lab.admin.project_id]),
        "project_name": st.sampled_from(["demo", "admin"]),
        "token": st.sampled_from(list(lab.tokens.values())),
    }
