"""Identity for ministack's services: upstream Keystone does the rest.

Keystone itself is upstream's (devstack/lib/keystone deploys it). What the
services need around it:

* ``authtoken``  ``auth_strategy = keystone``: keystonemiddleware's
                 auth_token in front of every REST service, and the
                 request context from the headers it sets (used by
                 ``ministack.wsgi.ContextMiddleware``);
* ``client``     the user + service token a service forwards to another
                 (nova -> cinder);
* ``conf``       ``[service_user]``, the account behind that service token.
"""
