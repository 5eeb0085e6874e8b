# The llama workload's model is Hugging Face's LlamaForCausalLM (issue 28's
# acceptance): tiny models written by tbd's tests (weights, input ids,
# logits, loss), with and without grouped-query attention, tied and untied,
# with Llama 3.1's rope scaling on, are loaded into transformers' model with
# the same weights, and the logits and loss must agree within fp32 rounding.
# transformers and torch come from PyPI into the test venv, as HTA does.
source "$(dirname "$0")/lib.sh"

python="$(test_venv transformers torch==2.13.0 transformers)" ||
  { echo "FAIL: cannot install torch and transformers" >&2; exit 1; }
"$python" -c "import torch" 2>/dev/null || { echo "FAIL: torch does not import in the test venv" >&2; exit 1; }
tests="$(dirname "$TBD")/tests/tbd_tests"
[ -x "$tests" ] || { echo "FAIL: $tests is not built" >&2; exit 1; }

TBD_LLAMA_HF_DIR="$WORK" "$tests" --gtest_filter='LlamaHfParity.*' > "$WORK/gtest.log" 2>&1 ||
  { cat "$WORK/gtest.log" >&2; fail "the gtest that writes the tiny models failed"; }

"$python" - "$WORK" <<'PY' || fail "Hugging Face's LlamaForCausalLM disagrees with tbd's llama (above)"
import sys, torch, torch.jit._pickle, transformers
from transformers import LlamaConfig, LlamaForCausalLM

work = sys.argv[1]
major = int(transformers.__version__.split(".")[0])
for variant in ["gqa_untied", "gqa_tied", "mha_untied", "mha_tied"]:
    # torch::pickle_save tags the dict's types with this one function.
    with torch.serialization.safe_globals([torch.jit._pickle.restore_type_tag]):
        d = torch.load(f"{work}/{variant}.pt")
    vocab, context, layers, d_model, heads, kv_heads, head_dim, ffn, tied, original = d["config"].tolist()
    theta, factor, low, high, eps = d["rope"].tolist()
    scaling = {"rope_type": "llama3", "factor": factor, "low_freq_factor": low, "high_freq_factor": high,
               "original_max_position_embeddings": original}
    kwargs = dict(vocab_size=vocab, hidden_size=d_model, intermediate_size=ffn, num_hidden_layers=layers,
                  num_attention_heads=heads, num_key_value_heads=kv_heads, head_dim=head_dim,
                  max_position_embeddings=131072, rms_norm_eps=eps,  # Llama 3.1's; no table of that length hidden_act="silu",
                  tie_word_embeddings=bool(tied), attention_bias=False, mlp_bias=False)
    if major >= 5:  # transformers 5 keeps theta and scaling together
        kwargs["rope_parameters"] = dict(scaling, rope_theta=theta)
    else:
        kwargs.update(rope_theta=theta, rope_scaling=scaling)
    model = LlamaForCausalLM(LlamaConfig(**kwargs)).eval()
    weights = {}
    for key, value in d.items():
        if key.startswith("weight."):
            name = key[len("weight."):]
            weights[name if name.startswith("lm_head") else "model." + name] = value
    missing, unexpected = model.load_state_dict(weights, strict=False)
    allowed_missing = {"lm_head.weight"} if tied else set()
    assert not unexpected, f"{variant}: tbd names that transformers lacks: {unexpected}"
    assert set(missing) <= allowed_missing, f"{variant}: transformers names tbd lacks: {missing}"
    if tied:
        model.tie_weights()
        assert model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr()
    count = sum(p.numel() for p in model.parameters())
    assert count == sum(v.numel() for k, v in weights.items()), f"{variant}: {count} parameters in transformers"
    # The logits of 32 positions barely feel the stretched low frequencies:
    # compare the scaled frequencies themselves.
    torch.testing.assert_close(model.model.rotary_emb.inv_freq.double(), d["inverse_frequencies"], rtol=1e-6, atol=0)
    with torch.no_grad():
        out = model(input_ids=d["input_ids"], labels=d["input_ids"])
    # fp32 rounding: the two compute the same sums in different orders
    # (fused SDPA and rms_norm kernels, rope tables from double or float).
    torch.testing.assert_close(out.logits, d["logits"], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(out.loss, d["loss"], rtol=1e-6, atol=1e-6)
    diff = (out.logits - d["logits"]).abs().max().item()
    print(f"{variant}: {count} parameters, logits max |diff| {diff:.2e}, loss {out.loss.item():.6f} "
          f"(tbd {d['loss'].item():.6f})")
print(f"transformers {transformers.__version__}, torch {torch.__version__}")
PY

finish
