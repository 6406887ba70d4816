// waitlab::models — specs: what every model is called and which options it takes.
//
// Promise (as Caliper's services): every workload, platform, perturbation and
// analysis registers a Spec — name, description, options with quantity, default and
// description. The spec drives configuration checking (unknown option -> "did you
// mean ..."), defaults, `waitlab list` and `waitlab describe NAME`. A model reads its
// options through Options, already parsed to SI units by the scenario loader.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "models/units.hpp"

namespace waitlab::models {

enum class OptionType { Quantity, String, Choice, Bool, IntList };

struct OptionSpec {
  std::string name;
  OptionType type = OptionType::Quantity;
  units::Quantity quantity = units::Quantity::Number;  // for OptionType::Quantity
  std::string default_value;  // as a user would write it; empty = required (unless optional)
  std::string description;
  std::vector<std::string> choices;  // for OptionType::Choice
  bool optional = false;             // may be absent without a default
};

enum class SpecKind { Platform, Workload, Perturbation, Analysis };
std::string_view spec_kind_name(SpecKind k);

struct Spec {
  SpecKind kind = SpecKind::Workload;
  std::string name;
  std::string description;
  std::vector<OptionSpec> options;

  const OptionSpec* option(std::string_view name) const;
};

// A parsed option value: numbers in SI base units, strings, bools, integer lists.
using OptionValue = std::variant<double, std::string, bool, std::vector<std::int64_t>>;

// Options of one model instance, validated against its spec (defaults filled in).
class Options {
 public:
  Options() = default;
  explicit Options(std::string context) : context_(std::move(context)) {}

  void set(const std::string& name, OptionValue v) { values_[name] = std::move(v); }
  bool has(std::string_view name) const { return values_.find(std::string(name)) != values_.end(); }

  // Typed getters; throw InputError naming the context and option if absent or mistyped.
  double number(std::string_view name) const;
  std::int64_t integer(std::string_view name) const;  // number that must be integral
  const std::string& string(std::string_view name) const;
  bool boolean(std::string_view name) const;
  const std::vector<std::int64_t>& int_list(std::string_view name) const;

  double number_or(std::string_view name, double fallback) const { return has(name) ? number(name) : fallback; }
  const std::map<std::string, OptionValue>& values() const { return values_; }
  const std::string& context() const { return context_; }  // e.g. "demo.yaml: workload"

 private:
  const OptionValue& get(std::string_view name) const;
  std::string context_;
  std::map<std::string, OptionValue> values_;
};

// Parses one option value written by a user (`text`) according to `spec`. Throws
// units::UnitError / std::invalid_argument with a message that says what is allowed.
OptionValue parse_option(const OptionSpec& spec, std::string_view text);

// Builds Options from user-written key/value text, checking names against the spec
// (unknown -> "did you mean"), filling defaults, reporting missing required options.
// Each user option carries the position prefix for errors about it ("demo.yaml:12:5").
// Throws InputError ("demo.yaml:12:5: unknown option 'iteratons' of workload heat1d;
// did you mean 'iterations'?").
struct UserOption {
  std::string key;
  std::string text;  // the value as written (scalars; lists as "1,2,3")
  std::string where;  // "file:line:col"
};
Options make_options(const Spec& spec, const std::vector<UserOption>& given, const std::string& context,
                     const std::string& where_block);

// The closest name in `candidates` to `name` (edit distance ≤ max(2, |name|/3)), or "".
std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates);

// The registry of every spec (built-in, registered at start-up by the module owning the model).
class Registry {
 public:
  static const Registry& instance();  // all built-in specs, in registration order
  const Spec* find(SpecKind kind, std::string_view name) const;
  const Spec* find_any(std::string_view name) const;
  std::vector<const Spec*> all(SpecKind kind) const;
  const std::vector<Spec>& specs() const { return specs_; }
  void add(Spec s) { specs_.push_back(std::move(s)); }

 private:
  std::vector<Spec> specs_;
};

// Human-readable description of a spec (for `waitlab describe`).
std::string describe(const Spec& spec);

}  // namespace waitlab::models
