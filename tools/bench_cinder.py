#!/usr/bin/env python3
"""Measure minicinder, and upstream Cinder side by side: handshake, GETs.

Prints a table (this is a measurement, not a timed test):

* latency of each step of the 3.44 handshake (attachment create, update
  with a connector, os-complete, delete) and of the whole handshake, over
  ``--rounds`` rounds on one volume;
* ``GET /volumes/{id}`` requests per second, sequential and with
  ``--threads`` client threads, and the API's CPU per GET when its PIDs
  are known, then the load average: other work on a small box shares the
  CPUs with the daemons and the client.

With ``--upstream`` the same is measured on upstream Cinder 29.0.0 (its
own venv, noauth, SQLite, the wheel's fake driver, its own RabbitMQ
vhost: ``bench_cinder_upstream``) in the same run, and both columns are
printed. Upstream's fake driver builds no export, minicinder's LVM + tgt
driver does: the comparison is fair to upstream.

Which minicinder::

    tools/bench_cinder.py --start --upstream      # private, noauth, SQLite
    tools/bench_cinder.py --start --lab-database  # private, lab's MariaDB
    tools/bench_cinder.py --cloud ministack       # the lab's, keystone
    tools/bench_cinder.py --url http://127.0.0.1:8776   # a noauth one
"""

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

import requests

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_cinder_load as load  # noqa: E402
import bench_cinder_upstream as upstream  # noqa: E402

# Hex, like keystone's project ids: upstream's routes only take a project
# id matching [DEFAULT] project_id_regex (hex and dashes).
PROJECT = uuid.uuid4().hex
NOAUTH_TOKEN = "admin:%s" % PROJECT
# Nova's service token under noauth: minicinder takes X-Service-Token's
# presence as the service's word; upstream reads the roles that
# keystonemiddleware would have set from a valid one.
NOAUTH_SERVICE = {"X-Service-Token": "nova:service",
                  "X-Service-Roles": "service"}
CONNECTOR = {"initiator": "iqn.2024-01.org.ministack:bench", "host": "bench",
             "ip": "127.0.0.1", "platform": "x86_64", "os_type": "linux",
             "multipath": False, "mountpoint": "/dev/vdb"}
LAB_CINDER_CONF = "/etc/ministack/minicinder.conf"
STEPS = ("create", "update (connector)", "complete", "delete",
         "whole handshake")


def start_daemon(volume_group, connection=None, workers=1, threads=8):
    """A private minicinder on a free port; returns (url, process, its
    temporary directory with config, log and, by default, database)."""
    port = upstream.free_port()
    tmp = tempfile.mkdtemp(prefix="bench-cinder-")
    conf = os.path.join(tmp, "minicinder.conf")
    connection = connection or "sqlite:///%s/c.sqlite" % tmp
    fd = os.open(conf, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write("[DEFAULT]\nosapi_volume_listen = 127.0.0.1\n"
                     "osapi_volume_listen_port = %d\nvolume_group = %s\n"
                     "host = bench-%s\nlog_file = %s/minicinder.log\n"
                     "osapi_volume_workers = %d\n"
                     "osapi_volume_threads = %d\n"
                     "[oslo_concurrency]\nlock_path = %s/lock\n"
                     "[database]\nconnection = %s\n"
                     % (port, volume_group, uuid.uuid4().hex[:6], tmp,
                        workers, threads, tmp, connection))
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


def lab_database(driver=None):
    """A temporary database on the lab's MariaDB server for a private
    minicinder: (its URL, a function dropping it). Made and dropped with
    the ``mysql`` client as root (unix socket), granted to the lab's
    database user, whose password stays in the URL (config file only).

    :param driver: ``pymysql`` or ``mysqldb`` instead of the lab's own.
    """
    import configparser

    import sqlalchemy as sa

    from ministack import executor

    parser = configparser.ConfigParser(interpolation=None)
    parser.read(LAB_CINDER_CONF)
    lab = sa.engine.make_url(parser.get("database", "connection"))
    if not lab.drivername.startswith("mysql"):
        sys.exit("--lab-database: the lab's database is %s, not MariaDB"
                 % lab.drivername)
    name = "bench_cinder_%s" % uuid.uuid4().hex[:8]
    executor.execute("mysql", "-e", "CREATE DATABASE %s; GRANT ALL "
                     "PRIVILEGES ON %s.* TO '%s'@'%s'" % (
                         name, name, lab.username, lab.host))

    def drop():
        executor.execute("mysql", "-e", "DROP DATABASE IF EXISTS %s" % name)
    if driver:
        lab = lab.set(drivername="mysql+%s" % driver)
    return lab.set(database=name).render_as_string(hide_password=False), \
        drop


class Client:
    """``base``: the project's volume endpoint (``.../v3/<project>``)."""

    def __init__(self, base, token, service=None):
        self.base = base.rstrip("/")
        self.token = token
        self.session = requests.Session()
        self.session.headers.update({
            "OpenStack-API-Version": "volume 3.44", "X-Auth-Token": token})
        if service:
            # The handshake is Nova's: it sends its service token with
            # the user's, and both Cinders refuse to delete an attachment
            # of a server's without it (OSSA-2023-003), upstream asking
            # Nova about the server first.
            self.session.headers.update(service)

    def call(self, method, path, body=None, expect=200):
        resp = self.session.request(method, self.base + path, json=body,
                                    timeout=120)
        if resp.status_code != expect:
            sys.exit("%s %s -> %s %s" % (method, path, resp.status_code,
                                         resp.text))
        return resp.json() if resp.content else None

    def status(self, volume_id):
        resp = self.session.get(self.base + "/volumes/%s" % volume_id,
                                timeout=120)
        return resp.json()["volume"]["status"] if resp.ok else "gone"


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    return time.perf_counter() - start, result


def handshake(client, volume_id, rounds):
    steps = {name: [] for name in STEPS}
    for _ in range(rounds):
        t1, att = timed(client.call, "POST", "/attachments", {"attachment": {
            "volume_uuid": volume_id, "instance_uuid": str(uuid.uuid4())}})
        path = "/attachments/%s" % att["attachment"]["id"]
        t2, _ = timed(client.call, "PUT", path,
                      {"attachment": {"connector": CONNECTOR}})
        t3, _ = timed(client.call, "POST", path + "/action",
                      {"os-complete": {}}, expect=204)
        t4, _ = timed(client.call, "DELETE", path)
        for key, value in zip(STEPS, (t1, t2, t3, t4, t1 + t2 + t3 + t4),
                              strict=True):
            steps[key].append(value)
    return steps


def create_volume(client, timeout=120):
    """A 1 GiB volume, ``available``. Upstream's scheduler only learns of
    the backend from its first capability report, so an early create may
    go to ``error``: that one is deleted and the create retried."""
    deadline = time.monotonic() + timeout
    while True:
        vid = client.call("POST", "/volumes", {"volume": {"size": 1}},
                          expect=202)["volume"]["id"]
        status = client.status(vid)
        while status not in ("available", "error"):
            time.sleep(0.1)
            status = client.status(vid)
        if status == "available":
            return vid
        delete_volume(client, vid)
        if time.monotonic() > deadline:
            sys.exit("no volume became available in %d s" % timeout)
        time.sleep(2)


def delete_volume(client, volume_id):
    """Delete the volume, first any attachment a failed round left on it
    (an attached volume cannot be deleted: its LV and export would stay
    behind the private daemon)."""
    resp = client.session.get(client.base + "/attachments",
                              params={"volume_id": volume_id}, timeout=120)
    for att in (resp.json().get("attachments", []) if resp.ok else []):
        client.session.delete(client.base + "/attachments/%s" % att["id"],
                              timeout=120)
    client.session.delete(client.base + "/volumes/%s" % volume_id,
                          timeout=120)
    for _ in range(600):
        if client.status(volume_id) == "gone":
            return
        time.sleep(0.1)


def measure(client, pids, args):
    """Handshake steps and GET rates on one volume of ``client``'s."""
    volume_id = create_volume(client)
    try:
        steps = handshake(client, volume_id, args.rounds)
        rates = [load.get_rate(client.base, client.token, volume_id, n,
                               args.seconds, pids)
                 for n in (1, args.threads)]
    finally:
        delete_volume(client, volume_id)
    return {"steps": steps, "rates": rates}


def minicinder_target(args):
    """(client, API PIDs, clean-up) of the minicinder to measure."""
    if args.cloud:
        import journey
        cloud = journey.Cloud.from_clouds_yaml(args.cloud)
        token = cloud.http.headers["X-Auth-Token"]
        return Client(cloud.volume_url, token), load.lab_pids(), None
    if args.url:
        return Client("%s/v3/%s" % (args.url, PROJECT), NOAUTH_TOKEN,
                      NOAUTH_SERVICE), [], \
            None
    connection = drop = None
    if args.lab_database:
        connection, drop = lab_database(args.lab_database_driver)
    try:
        url, proc, tmp = start_daemon(args.volume_group, connection,
                                      args.api_workers, args.api_threads)
    except BaseException:
        if drop:
            drop()
        raise

    def stop(failed):
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
        if drop:
            drop()
        if not failed:   # kept after a failure: its log says why
            shutil.rmtree(tmp, ignore_errors=True)
    return Client("%s/v3/%s" % (url, PROJECT), NOAUTH_TOKEN,
                  NOAUTH_SERVICE), load.process_tree(proc.pid), stop


def run_upstream(args):
    cinder = upstream.UpstreamCinder(args.upstream_venv,
                                     log=lambda text: print(text, flush=True))
    failed = True
    try:
        url = cinder.start()
        print("upstream cinder %s up at %s" % (upstream.VERSION, url),
              flush=True)
        client = Client("%s/v3/%s" % (url, PROJECT), NOAUTH_TOKEN,
                        NOAUTH_SERVICE)
        result = measure(client, cinder.api_pids(), args)
        failed = False
        return result
    finally:
        cinder.stop(keep_tmp=failed)
        if failed and cinder.tmp:
            print("upstream logs kept in %s" % cinder.tmp)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--url", help="a running noauth minicinder")
    where.add_argument("--cloud", help="the lab's minicinder, with a "
                       "keystone token for this clouds.yaml cloud")
    where.add_argument("--start", action="store_true",
                       help="start a private minicinder (root)")
    parser.add_argument("--lab-database", action="store_true",
                        help="the private one uses a temporary database "
                        "on the lab's MariaDB (default: SQLite in its "
                        "temporary directory)")
    parser.add_argument("--lab-database-driver",
                        choices=("pymysql", "mysqldb"),
                        help="with --lab-database: this DB-API driver "
                        "instead of the lab's (PyMySQL in Python, "
                        "mysqlclient in C)")
    parser.add_argument("--volume-group", default="stack-volumes-lvmdriver-1")
    parser.add_argument("--api-workers", type=int, default=os.cpu_count(),
                        help="the private one's osapi_volume_workers (API "
                        "processes; default: the CPU count, as upstream's)")
    parser.add_argument("--api-threads", type=int, default=8,
                        help="the private one's osapi_volume_threads (WSGI "
                        "threads per API process)")
    parser.add_argument("--upstream", action="store_true",
                        help="measure upstream cinder %s too" %
                        upstream.VERSION)
    parser.add_argument("--upstream-venv", default=upstream.DEFAULT_VENV)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=5)
    args = parser.parse_args()
    loads = [os.getloadavg()[0]]
    results = {}
    client, pids, stop = minicinder_target(args)
    failed = True
    try:
        results["minicinder"] = measure(client, pids, args)
        failed = False
    finally:
        if stop:
            stop(failed)
    if args.upstream:
        results["upstream %s" % upstream.VERSION] = run_upstream(args)
    loads.append(os.getloadavg()[0])
    report(results, args, loads)


def report(results, args, loads):
    names = list(results)
    print("\nattachment handshake, %d rounds (median / p90 ms)" % args.rounds)
    print("%-22s" % "step" + "".join("%24s" % n for n in names)
          + ("%10s" % "ratio" if len(names) == 2 else ""))
    for step in STEPS:
        cells, medians = "", []
        for name in names:
            values = sorted(results[name]["steps"][step])
            medians.append(statistics.median(values))
            cells += "%24s" % ("%.1f / %.1f" % (
                medians[-1] * 1000,
                values[int(0.9 * (len(values) - 1))] * 1000))
        ratio = ("%9.1fx" % (medians[1] / medians[0])
                 if len(names) == 2 else "")
        print("%-22s%s%s" % (step, cells, ratio))
    print("\nGET /volumes/{id}, http.client keep-alive, %.0f s each "
          "(req/s, API CPU ms per GET)" % args.seconds)
    print("%-22s" % "clients" + "".join("%24s" % n for n in names))
    for i, label in enumerate(("1 (sequential)", "%d threads"
                               % args.threads)):
        cells = ""
        for name in names:
            rate, cpu_ms = results[name]["rates"][i]
            cells += "%24s" % ("%.0f, %s" % (
                rate, "%.2f ms" % cpu_ms if cpu_ms is not None else "-"))
        print("%-22s%s" % (label, cells))
    if len(names) == 2:
        ratio = (statistics.median(results[names[1]]["steps"][STEPS[-1]]) /
                 statistics.median(results[names[0]]["steps"][STEPS[-1]]))
        print("\nminicinder's handshake is %.1fx faster than upstream's "
              "(target >= 3x); upstream's fake driver builds no export, "
              "minicinder's LVM + tgt driver does" % ratio)
    # Other work on the box takes CPU from the daemons and this client.
    print("load average (1 min) %.2f before, %.2f after; %d CPUs"
          % (loads[0], loads[-1], os.cpu_count()))


if __name__ == "__main__":
    main()
