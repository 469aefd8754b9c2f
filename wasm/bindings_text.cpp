// Embind bindings of the core's text readers (inductive/fasta.h, inductive/text_samples.h): the FASTA and the
// labelled TSV / GLUE tables `inductive otke fit|train|embed` read, so that the browser parses sequences as the CLI
// does instead of with a parser of its own. Translation only: a string in (the TS layer decodes bytes, gzip
// included), JSON out ("" on failure; guarded.h).
#include <emscripten/bind.h>

#include <string>

#include <nlohmann/json.hpp>

#include "guarded.h"
#include "inductive/error.h"
#include "inductive/fasta.h"
#include "inductive/text_samples.h"

namespace {

using inductive::wasm::guarded;
using nlohmann::json;

// {"names": [...], "sequences": [...]}: the records in file order.
std::string parse_fasta_json(const std::string& text, const std::string& what) {
  std::string out;
  guarded([&] {
    json names = json::array(), sequences = json::array();
    for (inductive::FastaRecord& r : inductive::parse_fasta(text, what)) {
      names.push_back(std::move(r.name));
      sequences.push_back(std::move(r.sequence));
    }
    out = json{{"names", names}, {"sequences", sequences}}.dump();
  });
  return out;
}

// {"samples", "names", "labels", "classNames"}: `format` "labelled-sequences" (label<TAB>sequence lines) or "glue"
// (a header naming 'sentence' and, when `labelled`, 'label').
std::string parse_text_samples_json(const std::string& text, const std::string& format, const std::string& what,
                                    bool labelled) {
  std::string out;
  guarded([&] {
    inductive::TextSamples s;
    if (format == "labelled-sequences")
      s = inductive::parse_labelled_sequences_tsv(text, what);
    else if (format == "glue")
      s = inductive::parse_glue_tsv(text, what, labelled);
    else
      INDUCTIVE_FAIL(inductive::ErrorCode::kInvalidArgument,
                     "parseTextSamples: format must be 'labelled-sequences' or 'glue': got '", format, "'");
    out = json{{"samples", s.samples}, {"names", s.names}, {"labels", s.labels}, {"classNames", s.class_names}}.dump();
  });
  return out;
}

}  // namespace

EMSCRIPTEN_BINDINGS(inductive_text) {
  emscripten::function("parseFasta", &parse_fasta_json);
  emscripten::function("parseTextSamples", &parse_text_samples_json);
}
