// mavg model info MODEL | mavg model diff A B [--max-rel T]
#include <fmt/core.h>

#include <iostream>

#include "engine/backend/backend.h"
#include "engine/cli/commands.h"
#include "engine/core/error.h"
#include "engine/nn/model.h"

namespace mavg::cli {

void AddModelCommand(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("model", "Inspect and compare model files");
  cmd->require_subcommand(1);

  auto info_path = std::make_shared<std::string>();
  CLI::App* info = cmd->add_subcommand("info", "Architecture and feature transform of a model");
  info->add_option("model", *info_path, "Model file (model.bin)")->required();
  info->callback([info_path] {
    auto backend = CreateBackend(BackendOptions{});
    Model m = LoadModel(*info_path, *backend);
    const NetworkSpec& s = m.network->Spec();
    std::string hidden;
    for (int h : s.hidden_dims) hidden += fmt::format("{}{}", hidden.empty() ? "" : ",", h);
    std::cout << fmt::format(
        "{}: {} inputs ({} x {} frames), hidden [{}] {}, {} outputs, {} parameters, cmvn {}\n",
        *info_path, s.input_dim, m.transform.raw_dim, 2 * m.transform.context + 1, hidden,
        LayerKindName(s.activation), s.output_dim, m.network->NumParams(),
        m.transform.HasCmvn() ? "global" : "none");
  });

  struct DiffArgs {
    std::string a, b;
    double max_rel = -1.0;
  };
  auto args = std::make_shared<DiffArgs>();
  CLI::App* diff = cmd->add_subcommand(
      "diff", "Compare the parameters of two models (exit 1 if --max-rel is exceeded)");
  diff->add_option("a", args->a, "First model")->required();
  diff->add_option("b", args->b, "Second model")->required();
  diff->add_option("--max-rel", args->max_rel,
                   "Fail when max|a-b| / max|a| exceeds this (0: must be bit-identical)");
  diff->callback([args] {
    auto backend = CreateBackend(BackendOptions{});
    Model a = LoadModel(args->a, *backend);
    Model b = LoadModel(args->b, *backend);
    const ParamDiff d = DiffParams(*a.network, *b.network);
    std::cout << fmt::format(
        "params {} differing {} identical {} max_abs {:.3g} max_rel {:.3g} (max|a-b|/max|a|) "
        "max_elementwise {:.3g}\n",
        d.params, d.differing, d.differing == 0 ? "yes" : "no", d.max_abs, d.max_rel,
        d.max_elementwise);
    if (args->max_rel >= 0.0) {
      MAVG_CHECK(args->max_rel > 0.0 ? d.max_rel <= args->max_rel : d.differing == 0,
                 "models differ: max_rel {:.3g} > {:.3g} ({} of {} parameters differ)", d.max_rel,
                 args->max_rel, d.differing, d.params);
    }
  });
}

}  // namespace mavg::cli
