"""Read replicas for Kit's reads, with read-your-writes: plumbing with no product in it.

The CRM (``outreach``) runs each read-only operation and page through
:func:`pgreplicas.routing.read` and tells :func:`pgreplicas.routing.wrote` after each write;
Django's router (``pgreplicas.routing.ReplicaRouter``, named in ``DATABASE_ROUTERS``) and
:mod:`pgstatements` send that read's queries where ``read`` chose. With no
``DATABASE_REPLICA_URLS`` every call is the plain work on the primary.
"""
