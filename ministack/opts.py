"""Options every daemon shares, for oslo-config-generator."""

from ministack import config
from ministack import rpc


def list_opts():
    grouped = {}
    for group, opts in config.list_opts() + rpc.list_opts():
        grouped.setdefault(group, []).extend(opts)
    return list(grouped.items())
