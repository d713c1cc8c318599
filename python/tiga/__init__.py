"""Compatibility names for programs written against the `tiga` API: the same
objects as linnet's (`MessagePassing`, `Graph`, the reducers)."""

from linnet import Graph, MessagePassing, Reducer, max, mean, min, softmax, sum  # noqa: A004

__all__ = ["Graph", "MessagePassing", "Reducer", "max", "mean", "min", "softmax", "sum"]
