"""Entry point of the ``miniapi`` daemon (nova-api's role)."""

import sys

from miniapi import conf as api_conf
from miniapi import service as api_service
from ministack import service


def main():
    sys.exit(service.run("miniapi", api_service.build,
                         register_opts=api_conf.register_opts))


if __name__ == "__main__":
    main()
