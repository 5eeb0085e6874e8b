"""seq2seq at tbd's small scale, as a performance-aware PyTorch user writes it.

Same step as src/tbd/workloads/seq2seq.cpp with src/tbd/nn/seq2seq.cpp: Luong
attention LSTM encoder-decoder (TF nmt's NMT model), IWSLT'15 en-vi
vocabularies (17,191 / 7,709), small scale = 256 units and embeddings, 2
layers, dropout 0.2 on every LSTM layer's input; packed 2-layer encoder;
decoder of two LSTMCells with input feeding and general-score attention over
the real source positions; teacher forcing; cross-entropy summed over the
real target tokens and divided by the sentences; SGD lr 1.0 with gradients
clipped to a global norm of 5; fp32. 10,912,000 parameters. Batches of 128
sentence pairs of similar length, the same four batches as tbd's synthetic
data (synthetic.py); throughput in target tokens (</s> included), as tbd.

Performance choices: fused SGD, foreach gradient clipping; loop invariants
(the inverted source mask, the per-step target embeddings) are computed once
per batch instead of once per decoder step.
"""
import timing  # first: it quiets torch's NumPy warning on import

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

import synthetic

SOURCE_VOCABULARY, TARGET_VOCABULARY, UNITS, LAYERS, DROPOUT, MAX_LENGTH = 17191, 7709, 256, 2, 0.2, 50
BOS, EOS, PAD = 1, 2, 3  # the specials of a Vocabulary built without a file: <unk> 0, <s>, </s>, <pad>


class Seq2Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.source_embedding = nn.Embedding(SOURCE_VOCABULARY, UNITS)
        self.target_embedding = nn.Embedding(TARGET_VOCABULARY, UNITS)
        self.encoder = nn.LSTM(UNITS, UNITS, num_layers=LAYERS, dropout=DROPOUT, batch_first=True)
        self.decoder = nn.ModuleList(nn.LSTMCell(2 * UNITS if l == 0 else UNITS, UNITS) for l in range(LAYERS))
        self.score = nn.Linear(UNITS, UNITS, bias=False)        # W_a
        self.combine = nn.Linear(2 * UNITS, UNITS, bias=False)  # W_c
        self.output = nn.Linear(UNITS, TARGET_VOCABULARY, bias=False)
        self.dropout = nn.Dropout(DROPOUT)
        with torch.no_grad():  # TF nmt: every weight uniform in [-0.1, 0.1]
            for p in self.parameters():
                p.uniform_(-0.1, 0.1)

    def forward(self, source, source_lengths, target_input):
        s = source.size(1)
        # Packing runs each sentence's recurrence over its real tokens only.
        packed = pack_padded_sequence(self.dropout(self.source_embedding(source)), source_lengths,
                                      batch_first=True, enforce_sorted=False)
        packed_out, (h_n, c_n) = self.encoder(packed)
        memory, _ = pad_packed_sequence(packed_out, batch_first=True, total_length=s)
        padding = torch.arange(s).unsqueeze(0) >= source_lengths.unsqueeze(1)  # [B, S], true on padding
        keys = self.score(memory)
        h, c = list(h_n.unbind(0)), list(c_n.unbind(0))
        attentional = memory.new_zeros(source.size(0), UNITS)
        outputs = []
        for embedded in self.target_embedding(target_input).unbind(1):
            x = torch.cat([embedded, attentional], 1)  # input feeding
            for l, cell in enumerate(self.decoder):
                h[l], c[l] = cell(self.dropout(x), (h[l], c[l]))
                x = h[l]
            scores = torch.bmm(keys, x.unsqueeze(2)).squeeze(2).masked_fill(padding, float("-inf"))
            context = torch.bmm(torch.softmax(scores, 1).unsqueeze(1), memory).squeeze(1)
            attentional = torch.tanh(self.combine(torch.cat([context, x], 1)))
            outputs.append(attentional)
        return self.output(torch.stack(outputs, 1))  # one projection GEMM for all steps


def translation_batches(batch_size, seed):
    """tbd's Seq2SeqWorkload::make_synthetic: 4 x B sentence pairs, bucketed by
    length into four batches (one epoch of LengthBatches), padded as
    make_translation_batch pads them. Returns (batches, target tokens each)."""
    ds = synthetic.data_seed(seed)
    pairs = synthetic.sentence_pairs(4 * batch_size, SOURCE_VOCABULARY, TARGET_VOCABULARY, first_word=4,
                                     median_length=17.0, max_length=MAX_LENGTH, seed=synthetic.derive_seed(ds, 0x5E95))
    lengths = [max(len(src), len(tgt) + 1) for src, tgt in pairs]  # padded_lengths, no source </s>
    batches, tokens = [], []
    for indices in synthetic.length_batches(lengths, batch_size, ds):
        chosen = [pairs[i] for i in indices]
        s_max = max(1, max(len(src) for src, _ in chosen))
        t_max = max(1, max(len(tgt) + 1 for _, tgt in chosen))
        source = torch.full((len(chosen), s_max), PAD)
        target_input = torch.full((len(chosen), t_max), PAD)
        target_output = torch.full((len(chosen), t_max), PAD)
        for r, (src, tgt) in enumerate(chosen):
            source[r, :len(src)] = torch.tensor(src)
            target_input[r, :len(tgt) + 1] = torch.tensor([BOS] + tgt)
            target_output[r, :len(tgt) + 1] = torch.tensor(tgt + [EOS])
        source_lengths = torch.tensor([len(src) for src, _ in chosen])  # on the CPU: packing needs them there
        batches.append((source, source_lengths, target_input, target_output))
        tokens.append(sum(len(tgt) + 1 for _, tgt in chosen))
    return batches, tokens


def build(args):
    model = Seq2Seq().train()
    parameters = list(model.parameters())
    optimizer = torch.optim.SGD(parameters, lr=1.0, fused=True)

    def step(batch):
        source, source_lengths, target_input, target_output = batch
        logits = model(source, source_lengths, target_input)
        # TF nmt's loss: summed over the real target tokens, divided by the batch's sentences.
        loss = F.cross_entropy(logits.view(-1, logits.size(2)), target_output.view(-1), ignore_index=PAD,
                               reduction="sum") / source.size(0)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(parameters, 5.0, foreach=True)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss.detach()

    batches, tokens = translation_batches(args.batch_size, args.seed)
    return timing.Peer(model, batches, tokens, step, "target tokens",
                       {"source_vocabulary": SOURCE_VOCABULARY, "target_vocabulary": TARGET_VOCABULARY,
                        "hidden": UNITS, "layers": LAYERS, "batch_sentences": args.batch_size,
                        "batch_shapes": [list(b[2].shape) for b in batches],
                        "optimizer": "SGD(fused=True), clip_grad_norm_(foreach=True)"})


if __name__ == "__main__":
    timing.main("seq2seq", build, timing.parser("seq2seq (tbd small) in PyTorch", default_batch=128))
