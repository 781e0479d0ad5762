"""What both drivers share: the run logic ``mlx-harness run`` (:mod:`harness.cli`) and the pytest
plugin (:mod:`harness.pytest_plugin`) call as siblings, so neither imports the other.

- :mod:`~harness.drive.run_options`: the options both declare (``--resume``, ``--baseline``,
  ``--no-report`` and the exit rules'), and the one check of ``--run-id`` against ``--resume``;
- :mod:`~harness.drive.exit_rules`: the exit rules' options, what they chose
  (:class:`ExitRules`) and its lines after a run (what besides failed cases
  turns the exit status to 1);
- :mod:`~harness.drive.run_end`: what happens when a run ends (read the record back, compare
  with the baseline, render the reports, point ``latest`` at them).

It sits above the report layer and below the drivers; it imports no driver.
"""
