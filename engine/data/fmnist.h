#pragma once
// Import of Fashion-MNIST (Debian package `fashion-mnist`: IDX files under
// /usr/share/datasets/fashion-mnist) into three Kaldi data dirs, train/ dev/ test/, so the image
// task runs through the same pipeline as speech: each image is a one-frame utterance of
// rows*cols (784) floats, pixel/255 in [0, 1], labelled with its class id (0-9).
//
// Each dir holds feats.ark + feats.scp (binary float matrices, scp with absolute paths),
// ali.ark (an int32 vector of length 1 per utterance), utt2spk and spk2utt (utt -> utt), and
// text (utt -> class name, e.g. "ankle_boot"). Utterance ids carry the image's index in its
// IDX file, zero-padded ("fmnist-train-00042", "fmnist-dev-00007", "fmnist-test-00123"), so
// sorted order is file order. dev is a random hold-out of the training images (fixed seed,
// portable shuffle), written in original order like train.

#include <cstdint>
#include <string>

namespace mavg {

inline constexpr char kFashionMnistDefaultDir[] = "/usr/share/datasets/fashion-mnist";

struct FmnistImportOptions {
  uint64_t seed = 777;        // for the dev hold-out
  double dev_fraction = 0.1;  // of the training images, rounded; dev and train non-empty
  int64_t train_limit = 0;    // keep the first N train images after the split (0: all)
  int64_t dev_limit = 0;      // keep the first N dev images (0: all)
  int64_t test_limit = 0;     // keep the first N test images (0: all)
  bool force = false;         // replace an existing out_dir
};

// Reads train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz and
// t10k-labels-idx1-ubyte.gz from src_dir and writes out_dir/{train,dev,test}. Everything is
// written into `out_dir.tmp-<pid>` and renamed into place at the end, so a failure leaves no
// partial out_dir; an existing out_dir is an error unless options.force.
void ImportFashionMnist(const std::string& src_dir, const std::string& out_dir,
                        const FmnistImportOptions& options = {});

// "tshirt_top", "trouser", ..., "ankle_boot" for class ids 0-9.
const char* FashionMnistClassName(int label);

}  // namespace mavg
