"""``python -m examples.gang_scheduler``: run the gang scheduler (see ``run.py``)."""

from examples.gang_scheduler.run import main

main()
