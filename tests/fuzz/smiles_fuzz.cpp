// libFuzzer target: parse_smiles on arbitrary strings (the browser parses SMILES users paste).
//
// parse_smiles either returns a molecule whose bonds are valid (0 <= u < v < atoms, no bond twice, orders 1..5,
// one order per bond, one flag per atom) or throws inductive::Error; anything else is a bug. Time must stay linear
// (libFuzzer's -timeout catches a quadratic path on long inputs).
#include <set>
#include <utility>

#include "fuzz_util.h"
#include "inductive/error.h"
#include "inductive/smiles.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using inductive::fuzz::finding;
  inductive::Molecule m;
  try {
    m = inductive::parse_smiles(inductive::fuzz::text(data, size));
  } catch (const inductive::Error&) {
    return 0;
  }
  const int n = m.n_atoms();
  if (n < 1) finding("smiles_fuzz", "a molecule without atoms");
  if (m.aromatic.size() != static_cast<size_t>(n) || m.charges.size() != static_cast<size_t>(n))
    finding("smiles_fuzz", "per-atom arrays of the wrong length");
  if (m.bond_orders.size() != m.bonds.size()) finding("smiles_fuzz", "one bond order per bond expected");
  std::set<std::pair<int, int>> seen;
  for (size_t k = 0; k < m.bonds.size(); ++k) {
    const int u = m.bonds[k][0], v = m.bonds[k][1];
    if (!(0 <= u && u < v && v < n)) finding("smiles_fuzz", "a bond outside the molecule or not u < v");
    if (!seen.insert({u, v}).second) finding("smiles_fuzz", "a bond listed twice");
    if (m.bond_orders[k] < 1 || m.bond_orders[k] > 5) finding("smiles_fuzz", "a bond order outside 1..5");
  }
  return 0;
}
