#include "models/spec.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "util/error.hpp"
#include "util/text.hpp"

namespace waitlab::models {

namespace {

using text::article;
using text::trim;

std::string quoted(std::string_view s) {
  return "'" + std::string(s) + "'";
}

std::string join(const std::vector<std::string>& v, std::string_view sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : std::string(sep)) + s;
  return out;
}

std::string with_context(const std::string& context, const std::string& msg) {
  return context.empty() ? msg : context + ": " + msg;
}

// Quantities that cannot be negative: a negative duration, size or rate is an impossible value.
bool cannot_be_negative(units::Quantity q) {
  using units::Quantity;
  return q == Quantity::Duration || q == Quantity::Bytes || q == Quantity::Bandwidth ||
         q == Quantity::Flops || q == Quantity::Speed || q == Quantity::Frequency || q == Quantity::Percent;
}

// "0-3,8,10-11" (optionally inside [ ]) -> 0,1,2,3,8,10,11. Non-negative whole numbers only.
// The length is checked before a range is expanded: "0-99999999" must not allocate 800 MB.
std::vector<std::int64_t> parse_int_list(std::string_view text) {
  const std::string bad =
      quoted(trim(text)) + " is not a list of whole numbers (use e.g. 0,2,5 or ranges 0-3)";
  std::string_view s = trim(text);
  if (s.size() >= 2 && s.front() == '[' && s.back() == ']') s = trim(s.substr(1, s.size() - 2));
  if (s.empty()) throw std::invalid_argument(bad);
  std::vector<std::int64_t> out;
  const auto number = [&](std::string_view t) {
    t = trim(t);
    if (t.empty() || t.size() > 15) throw std::invalid_argument(bad);
    std::int64_t v = 0;
    for (char c : t) {
      if (c < '0' || c > '9') throw std::invalid_argument(bad);
      v = v * 10 + (c - '0');
    }
    return v;
  };
  const auto too_long = [&] {
    return std::invalid_argument(quoted(trim(text)) + " has more than " + std::to_string(kMaxListSize) +
                                 " numbers (the most a list may hold)");
  };
  while (true) {
    const auto comma = s.find(',');
    const std::string_view item = s.substr(0, comma);
    const auto dash = item.find('-');
    if (dash == std::string_view::npos) {
      if (out.size() >= kMaxListSize) throw too_long();
      out.push_back(number(item));
    } else {
      const auto lo = number(item.substr(0, dash));
      const auto hi = number(item.substr(dash + 1));
      if (lo > hi)
        throw std::invalid_argument("the range " + quoted(trim(item)) + " in " + quoted(trim(text)) +
                                    " is empty (write the lower bound first)");
      if (hi - lo >= static_cast<std::int64_t>(kMaxListSize - out.size())) throw too_long();
      for (auto v = lo; v <= hi; ++v) out.push_back(v);
    }
    if (comma == std::string_view::npos) break;
    s = s.substr(comma + 1);
  }
  return out;
}

std::string type_text(const OptionSpec& o) {
  switch (o.type) {
    case OptionType::Quantity:
      return std::string(units::quantity_name(o.quantity)) +
             (o.quantity == units::Quantity::Number || o.quantity == units::Quantity::Integer
                  ? ""
                  : " [" + std::string(units::allowed_units(o.quantity)) + "]");
    case OptionType::String:
      return "text";
    case OptionType::Choice:
      return "one of " + join(o.choices, " | ");
    case OptionType::Bool:
      return "true | false";
    case OptionType::IntList:
      return "list of whole numbers, e.g. 0,2,4-7";
  }
  return "";
}

}  // namespace

std::string_view spec_kind_name(SpecKind k) {
  switch (k) {
    case SpecKind::Platform:
      return "platform";
    case SpecKind::Workload:
      return "workload";
    case SpecKind::Perturbation:
      return "perturbation";
  }
  return "model";
}

const OptionSpec* Spec::option(std::string_view n) const {
  for (const auto& o : options)
    if (o.name == n) return &o;
  return nullptr;
}

// ---- spec builders ----

Spec make_spec(SpecKind kind, std::string name, std::string description, std::vector<OptionSpec> options) {
  Spec s;
  s.kind = kind;
  s.name = std::move(name);
  s.description = std::move(description);
  s.options = std::move(options);
  return s;
}

namespace {
OptionSpec option(std::string name, OptionType type, std::string default_value, std::string description,
                  bool optional) {
  OptionSpec o;
  o.name = std::move(name);
  o.type = type;
  o.default_value = std::move(default_value);
  o.description = std::move(description);
  o.optional = optional;
  return o;
}
}  // namespace

OptionSpec quantity_option(std::string name, units::Quantity q, std::string default_value,
                           std::string description, bool optional) {
  auto o = option(std::move(name), OptionType::Quantity, std::move(default_value), std::move(description),
                  optional);
  o.quantity = q;
  return o;
}

OptionSpec choice_option(std::string name, std::vector<std::string> choices, std::string default_value,
                         std::string description) {
  auto o =
      option(std::move(name), OptionType::Choice, std::move(default_value), std::move(description), false);
  o.choices = std::move(choices);
  return o;
}

OptionSpec bool_option(std::string name, std::string default_value, std::string description) {
  return option(std::move(name), OptionType::Bool, std::move(default_value), std::move(description), false);
}

OptionSpec text_option(std::string name, std::string description, bool optional) {
  return option(std::move(name), OptionType::String, "", std::move(description), optional);
}

OptionSpec list_option(std::string name, std::string description, bool optional) {
  return option(std::move(name), OptionType::IntList, "", std::move(description), optional);
}

// ---- OptionReader ----

void OptionReader::fail(std::string_view option, const std::string& what) const {
  throw InputError(with_context(
      opts_.context(),
      "option " + quoted(option) + " of " + std::string(spec_kind_name(kind_)) + " " + model_ + ": " + what));
}

std::int64_t OptionReader::integer(std::string_view name, std::int64_t lo, std::int64_t hi) const {
  const double v = opts_.number(name);
  if (!std::isfinite(v) || v != std::floor(v)) fail(name, "must be a whole number, got " + shown(v));
  if (v < static_cast<double>(lo) || v > static_cast<double>(hi))
    fail(name, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " + shown(v));
  return static_cast<std::int64_t>(v);
}

double OptionReader::positive(std::string_view name, units::Quantity q) const {
  const double v = opts_.number(name);
  if (!std::isfinite(v) || v <= 0) fail(name, "must be greater than 0, got " + shown(v, q));
  return v;
}

double OptionReader::non_negative(std::string_view name, units::Quantity q) const {
  const double v = opts_.number(name);
  if (!std::isfinite(v) || v < 0) fail(name, "must not be negative, got " + shown(v, q));
  return v;
}

std::string OptionReader::shown(double value, units::Quantity q) {
  if (q != units::Quantity::Number && q != units::Quantity::Integer) return units::format(value, q);
  // Shortest text that reads back as `value`: "2.5", never "2.5000000000000004" nor a rounded "3";
  // whole numbers in full ("1000000000", not "1e+09": counts are read against limits).
  char buf[400];
  const bool whole = std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 1e21;
  const auto r = whole ? std::to_chars(buf, buf + sizeof buf, value, std::chars_format::fixed)
                       : std::to_chars(buf, buf + sizeof buf, value);
  return std::string(buf, r.ptr);
}

std::string unknown_model_message(SpecKind kind, std::string_view name, const std::vector<std::string>& known,
                                  const std::string& context) {
  const std::string k(spec_kind_name(kind));
  std::string msg = "unknown " + k + " " + quoted(name);
  const auto hint = did_you_mean(name, known);
  if (!hint.empty()) msg += "; did you mean " + quoted(hint) + "?";
  msg += " (" + k + "s:";
  for (const auto& n : known) msg += " " + n;
  return with_context(context, msg + ")");
}

// ---- Options ----

const OptionValue& Options::get(std::string_view name) const {
  const auto it = values_.find(std::string(name));
  if (it == values_.end()) throw InputError(with_context(context_, "option " + quoted(name) + " is missing"));
  return it->second;
}

double Options::number(std::string_view name) const {
  const auto& v = get(name);
  if (const auto* d = std::get_if<double>(&v)) return *d;
  throw InputError(with_context(context_, "option " + quoted(name) + " is not a number"));
}

std::int64_t Options::integer(std::string_view name) const {
  const double d = number(name);
  if (!std::isfinite(d) || d != std::floor(d) || std::fabs(d) > 0x1p53) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", d);
    throw InputError(
        with_context(context_, "option " + quoted(name) + " must be a whole number, got " + buf));
  }
  return static_cast<std::int64_t>(d);
}

const std::string& Options::string(std::string_view name) const {
  const auto& v = get(name);
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  throw InputError(with_context(context_, "option " + quoted(name) + " is not a text"));
}

bool Options::boolean(std::string_view name) const {
  const auto& v = get(name);
  if (const auto* b = std::get_if<bool>(&v)) return *b;
  throw InputError(with_context(context_, "option " + quoted(name) + " is not true or false"));
}

const std::vector<std::int64_t>& Options::int_list(std::string_view name) const {
  const auto& v = get(name);
  if (const auto* l = std::get_if<std::vector<std::int64_t>>(&v)) return *l;
  throw InputError(with_context(context_, "option " + quoted(name) + " is not a list of whole numbers"));
}

// ---- parsing ----

bool parse_bool(std::string_view text) {
  const std::string_view t = trim(text);
  std::string lower(t);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "true" || lower == "yes" || lower == "on") return true;
  if (lower == "false" || lower == "no" || lower == "off") return false;
  throw std::invalid_argument(quoted(t) + " is not a boolean (use true or false)");
}

OptionValue parse_option(const OptionSpec& spec, std::string_view text) {
  switch (spec.type) {
    case OptionType::Quantity: {
      const double v = units::parse(text, spec.quantity);
      const auto name = units::quantity_name(spec.quantity);
      if (v < 0 && cannot_be_negative(spec.quantity))
        throw std::invalid_argument(quoted(trim(text)) + " is impossible: " + std::string(article(name)) +
                                    " " + std::string(name) + " cannot be negative");
      return v;
    }
    case OptionType::String:
      return std::string(trim(text));
    case OptionType::Choice: {
      const std::string t(trim(text));
      if (std::find(spec.choices.begin(), spec.choices.end(), t) != spec.choices.end()) return t;
      std::string msg = quoted(t) + " is not one of " + join(spec.choices, ", ");
      const auto hint = did_you_mean(t, spec.choices);
      if (!hint.empty()) msg += "; did you mean " + quoted(hint) + "?";
      throw std::invalid_argument(msg);
    }
    case OptionType::Bool:
      return parse_bool(text);
    case OptionType::IntList:
      return parse_int_list(text);
  }
  throw std::logic_error("parse_option: unknown option type");
}

Options make_options(const Spec& spec, const std::vector<UserOption>& given, const std::string& context,
                     const std::string& where_block) {
  const std::string kind(spec_kind_name(spec.kind));
  const std::string owner = kind + " " + quoted(spec.name);
  const auto at = [](const std::string& where, const std::string& msg) { return with_context(where, msg); };
  std::vector<std::string> names;
  for (const auto& o : spec.options) names.push_back(o.name);

  Options out(context);
  for (std::size_t i = 0; i < given.size(); ++i) {
    const auto& u = given[i];
    const OptionSpec* o = spec.option(u.key);
    if (!o) {
      std::string msg = "unknown option " + quoted(u.key) + " for " + owner;
      const auto hint = did_you_mean(u.key, names);
      if (!hint.empty())
        msg += "; did you mean " + quoted(hint) + "?";
      else
        msg += names.empty() ? " (it takes no options)" : " (options: " + join(names, ", ") + ")";
      throw InputError(at(u.where, msg));
    }
    for (std::size_t j = 0; j < i; ++j)
      if (given[j].key == u.key)
        throw InputError(at(u.where, "option " + quoted(u.key) + " of " + owner +
                                         " is given twice (first at " + given[j].where + ")"));
    try {
      out.set(o->name, parse_option(*o, u.text));
    } catch (const std::invalid_argument& e) {  // units::UnitError derives from it
      throw InputError(at(u.where, "option " + quoted(u.key) + " of " + owner + ": " + e.what()));
    }
  }
  for (const auto& o : spec.options) {
    if (out.has(o.name)) continue;
    if (!o.default_value.empty()) {
      try {
        out.set(o.name, parse_option(o, o.default_value));
      } catch (const std::invalid_argument& e) {
        throw std::logic_error("built-in default of option '" + o.name + "' of " + owner +
                               " is invalid: " + e.what());
      }
    } else if (!o.optional) {
      throw InputError(
          at(where_block, owner + " needs option " + quoted(o.name) + " (" + o.description + ")"));
    }
  }
  return out;
}

std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates) {
  return text::closest_name(name, candidates);  // bounded work for any name (util/text.hpp)
}

// ---- registry ----


const Spec* Registry::find(SpecKind kind, std::string_view name) const {
  for (const auto& s : specs_)
    if (s.kind == kind && s.name == name) return &s;
  return nullptr;
}

const Spec* Registry::find_any(std::string_view name) const {
  for (const auto& s : specs_)
    if (s.name == name) return &s;
  return nullptr;
}

std::vector<const Spec*> Registry::all(SpecKind kind) const {
  std::vector<const Spec*> out;
  for (const auto& s : specs_)
    if (s.kind == kind) out.push_back(&s);
  return out;
}

std::string describe(const Spec& spec) {
  std::string out = spec.name + " (" + std::string(spec_kind_name(spec.kind)) + ")\n";
  out += "  " + spec.description + "\n";
  if (spec.options.empty()) return out + "\nno options\n";
  out += "\noptions:\n";
  for (const auto& o : spec.options) {
    out += "  " + o.name + ": " + type_text(o);
    if (!o.default_value.empty())
      out += ", default " + o.default_value;
    else
      out += o.optional ? ", optional" : ", required";
    out += "\n      " + o.description + "\n";
  }
  return out;
}

}  // namespace waitlab::models
