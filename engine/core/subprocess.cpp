#include "engine/core/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "engine/core/error.h"

namespace mavg {

CommandResult RunCommand(const std::vector<std::string>& argv) {
  MAVG_CHECK(!argv.empty(), "RunCommand: empty command");
  std::vector<char*> args;  // built before fork: the child only calls async-signal-safe code
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::string exec_error = argv[0] + ": cannot run it\n";
  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
    const int e = errno;
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) {
      if (fd >= 0) close(fd);
    }
    MAVG_FAIL("pipe: {}", std::strerror(e));
  }
  const pid_t pid = fork();
  if (pid < 0) {
    const int e = errno;
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) close(fd);
    MAVG_FAIL("fork: {}", std::strerror(e));
  }
  if (pid == 0) {
    dup2(out_pipe[1], 1);  // dup2 clears O_CLOEXEC on the copies
    dup2(err_pipe[1], 2);
    execvp(args[0], args.data());
    (void)!write(2, exec_error.data(), exec_error.size());
    _exit(127);
  }
  close(out_pipe[1]), close(err_pipe[1]);
  CommandResult r;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  int open_fds = 2;
  char buf[4096];
  while (open_fds > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof(buf));
      if (n > 0) {
        sinks[i]->append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (r.exit_code == 127 && r.out.empty()) r.exit_code = -1;
  return r;
}

std::string SelfExecutable() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  MAVG_CHECK(n > 0, "cannot find the mavg executable (/proc/self/exe)");
  return std::string(buf, static_cast<size_t>(n));
}

}  // namespace mavg
