#include "engine/data/fmnist.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <filesystem>

#include "engine/core/error.h"
#include "engine/data/idx.h"
#include "engine/data/kaldi_file.h"
#include "engine/data/kaldi_io.h"

namespace mavg {
namespace {

namespace fs = std::filesystem;

constexpr std::array<const char*, 10> kClassNames = {
    "tshirt_top", "trouser", "pullover", "dress", "coat",
    "sandal",     "shirt",   "sneaker",  "bag",   "ankle_boot"};

// SplitMix64 (Steele, Lea & Flood 2014): tiny, and the same sequence on every platform and
// standard library, unlike std::shuffle and the std distributions.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n) without modulo bias (rejects the top partial block).
  uint64_t Below(uint64_t n) {
    const uint64_t threshold = (0 - n) % n;  // 2^64 mod n
    uint64_t r;
    do {
      r = Next();
    } while (r < threshold);
    return r % n;
  }

 private:
  uint64_t state_;
};

struct ImageSet {
  IdxArray images;  // [count x rows x cols]
  IdxArray labels;  // [count]
  int64_t count = 0;
  int64_t dim = 0;  // rows * cols
};

ImageSet LoadImageSet(const fs::path& src_dir, const char* images_name, const char* labels_name) {
  const std::string images_path = (src_dir / images_name).string();
  const std::string labels_path = (src_dir / labels_name).string();
  ImageSet set;
  set.images = ReadIdx(images_path);
  set.labels = ReadIdx(labels_path);
  MAVG_CHECK(set.images.dims.size() == 3, "{}: expected images (3 dimensions), found {}",
             images_path, set.images.dims.size());
  MAVG_CHECK(set.labels.dims.size() == 1, "{}: expected labels (1 dimension), found {}",
             labels_path, set.labels.dims.size());
  set.count = set.images.dims[0];
  set.dim = int64_t{set.images.dims[1]} * set.images.dims[2];
  MAVG_CHECK(set.dim > 0, "{}: empty images", images_path);
  MAVG_CHECK(set.labels.dims[0] == set.count, "{}: {} labels for the {} images of {}", labels_path,
             set.labels.dims[0], set.count, images_path);
  for (int64_t i = 0; i < set.count; ++i) {
    MAVG_CHECK(set.labels.data[i] < kClassNames.size(),
               "{}: label {} of image {} is not a class id (0-9)", labels_path, set.labels.data[i],
               i);
  }
  return set;
}

// Writes one data dir into `dir`; feats.scp names `final_dir`/feats.ark.
void WriteDataDir(const fs::path& dir, const fs::path& final_dir, const std::string& prefix,
                  const ImageSet& set, const std::vector<int64_t>& indices, int width) {
  std::error_code ec;
  fs::create_directory(dir, ec);
  MAVG_CHECK(!ec, "{}: cannot create directory ({})", dir.string(), ec.message());
  kaldi::MatrixArchiveWriter feats((dir / "feats.ark").string(), (dir / "feats.scp").string(),
                                   (final_dir / "feats.ark").string());
  kaldi::Int32VectorArchiveWriter ali((dir / "ali.ark").string());
  kaldi::OutputFile utt2spk((dir / "utt2spk").string());
  kaldi::OutputFile spk2utt((dir / "spk2utt").string());
  kaldi::OutputFile text((dir / "text").string());
  std::vector<float> frame(static_cast<size_t>(set.dim));
  for (int64_t index : indices) {
    const std::string key = fmt::format("{}-{:0{}}", prefix, index, width);
    const uint8_t* pixels = set.images.data.data() + index * set.dim;
    for (int64_t d = 0; d < set.dim; ++d) frame[d] = static_cast<float>(pixels[d]) / 255.0f;
    feats.Write(key, frame.data(), 1, set.dim);
    const int32_t label = set.labels.data[index];
    ali.Write(key, std::span<const int32_t>(&label, 1));
    const std::string pair = fmt::format("{} {}\n", key, key);
    utt2spk.Write(pair);
    spk2utt.Write(pair);
    text.Write(fmt::format("{} {}\n", key, kClassNames[label]));
  }
  feats.Close();
  ali.Close();
  utt2spk.Close();
  spk2utt.Close();
  text.Close();
}

std::vector<int64_t> KeepFirst(std::vector<int64_t> indices, int64_t limit) {
  if (limit > 0 && static_cast<int64_t>(indices.size()) > limit) indices.resize(limit);
  return indices;
}

}  // namespace

const char* FashionMnistClassName(int label) {
  MAVG_CHECK(label >= 0 && label < static_cast<int>(kClassNames.size()),
             "Fashion-MNIST class id {} is not in 0-9", label);
  return kClassNames[label];
}

void ImportFashionMnist(const std::string& src_dir, const std::string& out_dir,
                        const FmnistImportOptions& options) {
  MAVG_CHECK(options.dev_fraction >= 0 && options.dev_fraction < 1,
             "fmnist: dev_fraction {} is not in [0, 1)", options.dev_fraction);
  MAVG_CHECK(options.train_limit >= 0 && options.dev_limit >= 0 && options.test_limit >= 0,
             "fmnist: negative limit");
  std::string out_name = out_dir;
  while (out_name.size() > 1 && out_name.back() == '/') out_name.pop_back();
  MAVG_CHECK(!out_name.empty(), "fmnist: empty output directory name");
  const fs::path out_path(out_name);
  std::error_code ec;
  MAVG_CHECK(options.force || !fs::exists(out_path, ec),
             "{}: already exists (use --force to replace it)", out_name);

  const fs::path src(src_dir);
  const ImageSet train =
      LoadImageSet(src, "train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz");
  const ImageSet test = LoadImageSet(src, "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz");
  MAVG_CHECK(train.dim == test.dim, "{}: train images have {} pixels, test images {}", src_dir,
             train.dim, test.dim);

  // The dev hold-out: the first num_dev entries of a seeded Fisher-Yates permutation.
  const int64_t num_dev = std::llround(static_cast<double>(train.count) * options.dev_fraction);
  MAVG_CHECK(num_dev >= 1 && num_dev < train.count,
             "{}: dev_fraction {} of {} training images leaves an empty dev or train set", src_dir,
             options.dev_fraction, train.count);
  std::vector<int64_t> permutation(static_cast<size_t>(train.count));
  for (int64_t i = 0; i < train.count; ++i) permutation[i] = i;
  SplitMix64 rng(options.seed);
  for (int64_t i = train.count - 1; i > 0; --i) {
    std::swap(permutation[i], permutation[rng.Below(static_cast<uint64_t>(i) + 1)]);
  }
  std::vector<bool> is_dev(static_cast<size_t>(train.count), false);
  for (int64_t i = 0; i < num_dev; ++i) is_dev[permutation[i]] = true;
  std::vector<int64_t> train_indices, dev_indices, test_indices;
  for (int64_t i = 0; i < train.count; ++i) (is_dev[i] ? dev_indices : train_indices).push_back(i);
  for (int64_t i = 0; i < test.count; ++i) test_indices.push_back(i);
  train_indices = KeepFirst(std::move(train_indices), options.train_limit);
  dev_indices = KeepFirst(std::move(dev_indices), options.dev_limit);
  test_indices = KeepFirst(std::move(test_indices), options.test_limit);
  MAVG_CHECK(!test_indices.empty(), "{}: no test images", src_dir);
  const int width = std::max<int>(
      5, static_cast<int>(fmt::formatted_size("{}", std::max(train.count, test.count) - 1)));

  // Write everything beside out_dir, then rename into place.
  const fs::path final_path = fs::absolute(out_path, ec).lexically_normal();
  MAVG_CHECK(!ec, "{}: cannot make an absolute path ({})", out_name, ec.message());
  if (final_path.has_parent_path()) {
    fs::create_directories(final_path.parent_path(), ec);
    MAVG_CHECK(!ec, "{}: cannot create directory ({})", final_path.parent_path().string(),
               ec.message());
  }
  const fs::path tmp_path = out_name + fmt::format(".tmp-{}", ::getpid());
  const fs::path old_path = out_name + fmt::format(".old-{}", ::getpid());
  fs::remove_all(tmp_path, ec);
  fs::create_directory(tmp_path, ec);
  MAVG_CHECK(!ec, "{}: cannot create directory ({})", tmp_path.string(), ec.message());
  try {
    WriteDataDir(tmp_path / "train", final_path / "train", "fmnist-train", train, train_indices,
                 width);
    WriteDataDir(tmp_path / "dev", final_path / "dev", "fmnist-dev", train, dev_indices, width);
    WriteDataDir(tmp_path / "test", final_path / "test", "fmnist-test", test, test_indices, width);
    const bool replace = fs::exists(out_path, ec);
    MAVG_CHECK(!replace || options.force, "{}: already exists (use --force to replace it)",
               out_name);
    if (replace) {
      fs::rename(out_path, old_path, ec);
      MAVG_CHECK(!ec, "{}: cannot move the old directory aside ({})", out_name, ec.message());
    }
    fs::rename(tmp_path, out_path, ec);
    if (ec) {
      const std::string message = ec.message();
      if (replace) fs::rename(old_path, out_path, ec);
      MAVG_FAIL("{}: cannot rename {} into place ({})", out_name, tmp_path.string(), message);
    }
    if (replace) fs::remove_all(old_path, ec);
  } catch (...) {
    fs::remove_all(tmp_path, ec);
    throw;
  }
  spdlog::info("[data] fmnist: {} train, {} dev, {} test images ({} pixels) in {}",
               train_indices.size(), dev_indices.size(), test_indices.size(), train.dim, out_name);
}

}  // namespace mavg
