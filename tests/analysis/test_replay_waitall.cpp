// MPI_Waitall over some of the requests in replayed traces (models/replay.hpp): a TI
// `waitall N` completes the outstanding requests that no later `wait` record of the rank names
// (the look-ahead), all of them when none is named; an OTF2 or Paraver MPI_Waitall completes
// exactly the requests the trace says it completed.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "analysis/trace/otf2.hpp"
#include "analysis/trace/paraver.hpp"
#include "analysis/trace/ti.hpp"
#include "models/replay.hpp"
#include "sim/engine.hpp"
#include "tests/temp_dir.hpp"
#include "trace_builder.hpp"

namespace waitlab::analysis {
namespace {

using models::Action;
using models::ActionKind;
using test::TraceBuilder;
using trace::EventKind;
using trace::MpiOp;
using trace::TiOp;
using trace::TiRecord;

using ReplayWaitall = ::waitlab::test::TempDirTest;

// Rank r's MPI actions, one word each: "irecv1#0" (peer 1, slot 0), "isend1#1", "wait#0",
// "+wait#1" (a Wait marked in_waitall: one of the next Waitall's requests), "waitall".
std::vector<std::string> calls(const models::Workload& w, trace::Rank r) {
  std::vector<std::string> out;
  Action a;
  for (auto s = w.stream(r); s->next(a);) {
    switch (a.kind) {
      case ActionKind::Isend:
      case ActionKind::Irecv:
        out.push_back(std::string(models::action_name(a.kind)) + std::to_string(a.peer) + "#" +
                      std::to_string(a.request));
        break;
      case ActionKind::Wait:
        out.push_back(std::string(a.in_waitall ? "+" : "") + "wait#" + std::to_string(a.request));
        break;
      case ActionKind::Waitall:
        out.push_back("waitall");
        break;
      default:
        break;
    }
  }
  return out;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : " ") + x;
  return s;
}

class TiText : public ReplayWaitall {
 protected:
  // Replays a TI trace given as the text of one shared file; the notes about waits go to notes_.
  std::unique_ptr<models::Workload> replay(const std::string& text) {
    const std::string path = (dir_ / "t.ti").string();
    std::ofstream(path) << text;
    models::ReplayReport rep;
    auto w = models::replay_ti(trace::read_ti(path), "t", {}, &rep);
    notes_.clear();
    for (const auto& n : rep.notes)
      if (n.find("wait") != std::string::npos) notes_ += n + "\n";
    return w;
  }
  std::string notes_;
};

// LULESH: MPI_Waitall(26, sendRequests) while the receives are pending; the receives are
// completed later by MPI_Wait, whose records name them.
TEST_F(TiText, WaitallOverSendsLeavesTheReceivesLaterWaitsName) {
  const auto w = replay(
      "0 init\n0 irecv 1 5 8\n0 isend 1 6 8\n0 waitall 26\n0 compute 1000\n0 wait 1 0 5\n0 finalize\n"
      "1 init\n1 irecv 0 6 8\n1 isend 0 5 8\n1 waitall 26\n1 wait 0 1 6\n1 finalize\n");
  EXPECT_EQ(joined(calls(*w, 0)), "irecv1#0 isend1#1 +wait#1 waitall wait#0");
  EXPECT_EQ(joined(calls(*w, 1)), "irecv0#0 isend0#1 +wait#1 waitall wait#0");
  EXPECT_EQ(notes_,
            "2 × waitall records completing only the outstanding requests no later wait record names (SMPI's "
            "replay completes all)\n");

  // Written back as TI: the waitall counts its own requests, the wait follows, as SMPI writes it.
  const auto ti = models::ti_from_workload(*w, 1e9);
  std::string ops;
  for (const auto& rec : ti.ranks[0])
    ops += std::string(trace::ti_op_name(rec.op)) + (rec.op == TiOp::Waitall ? std::to_string(rec.count) : "") + " ";
  EXPECT_EQ(ops, "irecv isend waitall1 compute wait ");
  EXPECT_EQ(ti.ranks[0].back().peer, 1);
  EXPECT_EQ(ti.ranks[0].back().peer2, 0);
  EXPECT_EQ(ti.ranks[0].back().tag, 5);
}

TEST_F(TiText, WaitallWithNoLaterWaitCompletesAll) {
  const auto w = replay("0 irecv 1 5 8\n0 isend 1 6 8\n0 waitall 2\n1 irecv 0 6 8\n1 isend 0 5 8\n1 waitall 2\n");
  EXPECT_EQ(joined(calls(*w, 0)), "irecv1#0 isend1#1 waitall");
  EXPECT_EQ(notes_, "");
}

// A request that crossed a waitall is its waitall's once its (source, destination, tag) is
// posted again before any wait names it: the wait names the new one.
TEST_F(TiText, KeyPostedAgainGivesTheOldRequestToItsWaitall) {
  const auto w = replay("0 irecv 1 5 8\n0 waitall 1\n0 irecv 1 5 8\n0 wait 1 0 5\n1 send 0 5 8\n1 send 0 5 8\n");
  EXPECT_EQ(joined(calls(*w, 0)), "irecv1#0 waitall irecv1#0 wait#0");
  EXPECT_EQ(notes_, "");
}

// LULESH's position/velocity receives stay pending across its MONOQ exchange (two waitalls)
// and are waited for last.
TEST_F(TiText, ReceivesPendingAcrossTwoWaitalls) {
  const auto w = replay(
      "0 irecv 1 30 8\n0 isend 1 30 8\n0 waitall 26\n0 irecv 1 10 8\n0 isend 1 10 8\n0 waitall 26\n"
      "0 wait 1 0 10\n0 wait 1 0 30\n"
      "1 irecv 0 30 8\n1 isend 0 30 8\n1 waitall 26\n1 irecv 0 10 8\n1 isend 0 10 8\n1 waitall 26\n"
      "1 wait 0 1 10\n1 wait 0 1 30\n");
  EXPECT_EQ(joined(calls(*w, 0)), "irecv1#0 isend1#1 +wait#1 waitall irecv1#1 isend1#2 +wait#2 waitall wait#1 wait#0");
  EXPECT_NE(notes_.find("4 × waitall records completing only"), std::string::npos) << notes_;
}

// Two pending requests of one key, both named after the waitall, oldest first; a waitall
// whose requests are all named later is no call at all.
TEST_F(TiText, SameKeyTwiceAndAWaitallWithNothingLeft) {
  const auto w = replay(
      "0 irecv 1 5 8\n0 irecv 1 5 8\n0 isend 1 5 8\n0 waitall 3\n0 wait 1 0 5\n0 wait 1 0 5\n"
      "0 irecv 1 7 8\n0 waitall 26\n0 wait 1 0 7\n"
      "1 irecv 0 5 8\n1 send 0 5 8\n1 send 0 5 8\n1 waitall 1\n1 send 0 7 8\n");
  EXPECT_EQ(joined(calls(*w, 0)), "irecv1#0 irecv1#1 isend1#2 +wait#2 waitall wait#0 wait#1 irecv1#1 wait#1");
  EXPECT_NE(notes_.find("2 × waitall records completing only"), std::string::npos) << notes_;
}

// The look-ahead's bound: more than 65,536 requests of a rank pending gives the oldest that
// crossed a waitall to it, counted; a wait naming it later finds nothing (skipped, counted).
TEST_F(TiText, MoreThanTheBoundOfPendingRequestsGivesTheOldestToItsWaitall) {
  constexpr int kPosts = 70000;
  trace::TiTrace ti;
  ti.ranks.resize(2);
  for (int i = 0; i < kPosts; ++i) {
    TiRecord post;
    post.op = TiOp::Irecv;
    post.peer = 1;
    post.tag = i;
    post.bytes = 8;
    ti.ranks[0].push_back(post);
    TiRecord all;
    all.op = TiOp::Waitall;
    ti.ranks[0].push_back(all);
    post.op = TiOp::Send;
    post.peer = 0;
    ti.ranks[1].push_back(post);
  }
  for (int i : {0, 1, kPosts - 1}) {  // names the first two (beyond the bound) and the last
    TiRecord wait;
    wait.op = TiOp::Wait;
    wait.peer = 1;
    wait.peer2 = 0;
    wait.tag = i;
    ti.ranks[0].push_back(wait);
  }
  models::ReplayReport rep;
  const auto w = models::replay_ti(ti, "t", {}, &rep);
  std::string notes;
  for (const auto& n : rep.notes) notes += n + "\n";
  EXPECT_NE(notes.find("4464 × requests pending at a waitall given to it without a look-ahead (more than 65536 "
                       "requests of the rank pending)"),
            std::string::npos)
      << notes;
  EXPECT_NE(notes.find("2 × wait records with no outstanding request skipped"), std::string::npos) << notes;
  // The last request is named: its waitall is no call; the others each complete at theirs.
  EXPECT_NE(notes.find("1 × waitall records completing only"), std::string::npos) << notes;
  const auto c = calls(*w, 0);
  ASSERT_EQ(c.size(), 2u * kPosts);
  EXPECT_EQ(c[0], "irecv1#0");
  EXPECT_EQ(c[1], "waitall");
  EXPECT_EQ(c[c.size() - 2], "irecv1#0");
  EXPECT_EQ(c.back(), "wait#0");
}

// A timed trace names the requests each call completed: rank 0's MPI_Waitall completes its
// send only, while its receive (rank 1 sends 3 ms later) stays pending until its MPI_Wait.
// Replayed from the trace, from its OTF2 archive and from its Paraver file: an MPI_Waitall
// over the send alone, and the receive completes in its own MPI_Wait, after the compute.
TEST_F(ReplayWaitall, TimedTraceWaitallOverASendLeavesTheReceiveToItsWait) {
  TraceBuilder b(2, 1e-6);
  for (trace::Rank r : {0, 1}) b.call(r, MpiOp::Init, 0, 10);
  b.irecv(0, 10, 11, 1, 1, 7).isend(0, 11, 12, 1, 2, 8);
  b.wait(0, 12, 20, 20, {{true, 8, 1, 2}}, MpiOp::Waitall);  // the send only
  b.wait(0, 1020, 3030, 3030, {{false, 7, 1, 1}});            // after 1 ms of compute
  b.recv(1, 10, 20, 20, 0, 2).send(1, 3020, 3025, 0, 1);     // 3 ms of compute between
  b.call(0, MpiOp::Finalize, 3030, 3040).call(1, MpiOp::Finalize, 3025, 3040);

  const std::string archive = (dir_ / "otf2").string();
  trace::write_otf2(b.trace(), archive);
  const std::string prv = (dir_ / "t.prv").string();
  (void)trace::write_paraver(b.trace(), prv);  // (what it does not keep: the hand-made events' op fields)
  const std::vector<std::pair<std::string, trace::Trace>> traces = {
      {"trace", b.trace()}, {"OTF2", trace::read_otf2(archive + "/traces.otf2")}, {"Paraver", trace::read_paraver(prv)}};
  for (const auto& [what, t] : traces) {
    models::ReplayReport rep;
    const auto w = models::replay_trace(t, "t", {}, &rep);
    EXPECT_EQ(joined(calls(*w, 0)), "irecv1#0 isend1#1 +wait#1 waitall wait#0") << what;
    for (const auto& n : rep.notes) EXPECT_EQ(n.find("wait"), std::string::npos) << what << ": " << n;

    models::PlatformDesc p;
    p.kind = models::PlatformKind::Cluster;
    p.nodes = 2;
    p.cores = 1;
    p.speed = 1e9;
    p.network_link = {1e9, 1e-6};
    sim::RunOptions o;
    o.semantics = sim::Semantics::SmpiDefault;
    const auto replayed = sim::simulate(p, *w, {}, o).trace;
    const auto& ev = replayed.locations[0].events;
    double waitall_leave = -1, wait_enter = -1, recv_done = -1;
    for (const auto& e : ev) {
      if (e.kind == EventKind::Leave && e.op == MpiOp::Waitall) waitall_leave = e.time;
      if (e.kind == EventKind::Enter && e.op == MpiOp::Wait) wait_enter = e.time;
      if (e.kind == EventKind::IrecvComplete) {
        EXPECT_EQ(e.op, MpiOp::Wait) << what;
        recv_done = e.time;
      }
    }
    EXPECT_LT(waitall_leave, 1e-4) << what;                             // the send's transfer, not the receive
    EXPECT_NEAR(wait_enter, waitall_leave + 1e-3, 1e-9) << what;        // then the 1 ms of compute
    EXPECT_GT(recv_done, 3e-3) << what;                                 // rank 1's 3 ms, then the message
    EXPECT_LT(recv_done, 3.1e-3) << what;
  }
}

}  // namespace
}  // namespace waitlab::analysis
