// inductive/smiles.h - molecules from SMILES strings as graphs (atoms = nodes, bonds = edges), the same code in the
// native and the WebAssembly build, so one SMILES gives one graph everywhere (GraphiT, thesis ch. 3).
//
// Only the structure is read: atoms (organic subset, bracket atoms with isotope / chirality / hydrogen count /
// charge / atom class, aromatic lower-case symbols, '*'), bonds (- = # $ : / \ and implicit single/aromatic),
// branches, ring closures (digits and %nn) and '.' between fragments. No valence model and no aromaticity
// perception: a graph needs neither, and node labels are atom types (element symbols, or symbols with the formal
// charge: AtomTyping). Atom order is the order of the atoms in
// the string, as in RDKit, so atom indices here are RDKit's (the browser draws molecules with RDKit and colours
// atom i by the model's saliency of node i). Like RDKit's default (RemoveHs), explicit hydrogen atoms ("[H]") are
// dropped when they carry no isotope and no charge and hang off exactly one heavy atom; other hydrogens stay atoms.
// Checked against RDKit (python3-rdkit) on the MoleculeNet SMILES in tests/oracle/test_smiles_rdkit.py.
//
// Errors: Error{kInvalidArgument} "smiles: position P: <problem>: got X, expected Y" for syntax errors (unknown
// element, unclosed bracket / branch / ring, a ring bond to itself or duplicated, bond symbol with no atom).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "inductive/enum_names.h"
#include "inductive/graph.h"

namespace inductive {

struct Molecule {
  std::vector<std::string> symbols;           // element symbols, capitalised ("C", "Cl"; aromatic "c" -> "C")
  std::vector<uint8_t> aromatic;              // 1 for atoms written in aromatic (lower-case) form
  std::vector<int8_t> charges;                // formal charges of bracket atoms (0 otherwise)
  std::vector<std::array<int32_t, 2>> bonds;  // u < v, in the order the string closes them
  std::vector<uint8_t> bond_orders;           // 1, 2, 3, 4 (quadruple) or 5 for aromatic (':' or implicit)
  int n_atoms() const { return static_cast<int>(symbols.size()); }
};

Molecule parse_smiles(const std::string& smiles);

// How an atom becomes a node label (a model records its choice, so a SMILES given at prediction time is typed as
// the training molecules were):
//   kElement        the element symbol: "C", "N", "O" (charges ignored)
//   kElementCharge  the symbol and the formal charge: "C", "N+", "O-", "Fe+2", "S-2" (ZINC carries charged atoms,
//                   [NH+], [O-], [NH3+], whose chemistry differs from the neutral atom's)
enum class AtomTyping { kElement, kElementCharge };
inline constexpr EnumName<AtomTyping> kAtomTypings[] = {{AtomTyping::kElement, "element"},
                                                        {AtomTyping::kElementCharge, "element-charge"}};
template <>
struct EnumTable<AtomTyping> {
  static constexpr const auto& names = kAtomTypings;
};
// "element" | "element-charge"; anything else is an Error{kInvalidArgument} naming the choices.
inline AtomTyping parse_atom_typing(const std::string& name) { return parse_enum(kAtomTypings, name, "atom typing"); }
inline const char* atom_typing_name(AtomTyping typing) { return name_of(typing); }
// The type of atom `i` of `molecule` under `typing`.
std::string atom_type(const Molecule& molecule, int i, AtomTyping typing);

// The graph of a molecule with node labels = indices of the atoms' types in `vocabulary`. An atom whose type is
// not in it is an error naming the type, its position and the vocabulary, unless `unknown_label` >= 0, which it
// then gets.
Graph molecule_graph(const Molecule& molecule, const std::vector<std::string>& vocabulary, int unknown_label = -1,
                     AtomTyping typing = AtomTyping::kElement);

// A molecule set from a CSV with a header (MoleculeNet style: a SMILES column and target columns; quoted fields
// allowed). Rows whose target cell is empty (a missing label in multi-task sets) are skipped and counted. Node
// labels index `atom_types`: the sorted atom types (under `typing`) of the set when `atom_types` is empty on
// input, else that fixed vocabulary (an unknown atom is then an error naming the row). A SMILES that does not
// parse is an error naming the row.
//   parse_molecule_csv             classification: 0/1 or integer labels; classes are the sorted distinct values
//                                  (dataset.class_values), graph.label the class index; a non-integer label is an
//                                  error naming the row and column
//   parse_molecule_regression_csv  regression: one real target per molecule (`targets`; graph.label = -1, no
//                                  classes); a cell that is not a finite number (text, nan, inf) is an error naming
//                                  the row and column
struct MoleculeDataset {
  GraphDataset dataset;
  std::vector<std::string> atom_types;
  std::vector<std::string> smiles;  // per graph
  std::vector<float> targets;       // per graph (regression only)
  int n_skipped = 0;
};
MoleculeDataset parse_molecule_csv(const std::string& text, const std::string& smiles_column,
                                   const std::string& label_column, const std::string& what,
                                   std::vector<std::string> atom_types = {}, AtomTyping typing = AtomTyping::kElement);
MoleculeDataset parse_molecule_regression_csv(const std::string& text, const std::string& smiles_column,
                                              const std::string& target_column, const std::string& what,
                                              std::vector<std::string> atom_types = {},
                                              AtomTyping typing = AtomTyping::kElement);

}  // namespace inductive
