"""minicinder's REST layer: Flask blueprints, schemas, views, faults.

Blueprints only parse, validate and render; every rule about volumes lives
in ``minicinder.volume``. Domain exceptions become fault bodies in exactly
one place, :func:`minicinder.api.app.create_app`'s error handler.
"""
