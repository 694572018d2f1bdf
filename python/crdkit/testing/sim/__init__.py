"""A simulated cluster on a real apiserver: Nodes registered as a kubelet would
(``nodes.simulated_node``, ``nodes.create_nodes``), a ``kubelet.SimulatedKubelet`` that runs the
pods bound to them, and a virtual clock (``virtual_time``) for timing without waiting. The names
users need are exported by :mod:`crdkit.testing` itself.
"""
