"""JSON schemas of request bodies and query strings, per microversion.

Each module mirrors one upstream schema module
(``nova/api/openstack/compute/schemas/<resource>.py``): the same property
names, patterns and ``additionalProperties: false`` rules, so a request
upstream rejects with 400 is rejected here too.
"""
