// mavg data fmnist --out DIR [--src DIR] [--train-limit N] [--seed S] [--force]
#include <iostream>

#include "engine/cli/commands.h"
#include "engine/data/fmnist.h"

namespace mavg::cli {

void AddDataCommand(CLI::App& app) {
  auto out = std::make_shared<std::string>();
  auto src = std::make_shared<std::string>("/usr/share/datasets/fashion-mnist");
  auto opts = std::make_shared<FmnistImportOptions>();
  CLI::App* cmd = app.add_subcommand("data", "Build or import datasets as Kaldi data dirs");
  cmd->require_subcommand(1);
  CLI::App* fm = cmd->add_subcommand(
      "fmnist", "Import Fashion-MNIST (Debian's dataset-fashion-mnist) into train/dev/test");
  fm->add_option("--out", *out, "Output directory (gets train/, dev/, test/)")->required();
  fm->add_option("--src", *src, "Directory with the idx(.gz) files")->capture_default_str();
  fm->add_option("--seed", opts->seed, "Seed of the dev hold-out")->capture_default_str();
  fm->add_option("--dev-fraction", opts->dev_fraction, "Fraction of train held out as dev")
      ->capture_default_str();
  fm->add_option("--train-limit", opts->train_limit, "Keep only N training images (0: all)");
  fm->add_option("--test-limit", opts->test_limit, "Keep only N test images (0: all)");
  fm->add_flag("--force", opts->force, "Replace an existing output directory");
  fm->callback([out, src, opts] {
    ImportFashionMnist(*src, *out, *opts);
    std::cout << "wrote " << *out << "/{train,dev,test}" << std::endl;
  });
}

}  // namespace mavg::cli
