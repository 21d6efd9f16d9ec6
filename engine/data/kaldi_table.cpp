#include "engine/data/kaldi_table.h"

#include <fcntl.h>
#include <glob.h>
#include <spawn.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <regex>
#include <set>

#include "engine/core/error.h"
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

// One rspecifier of a table, parsed: what kind, and the file, pattern or command.
struct Spec {
  enum class Kind { kArchive, kScp, kPipe } kind = Kind::kArchive;
  std::string target;  // path or glob; the command for a pipe
};

// "ark,s,cs:REST" or "s,cs,ark:REST" -> the type and REST; without "ark"/"scp" among the words
// before the first ':', the whole word is a path.
Spec ParseSpec(const std::string& word, const std::string& what) {
  static const std::set<std::string> kOptions = {"o", "no", "s", "ns", "cs", "ncs",
                                                 "p", "np", "b", "t",  "bg"};
  Spec spec;
  spec.target = word;
  const size_t colon = word.find(':');
  if (colon != std::string::npos) {
    std::vector<std::string> heads;
    std::string head = word.substr(0, colon) + ",";
    for (size_t pos = 0, comma; (comma = head.find(',', pos)) != std::string::npos;
         pos = comma + 1) {
      heads.push_back(head.substr(pos, comma - pos));
    }
    const auto types = std::count_if(heads.begin(), heads.end(),
                                     [](const std::string& h) { return h == "ark" || h == "scp"; });
    if (types > 0) {
      MAVG_CHECK(types == 1, "{}: rspecifier '{}' names more than one type", what, word);
      for (const std::string& h : heads) {
        if (h == "ark" || h == "scp") {
          spec.kind = h == "scp" ? Spec::Kind::kScp : Spec::Kind::kArchive;
        } else {
          MAVG_CHECK(kOptions.count(h),
                     "{}: rspecifier '{}': unknown option '{}' (Kaldi's are o, s, cs, p, b, t, "
                     "bg and their negations no, ns, ncs, np)",
                     what, word, h);
        }
      }
      spec.target = Trim(word.substr(colon + 1));
    }
  }
  MAVG_CHECK(!spec.target.empty(), "{}: rspecifier '{}' names no file", what, word);
  if (spec.target.back() == '|') {
    MAVG_CHECK(spec.kind != Spec::Kind::kScp,
               "{}: '{}': an scp cannot come from a pipe here (use ark:CMD |)", what, word);
    spec.kind = Spec::Kind::kPipe;
    spec.target = Trim(spec.target.substr(0, spec.target.size() - 1));
    MAVG_CHECK(!spec.target.empty(), "{}: '{}': empty command before '|'", what, word);
  }
  return spec;
}

// The rspecifiers of a table: one pipe, or blank-separated files and globs.
std::vector<Spec> ParseTable(const std::string& rspecifier, const std::string& what) {
  const std::string t = Trim(rspecifier);
  MAVG_CHECK(!t.empty(), "{}: empty rspecifier", what);
  if (t.back() == '|') return {ParseSpec(t, what)};
  std::vector<Spec> specs;
  std::string word;
  for (size_t i = 0; i <= t.size(); ++i) {
    if (i == t.size() || IsKaldiSpace(static_cast<unsigned char>(t[i]))) {
      if (!word.empty()) {
        MAVG_CHECK(word.find('|') == std::string::npos,
                   "{}: '{}': a pipe stands alone and ends with '|' (\"ark:CMD |\")", what, t);
        specs.push_back(ParseSpec(word, what));
      }
      word.clear();
    } else {
      word.push_back(t[i]);
    }
  }
  return specs;
}

bool HasGlobCharacters(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

// The files a path or glob names (sorted for a glob); an error when none exists.
std::vector<std::string> Expand(const std::string& target, const std::string& what) {
  std::error_code ec;
  if (!HasGlobCharacters(target) || fs::exists(target, ec)) {
    MAVG_CHECK(fs::exists(target, ec), "{}: {}: not found", what, target);
    MAVG_CHECK(fs::is_regular_file(target, ec), "{}: {}: not a regular file", what, target);
    return {target};
  }
  std::vector<std::string> paths;
  glob_t g{};
  if (glob(target.c_str(), 0, nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) paths.emplace_back(g.gl_pathv[i]);
  }
  globfree(&g);
  MAVG_CHECK(!paths.empty(), "{}: '{}' matches no file", what, target);
  for (const std::string& p : paths) {
    MAVG_CHECK(fs::is_regular_file(p, ec), "{}: {}: not a regular file", what, p);
  }
  return paths;
}

bool IsGzip(const std::string& path) {
  unsigned char magic[2] = {0, 0};
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  const size_t n = std::fread(magic, 1, 2, f);
  std::fclose(f);
  return n == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

// The last non-empty line of what a file descriptor holds, from its last 4 KiB.
std::string LastLine(int fd) {
  struct stat st {};
  if (fstat(fd, &st) != 0 || st.st_size == 0) return "";
  const off_t begin = std::max<off_t>(0, st.st_size - 4096);
  std::string text(static_cast<size_t>(st.st_size - begin), '\0');
  const ssize_t n = pread(fd, text.data(), text.size(), begin);
  text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) {
    text.pop_back();
  }
  const size_t nl = text.rfind('\n');
  std::string line = nl == std::string::npos ? text : text.substr(nl + 1);
  if (line.size() > 300) line = "..." + line.substr(line.size() - 300);
  return line;
}

// Kaldi's alignment dirs keep ali.N.gz of transition ids beside final.mdl; mavg wants pdf ids
// (ali-to-pdf). Nothing in the archive tells them apart, so the usual layout gets a warning.
void WarnIfTransitionIds(const std::string& path, const std::string& what) {
  static const std::regex kKaldiAli(R"(ali\.[0-9]+\.gz)");
  const fs::path p(path);
  std::error_code ec;
  if (std::regex_match(p.filename().string(), kKaldiAli) &&
      fs::exists(p.parent_path() / "final.mdl", ec)) {
    spdlog::warn(
        "[data] {}: {} sits beside final.mdl, as Kaldi's alignments of transition ids do; mavg "
        "reads pdf ids (\"ark:ali-to-pdf {} 'ark:gunzip -c {}/ali.*.gz|' ark:- |\")",
        what, path, (p.parent_path() / "final.mdl").string(), p.parent_path().string());
  }
}

std::string DescriptorPath(int fd) { return fmt::format("/proc/self/fd/{}", fd); }

void WriteAll(int fd, const char* data, size_t n, const std::string& what) {
  while (n > 0) {
    const ssize_t w = write(fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    MAVG_CHECK(w > 0, "{}: cannot write a temporary file: {}", what, std::strerror(errno));
    data += w;
    n -= static_cast<size_t>(w);
  }
}

}  // namespace

bool IsPipeRspecifier(const std::string& rspecifier) {
  const std::string t = Trim(rspecifier);
  return !t.empty() && t.back() == '|';
}

TableSource::TableSource(const std::string& rspecifier, const std::string& what)
    : rspecifier_(Trim(rspecifier)), what_(what) {
  try {
    for (const Spec& spec : ParseTable(rspecifier_, what_)) {
      if (spec.kind == Spec::Kind::kPipe) {
        RunPipe(spec.target);
        continue;
      }
      for (const std::string& path : Expand(spec.target, what_)) {
        if (spec.kind == Spec::Kind::kScp) {
          MAVG_CHECK(!IsGzip(path), "{}: {}: a gzip'd scp is not supported (gunzip it)", what_,
                     path);
          parts_.push_back(Part{path, path, true});
        } else {
          WarnIfTransitionIds(path, what_);
          AddArchive(path);
        }
      }
    }
  } catch (...) {
    for (int fd : descriptors_) close(fd);
    throw;
  }
}

std::shared_ptr<TableSource> TableSource::ArchiveFile(const std::string& path) {
  std::shared_ptr<TableSource> t(new TableSource());
  t->rspecifier_ = path;
  t->what_ = path;
  try {
    WarnIfTransitionIds(path, path);
    t->AddArchive(path);
  } catch (...) {
    for (int fd : t->descriptors_) close(fd);
    t->descriptors_.clear();
    throw;
  }
  return t;
}

TableSource::~TableSource() {
  for (int fd : descriptors_) close(fd);
}

int TableSource::TemporaryFile(const std::string& name) {
  std::error_code ec;
  fs::path dir = fs::temp_directory_path(ec);
  if (ec) dir = "/tmp";
  std::string templ = (dir / ("mavg-" + name + "-XXXXXX")).string();
  const int fd = mkostemp(templ.data(), O_CLOEXEC);
  MAVG_CHECK(fd >= 0, "{}: cannot create a temporary file in {}: {}", what_, dir.string(),
             std::strerror(errno));
  unlink(templ.c_str());  // the descriptor keeps it; nothing is left behind however we end
  descriptors_.push_back(fd);
  return fd;
}

void TableSource::RunPipe(const std::string& command) {
  const int out = TemporaryFile("pipe");
  const int err = TemporaryFile("pipe-stderr");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out, 1);
  posix_spawn_file_actions_adddup2(&actions, err, 2);
  const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, "/bin/sh", &actions, nullptr, const_cast<char**>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  MAVG_CHECK(rc == 0, "{}: cannot start '{}': {}", what_, command, std::strerror(rc));
  int status = 0;
  pid_t waited;
  while ((waited = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  MAVG_CHECK(waited == pid, "{}: command '{}': cannot wait for it: {}", what_, command,
             std::strerror(errno));
  const std::string last = LastLine(err);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    MAVG_FAIL("{}: command '{}' {} {}{}", what_, command,
              WIFSIGNALED(status) ? "was killed by signal" : "exited with status",
              WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status),
              last.empty() ? std::string() : ": " + last);
  }
  if (!last.empty()) spdlog::info("[data] {}: '{}': {}", what_, command, last);
  struct stat st {};
  MAVG_CHECK(fstat(out, &st) == 0 && st.st_size > 0, "{}: command '{}' wrote nothing", what_,
             command);
  parts_.push_back(Part{"command '" + command + "'", DescriptorPath(out), false});
}

void TableSource::AddArchive(const std::string& path) {
  if (!IsGzip(path)) {
    parts_.push_back(Part{path, path, false});
    return;
  }
  const int out = TemporaryFile("gunzip");
  gzFile in = gzopen(path.c_str(), "rb");
  MAVG_CHECK(in != nullptr, "{}: {}: cannot open: {}", what_, path, std::strerror(errno));
  std::vector<char> buffer(size_t{1} << 20);
  std::string problem;
  try {
    while (true) {
      const int n = gzread(in, buffer.data(), static_cast<unsigned>(buffer.size()));
      if (n < 0) {
        int code = 0;
        problem = gzerror(in, &code);
        break;
      }
      if (n == 0) break;
      WriteAll(out, buffer.data(), static_cast<size_t>(n), what_);
    }
  } catch (...) {
    gzclose(in);
    throw;
  }
  // A stream cut short reads as a short file; zlib says so when it is closed.
  const int closed = gzclose(in);
  if (problem.empty() && closed != Z_OK) {
    problem = closed == Z_BUF_ERROR ? "it ends in the middle of the compressed stream"
                                    : fmt::format("zlib error {}", closed);
  }
  MAVG_CHECK(problem.empty(), "{}: {}: corrupt or truncated gzip file ({})", what_, path, problem);
  parts_.push_back(Part{path, DescriptorPath(out), false});
}

std::string TableFingerprint(const std::string& rspecifier, const std::string& what) {
  std::string text;
  auto file = [&](const std::string& path) { text += "  " + Sha256FileHex(path) + "\n"; };
  for (const Spec& spec : ParseTable(rspecifier, what)) {
    if (spec.kind == Spec::Kind::kPipe) {
      text += "pipe " + spec.target + "\n";
      // Every word of the command that names files (quotes, "ark:"-style prefixes and a
      // trailing '|' stripped), in the order the command names them.
      static const std::regex kWord(R"([^\s'"|]+)");
      for (auto it = std::sregex_iterator(spec.target.begin(), spec.target.end(), kWord);
           it != std::sregex_iterator(); ++it) {
        std::string w = it->str();
        const size_t colon = w.find(':');
        if (colon != std::string::npos && w.find('/') > colon) w = w.substr(colon + 1);
        if (w.empty() || w[0] == '-') continue;
        glob_t g{};
        if (glob(w.c_str(), 0, nullptr, &g) == 0) {
          for (size_t i = 0; i < g.gl_pathc; ++i) {
            std::error_code ec;
            if (fs::is_regular_file(g.gl_pathv[i], ec)) file(g.gl_pathv[i]);
          }
        }
        globfree(&g);
      }
      continue;
    }
    for (const std::string& path : Expand(spec.target, what)) {
      text += (spec.kind == Spec::Kind::kScp ? "scp\n" : "ark\n");
      file(path);
      if (spec.kind != Spec::Kind::kScp) continue;
      std::set<std::string> archives;  // what the scp points into, each once
      const std::string dir = fs::path(path).parent_path().string();
      for (const auto& [key, rx] : ReadScp(path)) {
        archives.insert(ResolveTablePath(ParseRxspec(rx).path, dir));
      }
      for (const std::string& a : archives) file(a);
    }
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
    spec.path = ResolveTablePath(spec.path, dir);
    std::vector<int32_t> v = rx.Read(spec, key);
    visit(key, v, fmt::format("{}: utterance '{}'", part.name, key));
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
