"""llama at tbd's small scale, as a performance-aware PyTorch user writes it.

Same step as src/tbd/workloads/llama.cpp with src/tbd/nn/llama.cpp: Llama 3
layout (token embedding; per block RMSNorm, grouped-query attention with rotary
position embeddings, residual, RMSNorm, SwiGLU feed-forward, residual; final
RMSNorm; untied output projection; no biases), tbd's default size 8b shrunk to
the small scale = 4 layers, d 256, 8 query heads sharing 2 key/value heads,
head dimension 32, FFN 768, vocabulary 8192, context 512, RMSNorm eps 1e-5,
rope theta 500000 with Llama 3.1's frequency scaling (factor 8, low 1, high 4,
original context 8192); next-token cross-entropy; AdamW betas (0.9, 0.95),
eps 1e-5, weight decay 0.1 on matrices only (not the RMSNorm weights);
gradients clipped to a global norm of 1; the learning rate set before every
optimizer step (linear warm-up over 200 steps to 3e-4, then cosine decay over
800); fp32. 7,211,264 parameters. Batch: tbd's default, 1 sequence of 512
tokens. Throughput in tokens. Modules are registered in tbd's order, so the
same seed draws the same initial weights: with the same batches both sides'
losses agree to the last digit.

Performance choices: F.scaled_dot_product_attention with is_causal=True and
enable_gqa=True (each group of 4 query heads reads its key/value head in
place, as tbd does, without repeating the keys and values), F.rms_norm
(ATen's rms_norm, as tbd's RMSNorm), the rotary tables computed once,
fused AdamW, and foreach gradient clipping (one _foreach_norm over all
gradients). Q, K and V keep their own projections, as tbd, Meta's reference
code and Hugging Face's LlamaForCausalLM have them.
"""
import math

import timing  # first: it quiets torch's NumPy warning on import

import torch
import torch.nn as nn
import torch.nn.functional as F

import synthetic

# tbd's small scale (workloads/llama.cpp config_for) of size 8b (nn/llama.h defaults).
VOCABULARY, CONTEXT, LAYERS, D_MODEL, HEADS, KV_HEADS, HEAD_DIM, FFN = 8192, 512, 4, 256, 8, 2, 32, 768
NORM_EPS, ROPE_THETA = 1e-5, 500000.0
ROPE_FACTOR, LOW_FREQ_FACTOR, HIGH_FREQ_FACTOR, ORIGINAL_CONTEXT = 8.0, 1.0, 4.0, 8192
PEAK_LR, WARMUP_STEPS, DECAY_STEPS = 3e-4, 200, 800


def inverse_frequencies():
    """Llama 3.1's scaled rotary frequencies (rope_type "llama3"), as tbd's llama_inverse_frequencies."""
    low_wavelength, high_wavelength = ORIGINAL_CONTEXT / LOW_FREQ_FACTOR, ORIGINAL_CONTEXT / HIGH_FREQ_FACTOR
    frequencies = []
    for i in range(HEAD_DIM // 2):
        f = 1.0 / ROPE_THETA ** (2 * i / HEAD_DIM)
        wavelength = 2 * math.pi / f
        if wavelength > low_wavelength:
            f /= ROPE_FACTOR
        elif wavelength >= high_wavelength:
            smooth = (ORIGINAL_CONTEXT / wavelength - LOW_FREQ_FACTOR) / (HIGH_FREQ_FACTOR - LOW_FREQ_FACTOR)
            f = (1 - smooth) * f / ROPE_FACTOR + smooth * f
        frequencies.append(f)
    return torch.tensor(frequencies, dtype=torch.float64)


def rope_tables():
    """cos and sin [context, head_dim], each frequency twice (rotate_half layout); in double, then float."""
    angles = torch.outer(torch.arange(CONTEXT, dtype=torch.float64), inverse_frequencies())
    both = torch.cat([angles, angles], dim=-1)
    return both.cos().float(), both.sin().float()


def rotate(x, cos, sin):
    x1, x2 = x.chunk(2, dim=-1)
    return x * cos + torch.cat([-x2, x1], dim=-1) * sin


class RMSNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return F.rms_norm(x, (x.size(-1),), self.weight, NORM_EPS)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        # In tbd's order (the order of its random draws and of parameters()).
        self.input_layernorm = RMSNorm(D_MODEL)
        self.q_proj = nn.Linear(D_MODEL, HEADS * HEAD_DIM, bias=False)
        self.k_proj = nn.Linear(D_MODEL, KV_HEADS * HEAD_DIM, bias=False)
        self.v_proj = nn.Linear(D_MODEL, KV_HEADS * HEAD_DIM, bias=False)
        self.o_proj = nn.Linear(HEADS * HEAD_DIM, D_MODEL, bias=False)
        self.post_attention_layernorm = RMSNorm(D_MODEL)
        self.gate_proj = nn.Linear(D_MODEL, FFN, bias=False)
        self.up_proj = nn.Linear(D_MODEL, FFN, bias=False)
        self.down_proj = nn.Linear(FFN, D_MODEL, bias=False)

    def attention(self, x, cos, sin):
        b, t, _ = x.shape
        q = self.q_proj(x).view(b, t, HEADS, HEAD_DIM).transpose(1, 2)
        k = self.k_proj(x).view(b, t, KV_HEADS, HEAD_DIM).transpose(1, 2)
        v = self.v_proj(x).view(b, t, KV_HEADS, HEAD_DIM).transpose(1, 2)
        y = F.scaled_dot_product_attention(rotate(q, cos, sin), rotate(k, cos, sin), v, is_causal=True,
                                           enable_gqa=True)
        return self.o_proj(y.transpose(1, 2).reshape(b, t, HEADS * HEAD_DIM))

    def forward(self, x, cos, sin):
        h = x + self.attention(self.input_layernorm(x), cos, sin)
        g = self.post_attention_layernorm(h)
        return h + self.down_proj(F.silu(self.gate_proj(g)) * self.up_proj(g))


class Llama(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCABULARY, D_MODEL)
        self.layers = nn.ModuleList(Block() for _ in range(LAYERS))
        self.norm = RMSNorm(D_MODEL)
        self.lm_head = nn.Linear(D_MODEL, VOCABULARY, bias=False)  # untied (8b)
        # Hugging Face's initialisation, as tbd: every matrix N(0, 0.02), RMSNorm weights 1.
        with torch.no_grad():
            for p in self.parameters():
                if p.dim() >= 2:
                    p.normal_(0.0, 0.02)
        cos, sin = rope_tables()
        self.register_buffer("rope_cos", cos, persistent=False)
        self.register_buffer("rope_sin", sin, persistent=False)

    def forward(self, ids):
        t = ids.size(1)
        cos, sin = self.rope_cos[:t], self.rope_sin[:t]
        x = self.embed_tokens(ids)
        for block in self.layers:
            x = block(x, cos, sin)
        return self.lm_head(self.norm(x))


def learning_rate(step):
    """tbd's WarmupCosine.at(step), step 1 being the first optimizer step."""
    if WARMUP_STEPS > 0 and step <= WARMUP_STEPS:
        return PEAK_LR * step / WARMUP_STEPS
    progress = min(1.0, (step - WARMUP_STEPS) / DECAY_STEPS)
    return PEAK_LR * 0.5 * (1.0 + math.cos(math.pi * progress))  # min_lr_ratio 0


def build(args):
    model = Llama().train()
    parameters = list(model.parameters())
    decay = [p for p in parameters if p.dim() >= 2]  # projections and the embedding
    no_decay = [p for p in parameters if p.dim() < 2]  # RMSNorm weights
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                                  lr=learning_rate(1), betas=(0.9, 0.95), eps=1e-5, fused=True)
    steps = 0

    def step(batch):
        nonlocal steps
        steps += 1
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(steps)
        ids, targets = batch
        logits = model(ids)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(parameters, 1.0, foreach=True)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss.detach()

    seed = synthetic.derive_seed(synthetic.data_seed(args.seed), 0x11A3)  # llama's salt
    batches = synthetic.zipf_token_pool(seed, VOCABULARY, args.batch_size, CONTEXT)
    return timing.Peer(model, batches, [args.batch_size * CONTEXT] * len(batches), step, "tokens",
                       {"vocabulary": VOCABULARY, "context": CONTEXT, "layers": LAYERS, "d_model": D_MODEL,
                        "heads": HEADS, "kv_heads": KV_HEADS, "head_dim": HEAD_DIM, "ffn": FFN,
                        "attention": "q/k/v projections, RoPE (llama3 scaling), "
                                     "scaled_dot_product_attention(is_causal=True, enable_gqa=True)",
                        "norm": "F.rms_norm",
                        "optimizer": "AdamW(fused=True), lr warm-up + cosine per step, "
                                     "clip_grad_norm_(foreach=True)"})


if __name__ == "__main__":
    timing.main("llama", build, timing.parser("llama (tbd small, size 8b) in PyTorch", default_batch=1))
