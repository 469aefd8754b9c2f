// inductive_parse_dump - what our readers make of a file, as one JSON line, for differential tests against
// independent parsers (tests/oracle/test_differential_fuzz.py: RDKit, numpy, scikit-learn).
//
// Reads lines "KIND<TAB>PATH" on stdin (KIND: smiles | npy | libsvm) and prints, per line, one of
//   {"ok": true, ...what was read...}
//   {"ok": false, "error": "<inductive::Error message>"}
//   {"ok": false, "crash": "<any other exception>"}      (always a bug: readers throw only inductive::Error)
// One process reads thousands of files, so a differential run costs parse time, not process starts.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "inductive/error.h"
#include "inductive/model_file.h"
#include "inductive/npy.h"
#include "inductive/screening/datasets.h"
#include "inductive/screening/design_matrix.h"
#include "inductive/smiles.h"

namespace {

using nlohmann::json;

// JSON has no NaN or infinity: those travel as the strings Python's float() reads back.
json number(double v) {
  if (std::isfinite(v)) return v;
  return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
}

std::string read_text(const std::string& path) {
  const std::vector<uint8_t> bytes = inductive::read_file_bytes(path);
  return std::string(bytes.begin(), bytes.end());
}

json dump_smiles(const std::string& path) {
  const inductive::Molecule m = inductive::parse_smiles(read_text(path));
  json types = json::array(), bonds = json::array();
  for (int i = 0; i < m.n_atoms(); ++i)
    types.push_back(inductive::atom_type(m, i, inductive::AtomTyping::kElementCharge));
  for (size_t b = 0; b < m.bonds.size(); ++b) bonds.push_back({m.bonds[b][0], m.bonds[b][1], m.bond_orders[b]});
  return {{"types", types}, {"aromatic", m.aromatic}, {"bonds", bonds}};
}

json dump_npy(const std::string& path) {
  const inductive::NpyArray a = inductive::load_npy(path);
  json values = json::array();
  if (a.dtype == "<f4")
    for (float v : a.f32) values.push_back(number(v));
  else
    for (int32_t v : a.i32) values.push_back(v);
  return {{"dtype", a.dtype}, {"shape", a.shape}, {"values", values}};
}

json dump_libsvm(const std::string& path) {
  const inductive::Dataset d = inductive::to_dataset(inductive::parse_libsvm(read_text(path), {}, path));
  json entries = json::array();
  if (const auto* csr = dynamic_cast<const inductive::CsrDesign*>(d.x.get())) {
    for (int i = 0; i < d.n(); ++i)
      for (int64_t k = csr->row_ptr()[i]; k < csr->row_ptr()[i + 1]; ++k)
        entries.push_back({i, csr->col()[k], number(csr->val()[k])});
  } else {
    throw std::runtime_error("parse_libsvm returned a dense matrix");
  }
  return {{"n", d.n()}, {"p", d.p()}, {"y", d.y}, {"entries", entries}};
}

}  // namespace

int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    const size_t tab = line.find('\t');
    const std::string kind = line.substr(0, tab), path = tab == std::string::npos ? "" : line.substr(tab + 1);
    json out;
    try {
      if (kind == "smiles")
        out = dump_smiles(path);
      else if (kind == "npy")
        out = dump_npy(path);
      else if (kind == "libsvm")
        out = dump_libsvm(path);
      else
        throw std::runtime_error("unknown kind '" + kind + "' (smiles | npy | libsvm)");
      out["ok"] = true;
    } catch (const inductive::Error& e) {
      out = {{"ok", false}, {"error", e.what()}};
    } catch (const std::exception& e) {
      out = {{"ok", false}, {"crash", e.what()}};
    }
    std::cout << out.dump(-1, ' ', false, json::error_handler_t::replace) << '\n' << std::flush;
  }
  return 0;
}
