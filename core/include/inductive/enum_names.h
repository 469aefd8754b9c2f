// inductive/enum_names.h - config variants are enums in C++ and names in JSON and on command lines: one table per
// enum gives both directions, and one message for a name that is not a choice ("<what> must be a, b or c: got 'x'").
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "inductive/error.h"

namespace inductive {

template <typename E>
struct EnumName {
  E value;
  const char* name;
};

template <typename E, size_t N>
const char* enum_name(const EnumName<E> (&names)[N], E value) {
  for (const EnumName<E>& n : names)
    if (n.value == value) return n.name;
  return "?";  // unreachable for a value of the enum: every table lists every enumerator
}

template <typename E, size_t N>
E parse_enum(const EnumName<E> (&names)[N], const std::string& text, const std::string& what) {
  for (const EnumName<E>& n : names)
    if (text == n.name) return n.value;
  std::string choices;
  for (size_t i = 0; i < N; ++i) choices += std::string(i == 0 ? "" : i + 1 == N ? " or " : ", ") + names[i].name;
  INDUCTIVE_FAIL(ErrorCode::kInvalidArgument, what, " must be ", choices, ": got '", text, "'");
}

// The table of an enum, for name_of() and for streaming into messages (INDUCTIVE_CHECK prints the name):
//   template <> struct EnumTable<OtkePooling> { static constexpr const auto& names = kOtkePoolings; };
template <typename E>
struct EnumTable;

template <typename E>
const char* name_of(E value) {
  return enum_name(EnumTable<E>::names, value);
}

template <typename E, typename = std::enable_if_t<std::is_enum_v<E>>, typename = decltype(EnumTable<E>::names)>
std::ostream& operator<<(std::ostream& os, E value) {
  return os << name_of(value);
}

// JSON takes the name too (nlohmann would otherwise write the enumerator's number, silently).
template <typename E, typename = std::enable_if_t<std::is_enum_v<E>>, typename = decltype(EnumTable<E>::names)>
void to_json(nlohmann::json& j, E value) {
  j = name_of(value);
}

}  // namespace inductive
