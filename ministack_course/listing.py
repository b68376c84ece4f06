"""The journey page's listing: the newest traces of the store.

``GET /trace/`` (:mod:`ministack_course.web`) lists them without building
every trace's hops: two queries of osprofiler's ``data`` table (the
store's modules are imported when it is read: the page's import stays
light).
"""


def recent_traces(connection_string, limit=50):
    """The newest ``limit`` traces of the store, newest first: trace id,
    start, what started it (``METHOD /path`` of its first WSGI span, or
    the first span's name), its services and hop count.

    Read from osprofiler's ``data`` table
    (:func:`ministack.trace.storage.data_table`) in two queries, without
    building every trace's hops.
    """
    import sqlalchemy as sa

    from ministack.trace import naming
    from ministack.trace import storage
    table = storage.data_table()
    storage.flush()
    engine = storage.engine(connection_string)
    try:
        with engine.connect() as conn:
            newest = conn.execute(
                sa.select(table.c.base_id, sa.func.min(table.c.id),
                          sa.func.min(table.c.timestamp),
                          sa.func.count(sa.distinct(table.c.trace_id)))
                .group_by(table.c.base_id)
                .order_by(sa.func.min(table.c.id).desc())
                .limit(limit)).all()
            if not newest:
                return []
            firsts = {row[1] for row in newest}
            heads = {row.base_id: row for row in conn.execute(
                sa.select(table.c.base_id, table.c.name, table.c.data)
                .where(table.c.id.in_(firsts)))}
            services = {}
            for base_id, service in conn.execute(
                    sa.select(table.c.base_id, table.c.service)
                    .where(table.c.base_id.in_([r[0] for r in newest]))
                    .distinct()):
                services.setdefault(base_id, set()).add(service or "")
    finally:
        engine.dispose()
    traces = []
    for base_id, _first, started, count in newest:
        head = heads.get(base_id)
        name = head.name if head is not None else ""
        request = (storage.notification_data(head.data).get("info")
                   or {}).get("request") \
            if head is not None else None
        if isinstance(request, dict) and request.get("path"):
            name = naming.rest_name(request.get("method", "?"),
                                    request["path"])
        traces.append({"trace_id": base_id,
                       # osprofiler stamps UTC without saying so.
                       "started_at": started and started + "+00:00",
                       "name": name,
                       "services": sorted(services.get(base_id, ())),
                       "hops": count})
    return traces
