"""gpt at tbd's small scale, as a performance-aware PyTorch user writes it.

Same step as src/tbd/workloads/gpt.cpp with src/tbd/nn/gpt.cpp: GPT-2 layout
(pre-norm blocks, causal attention, MLP 4d with tanh GELU, tied output
projection), small scale = 6 layers, 6 heads, d 384, context 256, vocabulary
50257, dropout 0.1; next-token cross-entropy; AdamW lr 6e-4, betas (0.9, 0.95),
weight decay 0.1 on matrices and embeddings only; gradients clipped to a
global norm of 1; fp32. 30,044,544 parameters. Throughput in tokens.

Performance choices: one fused QKV projection (c_attn, d -> 3d, as the
published GPT-2; the parameter count equals three d -> d projections),
F.scaled_dot_product_attention, fused AdamW, and foreach gradient clipping
(one _foreach_norm over all gradients).
"""
import timing  # first: it quiets torch's NumPy warning on import

import torch
import torch.nn as nn
import torch.nn.functional as F

import synthetic

VOCABULARY, CONTEXT, LAYERS, HEADS, D_MODEL = 50257, 256, 6, 6, 384  # tbd's small scale


class Block(nn.Module):
    def __init__(self, d, heads, dropout, layers):
        super().__init__()
        self.heads, self.dropout = heads, dropout
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.c_attn, self.c_proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.proj = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        # GPT-2's initialisation, as tbd: N(0, 0.02), residual-branch ends 0.02/sqrt(2L), zero biases.
        for linear, std in ((self.c_attn, 0.02), (self.fc, 0.02),
                            (self.c_proj, 0.02 / (2 * layers) ** 0.5), (self.proj, 0.02 / (2 * layers) ** 0.5)):
            nn.init.normal_(linear.weight, 0.0, std)
            nn.init.zeros_(linear.bias)

    def forward(self, x):
        b, t, d = x.shape
        p = self.dropout if self.training else 0.0
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2)
                   for z in self.c_attn(self.ln1(x)).split(d, dim=2))
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
        x = x + F.dropout(self.c_proj(y.transpose(1, 2).reshape(b, t, d)), p, self.training)
        return x + F.dropout(self.proj(F.gelu(self.fc(self.ln2(x)), approximate="tanh")), p, self.training)


class GPT(nn.Module):
    def __init__(self, vocabulary, context, layers, heads, d, dropout):
        super().__init__()
        self.token_embedding, self.position_embedding = nn.Embedding(vocabulary, d), nn.Embedding(context, d)
        nn.init.normal_(self.token_embedding.weight, 0.0, 0.02)
        nn.init.normal_(self.position_embedding.weight, 0.0, 0.02)
        self.blocks = nn.ModuleList(Block(d, heads, dropout, layers) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        self.dropout = dropout

    def forward(self, ids):
        positions = torch.arange(ids.size(1), device=ids.device)
        x = F.dropout(self.token_embedding(ids) + self.position_embedding(positions), self.dropout, self.training)
        for block in self.blocks:
            x = block(x)
        return F.linear(self.ln_f(x), self.token_embedding.weight)  # tied, no bias


def zipf_windows(batch_size, seed):
    """tbd's gpt data: zipf_token_pool with gpt's seed salt 0x69F7."""
    seed = synthetic.derive_seed(synthetic.data_seed(seed), 0x69F7)
    return synthetic.zipf_token_pool(seed, VOCABULARY, batch_size, CONTEXT)


def build(args):
    model = GPT(VOCABULARY, CONTEXT, LAYERS, HEADS, D_MODEL, dropout=0.1).train()
    parameters = list(model.parameters())
    decay = [p for p in parameters if p.dim() >= 2]  # matrices and embeddings; not biases, LayerNorm
    no_decay = [p for p in parameters if p.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                                  lr=6e-4, betas=(0.9, 0.95), fused=True)

    def step(batch):
        ids, targets = batch
        logits = model(ids)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(parameters, 1.0, foreach=True)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss.detach()

    batches = zipf_windows(args.batch_size, args.seed)
    return timing.Peer(model, batches, [args.batch_size * CONTEXT] * len(batches), step, "tokens",
                       {"vocabulary": VOCABULARY, "context": CONTEXT, "layers": LAYERS, "heads": HEADS,
                        "d_model": D_MODEL, "attention": "c_attn (fused QKV) + scaled_dot_product_attention",
                        "optimizer": "AdamW(fused=True), clip_grad_norm_(foreach=True)"})


if __name__ == "__main__":
    timing.main("gpt", build, timing.parser("gpt (tbd small) in PyTorch", default_batch=8))
