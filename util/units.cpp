#include "util/units.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>

#include "util/text.hpp"

namespace waitlab::units {

namespace {

constexpr double kMaxDuration = 1e9;  // s

struct Unit {
  std::string_view symbol;
  double factor;       // to SI base units of the quantity ...
  double divisor = 1;  // ... divided by this: 25/1e6 is the double nearest 25e-6, 25*1e-6 is not
};

// Duration units. "µs" is accepted because people paste it from papers.
constexpr std::array kDuration{Unit{"s", 1}, Unit{"ms", 1, 1e3}, Unit{"us", 1, 1e6}, Unit{"µs", 1, 1e6},
                               Unit{"ns", 1, 1e9}};

constexpr std::array kBytes{Unit{"B", 1},        Unit{"KB", 1e3},        Unit{"kB", 1e3},
                            Unit{"MB", 1e6},     Unit{"GB", 1e9},        Unit{"TB", 1e12},
                            Unit{"KiB", 1024.0}, Unit{"MiB", 1048576.0}, Unit{"GiB", 1073741824.0},
                            Unit{"TiB", 0x1p40}};

// Bytes per second ("Bps", SimGrid's spelling) and bits per second ("bps", divided by 8).
constexpr std::array kBandwidth{Unit{"Bps", 1},        Unit{"KBps", 1e3},        Unit{"kBps", 1e3},
                                Unit{"MBps", 1e6},     Unit{"GBps", 1e9},        Unit{"TBps", 1e12},
                                Unit{"KiBps", 1024.0}, Unit{"MiBps", 1048576.0}, Unit{"GiBps", 1073741824.0},
                                Unit{"TiBps", 0x1p40}, Unit{"bps", 0.125},       Unit{"kbps", 1e3 / 8},
                                Unit{"Kbps", 1e3 / 8}, Unit{"Mbps", 1e6 / 8},    Unit{"Gbps", 1e9 / 8},
                                Unit{"Tbps", 1e12 / 8}};

// Flop prefixes; the suffix may be "f", "flop" or "flops" (SimGrid writes "Gf" and "Gflops").
constexpr std::array kFlopPrefix{Unit{"", 1},    Unit{"k", 1e3},  Unit{"K", 1e3}, Unit{"M", 1e6},
                                 Unit{"G", 1e9}, Unit{"T", 1e12}, Unit{"P", 1e15}};

constexpr std::array kFrequency{Unit{"Hz", 1}, Unit{"kHz", 1e3}, Unit{"MHz", 1e6}, Unit{"GHz", 1e9}};

using text::article;
using text::trim;

[[noreturn]] void fail(std::string_view text, Quantity q) {
  const auto name = quantity_name(q);
  throw UnitError("'" + std::string(text) + "' is not " + std::string(article(name)) + " " +
                  std::string(name) + " (use " + std::string(allowed_units(q)) + ")");
}

// Splits "1.5 ms" into the number 1.5 and the unit "ms". Returns false if there is no
// finite leading number. Spaces between number and unit are allowed ("1.5 ms").
bool split(std::string_view text, double& value, std::string_view& unit) {
  std::string_view s = trim(text);
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  // from_chars also accepts "inf", "nan" and hex floats: only plain decimal digits may start a number.
  if (s.empty() || !((s.front() >= '0' && s.front() <= '9') || s.front() == '.')) return false;
  double v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, std::chars_format::general);
  if (ec == std::errc::result_out_of_range)
    throw UnitError("'" + std::string(trim(text)) + "' is out of range (not a finite number)");
  if (ec != std::errc() || !std::isfinite(v)) return false;
  // "1e" parses as 1 followed by unit "e": rejected later as an unknown unit.
  unit = trim(std::string_view(ptr, static_cast<std::size_t>(s.data() + s.size() - ptr)));
  value = negative ? -v : v;
  return true;
}

template <std::size_t N>
bool lookup(const std::array<Unit, N>& table, std::string_view unit, Unit& found) {
  for (const auto& u : table)
    if (u.symbol == unit) {
      found = u;
      return true;
    }
  return false;
}

bool flop_unit(std::string_view unit, Unit& factor) {
  for (std::string_view suffix : {"flops", "flop", "f"}) {
    if (unit.size() >= suffix.size() && unit.substr(unit.size() - suffix.size()) == suffix)
      return lookup(kFlopPrefix, unit.substr(0, unit.size() - suffix.size()), factor);
  }
  return false;
}

std::string number_text(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.12g", v);
  return buf;
}

std::string scaled(double value, const Unit* units, std::size_t n) {
  // Largest unit whose factor does not exceed |value|; the smallest one otherwise.
  std::size_t best = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (std::fabs(value) >= units[i].factor && units[i].factor >= units[best].factor) best = i;
  if (value == 0) best = 0;
  return number_text(value / units[best].factor) + std::string(units[best].symbol);
}

}  // namespace

std::string_view quantity_name(Quantity q) {
  switch (q) {
    case Quantity::Number:
      return "number";
    case Quantity::Integer:
      return "whole number";
    case Quantity::Duration:
      return "duration";
    case Quantity::Bytes:
      return "size in bytes";
    case Quantity::Bandwidth:
      return "bandwidth";
    case Quantity::Flops:
      return "amount of flops";
    case Quantity::Speed:
      return "speed";
    case Quantity::Frequency:
      return "frequency";
    case Quantity::Percent:
      return "percentage";
  }
  return "quantity";
}

std::string_view allowed_units(Quantity q) {
  switch (q) {
    case Quantity::Number:
      return "a plain number such as 1.5";
    case Quantity::Integer:
      return "a plain whole number such as 64";
    case Quantity::Duration:
      return "s, ms, us, ns";
    case Quantity::Bytes:
      return "B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024)";
    case Quantity::Bandwidth:
      return "Bps, KBps, MBps, GBps, TBps, KiBps, MiBps, GiBps, TiBps (bytes/s) or bps, kbps, Mbps, Gbps, "
             "Tbps (bits/s)";
    case Quantity::Flops:
      return "f, kf, Mf, Gf, Tf, Pf (also Gflop, Gflops)";
    case Quantity::Speed:
      return "f, kf, Mf, Gf, Tf, Pf flop/s (also Gflops)";
    case Quantity::Frequency:
      return "Hz, kHz, MHz, GHz";
    case Quantity::Percent:
      return "a percentage such as 10%, or a fraction between 0 and 1";
  }
  return "";
}

double parse(std::string_view text, Quantity q) {
  double v = 0;
  std::string_view unit;
  if (!split(text, v, unit)) fail(trim(text), q);
  Unit factor{"", 1};
  bool ok = false;
  switch (q) {
    case Quantity::Number:
      ok = unit.empty();
      break;
    case Quantity::Integer:
      ok = unit.empty() && v == std::floor(v);
      break;
    case Quantity::Duration:
      ok = lookup(kDuration, unit, factor);
      break;
    case Quantity::Bytes:
      ok = lookup(kBytes, unit, factor);
      break;
    case Quantity::Bandwidth:
      ok = lookup(kBandwidth, unit, factor);
      break;
    case Quantity::Flops:
    case Quantity::Speed:
      ok = flop_unit(unit, factor);
      break;
    case Quantity::Frequency:
      ok = lookup(kFrequency, unit, factor);
      break;
    case Quantity::Percent:
      if (unit == "%") {
        factor = Unit{"%", 1, 100};
        ok = true;
      } else {
        ok = unit.empty() && v >= 0 && v <= 1;  // a bare fraction; "5" would be ambiguous
      }
      break;
  }
  // A bare zero needs no unit: it is zero in every unit.
  if (!ok && unit.empty() && v == 0) ok = true;
  if (!ok) fail(trim(text), q);
  const double si = v * factor.factor / factor.divisor;
  // "1e300TB" is a finite number of a unit but not a finite number of bytes; a duration beyond
  // 10^9 s (31 years) would make simulated clocks overflow when added up.
  if (!std::isfinite(si) || (q == Quantity::Duration && std::fabs(si) > kMaxDuration))
    throw UnitError("'" + std::string(trim(text)) + "' is too large " +
                    (q == Quantity::Duration ? "(at most 1e9s, about 31 years)" : "(not a finite number)"));
  return si;
}

double parse_duration(std::string_view text) {
  return parse(text, Quantity::Duration);
}
double parse_bytes(std::string_view text) {
  return parse(text, Quantity::Bytes);
}
double parse_bandwidth(std::string_view text) {
  return parse(text, Quantity::Bandwidth);
}
double parse_flops(std::string_view text) {
  return parse(text, Quantity::Flops);
}
double parse_speed(std::string_view text) {
  return parse(text, Quantity::Speed);
}
double parse_frequency(std::string_view text) {
  return parse(text, Quantity::Frequency);
}
double parse_percent(std::string_view text) {
  return parse(text, Quantity::Percent);
}

std::string format(double value, Quantity q) {
  static constexpr Unit kTime[] = {{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1}};
  static constexpr Unit kDecBytes[] = {{"B", 1}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}};
  static constexpr Unit kBinBytes[] = {
      {"B", 1}, {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 0x1p40}};
  static constexpr Unit kDecBw[] = {{"Bps", 1}, {"KBps", 1e3}, {"MBps", 1e6}, {"GBps", 1e9}, {"TBps", 1e12}};
  static constexpr Unit kBinBw[] = {
      {"Bps", 1}, {"KiBps", 1024.0}, {"MiBps", 1048576.0}, {"GiBps", 1073741824.0}, {"TiBps", 0x1p40}};
  static constexpr Unit kFlops[] = {{"f", 1},    {"kf", 1e3},  {"Mf", 1e6},
                                    {"Gf", 1e9}, {"Tf", 1e12}, {"Pf", 1e15}};
  static constexpr Unit kHz[] = {{"Hz", 1}, {"kHz", 1e3}, {"MHz", 1e6}, {"GHz", 1e9}};
  // Sizes that are whole multiples of 1024 read best in binary units ("8KiB", not "8.192KB").
  const auto binary = [&](double v) { return v >= 1024 && std::fmod(v, 1024.0) == 0; };
  switch (q) {
    case Quantity::Number:
      return number_text(value);
    case Quantity::Integer:
      return number_text(value);
    case Quantity::Duration:
      return scaled(value, kTime, std::size(kTime));
    case Quantity::Bytes:
      return binary(value) ? scaled(value, kBinBytes, std::size(kBinBytes))
                           : scaled(value, kDecBytes, std::size(kDecBytes));
    case Quantity::Bandwidth:
      return binary(value) && std::fmod(value, 1000.0) != 0 ? scaled(value, kBinBw, std::size(kBinBw))
                                                            : scaled(value, kDecBw, std::size(kDecBw));
    case Quantity::Flops:
    case Quantity::Speed:
      return scaled(value, kFlops, std::size(kFlops));
    case Quantity::Frequency:
      return scaled(value, kHz, std::size(kHz));
    case Quantity::Percent:
      return number_text(value * 100) + "%";
  }
  return number_text(value);
}

}  // namespace waitlab::units
