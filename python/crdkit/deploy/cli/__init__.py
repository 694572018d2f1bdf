"""The deploy room's commands: ``crdkit gen-manifests``, ``gen-rbac`` and ``gen-webhooks``.

Each command is its own module (``manifests``, ``rbac``, ``webhooks``), imported by
``crdkit.cli`` only when it is run; none of them loads an HTTP stack (they write files, they do
not talk to a cluster).
"""
