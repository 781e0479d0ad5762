"""Read an installed package without importing it: version, model modules, rules in its source.

Importing ``mlx_lm.tokenizer_utils`` (or any ``mlx_vlm`` module) imports mlx, so the probe reads
the installed files instead: literal constants with ``ast.literal_eval``, and small pure functions
compiled on their own. A function is taken only when every name it uses is a builtin, one of its
own locals, another pure top-level function or a literal constant of the same file; anything else
raises :class:`SourceError` and the caller falls back to its own copy of the rules.
"""

from __future__ import annotations

import ast
import builtins
import copy
import importlib.metadata
import importlib.util
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any


class SourceError(Exception):
    """The installed source does not have what we look for in a form we can use."""


def package_dir(name: str) -> Path | None:
    """The directory of an installed top-level package, found without executing it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def distribution_version(dist: str) -> str | None:
    """The installed version of a distribution (``mlx-lm``), None when it is not installed."""
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def installed_versions() -> dict[str, str]:
    """Every distribution this process's Python sees, ``name -> version`` with normalised
    names (PEP 503; the first on the path wins, as imports do)."""
    from packaging.utils import canonicalize_name

    found: dict[str, str] = {}
    for dist in importlib.metadata.distributions():
        # the name from the dist-info folder when the path distribution has one (no METADATA
        # parse: a run start reads every installed distribution), else from its metadata
        name = getattr(dist, "_normalized_name", None) or dist.metadata["Name"]
        if name:
            found.setdefault(canonicalize_name(name), _version_of(dist))
    return dict(sorted(found.items()))


def _version_of(dist: importlib.metadata.Distribution) -> str:
    """A distribution's version: from its ``NAME-VERSION.dist-info`` folder when it has one (as
    installers write it, PEP 427/491), else from its METADATA. Parsing the METADATA of every
    installed distribution took 0.26 s of each run's start."""
    folder = getattr(dist, "_path", None)
    if isinstance(folder, Path) and folder.name.endswith(".dist-info"):
        _, sep, version = folder.name[: -len(".dist-info")].rpartition("-")
        if sep and version:
            return version
    return dist.version


def model_modules(directory: Path) -> frozenset[str]:
    """Module names in a ``models/`` directory: ``name.py`` files and packages."""
    if not directory.is_dir():
        return frozenset()
    found = set()
    for entry in directory.iterdir():
        if entry.name.startswith("_"):
            continue
        if entry.suffix == ".py":
            found.add(entry.stem)
        elif entry.is_dir() and (entry / "__init__.py").is_file():
            found.add(entry.name)
    return frozenset(found)


def parse(path: Path) -> ast.Module:
    try:
        return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, SyntaxError, UnicodeDecodeError) as exc:
        raise SourceError(f"{path}: cannot parse ({exc})") from None


def literal(tree: ast.Module, name: str) -> Any:
    """The value of a top-level ``NAME = <literal>`` (or annotated) assignment."""
    for node in tree.body:
        value = _assigned(node, name)
        if value is not None:
            try:
                return ast.literal_eval(value)
            except (ValueError, SyntaxError, TypeError):
                raise SourceError(f"{name} is not a literal") from None
    raise SourceError(f"no top-level {name}")


def literal_or(path: Path, name: str, default: Any) -> Any:
    """:func:`literal` of a file, or ``default`` when the file or the name is not usable."""
    try:
        return literal(parse(path), name)
    except SourceError:
        return default


def stdlib_only(tree: ast.Module) -> bool:
    """True when a module imports nothing but the standard library (no relative imports)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                return False
            names = [node.module or ""]
        else:
            continue
        if any(n.split(".")[0] not in sys.stdlib_module_names for n in names):
            return False
    return True


def class_literal(tree: ast.Module, cls: str, name: str) -> Any:
    """The literal value of ``name`` assigned in the body of top-level class ``cls``."""
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for item in node.body:
                value = _assigned(item, name)
                if value is not None:
                    try:
                        return ast.literal_eval(value)
                    except (ValueError, SyntaxError, TypeError):
                        raise SourceError(f"{cls}.{name} is not a literal") from None
    raise SourceError(f"no {cls}.{name}")


def _assigned(node: ast.stmt, name: str) -> ast.expr | None:
    if isinstance(node, ast.Assign) and any(
        isinstance(t, ast.Name) and t.id == name for t in node.targets
    ):
        return node.value
    if (
        isinstance(node, ast.AnnAssign)
        and isinstance(node.target, ast.Name)
        and node.target.id == name
        and node.value is not None
    ):
        return node.value
    return None


def functions(tree: ast.Module, names: tuple[str, ...], *, origin: str) -> Mapping[str, Callable]:
    """Compile the named top-level functions (and the pure helpers they call) in isolation."""
    defs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    consts = {
        t.id: n.value
        for n in tree.body
        if isinstance(n, ast.Assign)
        for t in n.targets
        if isinstance(t, ast.Name)
    }
    wanted: list[str] = []
    namespace: dict[str, Any] = {"__builtins__": builtins}
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in wanted:
            continue
        if name not in defs:
            raise SourceError(f"{origin}: no top-level function {name}")
        wanted.append(name)
        defs[name] = _bare(defs[name])
        for free in sorted(_free_names(defs[name])):
            if free in defs:
                todo.append(free)
            elif free in consts and free not in namespace:
                try:
                    namespace[free] = ast.literal_eval(consts[free])
                except (ValueError, SyntaxError, TypeError):
                    raise SourceError(f"{origin}: {name} uses non-literal {free}") from None
            elif not hasattr(builtins, free) and free not in consts:
                raise SourceError(f"{origin}: {name} uses {free}, which is not self-contained")
    module = ast.Module(body=[defs[n] for n in wanted], type_ignores=[])
    exec(compile(module, origin, "exec"), namespace)  # installed package source, pure functions
    return {n: namespace[n] for n in names}


def _bare(node: ast.FunctionDef) -> ast.FunctionDef:
    """A copy without annotations (they would need the file's imports); decorators refused."""
    if node.decorator_list:
        raise SourceError(f"function {node.name} is decorated")
    node = copy.deepcopy(node)
    for inner in ast.walk(node):
        if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inner.returns = None
        elif isinstance(inner, ast.arg):
            inner.annotation = None
    return node


def _free_names(func: ast.FunctionDef) -> set[str]:
    """Names a function reads that it does not bind itself (params, assignments, loops...)."""
    bound = {a.arg for a in (*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs)}
    if func.args.vararg:
        bound.add(func.args.vararg.arg)
    if func.args.kwarg:
        bound.add(func.args.kwarg.arg)
    loads: set[str] = set()
    for node in ast.walk(func):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                loads.add(node.id)
            else:
                bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.Lambda)) and node is not func:
            if isinstance(node, ast.FunctionDef):
                bound.add(node.name)
            args = node.args
            bound.update(a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs))
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal)):
            raise SourceError(f"function {func.name} imports or rebinds globals")
    return loads - bound
