# Shell completion (issue 16, part 5): `tbd completion bash|zsh` is made
# from the CLI's definition; bash completes commands, each command's
# options, workloads and file names after path options.
source "$(dirname "$0")/lib.sh"

"$TBD" completion bash > "$WORK/tbd.bash" || fail "completion bash exited $?"
complete_words() {  # the words bash offers for the command line "$@" (the last word being typed)
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _tbd; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$WORK/tbd.bash" "$@"
}
complete_words tbd r | grep -qx run || fail "'tbd r' does not complete to run: $(complete_words tbd r)"
complete_words tbd run resnet50 --bat | grep -qx -- --batch-size || fail "'tbd run W --bat' lacks --batch-size"
complete_words tbd run resnet50 --host | grep -qx -- --host-allocator || fail "'tbd run W --host' lacks --host-allocator"
complete_words tbd sweep ncf --js | grep -qx -- --json || fail "'tbd sweep W --js' lacks --json"
complete_words tbd run dl | grep -qx dlrm || fail "'tbd run dl' does not complete to dlrm"
complete_words tbd compare --ba | grep -q . && fail "'tbd compare --ba' offers options compare does not have"
touch "$WORK/result-file.json"
(cd "$WORK" && complete_words tbd run ncf --out result-f) | grep -qx result-file.json ||
  fail "no file names after --out"
# Every option the run command has, and nothing else, is offered for run.
"$TBD" run --help | grep -oE -- '--[a-z][a-z-]*' | sort -u > "$WORK/help-options"
complete_words tbd run ncf -- | sort -u > "$WORK/completed-options"
diff "$WORK/help-options" "$WORK/completed-options" > /dev/null ||
  fail "run's completed options differ from its --help: $(diff "$WORK/help-options" "$WORK/completed-options")"
expect_exit 2 "unknown shell 'fish'; give bash or zsh" -- completion fish

"$TBD" completion zsh > "$WORK/_tbd" || fail "completion zsh exited $?"
grep -q '^#compdef tbd' "$WORK/_tbd" || fail "the zsh script lacks #compdef"
if command -v zsh > /dev/null; then
  zsh -n "$WORK/_tbd" || fail "the zsh script does not parse"
fi
bash -n "$WORK/tbd.bash" || fail "the bash script does not parse"

finish
