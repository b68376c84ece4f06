"""Every option has help text, and the sample configs are up to date."""

import importlib
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))))
LISTS = {
    "ministack.common": "ministack.opts",
    "miniapi": "miniapi.conf",
    "minicompute": "minicompute.conf",
    "minicinder": "minicinder.conf",
}


def _opts(module):
    for group, opts in importlib.import_module(module).list_opts():
        name = getattr(group, "name", group) or "DEFAULT"
        for opt in opts:
            yield name, opt


@pytest.mark.parametrize("namespace", sorted(LISTS))
def test_every_option_has_help(namespace):
    missing = ["[%s] %s" % (group, opt.name)
               for group, opt in _opts(LISTS[namespace])
               if not (opt.help or "").strip()]
    assert not missing, "options without help: %s" % missing


@pytest.mark.parametrize("daemon", ["miniapi", "minicompute", "minicinder"])
def test_sample_config_lists_every_option(daemon):
    """etc/<daemon>.conf.sample is regenerated when options change
    (tools/generate-sample-configs.sh)."""
    with open(os.path.join(ROOT, "etc", "%s.conf.sample" % daemon)) as f:
        sample = f.read()
    missing = []
    for module in (LISTS["ministack.common"], LISTS[daemon]):
        for group, opt in _opts(module):
            if "#%s = " % opt.dest not in sample and \
                    "#%s =" % opt.dest not in sample:
                missing.append("[%s] %s" % (group, opt.name))
    assert not missing, (
        "run tools/generate-sample-configs.sh; missing: %s" % missing)
