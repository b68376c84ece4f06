"""Fixtures of the ministack unit tests."""

from oslo_config import cfg
from osprofiler import profiler
from osprofiler import web
import pytest

from ministack.trace import profiler as ms_profiler


@pytest.fixture
def store(tmp_path):
    url = "sqlite:///%s" % (tmp_path / "osprofiler.sqlite")
    conf = cfg.ConfigOpts()
    conf.register_opts([cfg.StrOpt("host", default="vm")])
    conf([], default_config_files=[])
    ms_profiler.register_opts(conf)
    conf.set_override("enabled", True, "profiler")
    conf.set_override("hmac_keys", "unit-key", "profiler")
    conf.set_override("connection_string", url, "profiler")
    assert ms_profiler.setup(conf, "nova", "nova-api")
    yield url
    profiler.clean()
    web.disable()
