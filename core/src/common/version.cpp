#include "inductive/version.h"

#ifndef INDUCTIVE_VERSION
#error "INDUCTIVE_VERSION must be defined by the build (root package.json)"
#endif
#ifndef INDUCTIVE_BUILD_KIND
#define INDUCTIVE_BUILD_KIND "native"
#endif

namespace inductive {

const char* version() noexcept { return INDUCTIVE_VERSION; }
const char* build_kind() noexcept { return INDUCTIVE_BUILD_KIND; }
const char* producer() noexcept { return "inductive " INDUCTIVE_VERSION " " INDUCTIVE_BUILD_KIND; }

}  // namespace inductive
