"""How much the fuzz tier sends, and the seed that reproduces it.

Every knob is an environment variable so CI and a developer chasing a
finding can turn them without editing code:

* ``MINISTACK_FUZZ_SEED``: the seed of every route's generator (default:
  a random one, printed in the report header and in every failure);
* ``MINISTACK_FUZZ_EXAMPLES``: requests per route (default 100);
* ``MINISTACK_FUZZ_BUDGET``: seconds of fuzzing for the whole tier
  (default 180), shared out among the routes still to run, so a slow
  route cannot push the tier past CI's limit; set-up, the clean-up and
  the audit come on top (about a minute with the guest boot).
"""

import os
import random
import time
import zlib


def _int(name, default):
    value = os.environ.get(name, "").strip()
    return int(value) if value else default


SEED = _int("MINISTACK_FUZZ_SEED", random.SystemRandom().randrange(2 ** 32))
EXAMPLES = max(1, _int("MINISTACK_FUZZ_EXAMPLES", 100))
BUDGET = float(os.environ.get("MINISTACK_FUZZ_BUDGET", "").strip() or 180)

REPRODUCE = "reproduce with MINISTACK_FUZZ_SEED=%d" % SEED


def route_seed(route_id):
    """One seed per route, derived from SEED, so routes do not all draw
    the same sequence and one seed still reproduces the whole run."""
    return (SEED ^ zlib.crc32(route_id.encode())) & 0xFFFFFFFF


class Clock:
    """The tier's time budget, shared out among the routes left.

    ``start_route(left)`` gives the route just starting an equal share
    of what remains: time a fast route leaves unused (most reach their
    example count first) goes to the later ones, and no route, however
    slow, eats the share of the routes after it; ``route_over()`` says
    when it should stop sending.
    """

    def __init__(self, budget=BUDGET):
        self.budget = budget
        self.spent = 0.0
        self._route_started = None
        self._route_share = 0.0

    def start_route(self, routes_left):
        remaining = max(0.0, self.budget - self.spent)
        self._route_share = remaining / max(1, routes_left)
        self._route_started = time.monotonic()

    def route_over(self):
        return time.monotonic() - self._route_started >= self._route_share

    def end_route(self):
        """Seconds the route took."""
        took = time.monotonic() - self._route_started
        self.spent += took
        return took
