"""What tools/bench_attach.py prints and draws.

:func:`report` prints the tables (latency against the floor, concurrency,
soak and its ledgers); :func:`chart` writes the PNG (matplotlib, Agg
backend).
"""

import statistics


def say(text=""):
    print(text, flush=True)


def pct(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def ms(value):
    return "   -  " if value is None else "%6.0f" % (value * 1000)


#: The target: the stack's attach-all and detach-all walls within 1.5x
#: the concurrent floor's.
CONCURRENCY_TARGET = 1.5


def cpu_seconds_lines(summary):
    """Each timed phase's CPU in core-seconds per process group (from
    :class:`bench_scale_stats.CpuSampler`), busiest first: on 2 cores
    both sides are CPU-bound, so the difference between the stack's and
    the floor's columns is where the stack's extra wall time goes."""
    lines = []
    for phase, cpu in summary.items():
        core_s = cpu["seconds"] * cpu["ncpu"]
        groups = sorted(((g, share * core_s)
                         for g, share in cpu["groups"].items()),
                        key=lambda kv: -kv[1])
        lines.append("cpu %s: %.1f s, machine %d%% busy, %.1f core-s: %s" % (
            phase, cpu["seconds"], round(cpu["busy"] * 100),
            cpu["busy"] * core_s, ", ".join(
                "%s %.1f" % (g, sec) for g, sec in groups if sec >= 0.05)))
    return lines


def round_lines(rounds):
    """Each round's four walls and its own attach-all ratio, when there
    was more than one round (the verdict is on the medians)."""
    if len(rounds) < 2:
        return []
    lines = []
    for number, walls in enumerate(rounds, 1):
        floor = walls.get("floor")
        line = "round %d: stack attach all %.1f s, detach all %.1f s" % (
            number, walls["attach_wall"], walls["detach_wall"])
        if floor:
            line += "; floor %.1f s, %.1f s; ratios %.2fx, %.2fx" % (
                floor["attach_wall"], floor["detach_wall"],
                walls["attach_wall"] / floor["attach_wall"],
                walls["detach_wall"] / floor["detach_wall"])
        lines.append(line)
    return lines


def concurrency_floor_lines(conc, target=CONCURRENCY_TARGET):
    """The concurrent floor's walls next to the stack's, and the ratios
    stack / floor against ``target`` (errors on either side: NOT met)."""
    if conc.get("floor_error"):
        return ["floor (by hand): failed: %s" % conc["floor_error"]]
    floor = conc.get("floor")
    if not floor:
        return []
    lines = []
    walls = "median walls" if len(conc.get("rounds") or []) > 1 else "walls"
    for what in ("attach", "detach"):
        lines.append("floor %s all (by hand, %dx%d): %.1f s wall, %d errors"
                     % (what, floor["g"], floor["v"], floor[what + "_wall"],
                        floor[what + "_errors"]))
    for what in ("attach", "detach"):
        stack_wall, floor_wall = conc[what + "_wall"], floor[what + "_wall"]
        errors = conc[what + "_errors"] + floor[what + "_errors"]
        ratio = stack_wall / floor_wall if floor_wall > 0 else float("inf")
        verdict = "met" if ratio <= target and not errors else "NOT met"
        lines.append("%s-all ratio (stack / floor %s, %.1f s / %.1f s): "
                     "%.2fx  (target <= %.1fx: %s%s)" % (
                         what, walls, stack_wall, floor_wall, ratio, target,
                         verdict,
                         ", %d errors" % errors if errors else ""))
    return lines


def report(res, audit_rc, png):
    say("\n== attach/detach through the stack vs the raw floor (ms)%s" % (
        ", on compute host %s" % res["host"] if res.get("host") else ""))
    say("%-46s %5s %8s %8s %8s" % ("measure", "n", "median", "p90", "max"))
    rows = res.get("latency", {})
    labels = [
        ("post_attach", "POST os-volume_attachments (request)"),
        ("api_in_use", "attach: accepted -> cinder in-use"),
        ("api_in_use_polled", "  the same, GET every 50 ms"),
        ("api_visible", "attach: accepted -> visible in guest"),
        ("floor_attached", "floor: export -> attachDevice returned"),
        ("floor_visible", "floor: export -> visible in guest"),
        ("post_detach", "DELETE os-volume_attachments (request)"),
        ("api_available", "detach: accepted -> cinder available"),
        ("api_available_polled", "  the same, GET every 50 ms"),
        ("api_gone", "detach: accepted -> gone from guest"),
        ("floor_gone", "floor: detachDevice -> gone from guest"),
        ("floor_undone", "floor: detachDevice -> target+secret gone")]
    for key, label in labels:
        values = [x for x in rows.get(key, []) if x is not None]
        if values:
            say("%-46s %5d %8.0f %8.0f %8.0f" % (
                label, len(values), statistics.median(values) * 1000,
                pct(values, 0.9) * 1000, max(values) * 1000))
    # The targets: attach accepted -> visible in guest, and detach
    # accepted -> Cinder available (against the floor's detach -> target
    # and secret gone), each within 1.3x the floor's median.
    for what, api, floor, target in (
            ("attach", "api_visible", "floor_visible", 1.3),
            ("detach", "api_available", "floor_undone", 1.3),
            ("detach (guest side)", "api_gone", "floor_gone", None)):
        a = [x for x in rows.get(api, []) if x is not None]
        f = [x for x in rows.get(floor, []) if x is not None]
        if a and f:
            ratio = statistics.median(a) / statistics.median(f)
            verdict = "" if target is None else "  (target <= %.1fx: %s)" % (
                target, "met" if ratio <= target else "NOT met")
            say("%s ratio (%s / %s medians): %.2fx%s" % (
                what, api, floor, ratio, verdict))
    conc = res.get("concurrency")
    if conc:
        rounds = conc.get("rounds") or []
        say("\n== concurrency: %d servers x %d volumes at once%s" % (
            conc["g"], conc["v"], ", medians of %d rounds" % len(rounds)
            if len(rounds) > 1 else ""))
        if conc["note"]:
            say("note: " + conc["note"])
        for line in round_lines(rounds):
            say(line)
        say("attach all: %.1f s wall, %d errors, duplicate device names: "
            "%d in API answers, %d in guests" % (
                conc["attach_wall"], conc["attach_errors"], conc["dup_api"],
                conc["dup_guest"]))
        say("detach all: %.1f s wall, %d errors" % (conc["detach_wall"],
                                                     conc["detach_errors"]))
        for line in concurrency_floor_lines(conc):
            say(line)
        for line in cpu_seconds_lines(conc.get("cpu") or {}):
            say(line)
    soak = res.get("soak")
    if soak:
        cycles = soak["cycles"]
        say("\n== soak: %d attach/detach cycles after %d of warm-up, "
            "%d errors" % (len(cycles) + soak["errors"], soak["warmup"],
                           soak["errors"]))
        if cycles:
            for i, what in enumerate(("attach -> in-use", "detach -> "
                                      "available")):
                values = [c[i] for c in cycles]
                say("%-24s median %6.0f ms  p90 %6.0f ms  max %6.0f ms" % (
                    what, statistics.median(values) * 1000,
                    pct(values, 0.9) * 1000, max(values) * 1000))
        say("%-34s %10s %10s %8s" % ("ledger (after the warm-up)", "before",
                                     "after", "delta"))
        for key in soak["before"]:
            b, a = soak["before"][key], soak["after"].get(key)
            say("%-34s %10s %10s %8s" % (key, b, a, "-" if a is None
                                         else a - b))
        for key in soak["before"]:
            if key.startswith("RSS KiB ") and key in soak["after"]:
                grew = soak["after"][key] - soak["before"][key]
                say("%s RSS growth %+.1f MB over %d cycles (target < 2 MB)"
                    ": %s" % (key[8:], grew / 1024, len(cycles), "met"
                              if grew < 2048 else "NOT met"))
        say("(counts are host-wide; the soak volume's tgt export, built on "
            "its first attach and kept until the volume is deleted, by "
            "design, already exists after the warm-up)")
    if res.get("create_retries"):
        say("\nnote: %d volume create(s) went error and were made again "
            "before the timed parts (minicinder's log says why)"
            % res["create_retries"])
    say("\nleft of this run's own objects after clean-up: %s" % (
        res.get("ours") or "nothing"))
    say("ministack-audit exit code: %s (it audits the whole host, so "
        "other tests' objects count too)" % audit_rc)
    if png:
        say("chart: %s" % png)


def chart(results, path):
    """Write the PNG; None when matplotlib is missing or nothing ran."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    lat, soak = results.get("latency"), results.get("soak")
    conc = results.get("concurrency")
    panels = [p for p in (lat, conc, soak and soak["cycles"]) if p]
    if not panels:
        return None
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 5))
    axes = list(axes) if len(panels) > 1 else [axes]
    if lat:
        ax = axes.pop(0)
        keys = [("api_in_use", "attach\nin-use"),
                ("api_visible", "attach\nguest"),
                ("floor_visible", "floor\nattach"),
                ("api_available", "detach\navailable"),
                ("api_gone", "detach\nguest"),
                ("floor_gone", "floor\ndetach")]
        data = [[x * 1000 for x in lat[k] if x is not None] for k, _ in keys]
        ax.boxplot(data, tick_labels=[label for _, label in keys])
        ax.set_ylabel("ms from request accepted")
        ax.set_title("attach/detach latency (n=%d)" % len(lat["api_visible"]))
    if conc:
        ax = axes.pop(0)
        ax.bar(["attach all", "detach all"],
               [conc["attach_wall"], conc["detach_wall"]], label="stack")
        if conc.get("floor"):
            ax.bar(["floor attach all", "floor detach all"],
                   [conc["floor"]["attach_wall"],
                    conc["floor"]["detach_wall"]], label="floor (by hand)")
            ax.legend()
        ax.set_ylabel("wall seconds")
        ax.set_title("%d servers x %d volumes at once (%d/%d errors)" % (
            conc["g"], conc["v"], conc["attach_errors"],
            conc["detach_errors"]))
    if soak and soak["cycles"]:
        ax = axes.pop(0)
        cycles = soak["cycles"]
        ax.plot([c[0] * 1000 for c in cycles], label="attach -> in-use")
        ax.plot([c[1] * 1000 for c in cycles], label="detach -> available")
        ax.set_xlabel("cycle")
        ax.set_ylabel("ms")
        ax.set_title("soak: %d cycles, median attach %.0f ms" % (
            len(cycles), statistics.median(c[0] for c in cycles) * 1000))
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
