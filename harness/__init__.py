"""mlx-harness: benchmarking and compatibility harness for local inference on MLX."""

__version__ = "0.2.0"
