#pragma once
// <run>/result.json: what a run says of itself when it stops (completed, failed, diverged,
// collapsed, preempted). The trainer fills it (train/trainer.cpp, train/decode_eval.cpp;
// train/train.cpp for a failure), the store reads it (store/settle.h settles the status from
// it, the tables results and env take its values), `mavg run metric` refuses its names to
// outside metrics; all through kRunResultFields. Every field is optional: a failed run writes
// four, and files of earlier builds lack later ones.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/records/field_table.h"

namespace mavg {

inline constexpr const char* kResultFileName = "result.json";

struct RunResult {
  std::optional<RunState> status;     // absent: failed (the run did not say it ended well)
  std::optional<std::string> error;   // one line: why it failed
  std::optional<std::string> run_id;  // the config's identity (config/schema.h RunId)
  // What the training did, over every attempt (a run resumed from its checkpoint adds the
  // earlier attempts' times, as far as their last checkpoint). Times are measured unless their
  // name says projected (records::Timing, in the table).
  std::optional<int64_t> epochs;    // epochs done (accepted and rejected)
  std::optional<int64_t> attempts;  // the processes that ran it: 1 + resumes from a checkpoint
  std::optional<double> wall_s;     // the whole run: setup, pretraining, epochs, test, decode
  std::optional<double> train_s;    // the epochs' training time: wall_s - cv_s summed over epochs
  std::optional<double> projected_train_s;  // simulated workers: projected_wall_s summed
  std::optional<double> compute_s;          // the slowest worker's compute time, summed over epochs
  std::optional<double> io_s;               // reading the data
  std::optional<int64_t> frames;            // trained, all workers, all epochs
  std::optional<int64_t> comm_bytes;        // per worker, all epochs: what its combines sent
  std::optional<int64_t> comm_bytes_received;    // per worker, all epochs: what they brought it
  std::optional<double> measured_frames_per_s;   // frames / train_s
  std::optional<double> projected_frames_per_s;  // simulated workers: frames / projected_train_s
  // Written by earlier builds only: frames / compute_s, a projection (N simulated workers as if
  // each had a device) that its name does not show; reports label it.
  std::optional<double> frames_per_s;
  std::optional<int64_t> num_params;
  std::optional<int64_t> world_size;        // workers N
  std::optional<std::string> mode;          // single | simulated | mpi
  std::optional<std::string> blas_kernels;  // the GEMM kernels (timings compare on equal ones)
  std::optional<std::string> host;          // environment: where it ran
  std::optional<std::string> finished;      // environment: ISO-8601 UTC
  std::optional<nlohmann::json> build;      // environment: BuildInfo (below)
  // The model: the last accepted epoch's CV statistics, the test set's.
  std::optional<double> cv_loss, cv_acc, test_loss, test_acc;
  std::optional<int64_t> test_frames;
  // How a run ended that did not complete.
  std::optional<nlohmann::json> diverged_at;  // DivergedAt (below)
  std::optional<nlohmann::json> collapse;     // the health check's values (train/health.h) + reason
  std::optional<int64_t> signal;              // preempted: the stop signal ...
  std::optional<int64_t> epoch;               // ... and the epoch it stopped in
  // model.init rbm: the pretrained stack.
  std::optional<double> pretrain_s;
  std::optional<bool> pretrain_cached;
  std::optional<std::string> pretrain_key;
  // Speech data with a lang dir: decoding the test set (settings chosen on dev).
  std::optional<double> wer, ser, wer_dev;  // percent
  std::optional<int64_t> wer_sub, wer_del, wer_ins, wer_ref_words;
  std::optional<double> decode_acoustic_scale, decode_word_penalty;
  std::optional<int64_t> decode_no_path;  // test utterances decoded to no words: no surviving
                                          // path (or no complete one, decode.allow_partial off)
  std::optional<int64_t> decode_partial;  // test utterances decoded to their best partial path
  std::optional<double> decode_rtf;       // search CPU time / audio time, per core
};

inline constexpr records::Field<RunResult> kRunResultFields[] = {
    {"status", &RunResult::status},
    {"error", &RunResult::error},
    {"run_id", &RunResult::run_id},
    {"epochs", &RunResult::epochs},
    {"attempts", &RunResult::attempts},
    {.name = "wall_s", .member = &RunResult::wall_s, .timing = records::Timing::kMeasured},
    {.name = "train_s", .member = &RunResult::train_s, .timing = records::Timing::kMeasured},
    {.name = "projected_train_s",
     .member = &RunResult::projected_train_s,
     .timing = records::Timing::kProjected},
    {.name = "compute_s", .member = &RunResult::compute_s, .timing = records::Timing::kMeasured},
    {.name = "io_s", .member = &RunResult::io_s, .timing = records::Timing::kMeasured},
    {"frames", &RunResult::frames},
    {"comm_bytes", &RunResult::comm_bytes},
    {"comm_bytes_received", &RunResult::comm_bytes_received},
    {.name = "measured_frames_per_s",
     .member = &RunResult::measured_frames_per_s,
     .timing = records::Timing::kMeasured},
    {.name = "projected_frames_per_s",
     .member = &RunResult::projected_frames_per_s,
     .timing = records::Timing::kProjected},
    {.name = "frames_per_s",
     .member = &RunResult::frames_per_s,
     .timing = records::Timing::kEarlierProjection},
    {"num_params", &RunResult::num_params},
    {"world_size", &RunResult::world_size},
    {"mode", &RunResult::mode},
    {"blas_kernels", &RunResult::blas_kernels},
    {"host", &RunResult::host, records::Column::kNone, {}, /*environment=*/true},
    {"finished", &RunResult::finished, records::Column::kNone, {}, /*environment=*/true},
    {"build", &RunResult::build, records::Column::kNone, {}, /*environment=*/true},
    {"cv_loss", &RunResult::cv_loss},
    {"cv_acc", &RunResult::cv_acc},
    {"test_loss", &RunResult::test_loss},
    {"test_acc", &RunResult::test_acc},
    {"test_frames", &RunResult::test_frames},
    {"diverged_at", &RunResult::diverged_at, records::Column::kNone, {}, /*environment=*/true},
    {"collapse", &RunResult::collapse, records::Column::kNone, {}, /*environment=*/true},
    {"signal", &RunResult::signal},
    {"epoch", &RunResult::epoch},
    {.name = "pretrain_s", .member = &RunResult::pretrain_s, .timing = records::Timing::kMeasured},
    {"pretrain_cached", &RunResult::pretrain_cached},
    {"pretrain_key", &RunResult::pretrain_key},
    {"wer", &RunResult::wer},
    {"ser", &RunResult::ser},
    {"wer_dev", &RunResult::wer_dev},
    {"wer_sub", &RunResult::wer_sub},
    {"wer_del", &RunResult::wer_del},
    {"wer_ins", &RunResult::wer_ins},
    {"wer_ref_words", &RunResult::wer_ref_words},
    {"decode_acoustic_scale", &RunResult::decode_acoustic_scale},
    {"decode_word_penalty", &RunResult::decode_word_penalty},
    {"decode_no_path", &RunResult::decode_no_path},
    {"decode_partial", &RunResult::decode_partial},
    {.name = "decode_rtf", .member = &RunResult::decode_rtf, .timing = records::Timing::kMeasured},
};
static_assert(records::UniqueNames(kRunResultFields),
              "kRunResultFields: one unique name per field");
static_assert(records::NamesSayTiming(kRunResultFields),
              "kRunResultFields: a projection's name starts with projected_, no other's does");

// result.json's "build": the build and device a run ran on.
struct BuildInfo {
  std::optional<std::string> git_commit, code_version, build_type, compiler;
  std::optional<bool> with_cuda;
  std::optional<std::string> device, communicator;
  std::optional<std::string> blas_kernels_by;  // cpu: openblas | mavg | user
  std::optional<std::string> cpu;              // cpu: model (best ISA)
};
inline constexpr records::Field<BuildInfo> kBuildInfoFields[] = {
    {"git_commit", &BuildInfo::git_commit},
    {"code_version", &BuildInfo::code_version},
    {"build_type", &BuildInfo::build_type},
    {"compiler", &BuildInfo::compiler},
    {"with_cuda", &BuildInfo::with_cuda},
    {"device", &BuildInfo::device},
    {"communicator", &BuildInfo::communicator},
    {"blas_kernels_by", &BuildInfo::blas_kernels_by},
    {"cpu", &BuildInfo::cpu},
};
static_assert(records::UniqueNames(kBuildInfoFields),
              "kBuildInfoFields: one unique name per field");

// result.json's "diverged_at": where the first non-finite loss was seen.
struct DivergedAt {
  std::optional<int64_t> epoch, minibatch, averaging;
  std::optional<double> lr;  // per-worker
};
inline constexpr records::Field<DivergedAt> kDivergedAtFields[] = {
    {"epoch", &DivergedAt::epoch},
    {"minibatch", &DivergedAt::minibatch},
    {"averaging", &DivergedAt::averaging},
    {"lr", &DivergedAt::lr},
};
static_assert(records::UniqueNames(kDivergedAtFields), "kDivergedAtFields: one unique name");

// result.json's "collapse": the health check that failed (train/health.h), the values and
// thresholds it compared, and why.
struct CollapseNote {
  std::optional<std::string> check;   // chance | regressed
  std::optional<std::string> reason;  // one line
  std::optional<double> best_cv_loss, final_cv_loss, first_cv_loss, input_free_loss;
  std::optional<double> chance_fraction, growth;  // the thresholds (schedule.collapse)
};
inline constexpr records::Field<CollapseNote> kCollapseNoteFields[] = {
    {"check", &CollapseNote::check},
    {"reason", &CollapseNote::reason},
    {"best_cv_loss", &CollapseNote::best_cv_loss},
    {"final_cv_loss", &CollapseNote::final_cv_loss},
    {"first_cv_loss", &CollapseNote::first_cv_loss},
    {"input_free_loss", &CollapseNote::input_free_loss},
    {"chance_fraction", &CollapseNote::chance_fraction},
    {"growth", &CollapseNote::growth},
};
static_assert(records::UniqueNames(kCollapseNoteFields), "kCollapseNoteFields: one unique name");

nlohmann::json ToJson(const RunResult& result);
// Every field `part` has set replaces `result`'s (the decode's fields, a checkpoint's).
void Update(RunResult& result, const RunResult& part);
// Throws mavg::Error naming `where` and the field (wrong type, a status that is not a RunState).
RunResult RunResultFromJson(const nlohmann::json& json, std::string_view where);
nlohmann::json ToJson(const BuildInfo& build);
nlohmann::json ToJson(const DivergedAt& at);
nlohmann::json ToJson(const CollapseNote& note);
// The parts of a result, read leniently: what a part holds of the wrong type reads as absent
// (they only word a reason or a column; the result stays usable).
BuildInfo BuildOf(const RunResult& result);
DivergedAt DivergedAtOf(const RunResult& result);
CollapseNote CollapseOf(const RunResult& result);

std::string RunResultPath(const std::string& run_dir);

// One value a result gives the store: table results (what the run measured) or env (where and
// how it ran; an object's entries as "key.sub" text).
struct ResultEntry {
  bool environment = false;
  std::string key;
  records::Cell value;
};
// The entries of a result.json: its fields (from the table), then keys of other builds outside
// the table (kept as they are: scalars as results, objects as environment), in key order.
std::vector<ResultEntry> ResultEntries(const nlohmann::json& file);

// The key of a result field in result.json and the store's tables results / env, e.g.
// ResultKey(&RunResult::test_acc); BuildKey the same for the environment's "build.<field>".
template <class T>
std::string ResultKey(T RunResult::*member) {
  return std::string(records::NameOf(kRunResultFields, member));
}
template <class T>
std::string BuildKey(T BuildInfo::*member) {
  return ResultKey(&RunResult::build) + "." +
         std::string(records::NameOf(kBuildInfoFields, member));
}

// The name under which reports show a result key (records::ShownName): the earlier builds'
// frames_per_s labelled as their projection, every other key as it is.
std::string ShownResultName(std::string_view key);

// The names of the results mavg writes (the table's): an outside metric never takes one.
std::vector<std::string_view> RunResultNames();

}  // namespace mavg
