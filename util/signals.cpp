// Everything the signal handler touches is a lock-free atomic or a fixed array written with
// the signals blocked, and the handler uses system calls only (open, getdents64, unlinkat,
// kill, write, _exit): it may interrupt malloc or a stream half-way.
#include "util/signals.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "util/error.hpp"

namespace waitlab::util {

namespace {

constexpr int kHandled[] = {SIGINT, SIGTERM, SIGHUP};
constexpr int kMaxChildren = 512;  // a study runs at most 256 jobs at once
constexpr int kMaxPaths = 64;
constexpr std::size_t kPathMax = 4096;

volatile sig_atomic_t g_signal = 0;
std::atomic<pid_t> g_children[kMaxChildren];
std::atomic<pid_t> g_parent{0};  // set in children made by fork_process
std::atomic<bool> g_quiet{false};
std::atomic<bool> g_committed{false};  // the outputs are in place (or their commit can only roll forward)
static_assert(std::atomic<pid_t>::is_always_lock_free);

struct Slot {
  std::atomic<pid_t> owner{0};  // 0: free
  std::atomic<std::uint64_t> seq{0};
  CleanupPath::Kind kind = CleanupPath::Kind::Tree;
  char path[kPathMax] = {};
};
Slot g_paths[kMaxPaths];
std::atomic<std::uint64_t> g_seq{0};

sigset_t handled_set() {
  sigset_t s;
  sigemptyset(&s);
  for (const int sig : kHandled) sigaddset(&s, sig);
  return s;
}

// Empties the directory open as `fd`. Entries removed while the directory is read may be
// skipped by the listing, so it is read again until a pass finds nothing left to remove.
void clear_directory(int fd, int depth) {
  alignas(8) char buf[4096];
  for (int pass = 0; pass < 16; ++pass) {
    if (lseek(fd, 0, SEEK_SET) < 0) return;
    bool removed = false;
    for (;;) {
      const ssize_t n = getdents64(fd, buf, sizeof buf);
      if (n <= 0) break;
      for (ssize_t off = 0; off < n;) {
        const auto* d = reinterpret_cast<const struct dirent64*>(buf + off);
        off += d->d_reclen;
        const char* name = d->d_name;
        if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) continue;
        if (unlinkat(fd, name, 0) == 0) {
          removed = true;
          continue;
        }
        if (errno != EISDIR || depth > 64) continue;
        const int sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub >= 0) {
          clear_directory(sub, depth + 1);
          close(sub);
        }
        if (unlinkat(fd, name, AT_REMOVEDIR) == 0) removed = true;
      }
    }
    if (!removed) return;
  }
}

void remove_path(const char* path, CleanupPath::Kind kind) {
  if (kind == CleanupPath::Kind::EmptyDirectory) {
    rmdir(path);
    return;
  }
  if (unlink(path) == 0 || errno != EISDIR) return;
  const int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) {
    clear_directory(fd, 0);
    close(fd);
  }
  rmdir(path);
}

void write_all(const char* s) {
  std::size_t left = std::strlen(s);
  while (left > 0) {
    const ssize_t n = write(STDERR_FILENO, s, left);
    if (n <= 0) return;
    s += n;
    left -= static_cast<std::size_t>(n);
  }
}

const char* signal_name(int sig) {
  switch (sig) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "a signal";
  }
}

// Async-signal-safe: removes this process's paths (and its parent's when the parent is gone),
// latest registered first, says so and exits.
[[noreturn]] void finish(int sig) {
  const pid_t self = getpid();
  const pid_t parent = g_parent.load();
  const bool orphan = parent != 0 && getppid() != parent;
  bool done[kMaxPaths] = {};
  for (;;) {
    int pick = -1;
    std::uint64_t latest = 0;
    for (int i = 0; i < kMaxPaths; ++i) {
      const pid_t owner = g_paths[i].owner.load();
      if (done[i] || owner == 0 || (owner != self && !orphan)) continue;
      const std::uint64_t seq = g_paths[i].seq.load();
      if (pick < 0 || seq > latest) {
        pick = i;
        latest = seq;
      }
    }
    if (pick < 0) break;
    done[pick] = true;
    remove_path(g_paths[pick].path, g_paths[pick].kind);
  }
  if (!g_quiet.load()) {
    write_all("waitlab: interrupted by ");
    write_all(signal_name(sig));
    write_all(g_committed.load() ? "; the outputs were complete and are in place\n"
                                 : "; unfinished outputs were discarded\n");
  }
  _exit(128 + sig);
}

extern "C" void on_signal(int sig) {
  const int saved_errno = errno;
  const bool first = g_signal == 0;
  if (first) g_signal = sig;
  bool children = false;
  for (auto& c : g_children) {
    const pid_t pid = c.load();
    if (pid <= 0) continue;
    // The first signal is passed on; a second one (the user insists) kills.
    kill(pid, first ? sig : SIGKILL);
    children = true;
  }
  // The code waiting for the children finishes once they ended (exit_interrupted).
  if (!children) finish(g_signal);
  errno = saved_errno;
}

// SIGHUP stays ignored when it is (nohup), in waitlab and in its children alike.
void set_handlers() {
  struct sigaction sa = {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (const int sig : kHandled) sigaddset(&sa.sa_mask, sig);  // one handler at a time
  sa.sa_flags = SA_RESTART;
  for (const int sig : kHandled) {
    if (sig == SIGHUP) {
      struct sigaction old = {};
      if (sigaction(SIGHUP, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;  // nohup
    }
    sigaction(sig, &sa, nullptr);
  }
}

}  // namespace

void install_signal_handlers() {
  // A file that reaches `ulimit -f` fails its write with EFBIG, said as an error naming it,
  // instead of killing waitlab half-way (SIGXFSZ's default), in waitlab and its children.
  signal(SIGXFSZ, SIG_IGN);
  set_handlers();
}

pid_t fork_process(int death_signal, bool quiet) {
  const SignalBlock block;  // until the child is registered (parent) or set up (child)
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    // A limit of the host, not a bug: too many processes (ulimit -u) or too little memory.
    if (err == EAGAIN || err == ENOMEM)
      throw InputError(std::string("cannot start a process: ") + std::strerror(err) +
                       " (the limit of processes, ulimit -u, or of memory is reached)");
    throw std::runtime_error(std::string("cannot fork a process: ") + std::strerror(err));
  }
  if (pid == 0) {
    g_parent = parent;
    for (auto& c : g_children) c = 0;
    g_signal = 0;
    g_quiet = quiet;
    g_committed = false;
    set_handlers();
    prctl(PR_SET_PDEATHSIG, death_signal);
    // The parent may have died before prctl: then nobody would ever tell us.
    if (getppid() != parent) raise(death_signal);  // pending until the block ends
    return 0;
  }
  for (auto& c : g_children) {
    pid_t free_slot = 0;
    if (c.compare_exchange_strong(free_slot, pid)) return pid;
  }
  kill(pid, SIGKILL);
  throw std::runtime_error("more than " + std::to_string(kMaxChildren) + " child processes at once");
}

void child_ended(pid_t pid) {
  for (auto& c : g_children) {
    pid_t expected = pid;
    if (c.compare_exchange_strong(expected, 0)) return;
  }
}

void outputs_committed(bool committed) {
  g_committed = committed;
}

int interruption() {
  return g_signal;
}

void exit_interrupted(int signal) {
  const sigset_t s = handled_set();
  pthread_sigmask(SIG_BLOCK, &s, nullptr);
  finish(signal != 0 ? signal : (g_signal != 0 ? g_signal : SIGTERM));
}

CleanupPath::CleanupPath(const std::string& path, Kind kind) {
  if (path.size() >= kPathMax) throw std::runtime_error("path too long to clean up: " + path);
  const SignalBlock block;
  for (int i = 0; i < kMaxPaths; ++i) {
    Slot& s = g_paths[i];
    if (s.owner.load() != 0) continue;
    std::memcpy(s.path, path.c_str(), path.size() + 1);
    s.kind = kind;
    s.seq = ++g_seq;
    s.owner = getpid();
    slot_ = i;
    return;
  }
  throw std::runtime_error("more than " + std::to_string(kMaxPaths) + " paths to clean up at once");
}

CleanupPath::~CleanupPath() {
  release();
}

void CleanupPath::release() {
  if (slot_ < 0) return;
  const SignalBlock block;
  g_paths[slot_].owner = 0;
  slot_ = -1;
}

SignalBlock::SignalBlock() {
  const sigset_t s = handled_set();
  pthread_sigmask(SIG_BLOCK, &s, &saved_);
}

SignalBlock::~SignalBlock() {
  pthread_sigmask(SIG_SETMASK, &saved_, nullptr);
}

}  // namespace waitlab::util
