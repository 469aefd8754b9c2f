// inductive/otke_inputs.h - the samples OTKE's front ends read, once for all of them (the CLI's `otke` commands,
// the MPI runs, and what the bindings mirror): read, checked against a model, labelled in its classes, embedded in
// chunks.
//
// Sources (one of them per run):
//   sequences, labelled:    FASTA files, one class each (NAME=FILE; a name may repeat to join files; class order =
//                           first appearance), or a TSV of label<TAB>sequence lines ('#' lines and blank lines
//                           skipped; class order = sorted label names; multilabel models: the label is a set 'a,b',
//                           '-' for none)
//   sequences, unlabelled:  FASTA files, in order
//   text (tokens models):   a GLUE-style TSV: a header naming tab-separated columns, 'sentence' (required) and
//                           'label' (required for labelled data; class order = sorted label names); other columns
//                           are ignored; blank lines are skipped
//   vector sets:            sets X.npy float32/float64 [B, n_max, d], C order (rows >= n[b] are padding), lengths
//                           n.npy int32 [B] (int64 accepted, 1 <= n[b] <= n_max), labels y.npy int32 [B] (int64
//                           accepted), class indices 0..C-1
// Messages name each source by the CLI's flag (--class, --tsv, --text, --fasta, --sets, --lengths, --labels), which
// the other front ends mirror. Sequences are checked against the model's alphabet and k before any work starts:
// invalid letters and sequences shorter than k are refused with the file and record named.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "inductive/otke.h"
#include "inductive/progress.h"

namespace inductive {

class OtkeStepper;

// Samples embedded per call by default (CLI --batch-size, the browser's batchSize): bounds the features, psi and
// Sinkhorn buffers of one call.
inline constexpr int kDefaultEmbedBatch = 256;
// Share of each class that validates (chooses lambda, stops training) by default: the thesis' 20 %.
inline constexpr double kDefaultValidationFraction = 0.2;

struct OtkeInputSource {
  std::vector<std::pair<std::string, std::string>> classes;  // (class name, FASTA path), labelled
  std::vector<std::string> fasta;                            // unlabelled FASTA paths
  std::string tsv;                                           // labelled label<TAB>sequence lines
  std::string text;                                          // GLUE-style TSV of sentences
  std::string sets, lengths, labels;                         // NPY vector sets (labels: labelled only)
  bool labelled = true;                                      // labels are required (fit, train, eval)
};

struct OtkeInputs {
  bool vectors = false;                  // sets of vectors (NPY) rather than sequences
  bool text = false;                     // sentences rather than sequences
  std::vector<std::string> sequences;    // sequence input, or sentences (text)
  std::vector<std::string> names;        // per sequence, for messages: "FILE record I 'HEADER'" / "FILE line N"
  SetBatch sets;                         // vector input, padding zeroed
  std::vector<int32_t> labels;           // per sample, index into class_names; empty when unlabelled
  std::vector<std::string> class_names;  // labelled only; NPY labels are named "0".."C-1"
  bool numeric_labels = false;           // labels came from NPY (indices), not names

  int size() const { return vectors ? sets.batch : static_cast<int>(sequences.size()); }
  // Inputs of samples [begin, end) for `model` (k-mers of the sequences, token indices of the sentences, or the
  // vector sets as they are).
  SetBatch features(const OtkeModel& model, int begin, int end) const;
  // features() of the samples `which`, in that order.
  SetBatch features_of(const OtkeModel& model, const std::vector<int>& which) const;
};

// Reads the inputs `source` names (what it requires: labels or not). Throws Error naming the source and file on
// any problem; `empty_ok` allows no input at all (returns size() == 0).
OtkeInputs load_otke_inputs(const OtkeInputSource& source, bool empty_ok = false);

// Refuses inputs the model cannot read: the wrong input type, letters outside its alphabet, sequences shorter than
// its k, vectors of another dimension, sentences without a token. `who` prefixes messages ("otke fit").
void check_inputs_for(const OtkeInputs& inputs, const OtkeConfig& config, const std::string& who);

// Maps the inputs' labels onto the model's classes by name (numeric labels: checked against the class count). For
// a multilabel model each input "class" is a label set written "a,b" ('-': none) and the result holds bit sets
// (inductive/multilabel.h).
std::vector<int32_t> labels_for_model(const OtkeInputs& inputs, const OtkeConfig& config);

// The supervised protocol's train / validation split of `inputs` for `config`'s model: stratified by class (by the
// label set as the inputs write it, for a multilabel model), `fraction` of each class validating, seeded.
void otke_train_split(const OtkeInputs& inputs, const OtkeConfig& config, const std::vector<int32_t>& labels,
                      double fraction, uint64_t seed, std::vector<int>& train, std::vector<int>& val);

// One set's plans (OtkeModel::embed's, per reference r: [batch, f.n_max, p]) copied into a caller's layout:
// reference r of set b starts at out + b * set_stride + r * reference_stride, one row of p per element, rows past
// the set's length left as they are. Both layouts of the front ends are this: the CLI's [B, q, n_max, p] and the
// browser's [q, B, stride, p].
void copy_plans(const std::vector<std::vector<float>>& plans, const SetBatch& f, int p, float* out, int64_t set_stride,
                int64_t reference_stride);

// Embeds samples [begin, end) of `inputs` (end < 0: to the last) in chunks of `batch_size` so that features, psi and
// Sinkhorn buffers stay O(batch_size) whatever the dataset size; rows in input order. `plans` (optional, otk
// pooling only, every sample): [B, q, n_max, p] with n_max the longest set, zero-padded, and *plans_n_max set.
// `device` (optional): a backend's stepper for this model (inductive/otke_stepper.h) that embeds each chunk; plans
// then cannot be requested. `progress` (optional) reports `stage` after every chunk.
MatF embed_in_chunks(const OtkeModel& model, const OtkeInputs& inputs, int batch_size, const ProgressFn& progress,
                     const char* stage, std::vector<float>* plans = nullptr, int* plans_n_max = nullptr,
                     OtkeStepper* device = nullptr, int begin = 0, int end = -1);

}  // namespace inductive
