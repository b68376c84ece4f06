#!/usr/bin/env python3
"""Measure minicinder: handshake latency with a real export, GET rate.

Prints a table (this is a measurement, not a timed test):

* latency of each step of the 3.44 handshake (attachment create, update
  with a connector, which builds the tgt target and ACL, os-complete,
  delete, which revokes and removes the export) and of the whole
  handshake, over ``--rounds`` rounds on one volume;
* ``GET /volumes/{id}`` requests per second, sequential and with
  ``--threads`` client threads.

Against a running daemon::

    tools/bench_cinder.py --url http://127.0.0.1:8776

or let it start a private one (root; temp config and SQLite)::

    tools/bench_cinder.py --start --volume-group stack-volumes-lvmdriver-1
"""

import argparse
import concurrent.futures
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

import requests

PROJECT = "bench" + uuid.uuid4().hex[:12]
CONNECTOR = {"initiator": "iqn.2024-01.org.ministack:bench", "host": "bench",
             "ip": "127.0.0.1", "platform": "x86_64", "os_type": "linux",
             "multipath": False, "mountpoint": "/dev/vdb"}


def start_daemon(volume_group):
    """A private minicinder on a free port; returns (url, process)."""
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
            return url, proc
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


def get_rate(url, volume_id, threads, seconds):
    def worker(deadline):
        client = Client(url)
        count = 0
        while time.perf_counter() < deadline:
            client.call("GET", "/volumes/%s" % volume_id)
            count += 1
        return count

    deadline = time.perf_counter() + seconds
    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        total = sum(pool.map(worker, [deadline] * threads))
    return total / (time.perf_counter() - start)


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
    proc = None
    if args.start:
        url, proc = start_daemon(args.volume_group)
    elif args.url:
        url = args.url
    else:
        parser.error("give --url or --start")
    client = Client(url)
    volume_id = client.call("POST", "/volumes", {"volume": {"size": 1}},
                            expect=202)["volume"]["id"]
    try:
        while client.call("GET", "/volumes/%s" % volume_id)["volume"][
                "status"] != "available":
            time.sleep(0.1)
        steps = handshake(client, volume_id, args.rounds)
        sequential = get_rate(url, volume_id, 1, args.seconds)
        parallel = get_rate(url, volume_id, args.threads, args.seconds)
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

    print("\nminicinder handshake, %d rounds, real LVM + tgt export" %
          args.rounds)
    print("%-28s %10s %10s %10s" % ("step", "median ms", "p90 ms", "max ms"))
    for name, values in steps.items():
        ordered = sorted(values)
        print("%-28s %10.1f %10.1f %10.1f" % (
            name, statistics.median(values) * 1000,
            ordered[int(0.9 * (len(ordered) - 1))] * 1000,
            ordered[-1] * 1000))
    print("\nGET /volumes/{id}")
    print("%-28s %10.0f req/s" % ("sequential (1 thread)", sequential))
    print("%-28s %10.0f req/s" % ("%d client threads" % args.threads,
                                  parallel))


if __name__ == "__main__":
    main()
