#!/usr/bin/env bash
# The README's config reference is exactly what `mavg config reference` prints, and its Workflow
# builds the data the quickstart sweep reads, and its reproduction summary is the page's verdicts
# block, word for word.
source "$(dirname "$0")/lib.bash"
sed -n '/<!-- config-reference:begin -->/,/<!-- config-reference:end -->/p' \
  "$MAVG_SOURCE_DIR/README.md" | sed '1d;$d' > readme.md
"$MAVG" config reference > generated.md
diff -u generated.md readme.md || fail "README config reference is stale: regenerate it with 'mavg config reference'"

# The README's Workflow builds the corpus sweeps/quickstart.yaml reads, with the size preset
# scripts/quickstart.sh and the spec's own comment use, before it runs the sweep.
spec="$MAVG_SOURCE_DIR/sweeps/quickstart.yaml"
train=$(sed -n 's/^ *data\.train: *//p' "$spec")
corpus=${train%/train}
[ -n "$train" ] && [ "$corpus/train" = "$train" ] || fail "quickstart.yaml: data.train '$train' is not <corpus>/train"
for key in dev test; do
  grep -q "^ *data\.$key: *$corpus/$key *$" "$spec" || fail "quickstart.yaml: data.$key is not in $corpus"
done
build="data digits --size small --out $corpus"
workflow=$(sed -n '/^## Workflow/,/^### /p' "$MAVG_SOURCE_DIR/README.md")
built=$(printf '%s\n' "$workflow" | grep -n -- "mavg $build\( \|$\)" | head -1 | cut -d: -f1 || true)
swept=$(printf '%s\n' "$workflow" | grep -n -- "mavg sweep run  *sweeps/quickstart.yaml" | head -1 | cut -d: -f1 || true)
[ -n "$built" ] || fail "README Workflow: no 'mavg $build' for sweeps/quickstart.yaml"
[ -n "$swept" ] && [ "$built" -lt "$swept" ] || fail "README Workflow: the corpus is built after the quickstart sweep runs"
grep -q -- "\"\$mavg\" $build\( \|$\)" "$MAVG_SOURCE_DIR/scripts/quickstart.sh" || fail "scripts/quickstart.sh does not build $corpus with --size small"
grep -q -- "^#   mavg $build\( \|$\)" "$spec" || fail "quickstart.yaml's comment does not say 'mavg $build'"
# The README's reproduction summary is docs/reproduction.md's verdicts block (analysis/reproduction.py
# copies it there each time it writes the page); a page from before the block leaves the placeholder.
sed -n '/^<!-- reproduction-summary:begin/,/^<!-- reproduction-summary:end -->/p' \
  "$MAVG_SOURCE_DIR/README.md" | sed '1d;$d' > summary.md
[ -s summary.md ] || fail "README has no reproduction-summary block"
if grep -q '^<!-- verdicts:begin -->$' "$MAVG_SOURCE_DIR/docs/reproduction.md"; then
  sed -n '/^<!-- verdicts:begin -->$/,/^<!-- verdicts:end -->$/p' "$MAVG_SOURCE_DIR/docs/reproduction.md" |
    sed '1d;$d' | sed 's|](reproduction/|](docs/reproduction/|g' > verdicts.md
  diff -u verdicts.md summary.md ||
    fail "README's reproduction summary is not docs/reproduction.md's verdicts block: rewrite the page (scripts/reproduce.sh --report)"
else
  grep -q '^(none yet: ' summary.md || fail "README has a reproduction summary the page does not: $(cat summary.md)"
fi
echo PASS
