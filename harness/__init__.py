"""mlx-harness: benchmarking and compatibility harness for local inference on MLX."""

__version__ = "0.1.0"
