"""crdkit.scheduling: topology-aware gang scheduling on a live cluster."""
