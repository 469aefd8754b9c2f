// inductive/epoch_loop.h - the skeleton every trainer runs (OTKE's supervised training, GraphiT's), so that resuming,
// per-epoch randomness, minibatching, the ranks' agreement check, checkpoint cadence and progress work the same way
// for both and for any backend behind their steppers.
//
// Each epoch from `first` to `last` (a resumed run starts after its checkpoint's epoch):
//   1. hooks.stop_before(epoch) may end the run (early stopping);
//   2. the epoch's generator is mt19937_64(seed * seed_stride + epoch): a resumed run draws what an uninterrupted
//      one would, without storing generator state; the order of the `n` training examples is 0..n-1, shuffled by
//      that generator when `shuffle`;
//   3. hooks.begin_epoch, then hooks.step on each minibatch order[begin, end) of `batch_size` examples (the last one
//      shorter), in order, with the epoch's generator;
//   4. hooks.end_epoch: the method evaluates, schedules and records the epoch (EpochClock times it and gives an ETA);
//   5. with several ranks, every rank's hooks.parameter_hash() must agree (check_ranks_agree), else an Error;
//   6. at every `checkpoint_every`-th epoch and at `last`, when `checkpoint`: hooks.save_checkpoint(epoch, writer)
//      on every rank, where only the writer rank (rank 0) writes the file;
//   7. hooks.report_epoch (progress; throwing ends the run, after the checkpoint).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace inductive {

class Communicator;

// The time of one epoch, and the estimated time left in the run from the epochs timed so far in this call.
class EpochClock {
 public:
  EpochClock(double elapsed_before, int epochs_before, int epochs_after)
      : start_(std::chrono::steady_clock::now()),
        elapsed_before_(elapsed_before),
        epochs_before_(epochs_before),
        epochs_after_(epochs_after) {}
  // Seconds since the epoch began. The last reading is the epoch's time: read it once evaluation is done.
  double seconds() {
    last_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    return last_;
  }
  // Seconds left for the epochs after this one, at the mean time per epoch of this call (the last reading included).
  double eta() const { return (elapsed_before_ + last_) / (epochs_before_ + 1) * epochs_after_; }
  double last_reading() const { return last_; }

 private:
  std::chrono::steady_clock::time_point start_;
  double elapsed_before_;
  int epochs_before_, epochs_after_;
  double last_ = 0;
};

// What a method supplies to the loop (callables capture the trainer's state; the optional ones may be empty).
struct EpochHooks {
  std::function<bool(int epoch)> stop_before;  // optional: true ends the run before this epoch
  std::function<void(int epoch)> begin_epoch;  // optional
  std::function<void(const std::vector<int>& order, int begin, int end, std::mt19937_64& rng)> step;
  std::function<void(int epoch, EpochClock& clock)> end_epoch;
  std::function<uint64_t()> parameter_hash;                    // needed with several ranks
  std::function<void(int epoch, bool write)> save_checkpoint;  // needed when checkpointing
  std::function<void(int epoch)> report_epoch;                 // optional
};

struct EpochLoop {
  int first = 1, last = 0;  // epochs first..last, 1-based; nothing runs when first > last
  int n = 0;                // training examples
  int batch_size = 1;
  bool shuffle = true;
  uint64_t seed = 0, seed_stride = 1;
  bool checkpoint = false;               // save checkpoints (a path was given)
  int checkpoint_every = 1;              // and the last epoch's
  Communicator* communicator = nullptr;  // null or one rank: no agreement check, this process writes
  // Several ranks: their parameters' hashes are compared after every epoch and, when > 0, every this many steps
  // (counted over the run), so a divergence stops a long epoch early, naming the step.
  int rank_check_every = 0;
  std::string who;  // names the run in errors ("otke train")
};

void run_epoch_loop(const EpochLoop& loop, const EpochHooks& hooks);

}  // namespace inductive
