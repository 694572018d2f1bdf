"""``crdkit init``'s project scaffold: the names a project is built from (``names``), its
files rendered from the templates shipped in ``templates/`` (``templates``), and the folder
they go into (``target``). The command itself is ``crdkit.deploy.cli.init``."""
