#pragma once
// A JSON-lines file of records (metrics.jsonl, pretrain.jsonl): each line read through the
// record's table, good lines kept beside the line as written, the others named.

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/records/field_table.h"

namespace mavg::records {

// One parsed line: the record and the whole line as written (keys outside the table too).
template <class R>
struct RecordLine {
  R row;
  nlohmann::json json;
};

template <class R>
struct RecordLines {
  std::vector<RecordLine<R>> lines;
  // One line per line left out: "<file>:<n>: why" (not JSON, a field of the wrong type, a
  // required field absent). A torn last line (a process killed mid-write) is left out silently.
  std::vector<std::string> skipped;
};

template <class R, size_t N>
RecordLines<R> ReadRecordLines(const std::string& path, const Field<R> (&table)[N]) {
  RecordLines<R> out;
  JsonLines read = ReadNumberedJsonLines(path);
  for (int number : read.not_json) {
    out.skipped.push_back(fmt::format("{}:{}: not a JSON line", path, number));
  }
  for (JsonLine& line : read.lines) {
    try {
      R row = FromJson(line.value, table, fmt::format("{}:{}", path, line.number));
      out.lines.push_back({std::move(row), std::move(line.value)});
    } catch (const Error& e) {
      out.skipped.push_back(e.what());
    }
  }
  return out;
}

}  // namespace mavg::records
