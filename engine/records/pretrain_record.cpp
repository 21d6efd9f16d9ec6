#include "engine/records/pretrain_record.h"

namespace mavg {

nlohmann::json ToJson(const PretrainEpoch& record) {
  return records::ToJson(record, kPretrainFields);
}

PretrainEpoch PretrainEpochFromJson(const nlohmann::json& json, std::string_view where) {
  return records::FromJson(json, kPretrainFields, where);
}

PretrainLines ReadPretrainLines(const std::string& path) {
  return records::ReadRecordLines(path, kPretrainFields);
}

}  // namespace mavg
