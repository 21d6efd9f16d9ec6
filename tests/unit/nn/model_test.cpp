// Initialisation statistics, the native model file (round trip and corruption) and the Kaldi
// nnet1 export (parsed back here and evaluated with host arithmetic on raw features).
#include "engine/nn/model.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include <zlib.h>

#include "engine/core/blob_file.h"
#include "engine/core/files.h"
#include "engine/nn/init.h"
#include "engine/nn/kaldi_nnet1.h"
#include "tests/testing/test_util.h"

namespace mavg {
namespace {

using testing::HostMat;
using testing::RandomHost;
using testing::ToDevice;
using testing::ToHost;

void FlipFirstDigitAfter(std::string& bytes, const std::string& marker) {
  const size_t at = bytes.find(marker);
  ASSERT_NE(at, std::string::npos);
  const size_t digit = bytes.find_first_of("0123456789", at);
  bytes[digit] = bytes[digit] == '1' ? '2' : '1';
}

template <typename T>
void Append(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof(T));
}

uint32_t Crc32(const char* data, size_t size) {
  return static_cast<uint32_t>(
      crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(data), static_cast<uInt>(size)));
}

// A model file laid out byte by byte as builds before the header's own checksum key wrote it:
// no "header_crc" key, and optionally the header's CRC-32 as a u32 after the parameters'.
std::string HandWrittenBlob(const BlobFile& blob, bool trailing_header_crc) {
  const std::string header = blob.header.dump();
  std::string out = "MAVGNNET";
  Append<uint32_t>(out, blob.version);
  Append<uint64_t>(out, header.size());
  out += header;
  const uint32_t header_crc = Crc32(out.data(), out.size());
  Append<uint64_t>(out, blob.data.size());
  const auto* floats = reinterpret_cast<const char*>(blob.data.data());
  out.append(floats, blob.data.size() * sizeof(float));
  Append<uint32_t>(out, Crc32(floats, blob.data.size() * sizeof(float)));
  if (trailing_header_crc) Append<uint32_t>(out, header_crc);
  return out;
}

TEST(Init, KaldiNnet1Statistics) {
  auto backend = testing::MakeBackend("cpu");
  NetworkSpec spec{440, 300, {512, 512}, LayerKind::kSigmoid};
  Network net(*backend, spec);
  InitializeKaldiNnet1(net, 5);
  // Expected stddevs from make_nnet_proto.py: 0.1 * 35 * sqrt(2/(in+out)), input x sqrt(1/12).
  const double expected[3] = {0.1 * 35 * std::sqrt(2.0 / (440 + 512)) * std::sqrt(1.0 / 12),
                              0.1 * 35 * std::sqrt(2.0 / 1024), 0.1 * 35 * std::sqrt(2.0 / 812)};
  for (int k = 0; k < 3; ++k) {
    EXPECT_NEAR(KaldiInitStddev(spec, k), expected[k], 1e-12);
    HostMat w = ToHost(*backend, net.Affine(k).Weights());
    double s = 0, s2 = 0;
    for (float v : w.v) s += v, s2 += static_cast<double>(v) * v;
    const double n = static_cast<double>(w.v.size());
    EXPECT_NEAR(s / n, 0.0, 0.05 * expected[k]);
    EXPECT_NEAR(std::sqrt(s2 / n), expected[k], 0.03 * expected[k]) << "layer " << k;
    HostMat b = ToHost(*backend, net.Affine(k).Bias());
    if (k < 2) {
      double mean = 0;
      for (float v : b.v) {
        EXPECT_GE(v, -4.0f);
        EXPECT_LE(v, 0.0f);
        mean += v / static_cast<double>(b.v.size());
      }
      EXPECT_NEAR(mean, -2.0, 0.2);
      EXPECT_EQ(net.Affine(k).BiasLearnRateCoef(), 1.0f);
    } else {
      for (float v : b.v) EXPECT_EQ(v, 0.0f);
      EXPECT_EQ(net.Affine(k).BiasLearnRateCoef(), 0.1f);
    }
  }
  // The paper network's output layer: ~0.0475 (docs/algorithms.md §5).
  NetworkSpec paper{440, 8806, {2048, 2048, 2048, 2048, 2048, 2048}, LayerKind::kSigmoid};
  EXPECT_NEAR(KaldiInitStddev(paper, 6), 0.0475, 5e-4);
  EXPECT_NEAR(KaldiInitStddev(paper, 0), 0.0286, 5e-4);
  EXPECT_NEAR(KaldiInitStddev(paper, 1), 0.0773, 5e-4);
}

// He and Glorot against their closed forms, on the drawn weights; biases 0 whatever the
// activation (nnet1's negative sigmoid biases would silence relu units).
TEST(Init, HeAndGlorotStatistics) {
  auto backend = testing::MakeBackend("cpu");
  NetworkSpec spec{784, 10, {512, 512}, LayerKind::kRelu};
  const double he[3] = {std::sqrt(2.0 / 784), std::sqrt(2.0 / 512), std::sqrt(1.0 / 512)};
  const double glorot[3] = {std::sqrt(2.0 / (784 + 512)), std::sqrt(2.0 / 1024),
                            std::sqrt(2.0 / 522)};
  for (InitScheme scheme : {InitScheme::kHe, InitScheme::kGlorot}) {
    const double* expected = scheme == InitScheme::kHe ? he : glorot;
    Network net(*backend, spec);
    InitializeNetwork(net, scheme, 5);
    for (int k = 0; k < 3; ++k) {
      EXPECT_NEAR(InitStddev(spec, scheme, k), expected[k], 1e-12);
      const HostMat w = ToHost(*backend, net.Affine(k).Weights());
      double s2 = 0;
      for (float v : w.v) s2 += static_cast<double>(v) * v;
      EXPECT_NEAR(std::sqrt(s2 / static_cast<double>(w.v.size())), expected[k], 0.03 * expected[k])
          << "layer " << k;
      for (float v : ToHost(*backend, net.Affine(k).Bias()).v) EXPECT_EQ(v, 0.0f);
    }
  }
  EXPECT_EQ(ParseInitScheme("he"), InitScheme::kHe);
  EXPECT_THROW(ParseInitScheme("xavier"), Error);
}

TEST(Init, SameSeedSameParametersDifferentSeedDifferent) {
  auto backend = testing::MakeBackend("cpu");
  NetworkSpec spec{8, 3, {5}, LayerKind::kTanh};
  Network a(*backend, spec), b(*backend, spec), c(*backend, spec);
  InitializeKaldiNnet1(a, 1);
  InitializeKaldiNnet1(b, 1);
  InitializeKaldiNnet1(c, 2);
  EXPECT_EQ(ToHost(*backend, a.Params()).v, ToHost(*backend, b.Params()).v);
  EXPECT_NE(ToHost(*backend, a.Params()).v, ToHost(*backend, c.Params()).v);
  // tanh (and relu) hidden biases start at 0: U[-4,0] would saturate them.
  for (float v : ToHost(*backend, a.Affine(0).Bias()).v) EXPECT_EQ(v, 0.0f);
}

Model MakeModel(Backend& backend) {
  Model m;
  m.transform.raw_dim = 3;
  m.transform.context = 1;
  m.transform.shift = {-0.5f, 0.25f, 1.0f};
  m.transform.scale = {2.0f, 0.5f, 1.5f};
  m.label_counts = {10, 20, 30, 40};
  m.network = std::make_unique<Network>(backend, NetworkSpec{9, 4, {6}, LayerKind::kSigmoid});
  InitializeKaldiNnet1(*m.network, 3);
  HostMat p = RandomHost(1, m.network->NumParams(), 4);
  backend.CopyFromHost(p.v.data(), m.network->Params());
  return m;
}

TEST(ModelFile, RoundTripIsExact) {
  auto backend = testing::MakeBackend("cpu");
  testing::TempDir tmp;
  Model m = MakeModel(*backend);
  SaveModel(tmp.File("m.bin"), m);
  Model r = LoadModel(tmp.File("m.bin"), *backend);
  EXPECT_EQ(r.network->Spec(), m.network->Spec());
  EXPECT_EQ(ToHost(*backend, r.network->Params()).v, ToHost(*backend, m.network->Params()).v);
  EXPECT_EQ(r.transform.shift, m.transform.shift);
  EXPECT_EQ(r.transform.scale, m.transform.scale);
  EXPECT_EQ(r.transform.context, 1);
  EXPECT_EQ(r.label_counts, m.label_counts);
  EXPECT_EQ(r.network->Affine(1).BiasLearnRateCoef(), 0.1f);
  EXPECT_TRUE(r.transform.pipeline.IsIdentity());
  // Without a per-dir pipeline the file stays version 1, which earlier builds read.
  EXPECT_EQ(
      ReadBlobFile(tmp.File("m.bin"), "MAVGNNET", kModelFormatVersion, "model file", 1).version,
      1u);
}

void ExpectLoadError(const std::string& path, Backend& backend, const std::string& needle) {
  try {
    LoadModel(path, backend);
    FAIL() << "expected an error mentioning " << needle;
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find(needle), std::string::npos) << msg;
  }
}

TEST(ModelFile, PipelineRoundTripsAsVersion2) {
  auto backend = testing::MakeBackend("cpu");
  testing::TempDir tmp;
  Model m = MakeModel(*backend);
  // 3 raw dims = 1 feature dim x (order 2 + 1).
  m.transform.pipeline = FeaturePipeline{true, true, 2};
  SaveModel(tmp.File("p.bin"), m);
  const Model r = LoadModel(tmp.File("p.bin"), *backend);
  EXPECT_TRUE(r.transform.pipeline.speaker_cmvn);
  EXPECT_TRUE(r.transform.pipeline.norm_vars);
  EXPECT_EQ(r.transform.pipeline.delta_order, 2);
  EXPECT_EQ(
      ReadBlobFile(tmp.File("p.bin"), "MAVGNNET", kModelFormatVersion, "model file", 1).version,
      2u);
  // A delta order that does not divide the frame dimension is a corrupt header.
  BlobFile blob = ReadBlobFile(tmp.File("p.bin"), "MAVGNNET", kModelFormatVersion, "model file", 1);
  blob.header["feature_transform"]["pipeline"]["delta_order"] = 1;
  WriteBlobFile(tmp.File("bad.bin"), "MAVGNNET", 2, blob.header, blob.data);
  ExpectLoadError(tmp.File("bad.bin"), *backend, "delta order 1");
}

TEST(ModelFile, CorruptFilesAreClearErrors) {
  auto backend = testing::MakeBackend("cpu");
  testing::TempDir tmp;
  Model m = MakeModel(*backend);
  SaveModel(tmp.File("m.bin"), m);
  const std::string good = ReadFile(tmp.File("m.bin"));

  WriteFileAtomic(tmp.File("magic.bin"), "NOTAMODEL" + good.substr(9));
  ExpectLoadError(tmp.File("magic.bin"), *backend, "not a mavg model");

  std::string version = good;
  version[8] = 99;
  WriteFileAtomic(tmp.File("version.bin"), version);
  ExpectLoadError(tmp.File("version.bin"), *backend, "version 99");

  WriteFileAtomic(tmp.File("short.bin"), good.substr(0, good.size() - 17));
  ExpectLoadError(tmp.File("short.bin"), *backend, "truncated");

  std::string flipped = good;
  flipped[good.size() - 20] ^= 0x40;  // inside the parameters
  WriteFileAtomic(tmp.File("flip.bin"), flipped);
  ExpectLoadError(tmp.File("flip.bin"), *backend, "checksum");

  ExpectLoadError(tmp.File("missing.bin"), *backend, "cannot open");

  // A flipped digit in the header (here in the label counts: the priors) is caught by the
  // header checksum; a file written before it (no header checksum) still loads.
  const size_t counts = good.find("\"label_counts\":[");
  ASSERT_NE(counts, std::string::npos);
  std::string header_flip = good;
  const size_t digit = good.find_first_of("0123456789", counts);
  header_flip[digit] = header_flip[digit] == '1' ? '2' : '1';
  WriteFileAtomic(tmp.File("header.bin"), header_flip);
  ExpectLoadError(tmp.File("header.bin"), *backend, "header checksum mismatch");
  // The checksum is a key of the header, so a build that predates it reads the file as before;
  // a file without the key (written before it) still loads, and readers never see the key.
  ASSERT_NE(good.find("\"header_crc\":"), std::string::npos);
  const BlobFile stamped =
      ReadBlobFile(tmp.File("m.bin"), "MAVGNNET", kModelFormatVersion, "model file", 1);
  EXPECT_FALSE(stamped.header.contains("header_crc"));
  const std::string unstamped = HandWrittenBlob(stamped, /*trailing_header_crc=*/false);
  WriteFileAtomic(tmp.File("legacy.bin"), unstamped);
  EXPECT_NO_THROW(LoadModel(tmp.File("legacy.bin"), *backend));
  std::string legacy_flip = unstamped;
  FlipFirstDigitAfter(legacy_flip, "\"label_counts\":[");
  WriteFileAtomic(tmp.File("legacy-flip.bin"), legacy_flip);
  EXPECT_NO_THROW(LoadModel(tmp.File("legacy-flip.bin"), *backend));  // nothing to check it by
  // A few builds kept that checksum as a u32 after the parameters': still read and checked.
  const std::string trailing = HandWrittenBlob(stamped, /*trailing_header_crc=*/true);
  WriteFileAtomic(tmp.File("trailing.bin"), trailing);
  EXPECT_NO_THROW(LoadModel(tmp.File("trailing.bin"), *backend));
  std::string trailing_flip = trailing;
  FlipFirstDigitAfter(trailing_flip, "\"label_counts\":[");
  WriteFileAtomic(tmp.File("trailing-flip.bin"), trailing_flip);
  ExpectLoadError(tmp.File("trailing-flip.bin"), *backend, "header checksum mismatch");
  // A checksum key that is not a number is damage too.
  std::string bad_key = good;
  const size_t key = bad_key.find("\"header_crc\":") + 13;
  const size_t key_end = bad_key.find_first_not_of("0123456789", key);
  ASSERT_GE(key_end - key, 2u);
  bad_key[key] = bad_key[key_end - 1] = '"';  // the same length, now a string
  WriteFileAtomic(tmp.File("bad-key.bin"), bad_key);
  EXPECT_THROW(LoadModel(tmp.File("bad-key.bin"), *backend), Error);

  // A valid checksum over a header whose architecture does not match the stored parameters
  // (absurd dimensions): refused before anything is allocated for it.
  BlobFile blob = ReadBlobFile(tmp.File("m.bin"), "MAVGNNET", kModelFormatVersion, "model file", 1);
  for (const nlohmann::json& hidden :
       {nlohmann::json::array({2147483647}), nlohmann::json::array({-4}),
        nlohmann::json::array({2147483647, 2147483647, 2147483647})}) {
    nlohmann::json header = blob.header;
    header["hidden_dims"] = hidden;
    WriteBlobFile(tmp.File("dims.bin"), "MAVGNNET", kModelFormatVersion, header, blob.data);
    ExpectLoadError(tmp.File("dims.bin"), *backend,
                    "parameters stored but the header's architecture");
  }
}

// A minimal reader of the nnet1 text format, independent of the writer.
struct KaldiComponent {
  std::string type;
  int out = 0, in = 0;
  std::vector<std::vector<double>> brackets;  // every [ ... ] block, flattened
};

std::vector<KaldiComponent> ParseNnet1(const std::string& text) {
  std::istringstream in(text);
  std::string tok;
  std::vector<KaldiComponent> comps;
  in >> tok;
  EXPECT_EQ(tok, "<Nnet>");
  while (in >> tok && tok != "</Nnet>") {
    KaldiComponent c;
    c.type = tok;
    in >> c.out >> c.in;
    while (in >> tok && tok != "<!EndOfComponent>") {
      if (tok == "[") {
        std::vector<double> vals;
        while (in >> tok && tok != "]") vals.push_back(std::stod(tok));
        c.brackets.push_back(vals);
      }
    }
    comps.push_back(c);
  }
  return comps;
}

TEST(KaldiExport, ParsedNnetReproducesTheModelOnRawFeatures) {
  auto backend = testing::MakeBackend("cpu");
  Model m = MakeModel(*backend);
  std::ostringstream out;
  WriteKaldiNnet1(m, /*include_transform=*/true, out);
  const std::vector<KaldiComponent> comps = ParseNnet1(out.str());
  ASSERT_EQ(comps.size(), 7u);
  const char* types[] = {"<Splice>",  "<AddShift>",        "<Rescale>", "<AffineTransform>",
                         "<Sigmoid>", "<AffineTransform>", "<Softmax>"};
  for (int i = 0; i < 7; ++i) EXPECT_EQ(comps[i].type, types[i]);
  EXPECT_EQ(comps[0].brackets[0], (std::vector<double>{-1, 0, 1}));
  EXPECT_EQ(comps[3].out, 6);
  EXPECT_EQ(comps[3].in, 9);
  EXPECT_NE(out.str().find("<BiasLearnRateCoef> 0.1"), std::string::npos);

  // Raw utterance of 4 frames x 3 dims; evaluate frame 0 (left edge repeated) by hand.
  HostMat raw = RandomHost(4, 3, 8);
  std::vector<double> x;
  for (int o : {-1, 0, 1}) {
    const int t = std::clamp(0 + o, 0, 3);
    for (int d = 0; d < 3; ++d) x.push_back(raw(t, d));
  }
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = (x[i] + comps[1].brackets[0][i]) * comps[2].brackets[0][i];
  auto affine = [](const KaldiComponent& c, const std::vector<double>& v) {
    std::vector<double> y(c.out);
    for (int r = 0; r < c.out; ++r) {
      double s = c.brackets[1][r];
      for (int k = 0; k < c.in; ++k) s += c.brackets[0][r * c.in + k] * v[k];
      y[r] = s;
    }
    return y;
  };
  std::vector<double> h = affine(comps[3], x);
  for (double& v : h) v = 1.0 / (1.0 + std::exp(-v));
  std::vector<double> z = affine(comps[5], h);
  double mx = *std::max_element(z.begin(), z.end()), sum = 0;
  for (double& v : z) sum += (v = std::exp(v - mx));

  // The same through mavg: transform on the host, network on the backend.
  std::vector<float> spliced;
  for (int o : {-1, 0, 1}) {
    const int t = std::clamp(o, 0, 3);
    for (int d = 0; d < 3; ++d) {
      spliced.push_back((raw(t, d) + m.transform.shift[d]) * m.transform.scale[d]);
    }
  }
  Matrix in(*backend, 1, 9);
  backend->CopyFromHost(spliced.data(), in);
  HostMat post = ToHost(*backend, m.network->ForwardPosteriors(in));
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(post.v[k], z[k] / sum, 1e-5);
}

TEST(KaldiExport, SeparateFeatureTransform) {
  auto backend = testing::MakeBackend("cpu");
  Model m = MakeModel(*backend);
  std::ostringstream net, ft;
  WriteKaldiNnet1(m, /*include_transform=*/false, net);
  WriteKaldiFeatureTransform(m.transform, ft);
  EXPECT_EQ(ParseNnet1(net.str()).size(), 4u);
  EXPECT_EQ(ParseNnet1(ft.str()).size(), 3u);
}

}  // namespace
}  // namespace mavg
