#pragma once
// Hand-made langs and log-likelihoods for the decoder tests.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "engine/decode/lang.h"

namespace mavg::testing_decode {

// EXPECT_TRUE(Contains(text, part)) prints both on failure.
inline ::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not contain '" << part << "'";
}

// Message of the mavg::Error (or other exception) that `f` throws; "" if none.
template <typename F>
std::string ErrorOf(F f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// A lang from (word, phones) lexicon lines; phones get ids in order of appearance after sil,
// pdf = 3 * phone + state, self-loop probabilities from `self_loop(pdf)`.
template <typename SelfLoop>
Lang TestLang(const std::vector<std::pair<std::string, std::vector<std::string>>>& lexicon,
              SelfLoop self_loop) {
  Lang lang;
  lang.phones = {"sil"};
  for (const auto& [word, phones] : lexicon) {
    Pronunciation pron;
    pron.word = lang.WordId(word);
    if (pron.word < 0) {
      pron.word = lang.NumWords();
      lang.words.push_back(word);
    }
    for (const std::string& p : phones) {
      int id = lang.PhoneId(p);
      if (id < 0) {
        id = lang.NumPhones();
        lang.phones.push_back(p);
      }
      pron.phones.push_back(id);
    }
    lang.prons.push_back(pron);
  }
  for (int p = 0; p < lang.NumPhones(); ++p) {
    lang.pdfs.push_back({3 * p, 3 * p + 1, 3 * p + 2});
    for (int s = 0; s < 3; ++s) lang.self_loop.push_back(self_loop(3 * p + s));
  }
  return lang;
}

inline Lang TestLang(const std::vector<std::pair<std::string, std::vector<std::string>>>& lexicon) {
  return TestLang(lexicon, [](int) { return 0.5; });
}

// "one" = w ah n, "two" = t uw: 6 phones, 18 pdfs.
inline Lang OneTwoLang() { return TestLang({{"one", {"w", "ah", "n"}}, {"two", {"t", "uw"}}}); }

// The connected-digit lexicon (CMU-dict style, two pronunciations of "zero"): 20 phones, 60 pdfs,
// 114 emitting states; self-loops between 0.5 and 0.8.
inline Lang DigitsLang() {
  return TestLang({{"oh", {"ow"}},
                   {"zero", {"z", "ih", "r", "ow"}},
                   {"zero", {"z", "iy", "r", "ow"}},
                   {"one", {"w", "ah", "n"}},
                   {"two", {"t", "uw"}},
                   {"three", {"th", "r", "iy"}},
                   {"four", {"f", "ao", "r"}},
                   {"five", {"f", "ay", "v"}},
                   {"six", {"s", "ih", "k", "s"}},
                   {"seven", {"s", "eh", "v", "ah", "n"}},
                   {"eight", {"ey", "t"}},
                   {"nine", {"n", "ay", "n"}}},
                  [](int pdf) { return 0.5 + 0.1 * (pdf % 4); });
}

// Log-likelihoods [frames x num_pdfs] where frame t favours pdf_sequence[t] (log-likelihood 0)
// and every other pdf gets `other`.
inline std::vector<float> FavourPdfs(const std::vector<int>& pdf_sequence, int num_pdfs,
                                     float other = -10.0f) {
  std::vector<float> ll(pdf_sequence.size() * num_pdfs, other);
  for (size_t t = 0; t < pdf_sequence.size(); ++t) ll[t * num_pdfs + pdf_sequence[t]] = 0.0f;
  return ll;
}

// The pdf sequence of the given phones, each state held `frames_per_state` frames.
inline std::vector<int> PdfsOf(const Lang& lang, const std::vector<std::string>& phones,
                               int frames_per_state = 2) {
  std::vector<int> pdfs;
  for (const std::string& p : phones) {
    for (int s = 0; s < kStatesPerPhone; ++s) {
      for (int f = 0; f < frames_per_state; ++f) pdfs.push_back(lang.pdfs[lang.PhoneId(p)][s]);
    }
  }
  return pdfs;
}

}  // namespace mavg::testing_decode
