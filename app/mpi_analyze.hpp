// waitlab::app — `mpirun -np P waitlab-mpi analyze TRACE [options of waitlab analyze]` (issue 32):
// the analyses of `waitlab analyze` on the replay engine (analysis/engine), each MPI process
// holding only its share of the trace's ranks.
//
// Promise: every process balances the ranks by their weights (trace::location_event_counts: event
// counts, for Paraver records per task; engine::Partition::balanced), reads only its range
// (trace::read_trace_part: the .wlt blocks of its ranks, the OTF2 event files of its locations,
// its tasks' records of one pass over a Paraver file) and runs the selected analyses on its shard
// over an engine::MpiTransport (analysis::run_analyses_sharded); process 0 then writes the
// outputs of `waitlab analyze` — summary.json, the analyses' files and pictures, report.html,
// host.json — through the same staged output directory (app/output_dir.hpp) and prints the same
// terminal summary. For every P (smaller than, equal to or larger than the ranks) the outputs are
// byte for byte those of `waitlab analyze` with the same options (host.json, whose figures are the
// host's, apart). Errors (plan §5.3, D8): a failure in any process's share ends every process
// after the step it happened in; the lowest process's failure is the serial tool's (the processes
// own the ranks in order, and every step checks what the serial one checks in the same order),
// printed once by process 0 as `waitlab analyze` prints it, and every process exits with its code
// (2 for bad input); nothing is written unless every step succeeded, and a killed process ends
// the job (mpirun) before process 0 puts the staged outputs in place.
// The SMPI ideal-network estimate (--ideal smpi, both, or auto on a measured trace) needs SimGrid,
// which waitlab-mpi does not link: process 0 runs `waitlab smpi-ideal` (app/waitlab_child.hpp),
// which reads the whole trace.
#pragma once

namespace waitlab::app {

// Called with MPI running (between MPI_Init and MPI_Finalize) and argv[1] == "analyze"; returns
// this process's exit code.
int mpi_analyze_main(int argc, const char* const* argv);

}  // namespace waitlab::app
