"""The compute API v2.1: Flask blueprints, one per resource.

Each blueprint only parses and validates the request (JSON schema per
microversion), calls ``miniapi.compute.api`` and renders a view; domain
exceptions become fault bodies in exactly one place (``faults``).
"""
