"""Family sweeps: every upstream model family (mlx-lm text architectures, mlx-vlm vision
families, mlx-audio families) generated tiny and tried, one family at a time, in worker processes;
the matrix cached per installed library version.

- :mod:`.row`: a family's row, its cells and outcomes, and the steps of a trial;
- :mod:`.matrix`: :class:`~.matrix.MatrixSpec` and :class:`~.matrix.FamilyMatrix`: running rows
  in workers, reading their events, the per-version cache;
- :mod:`.worker`: the one worker process, told which kind's trial to run;
- per kind, its trial and its matrix: :mod:`.text` and :mod:`.text_matrix` (mlx-lm),
  :mod:`.vision` and :mod:`.vision_matrix` (mlx-vlm), :mod:`.audio` and :mod:`.audio_matrix`
  (mlx-audio).

The tiny models themselves are built by :mod:`harness.models.zoo` (``derive_*``, ``build*``).
"""
