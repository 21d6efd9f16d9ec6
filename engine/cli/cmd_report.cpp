// mavg report table|speedup|paper|model|runs|epochs|html|compare|verdicts|bootstrap
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>

#include "engine/cli/commands.h"
#include "engine/core/error.h"
#include "engine/core/files.h"
#include "engine/core/words.h"
#include "engine/decode/score.h"
#include "engine/report/contrast_report.h"
#include "engine/report/criteria.h"
#include "engine/report/html_page.h"
#include "engine/report/paired_arms.h"
#include "engine/report/paper.h"
#include "engine/report/perf_model.h"
#include "engine/report/runs_table.h"
#include "engine/report/stats_report.h"
#include "engine/report/tables.h"
#include "engine/report/verdicts_report.h"

namespace mavg::cli {
namespace {

std::vector<std::pair<std::string, std::string>> ParseWhere(const std::vector<std::string>& in) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& s : in) {
    const size_t eq = s.find('=');
    MAVG_CHECK(eq != std::string::npos && eq > 0, "--where '{}': expected AXIS=VALUE", s);
    out.emplace_back(s.substr(0, eq), s.substr(eq + 1));
  }
  return out;
}

std::unique_ptr<Store> OpenStore(const std::string& results, const std::string& db) {
  const std::string path = db.empty() ? results + "/mavg.db" : db;
  MAVG_CHECK(PathExists(path), "{}: no results database (run a sweep first)", path);
  return std::make_unique<Store>(path, sql::OpenMode::kReadOnly);  // reports only read
}

// A setting from the environment, else the first default that exists (or the last).
std::string FromEnv(const char* var, const std::vector<std::string>& defaults) {
  if (const char* v = std::getenv(var); v != nullptr && *v != '\0') return v;
  for (const std::string& d : defaults) {
    if (PathExists(d)) return d;
  }
  return defaults.back();
}

using report::Aggregate;
using report::Format;

// The formats of the tables (report table, speedup) and of the flat rows (runs, epochs).
constexpr std::initializer_list<Format> kTableFormats = {Format::kMd, Format::kCsv, Format::kLatex,
                                                         Format::kJson};
constexpr std::initializer_list<Format> kRowFormats = {Format::kCsv, Format::kJson};

// A run's test-set scores: RUN_DIR/decode_test.txt, or such a file given directly.
std::vector<UtteranceErrors> ReadTestScores(const std::string& path, const char* flag) {
  MAVG_CHECK(PathExists(path), "{}: {}: no such run directory or file", flag, path);
  const std::string file = IsDirectory(path) ? path + "/decode_test.txt" : path;
  MAVG_CHECK(PathExists(file), "{}: {} does not exist (a run that decoded its test set writes it)",
             flag, file);
  std::vector<UtteranceErrors> out;
  for (const UtteranceScore& u : ReadAlignments(file)) {
    out.push_back({u.id, u.Errors(), u.RefWords()});
  }
  return out;
}

// An arm given as AXIS=V[,AXIS=V]: it selects runs of a sweep (`report compare SWEEP`).
bool IsSelection(const std::string& arm) { return arm.find('=') != std::string::npos; }

Selection ParseSelection(const std::string& text, const std::string& flag) {
  Selection out;
  for (const std::string& item : SplitTrimmed(text)) {
    const size_t eq = item.find('=');
    MAVG_CHECK(eq != std::string::npos && eq > 0 && eq + 1 < item.size(),
               "{} '{}': expected AXIS=VALUE[,AXIS=VALUE] (with a sweep, an arm selects runs)",
               flag, text);
    out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
  }
  return out;
}

// The arms' runs of one sweep, paired by replicate: a one-line error for an unknown sweep or
// key, a value no run has, or arms without a replicate in common.
EffectRuns PairedFromStore(Store& store, const std::string& sweep,
                           const std::vector<std::pair<std::string, std::string>>& flags,
                           const Selection& where, const std::string& metric) {
  store.RequireSweep(sweep);
  SweepRunsCache cache(store);
  const std::vector<ReportRun>& runs = *cache.Find(sweep);
  const std::vector<std::string> metrics = MetricNames(runs);
  MAVG_CHECK(std::find(metrics.begin(), metrics.end(), metric) != metrics.end(),
             "no run of sweep '{}' has the metric '{}' (available: {})", sweep, metric,
             fmt::join(metrics, ", "));
  std::vector<ArmSelection> arms;
  std::vector<std::string> names;
  for (const auto& [flag, text] : flags) {
    Selection values = where;
    const Selection own = ParseSelection(text, flag);
    values.insert(values.end(), own.begin(), own.end());
    arms.push_back({sweep, values});
    names.push_back(flag.substr(2));  // a, b, a1, ...
  }
  const EffectRuns paired = LoadPairedArms(cache, arms, names, metric);
  MAVG_CHECK(paired.missing.empty(), "{}", paired.missing);
  if (paired.replicates.empty()) {
    std::string list;
    for (size_t k = 0; k < arms.size(); ++k) {
      const ArmCounts& c = paired.counts[k];
      list += fmt::format("{}{}: {} runs, {} ended", list.empty() ? "" : "; ", names[k], c.runs,
                          c.ended);
    }
    MAVG_FAIL("the arms have no replicate in common where every run has ended ({})", list);
  }
  return paired;
}

// The selection and pairing, for the text and JSON of `report compare SWEEP`.
std::string PairingText(const std::string& sweep, const std::string& metric,
                        const std::vector<std::pair<std::string, std::string>>& flags,
                        const Selection& where, const EffectRuns& paired) {
  std::string out = fmt::format("sweep {}, metric {}", sweep, metric);
  if (!where.empty()) out += ", where " + SelectionText(where);
  out += "\n";
  for (size_t k = 0; k < flags.size(); ++k) {
    const ArmCounts& c = paired.counts[k];
    out += fmt::format(
        "{}: {} ({} runs: {} ended, {} collapsed or diverged, {} to end, {} "
        "failed or without the metric)\n",
        flags[k].first.substr(2), flags[k].second, c.runs, c.ended, c.collapsed, c.waiting,
        c.unusable);
  }
  return out + fmt::format("paired by replicate: {} (replicates {})\n", paired.replicates.size(),
                           fmt::join(paired.replicates, ", "));
}

nlohmann::json PairingJson(const std::string& sweep, const std::string& metric,
                           const std::vector<std::pair<std::string, std::string>>& flags,
                           const Selection& where, const EffectRuns& paired) {
  nlohmann::json arms = nlohmann::json::object(), w = nlohmann::json::object();
  for (const auto& [k, v] : where) w[k] = v;
  for (size_t k = 0; k < flags.size(); ++k) {
    const ArmCounts& c = paired.counts[k];
    arms[flags[k].first.substr(2)] = {
        {"selection", flags[k].second}, {"runs", c.runs},       {"ended", c.ended},
        {"collapsed", c.collapsed},     {"waiting", c.waiting}, {"unusable", c.unusable}};
  }
  return {{"sweep", sweep},
          {"metric", metric},
          {"where", w},
          {"arms", arms},
          {"replicates", paired.replicates}};
}

}  // namespace

void AddReportCommand(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("report", "Tables from the results database");
  cmd->require_subcommand(1);
  struct Args {
    std::string results = "results", db, name;
    std::vector<std::string> where;
    TableOptions table;
    SpeedupOptions speedup;
    std::string baseline = "parallel.workers=1";
    PaperOptions paper;
    PaperProjectionOptions model;
    std::string model_reference = "sweeps/paper/reference.yaml";
    std::string runs_format = "csv", out;
    std::string table_agg = "mean", table_format = "md", speedup_format = "md";
    HtmlPageOptions html;
    std::vector<std::string> figure_where;
    // compare, bootstrap
    std::string arm_a, arm_b, arm_a1, arm_b1, arm_a2, arm_b2, stats_format = "text";
    std::vector<std::string> contrasts;  // compare SWEEP --contrast
    std::string metric = "wer";
    // verdicts
    std::string criteria, verdicts_format = "text";
    CompareOptions compare;
    double margin = 0, detect = 0;
    BootstrapOptions bootstrap;
  };
  auto a = std::make_shared<Args>();
  auto common = [a](CLI::App* c) {
    c->add_option("name", a->name, "Sweep name")->required();
    c->add_option("--where", a->where, "Fix another axis: AXIS=VALUE (repeatable)");
    c->add_option("--results", a->results, "Results directory")->capture_default_str();
    c->add_option("--db", a->db, "Results database (default: RESULTS/mavg.db)");
  };

  CLI::App* table =
      cmd->add_subcommand("table", "A metric by two axes, mean ± std over replicates");
  common(table);
  table->add_option("--rows", a->table.rows, "Axis for the rows, or several: A,B,...")->required();
  table->add_option("--cols", a->table.cols, "Axis for the columns");
  table
      ->add_option("--value", a->table.value,
                   "Metric: a result key (test_acc, cv_acc, wer, wall_s, ...) or test_error, "
                   "cv_error, epoch_s, projected_epoch_s, comm_s, final_cv_loss, ..., or "
                   "time_to_target (training seconds to the --baseline runs' final CV loss)")
      ->capture_default_str();
  table
      ->add_option("--baseline", a->baseline,
                   "AXIS=VALUE of the runs whose final CV loss is time_to_target's target")
      ->capture_default_str();
  table->add_option("--agg", a->table_agg, "mean | min | max")->capture_default_str();
  table->add_option("--format", a->table_format, "md | csv | latex | json")->capture_default_str();
  table->callback([a] {
    a->table.agg =
        ParseOneOf(a->table_agg, {Aggregate::kMean, Aggregate::kMin, Aggregate::kMax}, "--agg");
    a->table.format = ParseOneOf(a->table_format, kTableFormats, "--format");
    auto store = OpenStore(a->results, a->db);
    a->table.where = ParseWhere(a->where);
    const auto b = ParseWhere({a->baseline});
    a->table.baseline_axis = b[0].first;
    a->table.baseline = b[0].second;
    std::cout << MetricTable(a->name, LoadSweepRuns(*store, a->name), a->table);
  });

  CLI::App* speedup = cmd->add_subcommand("speedup", "Epoch time, speedup and efficiency");
  common(speedup);
  speedup->add_option("--baseline", a->baseline, "AXIS=VALUE of the reference runs")
      ->capture_default_str();
  speedup->add_option(
      "--interconnect", a->speedup.interconnect,
      "Add a model column, every combine on this link: ib-fdr, ib-edr, ib-hdr, ib-ndr, "
      "eth-1g, pcie3-x16, nvlink4, ..., or RATE[@LATENCY] as tc writes them (100mbit@2ms)");
  speedup->add_option(
      "--inter", a->speedup.inter,
      "Model column: the inter-node link of flat and global combines (ib-hdr, ...)");
  speedup->add_option("--intra", a->speedup.intra,
                      "Model column: the intra-node link of two-level runs' group combines "
                      "(nvlink4, ...); needs --inter");
  speedup->add_option("--staging", a->speedup.staging, "Host staging link for the model column");
  speedup->add_option("--fit", a->speedup.fit,
                      "Model column from a measured all-reduce (mavg bench allreduce --json)");
  speedup->add_option("--format", a->speedup_format, "md | csv | latex | json")
      ->capture_default_str();
  speedup->callback([a] {
    a->speedup.format = ParseOneOf(a->speedup_format, kTableFormats, "--format");
    auto store = OpenStore(a->results, a->db);
    const auto w = ParseWhere({a->baseline});
    a->speedup.axis = w[0].first;
    a->speedup.baseline = w[0].second;
    a->speedup.where = ParseWhere(a->where);
    std::cout << SpeedupTable(a->name, LoadSweepRuns(*store, a->name), a->speedup);
  });

  CLI::App* paper = cmd->add_subcommand("paper", "Our numbers beside Su & Chen 2015's");
  common(paper);
  paper->add_option("--metric", a->paper.metric, "Our metric (test_error, wer, ...)")
      ->capture_default_str();
  paper->add_option("--reference", a->paper.reference, "The paper's numbers (YAML)")
      ->capture_default_str();
  paper->callback([a] {
    auto store = OpenStore(a->results, a->db);
    a->paper.where = ParseWhere(a->where);
    std::cout << PaperComparison(a->name, LoadSweepRuns(*store, a->name), a->paper);
  });

  CLI::App* model = cmd->add_subcommand(
      "model", "The alpha-beta averaging model applied to the paper's own setup");
  model->add_option("--interconnect", a->model.link, "Network preset")->capture_default_str();
  model->add_option("--staging", a->model.staging, "Host staging preset ('' for none)")
      ->capture_default_str();
  model->add_option("--params", a->model.params, "Parameters averaged")->capture_default_str();
  model->add_option("--frames", a->model.frames, "Training frames per epoch")
      ->capture_default_str();
  model->add_option("--minibatch", a->model.minibatch, "Frames per minibatch")
      ->capture_default_str();
  model->add_option("--average-every", a->model.average_every, "Minibatches between averagings")
      ->capture_default_str();
  model->add_option("--time-unit", a->model.time_unit_s, "Seconds per time.dat unit (assumed)")
      ->capture_default_str();
  model->add_option("--reference", a->model_reference, "The paper's numbers (YAML)")
      ->capture_default_str();
  model->callback([a] { std::cout << PaperProjection(a->model, a->model_reference); });

  // Flat rows (runs, epochs): the same options, printed or written to --out.
  auto rows_command = [a](CLI::App* c) {
    c->add_option("name", a->name, "Sweep name")->required();
    c->add_option("--format", a->runs_format, "csv | json")
        ->check(CLI::IsMember({"csv", "json"}))
        ->capture_default_str();
    c->add_option("--out", a->out, "Write to this file (atomically) instead of stdout");
    c->add_option("--results", a->results, "Results directory")->capture_default_str();
    c->add_option("--db", a->db, "Results database (default: RESULTS/mavg.db)");
  };
  auto print_rows = [a](const std::string& text, size_t rows, const char* what) {
    if (a->out.empty()) {
      std::cout << text;
    } else {
      WriteFileAtomic(a->out, text);
      std::cout << fmt::format("{} {} of sweep {} in {}\n", rows, what, a->name, a->out);
    }
  };

  CLI::App* runs = cmd->add_subcommand(
      "runs", "One flat row per run: axes, varying config keys, status, every metric");
  rows_command(runs);
  runs->callback([a, print_rows] {
    auto store = OpenStore(a->results, a->db);
    const RunsTable t = LoadRunsTable(*store, a->name);
    const bool json = ParseOneOf(a->runs_format, kRowFormats, "--format") == Format::kJson;
    print_rows(json ? RunsJson(t) : RunsCsv(t), t.rows.size(), "runs");
  });

  CLI::App* epochs = cmd->add_subcommand(
      "epochs", "One flat row per epoch of each run: axes, status, the epoch's record");
  rows_command(epochs);
  epochs->callback([a, print_rows] {
    auto store = OpenStore(a->results, a->db);
    const EpochsTable t = MakeEpochsTable(a->name, LoadSweepRuns(*store, a->name));
    const bool json = ParseOneOf(a->runs_format, kRowFormats, "--format") == Format::kJson;
    print_rows(json ? RowsJson(t.columns, t.rows) : RowsCsv(t.columns, t.rows), t.rows.size(),
               "epochs");
  });

  CLI::App* html = cmd->add_subcommand(
      "html", "One page with the sweep's spec, status, tables, figures and runs (offline HTML)");
  html->add_option("name", a->name, "Sweep name")->required();
  html->add_option("--out", a->html.out_dir, "Directory of the page (index.html in it)")
      ->required();
  html->add_option("--metric", a->html.data.metrics,
                   "A metric table (repeatable; default: wer, test_error, cv_error, "
                   "final_cv_loss, epoch_s, wall_s where the runs have them)")
      ->allow_extra_args(false);
  html->add_option("--rows", a->html.data.rows,
                   "Axes of the metric tables' rows, A[,B...] (default: from the axes)");
  html->add_option("--cols", a->html.data.cols, "Axis of the metric tables' columns");
  html->add_option("--baseline", a->baseline, "AXIS=VALUE of the speedup table's reference runs")
      ->capture_default_str();
  html->add_option("--interconnect", a->html.data.interconnect,
                   "The speedup table's model column: every combine on this link ('' for none)")
      ->capture_default_str();
  html->add_option("--figure-where", a->figure_where,
                   "AXIS=VALUE fixed in the time-breakdown and CV-curve figures (repeatable)")
      ->allow_extra_args(false);
  html->add_option("--reference", a->html.reference,
                   "The paper's numbers for the speedup figure (YAML)");
  html->add_option("--results", a->results, "Results directory")->capture_default_str();
  html->add_option("--db", a->db, "Results database (default: RESULTS/mavg.db)");
  html->callback([a] {
    auto store = OpenStore(a->results, a->db);
    const auto b = ParseWhere({a->baseline});
    a->html.data.baseline_axis = b[0].first;
    a->html.data.baseline = b[0].second;
    a->html.data.figure_where = ParseWhere(a->figure_where);
    MAVG_CHECK(a->html.data.cols.empty() || !a->html.data.rows.empty(),
               "--cols needs --rows (the table layout is chosen whole or given whole)");
    // Debian's python3 has jinja2 and matplotlib; another python3 earlier in PATH may not.
    a->html.python = FromEnv("MAVG_PYTHON", {"/usr/bin/python3", "python3"});
    a->html.analysis_dir = FromEnv("MAVG_ANALYSIS_DIR", {MAVG_SOURCE_DIR "/analysis"});
    if (a->html.reference.empty()) {
      for (const char* r :
           {"sweeps/paper/reference.yaml", MAVG_SOURCE_DIR "/sweeps/paper/reference.yaml"}) {
        if (a->html.reference.empty() && PathExists(r)) a->html.reference = r;
      }
    }
    const std::string page = WriteHtmlReport(*store, a->name, a->html);
    std::cout << page << "\n";
  });

  CLI::App* compare = cmd->add_subcommand(
      "compare",
      "Replicates of two arms: b - a with a t interval, equivalence, the smallest detectable "
      "difference and an exact rank test; with --a1 --b1 --a2 --b2 the 2x2 interaction; a SWEEP "
      "alone: the contrasts its spec declares (compare:), each with its verdict");
  compare->add_option("sweep", a->name,
                      "A sweep of the store: --a, --b (...) then select its runs, AXIS=VALUE; "
                      "without them, its spec's contrasts are answered");
  compare->add_option("--contrast", a->contrasts,
                      "With a SWEEP and no arms: answer only this contrast of its spec "
                      "(repeatable)");
  compare->add_option("--a", a->arm_a,
                      "Arm a's values: 7.0,6.9,x (x or collapsed: a collapsed run); after a "
                      "SWEEP, its runs: AXIS=VALUE[,AXIS=VALUE]");
  compare->add_option("--b", a->arm_b, "Arm b's values");
  compare->add_option("--a1", a->arm_a1, "Interaction: arm a at the first setting");
  compare->add_option("--b1", a->arm_b1, "Interaction: arm b at the first setting");
  compare->add_option("--a2", a->arm_a2, "Interaction: arm a at the second setting");
  compare->add_option("--b2", a->arm_b2, "Interaction: arm b at the second setting");
  compare->add_flag("--paired", a->compare.paired,
                    "The same position in every arm is the same seed (implied with a SWEEP: "
                    "its runs pair by replicate)");
  compare->add_option("--where", a->where,
                      "With a SWEEP: fix another axis for every arm, AXIS=VALUE (repeatable)");
  compare->add_option("--metric", a->metric, "With a SWEEP: the metric compared")
      ->capture_default_str();
  compare->add_option("--results", a->results, "With a SWEEP: results directory")
      ->capture_default_str();
  compare->add_option("--db", a->db, "With a SWEEP: results database (default: RESULTS/mavg.db)");
  CLI::Option* margin = compare->add_option(
      "--margin", a->margin, "Equivalence margin, fixed before the runs (two one-sided tests)");
  CLI::Option* detect = compare->add_option(
      "--detect", a->detect,
      "A difference the design should detect (e.g. the paper's): with --paired, prints the seeds "
      "it needs at the spread of these");
  compare->add_option("--level", a->compare.level, "Confidence level; the tests' alpha is 1 - it")
      ->capture_default_str();
  compare->add_option("--power", a->compare.power, "Power of the smallest detectable difference")
      ->capture_default_str();
  compare->add_flag("--higher-is-better", a->compare.higher_is_better,
                    "Higher values are better (accuracy): a collapsed run ranks lowest");
  compare->add_option("--format", a->stats_format, "text | json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  compare->callback([a, margin, detect] {
    CompareOptions& o = a->compare;
    MAVG_CHECK(o.level > 0 && o.level < 1, "--level must lie between 0 and 1, not {}", o.level);
    MAVG_CHECK(o.power >= 0.5 && o.power < 1, "--power must lie in [0.5, 1), not {}", o.power);
    if (margin->count() > 0) {
      MAVG_CHECK(std::isfinite(a->margin) && a->margin > 0, "--margin must be positive, not {}",
                 a->margin);
      o.margin = a->margin;
    }
    if (detect->count() > 0) {
      MAVG_CHECK(std::isfinite(a->detect) && a->detect != 0,
                 "--detect must be a non-zero number, not {}", a->detect);
      MAVG_CHECK(o.paired,
                 "--detect needs --paired (the seeds a difference needs are a paired "
                 "design's figure)");
      o.detect = a->detect;
    }
    const bool two = !a->arm_a.empty() || !a->arm_b.empty();
    const bool four =
        !a->arm_a1.empty() || !a->arm_b1.empty() || !a->arm_a2.empty() || !a->arm_b2.empty();
    MAVG_CHECK(!(two && four),
               "--a/--b (two arms) and --a1 --b1 --a2 --b2 (an interaction) "
               "cannot be combined");
    const bool json = a->stats_format == "json";
    if (!a->name.empty() && !two && !four) {
      // The questions the sweep's spec declares, each with its verdict.
      MAVG_CHECK(margin->count() == 0 && detect->count() == 0 && a->where.empty(),
                 "report compare {}: --margin, --detect and --where go with --a and --b; the "
                 "spec's contrasts carry their own (compare: in the spec)",
                 a->name);
      auto store = OpenStore(a->results, a->db);
      const std::optional<SweepRecord> sweep = store->GetSweep(a->name);
      store->RequireSweep(a->name);
      const StoredContrasts stored =
          ParseStoredContrasts(sweep->spec_yaml, fmt::format("sweep {}'s spec", a->name));
      MAVG_CHECK(!stored.contrasts.empty(),
                 "sweep {}'s spec declares no contrasts: add compare: to it (README, Sweeps) or "
                 "give the arms, --a AXIS=VALUE --b AXIS=VALUE",
                 a->name);
      SweepRunsCache cache(*store);
      const ContrastsReport r = ComputeContrasts(a->name, stored, a->contrasts, cache);
      std::cout << (json ? ContrastsJson(r).dump(2) + "\n" : ContrastsText(r));
      return;
    }
    MAVG_CHECK(a->contrasts.empty(),
               "--contrast answers a contrast of a sweep's spec: give the "
               "sweep and no arms (report compare SWEEP --contrast NAME)");
    std::vector<std::pair<std::string, std::string>> flags;
    if (four) {
      flags = {{"--a1", a->arm_a1}, {"--b1", a->arm_b1}, {"--a2", a->arm_a2}, {"--b2", a->arm_b2}};
    } else {
      flags = {{"--a", a->arm_a}, {"--b", a->arm_b}};
    }
    if (a->name.empty()) {
      for (const auto& [flag, text] : flags) {
        MAVG_CHECK(!IsSelection(text),
                   "{} '{}' selects runs: name their sweep first (report compare SWEEP --a "
                   "AXIS=VALUE --b AXIS=VALUE)",
                   flag, text);
      }
      MAVG_CHECK(a->where.empty(), "--where selects runs: name their sweep first");
    } else {
      // The arms' runs from the store, paired by replicate.
      for (const auto& [flag, text] : flags) {
        MAVG_CHECK(!text.empty(), "{}: no selection (with a sweep, give AXIS=VALUE)", flag);
        MAVG_CHECK(IsSelection(text),
                   "{} '{}': with a sweep, an arm selects its runs: AXIS=VALUE[,AXIS=VALUE]", flag,
                   text);
      }
      o.paired = true;
      auto store = OpenStore(a->results, a->db);
      const Selection where = ParseWhere(a->where);
      const EffectRuns paired = PairedFromStore(*store, a->name, flags, where, a->metric);
      const std::string head = PairingText(a->name, a->metric, flags, where, paired);
      nlohmann::json pairing = PairingJson(a->name, a->metric, flags, where, paired);
      const std::vector<Arm>& arms = paired.arms;
      if (!four) {
        const Comparison c = Compare(arms[0], arms[1], o);
        nlohmann::json j = ComparisonJson(c, o);
        j.update(pairing);
        std::cout << (json ? j.dump(2) + "\n" : head + ComparisonText(c, o));
      } else {
        const Interaction r = CompareInteraction(arms[0], arms[1], arms[2], arms[3], o);
        nlohmann::json j = InteractionJson(r, o);
        j.update(pairing);
        std::cout << (json ? j.dump(2) + "\n" : head + InteractionText(r, o));
      }
      return;
    }
    if (!four) {
      const Arm arm_a = ParseArm(a->arm_a, "--a"), arm_b = ParseArm(a->arm_b, "--b");
      MAVG_CHECK(!o.paired || arm_a.size() == arm_b.size(),
                 "--paired: --a has {} values but --b {}", arm_a.size(), arm_b.size());
      const Comparison c = Compare(arm_a, arm_b, o);
      std::cout << (json ? ComparisonJson(c, o).dump(2) + "\n" : ComparisonText(c, o));
      return;
    }
    const Arm a1 = ParseArm(a->arm_a1, "--a1"), b1 = ParseArm(a->arm_b1, "--b1");
    const Arm a2 = ParseArm(a->arm_a2, "--a2"), b2 = ParseArm(a->arm_b2, "--b2");
    MAVG_CHECK(
        !o.paired || (a1.size() == b1.size() && a1.size() == a2.size() && a1.size() == b2.size()),
        "--paired: --a1, --b1, --a2 and --b2 have {}, {}, {} and {} values", a1.size(), b1.size(),
        a2.size(), b2.size());
    const Interaction r = CompareInteraction(a1, b1, a2, b2, o);
    std::cout << (json ? InteractionJson(r, o).dump(2) + "\n" : InteractionText(r, o));
  });

  CLI::App* verdicts = cmd->add_subcommand(
      "verdicts",
      "A criteria file's effects judged on the store's runs, paired by replicate: agrees, "
      "inconclusive or contradicted, with the baseline scaling and the multiplicity");
  verdicts->add_option("criteria", a->criteria, "The criteria file (YAML)")->required();
  verdicts->add_option("--results", a->results, "Results directory")->capture_default_str();
  verdicts->add_option("--db", a->db, "Results database (default: RESULTS/mavg.db)");
  verdicts->add_option("--format", a->verdicts_format, "text | json | markdown")
      ->check(CLI::IsMember({"text", "json", "markdown"}))
      ->capture_default_str();
  verdicts->callback([a] {
    const Criteria criteria = LoadCriteria(a->criteria);
    auto store = OpenStore(a->results, a->db);
    SweepRunsCache cache(*store);
    const VerdictsReport r = ComputeVerdicts(criteria, cache);
    if (a->verdicts_format == "json") {
      std::cout << VerdictsJson(r).dump(2) << "\n";
    } else if (a->verdicts_format == "markdown") {
      std::cout << VerdictsMarkdown(r);
    } else {
      std::cout << VerdictsText(r);
    }
  });

  CLI::App* bootstrap = cmd->add_subcommand(
      "bootstrap",
      "Two runs' test WER: the difference with a paired bootstrap over the test utterances");
  bootstrap->add_option("--a", a->bootstrap.name_a, "Run a: its directory (decode_test.txt in it)")
      ->required();
  bootstrap->add_option("--b", a->bootstrap.name_b, "Run b: its directory")->required();
  bootstrap->add_option("--samples", a->bootstrap.samples, "Resamples")->capture_default_str();
  bootstrap->add_option("--seed", a->bootstrap.seed, "Seed of the resampling")
      ->capture_default_str();
  bootstrap->add_option("--level", a->bootstrap.level, "Level of the percentile interval")
      ->capture_default_str();
  bootstrap->add_option("--format", a->stats_format, "text | json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  bootstrap->callback([a] {
    const BootstrapOptions& o = a->bootstrap;
    MAVG_CHECK(o.samples > 0, "--samples must be positive, not {}", o.samples);
    MAVG_CHECK(o.level > 0 && o.level < 1, "--level must lie between 0 and 1, not {}", o.level);
    const auto scores_a = ReadTestScores(o.name_a, "--a");
    const auto scores_b = ReadTestScores(o.name_b, "--b");
    const BootstrapResult r = PairedBootstrap(scores_a, scores_b, o);
    std::cout << (a->stats_format == "json" ? BootstrapJson(r, o).dump(2) + "\n"
                                            : BootstrapText(r, o));
  });
}

}  // namespace mavg::cli
