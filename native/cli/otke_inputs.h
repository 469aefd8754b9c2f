// native/cli/otke_inputs.h - how the `otke` commands read their data, and what they share (progress, chunking).
//
// The flags name one source of core's OtkeInputSource (inductive/otke_inputs.h documents the formats); reading,
// the checks against a model, the labels and chunked embedding are core's.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "inductive/backend_registry.h"
#include "inductive/otke.h"
#include "inductive/otke_inputs.h"
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

// Reads the inputs named by `args` (what `kind` requires: labels or not): core's load_otke_inputs. Throws
// inductive::Error naming the option and file on any problem; `empty_ok` allows no input at all.
OtkeInputs load_inputs(const InputArgs& args, InputKind kind, bool empty_ok = false);

// Prints "otke <cmd>: <elapsed>s <stage> <percent>%" on stderr when a stage starts, every 10% and when it ends.
class Progress {
 public:
  Progress(std::string command, bool quiet);
  void operator()(const std::string& stage, double fraction);
  double elapsed() const;  // seconds since construction
  double lap();            // seconds since the previous lap (or construction)
  ProgressFn fn();         // this, as core's progress callback (it must outlive the calls)

 private:
  std::string command_;
  bool quiet_;
  std::string stage_;
  int last_decile_ = -1;
  std::chrono::steady_clock::time_point start_, lap_;
};

// The stepper that embeds on `backend` (nullptr for the CPU: the model embeds itself). `model` and `adam` must
// outlive it. Error{kBackend} when the backend cannot run this model.
std::unique_ptr<OtkeStepper> embedding_stepper(Backend& backend, OtkeModel& model, Adam& adam);

// Refuses an output path whose folder is missing or that names a folder, before any work is done.
void check_output_path(const std::string& path, const char* option);

}  // namespace inductive::cli
