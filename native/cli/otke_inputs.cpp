// Data loading, checks, progress and chunked embedding for the `otke` commands (see otke_inputs.h).
#include "otke_inputs.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>

#include "inductive/model_file.h"
#include "inductive/npy.h"
#include "inductive/sequence.h"
#include "inductive/text_samples.h"
#include "inductive/tokens.h"

namespace inductive::cli {

namespace {

constexpr int64_t kMaxDim = int64_t{1} << 30;

// Re-throws an error with the option that named the failing file in front, so the user knows which argument to fix.
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

void load_classes(const std::vector<std::string>& specs, OtkeInputs& in) {
  for (const std::string& spec : specs) {
    const size_t eq = spec.find('=');
    INDUCTIVE_CHECK(eq != std::string::npos && eq > 0 && eq + 1 < spec.size(), ErrorCode::kInvalidArgument, "--class '",
                    spec, "': expected NAME=FILE.fa");
    const std::string name = spec.substr(0, eq), path = spec.substr(eq + 1);
    auto found = std::find(in.class_names.begin(), in.class_names.end(), name);
    const auto label = static_cast<int32_t>(found - in.class_names.begin());
    if (found == in.class_names.end()) in.class_names.push_back(name);
    with_context("--class " + name, [&] { append_fasta(path, in, label); });
  }
}

// The tables are parsed in core (inductive/text_samples.h), as the bindings parse them.
void take_samples(TextSamples samples, OtkeInputs& in) {
  in.sequences = std::move(samples.samples);
  in.names = std::move(samples.names);
  in.labels = std::move(samples.labels);
  in.class_names = std::move(samples.class_names);
}

std::string read_text(const std::string& path) {
  const std::vector<uint8_t> bytes = read_file_bytes(path);
  return std::string(bytes.begin(), bytes.end());
}

void load_tsv(const std::string& path, OtkeInputs& in) {
  take_samples(parse_labelled_sequences_tsv(read_text(path), path), in);
}

void load_text(const std::string& path, InputKind kind, OtkeInputs& in) {
  take_samples(parse_glue_tsv(read_text(path), path, kind == InputKind::kLabelled), in);
  in.text = true;
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

void load_sets(const InputArgs& args, InputKind kind, OtkeInputs& in) {
  NpyArray x = with_context("--sets", [&] { return load_npy(args.sets); });
  INDUCTIVE_CHECK(x.dtype == "<f4", ErrorCode::kInvalidArgument, "--sets ", args.sets,
                  ": expected float32 or float64, got ", x.dtype);
  INDUCTIVE_CHECK(x.shape.size() == 3, ErrorCode::kShapeMismatch, "--sets ", args.sets,
                  ": expected shape [B, n_max, d], got ", x.shape.size(), " dimensions");
  for (int64_t s : x.shape)
    INDUCTIVE_CHECK(s >= 1 && s <= kMaxDim, ErrorCode::kInvalidArgument, "--sets ", args.sets, ": shape [", x.shape[0],
                    ", ", x.shape[1], ", ", x.shape[2], "] has an empty or too large dimension");
  const int B = static_cast<int>(x.shape[0]), N = static_cast<int>(x.shape[1]), d = static_cast<int>(x.shape[2]);
  SetBatch sets(B, N, d);
  sets.x = std::move(x.f32);
  sets.n = load_int_vector(args.lengths, "--lengths", B);
  for (int b = 0; b < B; ++b) {
    INDUCTIVE_CHECK(sets.n[b] >= 1 && sets.n[b] <= N, ErrorCode::kInvalidArgument, "--lengths ", args.lengths, ": set ",
                    b, " has length ", sets.n[b], ", expected 1..", N, " (n_max of --sets)");
    // Padding is never read, but SetBatch promises zeros there: callers may pass garbage (e.g. np.empty).
    std::fill(sets.row(b, sets.n[b]), sets.row(b, 0) + static_cast<int64_t>(N) * d, 0.0f);
  }
  with_context("--sets " + args.sets, [&] { sets.validate("vector sets"); });
  in.vectors = true;
  in.sets = std::move(sets);
  if (kind != InputKind::kLabelled) return;
  in.labels = load_int_vector(args.labels, "--labels", B);
  int32_t top = 0;
  for (int b = 0; b < B; ++b) {
    INDUCTIVE_CHECK(in.labels[b] >= 0 && in.labels[b] < (1 << 20), ErrorCode::kInvalidArgument, "--labels ",
                    args.labels, ": label of set ", b, " is ", in.labels[b], ", expected a class index >= 0");
    top = std::max(top, in.labels[b]);
  }
  for (int32_t c = 0; c <= top; ++c) in.class_names.push_back(std::to_string(c));
  in.numeric_labels = true;
}

}  // namespace

void add_input_options(CLI::App* cmd, InputArgs& a, InputKind kind) {
  CLI::Option* sets = cmd->add_option("--sets", a.sets, "Vector sets X [B, n_max, d], .npy float32 (C order)");
  CLI::Option* lengths = cmd->add_option("--lengths", a.lengths, "True set sizes n [B], .npy int32 (with --sets)");
  sets->needs(lengths);
  lengths->needs(sets);
  if (kind == InputKind::kLabelled) {
    CLI::Option* cls =
        cmd->add_option("--class", a.classes, "NAME=FILE.fa: FASTA sequences of class NAME (repeat for each class)");
    CLI::Option* tsv = cmd->add_option("--tsv", a.tsv, "Labelled sequences, one 'label<TAB>sequence' per line");
    CLI::Option* labels = cmd->add_option("--labels", a.labels, "Class indices y [B], .npy int32 (with --sets)");
    CLI::Option* text = cmd->add_option(
        "--text", a.text, "Labelled sentences (tokens models): GLUE TSV with header 'sentence<TAB>label'");
    sets->needs(labels);
    labels->needs(sets);
    cls->excludes(tsv)->excludes(sets)->excludes(text);
    tsv->excludes(sets)->excludes(text);
    text->excludes(sets);
    cmd->footer(
        "Labelled data, one of:\n"
        "  --class promoter=prom.fa --class other=neg.fa   FASTA per class (class order = order given)\n"
        "  --tsv data.tsv                                   lines 'label<TAB>sequence' (classes sorted by name)\n"
        "  --text train.tsv                                 sentences: GLUE TSV, header 'sentence<TAB>label'\n"
        "                                                   (tokens models; classes sorted by name)\n"
        "  --sets X.npy --lengths n.npy --labels y.npy      X [B, n_max, d] float32, n [B] int32, y [B] int32");
  } else {
    CLI::Option* fasta = cmd->add_option("--fasta", a.fasta, "FASTA file of sequences to embed (repeatable)");
    CLI::Option* text =
        cmd->add_option("--text", a.text, "Sentences (tokens models): TSV whose header names a 'sentence' column");
    fasta->excludes(sets)->excludes(text);
    text->excludes(sets);
    cmd->footer(
        "Data, one of:\n"
        "  --fasta a.fa [--fasta b.fa ...]   sequences, in file order\n"
        "  --text x.tsv                      sentences: TSV with a header naming a 'sentence' column\n"
        "  --sets X.npy --lengths n.npy      X [B, n_max, d] float32, n [B] int32");
  }
}

OtkeInputs load_inputs(const InputArgs& args, InputKind kind, bool empty_ok) {
  OtkeInputs in;
  if (!args.sets.empty()) {
    load_sets(args, kind, in);
  } else if (!args.classes.empty()) {
    load_classes(args.classes, in);
  } else if (!args.tsv.empty()) {
    with_context("--tsv", [&] { load_tsv(args.tsv, in); });
  } else if (!args.text.empty()) {
    with_context("--text", [&] { load_text(args.text, kind, in); });
  } else if (!args.fasta.empty()) {
    for (const std::string& path : args.fasta) with_context("--fasta", [&] { append_fasta(path, in, -1); });
  } else {
    INDUCTIVE_CHECK(empty_ok, ErrorCode::kInvalidArgument,
                    kind == InputKind::kLabelled
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

void check_inputs_for(const OtkeInputs& in, const OtkeConfig& config, const std::string& model_name) {
  if (config.input_type == OtkeInput::kTokens) {
    INDUCTIVE_CHECK(in.text, ErrorCode::kInvalidArgument, model_name, ": the model reads text (input tokens, ",
                    config.tokens.size(), " tokens): give --text FILE.tsv");
    const Vocabulary vocab(config.tokens, config.lowercase);
    for (size_t s = 0; s < in.sequences.size(); ++s)
      INDUCTIVE_CHECK(!vocab.encode(in.sequences[s]).empty(), ErrorCode::kInvalidArgument, in.names[s],
                      ": no token in the sentence");
    return;
  }
  INDUCTIVE_CHECK(!in.text, ErrorCode::kInvalidArgument, model_name, ": the model reads ",
                  config.input_type == OtkeInput::kSequence ? "sequences" : "sets of vectors",
                  ", not text (--text is for ", "models of input type tokens)");
  if (config.input_type == OtkeInput::kSequence) {
    INDUCTIVE_CHECK(!in.vectors, ErrorCode::kInvalidArgument, model_name, ": the model reads sequences (alphabet ",
                    config.alphabet, ", k = ", config.kmer, "): give --class/--tsv/--fasta, not --sets");
    const Alphabet alphabet = Alphabet::from_name(config.alphabet);
    for (size_t s = 0; s < in.sequences.size(); ++s) {
      encode_sequence(alphabet, in.sequences[s], in.names[s]);
      INDUCTIVE_CHECK(static_cast<int>(in.sequences[s].size()) >= config.kmer, ErrorCode::kInvalidArgument, in.names[s],
                      ": sequence shorter than k: got length ", in.sequences[s].size(), ", expected >= ", config.kmer,
                      " (the k-mer size)");
    }
  } else {
    INDUCTIVE_CHECK(in.vectors, ErrorCode::kInvalidArgument, model_name, ": the model reads sets of ", config.input_dim,
                    "-dimensional vectors: give --sets/--lengths, not sequences");
    INDUCTIVE_CHECK(in.sets.dim == config.input_dim, ErrorCode::kShapeMismatch, model_name,
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

Progress::Progress(std::string command, bool quiet)
    : command_(std::move(command)), quiet_(quiet), start_(std::chrono::steady_clock::now()), lap_(start_) {}

double Progress::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

double Progress::lap() {
  const auto now = std::chrono::steady_clock::now();
  const double s = std::chrono::duration<double>(now - lap_).count();
  lap_ = now;
  return s;
}

void Progress::operator()(const std::string& stage, double fraction) {
  if (quiet_) return;
  const int decile = static_cast<int>(std::clamp(fraction, 0.0, 1.0) * 10);
  if (stage == stage_ && decile <= last_decile_) return;
  if (stage != stage_ && !stage_.empty() && last_decile_ < 10) {
    // Some stages never report 100% (k-means stops early when converged): close them before the next one.
    std::fprintf(stderr, "%s: [%7.1fs] %s done\n", command_.c_str(), elapsed(), stage_.c_str());
  }
  stage_ = stage;
  last_decile_ = decile;
  std::fprintf(stderr, "%s: [%7.1fs] %s %3d%%\n", command_.c_str(), elapsed(), stage.c_str(), decile * 10);
}

std::unique_ptr<OtkeStepper> embedding_stepper(const std::string& backend, OtkeModel& model, Adam& adam,
                                               std::unique_ptr<Backend>& holder) {
  holder = make_backend(backend);
  if (backend == "cpu") return nullptr;
  return holder->otke_stepper(model, adam, OtkeLossOptions{});
}

MatF embed_in_chunks(const OtkeModel& model, const OtkeInputs& inputs, int batch_size, Progress& progress,
                     const std::string& stage, std::vector<float>* plans, int* plans_n_max, OtkeStepper* device,
                     int begin, int end) {
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
  progress(stage, 0.0);
  for (int b0 = begin; b0 < end; b0 += batch_size) {
    const int b1 = std::min(end, b0 + batch_size);
    const SetBatch f = inputs.features(model, b0, b1);
    std::vector<std::vector<float>> chunk_plans;
    out.middleRows(b0 - begin, b1 - b0) = device ? device->embed(f) : model.embed(f, plans ? &chunk_plans : nullptr);
    for (int r = 0; plans && r < q; ++r)
      for (int b = 0; b < b1 - b0; ++b) {
        const float* src = chunk_plans[r].data() + static_cast<size_t>(b) * f.n_max * p;
        float* dst = plans->data() + ((static_cast<size_t>(b0 + b) * q + r) * N) * p;
        std::copy(src, src + static_cast<size_t>(f.n[b]) * p, dst);
      }
    progress(stage, static_cast<double>(b1 - begin) / std::max(1, end - begin));
  }
  return out;
}

void check_output_path(const std::string& path, const char* option) {
  namespace fs = std::filesystem;
  std::error_code ec;
  INDUCTIVE_CHECK(!fs::is_directory(path, ec), ErrorCode::kInvalidArgument, option, " ", path,
                  ": is a folder, expected a file name");
  const fs::path parent = fs::path(path).parent_path();
  INDUCTIVE_CHECK(parent.empty() || fs::is_directory(parent, ec), ErrorCode::kIo, option, " ", path, ": folder '",
                  parent.string(), "' does not exist");
}

}  // namespace inductive::cli
