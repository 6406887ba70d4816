// waitlab-mpi — waitlab's commands that run over the ranks of an MPI job:
//   `mpirun -np N waitlab-mpi analyze TRACE ...`: the trace analyses on the replay engine, each
//   rank reading only its share of the trace (app/mpi_analyze.hpp);
//   `mpirun -np N waitlab-mpi sweep SCENARIO --grid ... [--out DIR]` (or whatif): a study's jobs
//   shared among the ranks, below.
//
// For a study, each MPI rank r runs `waitlab ARGS --share r/N --records FILE` (its share of the jobs, each
// simulation in its own process, on its own machine), the records travel to rank 0 by MPI
// (MPI_Gather of the sizes, MPI_Gatherv of the texts), and rank 0 runs
// `waitlab ARGS --merge FILE`, which writes the study's outputs exactly as a sequential run
// would (app/study.hpp). The exit code is the largest of all ranks' (MPI_Allreduce).
// This program links Open MPI and waitlab's analyses, never SimGrid: waitlab itself links
// SimGrid's SMPI, whose MPI symbols would clash with Open MPI's in one process, so what needs a
// simulation runs in `waitlab`, found next to this program (or at $WAITLAB_BIN).
#include <mpi.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "app/mpi_analyze.hpp"
#include "app/waitlab_child.hpp"

using waitlab::app::spawn_and_wait;
using waitlab::app::waitlab_binary;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 2) {
    if (rank == 0)
      std::fprintf(stderr,
                   "usage: mpirun -np N waitlab-mpi analyze|whatif|sweep ARGS...\n"
                   "analyze: `waitlab analyze ARGS` on the replay engine, each MPI rank reading only its share of "
                   "the trace's ranks (waitlab-mpi analyze --help).\n"
                   "whatif, sweep: `waitlab whatif|sweep ARGS` with the jobs shared among the MPI ranks.\n"
                   "Rank 0 writes the outputs.\n");
    MPI_Finalize();
    return 2;
  }
  const std::string sub = argv[1];
  if (sub == "analyze") {
    const int code = waitlab::app::mpi_analyze_main(argc, argv);
    MPI_Finalize();
    return code;
  }
  if (sub != "whatif" && sub != "sweep") {
    if (rank == 0)
      std::fprintf(stderr, "waitlab-mpi: error: expected analyze, whatif or sweep, got '%s'\n", sub.c_str());
    MPI_Finalize();
    return 2;
  }
  std::vector<std::string> args = {waitlab_binary()};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    for (const char* own : {"--share", "--records", "--merge"})
      if (a == own || a.rfind(std::string(own) + "=", 0) == 0) {
        if (rank == 0) std::fprintf(stderr, "waitlab-mpi: error: %s is waitlab-mpi's to give, not an argument\n", own);
        MPI_Finalize();
        return 2;
      }
    args.push_back(a);
  }

  char tmpl[] = "/tmp/waitlab-mpi-records.XXXXXX";
  const int fd = mkstemp(tmpl);
  if (fd >= 0) close(fd);
  const std::string records = tmpl;
  std::vector<std::string> mine = args;
  mine.insert(mine.end(), {"--share", std::to_string(rank) + "/" + std::to_string(size), "--records", records});
  std::string why;
  int code = fd >= 0 ? spawn_and_wait(mine, &why) : 1;
  if (!why.empty()) std::fprintf(stderr, "waitlab-mpi: error: %s\n", why.c_str());

  // Everyone's records to rank 0, even after a failure (the collectives must match).
  std::string text;
  if (code == 0) {
    std::ifstream probe(records);
    if (probe)
      text = read_file(records);
    else
      code = 1;
  }
  std::remove(records.c_str());
  int length = static_cast<int>(text.size());
  std::vector<int> lengths(static_cast<std::size_t>(size)), offsets(static_cast<std::size_t>(size));
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string all;
  if (rank == 0) {
    long long total = 0;
    for (int r = 0; r < size; ++r) {
      offsets[static_cast<std::size_t>(r)] = static_cast<int>(total);
      total += lengths[static_cast<std::size_t>(r)];
      if (total > 2147483647LL) {
        std::fprintf(stderr, "waitlab-mpi: error: the records of all ranks exceed 2 GiB\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    }
    all.resize(static_cast<std::size_t>(total));
  }
  MPI_Gatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0,
              MPI_COMM_WORLD);
  int worst = 0;
  MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && worst == 0) {
    char merged_tmpl[] = "/tmp/waitlab-mpi-merged.XXXXXX";
    const int mfd = mkstemp(merged_tmpl);
    if (mfd < 0) {
      worst = 1;
    } else {
      std::size_t done = 0;
      while (done < all.size()) {
        const ssize_t n = write(mfd, all.data() + done, all.size() - done);
        if (n <= 0) break;
        done += static_cast<std::size_t>(n);
      }
      close(mfd);
      std::vector<std::string> merge = args;
      merge.insert(merge.end(), {"--merge", merged_tmpl});
      worst = done == all.size() ? spawn_and_wait(merge, &why) : 1;
      if (!why.empty()) std::fprintf(stderr, "waitlab-mpi: error: %s\n", why.c_str());
      std::remove(merged_tmpl);
    }
  }
  MPI_Bcast(&worst, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
