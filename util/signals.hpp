// waitlab::util — stopping cleanly: SIGINT, SIGTERM, SIGHUP and the death of a parent process.
//
// Promise: after install_signal_handlers() (the waitlab executable calls it first thing),
// SIGINT, SIGTERM and SIGHUP never leave a child process running or a temporary directory
// behind, and the command exits with 128 + the signal number (130, 143, 129) and one line
// on standard error. A signal that arrives while child processes started with
// fork_process() run (the simulation, the jobs of a study) is passed on to them; the code
// waiting for them sees interruption() once they ended and calls exit_interrupted(). With
// no child running the handler itself finishes: it removes every path registered with
// CleanupPath (staging directories, the simulation's temporary directory; with system calls
// only, safe in a signal handler), writes the line and _exit()s. A child made by
// fork_process() dies with its parent (PR_SET_PDEATHSIG, checked against the race with
// getppid()); when its parent is gone it also removes the paths its parent registered, so a
// `kill -9` of waitlab during a simulation still leaves nothing behind.
// SIGINT is handled even when it was ignored on entry (a background job of a script): the
// command can always be stopped with `kill -INT`. SIGHUP stays ignored when it was (nohup).
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <string>

namespace waitlab::util {

void install_signal_handlers();

// Forks. In the child (returns 0): the handlers above are installed afresh, its parent's
// children are forgotten, and the child receives `death_signal` when its parent dies; a
// `quiet` child writes no line when interrupted (its parent does). In the parent: the
// child's pid, registered to receive the signals until child_ended(pid). Throws InputError
// when the host's limits forbid another process (EAGAIN, ENOMEM), std::runtime_error when
// fork fails otherwise.
pid_t fork_process(int death_signal, bool quiet);
void child_ended(pid_t pid);

// Called by a commit of outputs once the new result is bound to be the one in place (app/
// output_dir.hpp): an interruption from then on says "the outputs were complete and are in
// place" instead of "unfinished outputs were discarded".
void outputs_committed(bool committed = true);

// The signal that interrupted this process (SIGINT, SIGTERM, SIGHUP), or 0.
int interruption();
// Removes the registered paths, writes "waitlab: interrupted by SIGINT; ..." (unless quiet)
// and exits with 128 + the signal. `signal` 0: the one that arrived.
[[noreturn]] void exit_interrupted(int signal = 0);

// A path removed if the process is interrupted before this object is destroyed (or
// released): a whole tree, or an empty directory (rmdir only: a directory this process
// created, which may have been filled by someone else meanwhile). Paths are removed latest
// registered first. Throws std::runtime_error when more than 64 are registered at once.
class CleanupPath {
 public:
  enum class Kind { Tree, EmptyDirectory };
  CleanupPath(const std::string& path, Kind kind);
  ~CleanupPath();
  CleanupPath(const CleanupPath&) = delete;
  CleanupPath& operator=(const CleanupPath&) = delete;
  void release();  // no longer removed on interruption

 private:
  int slot_ = -1;
};

// Blocks the handled signals while it lives (a commit of outputs must not stop half-way); a
// signal that arrived meanwhile is handled when it ends.
class SignalBlock {
 public:
  SignalBlock();
  ~SignalBlock();
  SignalBlock(const SignalBlock&) = delete;
  SignalBlock& operator=(const SignalBlock&) = delete;

 private:
  sigset_t saved_;
};

}  // namespace waitlab::util
