"""The cluster as the scheduler sees it, for people: expected starts, the queue, and a picture
of the topology with the room each job and reservation holds (`format`)."""
