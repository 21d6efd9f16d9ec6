#include "engine/speech/tts.h"

#include <espeak-ng/speak_lib.h>
#include <flite/flite.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>

#include "engine/core/error.h"
#include "engine/speech/resample.h"

extern "C" {
cst_voice* register_cmu_us_kal(const char* voxdir);
cst_voice* register_cmu_us_kal16(const char* voxdir);
cst_voice* register_cmu_us_awb(const char* voxdir);
cst_voice* register_cmu_us_rms(const char* voxdir);
cst_voice* register_cmu_us_slt(const char* voxdir);
}

namespace mavg {

const char* const kDigitWords[11] = {"oh",   "zero", "one",   "two",   "three", "four",
                                     "five", "six",  "seven", "eight", "nine"};

namespace {

std::map<std::string, cst_voice*>& FliteVoices() {
  static std::map<std::string, cst_voice*> voices;
  return voices;
}

// eSpeak's phoneme mnemonics for the phones of the digit words, as CMU phones (a non-rhotic
// "o@" is "ao r" in the CMU lexicon: it becomes two phones sharing its duration).
const std::map<std::string, std::vector<std::string>>& EspeakToCmu() {
  static const std::map<std::string, std::vector<std::string>> kMap = {
      {"oU", {"ow"}}, {"o@", {"ao", "r"}}, {"O@", {"ao", "r"}}, {"O:", {"ao"}}, {"o:", {"ao"}},
      {"z", {"z"}},   {"I", {"ih"}},       {"i", {"iy"}},       {"i@", {"iy"}}, {"I@", {"ih"}},
      {"r", {"r"}},   {"w", {"w"}},        {"V", {"ah"}},       {"0", {"ah"}},  {"n", {"n"}},
      {"t", {"t"}},   {"u:", {"uw"}},      {"T", {"th"}},       {"t[", {"th"}}, {"i:", {"iy"}},
      {"f", {"f"}},   {"aI", {"ay"}},      {"aI2", {"ay"}},     {"v", {"v"}},   {"s", {"s"}},
      {"k", {"k"}},   {"E", {"eh"}},       {"@", {"ax"}},       {"eI", {"ey"}}, {"@n", {"n"}},
      {"n-", {"n"}},  {"3", {"ax"}},       {"a", {"ah"}}};
  return kMap;
}

bool IsEspeakPause(const std::string& m) { return m.empty() || m[0] == '_'; }
// Markers that carry no sound of their own (stress, palatalisation, syllable breaks).
bool IsEspeakMarker(const std::string& m) {
  return m == ";" || m == "'" || m == "," || m == "%" || m == "=" || m == "#";
}

struct EspeakCapture {
  std::vector<short> samples;
  std::vector<std::pair<int, std::string>> events;  // (sample position, mnemonic or "WORD")
  int rate = 22050;
};
EspeakCapture* g_capture = nullptr;

extern "C" int EspeakCallback(short* wav, int n, espeak_EVENT* events) {
  if (g_capture == nullptr) return 1;
  if (wav != nullptr && n > 0) g_capture->samples.insert(g_capture->samples.end(), wav, wav + n);
  for (espeak_EVENT* e = events; e && e->type != espeakEVENT_LIST_TERMINATED; ++e) {
    const int pos =
        static_cast<int>(static_cast<int64_t>(e->audio_position) * g_capture->rate / 1000);
    if (e->type == espeakEVENT_WORD) {
      g_capture->events.emplace_back(pos, "WORD");
    } else if (e->type == espeakEVENT_PHONEME) {
      char name[9] = {};
      std::memcpy(name, e->id.string, 8);
      g_capture->events.emplace_back(pos, name);
    }
  }
  return 0;
}

// Splits [start, end) uniformly among `phones`.
void UniformSplit(const std::vector<std::string>& phones, double start, double end,
                  std::vector<PhoneSegment>& out) {
  const double step = (end - start) / static_cast<double>(phones.size());
  for (size_t i = 0; i < phones.size(); ++i) {
    out.push_back({phones[i], start + step * i, start + step * (i + 1)});
  }
}

// Makes segments contiguous from 0 to `duration`, filling gaps with silence and merging
// neighbouring silences.
std::vector<PhoneSegment> Normalise(std::vector<PhoneSegment> segs, double duration) {
  std::vector<PhoneSegment> out;
  double t = 0.0;
  auto push = [&](const PhoneSegment& s) {
    if (s.end <= s.start) return;
    if (!out.empty() && out.back().phone == "sil" && s.phone == "sil") {
      out.back().end = s.end;
    } else {
      out.push_back(s);
    }
  };
  for (PhoneSegment s : segs) {
    s.start = std::clamp(s.start, t, duration);
    s.end = std::clamp(s.end, s.start, duration);
    if (s.start > t) push({"sil", t, s.start});
    push(s);
    t = std::max(t, s.end);
  }
  if (t < duration) push({"sil", t, duration});
  return out;
}

}  // namespace

std::vector<std::string> Synthesizer::Voices() {
  return {"flite:kal16",
          "flite:kal",
          "flite:awb",
          "flite:rms",
          "flite:slt",
          "espeak:en-us",
          "espeak:en",
          "espeak:en-gb-x-rp",
          "espeak:en-gb-scotland",
          "espeak:en-029",
          "espeak:en-gb-x-gbclan",
          "espeak:en-us+f3",
          "espeak:en-us+m3",
          "espeak:en+f2",
          "espeak:en-gb-x-rp+f4"};
}

std::vector<std::string> Synthesizer::ExtraVoices() {
  return {"espeak:en-us+m1",          "espeak:en-us+f1",  "espeak:en+m5",
          "espeak:en-gb-scotland+f2", "espeak:en-029+m2", "espeak:en-gb-x-gbclan+m4",
          "espeak:en-gb-x-rp+m7",     "espeak:en-us+f5",  "espeak:en+m2"};
}

Synthesizer::Synthesizer() {
  flite_init();
  auto& voices = FliteVoices();
  if (voices.empty()) {
    voices["kal"] = register_cmu_us_kal(nullptr);
    voices["kal16"] = register_cmu_us_kal16(nullptr);
    voices["awb"] = register_cmu_us_awb(nullptr);
    voices["rms"] = register_cmu_us_rms(nullptr);
    voices["slt"] = register_cmu_us_slt(nullptr);
  }
  for (const auto& [name, v] : voices) {
    MAVG_CHECK(v != nullptr, "flite voice {} is missing: apt-get install flite1-dev", name);
  }
  espeak_rate_ = espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, nullptr,
                                   espeakINITIALIZE_PHONEME_EVENTS | espeakINITIALIZE_DONT_EXIT);
  MAVG_CHECK(espeak_rate_ > 0,
             "espeak-ng could not start (its data is missing?): apt-get install espeak-ng-data "
             "libespeak-ng1");
  espeak_SetSynthCallback(EspeakCallback);

  // The lexicon: flite's own pronunciation of every word.
  cst_voice* kal16 = voices["kal16"];
  for (const char* word : kDigitWords) {
    cst_utterance* u = flite_synth_text(word, kal16);
    std::vector<std::string> phones;
    for (cst_item* s = relation_head(utt_relation(u, "Segment")); s; s = item_next(s)) {
      const std::string p = item_feat_string(s, "name");
      if (p != "pau") phones.push_back(p);
    }
    delete_utterance(u);
    lexicon_.emplace_back(word, phones);
  }
}

Synthesizer::~Synthesizer() { espeak_Terminate(); }

Synthesis Synthesizer::Synthesize(const std::string& voice, const std::vector<std::string>& words,
                                  const Prosody& prosody) {
  for (const std::string& w : words) {
    MAVG_CHECK(
        std::any_of(lexicon_.begin(), lexicon_.end(), [&](const auto& e) { return e.first == w; }),
        "'{}' is not a digit word (oh, zero, one, ..., nine)", w);
  }
  if (voice.rfind("flite:", 0) == 0) {
    std::string text;
    for (const auto& w : words) text += (text.empty() ? "" : " ") + w;
    Synthesis s = SynthesizeFlite(voice.substr(6), text, prosody);
    // Voices differ in pronunciation details (kal says "w aa n"): map to the corpus lexicon
    // when the phone count agrees, else split the speech uniformly among the lexicon's phones.
    std::vector<std::string> expected;
    for (const auto& w : words) {
      const auto& pron = std::find_if(lexicon_.begin(), lexicon_.end(), [&](const auto& e) {
                           return e.first == w;
                         })->second;
      expected.insert(expected.end(), pron.begin(), pron.end());
    }
    std::vector<PhoneSegment*> speech;
    for (auto& seg : s.phones) {
      if (seg.phone != "sil") speech.push_back(&seg);
    }
    if (speech.size() == expected.size()) {
      for (size_t i = 0; i < speech.size(); ++i) speech[i]->phone = expected[i];
    } else if (!speech.empty()) {
      const double start = speech.front()->start, end = speech.back()->end;
      std::vector<PhoneSegment> segs;
      UniformSplit(expected, start, end, segs);
      s.phones = Normalise(std::move(segs),
                           static_cast<double>(s.audio.samples.size()) / kCorpusSampleRate);
      s.aligned_by_synth = false;
    }
    return s;
  }
  if (voice.rfind("espeak:", 0) == 0) return SynthesizeEspeak(voice.substr(7), words, prosody);
  MAVG_FAIL("unknown voice '{}' (flite:NAME or espeak:NAME)", voice);
}

Synthesis Synthesizer::SynthesizeFlite(const std::string& name, const std::string& text,
                                       const Prosody& prosody) {
  const auto it = FliteVoices().find(name);
  MAVG_CHECK(it != FliteVoices().end(), "unknown flite voice '{}' (kal16, kal, awb, rms, slt)",
             name);
  cst_voice* v = it->second;
  const double f0 = std::pow(2.0, prosody.pitch / 12.0);
  feat_set_float(v->features, "duration_stretch", static_cast<float>(1.0 / prosody.rate));
  feat_set_float(v->features, "int_f0_target_mean", static_cast<float>(105.0 * f0));
  feat_set_float(v->features, "f0_shift", static_cast<float>(f0));
  cst_utterance* u = flite_synth_text(text.c_str(), v);
  MAVG_CHECK(u != nullptr, "flite failed on '{}'", text);
  cst_wave* w = utt_wave(u);
  Synthesis out;
  std::vector<float> samples(static_cast<size_t>(w->num_samples));
  for (int i = 0; i < w->num_samples; ++i) samples[i] = w->samples[i] / 32768.0f;
  const int rate = w->sample_rate;
  std::vector<PhoneSegment> segs;
  double start = 0.0;
  for (cst_item* s = relation_head(utt_relation(u, "Segment")); s; s = item_next(s)) {
    const std::string p = item_feat_string(s, "name");
    const double end = item_feat_float(s, "end");
    segs.push_back({p == "pau" ? "sil" : p, start, end});
    start = end;
  }
  delete_utterance(u);
  out.audio.sample_rate = kCorpusSampleRate;
  out.audio.samples = Resample(samples, rate, kCorpusSampleRate);
  const double duration = static_cast<double>(out.audio.samples.size()) / kCorpusSampleRate;
  out.phones = Normalise(std::move(segs), duration);
  return out;
}

Synthesis Synthesizer::SynthesizeEspeak(const std::string& name,
                                        const std::vector<std::string>& words,
                                        const Prosody& prosody) {
  MAVG_CHECK(espeak_SetVoiceByName(name.c_str()) == EE_OK, "espeak-ng has no voice '{}'", name);
  espeak_SetParameter(espeakRATE, static_cast<int>(std::lround(175 * prosody.rate)), 0);
  espeak_SetParameter(espeakPITCH,
                      std::clamp(static_cast<int>(std::lround(50 + 4 * prosody.pitch)), 0, 99), 0);
  std::string text;
  for (const auto& w : words) text += (text.empty() ? "" : " ") + w;
  EspeakCapture capture;
  capture.rate = espeak_rate_;
  g_capture = &capture;
  // eSpeak draws from the C library's rand() (flutter, noise sources): seeded per utterance.
  // It also keeps state between utterances, so the same call can still differ slightly
  // depending on what was synthesised before (see digits.cpp).
  std::srand(12345u);
  const espeak_ERROR err = espeak_Synth(text.c_str(), text.size() + 1, 0, POS_CHARACTER, 0,
                                        espeakCHARS_AUTO, nullptr, nullptr);
  espeak_Synchronize();
  g_capture = nullptr;
  MAVG_CHECK(err == EE_OK, "espeak-ng failed on '{}' with voice {}", text, name);

  const double n = static_cast<double>(capture.samples.size());
  const double secs_per_sample = 1.0 / capture.rate;
  // Boundaries: every phoneme event starts a segment ending at the next event.
  struct Ev {
    double t;
    std::string m;
  };
  std::vector<std::vector<Ev>> per_word;  // phoneme events of each word, in order
  std::vector<Ev> all;
  for (const auto& [pos, m] : capture.events) {
    if (m == "WORD") {
      per_word.emplace_back();
      continue;
    }
    all.push_back({pos * secs_per_sample, m});
    if (!per_word.empty()) per_word.back().push_back({pos * secs_per_sample, m});
  }
  auto next_time = [&](double t) {
    for (const Ev& e : all) {
      if (e.t > t) return e.t;
    }
    return n * secs_per_sample;
  };
  Synthesis out;
  std::vector<PhoneSegment> segs;
  for (size_t k = 0; k < words.size() && k < per_word.size(); ++k) {
    const auto& pron = std::find_if(lexicon_.begin(), lexicon_.end(), [&](const auto& e) {
                         return e.first == words[k];
                       })->second;
    std::vector<PhoneSegment> mine;
    for (const Ev& e : per_word[k]) {
      if (IsEspeakPause(e.m) || IsEspeakMarker(e.m)) continue;
      const auto m = EspeakToCmu().find(e.m);
      const double start = e.t, end = next_time(e.t);
      if (m == EspeakToCmu().end()) {
        mine.push_back({"?", start, end});
        continue;
      }
      const auto& cmu = m->second;
      for (size_t j = 0; j < cmu.size(); ++j) {
        // An expansion's last phone repeated by the next event ("o@" then "r") is one phone.
        if (j > 0 && !mine.empty() && mine.back().phone == cmu[j]) continue;
        const double a = start + (end - start) * j / cmu.size();
        const double b = start + (end - start) * (j + 1) / cmu.size();
        if (!mine.empty() && j == 0 && mine.back().phone == cmu[j] && cmu.size() == 1 &&
            mine.back().phone == "r") {
          mine.back().end = b;  // "o@" + "r": extend the r
          continue;
        }
        mine.push_back({cmu[j], a, b});
      }
    }
    if (mine.empty()) continue;
    if (mine.size() == pron.size()) {
      for (size_t i = 0; i < mine.size(); ++i)
        segs.push_back({pron[i], mine[i].start, mine[i].end});
    } else {
      out.aligned_by_synth = false;
      UniformSplit(pron, mine.front().start, mine.back().end, segs);
    }
  }
  std::vector<float> samples(capture.samples.size());
  for (size_t i = 0; i < samples.size(); ++i) samples[i] = capture.samples[i] / 32768.0f;
  out.audio.sample_rate = kCorpusSampleRate;
  out.audio.samples = Resample(samples, capture.rate, kCorpusSampleRate);
  const double duration = static_cast<double>(out.audio.samples.size()) / kCorpusSampleRate;
  out.phones = Normalise(std::move(segs), duration);
  MAVG_CHECK(per_word.size() >= words.size(), "espeak-ng reported {} words for '{}' ({} expected)",
             per_word.size(), text, words.size());
  return out;
}

}  // namespace mavg
