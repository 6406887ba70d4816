// report.html end to end: `waitlab run` writes it beside summary.json, it fetches nothing,
// headless Chromium renders it without an error and shows the figures of summary.json;
// `waitlab report DIR` rewrites it byte for byte; `waitlab analyze` writes one for a trace.
//
// Rendering needs Debian's chromium (scripts/setup.sh installs it). Without it these tests
// FAIL, on purpose: a report nobody has seen render is not tested. CTest label: chromium.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "tests/temp_dir.hpp"

namespace waitlab::app {
namespace {

namespace fs = std::filesystem;
using test::slurp;

struct Result {
  int code = -1;
  std::string out;
  std::string err;
};

// Runs a shell command line, its output captured into `dir`.
Result shell(const std::string& cmd, const fs::path& dir) {
  const auto out = dir / "stdout.txt";
  const auto err = dir / "stderr.txt";
  const int status = std::system((cmd + " >'" + out.string() + "' 2>'" + err.string() + "'").c_str());
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

Result waitlab(const std::string& args, const fs::path& dir) {
  return shell(std::string("'") + WAITLAB_BINARY + "' " + args, dir);
}

// Debian's chromium: $WAITLAB_CHROMIUM, else chromium or chromium-browser on PATH.
std::string chromium() {
  if (const char* c = std::getenv("WAITLAB_CHROMIUM"); c != nullptr && *c != '\0') return c;
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  for (const char* name : {"chromium", "chromium-browser"}) {
    std::size_t start = 0;
    while (start <= dirs.size()) {
      const std::size_t end = std::min(dirs.find(':', start), dirs.size());
      const fs::path p = fs::path(dirs.substr(start, end - start)) / name;
      if (!p.parent_path().empty() && ::access(p.c_str(), X_OK) == 0) return p.string();
      start = end + 1;
    }
  }
  return "";
}

// Renders `html` in headless Chromium (JavaScript on, 5 s of virtual time for the page to
// load) and puts the DOM it ends with into `dom`. Fails when Chromium is missing or fails.
// `scratch`: a directory for Chromium's profile and output.
::testing::AssertionResult render_dom(const fs::path& html, const fs::path& scratch, std::string& dom) {
  const std::string exe = chromium();
  if (exe.empty())
    return ::testing::AssertionFailure()
           << "chromium is not installed, so report.html cannot be rendered: run scripts/setup.sh "
              "(apt-get install --no-install-recommends chromium) or set WAITLAB_CHROMIUM";
  const fs::path profile = scratch / "chromium-profile";
  fs::create_directories(profile);
  const std::string cmd = fmt::format(
      "timeout 120 '{}' --headless --no-sandbox --disable-gpu --allow-file-access-from-files "
      "--user-data-dir='{}' --virtual-time-budget=5000 --dump-dom 'file://{}'",
      exe, profile.string(), fs::absolute(html).string());
  const Result r = shell(cmd, scratch);
  if (r.code != 0 || r.out.find("<body") == std::string::npos)
    return ::testing::AssertionFailure() << "chromium failed (exit " << r.code << "): " << cmd << "\n"
                                         << r.err.substr(r.err.size() > 2000 ? r.err.size() - 2000 : 0);
  dom = r.out;
  return ::testing::AssertionSuccess();
}

// The value of attribute `name` of the rendered <body>, "" if absent.
std::string body_attribute(const std::string& dom, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(dom, m, std::regex("<body[^>]*>"))) return "";
  const std::string tag = m.str();
  if (!std::regex_search(tag, m, std::regex("\\s" + name + "=\"([^\"]*)\""))) return "";
  return m[1].str();
}

// The rendered table row with this id ("" if none).
std::string row(const std::string& dom, const std::string& id) {
  const auto at = dom.find("<tr id=\"" + id + "\"");
  if (at == std::string::npos) return "";
  return dom.substr(at, dom.find("</tr>", at) - at);
}

// "150.16 ms" -> 0.15016.
double shown_seconds(const std::string& text) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex("([-0-9.e+]+) (s|ms|µs|ns)$"))) return -1;
  const double v = std::stod(m[1].str());
  const std::string u = m[2].str();
  return u == "s" ? v : u == "ms" ? v * 1e-3 : u == "µs" ? v * 1e-6 : v * 1e-9;
}

// What a page must not do offline: load anything from the network.
void expect_nothing_fetched(const std::string& html) {
  for (const char* bad : {"src=\"http:", "src=\"https:", "href=\"http:", "href=\"https:", "src=\"//", "href=\"//",
                          "url(http", "url(//", "@import"})
    EXPECT_EQ(html.find(bad), std::string::npos) << "report.html references " << bad;
  EXPECT_EQ(std::regex_search(html, std::regex("<(link|iframe|object|embed)\\b")), false);
  EXPECT_EQ(std::regex_search(html, std::regex("<script[^>]*\\bsrc=")), false);
}

class Report : public test::TempDirTest {
 protected:
  // heat1d on 64 ranks, 20 iterations, one 5 ms delay on rank 32; the analyses of the brief.
  fs::path run_small(const std::string& analyses = "[waitstate, delay, critpath]") {
    const std::string yaml = write("small.yaml", "name: report-small\n"
                                                 "description: \"heat1d <64 ranks> & one delay\"\n"
                                                 "platform: {type: cluster, nodes: 4, cores: 16}\n"
                                                 "workload: {type: heat1d, ranks: 64, iterations: 20, compute: 1ms}\n"
                                                 "perturbations:\n"
                                                 "  - {type: delay, rank: 32, iteration: 5, duration: 5ms}\n"
                                                 "outputs:\n"
                                                 "  analyses: " + analyses + "\n");
    const fs::path out = dir_ / "run";
    const Result r = waitlab("run '" + yaml + "' --no-progress --out '" + out.string() + "'", dir_);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("report.html"), std::string::npos) << r.out;
    return out;
  }
};

TEST_F(Report, RunWritesAReportThatRendersOffline) {
  const fs::path out = run_small();
  const fs::path html = out / "report.html";
  ASSERT_TRUE(fs::exists(html));
  const std::string text = slurp(html);
  expect_nothing_fetched(text);
  EXPECT_NE(text.find("heat1d &lt;64 ranks&gt; &amp; one delay"), std::string::npos) << "description not escaped";

  const auto summary = nlohmann::json::parse(slurp(out / "summary.json"));
  const double late_sender = summary["analyses"]["waitstate"]["patterns"]["late_sender"]["total_s"].get<double>();
  ASSERT_GT(late_sender, 0);

  std::string dom;
  ASSERT_TRUE(render_dom(html, dir_, dom));
  EXPECT_EQ(body_attribute(dom, "data-loaded"), "yes");
  EXPECT_EQ(body_attribute(dom, "data-errors"), "0");

  // The wait-state table: Late Sender with the total of summary.json, exactly in the data and
  // as shown (5 significant digits).
  const std::string ls = row(dom, "pattern-late_sender");
  ASSERT_FALSE(ls.empty()) << "no Late Sender row in the rendered report";
  EXPECT_NE(ls.find(">Late Sender<"), std::string::npos) << ls;
  EXPECT_NE(ls.find(fmt::format("data-seconds=\"{}\"", late_sender)), std::string::npos) << ls;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(ls, m, std::regex("class=\"num total\"[^>]*>([^<]*)<"))) << ls;
  EXPECT_NEAR(shown_seconds(m[1].str()), late_sender, late_sender * 1e-4) << m[1].str();

  // The CSV tables are there, with a note of their length.
  EXPECT_NE(dom.find("waitstates.csv"), std::string::npos);
  EXPECT_NE(dom.find("critical_path_profile.csv"), std::string::npos);
  EXPECT_NE(dom.find("rows in the CSV"), std::string::npos);
}

// With the idle-wave analysis the page shows the heat map (a picture that loaded, of the size
// matplotlib drew) and the wave's fronts with the speeds of summary.json.
TEST_F(Report, ShowsTheIdleWaveHeatMap) {
  const fs::path out = run_small("[waitstate, idlewave]");
  ASSERT_TRUE(fs::exists(out / "idlewave_heatmap.png"));
  ASSERT_TRUE(fs::exists(out / "idlewave_heatmap.svg"));
  ASSERT_TRUE(fs::exists(out / "idlewave_amplitude.png"));
  const fs::path html = out / "report.html";
  const std::string text = slurp(html);
  expect_nothing_fetched(text);
  EXPECT_NE(text.find("id=\"heatmap\""), std::string::npos);
  EXPECT_NE(text.find("src=\"data:image/png;base64,"), std::string::npos);

  std::string dom;
  ASSERT_TRUE(render_dom(html, dir_, dom));
  EXPECT_EQ(body_attribute(dom, "data-loaded"), "yes");
  EXPECT_EQ(body_attribute(dom, "data-errors"), "0");
  EXPECT_EQ(body_attribute(dom, "data-heatmap"), "shown");

  const auto summary = nlohmann::json::parse(slurp(out / "summary.json"));
  const auto& wave = summary["analyses"]["idlewave"]["waves"][0];
  EXPECT_EQ(wave["source_rank"], 32);
  EXPECT_GE(wave["fronts"][0]["reach_ranks"].get<int>(), 10);

  // `waitlab plot DIR` draws the same pictures again, byte for byte, and rewrites the report.
  const std::string png = slurp(out / "idlewave_heatmap.png"), svg = slurp(out / "idlewave_heatmap.svg");
  fs::remove(out / "idlewave_heatmap.png");
  fs::remove(out / "report.html");
  const Result p = waitlab("plot '" + out.string() + "'", dir_);
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(slurp(out / "idlewave_heatmap.png"), png);
  EXPECT_EQ(slurp(out / "idlewave_heatmap.svg"), svg);
  EXPECT_EQ(slurp(out / "report.html"), text);
  const Result none = waitlab("plot '" + (dir_ / "nothing").string() + "'", dir_);
  EXPECT_EQ(none.code, 2);
  EXPECT_NE(none.err.find("no idlewave.json"), std::string::npos) << none.err;
}

// With the time-resolved analysis the page shows its key figures (those of summary.json), the
// picture and the windows of lowest parallel efficiency, the delay's window first.
TEST_F(Report, ShowsTimeResolvedEfficiency) {
  const fs::path out = run_small("[waitstate, timeresolved]");
  ASSERT_TRUE(fs::exists(out / "timeresolved.png"));
  ASSERT_TRUE(fs::exists(out / "timeresolved.svg"));
  const fs::path html = out / "report.html";
  const std::string text = slurp(html);
  expect_nothing_fetched(text);
  const auto summary = nlohmann::json::parse(slurp(out / "summary.json"));
  const auto& tr = summary["analyses"]["timeresolved"];
  EXPECT_EQ(tr["source"], "ideal_network");
  std::string dom;
  ASSERT_TRUE(render_dom(html, dir_, dom));
  EXPECT_EQ(body_attribute(dom, "data-loaded"), "yes");
  EXPECT_EQ(body_attribute(dom, "data-errors"), "0");
  EXPECT_NE(dom.find("id=\"sec-timeresolved\""), std::string::npos);
  EXPECT_NE(dom.find("<img id=\"timeresolved\" src=\"data:image/png;base64,"), std::string::npos);
  EXPECT_NE(dom.find(fmt::format("{:.2f} %", 100 * tr["parallel_efficiency"].get<double>())), std::string::npos);
  // The first row of the windows table is the lowest window of summary.json. The 5 ms delay on
  // rank 32 spreads one rank per iteration; the ranks it has not reached by the end finish up to
  // 5 ms early and wait in MPI_Finalize: the last 5 ms are the lowest windows (measured 32.3 %),
  // which the whole run's 79.8 % hides.
  const auto table = dom.find("id=\"timeresolved-windows\"");
  ASSERT_NE(table, std::string::npos);
  const auto first = dom.find("<tr>", dom.find("<tbody>", table));
  const std::string row0 = dom.substr(first, dom.find("</tr>", first) - first);
  EXPECT_NE(row0.find(fmt::format(">{}<", tr["lowest_window"]["window"].get<int>())), std::string::npos) << row0;
  EXPECT_NE(row0.find(fmt::format("{:.2f} %", 100 * tr["lowest_window"]["parallel_efficiency"].get<double>())),
            std::string::npos)
      << row0;
  EXPECT_NEAR(tr["lowest_window"]["parallel_efficiency"].get<double>(), 0.3233, 0.001);
  EXPECT_GT(tr["lowest_window"]["start_s"].get<double>(), 0.020);
  EXPECT_NEAR(tr["parallel_efficiency"].get<double>(), 0.7979, 0.001);
}

TEST_F(Report, ReportCommandRewritesItIdentically) {
  const fs::path out = run_small("[waitstate]");
  const std::string first = slurp(out / "report.html");
  fs::remove(out / "report.html");
  const Result r = waitlab("report '" + out.string() + "'", dir_);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(slurp(out / "report.html"), first);

  const Result missing = waitlab("report '" + (dir_ / "nothing").string() + "'", dir_);
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("summary.json"), std::string::npos) << missing.err;
}

TEST_F(Report, AnalyzeWritesOneForTheTrace) {
  const fs::path out = run_small("[]");
  const fs::path ana = dir_ / "analysis";
  const Result r =
      waitlab("analyze '" + (out / "trace.wlt").string() + "' -a waitstate --out '" + ana.string() + "'", dir_);
  ASSERT_EQ(r.code, 0) << r.err;
  const fs::path html = ana / "report.html";
  ASSERT_TRUE(fs::exists(html)) << r.out;
  const std::string text = slurp(html);
  expect_nothing_fetched(text);
  EXPECT_NE(text.find("<h2>Trace</h2>"), std::string::npos);

  std::string dom;
  ASSERT_TRUE(render_dom(html, dir_, dom));
  EXPECT_EQ(body_attribute(dom, "data-loaded"), "yes");
  EXPECT_EQ(body_attribute(dom, "data-errors"), "0");
  EXPECT_FALSE(row(dom, "pattern-late_sender").empty());
}

// The idle-wave section's words follow summary.json: σ and d with the reason the analysis has
// for them (analysis/idlewave/idlewave.hpp: σ = 2 for a bidirectional exchange in one-sided
// phases under rendezvous, else 1), decays rounded to the timer resolution, a slow group as
// rank ranges, no model speed without a measured iteration. The run gives the page; variants
// of its summary.json give the other cases.
TEST_F(Report, IdleWaveWordsFollowTheAnalysis) {
  const fs::path out = run_small("[waitstate, idlewave]");
  const auto base = nlohmann::ordered_json::parse(slurp(out / "summary.json"));
  const auto& iw = base["analyses"]["idlewave"];
  // Blocking sends and receives of 8 bytes to one neighbour, then the other: eager, one-sided
  // phases, both directions; σ 1, d 1.
  ASSERT_EQ(iw["sigma"], 1);
  ASSERT_EQ(iw["distance"], 1);
  ASSERT_EQ(iw["eager"], true);
  ASSERT_EQ(iw["phased"], true);
  ASSERT_EQ(iw["bidirectional"], true);
  const std::string page = slurp(out / "report.html");
  EXPECT_EQ(page.find("1 for one direction, 2 for both"), std::string::npos);
  EXPECT_NE(page.find("σ = 1: ranks exchange with one side, then the other, but sends complete before their receive "
                      "is posted (eager); a wait moves on by one neighbour per iteration. d = 1: the largest rank "
                      "distance of a message. A wave moves σ·d = 1 rank per iteration."),
            std::string::npos);

  // The page for a variant of summary.json.
  const auto variant = [&](const std::function<void(nlohmann::ordered_json&)>& change) {
    auto j = base;
    change(j["analyses"]["idlewave"]);
    std::ofstream(out / "summary.json") << j.dump(2);
    const Result r = waitlab("report '" + out.string() + "'", dir_);
    EXPECT_EQ(r.code, 0) << r.err;
    return slurp(out / "report.html");
  };
  std::string h = variant([](auto& v) {
    v["eager"] = false;
    v["sigma"] = 2;
  });
  EXPECT_NE(h.find("σ = 2: ranks exchange with one side, then the other, and every send waits for its receiver "
                   "(rendezvous); a wait moves on by two neighbours per iteration."),
            std::string::npos);
  EXPECT_NE(h.find("A wave moves σ·d = 2 ranks per iteration."), std::string::npos);
  h = variant([](auto& v) {
    v["bidirectional"] = false;
    v["phased"] = false;
  });
  EXPECT_NE(h.find("σ = 1: ranks receive from one side only;"), std::string::npos);
  h = variant([](auto& v) {
    v["phased"] = false;
  });
  EXPECT_NE(h.find("σ = 1: ranks exchange with both sides at once (not in one-sided phases);"), std::string::npos);
  h = variant([](auto& v) {
    v["sigma"] = 3;
    v["sigma_inferred"] = false;
    v["distance"] = 2;
    v["distance_inferred"] = false;
  });
  EXPECT_NE(h.find("σ = 3: given in the options. d = 2: given in the options. A wave moves σ·d = 6 ranks per "
                   "iteration."),
            std::string::npos);

  // On a grid, distances count hops.
  h = variant([](auto& v) {
    v["distance_metric"] = "hops";
    v["grid"] = {32, 4, 4};
    v["periodic"] = false;
  });
  EXPECT_NE(h.find("d = 1: a message goes one hop on the 3D grid 32×4×4; distances count hops (the Manhattan "
                   "distance on the grid). A wave moves σ·d = 1 hop per iteration."),
            std::string::npos);
  EXPECT_NE(h.find("hops/s"), std::string::npos);

  // A wavefront pipeline (sweeps): no model, no σ·d card or text; the sides in rank order have
  // no speed (they mix what different sweeps carry), the axes keep theirs.
  h = variant([](auto& v) {
    v["pipeline"] = true;
    v["predicted_ranks_per_s"] = 0;
    v["distance_metric"] = "hops";
    v["grid"] = {8, 8};
    for (auto& f : v["waves"][0]["fronts"]) {
      f["predicted_ranks_per_s"] = 0;
      f["measured_over_predicted"] = 0;
    }
  });
  EXPECT_NE(h.find("id=\"idlewave-pipeline\""), std::string::npos);
  EXPECT_NE(h.find("does not apply"), std::string::npos);
  EXPECT_EQ(h.find("id=\"idlewave-model\""), std::string::npos);
  EXPECT_EQ(h.find("Model speed"), std::string::npos);
  EXPECT_EQ(h.find("σ 1 · d 1"), std::string::npos);
  {
    const auto row_at = h.find("<td>down</td>");
    ASSERT_NE(row_at, std::string::npos);
    const std::string row = h.substr(row_at, h.find("</tr>", row_at) - row_at);
    EXPECT_EQ(row.find("0.000"), std::string::npos) << row;
    EXPECT_NE(row.find("—"), std::string::npos) << row;
  }

  // Decays: rounded to the analyses' time resolution (a picosecond), the exact value on hover;
  // no rounding noise, no "-0".
  h = variant([](auto& v) {
    auto& w = v["waves"][0];
    w["fronts"][0]["decay_s_per_rank"] = 3.09e-18;
    w["fronts"][1]["decay_s_per_rank"] = -1.4657546252608546e-09;
    auto w2 = w;
    w2["fronts"][0]["decay_s_per_rank"] = -2e-13;
    w2["fronts"][1]["decay_s_per_rank"] = 2.5e-6;
    v["waves"].push_back(w2);
  });
  EXPECT_NE(h.find("title=\"3.09e-18 s\">0 s</td>"), std::string::npos);
  EXPECT_NE(h.find("title=\"-1.4657546252608546e-09 s\">-1.466 ns</td>"), std::string::npos);
  EXPECT_NE(h.find("title=\"-2e-13 s\">0 s</td>"), std::string::npos);
  EXPECT_NE(h.find(">2.5 µs</td>"), std::string::npos);
  EXPECT_EQ(h.find(">-0 "), std::string::npos);
  EXPECT_EQ(h.find("e-18 s</td>"), std::string::npos);
  // A coarser timer, named in summary.json, keeps fewer digits.
  h = variant([](auto& v) {
    v["timer_resolution_s"] = 1e-9;
    v["waves"][0]["fronts"][1]["decay_s_per_rank"] = -1.4657546252608546e-09;
  });
  EXPECT_NE(h.find(">-1 ns</td>"), std::string::npos);

  // A front that reached no rank (a one-way exchange upstream) has no speed, fit or decay.
  h = variant([](auto& v) {
    auto& f = v["waves"][0]["fronts"][0];
    f["reach_ranks"] = 0;
    f["speed_ranks_per_s"] = 0;
    f["fit_r2"] = 0;
    f["stop"] = "decayed";
  });
  const auto down = h.find("<td>down</td>");
  ASSERT_NE(down, std::string::npos);
  const std::string down_row = h.substr(down, h.find("</tr>", down) - down);
  EXPECT_EQ(down_row, fmt::format("<td>down</td><td class=\"num\">0</td>{0}{0}{0}<td class=\"num\">{1:.5g}</td>{0}"
                                  "{0}<td>decayed</td>",
                                  "<td class=\"num\">—</td>", iw["predicted_ranks_per_s"].get<double>()));

  // A wave is placed at its delayed computation's start when summary.json has it (onset_s, as
  // the analysis writes it), else where the delay ends (a summary.json of an older waitlab).
  EXPECT_NE(page.find(">starts at<"), std::string::npos);
  h = variant([](auto& v) { v["waves"][0].erase("onset_s"); });
  EXPECT_NE(h.find(">delay ends at<"), std::string::npos);
  EXPECT_EQ(h.find(">starts at<"), std::string::npos);
  h = variant([](auto& v) { v["waves"][0]["onset_s"] = 0.0201613; });
  EXPECT_NE(h.find(">starts at<"), std::string::npos);
  EXPECT_NE(h.find(">20.161 ms<"), std::string::npos);

  // A front that met another wave names the wave that goes on (numbered from 0).
  h = variant([](auto& v) {
    v["waves"][0]["fronts"][0]["stop"] = "met";
    v["waves"][0]["fronts"][0]["met_wave"] = 1;
  });
  EXPECT_NE(h.find("<td>met (wave 1 goes on)</td>"), std::string::npos);

  // A slow group of every other socket (16 cores each, 1024 ranks): its ranges, not 16–1023.
  nlohmann::ordered_json ranges = nlohmann::ordered_json::array();
  for (int first = 16; first < 1024; first += 32) ranges.push_back({first, first + 15});
  const auto slow = [&](bool with_ranges, int count, int first, int last) {
    return variant([&](auto& v) {
      auto& ss = v["self_sync"];
      ss["slow_group"] = true;
      ss["slow_ranks"] = count;
      ss["first_slow_rank"] = first;
      ss["last_slow_rank"] = last;
      ss["t_slow_s"] = 0.0010999999999999925;
      ss["t_fast_s"] = 0.0009999999997113917;
      if (with_ranges) ss["slow_rank_ranges"] = ranges;
    });
  };
  h = slow(true, 512, 16, 1023);
  EXPECT_NE(h.find("512 (ranks 16–31, 48–63, 80–95, 112–127, 144–159, 176–191, …, 1008–1023 (32 ranges))"),
            std::string::npos);
  EXPECT_EQ(h.find("16–1023"), std::string::npos);
  EXPECT_NE(h.find("1.1 ms slow, 1 ms fast"), std::string::npos);  // not "1000 µs"
  // Without the ranges in summary.json: the span, said not to be one block.
  h = slow(false, 512, 16, 1023);
  EXPECT_NE(h.find("512 (not one block: the first is rank 16, the last rank 1023)"), std::string::npos);
  EXPECT_EQ(h.find("16–1023"), std::string::npos);
  h = slow(false, 16, 16, 31);
  EXPECT_NE(h.find("16 (ranks 16–31)"), std::string::npos);

  // No iteration measured: no model speed (not "0 ranks/s").
  h = variant([](auto& v) {
    v["iteration_s"] = 0;
    v["predicted_ranks_per_s"] = 0;
  });
  EXPECT_EQ(h.find("Model speed"), std::string::npos);
  EXPECT_EQ(h.find(" 0 ranks/s"), std::string::npos);
  h = variant([](auto&) {});
  EXPECT_NE(h.find("Model speed"), std::string::npos);
  EXPECT_NE(h.find("σ·d / T_iter"), std::string::npos);
}

// Without a wave (a slow socket, no delay) the page shows the heat map and the
// self-synchronisation picture but no amplitude picture — none is drawn, and the one of an
// earlier run in the same directory is gone — and the slow group of every other socket is not
// printed as one range.
TEST_F(Report, NoAmplitudePictureWithoutAWave) {
  const fs::path out = run_small("[waitstate, idlewave]");
  ASSERT_TRUE(fs::exists(out / "idlewave_amplitude.png"));
  const std::string yaml = write("slow.yaml", "name: report-slow-socket\n"
                                              "platform: {type: hierarchical, nodes: 2, sockets: 2, cores: 16}\n"
                                              "workload: {type: heat1d, ranks: 64, iterations: 30, compute: 1ms}\n"
                                              "perturbations:\n"
                                              "  - {type: imbalance_slow_group, sockets: [1], factor: 1.1}\n"
                                              "outputs:\n"
                                              "  analyses: [waitstate, idlewave]\n");
  const Result r = waitlab("run '" + yaml + "' --no-progress --out '" + out.string() + "'", dir_);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::exists(out / "idlewave_heatmap.png"));
  EXPECT_TRUE(fs::exists(out / "idlewave_selfsync.png"));
  EXPECT_FALSE(fs::exists(out / "idlewave_amplitude.png"));
  EXPECT_FALSE(fs::exists(out / "idlewave_amplitude.svg"));

  const auto summary = nlohmann::json::parse(slurp(out / "summary.json"));
  const auto& iw = summary["analyses"]["idlewave"];
  EXPECT_TRUE(iw["waves"].empty());
  const auto& ss = iw["self_sync"];
  EXPECT_EQ(ss["slow_ranks"], 32);
  EXPECT_EQ(ss["first_slow_rank"], 16);
  EXPECT_EQ(ss["last_slow_rank"], 63);

  const fs::path html = out / "report.html";
  const std::string text = slurp(html);
  EXPECT_NE(text.find("id=\"heatmap\""), std::string::npos);
  EXPECT_NE(text.find("id=\"selfsync\""), std::string::npos);
  EXPECT_EQ(text.find("id=\"amplitude\""), std::string::npos);
  EXPECT_NE(text.find("No idle wave was found."), std::string::npos);
  EXPECT_EQ(text.find("16–63"), std::string::npos);
  EXPECT_NE(text.find(ss.contains("slow_rank_ranges") ? "32 (ranks 16–31, 48–63)"
                                                      : "32 (not one block: the first is rank 16, the last rank 63)"),
            std::string::npos);
  std::string dom;
  ASSERT_TRUE(render_dom(html, dir_, dom));
  EXPECT_EQ(body_attribute(dom, "data-errors"), "0");
  EXPECT_EQ(body_attribute(dom, "data-heatmap"), "shown");
}

}  // namespace
}  // namespace waitlab::app
