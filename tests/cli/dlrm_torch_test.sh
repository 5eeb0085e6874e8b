# dlrm's three interactions against PyTorch implementations written here from
# the published definitions, not from tbd's code (issue 31's acceptance):
#   dcnv2  TorchRec's DLRM_DCN as MLPerf's DLRMv2 uses it: DenseArch (MLP with
#          ReLU after every layer), EmbeddingBagCollection (sum pooling),
#          InteractionDCNArch (the dense output then the 26 pooled vectors,
#          concatenated, through LowRankCrossNet), OverArch (MLP, then a
#          final Linear to one logit);
#   rm2    DeepRecSys's DLRM with arch_interaction_op "cat";
#   kaggle facebookresearch/dlrm's dot interaction without self-pairs.
# The gtest writes small models (weights, multi-hot inputs, logits); torch
# from PyPI rebuilds each with torch.nn.EmbeddingBag and must give the same
# logits within fp32 rounding.
source "$(dirname "$0")/lib.sh"

python="$(test_venv torch torch==2.13.0)" || { echo "FAIL: cannot install torch" >&2; exit 1; }
tests="$(dirname "$TBD")/tests/tbd_tests"
[ -x "$tests" ] || { echo "FAIL: $tests is not built" >&2; exit 1; }

TBD_DLRM_PARITY_DIR="$WORK" "$tests" --gtest_filter='DlrmTorchParity.*' > "$WORK/gtest.log" 2>&1 ||
  { cat "$WORK/gtest.log" >&2; fail "the gtest that writes the models failed"; }

"$python" - "$WORK" <<'PY' || fail "a PyTorch rebuild disagrees with tbd's dlrm (above)"
import sys, torch, torch.jit._pickle
from torch import nn

def mlp(weights, prefix, relu_last):
    layers, i = [], 0
    while f"{prefix}.{i}.weight" in weights:
        w, b = weights[f"{prefix}.{i}.weight"], weights[f"{prefix}.{i}.bias"]
        linear = nn.Linear(w.shape[1], w.shape[0])
        linear.weight.data.copy_(w)
        linear.bias.data.copy_(b)
        layers.append(linear)
        layers.append(nn.ReLU())
        i += 1
    if not relu_last:
        layers.pop()
    return nn.Sequential(*layers)

def low_rank_cross_net(x0, weights, layers):
    # TorchRec LowRankCrossNet: x_{l+1} = x_0 * (W_l (V_l x_l) + b_l) + x_l
    x = x0
    for l in range(layers):
        xv = x @ weights[f"cross.v.{l}"].t()
        x = x0 * (xv @ weights[f"cross.w.{l}"].t() + weights[f"cross.bias.{l}"]) + x
    return x

work = sys.argv[1]
for name in ["dcnv2", "rm2", "kaggle"]:
    with torch.serialization.safe_globals([torch.jit._pickle.restore_type_tag]):
        d = torch.load(f"{work}/{name}.pt")
    tables, dim, interaction, cross_layers = d["config"].tolist()
    weights = {k[len("weight."):]: v for k, v in d.items() if k.startswith("weight.")}
    bottom = mlp(weights, "bottom.layers", relu_last=True)   # DenseArch: ReLU after every layer
    top = mlp(weights, "top.layers", relu_last=False)        # OverArch: the last Linear gives the logit
    pooled = []
    for t in range(tables):
        table = weights[f"tables.{t}.weight"]
        bag = nn.EmbeddingBag(table.shape[0], table.shape[1], mode="sum")
        bag.weight.data.copy_(table)
        pooled.append(bag(d[f"ids.{t}"], d[f"offsets.{t}"]))
    with torch.no_grad():
        x = bottom(d["dense"])
        if interaction == 0:    # dot: the dense output, then every distinct pair's dot product
            v = torch.stack([x] + pooled, 1)
            z = torch.bmm(v, v.transpose(1, 2))
            rows, cols = torch.tril_indices(v.shape[1], v.shape[1], -1)
            features = torch.cat([x, z[:, rows, cols]], 1)
        else:                   # cat (DeepRecSys), dcn (TorchRec): the dense output first
            features = torch.cat([x] + pooled, 1)
            if interaction == 2:
                features = low_rank_cross_net(features, weights, cross_layers)
        logits = top(features).squeeze(1)
    count = sum(v.numel() for v in weights.values())
    torch.testing.assert_close(logits, d["logits"], rtol=1e-5, atol=1e-5)
    diff = (logits - d["logits"]).abs().max().item()
    print(f"{name}: {tables} tables, {count} parameters, logits max |diff| {diff:.2e}")
print(f"torch {torch.__version__}")
PY

finish
