// native/cli/cmd_smiles.cpp - `inductive smiles`: the graphs the library reads from SMILES (one JSON object per
// molecule: atoms, their node types under --atom-types, bonds with orders, or the parse error), for inspecting
// inputs and for the RDKit oracle test.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "inductive/atomic_file.h"
#include "inductive/error.h"
#include "inductive/model_file.h"
#include "inductive/smiles.h"
#include "inductive/text_lines.h"

namespace inductive::cli {

void add_smiles_command(CLI::App& app) {
  struct Args {
    std::string input, out, column = "smiles", atom_types = "element";
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("smiles", "Parse SMILES (a CSV with a header) into molecule graphs (JSON lines)");
  cmd->add_option("--csv", args->input, "CSV file with a header line")->required();
  cmd->add_option("--column", args->column, "Name of the SMILES column")->capture_default_str();
  cmd->add_option("--out", args->out, "Output: one JSON object per molecule (.jsonl)")->required();
  cmd->add_option("--atom-types", args->atom_types,
                  "Node labels as a model would type them ('types'): element | element-charge (N+, O-)")
      ->capture_default_str()
      ->check(CLI::IsMember({"element", "element-charge"}));
  cmd->callback([args] {
    const AtomTyping typing = parse_atom_typing(args->atom_types);
    const std::vector<uint8_t> bytes = read_file_bytes(args->input);
    const std::string text(bytes.begin(), bytes.end());
    CsvRows csv(text, args->input);
    const int col = csv.column(args->column);
    std::string out;
    int n = 0, failed = 0;
    std::vector<std::string> fields;
    while (csv.next(fields)) {
      INDUCTIVE_CHECK(static_cast<int>(fields.size()) > col, ErrorCode::kInvalidArgument, args->input, ": line ",
                      csv.line(), ": ", fields.size(), " fields, the SMILES column is number ", col + 1);
      nlohmann::json j = {{"line", csv.line()}, {"smiles", fields[col]}};
      try {
        const Molecule m = parse_smiles(fields[col]);
        nlohmann::json bonds = nlohmann::json::array();
        for (size_t b = 0; b < m.bonds.size(); ++b) bonds.push_back({m.bonds[b][0], m.bonds[b][1], m.bond_orders[b]});
        j["atoms"] = m.symbols;
        std::vector<std::string> types(m.n_atoms());
        for (int i = 0; i < m.n_atoms(); ++i) types[i] = atom_type(m, i, typing);
        j["types"] = types;
        j["bonds"] = bonds;
      } catch (const Error& e) {
        j["error"] = e.what();  // one bad molecule does not stop the others; it is reported in place
        ++failed;
      }
      out += j.dump() + "\n";
      ++n;
    }
    write_file_atomic(args->out, std::vector<uint8_t>(out.begin(), out.end()));
    std::fprintf(stderr, "smiles: %d molecules, %d could not be parsed\n", n, failed);
  });
}

}  // namespace inductive::cli
