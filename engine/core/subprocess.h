#pragma once
// Running a command and capturing what it prints (for cluster tools: sbatch, squeue, scancel).

#include <string>
#include <vector>

namespace mavg {

struct CommandResult {
  int exit_code = -1;  // -1: could not be started; 128 + n: killed by signal n
  std::string out;     // stdout
  std::string err;     // stderr
};

// Runs argv[0] (looked up in PATH) with the arguments, without a shell, and waits for it.
CommandResult RunCommand(const std::vector<std::string>& argv);

// The path of this process's executable (/proc/self/exe).
std::string SelfExecutable();

}  // namespace mavg
