"""Entry point of the ``minicinder`` daemon (REST API + volume manager)."""

import sys

from minicinder import conf
from minicinder import service
from ministack import service as ms_service


def main():
    sys.exit(ms_service.run("minicinder", service.build,
                            register_opts=conf.register_opts))


if __name__ == "__main__":
    main()
