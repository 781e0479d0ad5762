"""Root conftest: the harness plugin itself is registered through the ``pytest11`` entry point.

``pytester`` is enabled here so plugin tests can run pytest in a temporary directory.
"""

pytest_plugins = ["pytester"]
