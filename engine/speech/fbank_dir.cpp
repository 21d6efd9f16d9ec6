#include "engine/speech/fbank_dir.h"

#include <condition_variable>
#include <exception>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_set>
#include <utility>
#include <vector>

#include "engine/core/error.h"
#include "engine/core/progress.h"
#include "engine/core/timer.h"
#include "engine/data/kaldi_io.h"
#include "engine/speech/wav.h"

namespace mavg {
namespace {

namespace fs = std::filesystem;

struct Utterance {
  std::string id;
  std::string wav_path;  // resolved
};

struct Result {
  kaldi::HostMatrix feats;
  int64_t num_samples = 0;
};

std::vector<Utterance> ReadWavScp(const std::string& data_dir) {
  const std::string scp = (fs::path(data_dir) / "wav.scp").string();
  MAVG_CHECK(fs::exists(scp), "{}: not found (a data dir needs wav.scp to compute features)", scp);
  std::vector<Utterance> utts;
  std::unordered_set<std::string> seen;
  for (auto& [id, spec] : kaldi::ReadScp(scp)) {
    MAVG_CHECK(seen.insert(id).second, "{}: utterance '{}' appears twice", scp, id);
    MAVG_CHECK(spec.back() != '|',
               "{}: utterance '{}': piped commands are not supported ('{}'); "
               "convert to wav files first",
               scp, id, spec);
    fs::path path(spec);
    if (path.is_relative() && !fs::exists(path) && fs::exists(fs::path(data_dir) / path)) {
      path = fs::path(data_dir) / path;
    }
    MAVG_CHECK(fs::exists(path),
               "{}: utterance '{}': wav file '{}' not found (looked relative to "
               "the working directory and to {})",
               scp, id, spec, data_dir);
    utts.push_back({id, path.string()});
  }
  MAVG_CHECK(!utts.empty(), "{}: no utterances", scp);
  return utts;
}

Result ComputeOne(const Utterance& utt, const FbankComputer& fbank) {
  Waveform wave;
  try {
    wave = ReadWav(utt.wav_path);
  } catch (const Error& e) {
    MAVG_FAIL("utterance '{}': {}", utt.id, e.what());
  }
  const FbankOptions& opts = fbank.Options();
  MAVG_CHECK(wave.sample_rate == opts.sample_rate,
             "utterance '{}': {}: sample rate {} Hz, features expect {} Hz (resample first)",
             utt.id, utt.wav_path, wave.sample_rate, opts.sample_rate);
  MAVG_CHECK(static_cast<int64_t>(wave.samples.size()) >= fbank.FrameLength(),
             "utterance '{}': {}: {} samples, shorter than one frame ({} samples)", utt.id,
             utt.wav_path, wave.samples.size(), fbank.FrameLength());
  for (float& x : wave.samples) x *= 32768.0f;  // int16 scale, as Kaldi reads WAV files
  Result result;
  result.num_samples = static_cast<int64_t>(wave.samples.size());
  result.feats = fbank.Compute(wave.samples);
  return result;
}

// Workers take utterances in order and park their results in `pending`; the calling thread
// writes them in order. Workers stay at most kWindowPerThread * threads utterances ahead of the
// writer, which bounds the memory held by finished but unwritten features.
class OrderedPipeline {
 public:
  static constexpr size_t kWindowPerThread = 4;

  OrderedPipeline(const std::vector<Utterance>& utts, const FbankComputer& fbank, int threads)
      : utts_(utts),
        fbank_(fbank),
        window_(kWindowPerThread * static_cast<size_t>(threads)),
        pending_(utts.size()) {
    workers_.reserve(static_cast<size_t>(threads));
    try {
      for (int t = 0; t < threads; ++t) workers_.emplace_back([this] { Work(); });
    } catch (...) {  // could not start a thread: stop the ones running before unwinding
      StopAndJoin();
      throw;
    }
  }

  ~OrderedPipeline() { StopAndJoin(); }

  // Blocks until utterance i (asked for in increasing order) is done. Throws the error of the
  // first failing utterance in scp order, once every utterance before it has been taken.
  // (Utterances are taken in order, so those before a failure were all started and end.)
  Result Take(size_t i) {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock,
               [&] { return pending_[i].has_value() || (error_ != nullptr && error_index_ <= i); });
    if (!pending_[i].has_value()) std::rethrow_exception(error_);
    Result result = std::move(*pending_[i]);
    pending_[i].reset();
    written_ = i + 1;
    lock.unlock();
    can_take_.notify_all();
    return result;
  }

 private:
  void StopAndJoin() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    can_take_.notify_all();
    for (std::thread& t : workers_) t.join();
    workers_.clear();
  }

  void Work() {
    for (;;) {
      size_t i = 0;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        can_take_.wait(
            lock, [&] { return stop_ || next_ >= utts_.size() || next_ < written_ + window_; });
        if (stop_ || next_ >= utts_.size()) return;
        i = next_++;
      }
      try {
        Result result = ComputeOne(utts_[i], fbank_);
        std::lock_guard<std::mutex> lock(mutex_);
        pending_[i] = std::move(result);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex_);
        // Keep the error of the earliest failing utterance seen, and stop taking new ones.
        if (error_ == nullptr || i < error_index_) {
          error_ = std::current_exception();
          error_index_ = i;
        }
        stop_ = true;
      }
      done_.notify_all();
      can_take_.notify_all();
    }
  }

  const std::vector<Utterance>& utts_;  // not owned
  const FbankComputer& fbank_;          // not owned
  const size_t window_;

  std::mutex mutex_;
  std::condition_variable can_take_;            // a worker may take the next utterance
  std::condition_variable done_;                // a result (or an error) arrived
  std::vector<std::optional<Result>> pending_;  // [utterance], set until written
  size_t next_ = 0;                             // next utterance to take
  size_t written_ = 0;                          // utterances handed to the writer
  bool stop_ = false;
  std::exception_ptr error_;
  size_t error_index_ = 0;
  std::vector<std::thread> workers_;  // last: started once everything above exists
};

}  // namespace

FbankDirStats ComputeFbankForDataDir(const std::string& data_dir, const FbankOptions& opts,
                                     int threads, const std::string& progress_label) {
  MAVG_CHECK(threads >= 1, "fbank: threads must be >= 1, got {}", threads);
  Timer timer;
  const FbankComputer fbank(opts);
  const std::vector<Utterance> utts = ReadWavScp(data_dir);
  const fs::path dir = fs::absolute(data_dir).lexically_normal();
  const std::string ark = (dir / "feats.ark").string();
  const std::string scp = (dir / "feats.scp").string();

  FbankDirStats stats;
  kaldi::MatrixArchiveWriter writer(ark, scp, ark);
  {
    Progress bar(progress_label, static_cast<int64_t>(utts.size()), !progress_label.empty(),
                 "utterances");
    OrderedPipeline pipeline(utts, fbank, std::min(threads, static_cast<int>(utts.size())));
    for (size_t i = 0; i < utts.size(); ++i) {
      bar.Update(static_cast<int64_t>(i));
      Result result = pipeline.Take(i);
      writer.Write(utts[i].id, result.feats);
      stats.utterances += 1;
      stats.frames += result.feats.rows;
      stats.audio_seconds += static_cast<double>(result.num_samples) / opts.sample_rate;
    }
  }
  writer.Close();
  stats.compute_seconds = timer.Seconds();
  return stats;
}

}  // namespace mavg
