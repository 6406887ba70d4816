// Hostile scenario files (issue 19): recursive aliases, alias bombs, huge files, deep
// nesting, bytes that are not UTF-8, sizes that would be allocated before they are checked.
// Each is an InputError naming the file and line:col, found before anything runs, with bounded
// work: the tests count what a refusal does (YAML nodes made, keys looked up, bytes allocated),
// never how long it takes, so that a blow-up fails on any machine and a busy one passes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "allocation_counter.hpp"
#include "util/error.hpp"
#include "scenarios/scenario.hpp"

namespace waitlab::scenarios {
namespace {

namespace fs = std::filesystem;

const std::string kHead = "platform: {type: cluster, nodes: 4}\nworkload: {type: heat1d, ranks: 4, iterations: 3}\n";

std::string error_of(const std::string& text, const std::vector<std::string>& overrides = {}) {
  try {
    parse_scenario(text, "h.yaml", overrides);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

using waitlab::testing::bytes_allocated_by;

// The work of reading `text` up to its YAML tree, counted as far as it went.
YamlWork work_of(const std::string& text) {
  YamlWork w;
  try {
    read_yaml_tree(text, "h.yaml", w);
  } catch (const InputError&) {
  }
  return w;
}

constexpr std::size_t kMiB = std::size_t{1} << 20;

TEST(HostileScenario, RecursiveAliasIsRefused) {
  // Was a SIGSEGV: unbounded recursion while copying the node that contains itself.
  EXPECT_EQ(error_of("a: &a [*a]\n"),
            "h.yaml:1:4: recursive YAML alias: the node anchored here contains an alias to itself");
  EXPECT_EQ(error_of("platform: {type: cluster, nodes: 4}\nworkload: &w {type: heat1d, ranks: 4, x: [*w]}\n"),
            "h.yaml:2:11: recursive YAML alias: the node anchored here contains an alias to itself");
  EXPECT_EQ(error_of(kHead + "perturbations: &p\n  - {type: delay, rank: 1, iteration: 1, duration: 1ms, x: *p}\n"),
            "h.yaml:3:16: recursive YAML alias: the node anchored here contains an alias to itself");
  // An alias used twice side by side is no recursion.
  EXPECT_EQ(error_of("platform: &p {type: cluster, nodes: 4}\nworkload: {type: heat1d, ranks: 4}\n"
                     "variants: [{name: a, platform: *p}, {name: b, platform: *p}]\n"),
            "(no error)");
}

TEST(HostileScenario, AliasBombIsRefusedWithBoundedWork) {
  // "Billion laughs": 12 levels, each an alias repeated 10 times: 10^12 nodes once expanded
  // (it hung, growing beyond 12 GB).
  std::string bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 12; ++i) {
    bomb += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) bomb += (k ? ", *a" : "*a") + std::to_string(i - 1);
    bomb += "]\n";
  }
  std::string msg;
  const std::size_t bytes = bytes_allocated_by([&] { msg = error_of(bomb); });
  EXPECT_EQ(msg,
            "h.yaml:1:22: the scenario has more than 100000 YAML nodes (values, keys, lists and mappings; every use "
            "of an alias counts, so an alias repeated in aliases repeated ... multiplies); a scenario has a few "
            "hundred");
  // The copy stops at the limit: one node past it, each use of an alias a node, each list's
  // ancestors compared once (at most 12 deep here). The expansion it replaced made 10^12 nodes
  // and grew beyond 12 GB.
  const YamlWork w = work_of(bomb);
  EXPECT_EQ(w.nodes, 100001u);
  EXPECT_LE(w.ancestor_checks, 12u * w.nodes);
  EXPECT_LT(bytes, 128 * kMiB) << bytes;  // 40 MB: the tree of 10^5 nodes, with its positions, and yaml-cpp's of the text
  // The same limit inside a section.
  EXPECT_NE(error_of(kHead + "perturbations:\n" + "  - &d {type: delay}\n" + bomb).find("more than 100000 YAML nodes"),
            std::string::npos);
}

TEST(HostileScenario, DeepNestingIsRefused) {
  // The top-level mapping is the first level: the 64th list is one too many.
  EXPECT_EQ(error_of(kHead + "x: " + std::string(65, '[') + std::string(65, ']') + "\n"),
            "h.yaml:3:67: the scenario nests mappings and lists deeper than 64 levels");
  // yaml-cpp's own guard stops deeper documents before they reach the copy.
  EXPECT_EQ(error_of("x: " + std::string(100000, '[') + std::string(100000, ']') + "\n").substr(0, 9), "h.yaml:1:");
  EXPECT_NE(error_of("x: " + std::string(100000, '[') + std::string(100000, ']') + "\n").find("deeper than 64 levels"),
            std::string::npos);
}

TEST(HostileScenario, LongScenarioIsRefusedBeforeParsing) {
  // A long list took 107 s and 5.6 GB for a 100 MB file before its (correct) error.
  std::string text = kHead + "x:\n";
  while (text.size() <= 300 * 1024) text += "  - 12345678\n";
  std::string msg;
  const std::size_t bytes = bytes_allocated_by([&] { msg = error_of(text); });
  EXPECT_EQ(msg, "h.yaml:20162:2: the scenario is longer than 262144 bytes (256 KiB) here; a scenario is a few KB "
                 "(give long rank lists as ranges, e.g. 0-4095)");
  // Refused before yaml-cpp sees it (its tree of the text would be tens of MB): no node made,
  // and little more allocated than the message.
  EXPECT_EQ(work_of(text).steps(), 0u);
  EXPECT_LT(bytes, 64u << 10) << bytes;
  // The file is not even read beyond the limit.
  const fs::path dir = fs::temp_directory_path() / ("wl_hostile_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  {
    std::ofstream f(dir / "big.yaml", std::ios::binary);
    f << text;
    const std::string line = "  - 12345678\n";
    for (int i = 0; i < 800000; ++i) f << line;  // 10 MB
  }
  const std::size_t before = waitlab::testing::bytes_allocated();
  try {
    load_scenario((dir / "big.yaml").string());
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), (dir / "big.yaml").string() +
                                         ":20162:2: the scenario is longer than 262144 bytes (256 KiB) here; a "
                                         "scenario is a few KB (give long rank lists as ranges, e.g. 0-4095)");
  }
  // 256 KiB and one byte of it are read, not its 10 MB.
  EXPECT_LT(waitlab::testing::bytes_allocated() - before, 1 * kMiB);
  fs::remove_all(dir);
}

TEST(HostileScenario, ManyNodesWithoutAliasesAreRefused) {
  std::string text = kHead + "x: [";
  for (int i = 0; i < 100001; ++i) text += i ? ",1" : "1";
  text += "]\n";
  EXPECT_EQ(error_of(text),
            "h.yaml:3:199971: the scenario has more than 100000 YAML nodes (values, keys, lists and mappings; every "
            "use of an alias counts, so an alias repeated in aliases repeated ... multiplies); a scenario has a few "
            "hundred");
}

TEST(HostileScenario, ManyKeysAreCheckedInLinearTime) {
  // Duplicate keys were looked for key by key: 27000 keys took 8 s.
  std::string text = kHead;
  for (int i = 0; text.size() < 250 * 1024; ++i) text += "k" + std::to_string(i) + ": 1\n";
  const std::string msg = error_of(text);
  EXPECT_EQ(msg.rfind("h.yaml:3:1: unknown section 'k0'", 0), 0u) << msg;
  // Each key is looked up once among the keys before it, whatever their number: the key by
  // key search it replaced made keys^2/2 comparisons (27000 keys: 3.6e8, 8 s).
  const std::size_t lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));  // a key each
  const YamlWork w = work_of(text);
  EXPECT_EQ(w.key_lookups, lines + 5);  // and the five keys of kHead's flow mappings
  EXPECT_LE(w.steps(), 4 * lines);  // 3.0 a line: two nodes and one lookup
  EXPECT_EQ(error_of(kHead + "k: 1\nj: 2\nk: 3\n"), "h.yaml:5:1: duplicate key 'k' (first given at h.yaml:3:1)");
}

TEST(HostileScenario, InvalidUtf8IsRefusedWhereItIs) {
  // It reached nlohmann::json's dump after the simulation: exit 1, and the old summary.json
  // and report.html were gone.
  EXPECT_EQ(error_of("description: caf\xe9 au lait\n" + kHead),
            "h.yaml:1:17: not valid UTF-8 (byte 0xe9); a scenario is UTF-8 text");
  EXPECT_EQ(error_of(kHead + "# a comment \x9f\n"), "h.yaml:3:13: not valid UTF-8 (byte 0x9f); a scenario is UTF-8 text");
  // Valid UTF-8 passes, and columns count characters.
  EXPECT_EQ(error_of("description: \xc2\xb5s and \xe2\x82\xac \xff\n" + kHead),
            "h.yaml:1:23: not valid UTF-8 (byte 0xff); a scenario is UTF-8 text");
  EXPECT_EQ(error_of("description: \"25\xc2\xb5s, 3\xe2\x82\xac\"\n" + kHead), "(no error)");
  // Overlong forms and surrogates are not UTF-8 either, written or escaped; the values yaml-cpp
  // decodes are checked again (a NUL from an escape would cut a path short).
  EXPECT_EQ(error_of("description: \xc0\xaf\n" + kHead), "h.yaml:1:14: not valid UTF-8 (byte 0xc0); a scenario is UTF-8 text");
  EXPECT_EQ(error_of("description: \xed\xa0\x80\n" + kHead),
            "h.yaml:1:14: not valid UTF-8 (byte 0xed); a scenario is UTF-8 text");
  EXPECT_EQ(error_of("description: \"\\ud800\"\n" + kHead), "h.yaml:1:21: YAML syntax error: invalid unicode: 55296");
  EXPECT_EQ(error_of("name: \"a\\0b\"\n" + kHead), "h.yaml:1:7: the value holds a NUL character (\\0)");
  // A --set value is checked as a written one.
  EXPECT_EQ(error_of(kHead, {"description=caf\xe9"}),
            "--set description=caf\xe9: the override is not valid UTF-8 (byte 0xe9 at offset 15); a scenario is UTF-8 "
            "text");
}

TEST(HostileScenario, SizesAreCheckedBeforeAnythingIsAllocated) {
  // 10^9 ranks made models::place allocate 12 GB before the core count was checked.
  std::string msg;
  const std::size_t bytes = bytes_allocated_by([&] { msg = error_of(kHead, {"workload.ranks=1000000000"}); });
  EXPECT_EQ(msg,
            "--set workload.ranks=1000000000: option 'ranks' of workload heat1d: must be at most 1048576 (waitlab's "
            "limit on ranks), got 1000000000");
  EXPECT_LT(bytes, 1 * kMiB) << bytes;  // 26 KB; 12 GB before the check came first
  EXPECT_EQ(error_of(kHead, {"platform.nodes=4000000000"}),
            "--set platform.nodes=4000000000: option 'nodes' of platform cluster: must be a whole number between 1 "
            "and 2147483647, got 4000000000");
  EXPECT_EQ(error_of(kHead, {"platform.nodes=2000000000"}),
            "--set platform.nodes=2000000000: option 'nodes' of platform cluster: must be at most 1048576 (waitlab's "
            "limit on hosts), got 2000000000");
  EXPECT_EQ(error_of(kHead, {"workload.iterations=99999999999999999999"}),
            "--set workload.iterations=99999999999999999999: option 'iterations' of workload heat1d: must be between "
            "1 and 1073741824, got 100000000000000000000");
  EXPECT_EQ(error_of(kHead, {"workload.bytes=1e300TB"}),
            "--set workload.bytes=1e300TB: option 'bytes' of workload 'heat1d': '1e300TB' is too large (not a finite "
            "number)");
  EXPECT_EQ(error_of("platform: {type: hierarchical, topology: torus, topo_parameters: '123456789012345678901234567890'}\n"
                     "workload: {type: heat1d, ranks: 4}\n"),
            "h.yaml:1:49: option 'topo_parameters' of platform hierarchical: '123456789012345678901234567890' is not a "
            "valid torus: '123456789012345678901234567890' is not a whole number from 1 to 999999999; a torus is its "
            "extents 'X,Y,Z' (any number of dimensions), e.g. '4,4,4' (64 nodes)");
}

TEST(HostileScenario, DelayInAnIterationTheWorkloadDoesNotHave) {
  // Accepted silently with exit 0 and no delay.
  const std::string text = kHead + "perturbations:\n  - {type: delay, rank: 1, iteration: 99999, duration: 1ms}\n";
  EXPECT_EQ(error_of(text), "h.yaml:4:28: option 'iteration' of perturbation delay: iteration 99999 does not exist "
                            "(the workload has iterations 0..2)");
  EXPECT_EQ(error_of(text, {"perturbations[0].iteration=2"}), "(no error)");
}

TEST(HostileScenario, ASecondYamlDocumentIsRefused) {
  // It was ignored, even when it was garbage; it is named at its '---' and never parsed (a
  // fuzzed second document made yaml-cpp take 2 GB when it was).
  const std::string second = "h.yaml:3:1: a second YAML document (after '---'): a scenario is one document; give "
                             "variants in its 'variants' section";
  EXPECT_EQ(error_of(kHead + "---\nname: other\n"), second);
  EXPECT_EQ(error_of(kHead + "---\ngarbage: [\n"), second);
  EXPECT_EQ(error_of(kHead + "---\n"), second);
  const YamlWork w = work_of(kHead + "---\n" + std::string(200000, '['));
  EXPECT_LE(w.steps(), 20u);  // the first document's few nodes only
  // A document marker before the only document is fine.
  EXPECT_EQ(error_of("---\n" + kHead), "(no error)");
}

}  // namespace
}  // namespace waitlab::scenarios
