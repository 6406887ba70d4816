// waitlab::output — the pieces every analysis's report section is made of: reading
// summary.json, numbers and times as people read them, HTML cards, rows and cells, a CSV table
// of the output directory, a picture.
//
// Promise: report.html is made from summary.json, the CSV tables and the pictures of its
// directory only (never host.json), so every piece here reads those and nothing else; a value
// that is missing or null shows as a dash, never as an error. Every text is HTML-escaped here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace waitlab::output {

using Json = nlohmann::ordered_json;  // keys in file order

inline constexpr const char* kDash = "—";
inline constexpr std::size_t kTableRows = 20;  // rows of each CSV table shown

// ---- text ----
std::string html_escape(std::string_view s);
inline std::string esc(std::string_view s) { return html_escape(s); }
std::string base64(std::string_view in);
// A time as people read it: "150.16 ms", "3.4 s", "812.5 ns".
std::string readable_seconds(double v);
inline std::string secs(double v) { return readable_seconds(v); }
// 1234567 -> "1,234,567".
std::string grouped(std::uint64_t n);
// "12.34 %"; a dash if not finite.
std::string percent(double fraction);
// The exact value (shortest form that reads back to the same double).
std::string exact(double v);
// The file's bytes; InputError "<path>: cannot read".
std::string read_file(const std::filesystem::path& p);

// ---- summary.json ----
// The value at `keys`, or nullptr if any of them is missing or the value is null.
const Json* at(const Json& j, std::initializer_list<const char*> keys);
std::optional<double> number(const Json* v);
std::optional<double> number(const Json& j, std::initializer_list<const char*> keys);
std::string text(const Json& j, std::initializer_list<const char*> keys);
// Any JSON value as plain text (not escaped): a dash for null, grouped integers, 6 digits.
std::string plain(const Json& v);
std::string plain(const Json* v);
std::string time_of(const Json* v);
// The number at v with the fmt spec ("{:.4g}"), or a dash.
std::string fixed(const Json* v, const char* spec);

// ---- HTML pieces ----
std::string kv_row(std::string_view label, const std::string& html);
std::string card(std::string_view label, const std::string& value, const std::string& more = "");
// A table cell with a time, its exact value on hover.
std::string time_cell(std::optional<double> v, std::string_view cls = "num");
std::string num_cell(const std::string& s);

// ---- CSV ----
struct Csv {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::size_t column(std::string_view name) const;  // header.size() if absent
};
std::optional<Csv> read_csv(const std::filesystem::path& p);
std::optional<double> parse_double(const std::string& s);

// A table of the output directory as the report shows it: its first kTableRows rows by a key.
struct TableSpec {
  const char* file;
  const char* title;
  std::vector<const char*> sort_by;  // descending by the sum of these columns
  const char* sort_note;
};
// A column whose values have titles ("late_sender" → "Late Sender").
struct ColumnLabel {
  const char* column;
  std::string (*title)(const std::string& value);
};
std::string csv_table_html(const std::filesystem::path& dir, const TableSpec& spec,
                           const std::vector<ColumnLabel>& labels);

// ---- pictures ----
struct Picture {
  std::string file;
  std::string id;
  std::string title;
  std::string caption;
  std::string owner;  // the analysis whose section shows it ("" for the Pictures section)
};
// Embedded as data up to 32 MiB, linked beside the report above.
std::string figure_html(const std::filesystem::path& dir, const Picture& p);

}  // namespace waitlab::output
