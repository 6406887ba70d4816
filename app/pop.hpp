// waitlab::app — `waitlab pop TRACE...`: the POP model factors of a scaling study.
//
// Promise: pop_command() reads a series of traces of one program at different scales — Extrae
// .prv/.prv.gz, Score-P OTF2, .wlt, or run directories of `waitlab run`/`sweep` (DIR/trace.wlt;
// a sweep directory stands for its point_* runs) — analyses each with its tool's conventions
// (or --convention), and computes the POP model factors across them (analysis/pop): parallel
// efficiency = load balance × communication efficiency (= serialisation × transfer), computation
// scalability (= IPC × instruction × frequency scalability when the traces have PAPI_TOT_INS and
// PAPI_TOT_CYC), global efficiency, speed-up; strong or weak scaling, the run with the fewest
// units as reference. It writes DIR/pop.csv (one row per run), DIR/pop.json (also as
// DIR/summary.json, schema waitlab.pop, for report.html), DIR/pop.png/.svg (efficiencies against
// the number of units) and DIR/report.html (the factors table coloured by POP's scale), and
// prints the table. With a cut (--time-range, --region, --iterations) every run's factors are
// of that part of it, and each run says what was cut (pop.json runs[].cut, the terminal). Every
// input is read before anything is written; a bad input is an InputError naming it.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "app/analyze.hpp"

namespace waitlab::app {

struct PopArgs {
  std::vector<std::string> inputs;
  std::string out_dir = "pop";
  std::string scaling = "strong";   // strong, weak
  std::string convention = "auto";  // as analyze --convention
  std::string ideal = "lamport";    // lamport, smpi (as analyze --ideal; smpi replays every trace)
  CutArgs cut;                      // every run cut the same way (analysis/timeresolved/cut.hpp)
};

void pop_command(const PopArgs& args, std::ostream& out);

}  // namespace waitlab::app
