#include "analysis/trace/trace_io.hpp"

#include <algorithm>
#include <filesystem>

#include "util/error.hpp"
#include "analysis/trace/otf2.hpp"
#include "analysis/trace/paraver.hpp"
#include "analysis/trace/ti.hpp"
#include "analysis/trace/wlt.hpp"

namespace waitlab::trace {

namespace fs = std::filesystem;

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::string_view format_name(TraceFormat f) {
  switch (f) {
    case TraceFormat::Wlt:
      return "wlt";
    case TraceFormat::Otf2:
      return "OTF2";
    case TraceFormat::Paraver:
      return "Paraver";
    case TraceFormat::Ti:
      return "TI";
  }
  return "?";
}

TraceFormat format_of_input(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    if (fs::exists(fs::path(path) / "traces.otf2", ec)) return TraceFormat::Otf2;
    throw InputError(path + ": a directory without traces.otf2 (expected a .wlt file, an OTF2 archive, a Paraver "
                            ".prv or .prv.gz file or a TI trace)");
  }
  if (ends_with(path, ".wlt")) return TraceFormat::Wlt;
  if (ends_with(path, ".otf2")) return TraceFormat::Otf2;
  if (ends_with(path, ".prv") || ends_with(path, ".prv.gz")) return TraceFormat::Paraver;
  if (!fs::exists(path, ec))
    throw InputError(path + ": no such trace (expected a .wlt file, an OTF2 archive, a Paraver .prv or .prv.gz file or a "
                            "TI trace)");
  return TraceFormat::Ti;
}

TraceFormat format_of_output(const std::string& path) {
  if (ends_with(path, ".wlt")) return TraceFormat::Wlt;
  if (ends_with(path, ".prv")) return TraceFormat::Paraver;
  if (ends_with(path, ".ti") || ends_with(path, ".txt")) return TraceFormat::Ti;
  return TraceFormat::Otf2;
}

std::string otf2_anchor(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) ? (fs::path(path) / "traces.otf2").string() : path;
}

std::vector<std::string> input_files(const std::string& path) {
  std::vector<std::string> files;
  std::error_code ec;
  switch (format_of_input(path)) {
    case TraceFormat::Wlt:
      files.push_back(path);
      break;
    case TraceFormat::Otf2: {
      const std::string anchor = otf2_anchor(path);
      const fs::path dir = fs::path(anchor).parent_path().empty() ? fs::path(".") : fs::path(anchor).parent_path();
      files.push_back(anchor);
      files.push_back(dir.string());  // the archive is read as a whole: its directory too
      std::vector<std::string> under;
      for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        under.push_back(it->path().string());
      std::sort(under.begin(), under.end());
      for (auto& f : under)
        if (f != anchor) files.push_back(std::move(f));
      break;
    }
    case TraceFormat::Paraver: {
      files.push_back(path);
      std::string base = path;
      base.resize(base.size() - (ends_with(path, ".prv.gz") ? 7 : 4));
      for (const char* side : {".pcf", ".row"})
        if (fs::exists(base + side, ec)) files.push_back(base + side);
      break;
    }
    case TraceFormat::Ti:
      files = ti_files(path);
      break;
  }
  return files;
}

Trace read_trace(const std::string& path, SkippedKinds* skipped, std::vector<std::string>* warnings) {
  switch (format_of_input(path)) {
    case TraceFormat::Wlt:
      return read_wlt(path);
    case TraceFormat::Otf2: {
      Otf2ReadStats st;
      Trace t = read_otf2(otf2_anchor(path), &st);
      if (skipped) {
        for (const auto& [kind, n] : st.skipped_records) skipped->emplace_back("OTF2 " + kind + " records", n);
        if (st.skipped_locations > 0) skipped->emplace_back("OTF2 locations (metric, GPU, ...)", st.skipped_locations);
      }
      return t;
    }
    case TraceFormat::Paraver: {
      ParaverReadStats st;
      Trace t = read_paraver(path, &st);
      if (skipped) *skipped = std::move(st.skipped);
      if (warnings && st.ends_early) warnings->push_back(paraver_ends_early(path, st));
      return t;
    }
    case TraceFormat::Ti:
      break;
  }
  throw InputError(path + ": read as a time-independent (TI) trace, which has no times: replay it (`waitlab replay " +
                   path + "`) and analyse the simulated trace, or convert it (`waitlab convert`) to give it logical "
                   "times");
}

std::vector<std::string> write_trace(const Trace& t, const std::string& path) {
  std::vector<std::string> lost;
  switch (format_of_output(path)) {
    case TraceFormat::Wlt:
      write_wlt(t, path);
      return lost;
    case TraceFormat::Paraver:
      return write_paraver(t, path);
    case TraceFormat::Ti:
      throw InputError(path + ": TI traces are written from action streams (waitlab convert does it)");
    case TraceFormat::Otf2:
      break;
  }
  write_otf2(t, path);
  return otf2_losses(t);
}

}  // namespace waitlab::trace
