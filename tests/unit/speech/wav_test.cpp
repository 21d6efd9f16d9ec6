// WAV reading and writing: round trips, clipping, skipped chunks, and every malformed file
// ReadWav must refuse with one line naming the file.

#include "engine/speech/wav.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "engine/core/error.h"
#include "tests/testing/test_util.h"

namespace mavg {
namespace {

void PutU16(std::string& out, uint32_t v) {
  out.push_back(static_cast<char>(v & 0xFF));
  out.push_back(static_cast<char>((v >> 8) & 0xFF));
}
void PutU32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

std::string Chunk(const std::string& id, const std::string& body) {
  std::string out = id;
  PutU32(out, static_cast<uint32_t>(body.size()));
  out += body;
  if (body.size() % 2 == 1) out.push_back('\0');
  return out;
}

std::string FmtBody(uint32_t format, uint32_t channels, uint32_t rate, uint32_t bits) {
  std::string body;
  PutU16(body, format);
  PutU16(body, channels);
  PutU32(body, rate);
  PutU32(body, rate * channels * bits / 8);
  PutU16(body, channels * bits / 8);
  PutU16(body, bits);
  return body;
}

std::string Int16Data(const std::vector<int16_t>& samples) {
  std::string body;
  for (int16_t s : samples) PutU16(body, static_cast<uint16_t>(s));
  return body;
}

std::string Riff(const std::string& chunks, const std::string& form = "WAVE") {
  std::string out = "RIFF";
  PutU32(out, static_cast<uint32_t>(4 + chunks.size()));
  return out + form + chunks;
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

const std::vector<int16_t> kSamples = {0, 1, -1, 32767, -32768, 1234, -4321};

std::vector<float> Scaled(const std::vector<int16_t>& s) {
  std::vector<float> out;
  for (int16_t v : s) out.push_back(static_cast<float>(v) / 32768.0f);
  return out;
}

// Reading `bytes` fails with a message naming the file and containing `what`.
void ExpectRefused(const testing::TempDir& tmp, const std::string& bytes, const std::string& what) {
  const std::string path = tmp.File("bad.wav");
  WriteBytes(path, bytes);
  try {
    ReadWav(path);
    ADD_FAILURE() << "no error; expected one about '" << what << "'";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find(what), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(Wav, RoundTripIsExactForInt16Values) {
  testing::TempDir tmp;
  Waveform w;
  w.sample_rate = 22050;
  w.samples = Scaled(kSamples);
  WriteWav(tmp.File("a.wav"), w);
  Waveform r = ReadWav(tmp.File("a.wav"));
  EXPECT_EQ(r.sample_rate, 22050);
  EXPECT_EQ(r.samples, w.samples);
}

TEST(Wav, WriteRoundsAndClips) {
  testing::TempDir tmp;
  Waveform w;
  w.sample_rate = 16000;
  w.samples = {1.0f, 2.5f, -1.0f, -3.0f, 0.4f / 32768.0f, 0.6f / 32768.0f, -0.6f / 32768.0f};
  WriteWav(tmp.File("c.wav"), w);
  Waveform r = ReadWav(tmp.File("c.wav"));
  const std::vector<float> expected = {32767 / 32768.0f, 32767 / 32768.0f, -1.0f, -1.0f, 0.0f,
                                       1 / 32768.0f,     -1 / 32768.0f};
  EXPECT_EQ(r.samples, expected);
}

TEST(Wav, WriteRefusesNonFiniteSamplesAndBadRate) {
  testing::TempDir tmp;
  Waveform w;
  w.sample_rate = 16000;
  w.samples = {0.0f, std::numeric_limits<float>::quiet_NaN()};
  EXPECT_THROW(WriteWav(tmp.File("n.wav"), w), Error);
  w.samples = {0.0f};
  w.sample_rate = 0;
  EXPECT_THROW(WriteWav(tmp.File("n.wav"), w), Error);
}

TEST(Wav, EmptyDataChunkIsAnEmptyWaveform) {
  testing::TempDir tmp;
  WriteBytes(tmp.File("e.wav"), Riff(Chunk("fmt ", FmtBody(1, 1, 8000, 16)) + Chunk("data", "")));
  Waveform r = ReadWav(tmp.File("e.wav"));
  EXPECT_EQ(r.sample_rate, 8000);
  EXPECT_TRUE(r.samples.empty());
}

TEST(Wav, SkipsUnknownChunksIncludingOddSizedOnes) {
  testing::TempDir tmp;
  const std::string list = Chunk("LIST", "INFOabcde");  // odd size: padded to even
  const std::string bytes =
      Riff(list + Chunk("fmt ", FmtBody(1, 1, 16000, 16)) + Chunk("fact", "abcd") +
           Chunk("data", Int16Data(kSamples)) + Chunk("LIST", "trailing"));
  WriteBytes(tmp.File("l.wav"), bytes);
  Waveform r = ReadWav(tmp.File("l.wav"));
  EXPECT_EQ(r.sample_rate, 16000);
  EXPECT_EQ(r.samples, Scaled(kSamples));
}

TEST(Wav, AcceptsExtensibleFormatWithPcmSubformat) {
  testing::TempDir tmp;
  std::string fmt = FmtBody(0xFFFE, 1, 16000, 16);
  PutU16(fmt, 22);   // cbSize
  PutU16(fmt, 16);   // valid bits
  PutU32(fmt, 0x4);  // channel mask
  PutU16(fmt, 1);    // sub-format GUID begins with the format tag (PCM)
  fmt += std::string("\x00\x00\x00\x00\x10\x00\x80\x00\x00\xAA\x00\x38\x9B\x71", 14);
  WriteBytes(tmp.File("x.wav"), Riff(Chunk("fmt ", fmt) + Chunk("data", Int16Data(kSamples))));
  EXPECT_EQ(ReadWav(tmp.File("x.wav")).samples, Scaled(kSamples));
}

TEST(Wav, RefusesMalformedFiles) {
  testing::TempDir tmp;
  const std::string fmt = Chunk("fmt ", FmtBody(1, 1, 16000, 16));
  const std::string data = Chunk("data", Int16Data(kSamples));

  ExpectRefused(tmp, "", "no RIFF header");
  ExpectRefused(tmp, "RIFX0000WAVE", "no RIFF header");
  ExpectRefused(tmp, "ID3\x03 this is an mp3 file", "no RIFF header");
  ExpectRefused(tmp, Riff(fmt + data, "AVI "), "not WAVE");
  ExpectRefused(tmp, Riff(Chunk("fmt ", FmtBody(3, 1, 16000, 32)) + data), "IEEE float");
  ExpectRefused(tmp, Riff(Chunk("fmt ", FmtBody(7, 1, 8000, 8)) + data), "mu-law");
  ExpectRefused(tmp, Riff(Chunk("fmt ", FmtBody(1, 2, 16000, 16)) + data), "2 channels");
  ExpectRefused(tmp, Riff(Chunk("fmt ", FmtBody(1, 1, 16000, 8)) + data), "8-bit");
  ExpectRefused(tmp, Riff(Chunk("fmt ", FmtBody(1, 1, 16000, 24)) + data), "24-bit");
  ExpectRefused(tmp, Riff(Chunk("fmt ", FmtBody(1, 1, 0, 16)) + data), "sample rate");
  ExpectRefused(tmp, Riff(Chunk("fmt ", FmtBody(1, 1, 16000, 16).substr(0, 14)) + data),
                "fmt chunk of 14 bytes");
  ExpectRefused(tmp, Riff(data), "without a fmt chunk");
  ExpectRefused(tmp, Riff(fmt), "without a data chunk");
  ExpectRefused(tmp, Riff(fmt + Chunk("LIST", "abcd")), "without a data chunk");
  ExpectRefused(tmp, Riff(fmt + Chunk("data", "abc")), "not a whole number");
  // Data chunk header promising more bytes than the file holds.
  std::string truncated = Riff(fmt + data);
  truncated.resize(truncated.size() - 3);
  ExpectRefused(tmp, truncated, "truncated data chunk");
  // A chunk before the data running past the end of the file.
  std::string bad_list = "LIST";
  PutU32(bad_list, 1000);
  ExpectRefused(tmp, Riff(fmt + bad_list + "xx"), "truncated 'LIST' chunk");
  // Header only, no chunks at all.
  ExpectRefused(tmp, Riff(""), "without a fmt chunk");
}

TEST(Wav, MissingFileNamesIt) {
  testing::TempDir tmp;
  try {
    ReadWav(tmp.File("nope.wav"));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nope.wav"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace mavg
