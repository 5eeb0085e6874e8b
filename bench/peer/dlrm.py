"""dlrm at tbd's small scale, as a performance-aware PyTorch user writes it.

Same step as src/tbd/workloads/dlrm.cpp with src/tbd/nn/dlrm.cpp: DLRM in the
Criteo Kaggle configuration of facebookresearch/dlrm with every table capped
at 100,000 rows (tbd's small scale): 26 sum-mode EmbeddingBags of dimension 16
with sparse gradients, bottom MLP 13-512-256-64-16 (ReLU after every layer),
pairwise dot interaction without self-pairs, top MLP 367-512-256-1; binary
cross-entropy on the logit; plain SGD lr 0.1; fp32. 13,924,673 parameters.

Performance choices: the dense MLP parameters take a fused SGD step; the
embedding tables, whose gradients are sparse, take torch.optim.SGD's sparse
path (fused and foreach kernels are dense only: fused=True refuses sparse
gradients). The 26 id columns are made contiguous in one transpose copy
rather than one copy per table, and the bag offsets (one id per bag) are
made once per batch size, not per step.
"""
import math

import timing  # first: it quiets torch's NumPy warning on import

import torch
import torch.nn as nn
import torch.nn.functional as F

import synthetic

KAGGLE_TABLES = [1460, 583, 10131227, 2202608, 305, 24, 12517, 633, 3, 93145, 5683, 8351593, 3194,
                 27, 14992, 5461306, 10, 5652, 2173, 4, 7046547, 18, 15, 286181, 105, 142572]
TABLES = [min(rows, 100_000) for rows in KAGGLE_TABLES]  # tbd's small scale
DENSE, DIM, BOTTOM, TOP = 13, 16, (512, 256, 64), (512, 256)


def mlp(widths):
    return nn.ModuleList(nn.Linear(a, b) for a, b in zip(widths[:-1], widths[1:]))


class DLRM(nn.Module):
    def __init__(self, tables):
        super().__init__()
        vectors = len(tables) + 1
        self.bottom = mlp([DENSE, *BOTTOM, DIM])
        self.top = mlp([DIM + vectors * (vectors - 1) // 2, *TOP, 1])
        self.tables = nn.ModuleList(nn.EmbeddingBag(rows, DIM, mode="sum", sparse=True) for rows in tables)
        with torch.no_grad():  # the reference initialisation, as tbd
            for bag, rows in zip(self.tables, tables):
                bound = math.sqrt(1.0 / rows)
                bag.weight.uniform_(-bound, bound)
            for layer in (*self.bottom, *self.top):
                out, inp = layer.weight.shape
                layer.weight.normal_(0.0, math.sqrt(2.0 / (inp + out)))
                layer.bias.normal_(0.0, math.sqrt(1.0 / out))
        rows, cols = torch.tril_indices(vectors, vectors, -1)  # pairs (i, j) with i > j
        self.register_buffer("pair_rows", rows.contiguous())
        self.register_buffer("pair_cols", cols.contiguous())
        self._offsets = {}

    def forward(self, dense, sparse):
        batch = dense.size(0)
        x = dense
        for layer in self.bottom:  # ReLU after the last layer too (the reference's bottom MLP)
            x = F.relu(layer(x))
        offsets = self._offsets.get(batch)
        if offsets is None:  # one id per bag: bag b holds exactly sparse[b, t]
            offsets = self._offsets[batch] = torch.arange(batch)
        ids = sparse.t().contiguous()  # [26, B]: each table's ids contiguous, in one copy
        vectors = [x] + [bag(ids[t], offsets) for t, bag in enumerate(self.tables)]
        everything = torch.stack(vectors, 1)                               # [B, 27, d]
        dots = torch.bmm(everything, everything.transpose(1, 2))           # [B, 27, 27]
        y = torch.cat([x, dots[:, self.pair_rows, self.pair_cols]], 1)     # [B, 16 + 351]
        for i, layer in enumerate(self.top):
            y = layer(y)
            if i + 1 < len(self.top):
                y = F.relu(y)
        return y.squeeze(1)


def click_logs(batch_size, seed):
    """tbd's DLRM::make_synthetic, draw for draw on a CPU generator: heavy-tailed
    dense counts through log(1 + x), ids from a power law over ranks scattered
    by a multiplicative hash, labels with a 25.6% click rate."""
    gen = torch.Generator().manual_seed(synthetic.derive_seed(synthetic.data_seed(seed), 0xD1E))
    batches = []
    for _ in range(4):
        counts = torch.floor(torch.exp(torch.randn(batch_size, DENSE, generator=gen) * 1.5 + 1.0))
        ids = []
        for rows in TABLES:
            rank = torch.floor(torch.exp(torch.rand(batch_size, generator=gen) * math.log(rows))).long() - 1
            ids.append((rank.clamp(0, rows - 1) * 2654435761).remainder(rows))
        labels = torch.bernoulli(torch.full((batch_size,), 0.256), generator=gen)
        batches.append((torch.log1p(counts), torch.stack(ids, 1), labels))
    return batches


def build(args):
    model = DLRM(TABLES).train()
    dense = [p for name, p in model.named_parameters() if not name.startswith("tables.")]
    sparse = list(model.tables.parameters())
    dense_sgd = torch.optim.SGD(dense, lr=0.1, fused=True)
    sparse_sgd = torch.optim.SGD(sparse, lr=0.1)  # sparse gradients: the per-tensor sparse add

    def step(batch):
        dense_features, ids, labels = batch
        loss = F.binary_cross_entropy_with_logits(model(dense_features, ids), labels)
        loss.backward()
        dense_sgd.step()
        sparse_sgd.step()
        dense_sgd.zero_grad(set_to_none=True)
        sparse_sgd.zero_grad(set_to_none=True)
        return loss.detach()

    batches = click_logs(args.batch_size, args.seed)
    return timing.Peer(model, batches, [args.batch_size] * len(batches), step, "samples",
                       {"table_sizes": TABLES, "embedding_dim": DIM, "bottom_mlp": [DENSE, *BOTTOM, DIM],
                        "top_mlp": [model.top[0].in_features, *TOP, 1],
                        "optimizer": "SGD(fused=True) on the MLPs, SGD (sparse path) on the tables"})


if __name__ == "__main__":
    timing.main("dlrm", build, timing.parser("dlrm (tbd small) in PyTorch", default_batch=128))
