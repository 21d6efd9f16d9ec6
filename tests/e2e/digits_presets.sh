#!/usr/bin/env bash
# The scaled digits family (--size x1 ... x8) at toy sizes: a member with more training
# utterances holds the smaller one's (the same ids, words, audio and labels), and every member
# has the same dev and test sets, so a scale study changes the amount of training data only;
# the family has more voices, speakers and noise conditions than the calibration corpus, says
# so in corpus.json, and bad presets or noises are refused by name. (Babble mixes the first 60
# training utterances: sets of at least 60 share them, as the presets' thousands do.)
source "$(dirname "$0")/lib.bash"
toy=(--dev-utts 6 --test-utts 10 --test-seen-utts 3 --threads 2)
"$MAVG" -q data digits --size x1 --out a --train-utts 64 "${toy[@]}" > /dev/null
"$MAVG" -q data digits --size x2 --out b --train-utts 96 "${toy[@]}" > /dev/null
# Kaldi's text files are sorted by id only where the writer sorts: compare as sets.
[ "$(sort a/train/text)" = "$(grep -F -f <(cut -d' ' -f1 a/train/text) b/train/text | sort)" ] ||
  fail "x2's training set does not hold x1's utterances"
for u in $(cut -d' ' -f1 a/train/text); do
  cmp -s "a/train/wav/$u.wav" "b/train/wav/$u.wav" || fail "$u: audio differs between x1 and x2"
done
for s in dev test; do
  for f in text utt2spk; do cmp -s "a/$s/$f" "b/$s/$f" || fail "$s/$f differs between x1 and x2"; done
  for u in $(cut -d' ' -f1 a/$s/text); do
    cmp -s "a/$s/wav/$u.wav" "b/$s/wav/$u.wav" || fail "$s $u: audio differs between x1 and x2"
  done
done
python3 - <<'PY'
import json
a, b = json.load(open("a/corpus.json")), json.load(open("b/corpus.json"))
assert a["preset"] == "x1" and b["preset"] == "x2", (a["preset"], b["preset"])
assert a["noises"] == ["white", "pink", "babble", "brown", "crowd"], a["noises"]
assert a["voices"] == b["voices"] and len(a["voices"]) > 15, a["voices"]
assert a["speakers_per_voice"] == 8, a["speakers_per_voice"]
assert b["sets"]["train"]["utterances"] == 96 and a["sets"]["train"]["utterances"] == 64
PY
# Options on the command line change the preset's one thing.
"$MAVG" -q data digits --size x4 --out c --train-utts 8 --noises white,brown --voices flite:kal16 \
  "${toy[@]}" > /dev/null
python3 -c '
import json; c = json.load(open("c/corpus.json"))
assert c["noises"] == ["white", "brown"] and c["voices"] == ["flite:kal16"], c
assert c["sets"]["train"]["utterances"] == 8, c["sets"]'
expect_error "--size must be full, small, x1, x2, x4 or x8, not 'x3'" "$MAVG" data digits --size x3 --out d
expect_error "--noises must be white, pink, babble, brown or crowd, not 'rain'" \
  "$MAVG" data digits --noises white,rain --out d
[ ! -e d ] || fail "a refused build left its output dir"
echo ok
