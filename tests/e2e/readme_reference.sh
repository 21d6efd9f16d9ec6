#!/usr/bin/env bash
# The README's config reference is exactly what `mavg config reference` prints.
source "$(dirname "$0")/lib.bash"
sed -n '/<!-- config-reference:begin -->/,/<!-- config-reference:end -->/p' \
  "$MAVG_SOURCE_DIR/README.md" | sed '1d;$d' > readme.md
"$MAVG" config reference > generated.md
diff -u generated.md readme.md || fail "README config reference is stale: regenerate it with 'mavg config reference'"
echo PASS
