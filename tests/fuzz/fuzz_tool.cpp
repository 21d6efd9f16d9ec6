// fuzz_tool: every fuzz target in one ordinary executable (no libFuzzer needed).
//   fuzz_tool list                     the targets
//   fuzz_tool seeds OUT_DIR            writes OUT_DIR/<target>/ seed corpora: the real Kaldi
//                                      archives of tests/fixtures and slices of them, the
//                                      configs/ and sweeps/ of the repository, and a model,
//                                      checkpoint and lang dir written by mavg's own writers
//   fuzz_tool replay TARGET PATH...    runs the target once on every file (directories: every
//                                      file in them), as libFuzzer would; aborts on a finding
//   fuzz_tool replay-valid TARGET ...  the same, and fails if any input is rejected (seeds)
#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <regex>

#include "engine/backend/backend.h"
#include "engine/backend/device_buffer.h"
#include "engine/core/files.h"
#include "engine/data/feature_pipeline.h"
#include "engine/data/kaldi_io.h"
#include "engine/decode/lang.h"
#include "engine/decode/score.h"
#include "engine/nn/init.h"
#include "engine/nn/model.h"
#include "engine/train/checkpoint.h"
#include "tests/fuzz/fuzz_target.h"

#if !defined(MAVG_TEST_FIXTURES) || !defined(MAVG_SOURCE_DIR)
#error "MAVG_TEST_FIXTURES and MAVG_SOURCE_DIR must be defined"
#endif

namespace fs = std::filesystem;

namespace mavg::fuzz {

std::map<std::string, TargetFn>& Targets() {
  static std::map<std::string, TargetFn> targets;
  return targets;
}

bool Register(const char* name, TargetFn fn) {
  Targets()[name] = fn;
  return true;
}

namespace {

std::string Slurp(const fs::path& p) { return ReadFile(p.string()); }

void Put(const fs::path& dir, const std::string& name, const std::string& bytes) {
  MakeDirs(dir.string());
  WriteFileAtomic((dir / name).string(), bytes);
}

// The archive's first `n` entries (byte ranges from the reader's object offsets).
std::string FirstEntries(const std::string& path, int n) {
  const std::string bytes = Slurp(path);
  kaldi::MatrixArchiveReader reader(path);
  int i = 0;
  while (reader.Next()) {
    if (i++ == n) return bytes.substr(0, reader.Offset() - reader.Key().size() - 1);
  }
  return bytes;
}

struct EntryOffset {
  std::string key;
  int64_t offset;
};
std::vector<EntryOffset> Offsets(const std::string& path) {
  std::vector<EntryOffset> out;
  kaldi::MatrixArchiveReader reader(path);
  while (reader.Next()) out.push_back({reader.Key(), reader.Offset()});
  return out;
}

void KaldiSeeds(const fs::path& out) {
  const std::string k = std::string(MAVG_TEST_FIXTURES) + "/kaldi/";
  const fs::path ark = out / "kaldi_archive";
  for (const char* m : {"feats.ark", "feats_compressed.ark", "feats_ascii.ark"}) {
    Put(ark, m, std::string(1, '\0') + Slurp(k + m));
    Put(ark, std::string("first2-") + m, std::string(1, '\0') + FirstEntries(k + m, 2));
  }
  for (const char* v : {"ali.ark", "ali_ascii.ark"}) Put(ark, v, "\x01" + Slurp(k + v));
  const fs::path scp = out / "kaldi_scp";
  for (const char* m : {"feats.ark", "feats_compressed.ark", "feats_ascii.ark"}) {
    std::string plain, ranged;
    int i = 0;
    for (const auto& e : Offsets(k + m)) {
      plain += fmt::format("{} {}:{}\n", e.key, m, e.offset);
      const char* range[] = {"[0:9]", "[:,0:4]", "[5:5,12:12]", "[3:7,:]"};
      ranged += fmt::format("{} {}:{}{}\n", e.key, m, e.offset, range[i++ % 4]);
    }
    Put(scp, std::string(m) + ".scp", plain);
    Put(scp, std::string(m) + ".ranges.scp", ranged);
  }
}

void YamlSeeds(const fs::path& out) {
  const fs::path src(MAVG_SOURCE_DIR);
  for (const auto& e : fs::directory_iterator(src / "configs")) {
    if (e.path().extension() == ".yaml") Put(out / "config_yaml", e.path().filename(), Slurp(e));
  }
  // Specs with their base replaced by the base the target writes.
  const std::regex base("^base:.*$", std::regex::multiline);
  for (const auto& e : fs::recursive_directory_iterator(src / "sweeps")) {
    if (e.path().extension() != ".yaml") continue;
    const std::string text = Slurp(e);
    if (!std::regex_search(text, base)) continue;  // not a sweep (e.g. the paper's numbers)
    const std::string name = fs::relative(e.path(), src / "sweeps").string();
    std::string flat = name;
    std::replace(flat.begin(), flat.end(), '/', '-');
    Put(out / "sweep_spec", flat, std::regex_replace(text, base, "base: base.yaml"));
  }
}

void ModelSeeds(const fs::path& out, Backend& backend) {
  NetworkSpec spec;
  spec.input_dim = 6;  // raw 2 x (2 * 1 + 1) spliced
  spec.output_dim = 3;
  spec.hidden_dims = {4, 4};
  Model model;
  model.network = std::make_unique<Network>(backend, spec);
  InitializeKaldiNnet1(*model.network, 7);
  model.transform.raw_dim = 2;
  model.transform.context = 1;
  model.transform.shift = {0.5f, -1.0f};
  model.transform.scale = {2.0f, 0.25f};
  model.label_counts = {10, 20, 30};
  const fs::path tmp = fs::path(WorkDir()) / "seed-model.bin";
  SaveModel(tmp.string(), model);
  Put(out / "model", "tiny.mavgnnet", Slurp(tmp));
  model.transform.shift.clear();
  model.transform.scale.clear();
  model.label_counts.clear();
  SaveModel(tmp.string(), model);
  Put(out / "model", "tiny-no-cmvn.mavgnnet", Slurp(tmp));
}

void CheckpointSeeds(const fs::path& out, Backend& backend) {
  const fs::path run = fs::path(WorkDir()) / "seed-run";
  const CheckpointDir dir(run.string());
  MakeDirs(dir.Path());
  Matrix params(backend, 1, 64);
  backend.Fill(params.View(), 0.25f);
  dir.WriteTensors(backend, 1, "params", {params.View()});
  const nlohmann::json meta = {{"generation", 1},
                               {"epochs_done", 2},
                               {"progress", nullptr},
                               {"stopped", false},
                               {"schedule", {{"lr", 0.008}, {"epochs_done", 2}}},
                               {"has_best", false},
                               {"run_id", "0123456789abcdef"},
                               {"world_size", 2},
                               {"averager", nlohmann::json::object()},
                               {"cv_best", {10.5, 3.0, 20.0}},
                               {"cv_losses", {0.9, 0.7}},
                               {"compute_total", 1.5},
                               {"frames_total", 1000}};
  const std::string tensors = Slurp(dir.TensorPath(1, "params"));
  Put(out / "checkpoint", "gen1", EncodeFiles({meta.dump(1), tensors}));
  nlohmann::json inside = meta;
  inside["progress"] = {{"minibatches", 7}, {"averagings", 2}};
  Put(out / "checkpoint", "gen1-inside-epoch", EncodeFiles({inside.dump(), tensors}));
}

void LangSeeds(const fs::path& out) {
  const std::vector<std::string> phones = {"sil", "w", "ah", "n", "t", "uw"};
  const LexiconEntries lexicon = {
      {"one", {"w", "ah", "n"}}, {"two", {"t", "uw"}}, {"two", {"t", "ah"}}};
  const Lang lang = BuildLang(phones, lexicon, {{0, 0, 3, 3, 4, 6, 7, 7, 8}});
  const fs::path dir = fs::path(WorkDir()) / "seed-lang";
  WriteLang(dir.string(), lang);
  std::vector<std::string> files;
  for (const char* f : {"phones.txt", "lexicon.txt", "pdfs.txt", "transitions.txt"}) {
    files.push_back(Slurp(dir / f));
  }
  Put(out / "lang_dir", "one-two", EncodeFiles(files));
  files[1] = "# comment\n" + files[1] + "\n\n";
  Put(out / "lang_dir", "one-two-comments", EncodeFiles(files));
}

// decode_test.txt as a run writes it, and as `mavg decode --out` does (a blank line after each
// block), with an utterance without words.
void AlignmentSeeds(const fs::path& out) {
  auto w = [](const char* text) { return SplitWords(text); };
  const std::string blocks[] = {
      FormatAlignment("spk1-utt1", AlignWords(w("one two three four"), w("one too six four"))),
      FormatAlignment("spk1-utt2", AlignWords(w("five"), w("five six seven"))),
      FormatAlignment("spk2-utt1", AlignWords(w(""), w("")))};
  Put(out / "decode_alignments", "run", blocks[0] + blocks[1] + blocks[2]);
  Put(out / "decode_alignments", "decode-out", blocks[0] + "\n" + blocks[1] + "\n");
}

// The fixture's features split among three speakers, with the statistics mavg data cmvn writes
// (utt2spk, cmvn.scp with the archive's file name only, cmvn.ark).
void SpeakerCmvnSeeds(const fs::path& out) {
  const fs::path dir = fs::path(WorkDir()) / "seed-cmvn";
  MakeDirs(dir.string());
  fs::copy_file(std::string(MAVG_TEST_FIXTURES) + "/kaldi/feats.ark", dir / "feats.ark",
                fs::copy_options::overwrite_existing);
  std::string utt2spk, one_speaker;
  int i = 0;
  for (const auto& e : Offsets((dir / "feats.ark").string())) {
    utt2spk += fmt::format("{} spk{}\n", e.key, i++ % 3);
    one_speaker += e.key + " all\n";
  }
  for (const auto& [name, map] :
       {std::pair{"three-speakers", utt2spk}, {"one-speaker", one_speaker}}) {
    WriteFileAtomic((dir / "utt2spk").string(), map);
    WriteSpeakerCmvnStats(dir.string(), /*force=*/true);
    std::string scp;
    for (const auto& e : Offsets((dir / "cmvn.ark").string())) {
      scp += fmt::format("{} cmvn.ark:{}\n", e.key, e.offset);
    }
    Put(out / "speaker_cmvn", name, EncodeFiles({map, scp, Slurp(dir / "cmvn.ark")}));
  }
}

// `strict`: every input must be accepted (seeds are valid inputs, so that fuzzing starts from
// the deep paths).
int Replay(const std::string& name, const std::vector<std::string>& paths, bool strict) {
  const auto it = Targets().find(name);
  MAVG_CHECK(it != Targets().end(), "no fuzz target '{}' (fuzz_tool list)", name);
  int n = 0;
  auto one = [&](const fs::path& p) {
    const std::string bytes = Slurp(p);
    const size_t before = Rejections().size();
    it->second(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    ++n;
    for (size_t i = before; i < Rejections().size(); ++i) {
      fmt::print("  {}: rejected: {}\n", p.filename().string(), Rejections()[i]);
    }
    if (strict && Rejections().size() > before) {
      MAVG_FAIL("{}: a seed of {} was rejected (see above): seeds must be valid inputs", p.string(),
                name);
    }
  };
  for (const auto& p : paths) {
    if (fs::is_directory(p)) {
      std::vector<fs::path> files;
      for (const auto& e : fs::recursive_directory_iterator(p)) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
      std::sort(files.begin(), files.end());
      for (const auto& f : files) one(f);
    } else if (fs::exists(p)) {
      one(p);
    }
  }
  fmt::print("{}: {} inputs replayed, no finding\n", name, n);
  return 0;
}

}  // namespace
}  // namespace mavg::fuzz

int main(int argc, char** argv) {
  using namespace mavg::fuzz;
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (args.size() == 1 && args[0] == "list") {
      for (const auto& [name, fn] : Targets()) fmt::print("{}\n", name);
      return 0;
    }
    if (args.size() == 2 && args[0] == "seeds") {
      mavg::BackendOptions o;
      o.threads = 1;
      const auto backend = mavg::CreateBackend(o);
      const fs::path out(args[1]);
      KaldiSeeds(out);
      YamlSeeds(out);
      ModelSeeds(out, *backend);
      CheckpointSeeds(out, *backend);
      LangSeeds(out);
      SpeakerCmvnSeeds(out);
      AlignmentSeeds(out);
      for (const auto& [name, fn] : Targets()) {
        MAVG_CHECK(fs::is_directory(out / name), "no seeds written for target '{}'", name);
      }
      return 0;
    }
    if (args.size() >= 2 && (args[0] == "replay" || args[0] == "replay-valid")) {
      return Replay(args[1], {args.begin() + 2, args.end()}, args[0] == "replay-valid");
    }
  } catch (const mavg::Error& e) {
    fmt::print(stderr, "fuzz_tool: error: {}\n", e.what());
    return 1;
  }
  fmt::print(stderr, "usage: fuzz_tool list | seeds OUT_DIR | replay[-valid] TARGET PATH...\n");
  return 2;
}
