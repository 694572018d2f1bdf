"""Example operators built on crdkit; `python -m examples.demo` runs the gang-scheduler demo."""
