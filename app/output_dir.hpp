// waitlab::app — the outputs of a command, prepared aside and put in place only when it succeeded.
//
// Promise: a command that fails (bad input found late, a deadlock, a full disk, an
// interruption) leaves its output directory exactly as it found it, and a directory it had
// to create is removed again. OutputDir prepares the outputs in a staging directory (a hidden
// sibling `.NAME.waitlab-XXXXXX` of the output directory; inside it when it is a mount point)
// and commit() puts them in place:
//  - Mode::Directory: DIR is the command's output directory. Its top-level files (not its
//    sub-directories) are hard-linked into the staging directory first (copied where links
//    are impossible), so the command's writers find, replace and remove the outputs of an
//    earlier run as if they worked in DIR. commit() then applies to DIR what changed: new
//    and rewritten entries are moved in (a sub-directory written by the command replaces the
//    one of the same name whole), files the command removed are removed, and everything else
//    — files of the user, files added meanwhile — is left alone. `summary.json` goes last.
//  - Mode::Entries: the command writes new entries into DIR beside whatever is there
//    (`convert`'s output file or archive); commit() moves them in, each replacing the entry
//    of the same name whole.
// Inputs are never touched: DIR may not be an input nor lie inside an input directory, and an
// entry the commit would replace or remove that is, or holds, an input is refused before
// anything changes (app/inputs.hpp). A user's files are never deleted: an existing directory
// is replaced whole only by one that has every file it has (same relative paths), else the
// commit is refused, naming the file that would be lost.
// The commit runs with SIGINT/SIGTERM/SIGHUP blocked (one that arrives meanwhile ends the
// command once the outputs are in place, and says so) and undoes what it did if a step fails.
// Before it changes DIR it writes a journal there, so that a SIGKILL half-way is finished by
// the next waitlab that opens DIR (recover_commit): DIR is always either as it was or the
// complete new result.
// A file or directory of the wrong kind in the way (a directory where a file goes) is
// refused before anything changes. Until commit, the staging directory (and every directory
// created for the outputs) is removed if the process is interrupted (util/signals.hpp) or the
// object is destroyed. Errors are InputErrors that name the output paths, not the staging
// ones (final_text()).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "app/inputs.hpp"

namespace waitlab::app {

// Throws InputError when `dir` cannot become an output directory (a file is in the way);
// creates nothing. For checks before a long simulation.
void check_output_dir(const std::string& dir);

class OutputDir {
 public:
  enum class Mode { Directory, Entries };
  // `inputs`: what the command reads (copied).
  OutputDir(const std::string& dir, const Inputs& inputs, Mode mode = Mode::Directory);
  ~OutputDir();
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;

  // Where the command writes (the staging directory, absolute).
  const std::string& path() const { return staging_; }
  // DIR/name as the user gave DIR, for messages and listings.
  std::string shown(const std::string& name) const;
  // `text` with the staging directory replaced by DIR as the user gave it.
  std::string final_text(const std::string& text) const;
  // Called in a catch block: rethrows the exception being handled, an InputError or a
  // std::runtime_error with its message through final_text() (any other as it is).
  [[noreturn]] void rethrow_final() const;
  // Puts the outputs in place. Throws InputError (nothing changed) when it cannot.
  void commit();

 private:
  struct Snapshot {
    std::string name;
    unsigned long dev = 0, ino = 0;          // the entry in DIR
    unsigned long staged_ino = 0;            // its link (or copy) in the staging directory
  };
  struct Cleanup;
  void sync();

  Inputs inputs_;
  std::string given_;    // DIR as given
  std::string dir_;      // DIR, absolute
  std::string staging_;  // absolute
  Mode mode_;
  bool existed_ = false;
  bool committed_ = false;
  std::vector<Snapshot> snapshot_;
  std::vector<std::string> created_;  // directories made for the outputs, outermost first
  std::vector<std::unique_ptr<Cleanup>> cleanups_;
};

}  // namespace waitlab::app
