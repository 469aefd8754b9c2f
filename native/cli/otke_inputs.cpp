// The `otke` commands' input flags, progress lines and backend choice (see otke_inputs.h).
#include "otke_inputs.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

namespace inductive::cli {

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
  OtkeInputSource source;
  for (const std::string& spec : args.classes) {
    const size_t eq = spec.find('=');
    INDUCTIVE_CHECK(eq != std::string::npos && eq > 0 && eq + 1 < spec.size(), ErrorCode::kInvalidArgument, "--class '",
                    spec, "': expected NAME=FILE.fa");
    source.classes.emplace_back(spec.substr(0, eq), spec.substr(eq + 1));
  }
  source.fasta = args.fasta;
  source.tsv = args.tsv;
  source.text = args.text;
  source.sets = args.sets;
  source.lengths = args.lengths;
  source.labels = args.labels;
  source.labelled = kind == InputKind::kLabelled;
  return load_otke_inputs(source, empty_ok);
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

ProgressFn Progress::fn() {
  return [this](const char* stage, double fraction) { (*this)(stage, fraction); };
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

std::unique_ptr<OtkeStepper> embedding_stepper(Backend& backend, OtkeModel& model, Adam& adam) {
  if (backend.is_cpu()) return nullptr;
  // It only embeds: no layer learns, so the device holds no gradient buffers and accepts every model it can embed.
  OtkeLossOptions frozen;
  frozen.tokens = frozen.anchors = frozen.references = false;
  return backend.otke_stepper(model, adam, frozen);
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
