#!/usr/bin/env python3
"""Lint: RPC topics and compute RPC method names live only in rpcapi.

miniapi reaches a compute host through ``minicompute.rpcapi.ComputeAPI``
(nova's ``compute/rpcapi.py``): that module alone knows the topic and the
names of the methods the compute manager serves, and at which version each
is sent. A ``client.prepare(...).cast(ctxt, "attach_volume", ...)``
anywhere else bypasses the version pinning and hides a dependency on the
manager's signature; import-linter cannot see that (it is a string, not
an import), so this checker does.

The names come from the rpcapi modules themselves (``RPC_TOPIC``-style
constants, ``Target(topic=...)`` literals and the method-name argument of
every ``.cast(``/``.call(``), so a new RPC method is covered as soon as
rpcapi sends it. Elsewhere, a string literal equal to one of them given
to ``.cast(``, ``.call(``, ``prepare(`` or ``Target(`` (positionally or
as a keyword) is an error. ``ministack/rpc.py`` (transport, servers, the
traced client wrapper) is exempt with the rpcapi modules.

Usage: ``tools/lint_rpc_seam.py [PATH...]`` (default: the packages,
tests and tools of this repository). Exit 1 when something is found,
one ``path:line:col: message`` per finding.
"""

import ast
import os
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RPCAPI_MODULES = ("minicompute/rpcapi.py", "minicompute/rpcapi_moves.py")
EXEMPT = RPCAPI_MODULES + ("ministack/rpc.py",)
DEFAULT_PATHS = ("ministack", "miniapi", "minicompute", "minicinder",
                 "ministack_audit", "ministack_course", "tests", "tools")
# Callables that take a topic or an RPC method name.
RPC_CALLS = ("cast", "call", "prepare", "Target")


def _called_name(node):
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def _literals(node):
    """``(value, node)`` of the string constants passed to a call."""
    args = list(node.args) + [kw.value for kw in node.keywords]
    return [(a.value, a) for a in args
            if isinstance(a, ast.Constant) and isinstance(a.value, str)]


def rpc_names(rpcapi_source):
    """``{name: "topic"|"method"}`` named by an rpcapi module's source."""
    names = {}
    tree = ast.parse(rpcapi_source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and \
                isinstance(node.value, ast.Constant) and \
                isinstance(node.value.value, str) and \
                any(isinstance(t, ast.Name) and "TOPIC" in t.id
                    for t in node.targets):
            names[node.value.value] = "topic"
        if not isinstance(node, ast.Call):
            continue
        called = _called_name(node)
        if called == "Target":
            for kw in node.keywords:
                if kw.arg == "topic" and isinstance(kw.value, ast.Constant):
                    names[kw.value.value] = "topic"
        elif called in ("cast", "call"):
            # cctxt.cast(ctxt, "name", ...) or, through ministack.rpc's
            # traced helpers, rpc.cast(cctxt, ctxt, "name", ...).
            through_rpc = isinstance(node.func, ast.Attribute) and \
                isinstance(node.func.value, ast.Name) and \
                node.func.value.id == "rpc"
            index = 2 if through_rpc else 1
            if len(node.args) > index and \
                    isinstance(node.args[index], ast.Constant) and \
                    isinstance(node.args[index].value, str):
                names.setdefault(node.args[index].value, "method")
    return names


def check_source(source, path, names):
    """Findings (``path:line:col: message``) in one module's source."""
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as exc:
        return ["%s:%s:%s: cannot parse: %s" % (path, exc.lineno,
                                                exc.offset, exc.msg)]
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or \
                _called_name(node) not in RPC_CALLS:
            continue
        for value, arg in _literals(node):
            kind = names.get(value)
            if kind:
                found.append((arg.lineno, arg.col_offset + 1, kind, value,
                              _called_name(node)))
    return ["%s:%d:%d: RPC %s %r named outside rpcapi (in %s()); go "
            "through minicompute.rpcapi.ComputeAPI" % ((path,) + finding)
            for finding in sorted(found)]


def _python_files(paths):
    for path in paths:
        if os.path.isfile(path):
            yield path
            continue
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs
                             if d != "__pycache__" and not d.startswith("."))
            for name in sorted(files):
                if name.endswith(".py"):
                    yield os.path.join(root, name)


def _relative(path):
    return os.path.relpath(os.path.abspath(path), TOP).replace(os.sep, "/")


def check(paths, top=TOP):
    """Every finding under ``paths``."""
    names = {}
    for module in RPCAPI_MODULES:
        with open(os.path.join(top, module), encoding="utf-8") as f:
            names.update(rpc_names(f.read()))
    found = []
    for path in _python_files(paths):
        if _relative(path) in EXEMPT:
            continue
        with open(path, encoding="utf-8") as f:
            found.extend(check_source(f.read(), path, names))
    return found


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    paths = argv or [os.path.join(TOP, p) for p in DEFAULT_PATHS]
    found = check(paths)
    for line in found:
        print(line)
    if found:
        print("%d RPC name(s) used outside rpcapi" % len(found),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
