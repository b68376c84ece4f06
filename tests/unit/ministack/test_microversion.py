"""Microversion parsing and negotiation (ministack.microversion)."""

import pytest

from ministack import exception
from ministack import microversion as mv


def test_versions_compare_numerically():
    """2.10 is newer than 2.9, not older as a string compare would say."""
    assert mv.APIVersion("2.10") > mv.APIVersion("2.9")
    assert mv.APIVersion("3.44") == "3.44"


def test_no_header_means_minimum():
    assert mv.negotiate(None, "3.0", "3.60") == "3.0"


def test_latest_means_maximum():
    assert mv.negotiate("latest", "3.0", "3.60") == "3.60"


def test_out_of_range_is_406():
    with pytest.raises(mv.VersionNotAcceptable) as err:
        mv.negotiate("3.99", "3.0", "3.60")
    assert err.value.code == 406


@pytest.mark.parametrize("bad", ["3", "3.x", "v3.1", "3.01", ""])
def test_malformed_is_400(bad):
    with pytest.raises(exception.Invalid) as err:
        mv.negotiate(bad, "3.0", "3.60")
    assert err.value.code == 400


def test_header_picks_the_named_service():
    headers = {"OpenStack-API-Version": "compute 2.89, volume 3.44"}
    assert mv.header_value(headers, "volume") == "3.44"
    assert mv.header_value(headers, "compute") == "2.89"


def test_legacy_nova_header_is_honoured():
    headers = {"X-OpenStack-Nova-API-Version": "2.79"}
    assert mv.header_value(headers, "compute",
                           "X-OpenStack-Nova-API-Version") == "2.79"
