#!/usr/bin/env python3
"""Measure minicinder: handshake latency with a real export, GET rate.

Prints a table (this is a measurement, not a timed test):

* latency of each step of the 3.44 handshake (attachment create, update
  with a connector, which builds the tgt target and ACL, os-complete,
  delete, which revokes and removes the export) and of the whole
  handshake, over ``--rounds`` rounds on one volume;
* ``GET /volumes/{id}`` requests per second, sequential and with
  ``--threads`` client threads (and the daemon's CPU per GET when this
  script started it), then the load average: other work on a small box
  shares the CPUs with both the daemon and the client.

Against a running daemon::

    tools/bench_cinder.py --url http://127.0.0.1:8776

or let it start a private one (root; temp config and SQLite)::

    tools/bench_cinder.py --start --volume-group stack-volumes-lvmdriver-1
"""

import argparse
import concurrent.futures
import http.client
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import uuid

import requests

PROJECT = "bench" + uuid.uuid4().hex[:12]
CONNECTOR = {"initiator": "iqn.2024-01.org.ministack:bench", "host": "bench",
             "ip": "127.0.0.1", "platform": "x86_64", "os_type": "linux",
             "multipath": False, "mountpoint": "/dev/vdb"}


def start_daemon(volume_group):
    """A private minicinder on a free port; returns (url, process, its
    temporary directory with config, log and database)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    tmp = tempfile.mkdtemp(prefix="bench-cinder-")
    conf = os.path.join(tmp, "minicinder.conf")
    with open(conf, "w") as handle:
        handle.write("[DEFAULT]\nosapi_volume_listen = 127.0.0.1\n"
                     "osapi_volume_listen_port = %d\nvolume_group = %s\n"
                     "host = bench-%s\nlog_file = %s/minicinder.log\n"
                     "[database]\nconnection = sqlite:///%s/c.sqlite\n"
                     % (port, volume_group, uuid.uuid4().hex[:6], tmp, tmp))
    binary = os.path.join(os.path.dirname(sys.executable), "minicinder")
    proc = subprocess.Popen([binary, "--config-file", conf],
                            start_new_session=True)
    url = "http://127.0.0.1:%d" % port
    for _ in range(150):
        try:
            requests.get(url + "/", timeout=1)
            return url, proc, tmp
        except requests.ConnectionError:
            time.sleep(0.2)
    proc.kill()
    sys.exit("minicinder did not start; see %s/minicinder.log" % tmp)


class Client:
    def __init__(self, url):
        self.base = "%s/v3/%s" % (url, PROJECT)
        self.session = requests.Session()
        self.session.headers.update({
            "OpenStack-API-Version": "volume 3.44",
            "X-Auth-Token": "admin:%s" % PROJECT})

    def call(self, method, path, body=None, expect=200):
        resp = self.session.request(method, self.base + path, json=body,
                                    timeout=120)
        if resp.status_code != expect:
            sys.exit("%s %s -> %s %s" % (method, path, resp.status_code,
                                         resp.text))
        return resp.json() if resp.content else None


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    return time.perf_counter() - start, result


def handshake(client, volume_id, rounds):
    steps = {"create": [], "update (ACL; export on 1st)": [], "complete": [],
             "delete (revoke ACL)": [], "whole handshake": []}
    for _ in range(rounds):
        t1, att = timed(client.call, "POST", "/attachments", {"attachment": {
            "volume_uuid": volume_id, "instance_uuid": str(uuid.uuid4())}})
        path = "/attachments/%s" % att["attachment"]["id"]
        t2, _ = timed(client.call, "PUT", path,
                      {"attachment": {"connector": CONNECTOR}})
        t3, _ = timed(client.call, "POST", path + "/action",
                      {"os-complete": {}}, expect=204)
        t4, _ = timed(client.call, "DELETE", path)
        totals = (t1, t2, t3, t4, t1 + t2 + t3 + t4)
        for key, value in zip(steps, totals, strict=True):
            steps[key].append(value)
    return steps


def cpu_seconds(pid):
    """User + system CPU time of process ``pid`` so far (Linux /proc)."""
    with open("/proc/%d/stat" % pid) as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def get_rate(url, volume_id, threads, seconds, pid=None):
    """GET /volumes/{id} per second with ``threads`` keep-alive clients,
    and the server's CPU milliseconds per GET when its ``pid`` is known.

    Each thread drives its own ``http.client`` connection and parses every
    body. ``requests`` costs ~1 ms of client CPU per call (more than the
    server's whole GET), so on a 2-core box it measured the client, not
    minicinder; the handshake above still uses it.
    """
    parts = urllib.parse.urlsplit(url)
    path = "/v3/%s/volumes/%s" % (PROJECT, volume_id)
    headers = {"OpenStack-API-Version": "volume 3.44",
               "X-Auth-Token": "admin:%s" % PROJECT,
               "Accept": "application/json"}

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

    cpu_before = cpu_seconds(pid) if pid else None
    deadline = time.perf_counter() + seconds
    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        total = sum(pool.map(worker, [deadline] * threads))
    rate = total / (time.perf_counter() - start)
    cpu_ms = ((cpu_seconds(pid) - cpu_before) / total * 1000
              if pid and total else None)
    return rate, cpu_ms


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a running minicinder")
    parser.add_argument("--start", action="store_true",
                        help="start a private daemon (root)")
    parser.add_argument("--volume-group", default="stack-volumes-lvmdriver-1")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=5)
    args = parser.parse_args()
    proc = tmp = None
    if args.start:
        url, proc, tmp = start_daemon(args.volume_group)
    elif args.url:
        url = args.url
    else:
        parser.error("give --url or --start")
    client = Client(url)
    volume_id = client.call("POST", "/volumes", {"volume": {"size": 1}},
                            expect=202)["volume"]["id"]
    pid = proc.pid if proc else None
    load = [os.getloadavg()[0]]
    try:
        while client.call("GET", "/volumes/%s" % volume_id)["volume"][
                "status"] != "available":
            time.sleep(0.1)
        steps = handshake(client, volume_id, args.rounds)
        rates = [("sequential (1 thread)",
                  get_rate(url, volume_id, 1, args.seconds, pid)),
                 ("%d client threads" % args.threads,
                  get_rate(url, volume_id, args.threads, args.seconds, pid))]
        load.append(os.getloadavg()[0])
    finally:
        client.call("DELETE", "/volumes/%s" % volume_id, expect=202)
        for _ in range(600):
            if client.session.get(client.base + "/volumes/%s" % volume_id
                                  ).status_code == 404:
                break
            time.sleep(0.1)
        if proc:
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)
    if tmp:
        # Kept when anything above failed: its log says why.
        shutil.rmtree(tmp, ignore_errors=True)

    print("\nminicinder handshake, %d rounds, real LVM + tgt export" %
          args.rounds)
    print("%-28s %10s %10s %10s" % ("step", "median ms", "p90 ms", "max ms"))
    for name, values in steps.items():
        ordered = sorted(values)
        print("%-28s %10.1f %10.1f %10.1f" % (
            name, statistics.median(values) * 1000,
            ordered[int(0.9 * (len(ordered) - 1))] * 1000,
            ordered[-1] * 1000))
    print("\nGET /volumes/{id} (http.client keep-alive, %.0f s each)"
          % args.seconds)
    print("%-28s %10s %16s" % ("clients", "req/s", "server CPU ms/GET"))
    for name, (rate, cpu_ms) in rates:
        print("%-28s %10.0f %16s" % (name, rate, "%.2f" % cpu_ms
                                     if cpu_ms is not None else "-"))
    # Other work on the box takes CPU from both the daemon and this client.
    print("\nload average (1 min) %.2f before, %.2f after; %d CPUs"
          % (load[0], load[-1], os.cpu_count()))


if __name__ == "__main__":
    main()
