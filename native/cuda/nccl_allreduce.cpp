// NcclAllreduce (nccl_allreduce.h): NCCL's entry points from dlopen, the bootstrap over the Communicator, and the
// two streams.
#include "nccl_allreduce.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include "inductive/error.h"

#if __has_include(<nccl.h>) && !defined(INDUCTIVE_WITHOUT_NCCL)  // the macro: to compile the fallback here
#include <nccl.h>
#define INDUCTIVE_NCCL_HEADERS 1
#endif

namespace inductive::cuda {

#ifdef INDUCTIVE_NCCL_HEADERS
namespace {

// The entry points we use, resolved once from the shared library.
struct NcclApi {
  ncclResult_t (*get_version)(int*);
  ncclResult_t (*get_unique_id)(ncclUniqueId*);
  ncclResult_t (*comm_init_rank)(ncclComm_t*, int, ncclUniqueId, int);
  ncclResult_t (*all_reduce)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);
  ncclResult_t (*comm_destroy)(ncclComm_t);
  ncclResult_t (*comm_abort)(ncclComm_t);
  const char* (*error_string)(ncclResult_t);
  std::string library;
};

const NcclApi& nccl() {
  static std::once_flag once;
  static NcclApi api{};
  static std::string failure;
  std::call_once(once, [] {
    const char* env = std::getenv("INDUCTIVE_NCCL_LIBRARY");
    const std::string name = env && *env ? env : "libnccl.so.2";
    void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* why = dlerror();
      failure = "cuda: data-parallel training on GPUs needs NCCL, and " + name + " does not load (" +
                (why ? why : "dlopen failed") +
                "): install NCCL (libnccl2, or the CUDA toolkit's lib64 on LD_LIBRARY_PATH) or set "
                "INDUCTIVE_NCCL_LIBRARY to its path";
      return;
    }
    auto sym = [&](const char* s) {
      void* f = dlsym(lib, s);
      if (!f && failure.empty()) failure = "cuda: " + name + " lacks " + s + " (an NCCL older than 2.4?)";
      return f;
    };
    api.get_version = reinterpret_cast<decltype(api.get_version)>(sym("ncclGetVersion"));
    api.get_unique_id = reinterpret_cast<decltype(api.get_unique_id)>(sym("ncclGetUniqueId"));
    api.comm_init_rank = reinterpret_cast<decltype(api.comm_init_rank)>(sym("ncclCommInitRank"));
    api.all_reduce = reinterpret_cast<decltype(api.all_reduce)>(sym("ncclAllReduce"));
    api.comm_destroy = reinterpret_cast<decltype(api.comm_destroy)>(sym("ncclCommDestroy"));
    api.comm_abort = reinterpret_cast<decltype(api.comm_abort)>(sym("ncclCommAbort"));
    api.error_string = reinterpret_cast<decltype(api.error_string)>(sym("ncclGetErrorString"));
    api.library = name;
  });
  INDUCTIVE_CHECK(failure.empty(), ErrorCode::kBackend, failure);
  return api;
}

void check_nccl(ncclResult_t status, const char* call) {
  if (status == ncclSuccess) return;
  INDUCTIVE_FAIL(ErrorCode::kBackend, "cuda: ", call, ": ", nccl().error_string(status));
}

}  // namespace

struct NcclAllreduce::State {
  int device = 0;
  cudaStream_t compute = nullptr;
  Stream comm_stream;
  cudaEvent_t bucket_ready = nullptr, sums_done = nullptr;
  ncclComm_t comm = nullptr;
  bool pending = false;
};

NcclAllreduce::NcclAllreduce(Communicator& comm, int device, cudaStream_t compute) : ranks_(comm.size()) {
  const NcclApi& api = nccl();  // every rank fails here alike when NCCL is missing, before any collective call
  ncclUniqueId id{};
  if (comm.writer()) check_nccl(api.get_unique_id(&id), "ncclGetUniqueId");
  comm.broadcast_from_writer(&id, sizeof(id));
  check(cudaSetDevice(device), "cudaSetDevice");
  s_ = std::make_unique<State>();
  s_->device = device;
  s_->compute = compute;
  check(cudaEventCreateWithFlags(&s_->bucket_ready, cudaEventDisableTiming), "cudaEventCreate");
  check(cudaEventCreateWithFlags(&s_->sums_done, cudaEventDisableTiming), "cudaEventCreate");
  check_nccl(api.comm_init_rank(&s_->comm, comm.size(), id, comm.rank()), "ncclCommInitRank");
}

NcclAllreduce::~NcclAllreduce() {
  if (!s_) return;
  (void)cudaSetDevice(s_->device);
  (void)cudaStreamSynchronize(s_->comm_stream.get());
  // Destroy waits for the peers' pending operations; abort does not (this rank is leaving on an error).
  if (s_->comm) (void)(s_->pending ? nccl().comm_abort(s_->comm) : nccl().comm_destroy(s_->comm));
  (void)cudaEventDestroy(s_->bucket_ready);
  (void)cudaEventDestroy(s_->sums_done);
}

void NcclAllreduce::sum(double* data, int64_t count) {
  if (count <= 0) return;
  check_nccl(nccl().all_reduce(data, data, static_cast<size_t>(count), ncclDouble, ncclSum, s_->comm, s_->compute),
             "ncclAllReduce");
}

void NcclAllreduce::start_gradient_sum(float* data, int64_t count) {
  if (count <= 0) return;
  check(cudaEventRecord(s_->bucket_ready, s_->compute), "cudaEventRecord");
  check(cudaStreamWaitEvent(s_->comm_stream.get(), s_->bucket_ready, 0), "cudaStreamWaitEvent");
  check_nccl(
      nccl().all_reduce(data, data, static_cast<size_t>(count), ncclFloat, ncclSum, s_->comm, s_->comm_stream.get()),
      "ncclAllReduce");
  s_->pending = true;
}

void NcclAllreduce::finish_gradients() {
  if (!s_->pending) return;
  check(cudaEventRecord(s_->sums_done, s_->comm_stream.get()), "cudaEventRecord");
  check(cudaStreamWaitEvent(s_->compute, s_->sums_done, 0), "cudaStreamWaitEvent");
  s_->pending = false;
}

std::string nccl_version() {
  const NcclApi& api = nccl();
  int code = 0;
  check_nccl(api.get_version(&code), "ncclGetVersion");
  // Since 2.9: major * 10000 + minor * 100 + patch.
  return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." + std::to_string(code % 100) +
         " (" + api.library + ")";
}

#else  // a CUDA toolkit without nccl.h

struct NcclAllreduce::State {};

NcclAllreduce::NcclAllreduce(Communicator&, int, cudaStream_t) {
  INDUCTIVE_FAIL(ErrorCode::kBackend,
                 "cuda: this build found no nccl.h, so data-parallel training on GPUs is off: install NCCL's "
                 "headers (libnccl-dev) and rebuild");
}
NcclAllreduce::~NcclAllreduce() = default;
void NcclAllreduce::sum(double*, int64_t) {}
void NcclAllreduce::start_gradient_sum(float*, int64_t) {}
void NcclAllreduce::finish_gradients() {}
std::string nccl_version() {
  INDUCTIVE_FAIL(ErrorCode::kBackend, "cuda: this build found no nccl.h (install libnccl-dev and rebuild)");
}

#endif

}  // namespace inductive::cuda
