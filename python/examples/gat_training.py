"""A two-layer graph attention network (GAT) trained for a few steps on a
small random graph, its attention aggregation compiled by linnet
(MessagePassing with the softmax reducer), next to the same model in plain
PyTorch: the losses and gradients agree.

    PYTHONPATH=build/python /usr/bin/python3 python/examples/gat_training.py
"""

import torch

import linnet


class Attention(linnet.MessagePassing):
    """out[d] = sum over edges s -> d of softmax_d(leaky_relu(a_s + b_d)) * h_s, per head."""
    reducer = linnet.softmax()

    def edge(self, src, dst, edge):
        return torch.nn.functional.leaky_relu(src.a + dst.b, 0.2), src.h


def torch_attention(src, dst, num_nodes, a, b, h):
    score = torch.nn.functional.leaky_relu(a[src] + b[dst], 0.2)  # [E, H, 1]
    idx = dst.reshape(-1, 1, 1).expand_as(score)
    mx = torch.zeros((num_nodes,) + score.shape[1:], dtype=score.dtype).scatter_reduce(
        0, idx, score, "amax", include_self=False)
    ex = (score - mx[dst]).exp()
    den = torch.zeros_like(mx).index_add(0, dst, ex)
    return torch.zeros((num_nodes,) + h.shape[1:], dtype=h.dtype).index_add(
        0, dst, ex / den[dst] * h[src])


class GATLayer(torch.nn.Module):
    def __init__(self, fin, fout, heads, attend):
        super().__init__()
        self.heads, self.fout = heads, fout
        self.lin = torch.nn.Linear(fin, heads * fout, bias=False).double()
        self.att_src = torch.nn.Parameter(torch.randn(heads, fout, dtype=torch.float64) * 0.3)
        self.att_dst = torch.nn.Parameter(torch.randn(heads, fout, dtype=torch.float64) * 0.3)
        self.attend = attend

    def forward(self, x):
        h = self.lin(x).view(-1, self.heads, self.fout)
        a = (h * self.att_src).sum(-1, keepdim=True)
        b = (h * self.att_dst).sum(-1, keepdim=True)
        return self.attend(a, b, h).reshape(-1, self.heads * self.fout)


class GAT(torch.nn.Module):
    def __init__(self, dims, heads, attend):
        super().__init__()
        self.conv1 = GATLayer(dims[0], dims[1], heads, attend)
        self.conv2 = GATLayer(dims[1] * heads, dims[2], 1, attend)

    def forward(self, x):
        return self.conv2(torch.nn.functional.elu(self.conv1(x)))


def train(model, x, y, steps, lr=0.05):
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    losses, grads = [], []
    for _ in range(steps):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        losses.append(loss.item())
        grads.append([p.grad.clone() for p in model.parameters()])
        opt.step()
    return losses, grads


def main(steps=5, num_nodes=30, num_edges=120, dims=(6, 4, 3), heads=2):
    g = torch.Generator().manual_seed(0)
    src = torch.cat([torch.randint(0, num_nodes, (num_edges,), generator=g),
                     torch.arange(num_nodes)])
    dst = torch.cat([torch.randint(0, num_nodes, (num_edges,), generator=g),
                     torch.arange(num_nodes)])
    graph = linnet.Graph.from_coo(src, dst, num_src=num_nodes, num_dst=num_nodes,
                                  validate="full")
    kernel = Attention()

    def linnet_attend(a, b, h):
        return kernel(graph=graph, src={"a": a, "h": h}, dst={"b": b})

    def plain_attend(a, b, h):
        return torch_attention(src, dst, num_nodes, a, b, h)

    x = torch.randn(num_nodes, dims[0], dtype=torch.float64, generator=g)
    y = torch.randint(0, dims[2], (num_nodes,), generator=g)
    torch.manual_seed(3)
    ours = GAT(dims, heads, linnet_attend)
    ref = GAT(dims, heads, plain_attend)
    ref.load_state_dict(ours.state_dict())
    l1, g1 = train(ours, x, y, steps)
    l2, g2 = train(ref, x, y, steps)
    for step, (a, b) in enumerate(zip(l1, l2)):
        print(f"step {step}: loss linnet {a:.6f}  pytorch {b:.6f}")
    return l1, l2, g1, g2


if __name__ == "__main__":
    main()
