// SMILES -> molecule graphs: the structure RDKit would give (atoms in string order, bonds), on hand-checked
// molecules; errors for malformed strings. The sweep against RDKit itself is tests/oracle/test_smiles_rdkit.py.
#include <gtest/gtest.h>

#include <algorithm>

#include "inductive/model_file.h"
#include "inductive/smiles.h"
#include "../test_util.h"

namespace inductive {
namespace {

using testing::expect_error;

std::vector<std::array<int32_t, 2>> sorted_bonds(const Molecule& m) {
  auto b = m.bonds;
  std::sort(b.begin(), b.end());
  return b;
}

TEST(Smiles, ChainsBranchesAndBondOrders) {
  const Molecule m = parse_smiles("CC(=O)Cl");  // acetyl chloride
  EXPECT_EQ(m.symbols, (std::vector<std::string>{"C", "C", "O", "Cl"}));
  EXPECT_EQ(sorted_bonds(m), (std::vector<std::array<int32_t, 2>>{{0, 1}, {1, 2}, {1, 3}}));
  EXPECT_EQ(m.bond_orders, (std::vector<uint8_t>{1, 2, 1}));
  EXPECT_EQ(parse_smiles("C#N").bond_orders, (std::vector<uint8_t>{3}));
  EXPECT_EQ(parse_smiles("BrCCBr").symbols, (std::vector<std::string>{"Br", "C", "C", "Br"}));
}

TEST(Smiles, RingsAndAromaticity) {
  const Molecule benzene = parse_smiles("c1ccccc1");
  EXPECT_EQ(benzene.n_atoms(), 6);
  EXPECT_EQ(benzene.bonds.size(), 6u);
  for (uint8_t o : benzene.bond_orders) EXPECT_EQ(o, 5);  // implicit bond between aromatic atoms
  for (uint8_t a : benzene.aromatic) EXPECT_EQ(a, 1);
  for (const auto& s : benzene.symbols) EXPECT_EQ(s, "C");
  // Two-digit ring labels, a ring bond order given at the closure, and two rings sharing atoms (naphthalene).
  EXPECT_EQ(parse_smiles("C%12CCCCC%12").bonds.size(), 6u);
  EXPECT_EQ(parse_smiles("C=1CCCCC1").bond_orders.back(), 2);  // the ring bond, closed last
  const Molecule naph = parse_smiles("c1ccc2ccccc2c1");
  EXPECT_EQ(naph.n_atoms(), 10);
  EXPECT_EQ(naph.bonds.size(), 11u);
  // A ring label can be reused once closed.
  EXPECT_EQ(parse_smiles("C1CC1C1CC1").bonds.size(), 7u);
}

TEST(Smiles, BracketAtomsChargesIsotopesAndHydrogens) {
  const Molecule nitro = parse_smiles("O=[N+]([O-])c1ccccc1");  // nitrobenzene: 9 atoms, 9 bonds (as RDKit)
  EXPECT_EQ(nitro.n_atoms(), 9);
  EXPECT_EQ(nitro.bonds.size(), 9u);
  EXPECT_EQ(nitro.charges[1], 1);
  EXPECT_EQ(nitro.charges[2], -1);
  EXPECT_EQ(parse_smiles("[Fe++]").charges[0], 2);
  EXPECT_EQ(parse_smiles("[Cu+2]").charges[0], 2);
  EXPECT_EQ(parse_smiles("[13CH4]").symbols, (std::vector<std::string>{"C"}));
  EXPECT_EQ(parse_smiles("[C@@H](F)(Cl)Br").n_atoms(), 4);
  EXPECT_EQ(parse_smiles("[nH]1cccc1").symbols[0], "N");
  EXPECT_EQ(parse_smiles("[se]1cccc1").symbols[0], "Se");
  EXPECT_EQ(parse_smiles("[Sc]").symbols[0], "Sc");  // scandium, not S + c
  // Explicit hydrogens go (RDKit's RemoveHs) unless isotopic, bonded to H or to '*', or marking stereo; charged
  // ones and ones on double bonds go too (RDKit does so; found by tests/oracle/test_differential_fuzz.py).
  const Molecule methane = parse_smiles("[H]C([H])([H])[H]");
  EXPECT_EQ(methane.n_atoms(), 1);
  EXPECT_TRUE(methane.bonds.empty());
  EXPECT_EQ(parse_smiles("[2H]C").n_atoms(), 2);
  EXPECT_EQ(parse_smiles("[H][H]").n_atoms(), 2);
  EXPECT_EQ(parse_smiles("[H]/N=C/C").n_atoms(), 4);
  EXPECT_EQ(parse_smiles("C[H+]").n_atoms(), 1);
  EXPECT_EQ(parse_smiles("[H-]C").n_atoms(), 1);
  EXPECT_EQ(parse_smiles("[H]=C").n_atoms(), 1);
  EXPECT_EQ(parse_smiles("*[H]").n_atoms(), 2);
  EXPECT_EQ(parse_smiles("[H+].CC").n_atoms(), 3);  // a lone proton is no substituent
  // Atoms after a removed hydrogen are renumbered.
  const Molecule m = parse_smiles("[H]OC");
  EXPECT_EQ(m.symbols, (std::vector<std::string>{"O", "C"}));
  EXPECT_EQ(sorted_bonds(m), (std::vector<std::array<int32_t, 2>>{{0, 1}}));
}

TEST(Smiles, FragmentsAndStereoMarks) {
  const Molecule salt = parse_smiles("[Na+].[Cl-]");
  EXPECT_EQ(salt.n_atoms(), 2);
  EXPECT_TRUE(salt.bonds.empty());
  EXPECT_EQ(parse_smiles("F/C=C/F").bonds.size(), 3u);
  EXPECT_EQ(parse_smiles("F/C=C\\\\F").bonds.size(), 3u);  // a doubled mark is one bond (RDKit reads it so)
}

// What differential fuzzing against RDKit (tests/oracle/test_differential_fuzz.py) found and fixed.
TEST(Smiles, AgreesWithRdkitOnWhatDifferentialFuzzingFound) {
  // "ClBr" was read as one bromine: the two-letter organic symbols were tried one after the other without a stop.
  const Molecule halogens = parse_smiles("ClBr");
  EXPECT_EQ(halogens.symbols, (std::vector<std::string>{"Cl", "Br"}));
  EXPECT_EQ(halogens.bonds.size(), 1u);
  // Dative bonds are single bonds of the graph.
  EXPECT_EQ(parse_smiles("C->[Fe]<-C").bond_orders, (std::vector<uint8_t>{1, 1}));
  // A '/' or '\\' bond between two aromatic atoms is aromatic, as an unwritten one.
  EXPECT_EQ(parse_smiles("c1ccccc1/c1ccccc1").bond_orders[6], 5);
  EXPECT_EQ(parse_smiles("[C@TH1](F)(Cl)Br").n_atoms(), 4);
  EXPECT_EQ(parse_smiles("[C@OH30]C").n_atoms(), 2);
  EXPECT_EQ(parse_smiles("[CH3+:12]").n_atoms(), 1);
  expect_error([] { parse_smiles("C()C"); }, ErrorCode::kInvalidArgument, "empty branch '()'");
  expect_error([] { parse_smiles("C((C))"); }, ErrorCode::kInvalidArgument, "right after '('");
  expect_error([] { parse_smiles("C(1C)C1"); }, ErrorCode::kInvalidArgument, "ring closure at the start of a branch");
  expect_error([] { parse_smiles("C."); }, ErrorCode::kInvalidArgument, "'.' must be followed by an atom");
  expect_error([] { parse_smiles("C..C"); }, ErrorCode::kInvalidArgument, "'.' must be followed by an atom");
  expect_error([] { parse_smiles("C(.C)"); }, ErrorCode::kInvalidArgument, "'.' with no atom before it");
  expect_error([] { parse_smiles("C<C"); }, ErrorCode::kInvalidArgument, "'<' must start a dative bond");
  expect_error([] { parse_smiles("[C@TB21]C"); }, ErrorCode::kInvalidArgument, "@TB goes up to 20: got 21");
  expect_error([] { parse_smiles("[C@1]C"); }, ErrorCode::kInvalidArgument, "unexpected text in bracket atom");
  expect_error([] { parse_smiles("[C@@TH1]C"); }, ErrorCode::kInvalidArgument, "unexpected text in bracket atom");
  expect_error([] { parse_smiles("[C:]"); }, ErrorCode::kInvalidArgument, "atom class ':' without a number");
  expect_error([] { parse_smiles("[C:01]"); }, ErrorCode::kInvalidArgument, "atom class with a leading zero");
  expect_error([] { parse_smiles("[03CH3]"); }, ErrorCode::kInvalidArgument, "isotope with a leading zero");
  expect_error([] { parse_smiles("[NH3+++]"); }, ErrorCode::kInvalidArgument, "write the charge as +3, not +++");
  expect_error([] { parse_smiles("[H@]C"); }, ErrorCode::kInvalidArgument, "a hydrogen atom cannot be chiral");
}

TEST(Smiles, MalformedStringsArePreciseErrors) {
  expect_error([] { parse_smiles(""); }, ErrorCode::kInvalidArgument, "empty string");
  expect_error([] { parse_smiles("."); }, ErrorCode::kInvalidArgument, "'.' with no atom before it");  // smiles_fuzz
  expect_error([] { parse_smiles("..."); }, ErrorCode::kInvalidArgument, "'.' with no atom before it");
  expect_error([] { parse_smiles("C1CC"); }, ErrorCode::kInvalidArgument,
               "ring bond 1 opened at position 2 is never closed");
  expect_error([] { parse_smiles("C(C"); }, ErrorCode::kInvalidArgument, "branch(es) '(' not closed");
  expect_error([] { parse_smiles("CC)"); }, ErrorCode::kInvalidArgument, "position 3: ')' closes no branch");
  expect_error([] { parse_smiles("C[Xx]"); }, ErrorCode::kInvalidArgument, "unknown element: got 'X'");
  expect_error([] { parse_smiles("C[C"); }, ErrorCode::kInvalidArgument, "'[' is never closed");
  expect_error([] { parse_smiles("CQ"); }, ErrorCode::kInvalidArgument, "position 2: not an atom");
  expect_error([] { parse_smiles("CH4"); }, ErrorCode::kInvalidArgument, "hydrogens go in brackets");
  expect_error([] { parse_smiles("C="); }, ErrorCode::kInvalidArgument, "ends with a bond symbol");
  expect_error([] { parse_smiles("=C"); }, ErrorCode::kInvalidArgument, "with no atom before it");
  expect_error([] { parse_smiles("C=#C"); }, ErrorCode::kInvalidArgument, "two bond symbols in a row");
  expect_error([] { parse_smiles("C11"); }, ErrorCode::kInvalidArgument, "bonded to itself");
  expect_error([] { parse_smiles("C12CC12"); }, ErrorCode::kInvalidArgument, "bonded twice");
  expect_error([] { parse_smiles("C=1CC-1"); }, ErrorCode::kInvalidArgument, "two different bond symbols");
  expect_error([] { parse_smiles("[C+99]"); }, ErrorCode::kInvalidArgument, "charge out of range: got 99");
  // smiles_fuzz: 45 digits of charge overflowed an int (UBSan); saturated now.
  expect_error([] { parse_smiles("[13C+" + std::string(45, '5') + "]"); }, ErrorCode::kInvalidArgument,
               "charge out of range: got 100 or more (at most 15)");
  expect_error([] { parse_smiles("C%1"); }, ErrorCode::kInvalidArgument, "'%' must be followed by two digits");
}

// Hostile sizes parse in linear time: a 200,000-atom chain (quadratic before: minutes), 10^4 nested branches, and
// 10^4 ring bonds reusing labels. (No timing here: a quadratic parser would make this test run for minutes.)
TEST(Smiles, LongChainsDeepBranchesAndManyRingsParse) {
  const Molecule chain = parse_smiles(std::string(200000, 'C'));
  EXPECT_EQ(chain.n_atoms(), 200000);
  ASSERT_EQ(chain.bonds.size(), 199999u);
  EXPECT_EQ(chain.bonds.back(), (std::array<int32_t, 2>{199998, 199999}));
  std::string deep;
  for (int i = 0; i < 10000; ++i) deep += "C(";
  deep += "C" + std::string(10000, ')');
  const Molecule nested = parse_smiles(deep);
  EXPECT_EQ(nested.n_atoms(), 10001);
  EXPECT_EQ(nested.bonds.size(), 10000u);
  std::string rings;
  for (int i = 0; i < 10000; ++i) rings += "C1CC1";
  const Molecule many = parse_smiles(rings);  // 10^4 three-rings, one after another, label 1 reused
  EXPECT_EQ(many.n_atoms(), 30000);
  EXPECT_EQ(many.bonds.size(), 30000u + 9999u);
  expect_error([] { parse_smiles(std::string(100000, 'C') + "1CCCCC11"); }, ErrorCode::kInvalidArgument,
               "is never closed");
}

TEST(Smiles, MoleculeGraphUsesTheModelsVocabulary) {
  const std::vector<std::string> vocab = {"C", "N", "O", "F", "I", "Cl", "Br"};  // MUTAG's atom types
  const Graph g = molecule_graph(parse_smiles("O=[N+]([O-])c1ccccc1"), vocab);
  EXPECT_EQ(g.n_nodes, 9);
  EXPECT_EQ(g.n_edges(), 9);
  EXPECT_EQ(g.node_labels, (std::vector<int32_t>{2, 1, 2, 0, 0, 0, 0, 0, 0}));
  expect_error([&] { molecule_graph(parse_smiles("CS"), vocab); }, ErrorCode::kInvalidArgument,
               "atom 2 is S, which the model does not know (its atom types: C, N, O, F, I, Cl, Br)");
  EXPECT_EQ(molecule_graph(parse_smiles("CS"), vocab, 7).node_labels, (std::vector<int32_t>{0, 7}));
}

TEST(Smiles, MoleculeCsvBuildsALabelledGraphDataset) {
  const std::string csv =
      "smiles,\"task, with comma\",y\n"
      "c1ccccc1,x,1\n"
      "CC(=O)O,x,\n"  // missing label: skipped
      "\"O=[N+]([O-])c1ccccc1\",x,0\n";
  const MoleculeDataset m = parse_molecule_csv(csv, "smiles", "y", "toy.csv");
  EXPECT_EQ(m.dataset.n_graphs(), 2);
  EXPECT_EQ(m.n_skipped, 1);
  EXPECT_EQ(m.atom_types, (std::vector<std::string>{"C", "N", "O"}));
  EXPECT_EQ(m.dataset.class_values, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(m.dataset.graphs[0].label, 1);
  EXPECT_EQ(m.dataset.graphs[1].label, 0);
  EXPECT_EQ(m.dataset.graphs[1].node_labels, (std::vector<int32_t>{2, 1, 2, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(m.smiles[1], "O=[N+]([O-])c1ccccc1");
  // A fixed vocabulary (a model's) names what it does not know, with the row.
  expect_error(
      [&] {
        parse_molecule_csv(csv, "smiles", "y", "toy.csv", {"C", "O"});
      },
      ErrorCode::kInvalidArgument, "toy.csv: line 4: molecule: atom 2 is N");
  expect_error([&] { parse_molecule_csv("smiles,y\nC1CC,1\n", "smiles", "y", "bad.csv"); }, ErrorCode::kInvalidArgument,
               "bad.csv: line 2: smiles: ring bond 1");
  expect_error([&] { parse_molecule_csv("smiles,y\nCC,yes\n", "smiles", "y", "bad.csv"); }, ErrorCode::kInvalidArgument,
               "must be an integer class: got 'yes'");
  expect_error([&] { parse_molecule_csv(csv, "smiles", "label", "toy.csv"); }, ErrorCode::kInvalidArgument,
               "no column 'label'");
}

TEST(Smiles, VendoredBbbpParsesCompletely) {
  const std::vector<uint8_t> bytes =
      read_file_bytes(std::string(INDUCTIVE_TEST_DATA) + "/../../data/molecules/bbbp.csv");
  const MoleculeDataset m = parse_molecule_csv(std::string(bytes.begin(), bytes.end()), "smiles", "p_np", "bbbp.csv");
  EXPECT_EQ(m.dataset.n_graphs(), 2039);
  EXPECT_EQ(m.n_skipped, 0);
  int positive = 0;
  for (const Graph& g : m.dataset.graphs) positive += g.label;
  EXPECT_EQ(positive, 1560);  // SOURCE.md: 1560 positive / 479 negative
}

TEST(Smiles, ElementChargeTypingAddsTheFormalCharge) {
  // Glycine zwitterion: [NH3+] and [O-] are their own atom types; neutral atoms stay plain symbols.
  const Molecule m = parse_smiles("[NH3+]CC(=O)[O-]");
  std::vector<std::string> by_element, by_charge;
  for (int i = 0; i < m.n_atoms(); ++i) {
    by_element.push_back(atom_type(m, i, AtomTyping::kElement));
    by_charge.push_back(atom_type(m, i, AtomTyping::kElementCharge));
  }
  EXPECT_EQ(by_element, (std::vector<std::string>{"N", "C", "C", "O", "O"}));
  EXPECT_EQ(by_charge, (std::vector<std::string>{"N+", "C", "C", "O", "O-"}));
  // Charges beyond one carry their magnitude after the sign.
  EXPECT_EQ(atom_type(parse_smiles("[Fe+2]"), 0, AtomTyping::kElementCharge), "Fe+2");
  EXPECT_EQ(atom_type(parse_smiles("[S--]"), 0, AtomTyping::kElementCharge), "S-2");
  EXPECT_EQ(atom_type(parse_smiles("c1cc[nH+]cc1"), 3, AtomTyping::kElementCharge), "N+");
  EXPECT_EQ(parse_atom_typing("element"), AtomTyping::kElement);
  EXPECT_EQ(parse_atom_typing("element-charge"), AtomTyping::kElementCharge);
  EXPECT_STREQ(atom_typing_name(AtomTyping::kElementCharge), "element-charge");
  expect_error([] { parse_atom_typing("charge"); }, ErrorCode::kInvalidArgument,
               "atom typing must be element or element-charge: got 'charge'");
  // The graph: labels index the vocabulary by type; a type it lacks is named as a type.
  const std::vector<std::string> vocab = {"C", "N+", "O", "O-"};
  EXPECT_EQ(molecule_graph(m, vocab, -1, AtomTyping::kElementCharge).node_labels,
            (std::vector<int32_t>{1, 0, 0, 2, 3}));
  expect_error([&] { molecule_graph(parse_smiles("CC[N-]"), vocab, -1, AtomTyping::kElementCharge); },
               ErrorCode::kInvalidArgument,
               "atom 3 is N-, which the model does not know (its atom types: C, N+, O, O-)");
  // Element typing (the default) is unchanged: the charged nitrogen is an "N".
  expect_error([&] { molecule_graph(m, vocab); }, ErrorCode::kInvalidArgument, "atom 1 is N,");
}

TEST(Smiles, RegressionCsvReadsRealTargets) {
  const std::string csv =
      "id,smiles,y\n"
      "a,CC[NH3+],-1.25\n"
      "b,CCO,\n"  // empty target: skipped and counted
      "c,\"OC(=O)[O-]\",3e-1\n"
      "d,c1ccccc1,  2\n";  // leading blanks are part of a number (strtod), like the other readers
  const MoleculeDataset m =
      parse_molecule_regression_csv(csv, "smiles", "y", "toy.csv", {}, AtomTyping::kElementCharge);
  EXPECT_EQ(m.dataset.n_graphs(), 3);
  EXPECT_EQ(m.n_skipped, 1);
  EXPECT_EQ(m.targets, (std::vector<float>{-1.25f, 0.3f, 2.0f}));
  EXPECT_EQ(m.smiles, (std::vector<std::string>{"CC[NH3+]", "OC(=O)[O-]", "c1ccccc1"}));
  EXPECT_EQ(m.atom_types, (std::vector<std::string>{"C", "N+", "O", "O-"}));
  EXPECT_TRUE(m.dataset.class_values.empty());
  for (const Graph& g : m.dataset.graphs) EXPECT_EQ(g.label, -1);
  EXPECT_EQ(m.dataset.graphs[0].node_labels, (std::vector<int32_t>{0, 0, 1}));
  EXPECT_EQ(m.dataset.n_node_labels(), 4);
  // Element typing gives the plain symbols.
  EXPECT_EQ(parse_molecule_regression_csv(csv, "smiles", "y", "toy.csv").atom_types,
            (std::vector<std::string>{"C", "N", "O"}));
  // A target that is not a finite number names the file, the line, the column and the cell.
  for (const char* bad : {"abc", "nan", "NaN", "inf", "-Infinity", "1.5x", "1e999", "0x"}) {
    expect_error(
        [&] {
          parse_molecule_regression_csv(std::string("smiles,y\nCC,1\nCO,") + bad + "\n", "smiles", "y", "bad.csv");
        },
        ErrorCode::kInvalidArgument,
        std::string("bad.csv: line 3: target 'y' must be a finite number: got '") + bad + "'");
  }
  expect_error([&] { parse_molecule_regression_csv(csv, "smiles", "logP", "toy.csv"); }, ErrorCode::kInvalidArgument,
               "toy.csv: no column 'logP' in the header (its columns: id, smiles, y)");
  expect_error([&] { parse_molecule_regression_csv("smiles,y\nCC,\n", "smiles", "y", "empty.csv"); },
               ErrorCode::kInvalidArgument, "empty.csv: no molecule with a 'y' value");
  expect_error([&] { parse_molecule_regression_csv("smiles,y\nC1CC,1\n", "smiles", "y", "bad.csv"); },
               ErrorCode::kInvalidArgument, "bad.csv: line 2: smiles: ring bond 1");
  // A fixed vocabulary (a model's) names the atom type it lacks, with the line.
  expect_error(
      [&] {
        parse_molecule_regression_csv(csv, "smiles", "y", "toy.csv", {"C", "O"}, AtomTyping::kElementCharge);
      },
      ErrorCode::kInvalidArgument, "toy.csv: line 2: molecule: atom 3 is N+");
}

TEST(Smiles, VendoredZincParsesWithChargedAtomTypes) {
  const std::vector<uint8_t> bytes =
      read_file_bytes(std::string(INDUCTIVE_TEST_DATA) + "/../../data/zinc-partial/zinc12k_val_reconstructed.csv");
  const MoleculeDataset m =
      parse_molecule_regression_csv(std::string(bytes.begin(), bytes.end()), "smiles", "penalized_logP_normalized",
                                    "zinc-val", {}, AtomTyping::kElementCharge);
  EXPECT_EQ(m.dataset.n_graphs(), 1000);
  EXPECT_EQ(m.n_skipped, 0);
  // data/zinc-partial/SOURCE.md: the types RDKit gives these molecules (sorted).
  EXPECT_EQ(m.atom_types, (std::vector<std::string>{"Br", "C", "Cl", "F", "I", "N", "N+", "N-", "O", "O-", "S", "S-"}));
  EXPECT_FLOAT_EQ(m.targets[0], 0.631514f);  // first row of the file
  int64_t atoms = 0;
  for (const Graph& g : m.dataset.graphs) atoms += g.n_nodes;
  EXPECT_EQ(atoms, 23083);  // the heavy atoms RDKit counts in these molecules (mean 23.08, SOURCE.md)
}

}  // namespace
}  // namespace inductive
