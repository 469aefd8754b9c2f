// core/src/chem/molecule_csv.cpp - molecule sets from SMILES CSV files (see inductive/smiles.h): one reader for the
// rows (header, columns, skipped empty targets, SMILES errors with the row), two ways to read the target cell
// (integer class, real value).
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <set>
#include <string>

#include "data/text_lines.h"
#include "inductive/error.h"
#include "inductive/smiles.h"
#include "inductive/text_lines.h"

namespace inductive {
namespace {

// The rows of a molecule CSV whose target cell is not empty, parsed; `read_target` checks and stores that cell
// (it throws naming the line). Fills `out.smiles` and `out.n_skipped`.
struct CsvMolecules {
  std::vector<Molecule> molecules;
  std::vector<size_t> line_of;
};

CsvMolecules read_rows(const std::string& text, const std::string& smiles_column, const std::string& target_column,
                       const std::string& what, MoleculeDataset& out,
                       const std::function<void(const std::string& cell, size_t line)>& read_target) {
  CsvRows csv(text, what);
  const int sc = csv.column(smiles_column), tc = csv.column(target_column);
  const size_t columns = csv.header().size();
  CsvMolecules rows;
  std::vector<std::string> f;
  while (csv.next(f)) {
    INDUCTIVE_CHECK(f.size() == columns, ErrorCode::kInvalidArgument, what, ": line ", csv.line(), ": ", f.size(),
                    " fields, expected ", columns, " (the header's)");
    if (f[tc].empty()) {
      ++out.n_skipped;
      continue;
    }
    read_target(f[tc], csv.line());
    try {
      rows.molecules.push_back(parse_smiles(f[sc]));
    } catch (const Error& e) {
      throw Error(e.code(), what + ": line " + std::to_string(csv.line()) + ": " + e.what());
    }
    rows.line_of.push_back(csv.line());
    out.smiles.push_back(f[sc]);
  }
  INDUCTIVE_CHECK(!rows.molecules.empty(), ErrorCode::kInvalidArgument, what, ": no molecule with a '", target_column,
                  "' value");
  return rows;
}

// Node labels: the atom vocabulary (given, or the sorted types of the set) and one graph per molecule.
void build_graphs(const CsvMolecules& rows, const std::string& what, std::vector<std::string> atom_types,
                  AtomTyping typing, MoleculeDataset& out) {
  if (atom_types.empty()) {
    std::set<std::string> seen;
    for (const Molecule& m : rows.molecules)
      for (int i = 0; i < m.n_atoms(); ++i) seen.insert(atom_type(m, i, typing));
    atom_types.assign(seen.begin(), seen.end());
  }
  out.atom_types = atom_types;
  out.dataset.name = what;
  for (size_t v = 0; v < atom_types.size(); ++v) out.dataset.node_label_values.push_back(static_cast<int64_t>(v));
  for (size_t k = 0; k < rows.molecules.size(); ++k) {
    try {
      out.dataset.graphs.push_back(molecule_graph(rows.molecules[k], atom_types, -1, typing));
    } catch (const Error& e) {
      throw Error(e.code(), what + ": line " + std::to_string(rows.line_of[k]) + ": " + e.what());
    }
  }
}

}  // namespace

MoleculeDataset parse_molecule_csv(const std::string& text, const std::string& smiles_column,
                                   const std::string& label_column, const std::string& what,
                                   std::vector<std::string> atom_types, AtomTyping typing) {
  MoleculeDataset out;
  std::vector<int64_t> raw_labels;
  const CsvMolecules rows =
      read_rows(text, smiles_column, label_column, what, out, [&](const std::string& cell, size_t line) {
        char* end = nullptr;
        const long long v = std::strtoll(cell.c_str(), &end, 10);
        INDUCTIVE_CHECK(end == cell.c_str() + cell.size(), ErrorCode::kInvalidArgument, what, ": line ", line,
                        ": label '", label_column, "' must be an integer class: got '", cell, "'");
        raw_labels.push_back(v);
      });
  build_graphs(rows, what, std::move(atom_types), typing, out);
  std::set<int64_t> classes(raw_labels.begin(), raw_labels.end());
  out.dataset.class_values.assign(classes.begin(), classes.end());
  for (size_t k = 0; k < raw_labels.size(); ++k) {
    out.dataset.graphs[k].label = static_cast<int32_t>(
        std::lower_bound(out.dataset.class_values.begin(), out.dataset.class_values.end(), raw_labels[k]) -
        out.dataset.class_values.begin());
  }
  return out;
}

MoleculeDataset parse_molecule_regression_csv(const std::string& text, const std::string& smiles_column,
                                              const std::string& target_column, const std::string& what,
                                              std::vector<std::string> atom_types, AtomTyping typing) {
  MoleculeDataset out;
  const CsvMolecules rows =
      read_rows(text, smiles_column, target_column, what, out, [&](const std::string& cell, size_t line) {
        // Strict: the whole cell, finite, and within float range (targets are stored as float32).
        double v = 0;
        const bool ok = detail::parse_double(cell, v) && std::fabs(v) <= FLT_MAX;
        INDUCTIVE_CHECK(ok, ErrorCode::kInvalidArgument, what, ": line ", line, ": target '", target_column,
                        "' must be a finite number: got '", cell, "'");
        out.targets.push_back(static_cast<float>(v));
      });
  build_graphs(rows, what, std::move(atom_types), typing, out);
  for (Graph& g : out.dataset.graphs) g.label = -1;  // no classes: the targets are real values
  return out;
}

}  // namespace inductive
