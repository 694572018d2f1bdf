"""Gang scheduling of Volcano Jobs for distributed training, as policy on top of crdkit.

A `Job` (``batch.volcano.sh/v1alpha1``) becomes a Volcano PodGroup and its pods (`operator.py`);
`crdkit.scheduling.GangScheduler`, in the same process, binds those pods all together inside the
network-topology domain the Job's ``networkTopology`` asks for, or not at all.
"""
