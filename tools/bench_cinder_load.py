"""GET load for tools/bench_cinder.py: requests per second and API CPU.

Each client thread drives its own ``http.client`` keep-alive connection
and parses every body. ``requests`` costs ~1 ms of client CPU per call
(more than minicinder's whole GET), so on a 2-core box it would measure
the client, not the API; the handshake still uses it.
"""

import concurrent.futures
import http.client
import json
import os
import sys
import time
import urllib.parse

STATUS_DIR = "/opt/stack/status"


def cpu_seconds(pid):
    """User + system CPU time of process ``pid`` so far (Linux /proc);
    0 for a process that is gone."""
    try:
        with open("/proc/%d/stat" % pid) as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def process_tree(pid):
    """``pid`` and its descendants (a daemon's API worker processes)."""
    found = [pid]
    for member in found:
        try:
            with open("/proc/%d/task/%d/children" % (member, member)) as f:
                found.extend(int(child) for child in f.read().split())
        except OSError:
            pass
    return found


def lab_pids(daemon="minicinder"):
    """The lab daemon's own PID (not its supervisor's) and its worker
    processes', or []."""
    try:
        with open(os.path.join(STATUS_DIR, "%s.child.pid" % daemon)) as f:
            return process_tree(int(f.read().strip()))
    except (OSError, ValueError):
        return []


def get_rate(base, token, volume_id, threads, seconds, pids=()):
    """(GETs per second with ``threads`` clients, the API processes' CPU
    milliseconds per GET or None when ``pids`` is empty)."""
    parts = urllib.parse.urlsplit(base)
    path = "%s/volumes/%s" % (parts.path.rstrip("/"), volume_id)
    headers = {"OpenStack-API-Version": "volume 3.44",
               "X-Auth-Token": token, "Accept": "application/json"}

    def worker(deadline):
        conn = http.client.HTTPConnection(parts.hostname, parts.port,
                                          timeout=60)
        count = 0
        try:
            while time.perf_counter() < deadline:
                conn.request("GET", path, headers=headers)
                resp = conn.getresponse()
                body = json.loads(resp.read())
                if resp.status != 200 or body["volume"]["id"] != volume_id:
                    sys.exit("GET %s -> %s %s" % (path, resp.status, body))
                count += 1
        finally:
            conn.close()
        return count

    cpu_before = sum(cpu_seconds(p) for p in pids)
    deadline = time.perf_counter() + seconds
    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        total = sum(pool.map(worker, [deadline] * threads))
    rate = total / (time.perf_counter() - start)
    cpu_ms = ((sum(cpu_seconds(p) for p in pids) - cpu_before) / total * 1000
              if pids and total else None)
    return rate, cpu_ms
