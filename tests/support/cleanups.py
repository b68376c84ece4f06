"""The LIFO cleanup stack of the tiers that run against the deployed lab
(tempest-style and security): every resource a test creates is
registered for deletion right away, and the deletions run last-in
first-out even when the test fails, as tempest's addCleanup does."""


class Cleanups:
    """A LIFO stack of cleanup callables; failures are collected, not lost."""

    def __init__(self):
        self._stack = []

    def add(self, func, *args, **kwargs):
        self._stack.append((func, args, kwargs))

    def run(self):
        errors = []
        while self._stack:
            func, args, kwargs = self._stack.pop()
            try:
                func(*args, **kwargs)
            except Exception as exc:  # keep cleaning; report at the end
                errors.append("%s%s: %s" % (
                    getattr(func, "__name__", func), args, exc))
        if errors:
            raise AssertionError("cleanup failed:\n" + "\n".join(errors))
