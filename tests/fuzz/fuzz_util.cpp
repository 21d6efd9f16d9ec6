#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "tests/fuzz/fuzz_target.h"

namespace mavg::fuzz {
namespace {

struct Dir {
  std::string path;
  Dir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "mavg-fuzz-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) Finding("mkdtemp", tmpl);
    path = tmpl;
  }
  ~Dir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

}  // namespace

const std::string& WorkDir() {
  static const Dir dir;
  return dir.path;
}

std::string WriteWorkFile(const std::string& name, std::string_view bytes) {
  const std::string path = WorkDir() + "/" + name;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out.good()) Finding("cannot write", path);
  return path;
}

std::vector<std::string> SplitFiles(const uint8_t* data, size_t size, size_t count) {
  std::vector<std::string> files;
  size_t i = 0;
  for (size_t f = 0; f + 1 < count; ++f) {
    std::string s;
    while (i < size) {
      const char c = static_cast<char>(data[i++]);
      if (c == '\\' && i < size) {
        const char next = static_cast<char>(data[i++]);
        if (next != '\\') break;
      }
      s += c;
    }
    files.push_back(std::move(s));
  }
  files.emplace_back(reinterpret_cast<const char*>(data) + i, size - i);
  return files;
}

std::string EncodeFiles(const std::vector<std::string>& files) {
  std::string out;
  for (size_t f = 0; f < files.size(); ++f) {
    if (f + 1 == files.size()) {
      out += files[f];
      break;
    }
    for (char c : files[f]) {
      if (c == '\\') out += '\\';
      out += c;
    }
    out += "\\n";  // a backslash before 'n' ends the file
  }
  return out;
}

}  // namespace mavg::fuzz
