"""The state table and the post-detach recompute (pure functions)."""

from minicinder.volume import states


def test_reserve_only_from_available_unless_multiattach():
    """A non-multiattach volume is reservable only when available."""
    single = states.volume_transition("reserve", multiattach=False)
    multi = states.volume_transition("reserve", multiattach=True)
    assert states.IN_USE not in single.expected
    assert states.IN_USE in multi.expected
    assert single.target == multi.target == states.RESERVED


def test_reserved_multiattach_volume_rejects_a_second_reserve():
    """reserved/attaching are not in the multiattach reserve list."""
    multi = states.volume_transition("reserve", multiattach=True)
    assert states.RESERVED not in multi.expected
    assert states.ATTACHING not in multi.expected


def test_handshake_targets():
    """connect -> attaching, complete -> in-use with attach_status."""
    connect = states.volume_transition("connect")
    complete = states.volume_transition("complete")
    assert (connect.target, connect.attach_status) == (
        states.ATTACHING, states.ATT_ATTACHING)
    assert (complete.target, complete.attach_status) == (
        states.IN_USE, states.ATT_ATTACHED)


def test_legacy_reserve_goes_to_attaching():
    """Tempest asserts os-reserve yields attaching, not reserved."""
    assert states.volume_transition("os-reserve").target == states.ATTACHING


def test_begin_detaching_requires_attached():
    step = states.volume_transition("os-begin_detaching")
    assert step.expected == (states.IN_USE,)
    assert step.expected_attach == (states.ATT_ATTACHED,)


def test_unknown_multiattach_variant_falls_back():
    """Actions without a multiattach row use the plain one."""
    assert states.volume_transition("delete", True) == \
        states.volume_transition("delete", False)


def test_recompute_no_attachments_is_available():
    assert states.statuses_from_attachments([]) == (
        states.AVAILABLE, states.ATT_DETACHED)


def test_recompute_attached_wins():
    assert states.statuses_from_attachments(
        ["reserved", "attached"]) == (states.IN_USE, states.ATT_ATTACHED)


def test_recompute_reserved_left():
    """Deleting the in-use one while another is reserved -> reserved."""
    assert states.statuses_from_attachments(["reserved"]) == (
        states.RESERVED, states.ATT_RESERVED)


def test_recompute_ignores_errors():
    assert states.statuses_from_attachments(["error_attaching"]) == (
        states.AVAILABLE, states.ATT_DETACHED)


def test_recompute_attaching_over_reserved():
    assert states.statuses_from_attachments(
        ["reserved", "attaching"])[0] == states.ATTACHING
