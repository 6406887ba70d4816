// Specs: option parsing per type, make_options with exact error messages, did_you_mean,
// the registry's contents and describe().
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "util/error.hpp"
#include "models/spec.hpp"

namespace waitlab::models {
namespace {

Spec heat_like() {
  Spec s;
  s.kind = SpecKind::Workload;
  s.name = "heat1d";
  s.description = "1D stencil";
  OptionSpec ranks{"ranks", OptionType::Quantity, units::Quantity::Integer, "", "number of MPI ranks", {},
                   false};
  OptionSpec iters{
      "iterations", OptionType::Quantity, units::Quantity::Integer, "100", "number of iterations", {}, false};
  OptionSpec compute{
      "compute", OptionType::Quantity, units::Quantity::Duration, "1ms", "compute per iteration", {}, false};
  OptionSpec mode{"mode",     OptionType::Choice, units::Quantity::Number,
                  "blocking", "p2p style",        {"blocking", "nonblocking"},
                  false};
  OptionSpec periodic{"periodic", OptionType::Bool, units::Quantity::Number, "false", "ring", {}, false};
  OptionSpec victims{"victims", OptionType::IntList, units::Quantity::Number, "", "ranks", {}, true};
  OptionSpec label{"label", OptionType::String, units::Quantity::Number, "", "a name", {}, true};
  s.options = {ranks, iters, compute, mode, periodic, victims, label};
  return s;
}

std::string error_of(const std::vector<UserOption>& given) {
  try {
    make_options(heat_like(), given, "demo.yaml: workload", "demo.yaml:3:1");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Spec, MakeOptionsFillsDefaultsAndParsesUnits) {
  const auto o =
      make_options(heat_like(), {{"ranks", "64", "f:1:1"}, {"compute", "250us", "f:2:1"}}, "ctx", "f:0:0");
  EXPECT_EQ(o.context(), "ctx");
  EXPECT_EQ(o.integer("ranks"), 64);
  EXPECT_EQ(o.integer("iterations"), 100);
  EXPECT_EQ(o.number("compute"), 250e-6);
  EXPECT_EQ(o.string("mode"), "blocking");
  EXPECT_FALSE(o.boolean("periodic"));
  EXPECT_FALSE(o.has("victims"));  // optional without default: absent
  EXPECT_FALSE(o.has("label"));
  EXPECT_EQ(o.values().size(), 5u);
}

TEST(Spec, UnknownOptionSuggestsTheClosest) {
  EXPECT_EQ(error_of({{"ranks", "4", "demo.yaml:4:5"}, {"iteratons", "10", "demo.yaml:12:5"}}),
            "demo.yaml:12:5: unknown option 'iteratons' for workload 'heat1d'; did you mean 'iterations'?");
  EXPECT_EQ(
      error_of({{"zzzzzz", "4", "demo.yaml:4:5"}}),
      "demo.yaml:4:5: unknown option 'zzzzzz' for workload 'heat1d' (options: ranks, iterations, compute, "
      "mode, periodic, victims, label)");
}

TEST(Spec, MissingRequiredOptionNamesTheBlock) {
  EXPECT_EQ(error_of({}), "demo.yaml:3:1: workload 'heat1d' needs option 'ranks' (number of MPI ranks)");
}

TEST(Spec, BadValuesNameTheOptionAndWhatIsAllowed) {
  EXPECT_EQ(error_of({{"ranks", "4", "a:1:1"}, {"compute", "1 parsec", "demo.yaml:7:14"}}),
            "demo.yaml:7:14: option 'compute' of workload 'heat1d': '1 parsec' is not a duration (use s, ms, "
            "us, ns)");
  EXPECT_EQ(
      error_of({{"ranks", "4", "a:1:1"}, {"compute", "-5ms", "demo.yaml:7:14"}}),
      "demo.yaml:7:14: option 'compute' of workload 'heat1d': '-5ms' is impossible: a duration cannot be "
      "negative");
  EXPECT_EQ(
      error_of({{"ranks", "4", "a:1:1"}, {"mode", "nonblockng", "d:2:2"}}),
      "d:2:2: option 'mode' of workload 'heat1d': 'nonblockng' is not one of blocking, nonblocking; did you "
      "mean 'nonblocking'?");
  EXPECT_EQ(error_of({{"ranks", "4", "a:1:1"}, {"periodic", "maybe", "d:2:2"}}),
            "d:2:2: option 'periodic' of workload 'heat1d': 'maybe' is not a boolean (use true or false)");
  EXPECT_EQ(
      error_of({{"ranks", "4", "a:1:1"}, {"victims", "1,x", "d:2:2"}}),
      "d:2:2: option 'victims' of workload 'heat1d': '1,x' is not a list of whole numbers (use e.g. 0,2,5 or "
      "ranges 0-3)");
  EXPECT_EQ(error_of({{"ranks", "4", "a:1:1"}, {"ranks", "5", "a:2:1"}}),
            "a:2:1: option 'ranks' of workload 'heat1d' is given twice (first at a:1:1)");
}

TEST(Spec, ParseOptionPerType) {
  const auto spec = heat_like();
  EXPECT_EQ(std::get<std::vector<std::int64_t>>(parse_option(*spec.option("victims"), "0-3, 8,10-11")),
            (std::vector<std::int64_t>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(std::get<std::vector<std::int64_t>>(parse_option(*spec.option("victims"), "[5]")),
            (std::vector<std::int64_t>{5}));
  EXPECT_THROW(parse_option(*spec.option("victims"), "3-1"), std::invalid_argument);
  EXPECT_THROW(parse_option(*spec.option("victims"), ""), std::invalid_argument);
  EXPECT_THROW(parse_option(*spec.option("victims"), "1,,2"), std::invalid_argument);
  EXPECT_THROW(parse_option(*spec.option("victims"), "-1"), std::invalid_argument);
  EXPECT_EQ(std::get<bool>(parse_option(*spec.option("periodic"), "yes")), true);
  EXPECT_EQ(std::get<bool>(parse_option(*spec.option("periodic"), "off")), false);
  EXPECT_EQ(std::get<std::string>(parse_option(*spec.option("label"), " a b ")), "a b");
  EXPECT_EQ(std::get<double>(parse_option(*spec.option("ranks"), "-3")),
            -3.0);  // signed integers stay signed
}

TEST(Spec, ParseBoolAcceptsSixWordsInAnyCase) {
  for (const char* t : {"true", "TRUE", "Yes", "on", " On\t"}) EXPECT_TRUE(parse_bool(t)) << t;
  for (const char* t : {"false", "False", "NO", "off", " oFF "}) EXPECT_FALSE(parse_bool(t)) << t;
  // Anything else, including 1/0 and the empty text, is an error saying what to write.
  for (const char* t : {"1", "0", "", "maybe", "truth", "y"}) {
    try {
      parse_bool(t);
      ADD_FAILURE() << t;
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()), "'" + std::string(t) + "' is not a boolean (use true or false)");
    }
  }
  EXPECT_THROW(parse_bool(" maybe "), std::invalid_argument);
  // Bool options parse through it.
  EXPECT_EQ(std::get<bool>(parse_option(*heat_like().option("periodic"), "YES")), true);
}

TEST(Spec, IntListLengthIsCappedBeforeExpanding) {
  const auto spec = heat_like();  // keep the spec alive: option() points into it
  const auto& victims = *spec.option("victims");
  // 2^24 entries is the most: exactly that many pass, one more does not (checked before expanding).
  EXPECT_EQ(std::get<std::vector<std::int64_t>>(parse_option(victims, "0-16777215")).size(), kMaxListSize);
  const auto error = [&](const std::string& text) {
    try {
      parse_option(victims, text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("0-99999999"), "'0-99999999' has more than 16777216 numbers (the most a list may hold)");
  EXPECT_EQ(error("5,0-16777215"),
            "'5,0-16777215' has more than 16777216 numbers (the most a list may hold)");
  EXPECT_EQ(error("0-16777215,5"),
            "'0-16777215,5' has more than 16777216 numbers (the most a list may hold)");
  EXPECT_EQ(error("0-999999999999999"),
            "'0-999999999999999' has more than 16777216 numbers (the most a list may hold)");
}

TEST(Spec, OptionsGettersCheckTypes) {
  Options o("ctx");
  o.set("n", 2.5);
  o.set("s", std::string("x"));
  EXPECT_EQ(o.number_or("n", 7), 2.5);
  EXPECT_EQ(o.number_or("absent", 7), 7);
  try {
    o.integer("n");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "ctx: option 'n' must be a whole number, got 2.5");
  }
  try {
    o.number("s");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "ctx: option 's' is not a number");
  }
  try {
    o.string("absent");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "ctx: option 'absent' is missing");
  }
  EXPECT_THROW(o.boolean("n"), InputError);
  EXPECT_THROW(o.int_list("n"), InputError);
}

TEST(Spec, DidYouMean) {
  const std::vector<std::string> names{"iterations", "ranks", "compute", "bytes"};
  EXPECT_EQ(did_you_mean("iteratons", names), "iterations");
  EXPECT_EQ(did_you_mean("rank", names), "ranks");
  EXPECT_EQ(did_you_mean("bites", names), "bytes");
  EXPECT_EQ(did_you_mean("xyz", names), "");
  EXPECT_EQ(did_you_mean("computation", names), "");  // distance 4 > max(2, 11/3)
  EXPECT_EQ(did_you_mean("compte", names), "compute");
}

TEST(Registry, HoldsPlatformsWorkloadsAndPerturbations) {
  const auto& r = Registry::instance();
  std::vector<std::string> platforms, perturbations;
  for (const auto* s : r.all(SpecKind::Platform)) platforms.push_back(s->name);
  for (const auto* s : r.all(SpecKind::Perturbation)) perturbations.push_back(s->name);
  EXPECT_EQ(platforms, (std::vector<std::string>{"cluster", "hierarchical", "xml"}));
  EXPECT_EQ(perturbations,
            (std::vector<std::string>{"imbalance_uniform", "imbalance_gradient", "imbalance_hotspot",
                                      "imbalance_slow_group", "imbalance_periodic_region", "delay",
                                      "periodic_noise", "random_noise"}));
  EXPECT_EQ(r.all(SpecKind::Workload).size(), 8u);  // the seven synthetic ones and `trace`
  EXPECT_EQ(r.all(SpecKind::Workload).back()->name, "trace");
  ASSERT_NE(r.find(SpecKind::Workload, "heat1d"), nullptr);
  EXPECT_EQ(r.find(SpecKind::Platform, "heat1d"), nullptr);
  EXPECT_EQ(r.find_any("delay")->kind, SpecKind::Perturbation);
  EXPECT_EQ(&Registry::instance(), &r);
  // Every option of every spec is documented, and every default parses.
  for (const auto& s : r.specs()) {
    EXPECT_FALSE(s.description.empty()) << s.name;
    for (const auto& o : s.options) {
      EXPECT_FALSE(o.description.empty()) << s.name << "." << o.name;
      if (!o.default_value.empty()) {
        EXPECT_NO_THROW(parse_option(o, o.default_value)) << s.name << "." << o.name;
      }
      if (o.type == OptionType::Choice) {
        EXPECT_FALSE(o.choices.empty()) << s.name << "." << o.name;
      }
    }
  }
}

TEST(Registry, DescribeListsEveryOption) {
  const auto* s = Registry::instance().find(SpecKind::Perturbation, "delay");
  ASSERT_NE(s, nullptr);
  const std::string text = describe(*s);
  EXPECT_EQ(text.rfind("delay (perturbation)\n  A one-off delay", 0), 0u) << text;
  EXPECT_NE(text.find("\n  rank: whole number, required\n      the delayed rank\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("\n  duration: duration [s, ms, us, ns], required\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\n  region: text, optional\n"), std::string::npos) << text;
  const auto* p = Registry::instance().find(SpecKind::Platform, "cluster");
  const std::string c = describe(*p);
  EXPECT_NE(c.find("\n  placement: one of block | round-robin, default block\n"), std::string::npos) << c;
  EXPECT_NE(c.find("\n  latency: duration [s, ms, us, ns], default 1us\n"), std::string::npos) << c;
}

// docs/models.md documents every platform and perturbation option with its default.
TEST(Registry, ModelsDocCoversEveryOptionAndDefault) {
  std::ifstream in(std::string(WAITLAB_SOURCE_DIR) + "/docs/models.md");
  ASSERT_TRUE(in) << "docs/models.md";
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string doc = buf.str();
  for (const auto& s : Registry::instance().specs()) {
    if (s.kind != SpecKind::Platform && s.kind != SpecKind::Perturbation) continue;
    const std::string heading = "# `" + s.name + "`\n";
    const auto at = doc.find(heading);
    ASSERT_NE(at, std::string::npos) << "no section for " << s.name;
    const auto end = doc.find("\n#", at + heading.size());
    const std::string section = doc.substr(at, end == std::string::npos ? std::string::npos : end - at);
    for (const auto& o : s.options) {
      EXPECT_NE(section.find("`" + o.name + "`"), std::string::npos) << s.name << "." << o.name;
      if (!o.default_value.empty()) {
        EXPECT_NE(section.find("`" + o.default_value + "`"), std::string::npos)
            << s.name << "." << o.name << " default " << o.default_value;
      }
    }
  }
}

}  // namespace
}  // namespace waitlab::models
