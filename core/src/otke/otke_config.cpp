// OTKE config <-> JSON, strict (see inductive/otke.h).
#include <cmath>
#include <set>

#include "inductive/otke.h"
#include "io/json_section.h"

namespace inductive {

namespace {

using nlohmann::json;
using Section = JsonSection;

// Every section is read strictly (unknown keys are errors): see io/json_section.h.
Section section(const json& j, const char* key) { return Section(JsonSection::of(j, key), "otke config", key); }

}  // namespace

int OtkeConfig::feature_dim() const {
  return input_type == OtkeInput::kSequence ? kmer * Alphabet::from_name(alphabet).size() : input_dim;
}
int OtkeConfig::input_width() const { return input_type == OtkeInput::kTokens ? 1 : feature_dim(); }
int OtkeConfig::embed_dim() const {
  return embedding == OtkeEmbedding::kNystrom ? anchors : embedding == OtkeEmbedding::kConv ? filters : feature_dim();
}
int OtkeConfig::output_dim() const { return pooling == OtkePooling::kOtk ? otk.q * otk.p * embed_dim() : embed_dim(); }
int OtkeConfig::head_dim() const { return hidden > 0 ? hidden : output_dim(); }

void OtkeConfig::validate() const {
  if (input_type == OtkeInput::kSequence) {
    Alphabet::from_name(alphabet);
    INDUCTIVE_CHECK(kmer >= 1 && kmer <= 64, ErrorCode::kInvalidArgument, "otke config: input.k must be in 1..64: got ",
                    kmer);
  } else if (input_type == OtkeInput::kTokens) {
    INDUCTIVE_CHECK(input_dim >= 1 && input_dim <= 65536, ErrorCode::kInvalidArgument,
                    "otke config: input.dim must be in 1..65536: got ", input_dim);
    INDUCTIVE_CHECK(tokens.size() >= 2 && tokens.size() <= (1u << 20), ErrorCode::kInvalidArgument,
                    "otke config: input.tokens must hold 2..2^20 entries (<unk> and the vocabulary): got ",
                    tokens.size());
    try {
      Vocabulary(tokens, lowercase);
    } catch (const Error& e) {
      throw Error(ErrorCode::kInvalidArgument, std::string("otke config: input.tokens: ") + e.what());
    }
  } else {
    INDUCTIVE_CHECK(input_dim >= 1 && input_dim <= (1 << 20), ErrorCode::kInvalidArgument,
                    "otke config: input.dim must be in 1..2^20: got ", input_dim);
  }
  if (embedding == OtkeEmbedding::kConv)
    INDUCTIVE_CHECK(filters >= 1 && filters <= 65536, ErrorCode::kInvalidArgument,
                    "otke config: embedding.filters must be in 1..65536: got ", filters);
  if (embedding == OtkeEmbedding::kNystrom) {
    INDUCTIVE_CHECK(anchors >= 1 && anchors <= 65536, ErrorCode::kInvalidArgument,
                    "otke config: embedding.anchors must be in 1..65536: got ", anchors);
    nystrom.validate();
  }
  if (pooling == OtkePooling::kOtk) otk.validate();
  INDUCTIVE_CHECK(classes == 0 || (classes >= 2 && classes <= 100000), ErrorCode::kInvalidArgument,
                  "otke config: head.classes must be 0 (no head) or >= 2: got ", classes);
  INDUCTIVE_CHECK(labels.empty() || static_cast<int>(labels.size()) == classes, ErrorCode::kInvalidArgument,
                  "otke config: head.labels has ", labels.size(), " names for ", classes, " classes");
  INDUCTIVE_CHECK(hidden >= 0 && hidden <= 65536, ErrorCode::kInvalidArgument,
                  "otke config: head.hidden must be in 0..65536: got ", hidden);
  INDUCTIVE_CHECK(std::isfinite(dropout) && dropout >= 0 && dropout < 1, ErrorCode::kInvalidArgument,
                  "otke config: head.dropout must be in [0, 1): got ", dropout);
  INDUCTIVE_CHECK(dropout == 0 || hidden > 0, ErrorCode::kInvalidArgument,
                  "otke config: head.dropout belongs to the MLP head: set head.hidden > 0");
  INDUCTIVE_CHECK((hidden == 0 && !multilabel) || classes >= 2, ErrorCode::kInvalidArgument,
                  "otke config: head.hidden and head.multilabel need a head (head.classes >= 2)");
  INDUCTIVE_CHECK(!multilabel || classes <= kMaxMultilabels, ErrorCode::kInvalidArgument,
                  "otke config: a multilabel head has at most ", kMaxMultilabels, " labels: got ", classes);
  INDUCTIVE_CHECK(static_cast<int64_t>(otk.q) * otk.p * embed_dim() < (int64_t{1} << 31), ErrorCode::kInvalidArgument,
                  "otke config: embedding dimension q p K is too large");
}

nlohmann::json OtkeConfig::to_json() const {
  json j;
  j["input"] = input_type == OtkeInput::kSequence
                   ? json{{"type", enum_name(kOtkeInputs, input_type)}, {"alphabet", alphabet}, {"k", kmer}}
               : input_type == OtkeInput::kTokens
                   ? json{{"type", enum_name(kOtkeInputs, input_type)},
                          {"vocab", tokens.size()},
                          {"dim", input_dim},
                          {"lowercase", lowercase},
                          {"tokens", tokens}}
                   : json{{"type", enum_name(kOtkeInputs, input_type)}, {"dim", input_dim}};
  j["embedding"] = embedding == OtkeEmbedding::kNystrom ? json{{"type", enum_name(kOtkeEmbeddings, embedding)},
                                                               {"anchors", anchors},
                                                               {"sigma", nystrom.sigma},
                                                               {"reg", nystrom.reg},
                                                               {"keep_norm", nystrom.keep_norm}}
                   : embedding == OtkeEmbedding::kConv
                       ? json{{"type", enum_name(kOtkeEmbeddings, embedding)}, {"filters", filters}}
                       : json{{"type", enum_name(kOtkeEmbeddings, embedding)}};
  j["pooling"] = json{{"type", enum_name(kOtkePoolings, pooling)}};
  if (pooling == OtkePooling::kOtk) {
    j["pooling"].update(json{{"p", otk.p},
                             {"q", otk.q},
                             {"eps", otk.eps},
                             {"iters", otk.iters},
                             {"sigma_pos", otk.sigma_pos},
                             {"scale", otk_scale_name(otk.scale)}});
    // The ablations' keys are written only when set, so a default model's file is byte for byte what it was before
    // they existed (and older readers still read it).
    if (otk.plan != OtkPlan::kSinkhorn) j["pooling"]["plan"] = enum_name(kOtkPlans, otk.plan);
    if (otk.sinusoidal) j["pooling"]["sinusoidal"] = true;
  }
  j["head"] = json{{"classes", classes}, {"labels", labels}};
  // As the ablations' keys: only when set, so that linear-head files are unchanged.
  if (hidden > 0) j["head"]["hidden"] = hidden;
  if (dropout > 0) j["head"]["dropout"] = dropout;
  if (multilabel) j["head"]["multilabel"] = true;
  return j;
}

OtkeConfig OtkeConfig::from_json(const nlohmann::json& j) {
  INDUCTIVE_CHECK(j.is_object(), ErrorCode::kInvalidArgument, "otke config: must be a JSON object");
  for (auto it = j.begin(); it != j.end(); ++it)
    INDUCTIVE_CHECK(it.key() == "input" || it.key() == "embedding" || it.key() == "pooling" || it.key() == "head",
                    ErrorCode::kInvalidArgument, "otke config: unknown section '", it.key(),
                    "' (expected input, embedding, pooling, head)");
  OtkeConfig c;
  {
    Section s = section(j, "input");
    c.input_type = parse_enum(kOtkeInputs, s.str("type", name_of(c.input_type)), "otke config: input.type");
    if (c.input_type == OtkeInput::kSequence) {
      c.alphabet = s.str("alphabet", c.alphabet);
      c.kmer = s.integer("k", c.kmer);
    } else if (c.input_type == OtkeInput::kTokens) {
      // "vocab" is redundant with the list; it is required and checked so that a truncated list is caught.
      const json& in = JsonSection::of(j, "input");
      INDUCTIVE_CHECK(in.contains("vocab") && in.contains("tokens") && in.contains("dim"), ErrorCode::kInvalidArgument,
                      "otke config: input of type tokens needs 'vocab', 'dim' and 'tokens'");
      const int vocab = s.integer("vocab", 0);
      c.input_dim = s.integer("dim", c.input_dim);
      c.lowercase = s.boolean("lowercase", c.lowercase);
      c.tokens = s.strings("tokens");
      INDUCTIVE_CHECK(vocab == static_cast<int64_t>(c.tokens.size()), ErrorCode::kInvalidArgument,
                      "otke config: input.vocab is ", vocab, " but input.tokens lists ", c.tokens.size(), " tokens");
    } else {
      c.input_dim = s.integer("dim", c.input_dim);
    }
    s.finish();
  }
  {
    Section s = section(j, "embedding");
    c.embedding = parse_enum(kOtkeEmbeddings, s.str("type", name_of(c.embedding)), "otke config: embedding.type");
    if (c.embedding == OtkeEmbedding::kConv) c.filters = s.integer("filters", c.filters);
    if (c.embedding == OtkeEmbedding::kNystrom) {
      c.anchors = s.integer("anchors", c.anchors);
      c.nystrom.sigma = s.number32("sigma", c.nystrom.sigma);
      c.nystrom.reg = s.number32("reg", c.nystrom.reg);
      c.nystrom.keep_norm = s.boolean("keep_norm", c.nystrom.keep_norm);
    }
    s.finish();
  }
  {
    Section s = section(j, "pooling");
    c.pooling = parse_enum(kOtkePoolings, s.str("type", name_of(c.pooling)), "otke config: pooling.type");
    if (c.pooling == OtkePooling::kOtk) {
      c.otk.p = s.integer("p", c.otk.p);
      c.otk.q = s.integer("q", c.otk.q);
      c.otk.eps = s.number("eps", c.otk.eps);
      c.otk.iters = s.integer("iters", c.otk.iters);
      c.otk.sigma_pos = s.number32("sigma_pos", c.otk.sigma_pos);
      c.otk.scale = parse_otk_scale(s.str("scale", otk_scale_name(c.otk.scale)));
      c.otk.plan = parse_enum(kOtkPlans, s.str("plan", name_of(c.otk.plan)), "otke config: pooling.plan");
      c.otk.sinusoidal = s.boolean("sinusoidal", c.otk.sinusoidal);
    }
    s.finish();
  }
  {
    Section s = section(j, "head");
    c.classes = s.integer("classes", c.classes);
    c.labels = s.strings("labels");
    c.hidden = s.integer("hidden", c.hidden);
    c.dropout = s.number32("dropout", c.dropout);
    c.multilabel = s.boolean("multilabel", c.multilabel);
    s.finish();
  }
  c.validate();
  return c;
}

}  // namespace inductive
