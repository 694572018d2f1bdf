"""``crdkit scheduler --ui``: a live web page of the cluster as the scheduler sees it.

`server.ViewServer` serves the page (``assets/``: plain HTML, CSS and JavaScript, nothing
fetched from elsewhere), the latest `crdkit.scheduling.view.format.Snapshot` as JSON, and a
stream of server-sent events: the snapshot whole, then only what changed (`delta`).
"""
