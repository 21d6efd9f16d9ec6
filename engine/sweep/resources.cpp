#include "engine/sweep/resources.h"

#include <algorithm>
#include <charconv>

#include "engine/core/error.h"
#include "engine/core/nearest.h"
#include "engine/core/words.h"

namespace mavg {
namespace {

std::string JoinKeys(const std::vector<std::string>& keys) {
  std::string s;
  for (const std::string& k : keys) s += (s.empty() ? "" : ", ") + k;
  return s;
}

int Line(const YAML::Node& n) { return n.Mark().line + 1; }

// sbatch options the generated script sets itself, and what to use instead: a second value
// would silently win or lose depending on sbatch's order of reading them.
struct Managed {
  const char* long_name;
  const char* short_name;  // "" if none
  const char* instead;
};
constexpr Managed kManaged[] = {
    {"--array", "-a", "mavg submits one job array per resource shape"},
    {"--job-name", "-J", "jobs are named mavg-<sweep>, which sweep status and cancel look for"},
    {"--output", "-o", "job logs go to the sweep's slurm/logs/"},
    {"--error", "-e", "job logs go to the sweep's slurm/logs/"},
    {"--open-mode", "", "job logs are appended to across requeues"},
    {"--chdir", "-D", "jobs start in the directory sweep run ran in"},
    {"--requeue", "", "every job is requeueable (preemption resumes its checkpoint)"},
    {"--no-requeue", "", "every job is requeueable (preemption resumes its checkpoint)"},
    {"--signal", "", "use the --signal-seconds flag"},
    {"--ntasks", "-n", "tasks are the MPI ranks (parallel.workers with parallel.mode mpi)"},
    {"--cpus-per-task", "-c", "use resources.threads"},
    {"--gpus-per-task", "", "use resources.gpus_per_worker"},
    // Options that conflict with those mavg writes: sbatch refuses the pair, or one silently
    // decides.
    {"--gpus", "-G", "use resources.gpus_per_worker"},
    {"--gpus-per-node", "", "use resources.gpus_per_worker"},
    {"--gpus-per-socket", "", "use resources.gpus_per_worker"},
    {"--cpus-per-gpu", "", "use resources.threads"},
    {"--mem-per-cpu", "", "use resources.mem (per node)"},
    {"--mem-per-gpu", "", "use resources.mem (per node)"},
    {"--ntasks-per-node", "", "tasks are the MPI ranks; spread them with resources.nodes"},
    {"--ntasks-per-gpu", "", "tasks are the MPI ranks; one GPU each with gpus_per_worker"},
    {"--time", "-t", "use resources.time or the --time flag"},
    {"--mem", "", "use resources.mem"},
    {"--nodes", "-N", "use resources.nodes"},
    {"--qos", "-q", "use resources.qos"},
    {"--constraint", "-C", "use resources.constraint"},
    {"--partition", "-p", "use the --partition flag"},
    {"--account", "-A", "use the --account flag"},
    {"--parsable", "", "mavg reads sbatch's answer itself"},
    {"--wrap", "", "mavg writes the batch script"},
    {"--wait", "-W", "use sweep run --wait"},
};

// The managed option an sbatch entry names (exactly, or as the unambiguous prefix sbatch's
// option parser would take it for), or nullptr.
const Managed* ManagedOption(const std::string& option) {
  std::string name = option.substr(0, option.find_first_of("= \t"));
  if (!name.starts_with("--")) name = name.substr(0, 2);  // -p debug, -pdebug
  for (const Managed& m : kManaged) {
    if (name == m.long_name || (*m.short_name != '\0' && name == m.short_name)) return &m;
  }
  if (name.starts_with("--") && name.size() > 3) {
    for (const Managed& m : kManaged) {
      if (std::string(m.long_name).starts_with(name)) return &m;
    }
  }
  return nullptr;
}

bool AllOf(const std::string& s, const char* chars) {
  return !s.empty() && s.find_first_not_of(chars) == std::string::npos;
}

constexpr const char* kDigits = "0123456789";
constexpr const char* kNameChars =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-";

}  // namespace

const std::vector<std::string>& ResourceKeys() {
  static const std::vector<std::string> kKeys = {"time", "threads", "gpus_per_worker", "nodes",
                                                 "mem",  "qos",     "constraint",      "sbatch"};
  return kKeys;
}

double SweepResources::TimeSeconds() const {
  // SLURM's formats: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S.
  if (time.empty()) return 0.0;
  auto number = [&](const std::string& part) {
    MAVG_CHECK(AllOf(part, kDigits),
               "resources.time '{}' is not a time (SLURM formats: MM, MM:SS, HH:MM:SS, "
               "D-HH[:MM[:SS]])",
               time);
    return std::stod(part);
  };
  double days = 0;
  std::string rest = time;
  const size_t dash = time.find('-');
  if (dash != std::string::npos) {
    days = number(time.substr(0, dash));
    rest = time.substr(dash + 1);
  }
  std::vector<double> f;
  size_t start = 0;
  while (true) {
    const size_t colon = rest.find(':', start);
    f.push_back(number(rest.substr(start, colon - start)));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  MAVG_CHECK(f.size() <= 3, "resources.time '{}' has too many fields", time);
  double seconds = 0;
  if (dash != std::string::npos) {  // D-H, D-H:M, D-H:M:S
    const double unit[3] = {3600, 60, 1};
    for (size_t k = 0; k < f.size(); ++k) seconds += f[k] * unit[k];
  } else if (f.size() == 1) {
    seconds = f[0] * 60;  // minutes
  } else if (f.size() == 2) {
    seconds = f[0] * 60 + f[1];
  } else {
    seconds = f[0] * 3600 + f[1] * 60 + f[2];
  }
  return days * 86400 + seconds;
}

int SweepResources::GpusFor(const RunConfig& config) const {
  if (gpus_per_worker >= 0) return gpus_per_worker;
  return config.device == Device::kCuda ? 1 : 0;
}

std::vector<std::string> SweepResources::ClusterOnlyKeys() const {
  std::vector<std::string> out;
  if (gpus_per_worker >= 0) out.push_back("gpus_per_worker");
  if (nodes > 0) out.push_back("nodes");
  if (!mem.empty()) out.push_back("mem");
  if (!qos.empty()) out.push_back("qos");
  if (!constraint.empty()) out.push_back("constraint");
  if (!sbatch.empty()) out.push_back("sbatch");
  return out;
}

SweepResources ParseResources(const YAML::Node& res, const std::string& source) {
  const std::vector<std::string>& keys = ResourceKeys();
  MAVG_CHECK(res.IsMap(), "{}: line {}: 'resources' must be a mapping of {}", source, Line(res),
             JoinKeys(keys));
  SweepResources r;
  for (const auto& item : res) {
    const std::string key = item.first.as<std::string>();
    const YAML::Node& v = item.second;
    MAVG_CHECK(std::find(keys.begin(), keys.end(), key) != keys.end(),
               "{}: line {}: unknown resource '{}' (did you mean '{}'? resources: {})", source,
               Line(item.first), key, Nearest(key, keys), JoinKeys(keys));
    auto text = [&]() -> std::string {
      MAVG_CHECK(v.IsScalar(), "{}: line {}: resources.{} must be a single value", source, Line(v),
                 key);
      // Every resource reaches the batch script (core/words.h).
      CheckNoControlCharacter(fmt::format("{}: line {}: resources.{}", source, Line(v), key),
                              v.Scalar());
      return v.Scalar();
    };
    auto integer = [&](int min) {
      const std::string s = text();
      int n = 0;
      const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
      MAVG_CHECK(ec == std::errc() && end == s.data() + s.size() && n >= min,
                 "{}: line {}: resources.{} must be an integer >= {}, got '{}'", source, Line(v),
                 key, min, s);
      return n;
    };
    if (key == "time") {
      r.time = text();
      try {
        r.TimeSeconds();
      } catch (const Error& e) {
        throw Error(fmt::format("{}: line {}: {}", source, Line(v), e.what()));
      }
    } else if (key == "threads") {
      r.threads = integer(0);
    } else if (key == "gpus_per_worker") {
      r.gpus_per_worker = integer(0);
      // A process trains on one device (device_index + its rank on the node): a second GPU per
      // worker would be reserved and left idle.
      MAVG_CHECK(r.gpus_per_worker <= 1,
                 "{}: line {}: resources.gpus_per_worker is {}, but a worker trains on one GPU "
                 "(use 0 or 1; more workers, not more GPUs per worker, use more GPUs)",
                 source, Line(v), r.gpus_per_worker);
    } else if (key == "nodes") {
      r.nodes = integer(1);
    } else if (key == "mem") {
      r.mem = text();
      const size_t digits = r.mem.find_first_not_of(kDigits);
      MAVG_CHECK(
          digits > 0 && (digits == std::string::npos ||
                         (digits + 1 == r.mem.size() && AllOf(r.mem.substr(digits), "KMGT"))),
          "{}: line {}: resources.mem '{}' is not a SLURM memory size: an integer with an "
          "optional unit K, M, G or T (e.g. 8G, 512M; no unit: megabytes)",
          source, Line(v), r.mem);
    } else if (key == "qos") {
      r.qos = text();
      MAVG_CHECK(AllOf(r.qos, kNameChars),
                 "{}: line {}: resources.qos '{}' is not a QoS name (letters, digits, '_', '.', "
                 "'-')",
                 source, Line(v), r.qos);
    } else if (key == "constraint") {
      r.constraint = text();
      MAVG_CHECK(
          !r.constraint.empty() && r.constraint.find_first_of(" \t\r\n\"'\\") == std::string::npos,
          "{}: line {}: resources.constraint '{}' must be a SLURM feature expression "
          "without spaces or quotes (e.g. a100, \"a100&ib\", \"[rack1|rack2]\")",
          source, Line(v), r.constraint);
    } else if (key == "sbatch") {
      MAVG_CHECK(v.IsSequence(),
                 "{}: line {}: resources.sbatch is a list of sbatch options, e.g. "
                 "[\"--exclusive\", \"--reservation=paper\"]",
                 source, Line(v));
      for (const auto& o : v) {
        MAVG_CHECK(o.IsScalar(), "{}: line {}: each resources.sbatch entry is one option", source,
                   Line(o));
        const std::string option = o.Scalar();
        // sbatch splits an #SBATCH line at any isspace() character: a vertical tab would make
        // a second option out of what is checked below as one.
        CheckNoControlCharacter(fmt::format("{}: line {}: resources.sbatch entry", source, Line(o)),
                                option);
        MAVG_CHECK(option.starts_with("-") && option.size() > 1 &&
                       option.find_first_of("\r\n") == std::string::npos,
                   "{}: line {}: resources.sbatch entry '{}' is not an sbatch option (it starts "
                   "with '-', one option per entry, on one line)",
                   source, Line(o), option);
        if (const Managed* m = ManagedOption(option)) {
          MAVG_FAIL("{}: line {}: resources.sbatch entry '{}': mavg sets {} itself ({})", source,
                    Line(o), option, m->long_name, m->instead);
        }
        // sbatch splits an #SBATCH line at blanks: "--comment=a b" would be two words.
        MAVG_CHECK(option.find_first_of(" \t") == std::string::npos,
                   "{}: line {}: resources.sbatch entry '{}' holds a blank, which sbatch would "
                   "split into two words: give the option and its value as one word "
                   "(--comment=sweep-full)",
                   source, Line(o), option);
        MAVG_CHECK(!(option.starts_with("--gres") && option.find("gpu") != std::string::npos),
                   "{}: line {}: resources.sbatch entry '{}': mavg requests GPUs itself with "
                   "--gpus-per-task (use resources.gpus_per_worker; a GPU type goes in "
                   "resources.constraint)",
                   source, Line(o), option);
        r.sbatch.push_back(option);
      }
    }
  }
  return r;
}

void CheckResourcesFit(const SweepResources& r, const RunConfig& config, const std::string& where) {
  if (r.gpus_per_worker > 0) {
    MAVG_CHECK(config.device == Device::kCuda,
               "{}: resources.gpus_per_worker is {} but the run trains on device {} (set "
               "device: cuda, or leave gpus_per_worker out)",
               where, r.gpus_per_worker, config.device);
  }
  if (r.gpus_per_worker == 0) {
    MAVG_CHECK(config.device != Device::kCuda,
               "{}: resources.gpus_per_worker is 0 but the run trains on device cuda", where);
  }
  if (r.nodes > 1) {
    MAVG_CHECK(config.parallel.mode == ParallelMode::kMpi && config.parallel.workers >= r.nodes,
               "{}: resources.nodes is {}, but only an MPI run (parallel.mode mpi) with at least "
               "one rank per node spreads over nodes (this run: mode {}, {} worker(s))",
               where, r.nodes, config.parallel.mode, config.parallel.workers);
  }
}

}  // namespace mavg
