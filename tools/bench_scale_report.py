"""The printout of tools/bench_scale.py: the burst, the API latencies
under load, the CPU per phase with its limiting resource, the errors."""

import os

from bench_attach_report import say
import bench_scale_stats as stats


def host_rows(results):
    """Per compute host: servers, attaches of the burst and attaches
    under the API load (``bench_attach_hosts.per_host`` of each phase);
    no rows when the run knew of no host."""
    burst = (results.get("burst") or {}).get("hosts") or {}
    under = (results.get("under_load") or {}).get("hosts") or {}
    rows = []
    for host in sorted(set(burst) | set(under), key=str):
        got = burst.get(host) or under.get(host)
        rows.append((str(host), str(got["servers"]),
                     str((burst.get(host) or {}).get("attaches", 0)),
                     str((under.get(host) or {}).get("attaches", 0))))
    return rows


def report(results, audit_rc, png):
    say()
    for fault in results.get("boot_faults", []):
        say("boot fault (retried): %s" % fault)
    burst = results.get("burst")
    if burst:
        say("== %d servers x %d volumes = %d attachments at once" % (
            burst["servers"], burst["per_server"],
            burst["servers"] * burst["per_server"]))
        say(stats.format_table([
            ("boot %d servers (ACTIVE + agent)" % burst["servers"],
             stats.secs(burst.get("boot_wall")), ""),
            ("create %d volumes" % (burst["servers"] * burst["per_server"]),
             stats.secs(burst.get("create_wall")), ""),
            ("attach-all (in-use + visible)", stats.secs(
                burst["attach_wall"]), "%d %s" % (burst["attach_errors"],
                                                  burst["attach_codes"])),
            ("detach-all (available + gone)", stats.secs(
                burst["detach_wall"]), "%d %s" % (burst["detach_errors"],
                                                  burst["detach_codes"])),
            ("duplicate device names", str(burst["dup_devices"]), ""),
        ], ("phase", "wall", "errors")))
    rows = host_rows(results)
    if rows:
        say()
        say("== per compute host%s" % (
            " (all pinned to %s)" % results["host"] if results.get("host")
            else " (placed by the scheduler)"))
        say(stats.format_table(rows, ("host", "servers", "burst attaches",
                                      "attaches under load")))
    if results.get("latency"):
        say()
        under = results.get("under_load", {})
        say("== API latency, %s volumes (list returned %s); %s attaches: "
            "%s to in-use + visible, %s errors; detach %s, %s errors" % (
                results.get("volumes"), results.get("listed"),
                under.get("count"), stats.secs(under.get("attach_wall")),
                under.get("attach_errors"),
                stats.secs(under.get("detach_wall")),
                under.get("detach_errors")))
        say(stats.format_table(stats.latency_rows(results["latency"]),
                               ("call", "condition", "n", "p50", "p99",
                                "max")))
        if results["api_errors"]:
            say("non-200 answers: %s" % results["api_errors"])
    cpu = results.get("cpu") or {}
    if cpu:
        say()
        say("== CPU, share of all %d cores (sampled from /proc every 0.5 s)"
            % (os.cpu_count() or 1))
        say(stats.format_table(stats.cpu_rows(cpu), (
            "phase", "time", "busy", "iowait") + stats.GROUPS))
        say()
        say("== limiting resource per phase")
        for phase, summary in cpu.items():
            say("   %-22s %s" % (phase + ":", stats.verdict(summary)))
    if results.get("create_retries"):
        say()
        say("note: %d volume create(s) went error and were made again "
            "(minicinder's log says why)" % results["create_retries"])
    errors = (burst or {}).get("errors", 0) + sum(
        results.get("under_load", {}).get(k, 0)
        for k in ("attach_errors", "detach_errors")) + sum(
        results.get("api_errors", {}).values())
    say()
    say("errors: %d; left of this run: %s; ministack-audit exit %s; "
        "chart %s" % (errors, results.get("ours") or "nothing", audit_rc,
                      png or "-"))
