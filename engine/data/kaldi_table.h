#pragma once
// Kaldi rspecifiers for whole tables, as Kaldi's programs take them (read-only, sequential):
//   PATH  or  ark:PATH   an archive; gzip-compressed archives (ali.1.gz) are recognised by their
//                        first two bytes and decompressed with zlib
//   PATTERN              a glob naming several archives, e.g. exp/tri4_ali/pdf.*.gz
//   scp:PATH             an scp file of `key rxspecifier` lines (each entry read by offset)
//   ark:CMD |            a pipe: CMD runs under /bin/sh and its standard output is the archive
//                        (e.g. "ark:ali-to-pdf final.mdl 'ark:gunzip -c ali.*.gz|' ark:- |")
//   A B ...              several of the above separated by blanks (a pipe stands alone: its
//                        command holds blanks)
// Kaldi's read options beside the type ("ark,s,cs:", "s,cs,ark:") are accepted: they only
// promise an order.
//
// Pipes and gzip'd archives are streamed into a temporary file first (under $TMPDIR), which is
// unlinked at once and read through /proc/self/fd: it goes with the process however the
// process ends. The archive readers check every size against a file of known length. A
// command that fails (non-zero exit, killed) is an error naming the command, its exit status
// and the last line it wrote to standard error; the last line of a successful command's
// standard error is logged.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace mavg::kaldi {

class TableSource {
 public:
  // Parses `rspecifier`, runs its pipe or decompresses its gzip'd archives. `what` names the
  // setting in messages (e.g. "data.ali").
  TableSource(const std::string& rspecifier, const std::string& what);
  // One archive file named by its path, taken as it is: no rspecifier syntax, no globbing, no
  // splitting at blanks (a data dir's own ali.ark, whose path may hold any character).
  static std::shared_ptr<TableSource> ArchiveFile(const std::string& path);
  ~TableSource();
  TableSource(const TableSource&) = delete;
  TableSource& operator=(const TableSource&) = delete;

  struct Part {
    std::string name;  // for messages: the file, or the command
    std::string path;  // a file to read (/proc/self/fd/N for pipes and gzip)
    bool scp = false;  // an scp file rather than an archive
  };
  const std::vector<Part>& Parts() const { return parts_; }
  const std::string& Rspecifier() const { return rspecifier_; }
  const std::string& What() const { return what_; }

 private:
  TableSource() = default;
  void AddArchive(const std::string& path);
  void RunPipe(const std::string& command);
  int TemporaryFile(const std::string& name);  // an unlinked temporary file's descriptor

  std::string rspecifier_, what_;
  std::vector<Part> parts_;
  std::vector<int> descriptors_;  // of the temporary files; closed in the destructor
};

// Every int32 vector of the table, in order (scp entries by their rxspecifiers). `where` names
// the file (or command) and the key for messages.
using Int32VectorVisitor = std::function<void(const std::string& key, std::vector<int32_t>& value,
                                              const std::string& where)>;
void ForEachInt32Vector(const TableSource& table, const Int32VectorVisitor& visit);

// Whether an rspecifier is a pipe ("... |").
bool IsPipeRspecifier(const std::string& rspecifier);

// What a cache key holds of a table, without running or decompressing anything: the SHA-256
// of every file's bytes (an scp's and those of the archives it names); for a pipe, its command
// text and the bytes of every file the command names (its words that are existing files after
// glob expansion, with Kaldi's "ark:" and quotes stripped), so that re-aligning into the same
// directory changes the key.
std::string TableFingerprint(const std::string& rspecifier, const std::string& what);

}  // namespace mavg::kaldi
