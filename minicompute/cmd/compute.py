"""Entry point of the minicompute daemon (``minicompute --config-file X``)."""

import sys

from minicompute import conf as compute_conf
from minicompute import service as compute_service
from ministack import service


def main():
    sys.exit(service.run("minicompute", compute_service.build,
                         register_opts=compute_conf.register_opts))


if __name__ == "__main__":
    main()
