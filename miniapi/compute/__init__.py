"""The API phase of every compute operation (nova's compute/api.py role).

The blueprints in ``miniapi.api`` validate requests and render views; this
package decides whether an operation may happen (instance state, compute
service up, volume already attached...), records the instance action,
writes the database and sends the RPC to the instance's compute host. It
is where every side effect of the API phase is paired with its undo.
"""
