"""ncf at tbd's small scale, as a performance-aware PyTorch user writes it.

Same step as src/tbd/workloads/ncf.cpp with src/tbd/nn/neumf.cpp: NeuMF
(MLPerf's layout) on MovieLens-1M sizes (6,040 users, 3,706 items), GMF
factors 64, MLP 256-256-128-64 over two 128-wide embeddings, one fused logit;
binary cross-entropy on the logit; Adam lr 1e-3; batches of 2048 with one
positive per four sampled negatives; fp32. 1,978,305 parameters.

Performance choices: fused Adam. Nothing else in the step is Python-heavy.
"""
import math

import timing  # first: it quiets torch's NumPy warning on import

import torch
import torch.nn as nn
import torch.nn.functional as F

import synthetic

USERS, ITEMS, MF_DIM, MLP_WIDTHS, NEGATIVES = 6040, 3706, 64, (256, 256, 128, 64), 4


class NeuMF(nn.Module):
    def __init__(self, users, items, mf_dim, widths):
        super().__init__()
        half = widths[0] // 2
        self.mf_user, self.mf_item = nn.Embedding(users, mf_dim), nn.Embedding(items, mf_dim)
        self.mlp_user, self.mlp_item = nn.Embedding(users, half), nn.Embedding(items, half)
        self.mlp = nn.ModuleList(nn.Linear(a, b) for a, b in zip(widths[:-1], widths[1:]))
        self.final = nn.Linear(widths[-1] + mf_dim, 1)
        # MLPerf's initialisation, as tbd: embeddings N(0, 0.01), MLP Glorot, logit layer LeCun uniform.
        with torch.no_grad():
            for e in (self.mf_user, self.mf_item, self.mlp_user, self.mlp_item):
                e.weight.normal_(0.0, 0.01)
            for layer in self.mlp:
                nn.init.xavier_uniform_(layer.weight)
                layer.bias.zero_()
            bound = math.sqrt(3.0 / self.final.weight.size(1))
            self.final.weight.uniform_(-bound, bound)
            self.final.bias.zero_()

    def forward(self, users, items):
        gmf = self.mf_user(users) * self.mf_item(items)
        deep = torch.cat([self.mlp_user(users), self.mlp_item(items)], 1)
        for layer in self.mlp:  # ReLU after every layer, the last too (tbd's MLP, relu_after_last)
            deep = F.relu(layer(deep))
        return self.final(torch.cat([gmf, deep], 1)).squeeze(1)


def interactions(batch_size, seed):
    """tbd's NCF::make_synthetic, draw for draw on a CPU generator: users
    uniform in groups of 1 + negatives, positive items from a power law over
    popularity ranks scattered by a multiplicative hash, negatives uniform."""
    gen = torch.Generator().manual_seed(synthetic.derive_seed(synthetic.data_seed(seed), 0x9CF))
    positive = torch.arange(batch_size).remainder(1 + NEGATIVES).eq(0)
    batches = []
    for _ in range(4):
        groups = (batch_size + NEGATIVES) // (1 + NEGATIVES)
        users = torch.randint(USERS, (groups,), generator=gen).repeat_interleave(1 + NEGATIVES)[:batch_size]
        rank = torch.floor(torch.exp(torch.rand(batch_size, generator=gen) * math.log(ITEMS))).long() - 1
        popular = (rank.clamp(0, ITEMS - 1) * 2654435761).remainder(ITEMS)
        uniform = torch.randint(ITEMS, (batch_size,), generator=gen)
        batches.append((users.contiguous(), torch.where(positive, popular, uniform), positive.float()))
    return batches


def build(args):
    model = NeuMF(USERS, ITEMS, MF_DIM, MLP_WIDTHS).train()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, fused=True)

    def step(batch):
        users, items, labels = batch
        loss = F.binary_cross_entropy_with_logits(model(users, items), labels)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss.detach()

    batches = interactions(args.batch_size, args.seed)
    return timing.Peer(model, batches, [args.batch_size] * len(batches), step, "samples",
                       {"users": USERS, "items": ITEMS, "mf_dim": MF_DIM, "mlp_widths": list(MLP_WIDTHS),
                        "negatives": NEGATIVES, "optimizer": "Adam(fused=True)"})


if __name__ == "__main__":
    timing.main("ncf", build, timing.parser("ncf (tbd small) in PyTorch", default_batch=2048))
