"""A TrainingJob operator that gang-places its master and workers with crdkit.scheduling."""
