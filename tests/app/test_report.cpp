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

}  // namespace
}  // namespace waitlab::app
