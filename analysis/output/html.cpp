#include "analysis/output/html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "analysis/output/json_text.hpp"
#include "analysis/trace/csv.hpp"
#include "util/error.hpp"

namespace waitlab::output {

namespace fs = std::filesystem;

// ---- text ----

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string base64(std::string_view in) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  const auto byte = [&](std::size_t i) { return static_cast<std::uint32_t>(static_cast<unsigned char>(in[i])); };
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const std::uint32_t n = (byte(i) << 16) | (byte(i + 1) << 8) | byte(i + 2);
    for (int shift = 18; shift >= 0; shift -= 6) out += kAlphabet[(n >> shift) & 63u];
  }
  if (const std::size_t rest = in.size() - i; rest > 0) {
    const std::uint32_t n = (byte(i) << 16) | (rest == 2 ? byte(i + 1) << 8 : 0u);
    out += kAlphabet[(n >> 18) & 63u];
    out += kAlphabet[(n >> 12) & 63u];
    out += rest == 2 ? kAlphabet[(n >> 6) & 63u] : '=';
    out += '=';
  }
  return out;
}

// A time as people read it: "150.16 ms", "3.4 s", "812.5 ns".
std::string readable_seconds(double v) {
  if (!std::isfinite(v)) return kDash;
  // The unit of the value as shown (5 digits): 0.99999999 ms is "1 ms", not "1000 µs".
  const double a = std::fabs(std::stod(fmt::format("{:.5g}", v)));
  if (a == 0) return "0 s";
  if (a >= 1) return fmt::format("{:.5g} s", v);
  if (a >= 1e-3) return fmt::format("{:.5g} ms", v * 1e3);
  if (a >= 1e-6) return fmt::format("{:.5g} µs", v * 1e6);
  return fmt::format("{:.5g} ns", v * 1e9);
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw InputError(p.string() + ": cannot read");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// 1234567 -> "1,234,567".
std::string grouped(std::uint64_t n) {
  const std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string percent(double fraction) {
  return std::isfinite(fraction) ? fmt::format("{:.2f} %", 100 * fraction) : kDash;
}

// The exact value (shortest form that reads back to the same double).
std::string exact(double v) {
  return fmt::format("{}", v);
}

// ---- summary.json ----

// The value at `keys`, or nullptr if any of them is missing or the value is null.
const Json* at(const Json& j, std::initializer_list<const char*> keys) {
  const Json* p = &j;
  for (const char* k : keys) {
    if (!p->is_object()) return nullptr;
    const auto it = p->find(k);
    if (it == p->end()) return nullptr;
    p = &*it;
  }
  return p->is_null() ? nullptr : p;
}

std::optional<double> number(const Json* v) {
  if (v != nullptr && v->is_number()) return v->get<double>();
  return std::nullopt;
}
std::optional<double> number(const Json& j, std::initializer_list<const char*> keys) {
  return number(at(j, keys));
}
std::string text(const Json& j, std::initializer_list<const char*> keys) {
  const Json* v = at(j, keys);
  return v != nullptr && v->is_string() ? v->get<std::string>() : "";
}

// Any JSON value as plain text (not escaped).
std::string plain(const Json& v) {
  if (v.is_null()) return kDash;
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  if (v.is_number_unsigned()) return grouped(v.get<std::uint64_t>());
  if (v.is_number_integer()) {
    const auto n = v.get<std::int64_t>();
    return n < 0 ? "-" + grouped(static_cast<std::uint64_t>(-n)) : grouped(static_cast<std::uint64_t>(n));
  }
  if (v.is_number_float()) return fmt::format("{:.6g}", v.get<double>());
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array()) {
    std::string s;
    for (const auto& e : v) s += (s.empty() ? "" : ", ") + plain(e);
    return s.empty() ? "[]" : s;
  }
  return output::json_text(v, -1);
}
std::string plain(const Json* v) {
  return v != nullptr ? plain(*v) : kDash;
}
std::string time_of(const Json* v) {
  const auto n = number(v);
  return n ? secs(*n) : kDash;
}

std::string fixed(const Json* v, const char* spec) {
  const auto n = number(v);
  return n ? fmt::format(fmt::runtime(spec), *n) : kDash;
}

// ---- HTML pieces ----

std::string kv_row(std::string_view label, const std::string& html) {
  return fmt::format("<tr><th scope=\"row\">{}</th><td>{}</td></tr>\n", esc(label), html);
}

std::string card(std::string_view label, const std::string& value, const std::string& more) {
  return fmt::format("<div class=\"card\"><div class=\"label\">{}</div><div class=\"value\">{}</div>{}</div>\n",
                     esc(label), esc(value), more.empty() ? "" : "<div class=\"more\">" + esc(more) + "</div>");
}

// A table cell with a time, its exact value on hover.
std::string time_cell(std::optional<double> v, std::string_view cls) {
  if (!v) return fmt::format("<td class=\"{}\">{}</td>", cls, kDash);
  return fmt::format("<td class=\"{}\" title=\"{} s\">{}</td>", cls, exact(*v), esc(secs(*v)));
}
std::string num_cell(const std::string& s) {
  return "<td class=\"num\">" + esc(s) + "</td>";
}

// ---- CSV ----

std::size_t Csv::column(std::string_view name) const {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return i;
  return header.size();
}

std::optional<Csv> read_csv(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  Csv c;
  std::string line;
  bool first = true;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    auto fields = trace::csv_split(line);
    if (first) {
      c.header = std::move(fields);
      first = false;
    } else {
      fields.resize(c.header.size());
      c.rows.push_back(std::move(fields));
    }
  }
  if (first) return std::nullopt;
  return c;
}

std::optional<double> parse_double(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return v;
}


namespace {

std::string column_title(const std::string& c) {
  if (c == "seconds") return "seconds";
  std::string t = c;
  if (t.size() > 2 && t.compare(t.size() - 2, 2, "_s") == 0) t.resize(t.size() - 2);
  std::replace(t.begin(), t.end(), '_', ' ');
  return t;
}

bool time_column(const std::string& c) {
  return c == "seconds" || (c.size() > 2 && c.compare(c.size() - 2, 2, "_s") == 0);
}

}  // namespace

std::string csv_table_html(const fs::path& dir, const TableSpec& spec, const std::vector<ColumnLabel>& labels) {
  const auto csv = read_csv(dir / spec.file);
  if (!csv) return "";
  std::vector<std::size_t> keys;
  for (const char* k : spec.sort_by)
    if (const auto i = csv->column(k); i < csv->header.size()) keys.push_back(i);
  std::vector<std::pair<double, const std::vector<std::string>*>> rows;
  for (const auto& r : csv->rows) {
    double key = 0;
    for (const auto i : keys) key += parse_double(r[i]).value_or(0);
    rows.emplace_back(key, &r);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  const std::size_t shown = std::min(rows.size(), kTableRows);

  std::string h = fmt::format("<h3 id=\"table-{}\">{} <code class=\"file\">{}</code></h3>\n", esc(fs::path(spec.file).stem().string()),
                              esc(spec.title), esc(spec.file));
  h += fmt::format("<p class=\"note\">{} {} rows{}, {}.</p>\n",
                   rows.size() > shown ? fmt::format("The top {} of", shown) : std::string("All"),
                   grouped(rows.size()), rows.size() > shown ? " in the CSV" : "", spec.sort_note);
  h += "<div class=\"scroll\"><table class=\"data\"><thead><tr>";
  for (const auto& c : csv->header)
    h += fmt::format("<th{}>{}</th>", time_column(c) || c == "rank" || c == "instances" || c == "calls" ? " class=\"num\"" : "",
                     esc(column_title(c)));
  h += "</tr></thead>\n<tbody>\n";
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& r = *rows[i].second;
    h += "<tr>";
    for (std::size_t c = 0; c < csv->header.size(); ++c) {
      const std::string& name = csv->header[c];
      const std::string& v = r[c];
      if (time_column(name)) {
        h += v.empty() ? fmt::format("<td class=\"num\">{}</td>", kDash) : time_cell(parse_double(v));
      } else if (name == "rank" || name == "instances" || name == "calls") {
        h += num_cell(v);
      } else if (const auto label = std::find_if(labels.begin(), labels.end(),
                                                 [&](const ColumnLabel& l) { return name == l.column; });
                 label != labels.end()) {
        h += "<td>" + esc(label->title(v)) + "</td>";
      } else {
        h += "<td><code>" + esc(v) + "</code></td>";
      }
    }
    h += "</tr>\n";
  }
  h += "</tbody></table></div>\n";
  return h;
}

// ---- pictures ----

// A picture is embedded up to this size (waitlab draws a few hundred KB); a larger one is linked
// beside the report instead, so that a stray 1 GB PNG cannot make the report take gigabytes.
constexpr std::uintmax_t kMaxEmbeddedPicture = std::uintmax_t{32} << 20;

std::string figure_html(const fs::path& dir, const Picture& p) {
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(dir / p.file, ec);
  if (!ec && size > kMaxEmbeddedPicture)
    return fmt::format(
        "<figure><img id=\"{}\" src=\"{}\" alt=\"{}\"><figcaption><strong>{}.</strong> {} <code class=\"file\">{}"
        "</code> ({} MB: linked, not embedded; the report shows it only beside that file)</figcaption></figure>\n",
        esc(p.id), esc(p.file), esc(p.title), esc(p.title), esc(p.caption), esc(p.file), size >> 20);
  std::string data;
  try {
    data = read_file(dir / p.file);
  } catch (const InputError&) {
    return fmt::format("<p class=\"note\">{}: cannot be read.</p>\n", esc(p.file));
  }
  return fmt::format(
      "<figure><img id=\"{}\" src=\"data:image/png;base64,{}\" alt=\"{}\">"
      "<figcaption><strong>{}.</strong> {} <code class=\"file\">{}</code></figcaption></figure>\n",
      esc(p.id), base64(data), esc(p.title), esc(p.title), esc(p.caption), esc(p.file));
}

}  // namespace waitlab::output
