// waitlab::models — specs: what every model is called and which options it takes.
//
// Promise (as Caliper's services): every workload, platform, perturbation and
// analysis registers a Spec — name, description, options with quantity, default and
// description. The spec drives configuration checking (unknown option -> "did you
// mean ..."), defaults, `waitlab list` and `waitlab describe NAME`. A model reads its
// options through Options, already parsed to SI units by the scenario loader.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "util/units.hpp"

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

enum class SpecKind { Platform, Workload, Perturbation };
std::string_view spec_kind_name(SpecKind k);

struct Spec {
  SpecKind kind = SpecKind::Workload;
  std::string name;
  std::string description;
  std::vector<OptionSpec> options;

  const OptionSpec* option(std::string_view name) const;
};

// ---- spec builders, shared by every model file ----
Spec make_spec(SpecKind kind, std::string name, std::string description, std::vector<OptionSpec> options);
OptionSpec quantity_option(std::string name, units::Quantity q, std::string default_value,
                           std::string description, bool optional = false);
OptionSpec choice_option(std::string name, std::vector<std::string> choices, std::string default_value,
                         std::string description);
OptionSpec bool_option(std::string name, std::string default_value, std::string description);
OptionSpec text_option(std::string name, std::string description, bool optional);         // no default
OptionSpec list_option(std::string name, std::string description, bool optional = true);  // IntList

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

  double number_or(std::string_view name, double fallback) const {
    return has(name) ? number(name) : fallback;
  }
  const std::map<std::string, OptionValue>& values() const { return values_; }
  const std::string& context() const { return context_; }  // e.g. "demo.yaml: workload"

 private:
  const OptionValue& get(std::string_view name) const;
  std::string context_;
  std::map<std::string, OptionValue> values_;
};

// A boolean as a user writes it: true/false, yes/no or on/off in any case, surrounding
// blanks ignored. Throws std::invalid_argument "'maybe' is not a boolean (use true or false)".
// The one parser of booleans, so that scenario keys and model options accept the same words.
bool parse_bool(std::string_view text);

// The most entries a list option may hold (2^24): ranges are checked before they are expanded.
inline constexpr std::size_t kMaxListSize = std::size_t{1} << 24;

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
  std::string text;   // the value as written (scalars; lists as "1,2,3")
  std::string where;  // "file:line:col"
};
Options make_options(const Spec& spec, const std::vector<UserOption>& given, const std::string& context,
                     const std::string& where_block);

// The closest name in `candidates` to `name` (edit distance ≤ max(2, |name|/3)), or "".
std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates);

// The message for a model name that is not registered, e.g. "demo.yaml: workload: unknown
// workload 'heat1x'; did you mean 'heat1d'? (workloads: heat1d halo2d ...)"; `context` (may be
// empty) goes in front, `known` are the registered names of that kind.
std::string unknown_model_message(SpecKind kind, std::string_view name, const std::vector<std::string>& known,
                                  const std::string& context);

// Reads the validated Options of one model with range checks. A violation throws InputError
// "<context>: option '<name>' of <kind> <model>: <what>", e.g. "t.yaml:5:3: option 'nodes'
// of platform cluster: must be a whole number between 1 and 2147483647, got 0". Models
// derive their own readers from it for their domain checks. Holds a reference to `opts`.
class OptionReader {
 public:
  OptionReader(const Options& opts, SpecKind kind, std::string model)
      : opts_(opts), kind_(kind), model_(std::move(model)) {}

  [[noreturn]] void fail(std::string_view option, const std::string& what) const;

  const Options& options() const { return opts_; }
  const std::string& model() const { return model_; }
  bool has(std::string_view name) const { return opts_.has(name); }
  double number(std::string_view name) const { return opts_.number(name); }
  const std::string& choice(std::string_view name) const { return opts_.string(name); }  // or text
  bool boolean(std::string_view name) const { return opts_.boolean(name); }
  const std::vector<std::int64_t>& list(std::string_view name) const { return opts_.int_list(name); }

  // A whole number in [lo, hi].
  std::int64_t integer(std::string_view name, std::int64_t lo, std::int64_t hi) const;
  // Finite and > 0, or finite and >= 0; `q` only says how a bad value is shown ("got -1ms").
  double positive(std::string_view name, units::Quantity q = units::Quantity::Number) const;
  double non_negative(std::string_view name, units::Quantity q = units::Quantity::Number) const;

  // A value as bad-value messages show it: numbers exactly (shortest round trip), other
  // quantities in their units.
  static std::string shown(double value, units::Quantity q = units::Quantity::Number);

 private:
  const Options& opts_;
  SpecKind kind_;
  std::string model_;
};

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
