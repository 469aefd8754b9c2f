// core/src/chem/smiles.cpp - see inductive/smiles.h.
#include "inductive/smiles.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "inductive/error.h"

namespace inductive {
namespace {

// Elements a bracket atom may name (periodic table up to Og).
const std::set<std::string>& elements() {
  static const std::set<std::string> e = {
      "H",  "He", "Li", "Be", "B",  "C",  "N",  "O",  "F",  "Ne", "Na", "Mg", "Al", "Si", "P",  "S",  "Cl",
      "Ar", "K",  "Ca", "Sc", "Ti", "V",  "Cr", "Mn", "Fe", "Co", "Ni", "Cu", "Zn", "Ga", "Ge", "As", "Se",
      "Br", "Kr", "Rb", "Sr", "Y",  "Zr", "Nb", "Mo", "Tc", "Ru", "Rh", "Pd", "Ag", "Cd", "In", "Sn", "Sb",
      "Te", "I",  "Xe", "Cs", "Ba", "La", "Ce", "Pr", "Nd", "Pm", "Sm", "Eu", "Gd", "Tb", "Dy", "Ho", "Er",
      "Tm", "Yb", "Lu", "Hf", "Ta", "W",  "Re", "Os", "Ir", "Pt", "Au", "Hg", "Tl", "Pb", "Bi", "Po", "At",
      "Rn", "Fr", "Ra", "Ac", "Th", "Pa", "U",  "Np", "Pu", "Am", "Cm", "Bk", "Cf", "Es", "Fm", "Md", "No",
      "Lr", "Rf", "Db", "Sg", "Bh", "Hs", "Mt", "Ds", "Rg", "Cn", "Nh", "Fl", "Mc", "Lv", "Ts", "Og"};
  return e;
}

// The bonds read so far, as keys (u << 32) | v with u < v, in one open-addressing table: a std::unordered_set
// allocated a node per bond. With it and with vectors grown one push_back at a time, a parse made about 65 of the
// ~92 allocations per molecule of the demo's benchmark (12 now). In the threaded wasm module every allocation also
// takes emscripten's one malloc lock, which threads preparing molecules share.
class BondSet {
 public:
  explicit BondSet(size_t expected) {
    size_t capacity = 16;
    while (capacity < 2 * expected) capacity *= 2;
    slots_.assign(capacity, kEmpty);
  }
  // False when `key` was already there.
  bool insert(uint64_t key) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    if (!place(slots_, key)) return false;
    ++size_;
    return true;
  }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};  // no bond has it: u < v < 2^31
  static bool place(std::vector<uint64_t>& slots, uint64_t key) {
    const size_t mask = slots.size() - 1;
    // Fibonacci hashing spreads the consecutive keys of a chain over the table.
    for (size_t i = static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> 20) & mask;; i = (i + 1) & mask) {
      if (slots[i] == key) return false;
      if (slots[i] == kEmpty) {
        slots[i] = key;
        return true;
      }
    }
  }
  void grow() {
    std::vector<uint64_t> bigger(2 * slots_.size(), kEmpty);
    for (const uint64_t key : slots_)
      if (key != kEmpty) place(bigger, key);
    slots_.swap(bigger);
  }
  std::vector<uint64_t> slots_;
  size_t size_ = 0;
};

// What a parse reserves up front: one atom and one bond per character at most, capped so that a long string does
// not reserve its bound (the vectors grow past the cap as usual).
inline size_t reserve_for(const std::string& s) { return std::min<size_t>(s.size(), 4096); }

struct Atom {
  std::string symbol;
  bool aromatic = false;
  int charge = 0;
  bool isotope = false;
};

class Parser {
 public:
  explicit Parser(const std::string& s) : s_(s), bond_set_(reserve_for(s)) {
    const size_t reserve = reserve_for(s);
    atoms_.reserve(reserve);
    bonds_.reserve(reserve);
    orders_.reserve(reserve);
    directional_.reserve(reserve);
  }

  Molecule run() {
    INDUCTIVE_CHECK(!s_.empty(), ErrorCode::kInvalidArgument, "smiles: empty string");
    int prev = -1;          // atom the next atom bonds to (-1: none, after '.' or at the start)
    int pending_order = 0;  // bond symbol read since the last atom (0: none)
    std::vector<int> branch_stack;
    branch_stack.reserve(16);
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '(') {
        INDUCTIVE_CHECK(prev >= 0 && pending_order == 0 && !branch_opened_, ErrorCode::kInvalidArgument, where(),
                        "branch '(' ",
                        prev < 0         ? "with no atom before it"
                        : branch_opened_ ? "right after '(' (a branch starts with an atom or a bond)"
                                         : "after a bond symbol");
        branch_stack.push_back(prev);
        branch_opened_ = true;
        ++i_;
      } else if (c == ')') {
        INDUCTIVE_CHECK(!branch_stack.empty(), ErrorCode::kInvalidArgument, where(), "')' closes no branch");
        INDUCTIVE_CHECK(pending_order == 0, ErrorCode::kInvalidArgument, where(), "bond symbol before ')'");
        INDUCTIVE_CHECK(!branch_opened_, ErrorCode::kInvalidArgument, where(), "empty branch '()'");
        prev = branch_stack.back();
        branch_stack.pop_back();
        ++i_;
      } else if (c == '.') {
        INDUCTIVE_CHECK(pending_order == 0, ErrorCode::kInvalidArgument, where(), "bond symbol before '.'");
        // '.' separates two fragments: an atom on each side, as RDKit requires ("C.", ".C", "C..C", "C(.C)").
        INDUCTIVE_CHECK(prev >= 0 && !branch_opened_, ErrorCode::kInvalidArgument, where(),
                        "'.' with no atom before it");
        INDUCTIVE_CHECK(i_ + 1 < s_.size() && s_[i_ + 1] != '.' && s_[i_ + 1] != '(' && s_[i_ + 1] != ')',
                        ErrorCode::kInvalidArgument, where(), "'.' must be followed by an atom");
        prev = -1;
        ++i_;
      } else if (bond_order(c) != 0 || c == '<') {
        // A repeated backslash ("\\\\", as some MoleculeNet records have) is one bond, as RDKit reads it (RDKit
        // refuses "//").
        if (pending_directional_ && c == '\\' && s_[i_ - 1] == c) {
          ++i_;
          continue;
        }
        INDUCTIVE_CHECK(pending_order == 0, ErrorCode::kInvalidArgument, where(), "two bond symbols in a row");
        INDUCTIVE_CHECK(prev >= 0, ErrorCode::kInvalidArgument, where(), "bond symbol '", c,
                        "' with no atom before it");
        // Dative bonds "->" and "<-" (RDKit writes them for metal complexes): a single bond in a graph.
        const bool dative = (c == '-' && i_ + 1 < s_.size() && s_[i_ + 1] == '>') || c == '<';
        INDUCTIVE_CHECK(c != '<' || (i_ + 1 < s_.size() && s_[i_ + 1] == '-'), ErrorCode::kInvalidArgument, where(),
                        "'<' must start a dative bond '<-'");
        pending_directional_ = c == '/' || c == '\\';
        pending_order = dative ? 1 : bond_order(c);
        i_ += dative ? 2 : 1;
      } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '%') {
        INDUCTIVE_CHECK(prev >= 0, ErrorCode::kInvalidArgument, where(), "ring closure with no atom before it");
        INDUCTIVE_CHECK(!branch_opened_, ErrorCode::kInvalidArgument, where(),
                        "ring closure at the start of a branch (it must follow an atom)");
        ring_closure(prev, pending_order);
        pending_order = 0;
        pending_directional_ = false;
      } else {
        const size_t at = i_;
        const int atom = read_atom();
        if (prev >= 0) add_bond(prev, atom, pending_order, at);
        pending_order = 0;
        pending_directional_ = false;
        branch_opened_ = false;
        prev = atom;
      }
    }
    INDUCTIVE_CHECK(pending_order == 0, ErrorCode::kInvalidArgument, "smiles: the string ends with a bond symbol");
    INDUCTIVE_CHECK(branch_stack.empty(), ErrorCode::kInvalidArgument, "smiles: ", branch_stack.size(),
                    " branch(es) '(' not closed");
    if (!rings_.empty()) {
      INDUCTIVE_FAIL(ErrorCode::kInvalidArgument, "smiles: ring bond ", rings_.begin()->first, " opened at position ",
                     rings_.begin()->second.position + 1, " is never closed");
    }
    // "." alone (or only dots) is no molecule: found by smiles_fuzz, refused like the empty string.
    INDUCTIVE_CHECK(!atoms_.empty(), ErrorCode::kInvalidArgument, "smiles: no atom in the string");
    return finish();
  }

 private:
  static int bond_order(char c) {
    switch (c) {
      case '-':
      case '/':
      case '\\':
        return 1;
      case '=':
        return 2;
      case '#':
        return 3;
      case '$':
        return 4;
      case ':':
        return 5;
      default:
        return 0;
    }
  }

  std::string where() const { return "smiles: position " + std::to_string(i_ + 1) + ": "; }

  int read_atom() {
    Atom a;
    const char c = s_[i_];
    if (c == '[') {
      read_bracket(a);
    } else if (c == '*') {
      a.symbol = "*";
      ++i_;
    } else {
      // Organic subset: B C N O P S F Cl Br I, aromatic b c n o p s.
      static const char* two[] = {"Cl", "Br"};
      bool done = false;
      for (const char* t : two) {
        // One symbol per atom: without the break, "ClBr" read as one bromine (differential fuzzing vs RDKit).
        if (s_.compare(i_, 2, t) == 0) {
          a.symbol = t;
          i_ += 2;
          done = true;
          break;
        }
      }
      if (!done) {
        // One character assigned in place (no temporary strings: in the threaded wasm module each library call
        // under a live destructor goes out to a JavaScript exception trampoline and back).
        if (c == 'B' || c == 'C' || c == 'N' || c == 'O' || c == 'P' || c == 'S' || c == 'F' || c == 'I') {
          a.symbol.assign(1, c);
        } else if (c == 'b' || c == 'c' || c == 'n' || c == 'o' || c == 'p' || c == 's') {
          a.symbol.assign(1, static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
          a.aromatic = true;
        } else {
          INDUCTIVE_FAIL(ErrorCode::kInvalidArgument, where(), "not an atom, bond, branch or ring closure: got '", c,
                         "'", c == 'H' ? " (hydrogens go in brackets: [H])" : "");
        }
        ++i_;
      }
    }
    atoms_.push_back(a);
    return static_cast<int>(atoms_.size()) - 1;
  }

  // Digits at i_ (none: 0), saturated at 10^6; a leading zero is refused as RDKit refuses it ("01").
  int read_number(size_t end, const char* what) {
    const size_t start = i_;
    int value = 0;
    while (i_ < end && std::isdigit(static_cast<unsigned char>(s_[i_])))
      value = std::min(1000000, value * 10 + (s_[i_++] - '0'));
    INDUCTIVE_CHECK(i_ - start < 2 || s_[start] != '0', ErrorCode::kInvalidArgument, where(), what,
                    " with a leading zero: got '", s_.substr(start, i_ - start), "'");
    return value;
  }

  // [isotope? symbol chirality? hcount? charge? class?]
  void read_bracket(Atom& a) {
    const size_t open = i_;
    const size_t close = s_.find(']', i_);
    INDUCTIVE_CHECK(close != std::string::npos, ErrorCode::kInvalidArgument, where(), "'[' is never closed");
    ++i_;
    const size_t isotope_start = i_;
    read_number(close, "isotope");
    a.isotope = i_ > isotope_start;
    INDUCTIVE_CHECK(i_ < close, ErrorCode::kInvalidArgument, where(), "bracket atom with no element");
    if (s_[i_] == '*') {
      a.symbol = "*";
      ++i_;
    } else if (std::islower(static_cast<unsigned char>(s_[i_]))) {
      // Aromatic: se, as, te first (two letters), then b c n o p s.
      static const char* aro[] = {"se", "as", "te", "si", "b", "c", "n", "o", "p", "s"};
      for (const char* t : aro) {
        const size_t len = std::char_traits<char>::length(t);
        if (s_.compare(i_, len, t) == 0 && i_ + len <= close) {
          a.symbol = t;
          a.symbol[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(a.symbol[0])));
          a.aromatic = true;
          i_ += len;
          break;
        }
      }
      INDUCTIVE_CHECK(a.aromatic, ErrorCode::kInvalidArgument, where(), "unknown aromatic element: got '",
                      s_.substr(i_, close - i_), "'");
    } else {
      std::string sym(1, s_[i_]);
      // Two-letter elements win over one letter + something else ([Cl] vs [C]...; [Sc] is scandium).
      if (i_ + 1 < close && std::islower(static_cast<unsigned char>(s_[i_ + 1])) &&
          elements().count(sym + s_[i_ + 1]) != 0) {
        sym += s_[i_ + 1];
      }
      INDUCTIVE_CHECK(elements().count(sym) != 0, ErrorCode::kInvalidArgument, where(), "unknown element: got '", sym,
                      "'");
      a.symbol = sym;
      i_ += sym.size();
    }
    // Chirality: @, @@, or @ and a class with an optional number: TH and AL up to 2, SP up to 3, TB up to 20, OH
    // up to 30 (RDKit's limits, checked by tests/oracle/smiles_differential.py).
    if (i_ < close && s_[i_] == '@') {
      INDUCTIVE_CHECK(a.symbol != "H", ErrorCode::kInvalidArgument, where(), "a hydrogen atom cannot be chiral");
      ++i_;
      if (i_ < close && s_[i_] == '@') {
        ++i_;
      } else if (i_ + 1 < close) {
        static const std::pair<const char*, int> classes[] = {{"TH", 2}, {"AL", 2}, {"SP", 3}, {"TB", 20}, {"OH", 30}};
        for (const auto& [name, most] : classes) {
          if (s_.compare(i_, 2, name) != 0) continue;
          i_ += 2;
          const int number = read_number(close, "chirality class number");
          INDUCTIVE_CHECK(number <= most, ErrorCode::kInvalidArgument, where(), "chirality class @", name,
                          " goes up to ", most, ": got ", number);
          break;
        }
      }
    }
    if (i_ < close && s_[i_] == 'H') {
      ++i_;
      while (i_ < close && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    }
    if (i_ < close && (s_[i_] == '+' || s_[i_] == '-')) {
      const char sign = s_[i_];
      int value = 0;
      ++i_;
      if (i_ < close && std::isdigit(static_cast<unsigned char>(s_[i_]))) {
        // Saturated at 100: more digits cannot overflow an int (found by smiles_fuzz: "[C+5555...]").
        while (i_ < close && std::isdigit(static_cast<unsigned char>(s_[i_])))
          value = std::min(100, value * 10 + (s_[i_++] - '0'));
      } else {
        value = 1;
        while (i_ < close && s_[i_] == sign) ++value, ++i_;
        // "++" and "--" are allowed (OpenSMILES' deprecated form); RDKit refuses more, and so do we.
        INDUCTIVE_CHECK(value <= 2, ErrorCode::kInvalidArgument, where(), "write the charge as ", sign, value, ", not ",
                        std::string(value, sign));
      }
      INDUCTIVE_CHECK(value <= 15, ErrorCode::kInvalidArgument, where(), "charge out of range: got ",
                      value == 100 ? "100 or more" : std::to_string(value), " (at most 15)");
      a.charge = sign == '+' ? value : -value;
    }
    if (i_ < close && s_[i_] == ':') {
      ++i_;
      INDUCTIVE_CHECK(i_ < close && std::isdigit(static_cast<unsigned char>(s_[i_])), ErrorCode::kInvalidArgument,
                      where(), "atom class ':' without a number");
      read_number(close, "atom class");
    }
    INDUCTIVE_CHECK(i_ == close, ErrorCode::kInvalidArgument, where(), "unexpected text in bracket atom '",
                    s_.substr(open, close - open + 1), "': got '", s_.substr(i_, close - i_), "'");
    i_ = close + 1;
  }

  struct OpenRing {
    int atom;
    int order;
    size_t position;
    bool directional;
  };

  void ring_closure(int atom, int order) {
    const size_t at = i_;
    int label = 0;
    if (s_[i_] == '%') {
      ++i_;
      // %nn (two digits) or RDKit's %(nnn).
      if (i_ < s_.size() && s_[i_] == '(') {
        const size_t end = s_.find(')', i_);
        INDUCTIVE_CHECK(end != std::string::npos && end > i_ + 1, ErrorCode::kInvalidArgument, where(),
                        "bad ring label after '%('");
        for (size_t k = i_ + 1; k < end; ++k) {
          INDUCTIVE_CHECK(std::isdigit(static_cast<unsigned char>(s_[k])) && label < 100000,
                          ErrorCode::kInvalidArgument, where(), "bad ring label after '%('");
          label = label * 10 + (s_[k] - '0');
        }
        i_ = end + 1;
      } else {
        INDUCTIVE_CHECK(i_ + 1 < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_])) &&
                            std::isdigit(static_cast<unsigned char>(s_[i_ + 1])),
                        ErrorCode::kInvalidArgument, where(), "'%' must be followed by two digits");
        label = (s_[i_] - '0') * 10 + (s_[i_ + 1] - '0');
        i_ += 2;
      }
    } else {
      label = s_[i_] - '0';
      ++i_;
    }
    auto it = rings_.find(label);
    if (it == rings_.end()) {
      rings_[label] = OpenRing{atom, order, at, pending_directional_};
      return;
    }
    const OpenRing open = it->second;
    rings_.erase(it);
    INDUCTIVE_CHECK(open.order == 0 || order == 0 || open.order == order, ErrorCode::kInvalidArgument,
                    "smiles: position ", at + 1, ": ring bond ", label, " has two different bond symbols");
    pending_directional_ = pending_directional_ || open.directional;
    add_bond(open.atom, atom, open.order != 0 ? open.order : order, at);
  }

  void add_bond(int u, int v, int order, size_t at) {
    INDUCTIVE_CHECK(u != v, ErrorCode::kInvalidArgument, "smiles: position ", at + 1, ": an atom bonded to itself");
    const std::array<int32_t, 2> e{std::min(u, v), std::max(u, v)};
    // A hash set, not a scan of the bonds: the scan made long chains quadratic (200,000 atoms took minutes).
    // Every bond goes in, not only ring closures: "C1C1" closes a ring over the chain bond it repeats.
    const uint64_t key = (static_cast<uint64_t>(e[0]) << 32) | static_cast<uint32_t>(e[1]);
    INDUCTIVE_CHECK(bond_set_.insert(key), ErrorCode::kInvalidArgument, "smiles: position ", at + 1, ": atoms ",
                    e[0] + 1, " and ", e[1] + 1, " are bonded twice");
    // Unwritten, '/' or '\\' between two aromatic atoms: aromatic (RDKit reads directional bonds so too).
    if (order == 0 || (order == 1 && pending_directional_)) order = atoms_[u].aromatic && atoms_[v].aromatic ? 5 : 1;
    bonds_.push_back(e);
    orders_.push_back(static_cast<uint8_t>(order));
    directional_.push_back(pending_directional_ ? 1 : 0);
  }

  // Drops explicit hydrogens the way RDKit's RemoveHs does by default, renumbering the other atoms.
  Molecule finish() {
    const int n = static_cast<int>(atoms_.size());
    // degree, then the new index of each atom (-1: dropped), in one buffer.
    std::vector<int> scratch(2 * static_cast<size_t>(n), 0);
    int* degree = scratch.data();
    int* index = degree + n;
    for (const auto& e : bonds_) ++degree[e[0]], ++degree[e[1]];
    std::fill(index, index + n, 0);
    for (size_t k = 0; k < bonds_.size(); ++k) {
      for (int side = 0; side < 2; ++side) {
        const int h = bonds_[k][side], other = bonds_[k][1 - side];
        const Atom& a = atoms_[h];
        // Charged hydrogens and any bond order go too, as in RDKit. A hydrogen on a '/' or '\\' bond defines
        // double-bond stereo; RDKit keeps it, so do we.
        // A hydrogen on a dummy atom '*' stays, as in RDKit.
        if (a.symbol == "H" && !a.isotope && degree[h] == 1 && atoms_[other].symbol != "H" &&
            atoms_[other].symbol != "*" && !directional_[k]) {
          index[h] = -1;
        }
      }
    }
    Molecule m;
    m.symbols.reserve(n);
    m.aromatic.reserve(n);
    m.charges.reserve(n);
    m.bonds.reserve(bonds_.size());
    m.bond_orders.reserve(bonds_.size());
    for (int i = 0; i < n; ++i) {
      if (index[i] < 0) continue;
      index[i] = m.n_atoms();
      m.symbols.push_back(atoms_[i].symbol);
      m.aromatic.push_back(atoms_[i].aromatic ? 1 : 0);
      m.charges.push_back(static_cast<int8_t>(atoms_[i].charge));
    }
    for (size_t k = 0; k < bonds_.size(); ++k) {
      const int u = index[bonds_[k][0]], v = index[bonds_[k][1]];
      if (u < 0 || v < 0) continue;
      m.bonds.push_back({std::min(u, v), std::max(u, v)});
      m.bond_orders.push_back(orders_[k]);
    }
    return m;
  }

  const std::string& s_;
  size_t i_ = 0;
  std::vector<Atom> atoms_;
  std::vector<std::array<int32_t, 2>> bonds_;
  BondSet bond_set_;
  std::vector<uint8_t> orders_;
  std::vector<uint8_t> directional_;  // per bond: written with '/' or '\\'
  bool pending_directional_ = false;
  bool branch_opened_ = false;  // '(' read and no atom since
  std::map<int, OpenRing> rings_;
};

}  // namespace

Molecule parse_smiles(const std::string& smiles) { return Parser(smiles).run(); }

std::string atom_type(const Molecule& molecule, int i, AtomTyping typing) {
  const std::string& symbol = molecule.symbols[static_cast<size_t>(i)];
  const int charge = molecule.charges[static_cast<size_t>(i)];
  if (typing == AtomTyping::kElement || charge == 0) return symbol;
  // "+" / "-" for a unit charge (the common case: [NH+], [O-]), the sign then the magnitude otherwise.
  std::string type = symbol + (charge > 0 ? "+" : "-");
  if (std::abs(charge) > 1) type += std::to_string(std::abs(charge));
  return type;
}

Graph molecule_graph(const Molecule& molecule, const std::vector<std::string>& vocabulary, int unknown_label,
                     AtomTyping typing) {
  std::vector<int32_t> labels(static_cast<size_t>(molecule.n_atoms()));
  for (int i = 0; i < molecule.n_atoms(); ++i) {
    // An uncharged atom's type is its symbol: looked up as it is, without a copy.
    const bool plain = typing == AtomTyping::kElement || molecule.charges[static_cast<size_t>(i)] == 0;
    const std::string charged = plain ? std::string() : atom_type(molecule, i, typing);
    const std::string& type = plain ? molecule.symbols[static_cast<size_t>(i)] : charged;
    const auto it = std::find(vocabulary.begin(), vocabulary.end(), type);
    if (it != vocabulary.end()) {
      labels[i] = static_cast<int32_t>(it - vocabulary.begin());
      continue;
    }
    if (unknown_label < 0) {
      std::string known;
      for (const auto& v : vocabulary) known += (known.empty() ? "" : ", ") + v;
      INDUCTIVE_FAIL(ErrorCode::kInvalidArgument, "molecule: atom ", i + 1, " is ", type,
                     ", which the model does not know (its atom types: ", known, ")");
    }
    labels[i] = unknown_label;
  }
  return Graph::from_edges(molecule.n_atoms(), molecule.bonds, std::move(labels));
}

}  // namespace inductive
