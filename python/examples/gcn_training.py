"""A two-layer GCN trained for a few steps on a small random graph, its
aggregations compiled by linnet (MessagePassing), next to the same model in
plain PyTorch: the losses and gradients agree.

    PYTHONPATH=build/python /usr/bin/python3 python/examples/gcn_training.py
"""

import torch

import linnet


class Aggregate(linnet.MessagePassing):
    """out[d] = sum over edges s -> d of x[s] * w[e]."""
    reducer = linnet.sum()

    def edge(self, src, dst, edge):
        return src.x * edge.w


def normalized_graph(num_nodes, num_edges, seed):
    """A random graph with self loops and GCN's symmetric normalization
    D^-1/2 (A + I) D^-1/2 as edge weights (COO order)."""
    g = torch.Generator().manual_seed(seed)
    src = torch.cat([torch.randint(0, num_nodes, (num_edges,), generator=g),
                     torch.arange(num_nodes)])
    dst = torch.cat([torch.randint(0, num_nodes, (num_edges,), generator=g),
                     torch.arange(num_nodes)])
    deg = torch.bincount(dst, minlength=num_nodes).double()
    w = (deg[src] * deg[dst]).rsqrt()
    return src, dst, w


class GCN(torch.nn.Module):
    def __init__(self, dims, aggregate):
        super().__init__()
        self.lin1 = torch.nn.Linear(dims[0], dims[1]).double()
        self.lin2 = torch.nn.Linear(dims[1], dims[2]).double()
        self.aggregate = aggregate

    def forward(self, x):
        h = torch.relu(self.lin1(self.aggregate(x)))
        return self.lin2(self.aggregate(h))


def train(model, x, y, steps, lr=0.1):
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


def main(steps=5, num_nodes=40, num_edges=160, dims=(8, 16, 3)):
    src, dst, w = normalized_graph(num_nodes, num_edges, seed=0)
    graph = linnet.Graph.from_coo(src, dst, num_src=num_nodes, num_dst=num_nodes,
                                  validate="full")
    kernel = Aggregate()

    def linnet_aggregate(h):
        return kernel(graph=graph, src={"x": h}, edge={"w": w})

    def torch_aggregate(h):
        return torch.zeros_like(h).index_add_(0, dst, h[src] * w.unsqueeze(1))

    g = torch.Generator().manual_seed(1)
    x = torch.randn(num_nodes, dims[0], dtype=torch.float64, generator=g)
    y = torch.randint(0, dims[2], (num_nodes,), generator=g)
    torch.manual_seed(2)
    ours = GCN(dims, linnet_aggregate)
    ref = GCN(dims, torch_aggregate)
    ref.load_state_dict(ours.state_dict())
    l1, g1 = train(ours, x, y, steps)
    l2, g2 = train(ref, x, y, steps)
    for step, (a, b) in enumerate(zip(l1, l2)):
        print(f"step {step}: loss linnet {a:.6f}  pytorch {b:.6f}")
    return l1, l2, g1, g2


if __name__ == "__main__":
    main()
