#pragma once
// Text-mode pieces of the Kaldi readers and writers: number parsing, text matrices
// ("[\n  1 2 3 \n  4 5 6 ]"), text int32 vectors (the rest of the line). ReadScp and
// ReadKeyValueFile, declared in kaldi_io.h, are defined here too.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/data/kaldi_io.h"

namespace mavg::kaldi {

// Whitespace as Kaldi's text formats see it.
inline bool IsKaldiSpace(int c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

// Whole-token parses (no surrounding whitespace); false on any junk, overflow or empty input.
// Floats accept what Kaldi and printf write, including "inf", "-inf", "nan" and a leading '+'.
bool ParseFloat(std::string_view token, float* value);
bool ParseInt32(std::string_view token, int32_t* value);

// Reads a text matrix starting at the current position (leading whitespace allowed, then '['
// up to the matching ']'). `where` prefixes error messages ("file: utterance 'k' at byte N").
void ReadTextMatrix(InputFile& in, const std::string& where, HostMatrix* out);

// Reads the rest of the current line as whitespace-separated int32 values.
void ReadTextInt32Vector(InputFile& in, const std::string& where, std::vector<int32_t>* out);

// Appends " [\n  1 2 \n  3 4 ]\n" (Kaldi's text layout; " [ ]\n" when empty).
void AppendTextMatrix(const HostMatrix& matrix, std::string* out);

}  // namespace mavg::kaldi
