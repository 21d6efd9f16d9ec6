// pretrain.jsonl as its record (records/pretrain_record.h): the table's columns are the store's
// table `pretrain`, lines that are not records are named and the rest kept.
#include "engine/records/pretrain_record.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "engine/core/files.h"
#include "engine/store/store.h"
#include "tests/testing/test_util.h"

namespace mavg {
namespace {

TEST(PretrainEpoch, ColumnsMatchTheStoreSchema) {
  Store store(":memory:");
  auto s = store.Db().Prepare("SELECT name, type FROM pragma_table_info('pretrain')");
  std::map<std::string, std::string> schema;
  while (s.Step()) schema[s.Text(0)] = s.Text(1);
  const std::map<records::Column, std::string> sql = {{records::Column::kInteger, "INTEGER"},
                                                      {records::Column::kReal, "REAL"},
                                                      {records::Column::kText, "TEXT"}};
  std::set<std::string> fields;
  for (const auto& f : kPretrainFields) {
    if (f.column == records::Column::kNone) continue;
    const std::string name(f.name);
    fields.insert(name);
    ASSERT_TRUE(schema.count(name)) << name;
    EXPECT_EQ(schema[name], sql.at(f.column)) << name;
  }
  for (const auto& [name, type] : schema) {
    if (name == "run_id" || name == "record_json") continue;
    EXPECT_TRUE(fields.count(name)) << "column " << name << " has no field";
  }
}

TEST(PretrainEpoch, RoundTripAndLinesLeftOut) {
  PretrainEpoch r;
  r.layer = 2, r.epoch = 1, r.units = "bernoulli-bernoulli", r.frames = 1000;
  r.recon_mse = 0.25, r.cached = false, r.stack = "k", r.scheduled_momentum = 0.5;
  EXPECT_EQ(ToJson(PretrainEpochFromJson(ToJson(r), "p")), ToJson(r));
  testing::TempDir tmp;
  const std::string path = tmp.File("pretrain.jsonl");
  WriteFileAtomic(path, ToJson(r).dump() + "\n{\"epoch\": 1}\n{\"layer\": 1, \"epoch\": 2}\n");
  const PretrainLines lines = ReadPretrainLines(path);
  ASSERT_EQ(lines.lines.size(), 2u);
  EXPECT_EQ(lines.lines[0].row.stack, "k");
  EXPECT_EQ(lines.lines[1].row.epoch, 2);
  ASSERT_EQ(lines.skipped.size(), 1u);
  EXPECT_EQ(lines.skipped[0], path + ":2: no 'layer'");
}

}  // namespace
}  // namespace mavg
