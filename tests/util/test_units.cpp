// Units: every accepted spelling with its exact SI value, and every kind of bad input with
// the exact message.
#include <gtest/gtest.h>

#include "util/units.hpp"

namespace waitlab::units {
namespace {

std::string error_of(std::string_view text, Quantity q) {
  try {
    parse(text, q);
  } catch (const UnitError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Units, Durations) {
  EXPECT_EQ(parse_duration("1ms"), 1e-3);
  EXPECT_EQ(parse_duration("25us"), 25e-6);  // exactly the double nearest 25e-6 (25 / 1e6, not 25 * 1e-6)
  EXPECT_EQ(parse_duration("25µs"), 25e-6);
  EXPECT_EQ(parse_duration("1.5ms"), 1.5e-3);
  EXPECT_EQ(parse_duration("1.5 ms"), 1.5e-3);  // spaces between number and unit are allowed
  EXPECT_EQ(parse_duration("  2s "), 2.0);
  EXPECT_EQ(parse_duration("10ns"), 10e-9);
  EXPECT_EQ(parse_duration("1e3us"), 1e-3);
  EXPECT_EQ(parse_duration("+3ms"), 3e-3);
  EXPECT_EQ(parse_duration("-5ms"), -5e-3);  // signed here; options reject negative durations
  EXPECT_EQ(parse_duration("0"), 0.0);       // zero needs no unit
  EXPECT_EQ(parse_duration(".5s"), 0.5);
}

TEST(Units, Bytes) {
  EXPECT_EQ(parse_bytes("8KiB"), 8192.0);
  EXPECT_EQ(parse_bytes("8KB"), 8000.0);
  EXPECT_EQ(parse_bytes("8kB"), 8000.0);
  EXPECT_EQ(parse_bytes("1MiB"), 1048576.0);
  EXPECT_EQ(parse_bytes("2GiB"), 2147483648.0);
  EXPECT_EQ(parse_bytes("1.5MB"), 1.5e6);
  EXPECT_EQ(parse_bytes("64B"), 64.0);
}

TEST(Units, BandwidthInBytesAndBits) {
  EXPECT_EQ(parse_bandwidth("10GBps"), 1e10);
  EXPECT_EQ(parse_bandwidth("10Gbps"), 1.25e9);  // bits per second / 8
  EXPECT_EQ(parse_bandwidth("1KiBps"), 1024.0);
  EXPECT_EQ(parse_bandwidth("100Mbps"), 12.5e6);
  EXPECT_EQ(parse_bandwidth("8bps"), 1.0);
  EXPECT_EQ(parse_bandwidth("12.5 GBps"), 12.5e9);
}

TEST(Units, FlopsSpeedFrequencyPercent) {
  EXPECT_EQ(parse_flops("1Gf"), 1e9);
  EXPECT_EQ(parse_flops("2.5Mf"), 2.5e6);
  EXPECT_EQ(parse_flops("3f"), 3.0);
  EXPECT_EQ(parse_flops("4Gflop"), 4e9);
  EXPECT_EQ(parse_speed("1Gf"), 1e9);
  EXPECT_EQ(parse_speed("1Gflops"), 1e9);
  EXPECT_EQ(parse_speed("20kf"), 2e4);
  EXPECT_EQ(parse_frequency("1kHz"), 1000.0);
  EXPECT_EQ(parse_frequency("50Hz"), 50.0);
  EXPECT_EQ(parse_frequency("2.5MHz"), 2.5e6);
  EXPECT_EQ(parse_percent("10%"), 0.1);
  EXPECT_EQ(parse_percent("150%"), 1.5);
  EXPECT_EQ(parse_percent("0.25"), 0.25);  // a bare fraction in [0, 1]
  EXPECT_EQ(parse("64", Quantity::Integer), 64.0);
  EXPECT_EQ(parse("-3", Quantity::Integer), -3.0);
  EXPECT_EQ(parse("1.5", Quantity::Number), 1.5);
}

TEST(Units, RejectsWithTheAllowedUnits) {
  EXPECT_EQ(error_of("1 parsec", Quantity::Duration), "'1 parsec' is not a duration (use s, ms, us, ns)");
  EXPECT_EQ(error_of("ms", Quantity::Duration), "'ms' is not a duration (use s, ms, us, ns)");
  EXPECT_EQ(error_of("", Quantity::Duration), "'' is not a duration (use s, ms, us, ns)");
  EXPECT_EQ(error_of("1e", Quantity::Duration), "'1e' is not a duration (use s, ms, us, ns)");
  EXPECT_EQ(error_of("25", Quantity::Duration),
            "'25' is not a duration (use s, ms, us, ns)");  // unit required
  EXPECT_EQ(error_of("nan", Quantity::Duration), "'nan' is not a duration (use s, ms, us, ns)");
  EXPECT_EQ(error_of("infms", Quantity::Duration), "'infms' is not a duration (use s, ms, us, ns)");
  // Overflowing numbers and values (issue 19): out of range, too large in SI units, beyond the
  // duration limit of 1e9 s.
  EXPECT_EQ(error_of("1e400s", Quantity::Duration), "'1e400s' is out of range (not a finite number)");
  EXPECT_EQ(error_of("1e-400s", Quantity::Duration), "'1e-400s' is out of range (not a finite number)");
  EXPECT_EQ(error_of("1e300TB", Quantity::Bytes), "'1e300TB' is too large (not a finite number)");
  EXPECT_EQ(error_of("1e308GBps", Quantity::Bandwidth), "'1e308GBps' is too large (not a finite number)");
  EXPECT_EQ(error_of("1e308Pf", Quantity::Flops), "'1e308Pf' is too large (not a finite number)");
  EXPECT_EQ(error_of("1e10s", Quantity::Duration), "'1e10s' is too large (at most 1e9s, about 31 years)");
  EXPECT_EQ(error_of("-1e10s", Quantity::Duration), "'-1e10s' is too large (at most 1e9s, about 31 years)");
  EXPECT_EQ(parse_duration("1e9s"), 1e9);
  EXPECT_EQ(error_of("1 ms s", Quantity::Duration), "'1 ms s' is not a duration (use s, ms, us, ns)");
  EXPECT_EQ(error_of("1MS", Quantity::Duration),
            "'1MS' is not a duration (use s, ms, us, ns)");  // case matters
  EXPECT_EQ(
      error_of("8K", Quantity::Bytes),
      "'8K' is not a size in bytes (use B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of "
      "1024))");
  EXPECT_EQ(error_of("1Gf", Quantity::Frequency), "'1Gf' is not a frequency (use Hz, kHz, MHz, GHz)");
  EXPECT_EQ(error_of("5", Quantity::Percent),
            "'5' is not a percentage (use a percentage such as 10%, or a fraction between 0 and 1)");
  EXPECT_EQ(error_of("2.5", Quantity::Integer),
            "'2.5' is not a whole number (use a plain whole number such as 64)");
  EXPECT_EQ(error_of("3ms", Quantity::Number), "'3ms' is not a number (use a plain number such as 1.5)");
  EXPECT_EQ(error_of("1Gx", Quantity::Flops),
            "'1Gx' is not an amount of flops (use f, kf, Mf, Gf, Tf, Pf (also Gflop, Gflops))");
  EXPECT_EQ(error_of("0x10", Quantity::Integer),
            "'0x10' is not a whole number (use a plain whole number such as 64)");
}

TEST(Units, FormatRoundTrips) {
  EXPECT_EQ(format(1.5e-3, Quantity::Duration), "1.5ms");
  EXPECT_EQ(format(25e-6, Quantity::Duration), "25us");
  EXPECT_EQ(format(2, Quantity::Duration), "2s");
  EXPECT_EQ(format(0, Quantity::Duration), "0ns");
  EXPECT_EQ(format(8192, Quantity::Bytes), "8KiB");
  EXPECT_EQ(format(8000, Quantity::Bytes), "8KB");
  EXPECT_EQ(format(100, Quantity::Bytes), "100B");
  EXPECT_EQ(format(1e10, Quantity::Bandwidth), "10GBps");
  EXPECT_EQ(format(1e9, Quantity::Speed), "1Gf");
  EXPECT_EQ(format(1000, Quantity::Frequency), "1kHz");
  EXPECT_EQ(format(0.1, Quantity::Percent), "10%");
  for (const auto& [text, q] :
       std::vector<std::pair<std::string, Quantity>>{{"1.5ms", Quantity::Duration},
                                                     {"64KiB", Quantity::Bytes},
                                                     {"12.5GBps", Quantity::Bandwidth},
                                                     {"3Mf", Quantity::Flops},
                                                     {"2kHz", Quantity::Frequency},
                                                     {"7%", Quantity::Percent}}) {
    EXPECT_EQ(format(parse(text, q), q), text);
  }
}

}  // namespace
}  // namespace waitlab::units
