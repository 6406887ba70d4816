// waitlab::units — explicit-unit quantities as written in scenarios and on the command line.
//
// Promise: every quantity a user writes carries its unit ("1ms", "25us", "8KiB",
// "10GBps", "1Gf", "1kHz"); a bare number is accepted only where the quantity is
// dimensionless. Parsing returns SI base units (seconds, bytes, bytes/s, flops,
// flop/s, Hz). Errors throw UnitError with what was wrong and which units are allowed;
// callers add the file/line.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace waitlab::units {

enum class Quantity { Number, Integer, Duration, Bytes, Bandwidth, Flops, Speed, Frequency, Percent };

struct UnitError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// Parses `text` as the given quantity. Throws UnitError.
double parse(std::string_view text, Quantity q);
double parse_duration(std::string_view text);   // s, ms, us, ns (also "µs"); e.g. "1.5ms"
double parse_bytes(std::string_view text);      // B, KB/MB/GB (10^3), KiB/MiB/GiB (2^10)
double parse_bandwidth(std::string_view text);  // Bps, KBps, MBps, GBps, KiBps, ..., bps, Gbps (bits)
double parse_flops(std::string_view text);      // f, kf, Mf, Gf, Tf (flops)
double parse_speed(std::string_view text);      // f, kf, Mf, Gf, Tf, also "Gflops" (flop/s)
double parse_frequency(std::string_view text);  // Hz, kHz, MHz
double parse_percent(std::string_view text);    // "10%" -> 0.10; bare number in [0,1] too

// Units accepted for a quantity, for help texts and error hints ("s, ms, us, ns").
std::string_view allowed_units(Quantity q);
std::string_view quantity_name(Quantity q);

// Formats a value in SI base units back to a short human form ("1.5ms", "8KiB").
std::string format(double value, Quantity q);

}  // namespace waitlab::units
