// SimGrid time-independent traces: what SMPI 3.32 writes (a trace of tests/data/ti/smpi_calls.c
// recorded with `smpirun -np 4 -trace-ti`, checked in), single shared files, the writer's
// round trip, and every kind of bad input.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "util/error.hpp"
#include "analysis/trace/ti.hpp"
#include "tests/temp_dir.hpp"

namespace waitlab::trace {
namespace {

namespace fs = std::filesystem;

const std::string kData = std::string(WAITLAB_SOURCE_DIR) + "/tests/data/ti";

class Ti : public test::TempDirTest {
 protected:
  std::string error_of(const std::string& text) {
    const std::string p = write("t.ti", text);
    try {
      (void)read_ti(p);
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  }
};

std::vector<TiRecord> without(const std::vector<TiRecord>& v, TiOp op) {
  std::vector<TiRecord> out;
  for (const auto& r : v)
    if (r.op != op) out.push_back(r);
  return out;
}

TEST_F(Ti, ReadsWhatSmpiWrites) {
  TiReadStats stats;
  const TiTrace t = read_ti(kData + "/smpi_calls.ti", &stats);
  ASSERT_EQ(t.ranks.size(), 4u);
  ASSERT_EQ(t.files.size(), 4u);
  EXPECT_EQ(fs::path(t.files[2]).filename(), "rank-2.txt");
  EXPECT_EQ(stats.lines, 58u + 54u + 54u + 57u);  // every line of the four files
  EXPECT_EQ(stats.actions["init"], 4u);
  EXPECT_EQ(stats.actions["waitAny"], 4u);
  EXPECT_EQ(stats.actions["ISsend"], 4u);
  EXPECT_EQ(stats.any_source, 6u);  // 4 irecv + 2 recv from -333
  EXPECT_EQ(stats.files_without_final_newline, 0u);

  // Rank 1 without its compute lines, record by record (sizes in bytes: MPI_INT = 4).
  const auto r1 = without(t.ranks[1], TiOp::Compute);
  ASSERT_EQ(r1.size(), 28u);  // 54 lines - init - finalize - 24 compute
  EXPECT_EQ(r1[0].op, TiOp::Sendrecv);
  EXPECT_EQ(r1[0].bytes, 12u);
  EXPECT_EQ(r1[0].peer, 0);
  EXPECT_EQ(r1[0].bytes2, 16u);
  EXPECT_EQ(r1[0].peer2, 0);
  EXPECT_EQ(r1[1].op, TiOp::Isend);  // isend 0 1 2 0: two MPI_DOUBLE
  EXPECT_EQ(r1[1].peer, 0);
  EXPECT_EQ(r1[1].tag, 1);
  EXPECT_EQ(r1[1].bytes, 16u);
  EXPECT_EQ(r1[3].op, TiOp::Test);
  EXPECT_EQ(r1[3].peer, 1);
  EXPECT_EQ(r1[3].peer2, 0);
  EXPECT_EQ(r1[3].tag, 1);
  EXPECT_EQ(r1[4].op, TiOp::Wait);  // wait 0 1 1: the irecv from 0
  EXPECT_EQ(r1[4].peer, 0);
  EXPECT_EQ(r1[4].peer2, 1);
  EXPECT_EQ(r1[5].op, TiOp::Irecv);
  EXPECT_EQ(r1[5].peer, kAnySource);
  EXPECT_EQ(r1[5].bytes, 8u);
  EXPECT_EQ(r1[6].op, TiOp::Issend);
  EXPECT_EQ(r1[7].op, TiOp::Waitany);
  EXPECT_EQ(r1[7].count, 2u);
  EXPECT_EQ(r1[8].op, TiOp::Testany);
  EXPECT_EQ(r1[9].op, TiOp::Waitall);
  EXPECT_EQ(r1[10].op, TiOp::Recv);
  EXPECT_EQ(r1[10].peer, kAnySource);
  EXPECT_EQ(r1[11].op, TiOp::Reduce);  // reduce 5 0 1 1: 5 ints to root 1
  EXPECT_EQ(r1[11].bytes, 20u);
  EXPECT_EQ(r1[11].root, 1);
  EXPECT_EQ(r1[13].op, TiOp::Scatter);
  EXPECT_EQ(r1[13].root, 3);
  EXPECT_EQ(r1[16].op, TiOp::Gatherv);  // gatherv 2 0 0 0 0 0 1 1 (a non-root's receive counts are 0)
  EXPECT_EQ(r1[16].bytes, 8u);
  EXPECT_EQ(r1[16].counts, (std::vector<std::uint64_t>{0, 0, 0, 0}));
  EXPECT_EQ(r1[16].root, 0);
  EXPECT_EQ(r1[18].op, TiOp::Allgatherv);  // allgatherv 2 1 2 3 4 1 1
  EXPECT_EQ(r1[18].counts, (std::vector<std::uint64_t>{4, 8, 12, 16}));
  EXPECT_EQ(r1[19].op, TiOp::Alltoallv);  // send then receive counts
  EXPECT_EQ(r1[19].counts, (std::vector<std::uint64_t>{8, 8, 8, 8, 8, 8, 8, 8}));
  EXPECT_EQ(r1[20].op, TiOp::ReduceScatter);
  EXPECT_EQ(r1[20].counts, (std::vector<std::uint64_t>{4, 8, 12, 16}));
  EXPECT_EQ(r1[21].op, TiOp::Scan);
  EXPECT_EQ(r1[22].op, TiOp::Exscan);
  EXPECT_EQ(r1[23].op, TiOp::Allreduce);
  EXPECT_EQ(r1[23].bytes, 12u);
  EXPECT_EQ(r1[24].op, TiOp::Barrier);
  EXPECT_EQ(r1[26].op, TiOp::Irecv);
  EXPECT_EQ(r1[26].line, 52u);
  EXPECT_EQ(r1[27].op, TiOp::Testany);  // testall
  // Rank 0's scatterv: send counts 1 2 3 4 ints, receive 1, root 0.
  const auto r0 = without(t.ranks[0], TiOp::Compute);
  EXPECT_EQ(r0[10].op, TiOp::Ssend);
  EXPECT_EQ(r0[17].op, TiOp::Scatterv);
  EXPECT_EQ(r0[17].counts, (std::vector<std::uint64_t>{4, 8, 12, 16}));
  EXPECT_EQ(r0[17].bytes2, 4u);
  // Compute amounts as written (flops, 6 significant digits).
  EXPECT_EQ(t.ranks[0][0].op, TiOp::Compute);
  EXPECT_DOUBLE_EQ(t.ranks[0][0].amount, 0.59048);
}

TEST_F(Ti, ALineLongerThan16MiBIsRefusedWhereItIs) {
  // A 400 MB line took 5.7 GB (16 bytes a token) before any check.
  const std::string line = "0 compute " + std::string((std::size_t{16} << 20) - 9, '1') + "\n";
  const std::string err = error_of("0 init\n" + line + "0 finalize\n");
  EXPECT_EQ(err, (dir_ / "t.ti").string() + ":2: a line of " + std::to_string(line.size() - 1) +
                     " bytes, longer than 16 MiB: a TI line is one action (an alltoallv of 65536 ranks takes about 1 MB)");
  // At the limit it is read (and then refused for what it says).
  const std::string at = "0 compute " + std::string((std::size_t{16} << 20) - 10, '1') + "\n";
  EXPECT_EQ(error_of("0 init\n" + at + "0 finalize\n").find("longer than 16 MiB"), std::string::npos);
}

TEST_F(Ti, DatatypeIdsOfSimGrid332) {
  EXPECT_EQ(ti_datatype_size(0), 8u);   // MPI_DOUBLE
  EXPECT_EQ(ti_datatype_size(1), 4u);   // MPI_INT
  EXPECT_EQ(ti_datatype_size(2), 1u);   // MPI_CHAR
  EXPECT_EQ(ti_datatype_size(6), 1u);   // MPI_BYTE
  EXPECT_EQ(ti_datatype_size(26), 16u); // MPI_C_DOUBLE_COMPLEX
  EXPECT_EQ(ti_datatype_size(50), 32u); // MPI_LONG_DOUBLE_INT
  EXPECT_EQ(ti_datatype_size(59), 8u);  // MPI_COUNT
  EXPECT_EQ(ti_datatype_size(51), 0u);
  EXPECT_EQ(ti_datatype_size(-1), 0u);
  EXPECT_EQ(ti_datatype_size(60), 0u);
}

TEST_F(Ti, SharedFileInterleavedWithCommentsAndNoFinalNewline) {
  TiReadStats stats;
  const std::string p = write("shared.txt",
                              "# a comment\n"
                              "0 init\n1 init 0\n"
                              "1 recv 0 5 3\n"  // default datatype after `init 0`: MPI_DOUBLE
                              "0 send 1 5 24\n"
                              "\n"
                              "0 compute 1e6\n"
                              "1 sleep 0.25\n"
                              "1 bcast 7 0 2\n"
                              "0 bcast 7\n"
                              "0 finalize\n1 finalize");
  const TiTrace t = read_ti(p, &stats);
  ASSERT_EQ(t.ranks.size(), 2u);
  EXPECT_EQ(stats.files_without_final_newline, 1u);
  ASSERT_EQ(t.ranks[0].size(), 3u);
  ASSERT_EQ(t.ranks[1].size(), 3u);
  EXPECT_EQ(t.ranks[0][0].op, TiOp::Send);
  EXPECT_EQ(t.ranks[0][0].bytes, 24u);  // bare init: MPI_BYTE
  EXPECT_EQ(t.ranks[0][0].line, 5u);
  EXPECT_EQ(t.ranks[0][1].amount, 1e6);
  EXPECT_EQ(t.ranks[0][2].bytes, 7u);
  EXPECT_EQ(t.ranks[0][2].root, 0);
  EXPECT_EQ(t.ranks[1][0].bytes, 24u);  // 3 doubles
  EXPECT_EQ(t.ranks[1][1].op, TiOp::Sleep);
  EXPECT_EQ(t.ranks[1][1].amount, 0.25);
  EXPECT_EQ(t.ranks[1][2].bytes, 7u);  // explicit MPI_CHAR
}

TEST_F(Ti, WriterRoundTripsEveryRecordAndWritesWhatSmpiReplays) {
  const TiTrace in = read_ti(kData + "/smpi_calls.ti");
  const std::string index = (dir_ / "out.ti").string();
  const auto notes = write_ti(in, index);
  // SMPI's replayer knows no Ssend/ISsend, waitAny, testany: said so.
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0].rfind("6 synchronous sends", 0), 0u) << notes[0];
  EXPECT_EQ(notes[1].rfind("12 waitAny/testany/comm_* records not written", 0), 0u) << notes[1];
  EXPECT_TRUE(fs::exists(dir_ / "out.ti_files" / "rank-3.txt"));
  EXPECT_FALSE(fs::exists(dir_ / "out.ti_files.tmp"));
  const TiTrace back = read_ti(index);
  ASSERT_EQ(back.ranks.size(), 4u);
  for (std::size_t r = 0; r < 4; ++r) {
    std::vector<TiRecord> expect;
    for (auto rec : in.ranks[r]) {
      if (rec.op == TiOp::Waitany || rec.op == TiOp::Testany || rec.op == TiOp::CommNoop) continue;
      if (rec.op == TiOp::Ssend) rec.op = TiOp::Send;
      if (rec.op == TiOp::Issend) rec.op = TiOp::Isend;
      expect.push_back(rec);
    }
    EXPECT_EQ(back.ranks[r], expect) << "rank " << r;
  }
  // The same input gives the same bytes.
  const std::string again = (dir_ / "again.ti").string();
  write_ti(back, again);
  for (int r = 0; r < 4; ++r) {
    std::ifstream a(dir_ / "out.ti_files" / ("rank-" + std::to_string(r) + ".txt"));
    std::ifstream b(dir_ / "again.ti_files" / ("rank-" + std::to_string(r) + ".txt"));
    std::string sa((std::istreambuf_iterator<char>(a)), {}), sb((std::istreambuf_iterator<char>(b)), {});
    EXPECT_EQ(sa, sb);
  }
  std::ifstream idx(index);
  std::string first;
  std::getline(idx, first);
  EXPECT_EQ(first, "out.ti_files/rank-0.txt");
}

TEST_F(Ti, BadInputNamesFileAndLine) {
  const std::string f = (dir_ / "t.ti").string();
  EXPECT_EQ(error_of("0 init\n0 compute 10\n0 frobnicate 3\n").rfind(f + ":3: unknown action 'frobnicate'", 0), 0u);
  EXPECT_EQ(error_of("0 init\n1 Startall\n"),
            f + ":2: action 'Startall' cannot be replayed: persistent requests (MPI_Startall): TI does not record "
                "the requests' parameters");
  EXPECT_EQ(error_of("0 ibarrier\n").rfind(f + ":1: action 'ibarrier' (a non-blocking collective)", 0), 0u);
  EXPECT_EQ(error_of("0 send 1 2\n1 recv 0 2 3\n"),
            f + ":1: 'send' takes 3 to 4 arguments (DST TAG COUNT [DATATYPE]), got 2");
  EXPECT_EQ(error_of("0 compute ten\n"), f + ":1: expected a number for flops, got 'ten'");
  EXPECT_EQ(error_of("0 compute -5\n"), f + ":1: flops must not be negative, got -5");
  EXPECT_EQ(error_of("0 send 7 0 8\n1 recv 0 0 8\n"),
            f + ":1: destination 7 is not a rank of this trace (0..1)");
  EXPECT_EQ(error_of("0 send 1 0 8 99\n1 recv 0 0 8\n"),
            f + ":1: unknown datatype id 99 (SimGrid 3.32 predefines 0-50, 57 and 59)");
  EXPECT_EQ(error_of("0 send 1 0 2.5\n1 recv 0 0 8\n"), f + ":1: expected a whole element count for count, got '2.5'");
  EXPECT_EQ(error_of("0 init\nx init\n"), f + ":2: expected a rank (0..10000000) at the start of the line, got 'x'");
  EXPECT_EQ(error_of("\n# nothing\n"), f + ": empty TI trace (expected an index of rank files or '<rank> <action> ...' lines)");
  // An index naming a file that is not there; a rank file with another rank's line.
  EXPECT_EQ(error_of("a.txt\nb.txt\n"), f + ":1: the trace file of rank 0, " + (dir_ / "a.txt").string() +
                                            ", does not exist");
  write("r0.txt", "0 init\n0 compute 5\n");
  write("r1.txt", "1 init\n0 compute 5\n");
  const std::string r1 = (dir_ / "r1.txt").string();
  EXPECT_EQ(error_of("r0.txt\nr1.txt\n"), f + ":2: the trace file of rank 1, " + r1 +
                                              ", has a line of rank 0 (" + r1 +
                                              ":2; line i of an index lists the file of rank i)");
  try {
    (void)read_ti((dir_ / "missing.ti").string());
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind((dir_ / "missing.ti").string() + ": cannot read the TI trace", 0), 0u)
        << e.what();
  }
}

// Line i of an index is rank i's file, whose lines all start with i; one file is one rank's.
TEST_F(Ti, AnIndexIsCheckedAgainstTheRanksInItsFiles) {
  const std::string f = (dir_ / "t.ti").string();
  const std::string r0 = write("files/r0.txt", "0 init\n0 compute 5\n0 finalize\n");
  const std::string r1 = write("files/r1.txt", "# rank 1\n1 init\n1 compute 5\n1 finalize\n");
  EXPECT_EQ(error_of("files/r0.txt\nfiles/r1.txt\n"), "no error");
  // Swapped: the index's line 1 names rank 1's file (the index line, the file and its line).
  EXPECT_EQ(error_of("files/r1.txt\nfiles/r0.txt\n"), f + ":1: the trace file of rank 0, " + r1 +
                                                          ", has a line of rank 1 (" + r1 +
                                                          ":2; line i of an index lists the file of rank i)");
  // Comments and blank lines of the index are not ranks: the line number is the file's.
  EXPECT_EQ(error_of("# two ranks\nfiles/r0.txt\n\nfiles/r0.txt\n"),
            f + ":4: the trace file of rank 1, " + r0 + ", is the trace file of rank 0 too (" + f +
                ":2; each rank has its own file)");
  // One file listed 100,000 times is refused before any rank file is read, by read_ti and
  // TiReader alike; so is the same file under another name (by device and inode).
  std::string many;
  for (int i = 0; i < 100000; ++i) many += "files/r0.txt\n";
  EXPECT_EQ(error_of(many), f + ":2: the trace file of rank 1, " + r0 +
                                ", is the trace file of rank 0 too (" + f +
                                ":1; each rank has its own file)");
  EXPECT_EQ(error_of("files/r0.txt\nfiles/../files/r0.txt\n"),
            f + ":2: the trace file of rank 1, " + (dir_ / "files/../files/r0.txt").string() +
                ", is the trace file of rank 0 too (" + f + ":1; each rank has its own file)");
  try {
    TiReader reader(write("many.ti", many));
    ADD_FAILURE() << "TiReader read an index listing one file 100000 times";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), (dir_ / "many.ti").string() + ":2: the trace file of rank 1, " + r0 +
                                         ", is the trace file of rank 0 too (" + (dir_ / "many.ti").string() +
                                         ":1; each rank has its own file)");
  }
  // TiReader, rank by rank, refuses the swapped index with read_ti's message, at the rank.
  const std::string swapped = write("swapped.ti", "files/r1.txt\nfiles/r0.txt\n");
  TiReader reader(swapped);
  ASSERT_EQ(reader.ranks(), 2u);
  try {
    (void)reader.records(1);
    ADD_FAILURE() << "TiReader read rank 0's file as rank 1's";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), swapped + ":2: the trace file of rank 1, " + r0 +
                                         ", has a line of rank 0 (" + r0 +
                                         ":1; line i of an index lists the file of rank i)");
  }
  try {
    (void)read_ti(swapped);
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), swapped + ":1: the trace file of rank 0, " + r1 +
                                         ", has a line of rank 1 (" + r1 +
                                         ":2; line i of an index lists the file of rank i)");
  }
}

TEST_F(Ti, HostileNumbersAndRanks) {
  const std::string f = (dir_ / "t.ti").string();
  const std::string n30 = "123456789012345678901234567890";
  EXPECT_EQ(error_of("0 compute nan\n"), f + ":1: expected a number for flops, got 'nan'");
  EXPECT_EQ(error_of("0 compute -nan\n"), f + ":1: expected a number for flops, got '-nan'");
  EXPECT_EQ(error_of("0 compute inf\n"), f + ":1: expected a number for flops, got 'inf'");
  EXPECT_EQ(error_of("0 compute 1e999\n"), f + ":1: expected a number for flops, got '1e999'");
  EXPECT_EQ(error_of("0 compute 1e300\n"), f + ":1: flops 1e300 out of range (at most 1e18)");
  EXPECT_EQ(error_of("0 sleep -0.5\n"), f + ":1: seconds must not be negative, got -0.5");
  EXPECT_EQ(error_of("0 sleep 1e19\n"), f + ":1: seconds 1e19 out of range (at most 1e18)");
  EXPECT_EQ(error_of("0 allreduce 8 1e300\n"), f + ":1: flops 1e300 out of range (at most 1e18)");
  EXPECT_EQ(error_of("0 send 1 0 1e30\n1 recv 0 0 8\n"), f + ":1: expected a whole element count for count, got '1e30'");
  EXPECT_EQ(error_of("0 send 1 0 -8\n1 recv 0 0 8\n"), f + ":1: count must not be negative, got -8");
  EXPECT_EQ(error_of("0 send 1 99999999999 8\n1 recv 0 0 8\n"), f + ":1: tag 99999999999 out of range");
  EXPECT_EQ(error_of("0 send 1 0 8\n1 recv 0 " + n30 + " 8\n"), f + ":2: expected an integer for tag, got '" + n30 + "'");
  EXPECT_EQ(error_of("0 send " + n30 + " 0 8\n1 recv 0 0 8\n"),
            f + ":1: expected an integer for destination, got '" + n30 + "'");
  EXPECT_EQ(error_of("0 send 1 0 8\n1 recv -334 0 8\n"), f + ":2: source -334 is not a rank of this trace (0..1)");
  EXPECT_EQ(error_of("0 send -1 0 8\n1 recv 0 0 8\n"), f + ":1: destination -1 is not a rank of this trace (0..1)");
  EXPECT_EQ(error_of("0 wait 0 -333 5\n1 init\n"), f + ":1: destination -333 is not a rank of this trace (0..1)");
  // A first line whose rank does not parse is not a trace line: the file reads as an index.
  EXPECT_EQ(error_of(n30 + " init\n"), f + ":1: expected one trace file name per line (an index file) or '<rank> "
                                             "<action> ...' (a trace file), got '" + n30 + " init'");
  EXPECT_EQ(error_of("0 init\n" + n30 + " init\n"),
            f + ":2: expected a rank (0..10000000) at the start of the line, got '" + n30 + "'");
  EXPECT_EQ(error_of("10000001 init\n"), f + ":1: expected a rank (0..10000000) at the start of the line, got '10000001'");
  // A shared file holds every rank up to its largest: a two-line file cannot declare
  // ten million ranks.
  EXPECT_EQ(error_of("0 init\n9999999 init\n"),
            f + ":2: rank 9999999 in a file without a line of rank 1 (a shared TI file holds the lines of every rank "
                "from 0 to the largest)");
  EXPECT_EQ(error_of("# ranks 0 and 2 only\n2 init\n0 init\n"),
            f + ":2: rank 2 in a file without a line of rank 1 (a shared TI file holds the lines of every rank from 0 to "
                "the largest)");
  EXPECT_EQ(error_of("1 init\n0 init\n1 compute 1e18\n"), "no error");
}

}  // namespace
}  // namespace waitlab::trace
