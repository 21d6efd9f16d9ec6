#pragma once
// A fingerprint of the training frames of a Kaldi data dir, for caches keyed by "the same
// training data": SHA-256 over feats.scp (when present; with the archive paths it holds), every
// feature archive it names (or feats.ark) and ali.ark (which utterances are used), each by
// file name, size and contents. Files over 256 MiB are fingerprinted by name, size, their
// first and last 16 MiB and 256 blocks of 256 KiB evenly spaced in between (64 MiB read)
// instead of every byte. Nothing else: no modification time, and not the data dir's own
// location, so a copied corpus (whose feats.scp uses relative paths) keeps its fingerprint.

#include <string>

namespace mavg {

// Throws naming the dir when it has neither feats.scp nor feats.ark.
std::string DataDirFingerprint(const std::string& dir);

// The same for a dir's speaker CMVN inputs: cmvn.scp, every archive it names and utt2spk.
std::string SpeakerCmvnFingerprint(const std::string& dir);

}  // namespace mavg
