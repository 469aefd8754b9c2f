// core's model kinds, registered at once (inductive/model_kinds.h). This file sits on core's top floor: it knows
// every method, which registers its own kind through io's registry.
#include "inductive/model_kinds.h"

#include "inductive/graphit.h"
#include "inductive/otke.h"

namespace inductive {

void register_core_model_kinds() {
  static const bool once = [] {
    register_otke_model_kind();
    register_graphit_model_kind();
    return true;
  }();
  (void)once;
}

}  // namespace inductive
