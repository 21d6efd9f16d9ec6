#include "engine/data/dataset.h"

#include <algorithm>

#include "engine/core/error.h"

namespace mavg {

void Dataset::Append(const std::string& utt_id, const float* frames, int64_t n,
                     const int32_t* frame_labels) {
  MAVG_CHECK(dim > 0, "{}: set the feature dimension before appending '{}'", source, utt_id);
  MAVG_CHECK(n >= 0, "{}: utterance '{}' has a negative number of frames", source, utt_id);
  // A dataset is labelled throughout or not at all.
  const bool labelled = HasLabels() || (NumFrames() == 0 && frame_labels != nullptr);
  MAVG_CHECK((frame_labels != nullptr) == labelled || n == 0,
             "{}: utterance '{}' {} labels but the utterances before {}", source, utt_id,
             frame_labels != nullptr ? "has" : "has no", labelled ? "have them" : "do not");
  utt_ids.push_back(utt_id);
  offsets.push_back(offsets.back() + n);
  feats.insert(feats.end(), frames, frames + n * dim);
  if (frame_labels != nullptr) labels.insert(labels.end(), frame_labels, frame_labels + n);
}

int64_t Dataset::NumClasses() const {
  if (labels.empty()) return 0;
  return static_cast<int64_t>(*std::max_element(labels.begin(), labels.end())) + 1;
}

}  // namespace mavg
