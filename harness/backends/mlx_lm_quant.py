"""mlx-lm's weight quantisation in process (:class:`harness.backends.base.WeightQuantizing`),
mixed into :class:`harness.backends.mlx_lm.MlxLmModel`: a copy of the loaded model through
``mlx_lm.utils.quantize_model`` (the path ``mlx_lm.convert -q --q-mode`` takes: its layer
predicate, the model's own ``quant_predicate``), and the dequantised twin of that copy."""

from __future__ import annotations

import contextlib
import copy
import io
from typing import Any

from harness.backends.base import QuantUnsupported
from harness.backends.weight_quant import QuantizedWeights, WeightQuant
from harness.core.exception_line import exception_line


def _leaves(model: Any) -> list[tuple[str, Any]]:
    import mlx.nn as nn
    from mlx.utils import tree_flatten

    flat: Any = tree_flatten(model.leaf_modules(), is_leaf=lambda m: isinstance(m, nn.Module))
    return list(flat)


def _is_quantized(module: Any) -> bool:
    return hasattr(module, "scales") and hasattr(module, "mode")


def _nbytes(model: Any) -> int:
    from mlx.utils import tree_flatten

    flat: Any = tree_flatten(model.parameters())
    return sum(int(v.nbytes) for _, v in flat)


def check_mode(quant: WeightQuant) -> None:
    """:class:`QuantUnsupported` when the installed mlx cannot quantise as ``quant`` says."""
    from importlib.metadata import version

    import mlx.core as mx

    try:
        mx.eval(
            mx.quantize(
                mx.zeros((32, 2 * quant.group_size)),  # one row trips nvfp4 in mlx 0.32.4
                group_size=quant.group_size,
                bits=quant.bits,
                mode=quant.mode,
            )
        )
    except (TypeError, ValueError, RuntimeError) as exc:
        raise QuantUnsupported(
            f"mlx {version('mlx')} cannot quantise {quant.label}: {exception_line(exc)}"
        ) from exc


def _plain(module: Any, dtype: Any) -> Any | None:
    """A plain layer holding ``module``'s quantised weights dequantised (None: a kind this does
    not expand)."""
    import mlx.core as mx
    import mlx.nn as nn
    from mlx_lm.models.switch_layers import QuantizedSwitchLinear, SwitchLinear

    if not _expandable(module):
        return None
    weight = mx.dequantize(
        module.weight,
        module.scales,
        module.get("biases"),
        group_size=module.group_size,
        bits=module.bits,
        mode=module.mode,
    ).astype(dtype)
    if isinstance(module, nn.QuantizedLinear):
        layer = nn.Linear(int(weight.shape[1]), int(weight.shape[0]), bias="bias" in module)
        layer.weight = weight
        if "bias" in module:
            layer.bias = module.bias
        return layer
    if isinstance(module, QuantizedSwitchLinear):  # a mixture of experts' (gather_qmm)
        experts, out, width = (int(d) for d in weight.shape)
        switch = SwitchLinear(width, out, experts, bias="bias" in module)
        switch.weight = weight
        if "bias" in module:
            switch.bias = module.bias
        return switch
    if isinstance(module, nn.QuantizedEmbedding):
        embedding = nn.Embedding(int(weight.shape[0]), int(weight.shape[1]))
        embedding.weight = weight
        return embedding
    return None


def _expandable(module: Any) -> bool:
    """Whether :func:`_plain` expands ``module`` (a quantised layer)."""
    import mlx.nn as nn
    from mlx_lm.models.switch_layers import QuantizedSwitchLinear

    kinds = (nn.QuantizedLinear, nn.QuantizedEmbedding, QuantizedSwitchLinear)
    return isinstance(module, kinds) and module.get("global_scale") is None


def dequantized_twin(quantized: Any, dtypes: dict[str, Any]) -> Any:
    """A copy of ``quantized`` with each quantised layer :func:`_plain` expands replaced by a
    plain one holding its weights dequantised (at the dtype the original layer had)."""
    import mlx.core as mx
    from mlx.utils import tree_unflatten

    twin = copy.deepcopy(quantized)
    swaps: list[tuple[str, Any]] = []
    for path, module in _leaves(twin):
        plain = _plain(module, dtypes.get(path)) if _is_quantized(module) else None
        if plain is not None:
            swaps.append((path, plain))
    if swaps:
        twin.update_modules(tree_unflatten(swaps))
    mx.eval(twin.parameters())
    return twin


class MlxLmWeightQuant:
    """``quantize_weights`` on an mlx-lm model (mixed into :class:`MlxLmModel`)."""

    model: Any
    tokenizer: Any
    path: Any

    def weight_bytes(self) -> int:
        return _nbytes(self.model)

    def quantize_weights(self, quant: WeightQuant) -> QuantizedWeights:
        import mlx.core as mx
        from mlx_lm.utils import quantize_model

        check_mode(quant)
        leaves = _leaves(self.model)
        if any(_is_quantized(m) for _, m in leaves):
            raise QuantUnsupported(
                "the model is already quantised: quantise its unquantised weights instead"
            )
        dtypes = {p: m.weight.dtype for p, m in leaves if "weight" in m}
        quantized = copy.deepcopy(self.model)
        try:
            with contextlib.redirect_stdout(io.StringIO()):  # its "[INFO] Quantized model ..."
                quantize_model(quantized, {}, quant.group_size, quant.bits, mode=quant.mode)
        except (TypeError, ValueError, RuntimeError) as exc:
            raise QuantUnsupported(
                f"mlx-lm cannot quantise this model as {quant.label}: {exception_line(exc)}"
            ) from exc
        if not any(_is_quantized(m) for _, m in _leaves(quantized)):
            raise QuantUnsupported(
                f"no layer quantises as {quant.label}: no layer's input width divides by "
                f"group size {quant.group_size}"
            )
        mx.eval(quantized.parameters())
        cls = type(self)
        tokenizer, path = self.tokenizer, self.path
        return QuantizedWeights(
            model=cls(quantized, tokenizer, path),  # type: ignore[call-arg]
            twin=lambda: cls(dequantized_twin(quantized, dtypes), tokenizer, path),  # type: ignore[call-arg]
            weight_bytes=_nbytes(quantized),
            reference_weight_bytes=self.weight_bytes(),
            layers=sum(1 for _, m in _leaves(quantized) if _is_quantized(m)),
            unchecked=sum(
                1 for _, m in _leaves(quantized) if _is_quantized(m) and not _expandable(m)
            ),
        )
