"""A Volcano-style gang scheduler for distributed training jobs, built on crdkit.

A `Job` (``batch.volcano.sh/v1alpha1``) is admitted only when every pod of it fits inside the
network-topology domain its ``networkTopology`` asks for; its pods are then created and bound
there together, or not at all.
"""
