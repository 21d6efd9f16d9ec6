#include "engine/speech/wav.h"

#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>

#include "engine/core/error.h"
#include "engine/core/files.h"

namespace mavg {
namespace {

constexpr uint16_t kFormatPcm = 1;
constexpr uint16_t kFormatExtensible = 0xFFFE;
constexpr size_t kHeaderBytes = 44;  // RIFF header + 16-byte fmt chunk + data chunk header

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

std::vector<unsigned char> ReadAllBytes(const std::string& path) {
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  MAVG_CHECK(file != nullptr, "{}: cannot open: {}", path, std::strerror(errno));
  struct stat st {};
  MAVG_CHECK(::fstat(::fileno(file.get()), &st) == 0, "{}: cannot stat: {}", path,
             std::strerror(errno));
  MAVG_CHECK(S_ISREG(st.st_mode), "{}: not a regular file", path);
  std::vector<unsigned char> bytes(static_cast<size_t>(st.st_size));
  size_t got = bytes.empty() ? 0 : std::fread(bytes.data(), 1, bytes.size(), file.get());
  MAVG_CHECK(got == bytes.size(), "{}: read error after {} of {} bytes", path, got, bytes.size());
  return bytes;
}

uint16_t U16(const unsigned char* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint32_t U32(const unsigned char* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

void PutU16(std::string& out, uint16_t v) {
  out.push_back(static_cast<char>(v & 0xFF));
  out.push_back(static_cast<char>(v >> 8));
}
void PutU32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

// A chunk id for messages: printable characters kept, others as '?'.
std::string ChunkName(const unsigned char* p) {
  std::string name(4, '?');
  for (int i = 0; i < 4; ++i) {
    if (p[i] >= 0x20 && p[i] < 0x7F) name[i] = static_cast<char>(p[i]);
  }
  return name;
}

const char* FormatName(uint16_t format) {
  switch (format) {
    case 2:
      return "MS ADPCM";
    case 3:
      return "IEEE float";
    case 6:
      return "A-law";
    case 7:
      return "mu-law";
    case 0x11:
      return "IMA ADPCM";
    case 0x55:
      return "MP3";
    case kFormatExtensible:
      return "extensible, non-PCM";
    default:
      return "unknown";
  }
}

struct FmtChunk {
  uint16_t channels = 0;
  uint32_t sample_rate = 0;
  uint16_t block_align = 0;
  uint16_t bits = 0;
};

FmtChunk ParseFmt(const std::string& path, const unsigned char* body, uint32_t size) {
  MAVG_CHECK(size >= 16, "{}: fmt chunk of {} bytes, expected at least 16", path, size);
  uint16_t format = U16(body);
  // WAVE_FORMAT_EXTENSIBLE carries the real format in the first two bytes of its sub-format
  // GUID (byte 24 of the chunk); PCM there is still plain PCM.
  if (format == kFormatExtensible && size >= 40 && U16(body + 24) == kFormatPcm) {
    format = kFormatPcm;
  }
  MAVG_CHECK(format == kFormatPcm, "{}: WAV format {} ({}): only 16-bit PCM is supported", path,
             format, FormatName(format));
  FmtChunk fmt;
  fmt.channels = U16(body + 2);
  fmt.sample_rate = U32(body + 4);
  fmt.block_align = U16(body + 12);
  fmt.bits = U16(body + 14);
  MAVG_CHECK(fmt.channels == 1, "{}: {} channels: only mono WAV is supported", path, fmt.channels);
  MAVG_CHECK(fmt.bits == 16, "{}: {}-bit samples: only 16-bit PCM is supported", path, fmt.bits);
  MAVG_CHECK(fmt.sample_rate > 0 &&
                 fmt.sample_rate <= static_cast<uint32_t>(std::numeric_limits<int>::max()),
             "{}: bad sample rate {}", path, fmt.sample_rate);
  MAVG_CHECK(fmt.block_align == 2, "{}: block align {}, expected 2 for 16-bit mono", path,
             fmt.block_align);
  return fmt;
}

}  // namespace

Waveform ReadWav(const std::string& path) {
  const std::vector<unsigned char> bytes = ReadAllBytes(path);
  const unsigned char* b = bytes.data();
  const size_t n = bytes.size();
  MAVG_CHECK(n >= 12 && std::memcmp(b, "RIFF", 4) == 0, "{}: not a WAV file (no RIFF header)",
             path);
  MAVG_CHECK(std::memcmp(b + 8, "WAVE", 4) == 0, "{}: not a WAV file (RIFF form '{}', not WAVE)",
             path, ChunkName(b + 8));

  // Walk the chunks up to the end of the file (the RIFF size is often wrong in the wild, so it
  // is not trusted) until both fmt and data have been seen.
  bool have_fmt = false, have_data = false;
  FmtChunk fmt;
  size_t data_pos = 0;
  uint32_t data_size = 0;
  size_t pos = 12;
  while (pos + 8 <= n && !(have_fmt && have_data)) {
    const unsigned char* id = b + pos;
    const uint32_t size = U32(b + pos + 4);
    const size_t body = pos + 8;
    const size_t remaining = n - body;
    if (std::memcmp(id, "data", 4) == 0) {
      MAVG_CHECK(!have_data, "{}: more than one data chunk", path);
      MAVG_CHECK(size <= remaining, "{}: truncated data chunk: header says {} bytes, file has {}",
                 path, size, remaining);
      have_data = true;
      data_pos = body;
      data_size = size;
    } else {
      MAVG_CHECK(size <= remaining,
                 "{}: truncated '{}' chunk at byte {}: header says {} bytes, "
                 "file has {}",
                 path, ChunkName(id), pos, size, remaining);
      if (std::memcmp(id, "fmt ", 4) == 0) {
        MAVG_CHECK(!have_fmt, "{}: more than one fmt chunk", path);
        fmt = ParseFmt(path, b + body, size);
        have_fmt = true;
      }
    }
    pos = body + size + (size & 1);  // chunks are padded to an even size
  }
  MAVG_CHECK(have_fmt, "{}: WAV file without a fmt chunk", path);
  MAVG_CHECK(have_data, "{}: WAV file without a data chunk", path);
  MAVG_CHECK(data_size % 2 == 0,
             "{}: data chunk of {} bytes is not a whole number of 16-bit "
             "samples",
             path, data_size);

  Waveform wave;
  wave.sample_rate = static_cast<int>(fmt.sample_rate);
  wave.samples.resize(data_size / 2);
  const unsigned char* p = b + data_pos;
  constexpr float kScale = 1.0f / 32768.0f;
  for (size_t i = 0; i < wave.samples.size(); ++i, p += 2) {
    wave.samples[i] = static_cast<float>(static_cast<int16_t>(U16(p))) * kScale;
  }
  return wave;
}

void WriteWav(const std::string& path, const Waveform& wave) {
  MAVG_CHECK(wave.sample_rate > 0, "{}: cannot write a WAV file with sample rate {}", path,
             wave.sample_rate);
  const uint64_t data_bytes = 2 * static_cast<uint64_t>(wave.samples.size());
  MAVG_CHECK(data_bytes <= 0xFFFFFFFFull - (kHeaderBytes - 8),
             "{}: {} samples do not fit in a WAV file", path, wave.samples.size());
  std::string out;
  out.reserve(kHeaderBytes + data_bytes);
  out.append("RIFF");
  PutU32(out, static_cast<uint32_t>(kHeaderBytes - 8 + data_bytes));
  out.append("WAVEfmt ");
  PutU32(out, 16);
  PutU16(out, kFormatPcm);
  PutU16(out, 1);  // channels
  PutU32(out, static_cast<uint32_t>(wave.sample_rate));
  PutU32(out, static_cast<uint32_t>(wave.sample_rate) * 2);  // byte rate
  PutU16(out, 2);                                            // block align
  PutU16(out, 16);                                           // bits per sample
  out.append("data");
  PutU32(out, static_cast<uint32_t>(data_bytes));
  for (size_t i = 0; i < wave.samples.size(); ++i) {
    const float x = wave.samples[i];
    MAVG_CHECK(std::isfinite(x), "{}: sample {} is {}", path, i, x);
    const float scaled = std::nearbyint(x * 32768.0f);
    const auto v = static_cast<int16_t>(std::fmin(std::fmax(scaled, -32768.0f), 32767.0f));
    PutU16(out, static_cast<uint16_t>(v));
  }
  WriteFileAtomic(path, out);
}

}  // namespace mavg
