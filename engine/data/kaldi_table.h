#pragma once
// Kaldi rspecifiers for whole tables, as Kaldi's programs take them (read-only, sequential):
//   PATH  or  ark:PATH   an archive; gzip-compressed archives (ali.1.gz) are recognised by their
//                        first two bytes and decompressed with zlib
//   PATTERN              a glob naming several archives, e.g. exp/tri4_ali/ali.*.gz
//   scp:PATH             an scp file of `key rxspecifier` lines (each entry read by offset)
//   ark:CMD |            a pipe: CMD runs under /bin/sh and its standard output is the archive
//                        (e.g. "ark:ali-to-pdf final.mdl 'ark:gunzip -c ali.*.gz|' ark:- |")
//   A B ...              several of the above separated by blanks (not after a pipe, whose
//                        command holds blanks)
// Kaldi's read options after the type ("ark,s,cs:") are accepted: they only promise an order.
//
// Pipes and gzip'd archives are streamed into a temporary file first (under $TMPDIR), removed
// when the TableSource goes: the archive readers check every size against a file of known
// length. A command that fails (non-zero exit, killed) is an error naming the command, its exit
// status and the last line it wrote to standard error.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace mavg::kaldi {

class TableSource {
 public:
  // `what` names the setting in messages (e.g. "data.ali"). `base_dir`: relative paths that do
  // not exist from the working directory are tried relative to it (as data dirs' own files).
  TableSource(const std::string& rspecifier, const std::string& what,
              const std::string& base_dir = {});
  ~TableSource();
  TableSource(const TableSource&) = delete;
  TableSource& operator=(const TableSource&) = delete;

  struct Part {
    std::string name;  // for messages: the file, or the command
    std::string path;  // a regular file to read (a temporary one for pipes and gzip)
    bool scp = false;  // an scp file rather than an archive
  };
  const std::vector<Part>& Parts() const { return parts_; }
  const std::string& Rspecifier() const { return rspecifier_; }
  // SHA-256 over what every part holds (the decompressed archive, the command's output, the
  // scp and the archives it points into): the same alignments give the same fingerprint
  // wherever they come from.
  std::string Fingerprint() const;

 private:
  void AddSpec(const std::string& spec, const std::string& base_dir);
  void AddFile(const std::string& path, bool scp);
  std::string Materialise(const std::string& name);  // a new temporary file's path

  std::string rspecifier_, what_;
  std::vector<Part> parts_;
  std::vector<std::string> temporary_;  // removed in the destructor
};

// Every int32 vector of the table, in order (scp entries by their rxspecifiers). `where` names
// the file (or command) and the key for messages.
using Int32VectorVisitor = std::function<void(const std::string& key, std::vector<int32_t>& value,
                                              const std::string& where)>;
void ForEachInt32Vector(const TableSource& table, const Int32VectorVisitor& visit);

// Whether an rspecifier is a pipe ("... |").
bool IsPipeRspecifier(const std::string& rspecifier);

// What a cache key holds of a table: TableSource::Fingerprint() for files; for a pipe, which is
// not run for a key, the SHA-256 of its command text (a pipe whose inputs change under the same
// command keeps its key: clear the cache, or change the command).
std::string TableFingerprint(const std::string& rspecifier, const std::string& what);

}  // namespace mavg::kaldi
