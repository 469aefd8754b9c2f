// Labelled random DNA with planted motifs: the supervised OTKE tests' data (a motif is what a k-mer model must find
// anywhere, or in a window, of a sequence).
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace inductive::testing {

struct Motif {
  std::string text;
  int from = 0;    // first possible start
  int window = 0;  // starts in [from, from + window); 0: anywhere the motif fits
};

struct MotifSets {
  std::vector<std::string> seqs;
  std::vector<int32_t> labels;  // sequence s: s mod 2^motifs; bit m set = motif m planted
};

// `count` sequences of min_len + (draw mod spread) random letters; sequence s gets label bits s mod 2^|motifs| and
// every motif whose bit is set, at a random start.
inline MotifSets motif_sets(int count, uint32_t seed, int min_len, int spread, const std::vector<Motif>& motifs) {
  std::mt19937 rng(seed);
  MotifSets d;
  for (int s = 0; s < count; ++s) {
    const int len = min_len + static_cast<int>(rng() % spread);
    std::string seq;
    for (int i = 0; i < len; ++i) seq.push_back("ACGT"[rng() % 4]);
    const int32_t bits = s % (1 << motifs.size());
    for (size_t m = 0; m < motifs.size(); ++m) {
      if (!((bits >> m) & 1)) continue;
      const Motif& mo = motifs[m];
      const int room = mo.window ? mo.window : len - static_cast<int>(mo.text.size()) - mo.from;
      seq.replace(mo.from + rng() % room, mo.text.size(), mo.text);
    }
    d.seqs.push_back(seq);
    d.labels.push_back(bits);
  }
  return d;
}

}  // namespace inductive::testing
