// Bad input and deadlocks end with an InputError that says what went wrong, never a hang
// or an abort.
#include <gtest/gtest.h>

#include "util/error.hpp"
#include "sim/simulation.hpp"
#include "sim_util.hpp"

namespace waitlab::sim::test {
namespace {

std::string error_of(const models::Workload& w, const RunOptions& o = options(),
                     const models::PlatformDesc& p = cluster(4)) {
  try {
    simulate(p, w, {}, o);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no InputError";
}

TEST(Deadlock, ReceivesThatAreNeverMatchedNameTheBlockedRanks) {
  // Both ranks receive first: neither message is ever sent.
  ListWorkload w({{compute(1e-3), p2p(ActionKind::Recv, 1, 8, 7), p2p(ActionKind::Send, 1, 8, 7)},
                  {p2p(ActionKind::Recv, 0, 16, 7), p2p(ActionKind::Send, 0, 16, 7)}});
  EXPECT_EQ(
      error_of(w),
      "deadlock at t=0.001 s: 2 of 2 ranks can never finish: rank 0 blocked in MPI_Recv from rank 1 tag 7 "
      "(8 B) (action 1); rank 1 blocked in MPI_Recv from rank 0 tag 7 (16 B) (action 0)");
  EXPECT_EQ(error_of(w, options(Semantics::SmpiDefault)), error_of(w));
}

TEST(Deadlock, WaitsAndCollectivesAreNamed) {
  ListWorkload w({{p2p(ActionKind::Irecv, 1, 8, 3, 5), wait(5)},
                  {p2p(ActionKind::Irecv, 0, 8, 4, 0), p2p(ActionKind::Irecv, 2, 8, 4, 1), waitall()},
                  {coll(ActionKind::Barrier)},
                  {}});
  EXPECT_EQ(error_of(w),
            "deadlock at t=0 s: 3 of 4 ranks can never finish: rank 0 blocked in MPI_Wait (action 1) on the "
            "MPI_Irecv from rank 1 tag 3 (8 B) of action 0; rank 1 blocked in MPI_Waitall (action 2) on the "
            "MPI_Irecv from rank 0 tag 4 (8 B) of action 0; rank 2 blocked in MPI_Barrier (action 0)");
}

TEST(Deadlock, LargeSendWithoutReceiverAndUnreceivedEagerSend) {
  ListWorkload large({{p2p(ActionKind::Send, 1, 1 << 20, 2)}, {}});
  EXPECT_EQ(error_of(large),
            "deadlock at t=0 s: 1 of 2 ranks can never finish: rank 0 blocked in MPI_Send to rank 1 "
            "tag 2 (1048576 B) (action 0)");
  // An eager send returns, but the message must still be received before the run can end.
  ListWorkload eager({{p2p(ActionKind::Send, 1, 8, 2), compute(2e-3)}, {}});
  EXPECT_EQ(error_of(eager),
            "deadlock at t=0.002 s: 1 of 2 ranks can never finish: rank 0 reached MPI_Finalize, "
            "but its eager send to rank 1 tag 2 (action 0) was never received");
}

TEST(BadActions, AreReportedWithRankAndAction) {
  EXPECT_EQ(error_of(ListWorkload({{compute(1), p2p(ActionKind::Send, 9, 8)}, {}})),
            "rank 0, action 1 (send): destination 9 is not a rank (the run has 2 ranks)");
  EXPECT_EQ(error_of(ListWorkload({{}, {wait(3)}})),
            "rank 1, action 0 (wait): MPI_Wait on request slot 3, which has no outstanding request");
  EXPECT_EQ(
      error_of(ListWorkload({{p2p(ActionKind::Irecv, 1, 8, 0, 0), p2p(ActionKind::Irecv, 1, 8, 0, 0)}, {}})),
      "rank 0, action 1 (irecv): request slot 0 is still in use");
  EXPECT_EQ(
      error_of(ListWorkload({{p2p(ActionKind::Isend, 1, 8, 0, 4)}, {p2p(ActionKind::Recv, 0, 8)}})),
      "rank 0: the action stream ended with 1 request(s) never completed (slots 4); end with MPI_Wait or "
      "MPI_Waitall");
  // Waits marked in_waitall name requests of the Waitall that must follow them at once.
  EXPECT_EQ(error_of(ListWorkload({{p2p(ActionKind::Isend, 1, 8, 0, 0), in_waitall(1), waitall()},
                                   {p2p(ActionKind::Recv, 0, 8)}})),
            "rank 0, action 2 (waitall): MPI_Waitall on request slot 1, which has no outstanding request");
  EXPECT_EQ(error_of(ListWorkload({{p2p(ActionKind::Isend, 1, 8, 0, 0), in_waitall(0), in_waitall(0), waitall()},
                                   {p2p(ActionKind::Recv, 0, 8)}})),
            "rank 0, action 3 (waitall): MPI_Waitall names request slot 0 twice");
  EXPECT_EQ(error_of(ListWorkload({{p2p(ActionKind::Isend, 1, 8, 0, 0), in_waitall(0), compute(1), waitall()},
                                   {p2p(ActionKind::Recv, 0, 8)}})),
            "rank 0, action 2 (compute): a Wait marked in_waitall is followed by compute, not by the Waitall it "
            "belongs to");
  EXPECT_EQ(
      error_of(ListWorkload({{p2p(ActionKind::Isend, 1, 8, 0, 0), in_waitall(0)}, {p2p(ActionKind::Recv, 0, 8)}})),
            "rank 0: the action stream ended after a Wait marked in_waitall: a Waitall must follow it");
  EXPECT_EQ(error_of(ListWorkload({{p2p(ActionKind::Send, 1, 8, -2)}, {}})),
            "rank 0, action 0 (send): tag must not be negative, got -2");
  EXPECT_EQ(
      error_of(ListWorkload({{compute(-1)}})),
      "rank 0, action 0 (compute): compute amount must be a finite, non-negative number, got -1.000000");
  EXPECT_EQ(error_of(ListWorkload({{coll(ActionKind::Bcast, 8, 2)}, {coll(ActionKind::Bcast, 8, 2)}})),
            "rank 0, action 0 (bcast): root 2 is not a rank (the run has 2 ranks)");
  // A message larger than the posted receive is truncated: MPI reports an error.
  EXPECT_EQ(error_of(ListWorkload({{p2p(ActionKind::Send, 1, 100)}, {p2p(ActionKind::Recv, 0, 10)}})),
            "rank 1, action 0 (recv): MPI_Recv: the message is larger than the receive posted for it "
            "(MPI_ERR_TRUNCATE)");
}

// A message to a rank whose actor has ended made SMPI abort ("Actor pid=2 is gone??" and a
// backtrace: an internal failure); a finished rank can never receive it: bad input, named.
TEST(FinishedRank, AMessageToItIsAnInputErrorNamingSenderActionAndDestination) {
  const std::string gone =
      "rank 0, action 1 (send): destination rank 1 has already finished (at t=0 s, after its last action): "
      "the message can never be received";
  for (const auto sem : {Semantics::Waitlab, Semantics::SmpiDefault}) {
    // Eager (8 B) and rendezvous (1 MiB) sends, after rank 1 ended at t=0.
    EXPECT_EQ(error_of(ListWorkload({{compute(1e-3), p2p(ActionKind::Send, 1, 8, 5)}, {}}), options(sem)), gone);
    EXPECT_EQ(error_of(ListWorkload({{compute(1e-3), p2p(ActionKind::Send, 1, 1 << 20, 5)}, {}}), options(sem)),
              gone);
    EXPECT_EQ(error_of(ListWorkload({{compute(1e-3), p2p(ActionKind::Isend, 1, 8, 5, 0), wait(0)}, {}}), options(sem)),
              "rank 0, action 1 (isend): destination rank 1 has already finished (at t=0 s, after its last "
              "action): the message can never be received");
    Action sr = p2p(ActionKind::Sendrecv, 1, 8, 5);
    sr.peer2 = 1;
    sr.bytes2 = 8;
    EXPECT_EQ(error_of(ListWorkload({{compute(1e-3), sr}, {}}), options(sem)),
              "rank 0, action 1 (sendrecv): destination rank 1 has already finished (at t=0 s, after its last "
              "action): the message can never be received");
  }
  // Its time is the one it ended at; the check is exact, not a timeout: a message that
  // reached rank 1 before it ended is fine, one sent after is not.
  EXPECT_EQ(error_of(ListWorkload({{compute(1e-3), p2p(ActionKind::Send, 1, 8, 5), compute(1e-3),
                                    p2p(ActionKind::Send, 1, 8, 5)},
                                   {p2p(ActionKind::Recv, 0, 8, 5), compute(5e-4)}})),
            "rank 0, action 3 (send): destination rank 1 has already finished (at t=0.00150405889 s, after its last "
            "action): the message can never be received");
}

TEST(FinishedRank, ACollectiveItNeverEntersIsAnInputError) {
  // Rank 1 ends after one barrier; rank 0's second collective can never complete.
  for (const auto sem : {Semantics::Waitlab, Semantics::SmpiDefault})
    EXPECT_EQ(error_of(ListWorkload({{coll(ActionKind::Barrier), compute(1e-3), coll(ActionKind::Bcast, 8, 0)},
                                     {coll(ActionKind::Barrier)}}),
                       options(sem)),
              "rank 0, action 2 (bcast): rank 1 has already finished (at t=8.09808479e-06 s) after 1 collective "
              "call(s): this one, rank 0's collective call 2, can never complete");
}

TEST(BadOptions, AreRejectedBeforeTheRun) {
  ListWorkload w(std::vector<std::vector<Action>>(2));  // two ranks doing nothing
  auto o = options();
  o.collectives = "fastest";
  EXPECT_EQ(error_of(w, o), "unknown collective set 'fastest' (sets: fast, mpi, default)");
  o = options();
  o.eager_threshold = -1;
  EXPECT_EQ(error_of(w, o), "eager threshold must be a non-negative number of bytes");
  // models::place() words this one; the engine only has to stop before the run.
  EXPECT_EQ(error_of(ListWorkload(std::vector<std::vector<Action>>(5)), options(), cluster(4))
                .rfind("platform has 4 cores but the workload needs 5 ranks", 0),
            0u);
}

}  // namespace
}  // namespace waitlab::sim::test

namespace waitlab::sim::test {
namespace {

TEST(Progress, ReportsSimulatedTimeAndFinishedRanksOnStderr) {
  ListWorkload w({{compute(1e-3)}, {compute(2e-3)}});
  auto o = options();
  o.progress = true;
  testing::internal::CaptureStderr();
  const auto r = simulate(cluster(2), w, {}, o);
  const std::string err = testing::internal::GetCapturedStderr();
  // Not a terminal: one line per report; the last one when the run ends, with the wall time
  // and the simulation process's resident memory (host-dependent).
  const std::string start = "simulated 0.002000 s, 100 % done, 2/2 ranks finished, ";
  EXPECT_EQ(err.rfind(start, 0), 0u) << err;
  EXPECT_NE(err.find(" s wall, "), std::string::npos) << err;
  EXPECT_EQ(err.find('\n'), err.size() - 1) << err;
  EXPECT_TRUE(err.size() > 8 && (err.compare(err.size() - 12, 12, " MiB memory\n") == 0 ||
                                 err.compare(err.size() - 12, 12, " GiB memory\n") == 0))
      << err;
  o.progress = false;
  testing::internal::CaptureStderr();
  simulate(cluster(2), w, {}, o);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(r.stats.simulated_time, 2e-3);
}

// The percentage is the ranks' mean progress through their actions; the time left scales
// the wall time so far by (1 − f)/f, once 0.5 % are done and 1 s has passed.
TEST(Progress, PercentageAndTimeLeft) {
  using detail::progress_text;
  EXPECT_EQ(progress_text(0.05, 0.25, 0, 4096, 10, false),
            "simulated 0.050000 s, 25.0 % done, about 30 s left, 0/4096 ranks finished, 10.0 s wall");
  EXPECT_EQ(progress_text(0.09, 0.9, 0, 8, 4, false),
            "simulated 0.090000 s, 90.0 % done, less than 1 s left, 0/8 ranks finished, 4.0 s wall");
  EXPECT_EQ(progress_text(0.001, 0.004, 0, 8, 3, false), "simulated 0.001000 s, 0.4 % done, 0/8 ranks finished, 3.0 s wall");
  EXPECT_EQ(progress_text(0.001, 0.5, 0, 8, 0.5, false), "simulated 0.001000 s, 50.0 % done, 0/8 ranks finished, 0.5 s wall");
  EXPECT_EQ(progress_text(0.1, 1.0, 8, 8, 12.34, true), "simulated 0.100000 s, 100 % done, 8/8 ranks finished, 12.3 s wall");
  EXPECT_EQ(progress_text(0.1, -1, 3, 8, 2, false), "simulated 0.100000 s, 3/8 ranks finished, 2.0 s wall");
  // The simulation process's resident memory, when known.
  EXPECT_EQ(progress_text(0.1, -1, 3, 8, 2, false, 652ull << 20),
            "simulated 0.100000 s, 3/8 ranks finished, 2.0 s wall, 652 MiB memory");
  EXPECT_EQ(progress_text(0.1, 1.0, 8, 8, 45, true, 1932735283ull),
            "simulated 0.100000 s, 100 % done, 8/8 ranks finished, 45.0 s wall, 1.8 GiB memory");
}

}  // namespace
}  // namespace waitlab::sim::test
