#include "engine/speech/digits.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/core/json.h"
#include "engine/core/logging.h"
#include "engine/core/progress.h"
#include "engine/core/rng.h"
#include "engine/core/timer.h"
#include "engine/data/kaldi_io.h"
#include "engine/decode/lang.h"
#include "engine/speech/fbank_dir.h"
#include "engine/speech/noise.h"
#include "engine/speech/tts.h"
#include "engine/speech/wav.h"

namespace mavg {
namespace {

namespace fs = std::filesystem;

constexpr int kFrameLength = 400;  // 25 ms
constexpr int kFrameShift = 160;   // 10 ms
const char* const kSets[] = {"train", "dev", "test", "test_seen"};

struct Speaker {
  std::string id, voice, set;
  Prosody prosody;
};

struct UttPlan {
  std::string id, set;
  int speaker = 0;
  std::vector<std::string> words;
  int noise = 0;  // 0 none, else 1 + the index of its kind in DigitsOptions::noises
  double snr = 0.0;
  uint64_t seed = 0;
};

std::string SpeakerPrefix(const std::string& voice) {
  std::string s = voice.substr(voice.find(':') + 1);
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return s;
}

int64_t NumFrames(size_t samples) {
  return samples < kFrameLength ? 0
                                : 1 + static_cast<int64_t>(samples - kFrameLength) / kFrameShift;
}

// The synthesis of one utterance as stored between the two stages: float samples + segments.
void SaveClean(const std::string& dir, const std::string& utt, const Synthesis& s) {
  std::string bytes(reinterpret_cast<const char*>(s.audio.samples.data()),
                    s.audio.samples.size() * sizeof(float));
  WriteFileAtomic(dir + "/" + utt + ".f32", bytes);
  std::string segs = s.aligned_by_synth ? "synth\n" : "uniform\n";
  for (const auto& p : s.phones) segs += fmt::format("{} {:.6f} {:.6f}\n", p.phone, p.start, p.end);
  WriteFileAtomic(dir + "/" + utt + ".seg", segs);
}

std::vector<float> LoadClean(const std::string& dir, const std::string& utt) {
  const std::string bytes = ReadFile(dir + "/" + utt + ".f32");
  std::vector<float> x(bytes.size() / sizeof(float));
  if (!x.empty()) std::memcpy(x.data(), bytes.data(), x.size() * sizeof(float));
  return x;
}

std::vector<PhoneSegment> LoadSegments(const std::string& dir, const std::string& utt,
                                       bool* uniform) {
  std::istringstream in(ReadFile(dir + "/" + utt + ".seg"));
  std::string mode;
  std::getline(in, mode);
  *uniform = mode == "uniform";
  std::vector<PhoneSegment> segs;
  PhoneSegment s;
  while (in >> s.phone >> s.start >> s.end) segs.push_back(s);
  return segs;
}

// Stage 1: synthesis. eSpeak carries state from one utterance to the next (the audio of an
// utterance depends on what was synthesised before it), so utterances are dealt to a fixed
// number of lanes, each synthesised in order by a fresh process: the corpus is the same
// whatever the number of processes running the lanes. Each process writes a byte to a pipe per
// utterance done, which the parent counts for the progress line.
constexpr int kLanes = 8;

void SynthesizeAll(const std::vector<UttPlan>& utts, const std::vector<Speaker>& speakers,
                   const std::string& clean_dir, int procs, bool progress) {
  int tally[2];  // [read end, write end]
  MAVG_CHECK(pipe2(tally, O_CLOEXEC) == 0, "pipe failed: {}", std::strerror(errno));
  Progress bar("[digits] synthesis", static_cast<int64_t>(utts.size()), progress, "utterances");
  int64_t done = 0;
  std::vector<pid_t> running;
  bool failed = false;
  int next_lane = 0;
  while (next_lane < kLanes || !running.empty()) {
    while (next_lane < kLanes && static_cast<int>(running.size()) < procs) {
      const int lane = next_lane++;
      const pid_t pid = fork();
      if (pid < 0) {
        close(tally[0]);
        close(tally[1]);
        MAVG_FAIL("fork failed: {}", std::strerror(errno));
      }
      if (pid == 0) {
        close(tally[0]);
        int code = 0;
        try {
          Synthesizer synth;
          for (size_t i = static_cast<size_t>(lane); i < utts.size(); i += kLanes) {
            const UttPlan& u = utts[i];
            const Speaker& spk = speakers[u.speaker];
            SaveClean(clean_dir, u.id, synth.Synthesize(spk.voice, u.words, spk.prosody));
            if (write(tally[1], "u", 1) < 0) {
              // Only the progress line misses it.
            }
          }
        } catch (const std::exception& e) {
          WriteFileAtomic(fmt::format("{}/error.{}", clean_dir, lane), e.what());
          code = 1;
        }
        _exit(code);
      }
      running.push_back(pid);
    }
    pollfd ready{tally[0], POLLIN, 0};
    if (poll(&ready, 1, 100) > 0) {
      char bytes[4096];
      const ssize_t n = read(tally[0], bytes, sizeof(bytes));
      if (n > 0) done += n;
    }
    bar.Update(done);
    for (;;) {
      int status = 0;
      const pid_t pid = waitpid(-1, &status, WNOHANG);
      if (pid <= 0) break;
      const auto it = std::find(running.begin(), running.end(), pid);
      if (it == running.end()) continue;
      running.erase(it);
      failed = failed || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    }
  }
  close(tally[0]);
  close(tally[1]);
  bar.Finish();
  if (failed) {
    for (int lane = 0; lane < kLanes; ++lane) {
      const std::string err = fmt::format("{}/error.{}", clean_dir, lane);
      if (PathExists(err)) MAVG_FAIL("synthesis failed: {}", ReadFile(err));
    }
    MAVG_FAIL("a synthesis process died");
  }
}

}  // namespace

DigitsOptions PresetOptions(DigitsSize size) {
  const DigitsPreset& p = PresetOf(size);
  DigitsOptions o;
  o.train_utts = p.sets.train;
  o.dev_utts = p.sets.dev;
  o.test_utts = p.sets.test;
  o.test_seen_utts = p.sets.test_seen;
  o.speakers_per_voice = p.speakers_per_voice;
  if (p.extra_voices) {
    o.voices = Synthesizer::Voices();
    for (const std::string& v : Synthesizer::ExtraVoices()) o.voices.push_back(v);
  }
  o.noises.clear();
  for (int k = 0; k < p.noise_kinds; ++k) o.noises.push_back(static_cast<NoiseKind>(k));
  o.preset = std::string(ToString(size));
  o.train_last = p.extra_voices;
  return o;
}

DigitsStats BuildDigitsCorpus(const std::string& out_dir, const DigitsOptions& o) {
  Timer total;
  DigitsStats stats;
  MAVG_CHECK(o.min_words >= 1 && o.max_words >= o.min_words,
             "words per utterance: need 1 <= min ({}) <= max ({})", o.min_words, o.max_words);
  MAVG_CHECK(o.speakers_per_voice >= 3, "speakers_per_voice must be at least 3 (dev, test, train)");
  MAVG_CHECK(o.snr_max >= o.snr_min, "snr range [{}, {}] is empty", o.snr_min, o.snr_max);
  MAVG_CHECK(!o.noises.empty(), "no noise conditions (--noises)");
  if (PathExists(out_dir)) {
    MAVG_CHECK(o.force, "{}: already exists (use --force to replace it)", out_dir);
  }
  const int procs = o.threads > 0
                        ? o.threads
                        : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  std::vector<std::string> voices = o.voices.empty() ? Synthesizer::Voices() : o.voices;
  if (!o.held_out_voice.empty()) {
    MAVG_CHECK(std::find(voices.begin(), voices.end(), o.held_out_voice) != voices.end(),
               "--held-out-voice {} is not one of the corpus voices", o.held_out_voice);
  }

  // Speakers: per voice, one for test, one for dev, the rest for train (and test_seen).
  std::vector<Speaker> speakers;
  std::map<std::string, std::vector<int>> pool;  // set -> speaker indices
  for (size_t v = 0; v < voices.size(); ++v) {
    for (int s = 0; s < o.speakers_per_voice; ++s) {
      Rng rng(DeriveSeed(o.seed, {10, v, static_cast<uint64_t>(s)}));
      Speaker spk;
      spk.voice = voices[v];
      spk.id = fmt::format("{}-s{}", SpeakerPrefix(voices[v]), s);
      spk.prosody.rate = 0.85 + 0.35 * rng.Uniform();
      spk.prosody.pitch = -3.0 + 6.0 * rng.Uniform();
      spk.set = s == 0 ? "test" : s == 1 ? "dev" : voices[v] == o.held_out_voice ? "test" : "train";
      pool[spk.set].push_back(static_cast<int>(speakers.size()));
      if (spk.set == "train") pool["test_seen"].push_back(static_cast<int>(speakers.size()));
      speakers.push_back(spk);
    }
  }
  MAVG_CHECK(!pool["train"].empty(), "no training speakers left");

  // Utterances.
  std::vector<UttPlan> utts;
  const std::map<std::string, int> counts = {{"train", o.train_utts},
                                             {"dev", o.dev_utts},
                                             {"test", o.test_utts},
                                             {"test_seen", o.test_seen_utts}};
  for (int set_index = 0; set_index < 4; ++set_index) {
    const std::string set = kSets[set_index];
    for (int i = 0; i < counts.at(set); ++i) {
      Rng rng(DeriveSeed(o.seed, {20, static_cast<uint64_t>(set_index), static_cast<uint64_t>(i)}));
      UttPlan u;
      u.set = set;
      u.speaker = pool[set][rng.Below(pool[set].size())];
      const int n = o.min_words + static_cast<int>(rng.Below(o.max_words - o.min_words + 1));
      for (int w = 0; w < n; ++w) u.words.push_back(kDigitWords[rng.Below(11)]);
      const bool clean = set == "test_seen" || rng.Uniform() < o.clean_fraction;
      u.noise = clean ? 0 : 1 + static_cast<int>(rng.Below(o.noises.size()));
      u.snr = o.snr_min + (o.snr_max - o.snr_min) * rng.Uniform();
      u.seed = rng.NextU64();
      u.id = fmt::format("{}_{}_{:05}", speakers[u.speaker].id, set, i);
      utts.push_back(std::move(u));
    }
  }

  const std::string tmp = fmt::format("{}.tmp-{}", out_dir, getpid());
  fs::remove_all(tmp);
  const std::string clean_dir = tmp + "/clean";
  MakeDirs(clean_dir);
  try {
    spdlog::info("[digits] synthesising {} utterances with {} voices in {} processes", utts.size(),
                 voices.size(), procs);
    Timer synth_timer;
    if (o.train_last) {
      // eSpeak keeps state between the utterances of a process, so an utterance's audio depends
      // on those synthesised before it in its lane: the sets of fixed size first, then the
      // training utterances in order, give every utterance the same history in each member of
      // the scaled family (whose training sets only grow). Each set keeps its order.
      std::stable_partition(utts.begin(), utts.end(),
                            [](const UttPlan& u) { return u.set != "train"; });
    }
    SynthesizeAll(utts, speakers, clean_dir, procs, o.progress);
    stats.synth_seconds = synth_timer.Seconds();

    // The phone set and lexicon (flite's pronunciations) and the pdf of every (phone, state).
    Synthesizer synth;
    std::vector<std::string> phones = {"sil"};
    for (const auto& [word, pron] : synth.Lexicon()) {
      for (const auto& p : pron) {
        if (std::find(phones.begin(), phones.end(), p) == phones.end()) phones.push_back(p);
      }
    }
    std::sort(phones.begin() + 1, phones.end());
    auto phone_id = [&](const std::string& p) {
      const auto it = std::find(phones.begin(), phones.end(), p);
      MAVG_CHECK(it != phones.end(), "phone '{}' is not in the corpus phone set", p);
      return static_cast<int>(it - phones.begin());
    };

    // Stage 2 per set: noise, wav files, text, alignments.
    std::map<std::string, std::vector<std::vector<int32_t>>> set_alignments;
    for (const char* set_name : kSets) {
      const std::string set = set_name;
      const std::string dir = tmp + "/" + set;
      MakeDirs(dir + "/wav");
      std::vector<const UttPlan*> mine;
      for (const auto& u : utts) {
        if (u.set == set) mine.push_back(&u);
      }
      // Babble sources: the first (up to) 60 utterances of the same set.
      std::vector<std::vector<float>> babble_pool;
      for (size_t i = 0; i < mine.size() && i < 60; ++i) {
        babble_pool.push_back(LoadClean(clean_dir, mine[i]->id));
      }
      std::vector<std::vector<int32_t>> alignments(mine.size());
      std::vector<size_t> lengths(mine.size());
      std::vector<int> uniform(mine.size(), 0);
      std::vector<std::thread> workers;
      std::vector<std::string> errors(procs);
      std::atomic<int64_t> mixed{0};  // utterances done, for the progress line
      std::atomic<int> finished{0};   // workers done
      for (int k = 0; k < procs; ++k) {
        workers.emplace_back([&, k] {
          try {
            for (size_t i = static_cast<size_t>(k); i < mine.size();
                 i += static_cast<size_t>(procs)) {
              const UttPlan& u = *mine[i];
              std::vector<float> x = LoadClean(clean_dir, u.id);
              bool uni = false;
              const std::vector<PhoneSegment> segs = LoadSegments(clean_dir, u.id, &uni);
              uniform[i] = uni;
              MAVG_CHECK(NumFrames(x.size()) > 0, "utterance {}: empty audio", u.id);
              std::vector<std::pair<size_t, size_t>> voiced;
              for (const auto& s : segs) {
                if (s.phone != "sil")
                  voiced.emplace_back(static_cast<size_t>(s.start * kCorpusSampleRate),
                                      static_cast<size_t>(s.end * kCorpusSampleRate));
              }
              Rng rng(u.seed);
              if (u.noise > 0) {
                std::vector<float> noise;
                auto babble = [&](int talkers) {
                  std::vector<const std::vector<float>*> src;
                  for (int b = 0; b < talkers; ++b)
                    src.push_back(&babble_pool[rng.Below(babble_pool.size())]);
                  return Babble(x.size(), src, rng);
                };
                switch (o.noises[static_cast<size_t>(u.noise - 1)]) {
                  case NoiseKind::kWhite:
                    noise = WhiteNoise(x.size(), rng);
                    break;
                  case NoiseKind::kPink:
                    noise = PinkNoise(x.size(), rng);
                    break;
                  case NoiseKind::kBabble:
                    noise = babble(4);
                    break;
                  case NoiseKind::kBrown:
                    noise = BrownNoise(x.size(), rng);
                    break;
                  case NoiseKind::kCrowd:
                    noise = babble(12);
                    break;
                }
                MixAtSnr(x, noise, u.snr, voiced);
              }
              // Keep headroom: scale down only if the mix clips.
              float peak = 0.0f;
              for (float v : x) peak = std::max(peak, std::fabs(v));
              if (peak > 0.99f) {
                for (float& v : x) v *= 0.99f / peak;
              }
              WriteWav(dir + "/wav/" + u.id + ".wav", Waveform{kCorpusSampleRate, x});
              lengths[i] = x.size();
              // Frame labels: the segment under each frame's centre; 3 states per phone split
              // uniformly inside the segment.
              const int64_t frames = NumFrames(x.size());
              std::vector<int32_t> ali(static_cast<size_t>(frames));
              size_t seg = 0;
              for (int64_t t = 0; t < frames; ++t) {
                const double centre = (t * kFrameShift + kFrameLength / 2.0) / kCorpusSampleRate;
                while (seg + 1 < segs.size() && segs[seg].end <= centre) ++seg;
                const PhoneSegment& s = segs[seg];
                const double frac = s.end > s.start ? (centre - s.start) / (s.end - s.start) : 0.0;
                const int state = std::clamp(static_cast<int>(std::floor(frac * 3.0)), 0, 2);
                ali[t] = phone_id(s.phone) * 3 + state;
              }
              alignments[i] = std::move(ali);
              ++mixed;
            }
          } catch (const std::exception& e) {
            errors[k] = e.what();
          }
          ++finished;
        });
      }
      {
        Progress bar(fmt::format("[digits] {}: noise and alignments", set),
                     static_cast<int64_t>(mine.size()), o.progress, "utterances");
        do {  // drawn at least once, however quick the step
          bar.Update(mixed.load());
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
        } while (finished.load() < procs);
      }
      for (auto& w : workers) w.join();
      for (const auto& e : errors) MAVG_CHECK(e.empty(), "{}", e);

      std::string wav_scp, text, utt2spk;
      std::map<std::string, std::vector<std::string>> spk2utt;
      kaldi::Int32VectorArchiveWriter ali_writer(dir + "/ali.ark");
      DigitsSetStats& st = stats.sets[set];
      std::set<int> spk_seen;
      for (size_t i = 0; i < mine.size(); ++i) {
        const UttPlan& u = *mine[i];
        const std::string spk = speakers[u.speaker].id;
        wav_scp +=
            fmt::format("{} {}/{}/wav/{}.wav\n", u.id, fs::absolute(out_dir).string(), set, u.id);
        std::string words;
        for (const auto& w : u.words) words += " " + w;
        text += u.id + words + "\n";
        utt2spk += u.id + " " + spk + "\n";
        spk2utt[spk].push_back(u.id);
        ali_writer.Write(u.id, alignments[i]);
        spk_seen.insert(u.speaker);
        st.utterances += 1;
        st.words += static_cast<int>(u.words.size());
        st.hours += static_cast<double>(lengths[i]) / kCorpusSampleRate / 3600.0;
        st.frames += static_cast<int64_t>(alignments[i].size());
        stats.uniform_alignments += uniform[i];
      }
      st.speakers = static_cast<int>(spk_seen.size());
      ali_writer.Close();
      WriteFileAtomic(dir + "/text", text);
      WriteFileAtomic(dir + "/utt2spk", utt2spk);
      std::string s2u;
      for (const auto& [spk, list] : spk2utt) {
        s2u += spk;
        for (const auto& u : list) s2u += " " + u;
        s2u += "\n";
      }
      WriteFileAtomic(dir + "/spk2utt", s2u);
      // wav.scp points at the final location; features are computed from the tmp copies.
      std::string tmp_scp;
      for (const auto* u : mine)
        tmp_scp += fmt::format("{} {}/wav/{}.wav\n", u->id, fs::absolute(dir).string(), u->id);
      WriteFileAtomic(dir + "/wav.scp", tmp_scp);
      Timer feat_timer;
      FbankOptions fo;
      ComputeFbankForDataDir(dir, fo, procs,
                             o.progress ? fmt::format("[digits] {}: features", set) : "");
      stats.feature_seconds += feat_timer.Seconds();
      WriteFileAtomic(dir + "/wav.scp", wav_scp);
      set_alignments[set] = std::move(alignments);
      spdlog::info("[digits] {}: {} utterances, {} speakers, {:.2f} h", set, st.utterances,
                   st.speakers, st.hours);
    }

    // The language dir.
    Lang lang = BuildLang(phones, synth.Lexicon(), set_alignments["train"]);
    WriteLang(tmp + "/lang", lang);
    fs::remove_all(clean_dir);

    stats.build_seconds = total.Seconds();
    nlohmann::json info;
    for (const auto& [set, st] : stats.sets) {
      info["sets"][set] = {{"utterances", st.utterances},
                           {"speakers", st.speakers},
                           {"words", st.words},
                           {"hours", st.hours},
                           {"frames", st.frames}};
    }
    info["preset"] = o.preset;
    info["voices"] = voices;
    info["speakers_per_voice"] = o.speakers_per_voice;
    info["train_synthesised_last"] = o.train_last;
    info["noises"] = nlohmann::json::array();
    for (NoiseKind k : o.noises) info["noises"].push_back(std::string(ToString(k)));
    info["held_out_voice"] = o.held_out_voice;
    info["snr_db"] = {o.snr_min, o.snr_max};
    info["clean_fraction"] = o.clean_fraction;
    info["seed"] = o.seed;
    info["uniform_alignments"] = stats.uniform_alignments;
    info["build_seconds"] = stats.build_seconds;
    WriteFileAtomic(tmp + "/corpus.json", DumpJson(info, 2) + "\n");
    if (PathExists(out_dir)) fs::remove_all(out_dir);
    fs::rename(tmp, out_dir);
  } catch (...) {
    std::error_code ec;
    fs::remove_all(tmp, ec);
    throw;
  }
  // The feature archives were written inside the tmp dir: point the scp files at the final one.
  for (const char* set : kSets) {
    const std::string scp = out_dir + "/" + set + "/feats.scp";
    std::string content = ReadFile(scp);
    const std::string from = fs::absolute(tmp).string(), to = fs::absolute(out_dir).string();
    for (size_t pos = 0; (pos = content.find(from, pos)) != std::string::npos; pos += to.size()) {
      content.replace(pos, from.size(), to);
    }
    WriteFileAtomic(scp, content);
  }
  stats.build_seconds = total.Seconds();
  return stats;
}

}  // namespace mavg
