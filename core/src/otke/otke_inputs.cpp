// OTKE's inputs: reading, checks against a model, labels, the training split and chunked embedding (see
// inductive/otke_inputs.h).
#include "inductive/otke_inputs.h"

#include <algorithm>
#include <cstring>

#include "inductive/files.h"
#include "inductive/multilabel.h"
#include "inductive/npy.h"
#include "inductive/otke_stepper.h"
#include "inductive/sequence.h"
#include "inductive/splits.h"
#include "inductive/text_samples.h"
#include "inductive/tokens.h"

namespace inductive {

namespace {

constexpr int64_t kMaxDim = int64_t{1} << 30;

// Re-throws an error with the source that named the failing file in front, so the user knows which one to fix.
template <typename F>
auto with_context(const std::string& context, F&& body) {
  try {
    return body();
  } catch (const Error& e) {
    throw Error(e.code(), context + ": " + e.what());
  }
}

std::string record_name(const std::string& file, size_t index, const std::string& header) {
  std::string name = file + " record " + std::to_string(index + 1);
  if (!header.empty()) name += " (" + header + ")";
  return name;
}

void append_fasta(const std::string& path, OtkeInputs& in, int32_t label) {
  const std::vector<FastaRecord> records = read_fasta(path);
  for (size_t r = 0; r < records.size(); ++r) {
    in.sequences.push_back(records[r].sequence);
    in.names.push_back(record_name(path, r, records[r].name));
    if (label >= 0) in.labels.push_back(label);
  }
}

void load_classes(const std::vector<std::pair<std::string, std::string>>& classes, OtkeInputs& in) {
  for (const auto& entry : classes) {
    const std::string &name = entry.first, &path = entry.second;  // not a structured binding: the lambda uses them
    auto found = std::find(in.class_names.begin(), in.class_names.end(), name);
    const auto label = static_cast<int32_t>(found - in.class_names.begin());
    if (found == in.class_names.end()) in.class_names.push_back(name);
    with_context("--class " + name, [&] { append_fasta(path, in, label); });
  }
}

// The tables are parsed by inductive/text_samples.h, as the bindings parse them.
void take_samples(TextSamples samples, OtkeInputs& in) {
  in.sequences = std::move(samples.samples);
  in.names = std::move(samples.names);
  in.labels = std::move(samples.labels);
  in.class_names = std::move(samples.class_names);
}

std::vector<int32_t> load_int_vector(const std::string& path, const char* option, int64_t expected) {
  const NpyArray a = with_context(option, [&] { return load_npy(path); });  // int64 arrives converted to int32
  INDUCTIVE_CHECK(a.dtype == "<i4", ErrorCode::kInvalidArgument, option, " ", path,
                  ": expected int32 (or int64), got float (numpy: .astype(np.int32))");
  INDUCTIVE_CHECK(a.shape.size() == 1 && a.shape[0] == expected, ErrorCode::kShapeMismatch, option, " ", path,
                  ": expected shape [", expected, "] (one per set), got ", a.shape.size(), " dimensions and ",
                  a.numel(), " values");
  return a.i32;
}

void load_sets(const OtkeInputSource& source, OtkeInputs& in) {
  NpyArray x = with_context("--sets", [&] { return load_npy(source.sets); });
  INDUCTIVE_CHECK(x.dtype == "<f4", ErrorCode::kInvalidArgument, "--sets ", source.sets,
                  ": expected float32 or float64, got ", x.dtype);
  INDUCTIVE_CHECK(x.shape.size() == 3, ErrorCode::kShapeMismatch, "--sets ", source.sets,
                  ": expected shape [B, n_max, d], got ", x.shape.size(), " dimensions");
  for (int64_t s : x.shape)
    INDUCTIVE_CHECK(s >= 1 && s <= kMaxDim, ErrorCode::kInvalidArgument, "--sets ", source.sets, ": shape [",
                    x.shape[0], ", ", x.shape[1], ", ", x.shape[2], "] has an empty or too large dimension");
  const int B = static_cast<int>(x.shape[0]), N = static_cast<int>(x.shape[1]), d = static_cast<int>(x.shape[2]);
  SetBatch sets(B, N, d);
  sets.x = std::move(x.f32);
  INDUCTIVE_CHECK(!source.lengths.empty(), ErrorCode::kInvalidArgument, "--sets needs --lengths (one length per set)");
  sets.n = load_int_vector(source.lengths, "--lengths", B);
  for (int b = 0; b < B; ++b) {
    INDUCTIVE_CHECK(sets.n[b] >= 1 && sets.n[b] <= N, ErrorCode::kInvalidArgument, "--lengths ", source.lengths,
                    ": set ", b, " has length ", sets.n[b], ", expected 1..", N, " (n_max of --sets)");
    // Padding is never read, but SetBatch promises zeros there: callers may pass garbage (e.g. np.empty).
    std::fill(sets.row(b, sets.n[b]), sets.row(b, 0) + static_cast<int64_t>(N) * d, 0.0f);
  }
  with_context("--sets " + source.sets, [&] { sets.validate("vector sets"); });
  in.vectors = true;
  in.sets = std::move(sets);
  if (!source.labelled) return;
  INDUCTIVE_CHECK(!source.labels.empty(), ErrorCode::kInvalidArgument, "--sets needs --labels (one class per set)");
  in.labels = load_int_vector(source.labels, "--labels", B);
  int32_t top = 0;
  for (int b = 0; b < B; ++b) {
    INDUCTIVE_CHECK(in.labels[b] >= 0 && in.labels[b] < (1 << 20), ErrorCode::kInvalidArgument, "--labels ",
                    source.labels, ": label of set ", b, " is ", in.labels[b], ", expected a class index >= 0");
    top = std::max(top, in.labels[b]);
  }
  for (int32_t c = 0; c <= top; ++c) in.class_names.push_back(std::to_string(c));
  in.numeric_labels = true;
}

}  // namespace

OtkeInputs load_otke_inputs(const OtkeInputSource& source, bool empty_ok) {
  OtkeInputs in;
  if (!source.sets.empty()) {
    load_sets(source, in);
  } else if (!source.classes.empty()) {
    load_classes(source.classes, in);
  } else if (!source.tsv.empty()) {
    with_context("--tsv",
                 [&] { take_samples(parse_labelled_sequences_tsv(read_file_text(source.tsv), source.tsv), in); });
  } else if (!source.text.empty()) {
    with_context("--text",
                 [&] { take_samples(parse_glue_tsv(read_file_text(source.text), source.text, source.labelled), in); });
    in.text = true;
  } else if (!source.fasta.empty()) {
    for (const std::string& path : source.fasta) with_context("--fasta", [&] { append_fasta(path, in, -1); });
  } else {
    INDUCTIVE_CHECK(empty_ok, ErrorCode::kInvalidArgument,
                    source.labelled
                        ? "no input: give labelled data with --class NAME=FILE.fa (once per class), --tsv FILE, "
                          "--text FILE.tsv, or --sets X.npy --lengths n.npy --labels y.npy"
                        : "no input: give --fasta FILE.fa, --text FILE.tsv or --sets X.npy --lengths n.npy");
  }
  return in;
}

SetBatch OtkeInputs::features(const OtkeModel& model, int begin, int end) const {
  if (vectors) return sets.slice(begin, end);
  return model.sequence_features({sequences.begin() + begin, sequences.begin() + end},
                                 {names.begin() + begin, names.begin() + end});
}

SetBatch OtkeInputs::features_of(const OtkeModel& model, const std::vector<int>& which) const {
  if (vectors) return sets.gather(which);
  // Only the chosen strings become features (a train / validation split would otherwise build every one twice).
  std::vector<std::string> chosen, chosen_names;
  for (int i : which) {
    INDUCTIVE_CHECK(i >= 0 && i < size(), ErrorCode::kInvalidArgument, "otke inputs: sample ", i, " out of range 0..",
                    size() - 1);
    chosen.push_back(sequences[i]);
    chosen_names.push_back(names[i]);
  }
  return model.sequence_features(chosen, chosen_names);
}

void check_inputs_for(const OtkeInputs& in, const OtkeConfig& config, const std::string& who) {
  if (config.input_type == OtkeInput::kTokens) {
    INDUCTIVE_CHECK(in.text, ErrorCode::kInvalidArgument, who, ": the model reads text (input tokens, ",
                    config.tokens.size(), " tokens): give --text FILE.tsv");
    const Vocabulary vocab(config.tokens, config.lowercase);
    for (size_t s = 0; s < in.sequences.size(); ++s)
      INDUCTIVE_CHECK(!vocab.encode(in.sequences[s]).empty(), ErrorCode::kInvalidArgument, in.names[s],
                      ": no token in the sentence");
    return;
  }
  INDUCTIVE_CHECK(!in.text, ErrorCode::kInvalidArgument, who, ": the model reads ",
                  config.input_type == OtkeInput::kSequence ? "sequences" : "sets of vectors",
                  ", not text (--text is for ", "models of input type tokens)");
  if (config.input_type == OtkeInput::kSequence) {
    INDUCTIVE_CHECK(!in.vectors, ErrorCode::kInvalidArgument, who, ": the model reads sequences (alphabet ",
                    config.alphabet, ", k = ", config.kmer, "): give --class/--tsv/--fasta, not --sets");
    const Alphabet alphabet = Alphabet::from_name(config.alphabet);
    for (size_t s = 0; s < in.sequences.size(); ++s) {
      encode_sequence(alphabet, in.sequences[s], in.names[s]);
      INDUCTIVE_CHECK(static_cast<int>(in.sequences[s].size()) >= config.kmer, ErrorCode::kInvalidArgument, in.names[s],
                      ": sequence shorter than k: got length ", in.sequences[s].size(), ", expected >= ", config.kmer,
                      " (the k-mer size)");
    }
  } else {
    INDUCTIVE_CHECK(in.vectors, ErrorCode::kInvalidArgument, who, ": the model reads sets of ", config.input_dim,
                    "-dimensional vectors: give --sets/--lengths, not sequences");
    INDUCTIVE_CHECK(in.sets.dim == config.input_dim, ErrorCode::kShapeMismatch, who,
                    ": --sets holds vectors of dimension ", in.sets.dim, ", expected ", config.input_dim);
  }
}

std::vector<int32_t> labels_for_model(const OtkeInputs& in, const OtkeConfig& config) {
  INDUCTIVE_CHECK(config.classes > 0, ErrorCode::kInvalidArgument,
                  "the model has no classifier head (head.classes = 0): fit one with `inductive otke fit`");
  if (config.multilabel) {
    // Each "class" the inputs name is a label set ("a,b" or "-"): its labels become bits in the model's order.
    INDUCTIVE_CHECK(!in.numeric_labels, ErrorCode::kInvalidArgument,
                    "the model is multilabel: give labelled sequences with label names (--tsv lines 'a,b<TAB>seq', "
                    "or --class 'a,b'=FILE.fa; '-' for none), not class indices (--labels)");
    std::vector<std::string> names = config.labels;
    return label_bits(in.labels, in.class_names, names);
  }
  if (in.numeric_labels) {
    for (size_t i = 0; i < in.labels.size(); ++i)
      INDUCTIVE_CHECK(in.labels[i] < config.classes, ErrorCode::kInvalidArgument, "--labels: label of set ", i, " is ",
                      in.labels[i], ", but the model has classes 0..", config.classes - 1);
    return in.labels;
  }
  std::vector<std::string> model_names = config.labels;
  for (int c = static_cast<int>(model_names.size()); c < config.classes; ++c) model_names.push_back(std::to_string(c));
  std::vector<int32_t> to_model(in.class_names.size());
  for (size_t c = 0; c < in.class_names.size(); ++c) {
    auto it = std::find(model_names.begin(), model_names.end(), in.class_names[c]);
    if (it == model_names.end()) {
      std::string known;
      for (const auto& n : model_names) known += (known.empty() ? "" : ", ") + n;
      INDUCTIVE_FAIL(ErrorCode::kInvalidArgument, "class '", in.class_names[c],
                     "' is not a class of the model: expected one of ", known);
    }
    to_model[c] = static_cast<int32_t>(it - model_names.begin());
  }
  std::vector<int32_t> y(in.labels.size());
  for (size_t i = 0; i < y.size(); ++i) y[i] = to_model[in.labels[i]];
  return y;
}

void otke_train_split(const OtkeInputs& in, const OtkeConfig& config, const std::vector<int32_t>& labels,
                      double fraction, uint64_t seed, std::vector<int>& train, std::vector<int>& val) {
  if (config.multilabel)  // stratified by label set, as the inputs write them
    stratified_split(in.labels, in.class_names, fraction, seed, train, val);
  else
    stratified_split(labels, config.labels.empty() ? in.class_names : config.labels, fraction, seed, train, val);
}

void copy_plans(const std::vector<std::vector<float>>& plans, const SetBatch& f, int p, float* out, int64_t set_stride,
                int64_t reference_stride) {
  for (size_t r = 0; r < plans.size(); ++r)
    for (int b = 0; b < f.batch; ++b)
      std::memcpy(out + b * set_stride + static_cast<int64_t>(r) * reference_stride,
                  plans[r].data() + static_cast<size_t>(b) * f.n_max * p, sizeof(float) * f.n[b] * p);
}

MatF embed_in_chunks(const OtkeModel& model, const OtkeInputs& inputs, int batch_size, const ProgressFn& progress,
                     const char* stage, std::vector<float>* plans, int* plans_n_max, OtkeStepper* device, int begin,
                     int end) {
  INDUCTIVE_CHECK(batch_size >= 1, ErrorCode::kInvalidArgument, "--batch-size must be >= 1: got ", batch_size);
  INDUCTIVE_CHECK(!(plans && device), ErrorCode::kInvalidArgument,
                  "--plans is not available with a device backend yet: use --backend cpu");
  if (end < 0) end = inputs.size();
  INDUCTIVE_CHECK(!plans || (begin == 0 && end == inputs.size()), ErrorCode::kInvalidArgument,
                  "--plans of a part of the inputs is not available");
  const int B = inputs.size();
  MatF out(end - begin, model.config.output_dim());
  const int q = model.config.otk.q, p = model.config.otk.p;
  int N = 0;
  if (plans) {
    INDUCTIVE_CHECK(model.config.pooling == OtkePooling::kOtk, ErrorCode::kInvalidArgument,
                    "--plans needs a model with otk pooling: this one pools with '", model.config.pooling, "'");
    for (int b = 0; b < B; ++b)
      N = std::max(N, inputs.vectors ? inputs.sets.n[b]
                      : inputs.text  ? static_cast<int>(tokenize(inputs.sequences[b], false).size())
                                     : static_cast<int>(inputs.sequences[b].size()) - model.config.kmer + 1);
    plans->assign(static_cast<size_t>(B) * q * N * p, 0.0f);
    *plans_n_max = N;
  }
  if (progress) progress(stage, 0.0);
  for (int b0 = begin; b0 < end; b0 += batch_size) {
    const int b1 = std::min(end, b0 + batch_size);
    const SetBatch f = inputs.features(model, b0, b1);
    std::vector<std::vector<float>> chunk_plans;
    out.middleRows(b0 - begin, b1 - b0) = device ? device->embed(f) : model.embed(f, plans ? &chunk_plans : nullptr);
    if (plans)
      copy_plans(chunk_plans, f, p, plans->data() + static_cast<size_t>(b0) * q * N * p,
                 static_cast<int64_t>(q) * N * p, static_cast<int64_t>(N) * p);
    if (progress) progress(stage, static_cast<double>(b1 - begin) / std::max(1, end - begin));
  }
  return out;
}

}  // namespace inductive
