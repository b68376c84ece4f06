"""Identity for ministack: a keystone v3 subset and local token checks.

Modules, from the wire inwards:

* ``app``         the keystone v3 Flask app (version discovery, token
                  issue and validation, catalog), served by miniapi;
* ``middleware``  ``auth_strategy = keystone`` for every REST service
                  (used by ``ministack.wsgi.ContextMiddleware``);
* ``client``      the user + service token a service forwards to another
                  (nova -> cinder);
* ``auth``        the password, token and application credential methods
                  and the project scope;
* ``views``       version documents, catalog and token bodies;
* ``tokens``      Fernet-sealed tokens under one shared key;
* ``passwords``   scrypt hashes of passwords and secrets;
* ``store``       the identity tables in the nova database
                  (``ministack/nova_db/identity_models.py``);
* ``manage``      bootstrap (key, users, projects, roles) for devstack;
* ``conf``        ``[identity]``, ``[catalog]``, ``[service_user]``.
"""
