"""Running cases: worker subprocesses per model, machine fingerprint, the run in progress."""
