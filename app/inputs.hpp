// waitlab::app — what a command reads, so that nothing it writes can harm it.
//
// Promise: a command records every input before it opens it — Inputs::add for a file or a
// directory, add_trace for a trace and every file its reader opens (trace::input_files: an
// OTF2 archive's files, a Paraver trace's .pcf and .row, a TI index's rank files wherever the
// index says they are), add_scenario for a scenario and the files it names. An input that is
// not a regular file or a directory (a FIFO, a device, a socket) is refused then, before it is
// opened: reading one may never end. Inputs are identified by device and inode, so that a
// symbolic link, `..`, an absolute path in a TI index or a hard link cannot disguise one.
// check_output() refuses an output path that is an input, holds one (a directory with an
// input at any depth) or lies inside an input directory (an OTF2 archive); OutputDir checks
// every entry it replaces or removes the same way, so that no command's commit touches an
// input. Errors are InputErrors naming the output and the input.
#pragma once

#include <sys/types.h>

#include <set>
#include <string>
#include <vector>

namespace waitlab::scenarios {
struct Scenario;
}

namespace waitlab::app {

class Inputs {
 public:
  // `what` names the input in messages ("the scenario", "the trace", ...).
  void add(const std::string& path, const std::string& what);
  void add_trace(const std::string& path);
  // The scenario file, its XML platform and the trace its workload replays.
  void add_scenario(const scenarios::Scenario& s);

  // Throws InputError when writing `path` (a file or a directory the command creates or
  // replaces whole) would overwrite an input, replace a directory holding one or write into
  // an input directory.
  void check_output(const std::string& path) const;
  // Throws InputError when `dir`, an output directory the command writes files into, is an
  // input or lies inside an input directory (that it holds inputs is no harm: the entries
  // replaced in it are checked one by one with check_replaced).
  void check_output_dir(const std::string& dir) const;
  // Throws InputError when `path`, an existing entry about to be replaced or removed, is or
  // holds an input. `shown` names it in the message.
  void check_replaced(const std::string& path, const std::string& shown) const;

 private:
  struct Entry {
    std::string shown;  // as the user named it, with what it is
    dev_t dev = 0;
    ino_t ino = 0;
    bool dir = false;
    std::vector<std::pair<dev_t, ino_t>> holders;  // the directories above it, up to /
  };
  const Entry* find(dev_t dev, ino_t ino) const;
  const Entry* held_by(dev_t dev, ino_t ino) const;
  std::vector<Entry> entries_;
  std::set<std::string> checked_dirs_;  // directories whose interrupted commit was looked for
};

}  // namespace waitlab::app
