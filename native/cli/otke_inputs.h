// native/cli/otke_inputs.h - how the `otke` commands read their data, and what they share (progress, chunking).
//
// Input conventions (one of them per command line):
//   sequences, labelled:    --class NAME=FILE.fa   (repeatable; every record of FILE is of class NAME; a name may
//                                                  repeat to join files; class order = first appearance)
//                         | --tsv FILE             (one sample per line: label<TAB>sequence; '#' lines and blank
//                                                  lines skipped; class order = sorted label names; multilabel
//                                                  models: the label field is a set 'a,b', '-' for none)
//   sequences, unlabelled:  --fasta FILE.fa        (repeatable; embed)
//   text (tokens models):   --text FILE.tsv        GLUE-style TSV: a header line naming the tab-separated columns,
//                                                  'sentence' (required) and 'label' (required for labelled data;
//                                                  class order = sorted label names); other columns are ignored
//                                                  (e.g. 'index' of GLUE test files); blank lines are skipped
//   vector sets:            --sets X.npy           float32/float64 [B, n_max, d], C order; rows >= n[b] are padding
//                           --lengths n.npy        int32 [B] (int64 accepted), 1 <= n[b] <= n_max
//                           --labels y.npy         int32 [B] (int64 accepted), class indices 0..C-1 (fit, eval)
// Sequences are checked against the model's alphabet and k before any work starts: invalid letters and sequences
// shorter than k are refused with the file and record named.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "inductive/backend.h"
#include "inductive/otke.h"
#include "inductive/otke_stepper.h"

namespace inductive::cli {

struct InputArgs {
  std::vector<std::string> classes;  // NAME=FILE.fa
  std::vector<std::string> fasta;    // unlabelled FASTA files
  std::string tsv;
  std::string text;  // GLUE-style TSV of sentences
  std::string sets, lengths, labels;
};

enum class InputKind { kLabelled, kUnlabelled };

// Adds the options above that `kind` accepts (labelled: --class/--tsv/--text/--sets/--lengths/--labels; unlabelled:
// --fasta/--text/--sets/--lengths), with mutual exclusions.
void add_input_options(CLI::App* cmd, InputArgs& args, InputKind kind);

struct OtkeInputs {
  bool vectors = false;                  // sets of vectors (NPY) rather than sequences
  bool text = false;                     // sentences (--text) rather than sequences
  std::vector<std::string> sequences;    // sequence input, or sentences (text)
  std::vector<std::string> names;        // per sequence, for messages: "FILE record I 'HEADER'" / "FILE line N"
  SetBatch sets;                         // vector input, padding zeroed
  std::vector<int32_t> labels;           // per sample, index into class_names; empty when unlabelled
  std::vector<std::string> class_names;  // labelled only; NPY labels are named "0".."C-1"
  bool numeric_labels = false;           // labels came from --labels (indices), not names

  int size() const { return vectors ? sets.batch : static_cast<int>(sequences.size()); }
  // Inputs of samples [begin, end) for `model` (k-mers of the sequences, token indices of the sentences, or the
  // vector sets as they are).
  SetBatch features(const OtkeModel& model, int begin, int end) const;
};

// Reads the inputs named by `args` (what `kind` requires: labels or not). Throws inductive::Error naming the
// option and file on any problem; `empty_ok` allows no input at all (returns size() == 0).
OtkeInputs load_inputs(const InputArgs& args, InputKind kind, bool empty_ok = false);

// Refuses inputs the model cannot read: the wrong input type, letters outside its alphabet, sequences shorter than
// its k, vectors of another dimension, sentences without a token. `model_name` prefixes messages.
void check_inputs_for(const OtkeInputs& inputs, const OtkeConfig& config, const std::string& model_name);

// Maps the inputs' labels onto the model's classes by name (numeric labels: checked against the class count). For
// a multilabel model each input "class" is a label set written "a,b" ('-': none) and the result holds bit sets
// (inductive/multilabel.h).
std::vector<int32_t> labels_for_model(const OtkeInputs& inputs, const OtkeConfig& config);

// Prints "otke <cmd>: <elapsed>s <stage> <percent>%" on stderr when a stage starts, every 10% and when it ends.
class Progress {
 public:
  Progress(std::string command, bool quiet);
  void operator()(const std::string& stage, double fraction);
  double elapsed() const;  // seconds since construction
  double lap();            // seconds since the previous lap (or construction)

 private:
  std::string command_;
  bool quiet_;
  std::string stage_;
  int last_decile_ = -1;
  std::chrono::steady_clock::time_point start_, lap_;
};

// Embeds samples [0, inputs.size()) in chunks of `batch_size` so that features, psi and Sinkhorn buffers stay
// O(batch_size) whatever the dataset size. `plans` (optional, otk pooling only) receives [B, q, n_max, p] with
// n_max the longest set over all samples, zero-padded.
// `device` (optional): a backend's stepper for this model (`--backend cuda`) that embeds each chunk; plans then
// cannot be requested. [begin, end) (end < 0: to the last sample) embeds a part of the inputs (a rank's shard),
// rows in input order.
MatF embed_in_chunks(const OtkeModel& model, const OtkeInputs& inputs, int batch_size, Progress& progress,
                     const std::string& stage, std::vector<float>* plans = nullptr, int* plans_n_max = nullptr,
                     OtkeStepper* device = nullptr, int begin = 0, int end = -1);

// The stepper that embeds for `--backend` (nullptr for "cpu": the model embeds itself). `model` and `adam` must
// outlive it. Error{kBackend} when the backend is missing or cannot run this model.
std::unique_ptr<OtkeStepper> embedding_stepper(const std::string& backend, OtkeModel& model, Adam& adam,
                                               std::unique_ptr<Backend>& holder);

// Refuses an output path whose folder is missing or that names a folder, before any work is done.
void check_output_path(const std::string& path, const char* option);

}  // namespace inductive::cli
