# scripts/torch-wheel, the choice scripts/setup makes between torch's CPU
# and CUDA wheels, on a stand-in `nvidia-smi` (this machine has no NVIDIA
# driver; the real one runs in scripts/gpu-check). Nothing is installed or
# downloaded here. Also: `tbd env` names where its LibTorch came from.
source "$(dirname "$0")/lib.sh"
choose="$(cd "$(dirname "$0")/../.." && pwd)/scripts/torch-wheel"
mkdir -p "$WORK/bin" "$WORK/cuda/bin" "$WORK/empty"

# fake_smi CUDA: an nvidia-smi whose header says "CUDA Version: CUDA", as the real one prints it.
fake_smi() {
  cat >"$WORK/bin/nvidia-smi" <<EOF
#!/bin/sh
echo "| NVIDIA-SMI 570.86.15    Driver Version: 570.86.15    CUDA Version: $1     |"
EOF
  chmod +x "$WORK/bin/nvidia-smi"
}
printf '#!/bin/sh\n' >"$WORK/cuda/bin/nvcc"
chmod +x "$WORK/cuda/bin/nvcc"

# choice ENV...: runs torch-wheel with only the fake bin on PATH (plus the
# basic tools) and the given variables; prints its output and "rc=N".
choice() {
  env -i PATH="$WORK/bin:/usr/bin:/bin" "$@" bash "$choose" 2.13.0 2>&1
  echo "rc=$?"
}

# expect_choice PATTERN ENV...: the output matches every line of PATTERN (grep -E per line).
expect_choice() {
  local patterns=$1 out line
  shift
  out=$(choice "$@")
  while IFS= read -r line; do
    grep -Eq -- "$line" <<<"$out" || fail "torch-wheel with $*: output lacks /$line/: $out"
  done <<<"$patterns"
}

# No driver: the CPU wheel, and no nvcc is asked for.
expect_choice $'^variant=cpu$\nno NVIDIA driver\nrc=0' CUDA_HOME="$WORK/empty"

# A driver: the newest CUDA variant it runs, and the nvcc found in CUDA_HOME.
fake_smi 12.8
expect_choice $'^variant=cu128$\nCUDA up to 12.8.*CUDA 12.8\n^nvcc='"$WORK"$'/cuda/bin/nvcc$\nrc=0' CUDA_HOME="$WORK/cuda"
fake_smi 12.9
expect_choice $'^variant=cu128$\nrc=0' CUDA_HOME="$WORK/cuda"
fake_smi 13.2
expect_choice $'^variant=cu130$\nrc=0' CUDACXX="$WORK/cuda/bin/nvcc"

# A driver older than every CUDA wheel: refused with the fix.
fake_smi 11.8
expect_choice $'CUDA up to 11.8, older than torch 2.13.0.s oldest CUDA wheel \\(CUDA 12.6\\)\nTBD_TORCH_VARIANT=cpu\nrc=2' \
  CUDA_HOME="$WORK/cuda"

# A CUDA wheel without nvcc: refused, naming the toolkit and the variables.
fake_smi 12.8
if PATH="$WORK/bin:/usr/bin:/bin" command -v nvcc >/dev/null; then
  echo "note: nvcc is in /usr/bin here; the missing-nvcc refusal is not exercised"
else
  expect_choice $'needs the CUDA toolkit.s nvcc\ncuda-toolkit-12-8\nCUDA_HOME\nTBD_TORCH_VARIANT=cpu\nrc=2' \
    CUDA_HOME="$WORK/empty"
fi

# The user's choice wins, and a bad one is refused.
expect_choice $'^variant=cpu$\nTBD_TORCH_VARIANT=cpu\nrc=0' TBD_TORCH_VARIANT=cpu
expect_choice $'TBD_TORCH_VARIANT=.cuda.: give cpu or a CUDA variant\nrc=2' TBD_TORCH_VARIANT=cuda

# nvidia-smi that answers without a CUDA version (a broken driver install).
printf '#!/bin/sh\necho "No devices were found"\n' >"$WORK/bin/nvidia-smi"
expect_choice $'named no .CUDA Version.\nrc=2'

# tbd env says where LibTorch came from (setup records it; a plain cmake says it did not).
"$TBD" env | grep -Eq "^  from +(torch .* wheel in .venv|your own LibTorch|not recorded)" ||
  fail "tbd env does not say where LibTorch came from: $("$TBD" env)"

finish
