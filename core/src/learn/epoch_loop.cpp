// The trainers' epoch loop (see inductive/epoch_loop.h).
#include "inductive/epoch_loop.h"

#include <algorithm>
#include <numeric>

#include "inductive/communicator.h"
#include "inductive/error.h"

namespace inductive {

void run_epoch_loop(const EpochLoop& loop, const EpochHooks& hooks) {
  INDUCTIVE_CHECK(loop.n >= 1 && loop.batch_size >= 1 && loop.checkpoint_every >= 1, ErrorCode::kInvalidArgument,
                  loop.who, ": needs at least one example, a batch size >= 1 and checkpoint_every >= 1");
  Communicator* comm = loop.communicator && loop.communicator->size() > 1 ? loop.communicator : nullptr;
  const bool writer = !comm || comm->writer();
  INDUCTIVE_CHECK(loop.rank_check_every >= 0, ErrorCode::kInvalidArgument, loop.who,
                  ": the ranks' check interval must be >= 0 steps: got ", loop.rank_check_every);
  std::vector<int> order(loop.n);
  double elapsed = 0;
  int64_t steps = 0;
  for (int epoch = loop.first; epoch <= loop.last; ++epoch) {
    if (hooks.stop_before && hooks.stop_before(epoch)) break;
    EpochClock clock(elapsed, epoch - loop.first, loop.last - epoch);
    std::mt19937_64 rng(loop.seed * loop.seed_stride + static_cast<uint64_t>(epoch));
    std::iota(order.begin(), order.end(), 0);
    if (loop.shuffle) std::shuffle(order.begin(), order.end(), rng);
    if (hooks.begin_epoch) hooks.begin_epoch(epoch);
    for (int begin = 0; begin < loop.n; begin += loop.batch_size) {
      hooks.step(order, begin, std::min(loop.n, begin + loop.batch_size), rng);
      ++steps;
      if (comm && loop.rank_check_every > 0 && steps % loop.rank_check_every == 0)
        check_ranks_agree(
            *comm, hooks.parameter_hash(),
            loop.who + ": after step " + std::to_string(steps) + " (epoch " + std::to_string(epoch) + ")");
    }
    hooks.end_epoch(epoch, clock);
    elapsed += clock.last_reading();
    if (comm) check_ranks_agree(*comm, hooks.parameter_hash(), loop.who + ": after epoch " + std::to_string(epoch));
    if (loop.checkpoint && (epoch % loop.checkpoint_every == 0 || epoch == loop.last))
      hooks.save_checkpoint(epoch, writer);
    if (hooks.report_epoch) hooks.report_epoch(epoch);
  }
}

}  // namespace inductive
