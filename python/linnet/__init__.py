"""linnet from Python: compiled message-passing kernels with autograd, and
compiled `.ln` models as `torch.nn.Module`s.

    import linnet
    class WeightedAggregation(linnet.MessagePassing):
        reducer = linnet.sum()
        def edge(self, src, dst, edge):
            return src.x * edge.weight
"""

from . import _core
from ._compiler import CompileError, linnet_bin
from .graph import Graph
from .message_passing import MessagePassing, Reducer, max, mean, min, softmax, sum  # noqa: A004
from .module import LinnetModule, compile, load  # noqa: A004
from .reference import ReferenceModule, reference

Model = _core.Model

__all__ = ["CompileError", "Graph", "LinnetModule", "MessagePassing", "Model", "Reducer", "ReferenceModule",
           "compile", "linnet_bin", "load", "max", "mean", "min", "reference", "softmax", "sum"]
