#include "engine/data/kaldi_table.h"

#include <fcntl.h>
#include <glob.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/core/hash.h"
#include "engine/data/kaldi_io.h"
#include "engine/data/kaldi_text.h"

extern char** environ;

namespace mavg::kaldi {
namespace {

namespace fs = std::filesystem;

std::string Trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && IsKaldiSpace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && IsKaldiSpace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

// "ark,s,cs:REST" -> ("ark", "REST"); no known type: ("", whole).
std::pair<std::string, std::string> SplitType(const std::string& spec) {
  const size_t colon = spec.find(':');
  if (colon == std::string::npos) return {"", spec};
  const std::string head = spec.substr(0, colon);
  const std::string type = head.substr(0, head.find(','));
  if (type != "ark" && type != "scp") return {"", spec};
  // Kaldi's read options: s (sorted), cs (called sorted), o (once), p (permissive), b, t.
  for (size_t pos = head.find(','); pos != std::string::npos;) {
    const size_t next = head.find(',', pos + 1);
    const std::string opt = head.substr(pos + 1, next == std::string::npos ? next : next - pos - 1);
    MAVG_CHECK(opt == "s" || opt == "cs" || opt == "o" || opt == "p" || opt == "b" || opt == "t" ||
                   opt == "ns" || opt == "nc" || opt == "no" || opt == "np",
               "rspecifier '{}': unknown option '{}' (Kaldi's are s, cs, o, p, b, t)", spec, opt);
    pos = next;
  }
  return {type, spec.substr(colon + 1)};
}

bool HasGlobCharacters(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

bool IsGzip(const std::string& path) {
  unsigned char magic[2] = {0, 0};
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  const size_t n = std::fread(magic, 1, 2, f);
  std::fclose(f);
  return n == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

// The last non-empty line of a file (a command's standard error), at most 300 bytes of it.
std::string LastLine(const std::string& path) {
  std::string text;
  try {
    text = ReadFile(path);
  } catch (const Error&) {
    return "";
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) {
    text.pop_back();
  }
  const size_t nl = text.rfind('\n');
  std::string line = nl == std::string::npos ? text : text.substr(nl + 1);
  if (line.size() > 300) line = "..." + line.substr(line.size() - 300);
  return line;
}

}  // namespace

bool IsPipeRspecifier(const std::string& rspecifier) {
  const std::string t = Trim(rspecifier);
  return !t.empty() && t.back() == '|';
}

std::string TableFingerprint(const std::string& rspecifier, const std::string& what) {
  if (IsPipeRspecifier(rspecifier)) return "pipe " + Sha256Hex(Trim(rspecifier));
  return TableSource(rspecifier, what).Fingerprint();
}

TableSource::TableSource(const std::string& rspecifier, const std::string& what,
                         const std::string& base_dir)
    : rspecifier_(Trim(rspecifier)), what_(what) {
  MAVG_CHECK(!rspecifier_.empty(), "{}: empty rspecifier", what_);
  try {
    if (IsPipeRspecifier(rspecifier_)) {
      AddSpec(rspecifier_, base_dir);
    } else {
      std::string word;
      for (size_t i = 0; i <= rspecifier_.size(); ++i) {
        if (i == rspecifier_.size() || IsKaldiSpace(static_cast<unsigned char>(rspecifier_[i]))) {
          if (!word.empty()) AddSpec(word, base_dir);
          word.clear();
        } else {
          word.push_back(rspecifier_[i]);
        }
      }
    }
  } catch (...) {
    for (const std::string& t : temporary_) std::remove(t.c_str());
    throw;
  }
}

TableSource::~TableSource() {
  for (const std::string& t : temporary_) std::remove(t.c_str());
}

void TableSource::AddSpec(const std::string& spec, const std::string& base_dir) {
  auto [type, rest] = SplitType(spec);
  rest = Trim(rest);
  MAVG_CHECK(!rest.empty(), "{}: rspecifier '{}' names no file", what_, spec);
  if (rest.back() == '|') {
    MAVG_CHECK(type != "scp", "{}: '{}': an scp cannot come from a pipe here (use ark:CMD |)",
               what_, spec);
    const std::string command = Trim(rest.substr(0, rest.size() - 1));
    MAVG_CHECK(!command.empty(), "{}: '{}': empty command before '|'", what_, spec);
    const std::string out = Materialise("pipe");
    const std::string err = Materialise("pipe-stderr");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_TRUNC, 0);
    posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_TRUNC, 0);
    const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
    pid_t pid = 0;
    const int rc =
        posix_spawn(&pid, "/bin/sh", &actions, nullptr, const_cast<char**>(argv), environ);
    posix_spawn_file_actions_destroy(&actions);
    MAVG_CHECK(rc == 0, "{}: cannot start '{}': {}", what_, command, std::strerror(rc));
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      const std::string last = LastLine(err);
      MAVG_FAIL("{}: command '{}' {} {}{}", what_, command,
                WIFSIGNALED(status) ? "was killed by signal" : "exited with status",
                WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status),
                last.empty() ? std::string() : ": " + last);
    }
    MAVG_CHECK(fs::file_size(out) > 0, "{}: command '{}' wrote nothing", what_, command);
    parts_.push_back(Part{"command '" + command + "'", out, false});
    return;
  }
  std::vector<std::string> paths;
  auto resolve = [&](const std::string& p) {
    std::error_code ec;
    if (!base_dir.empty() && fs::path(p).is_relative() && !fs::exists(p, ec) &&
        fs::exists(fs::path(base_dir) / p, ec)) {
      return (fs::path(base_dir) / p).string();
    }
    return p;
  };
  if (HasGlobCharacters(rest) && !PathExists(rest)) {
    for (const std::string& pattern : {rest, resolve(rest)}) {
      glob_t g{};
      if (glob(pattern.c_str(), 0, nullptr, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; ++i) paths.emplace_back(g.gl_pathv[i]);
      }
      globfree(&g);
      if (!paths.empty() || base_dir.empty()) break;
    }
    MAVG_CHECK(!paths.empty(), "{}: '{}' matches no file", what_, rest);
  } else {
    paths.push_back(resolve(rest));
  }
  for (const std::string& p : paths) {
    std::error_code ec;
    MAVG_CHECK(fs::exists(p, ec), "{}: {}: not found", what_, p);
    MAVG_CHECK(fs::is_regular_file(p, ec), "{}: {}: not a regular file", what_, p);
    AddFile(p, type == "scp");
  }
}

void TableSource::AddFile(const std::string& path, bool scp) {
  if (!IsGzip(path)) {
    parts_.push_back(Part{path, path, scp});
    return;
  }
  MAVG_CHECK(!scp, "{}: {}: a gzip'd scp is not supported (gunzip it)", what_, path);
  const std::string out = Materialise("gunzip");
  gzFile in = gzopen(path.c_str(), "rb");
  MAVG_CHECK(in != nullptr, "{}: {}: cannot open: {}", what_, path, std::strerror(errno));
  std::FILE* dst = std::fopen(out.c_str(), "wb");
  if (dst == nullptr) {
    gzclose(in);
    MAVG_FAIL("{}: cannot write the temporary file {}: {}", what_, out, std::strerror(errno));
  }
  std::vector<char> buffer(size_t{1} << 20);
  bool ok = true;
  std::string problem;
  while (true) {
    const int n = gzread(in, buffer.data(), static_cast<unsigned>(buffer.size()));
    if (n < 0) {
      int code = 0;
      problem = gzerror(in, &code);
      ok = false;
      break;
    }
    if (n == 0) break;
    if (std::fwrite(buffer.data(), 1, static_cast<size_t>(n), dst) != static_cast<size_t>(n)) {
      problem = fmt::format("cannot write {}: {}", out, std::strerror(errno));
      ok = false;
      break;
    }
  }
  // A stream cut short reads as a short file; zlib says so when it is closed.
  const int closed = gzclose(in);
  if (ok && closed != Z_OK) {
    problem = closed == Z_BUF_ERROR ? "it ends in the middle of the compressed stream"
                                    : fmt::format("zlib error {}", closed);
    ok = false;
  }
  if (std::fclose(dst) != 0 && ok) {
    problem = fmt::format("cannot write {}: {}", out, std::strerror(errno));
    ok = false;
  }
  MAVG_CHECK(ok, "{}: {}: corrupt or truncated gzip file ({})", what_, path, problem);
  parts_.push_back(Part{path, out, false});
}

std::string TableSource::Materialise(const std::string& name) {
  std::error_code ec;
  fs::path dir = fs::temp_directory_path(ec);
  if (ec) dir = "/tmp";
  std::string templ = (dir / ("mavg-" + name + "-XXXXXX")).string();
  const int fd = mkstemp(templ.data());
  MAVG_CHECK(fd >= 0, "{}: cannot create a temporary file in {}: {}", what_, dir.string(),
             std::strerror(errno));
  close(fd);
  temporary_.push_back(templ);
  return templ;
}

std::string TableSource::Fingerprint() const {
  std::string text;
  for (const Part& p : parts_) {
    text += (p.scp ? "scp " : "ark ") + Sha256FileHex(p.path) + "\n";
    if (!p.scp) continue;
    std::set<std::string> archives;  // what the scp points into, each once
    const std::string dir = fs::path(p.path).parent_path().string();
    for (const auto& [key, rx] : ReadScp(p.path)) {
      std::string a = ParseRxspec(rx).path;
      std::error_code ec;
      if (fs::path(a).is_relative() && !fs::exists(a, ec)) a = (fs::path(dir) / a).string();
      archives.insert(a);
    }
    for (const std::string& a : archives) text += "  " + Sha256FileHex(a) + "\n";
  }
  return Sha256Hex(text);
}

namespace {

// A reader's message about a temporary file names what it holds instead (the command, the
// gzip'd archive).
[[noreturn]] void RethrowNamingSource(const Error& e, const TableSource::Part& part) {
  std::string message = e.what();
  for (size_t at = message.find(part.path); at != std::string::npos;
       at = message.find(part.path, at + part.name.size())) {
    message.replace(at, part.path.size(), part.name);
  }
  throw Error(message, e.Location());
}

void VisitPart(const TableSource::Part& part, const Int32VectorVisitor& visit) {
  {
    if (!part.scp) {
      Int32VectorArchiveReader reader(part.path);
      while (reader.Next()) {
        visit(reader.Key(), reader.MutableValue(),
              fmt::format("{}: utterance '{}'", part.name, reader.Key()));
      }
      return;
    }
    RxInt32VectorReader rx;
    const std::string dir = fs::path(part.path).parent_path().string();
    for (const auto& [key, rxspec] : ReadScp(part.path)) {
      Rxspec spec = ParseRxspec(rxspec);
      std::error_code ec;
      if (fs::path(spec.path).is_relative() && !fs::exists(spec.path, ec) &&
          fs::exists(fs::path(dir) / spec.path, ec)) {
        spec.path = (fs::path(dir) / spec.path).string();
      }
      std::vector<int32_t> v = rx.Read(spec, key);
      visit(key, v, fmt::format("{}: utterance '{}'", part.name, key));
    }
  }
}

}  // namespace

void ForEachInt32Vector(const TableSource& table, const Int32VectorVisitor& visit) {
  for (const TableSource::Part& part : table.Parts()) {
    if (part.name == part.path) {
      VisitPart(part, visit);
      continue;
    }
    try {
      VisitPart(part, visit);
    } catch (const Error& e) {
      RethrowNamingSource(e, part);
    }
  }
}

}  // namespace mavg::kaldi
