// waitlab::app — pictures, drawn by matplotlib from Debian's python3-matplotlib.
//
// Promise: draw(script, args) runs one of the plot scripts compiled into the binary
// (app/plots/NAME.py) with Debian's Python (/usr/bin/python3, or $WAITLAB_PYTHON) and returns
// "" on success, or why no picture was drawn (no Python, no matplotlib, the script failed:
// its last lines of output). A missing picture never fails a command: the tables it is
// drawn from are the results; callers say on the terminal that the picture is missing.
// The scripts write PNG and SVG without timestamps, so the same data give the same files.
// draw_pictures() draws an analysis's pictures (its entry's plot script, from the files it
// wrote in DIR) after removing the old ones, which would describe another run.
#pragma once

#include <string>
#include <vector>

#include "analysis/output/entry.hpp"

namespace waitlab::app {

std::string draw(const std::string& script, const std::vector<std::string>& args);
std::string draw_pictures(const output::Entry& analysis, const std::string& dir);

}  // namespace waitlab::app
