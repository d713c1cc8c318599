"""The numerics policy from Python (language §8.4): `linnet.compile(...,
numerics=...)`. As written, each bf16 op rounds to bf16, which is what
PyTorch's eager bf16 ops compute; under f32-compute `a * b + c` is computed
in f32 and rounded once, as `((a.float() * b.float()) + c.float()).bfloat16()`."""
import pytest
import torch

import linnet

SRC = """module np
pub block B<N: dim> {
    pub entry fma3(a: Tensor[N; bf16], b: Tensor[N; bf16], c: Tensor[N; bf16]) -> Tensor[N; bf16] {
        [i: N] a[i] * b[i] + c[i]
    }
}
"""


@pytest.fixture()
def src(tmp_path):
    p = tmp_path / "np.ln"
    p.write_text(SRC)
    return str(p)


def inputs():
    g = torch.Generator().manual_seed(7)
    return [torch.randn(256, generator=g).bfloat16() for _ in range(3)]


def test_as_written_is_pytorch_eager(src):
    a, b, c = inputs()
    m = linnet.compile(src, dims={"N": 256})
    got = m.fma3(a, b, c)
    assert got.dtype == torch.bfloat16
    assert torch.equal(got, a * b + c)


def test_f32_compute_rounds_once(src):
    a, b, c = inputs()
    m = linnet.compile(src, dims={"N": 256}, numerics="f32-compute")
    got = m.fma3(a, b, c)
    want = (a.float() * b.float() + c.float()).bfloat16()
    assert torch.equal(got, want)
    assert not torch.equal(got, a * b + c)  # the policies differ here


def test_unknown_policy(src):
    with pytest.raises(ValueError, match="numerics must be 'as-written' or 'f32-compute'"):
        linnet.compile(src, dims={"N": 256}, numerics="fast")
