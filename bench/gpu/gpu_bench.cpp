// bench/gpu/gpu_bench.cpp - what the CUDA backend delivers on the OTKE benchmark shapes, next to one CPU thread.
//
// Workload (bench/otke_bench.cpp's, and bench/gpu/torch_otke.py's for PyTorch): batch 64 sets, n uniform in
// [200, 1000] (n_max 1000, masked), features of dimension k = 128 or 512 with unit-norm rows, one reference of
// p = 64 or 10 supports, eps 0.5, 10 log-domain Sinkhorn iterations on the similarities S = psi z^T.
//
// Sections (one JSON line per measurement with --json, a table on stdout):
//   sinkhorn     the batched Sinkhorn forward alone: cuda (device pointers, no transfers) vs cpu (1 thread)
//   otke_embed   the model's logits for a batch (upload, S = psi z^T, Sinkhorn, pooling, head, download)
//   otke_train   one training step (forward, backward through the unrolled Sinkhorn, Adam on references and head),
//                the backend seam's OtkeStepper on each side, the training set resident on the device (as PyTorch's);
//                peak MB = the CUDA stepper's step buffers, parameters and moments
//   otke_train_streamed  the same step with the batch uploaded from host memory (a training set too large for the
//                device)
//   graphit_infer, graphit_train  GraphiT configurations (a) and (b) of bench/graphit_bench.cpp (the workloads of
//                bench/graphit_workload.h, which bench/torch_graphit.py --device cuda runs for PyTorch):
//                evaluation-mode outputs of a batch (uploaded, forward, downloaded), and one training step of the
//                backend seam's GraphitStepper (forward, backward, AdamW); items per second are graphs
// --only CONFIG restricts to one OTKE shape or to graphit-a / graphit-b.
// Device times are medians of CUDA-event-timed repeats after a warm-up; the roofline fractions use the card's
// FP32 rate (SMs x 128 lanes x 2 x clock) and DRAM bandwidth (bus width x memory clock x 2) read from the device.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>

#include "../graphit_workload.h"
#include "blas.h"
#include "cuda_backend.h"
#include "cuda_util.h"
#include "graphit_device_pass.h"
#include "graphit_exec_cuda.h"
#include "graphit_stepper_cuda.h"
#include "inductive/graphit_stepper.h"
#include "inductive/error.h"
#include "inductive/linalg.h"
#include "inductive/otke_stepper.h"
#include "otke_stepper_cuda.h"
#include "inductive/random.h"
#include "inductive/set_batch.h"
#include "inductive/sinkhorn.h"
#include "sinkhorn_kernels.h"

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace {

using namespace inductive;

struct Shape {
  const char* name;
  int k, p;
};
constexpr Shape kShapes[] = {{"k128p64", 128, 64}, {"k512p64", 512, 64}, {"k128p10", 128, 10}, {"k512p10", 512, 10}};
constexpr int kBatch = 64, kNMax = 1000, kIters = 10;

struct Device {
  std::string name;
  double fp32_flops = 0;  // per second
  double bandwidth = 0;   // bytes per second
};

Device describe_device() {
  Device d;
  cudaDeviceProp prop{};
  cuda::check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  int clock_khz = 0, mem_khz = 0, bus_bits = 0;
  cuda::check(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0), "cudaDeviceGetAttribute");
  cuda::check(cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, 0), "cudaDeviceGetAttribute");
  cuda::check(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, 0), "cudaDeviceGetAttribute");
  d.name = prop.name;
  d.fp32_flops = static_cast<double>(prop.multiProcessorCount) * 128 * 2 * clock_khz * 1e3;
  d.bandwidth = 2.0 * mem_khz * 1e3 * bus_bits / 8;
  return d;
}

SetBatch make_features(int k, uint64_t seed) {
  std::mt19937_64 rng(seed);
  SetBatch x(kBatch, kNMax, k);
  for (int b = 0; b < kBatch; ++b) {
    x.n[b] = 200 + static_cast<int>(uniform_below(rng, 801));
    for (int i = 0; i < x.n[b]; ++i) {
      float* r = x.row(b, i);
      double norm = 0;
      for (int c = 0; c < k; ++c) {
        r[c] = static_cast<float>(standard_normal(rng));
        norm += double(r[c]) * r[c];
      }
      for (int c = 0; c < k; ++c) r[c] = static_cast<float>(r[c] / std::sqrt(norm));
    }
  }
  return x;
}

MatF make_reference(int p, int k, uint64_t seed) {
  std::mt19937_64 rng(seed);
  MatF z(p, k);
  for (Eigen::Index i = 0; i < z.size(); ++i) z.data()[i] = static_cast<float>(standard_normal(rng) / std::sqrt(k));
  return z;
}

// Similarities S_b = psi_b z^T, [batch, n_max, p], padding 0.
std::vector<float> similarities(const SetBatch& x, const MatF& z) {
  const int p = static_cast<int>(z.rows());
  std::vector<float> s(static_cast<size_t>(x.batch) * x.n_max * p, 0.0f);
  for (int b = 0; b < x.batch; ++b)
    MapF(s.data() + static_cast<int64_t>(b) * x.n_max * p, x.n[b], p).noalias() =
        CMapF(x.row(b, 0), x.n[b], x.dim) * z.transpose();
  return s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <typename F>
double median_host_seconds(F&& body, double min_time = 1.0, int min_repeats = 3) {
  std::vector<double> t;
  double total = 0;
  body();  // warm-up
  while (static_cast<int>(t.size()) < min_repeats || total < min_time) {
    const auto t0 = std::chrono::steady_clock::now();
    body();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    total += t.back();
  }
  return median(t);
}

// Median seconds of `body` (which enqueues work on `stream`) timed by CUDA events.
template <typename F>
double median_device_seconds(cudaStream_t stream, F&& body, int repeats = 30) {
  cudaEvent_t start, stop;
  cuda::check(cudaEventCreate(&start), "cudaEventCreate");
  cuda::check(cudaEventCreate(&stop), "cudaEventCreate");
  for (int w = 0; w < 3; ++w) body();
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    cuda::check(cudaEventRecord(start, stream), "cudaEventRecord");
    body();
    cuda::check(cudaEventRecord(stop, stream), "cudaEventRecord");
    cuda::check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    cuda::check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    t.push_back(ms * 1e-3);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return median(t);
}

struct Row {
  std::string section, config, backend;
  double seconds = 0, flops = 0, bytes = 0, peak_mb = -1;
  int items = kBatch;  // per timed call: sets (OTKE), graphs (GraphiT)
};

void emit(const Row& r, const Device& d, std::FILE* json) {
  const double sets = r.items / r.seconds;
  const double fp = r.backend == "cuda" ? r.flops / r.seconds / d.fp32_flops : -1;
  const double bw = r.backend == "cuda" ? r.bytes / r.seconds / d.bandwidth : -1;
  std::printf("%-10s %-8s %-6s %12.0f %10.3f %9.1f%% %9.1f%% %9.0f\n", r.section.c_str(), r.config.c_str(),
              r.backend.c_str(), sets, r.seconds * 1e3, 100 * fp, 100 * bw, r.peak_mb);
  if (json)
    std::fprintf(json,
                 "{\"section\": \"%s\", \"config\": \"%s\", \"backend\": \"%s\", \"device\": \"%s\", \"sets_per_s\": "
                 "%.6g, \"items_per_s\": %.6g, \"ms\": %.6g, \"flops\": %.6g, \"bytes\": %.6g, \"fp32_roofline\": "
                 "%.4g, \"bandwidth_roofline\": %.4g, \"peak_mb\": %.6g}\n",
                 r.section.c_str(), r.config.c_str(), r.backend.c_str(),
                 r.backend == "cuda" ? d.name.c_str() : "cpu (1 thread)", sets, sets, r.seconds * 1e3, r.flops, r.bytes,
                 fp, bw, r.peak_mb);
}

std::string g_only;  // --only CONFIG: one shape (profiling runs)
bool wanted(const Shape& sh) { return g_only.empty() || g_only == sh.name; }

void sinkhorn_section(const Device& d, std::FILE* json) {
  SinkhornOptions o;
  o.eps = 0.5;
  o.max_iter = kIters;
  o.similarity = true;
  cuda::Stream stream;
  for (const Shape& sh : kShapes) {
    if (!wanted(sh)) continue;
    const SetBatch x = make_features(sh.k, 11);
    const std::vector<float> s = similarities(x, make_reference(sh.p, sh.k, 13));
    const size_t bytes = s.size() * sizeof(float);
    int64_t entries = 0;
    for (int b = 0; b < kBatch; ++b) entries += static_cast<int64_t>(x.n[b]) * sh.p;
    // Per entry: two LSE passes per iteration (an exp each) and the plan pass; bytes: the similarities read and the
    // plan written once (the iterations stream the logits from L2 when the batch fits there).
    const double flops = static_cast<double>(entries) * (2 * kIters + 1) * 4;
    const double traffic = static_cast<double>(entries) * 8;

    std::vector<float> plan(s.size());
    SinkhornProblem<float> pr{s.data(), kBatch, kNMax, sh.p, x.n.data(), nullptr, nullptr, nullptr};
#if defined(_OPENMP)
    omp_set_num_threads(1);
#endif
    const double cpu = median_host_seconds([&] { sinkhorn_log(pr, o, SinkhornOutput<float>{plan.data()}); });
    emit({"sinkhorn", sh.name, "cpu", cpu, flops, traffic, -1}, d, json);

    cuda::DeviceBuffer ds = cuda::upload(s.data(), bytes, stream.get());
    cuda::DeviceBuffer dn = cuda::upload(x.n.data(), x.n.size() * sizeof(int32_t), stream.get());
    cuda::DeviceBuffer dplan(bytes);
    const cuda::SinkhornLaunch launch{stream.get(), true};
    cuda::DeviceBuffer work(cuda::sinkhorn_workspace_bytes(kBatch, kNMax, sh.p, launch));
    SinkhornProblem<float> dp = pr;
    dp.cost = ds.as<float>();
    dp.n = dn.as<int32_t>();
    const double gpu = median_device_seconds(stream.get(), [&] {
      cuda::sinkhorn_log_device(dp, o, SinkhornOutput<float>{dplan.as<float>()}, work.data(), work.bytes(), launch);
    });
    emit({"sinkhorn", sh.name, "cuda", gpu, flops, traffic, -1}, d, json);
  }
}

OtkeModel bench_model(int k, int p) {
  OtkeModel m;
  m.config.input_type = OtkeInput::kVectors;
  m.config.input_dim = k;
  m.config.embedding = OtkeEmbedding::kIdentity;
  m.config.pooling = OtkePooling::kOtk;
  m.config.otk.p = p;
  m.config.otk.q = 1;
  m.config.otk.eps = 0.5;
  m.config.otk.iters = kIters;
  m.config.classes = 2;
  m.pooling = OtkPooling({make_reference(p, k, 13)}, m.config.otk);
  m.head.weight = MatF::Zero(2, m.config.output_dim());
  m.head.bias = VecF::Zero(2);
  return m;
}

void otke_sections(const Device& d, std::FILE* json) {
  for (const Shape& sh : kShapes) {
    if (!wanted(sh)) continue;
    const SetBatch x = make_features(sh.k, 11);
    std::vector<int32_t> y(kBatch);
    for (int b = 0; b < kBatch; ++b) y[b] = b % 2;
    double rows = 0;
    for (int b = 0; b < kBatch; ++b) rows += x.n[b];
    // Useful work: two products of rows x p x k forward (S, Phi), two backward (dL/dP, dz); Sinkhorn ~4 flops per
    // entry and pass (2 iters + 1 passes forward, 2 iters backward, ~1.5x heavier). Bytes: each product streams the
    // features once and every Sinkhorn pass reads an [n, p] matrix.
    const double mat = rows * sh.p;
    const double embed_flops = 2 * 2 * mat * sh.k + 4 * mat * (2 * kIters + 1);
    const double train_flops = 4 * 2 * mat * sh.k + 4 * mat * (2 * kIters + 1) + 6 * mat * 2 * kIters;
    const double embed_bytes = 4 * (2 * rows * sh.k + mat * (2 * kIters + 2));
    const double train_bytes = 4 * (4 * rows * sh.k + mat * (4 * kIters + 6));
#if defined(_OPENMP)
    omp_set_num_threads(1);
#endif
    OtkeModel cpu_model = bench_model(sh.k, sh.p);
    Adam cpu_adam(AdamOptions{0.01});
    const auto cpu = make_cpu_otke_stepper(cpu_model, cpu_adam, OtkeLossOptions{});
    emit({"otke_embed", sh.name, "cpu", median_host_seconds([&] { cpu->logits(x); }), embed_flops, embed_bytes, -1}, d,
         json);
    emit({"otke_train", sh.name, "cpu", median_host_seconds([&] { cpu->step(x, y, 0.01); }), train_flops, train_bytes,
          -1},
         d, json);

    const OtkeModel start = bench_model(sh.k, sh.p);
    Adam gpu_adam(AdamOptions{0.01});
    cuda::CudaOtkeStepper gpu(0, start, gpu_adam, OtkeLossOptions{});
    // Host-timed (each call synchronises to return its result). Embedding and the streamed step upload the batch
    // from host memory; the resident step (how `otke train` runs when the training set fits on the device, and
    // how the PyTorch baseline holds its data) sends only indices and labels.
    const double embed = median_host_seconds([&] { gpu.logits(x); }, 1.0, 20);
    const double streamed = median_host_seconds([&] { gpu.step(x, y, 0.01); }, 1.0, 20);
    std::vector<int> all(kBatch);
    for (int b = 0; b < kBatch; ++b) all[b] = b;
    gpu.bind(x);
    const double resident = median_host_seconds([&] { gpu.step_on(all, y, 0.01); }, 1.0, 20);
    const double mb = gpu.device_bytes() / 1048576.0;
    emit({"otke_embed", sh.name, "cuda", embed, embed_flops, embed_bytes, mb}, d, json);
    emit({"otke_train", sh.name, "cuda", resident, train_flops, train_bytes, mb}, d, json);
    emit({"otke_train_streamed", sh.name, "cuda", streamed, train_flops, train_bytes, mb}, d, json);
  }
}

// Device memory in use now (all of this process's allocations and the context's).
double device_used_mb() {
  size_t free_bytes = 0, total = 0;
  cuda::check(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
  return static_cast<double>(total - free_bytes) / 1048576.0;
}

// GraphiT (a) and (b): a batch of graphs (graphit_bench's batches, in order) per timed call. FLOPs per graph as
// graphit_bench's roofline counts them (forward: the four d x d projections and the FFN, 2 n^2 d for scores and
// values; a training step ~3x); bytes: each layer's node activations (about 12 n d floats) read and written once,
// plus the heads' n x n probabilities, again ~3x for training.
void graphit_sections(const Device& d, std::FILE* json) {
  for (const bench::Setup& s : {bench::graphit_setup_a(), bench::graphit_setup_b()}) {
    const std::string config = std::string("graphit-") + s.key;
    if (!g_only.empty() && g_only != config) continue;
    const bench::Workload w = bench::make_workload(s);
    const GraphitConfig c = bench::model_config(s, true);
    const GraphitDataset train = bench::workload_dataset(w);
    double flops = 0, bytes = 0;
    for (const GraphitGraph& g : w.inputs) {
      const double n = g.num_nodes, dd = c.d;
      flops += c.layers * (6 * n * dd * dd + 4 * n * dd * c.ffn + 4 * n * n * dd);
      bytes += 4.0 * c.layers * (12 * n * dd + 2.0 * c.heads * n * n);
    }
    flops *= static_cast<double>(s.batch) / w.inputs.size();
    bytes *= static_cast<double>(s.batch) / w.inputs.size();
    std::vector<std::vector<int>> batches(bench::kBatches);
    for (int b = 0; b < bench::kBatches; ++b)
      for (int i = 0; i < s.batch; ++i) batches[b].push_back(b * s.batch + i);
    std::vector<int> order(train.size());
    for (int i = 0; i < train.size(); ++i) order[i] = i;
    GraphitTrainOptions o;
    o.batch_size = s.batch;
    o.adam = AdamOptions{1e-3, 0.9, 0.999, 1e-8, 0};
    std::mt19937_64 rng(1);
    int next = 0;
    const auto step = [&](GraphitStepper& st) {
      const int b = next++ % bench::kBatches;
      st.step(order, b * s.batch, (b + 1) * s.batch, 1e-3, rng);
    };
#if defined(_OPENMP)
    omp_set_num_threads(1);
#endif
    GraphitModel cpu_model = GraphitModel::create(c, 1);
    Adam cpu_adam(o.adam);
    const auto cpu = make_cpu_graphit_stepper(cpu_model, cpu_adam, train, o);
    const double cpu_infer = median_host_seconds([&] {
      const GraphitBatch batch = GraphitBatch::pack(c, w.inputs, batches[next++ % bench::kBatches]);
      cpu_model.forward(batch);
    });
    emit({"graphit_infer", config, "cpu", cpu_infer, flops, bytes, -1, s.batch}, d, json);
    emit({"graphit_train", config, "cpu", median_host_seconds([&] { step(*cpu); }), 3 * flops, 3 * bytes, -1, s.batch},
         d, json);

    const double before = device_used_mb();
    {  // Inference: one pass (parameters uploaded once), a batch uploaded, run and its outputs brought back per call.
      cuda::Stream stream;
      cuda::Blas blas{stream.get()};
      cuda::CudaExec exec;
      exec.stream = stream.get();
      exec.blas = &blas;
      const GraphitModel model = GraphitModel::create(c, 1);
      graphit_device::GraphitDevicePass<cuda::CudaExec> pass(exec, model);
      const double infer = median_host_seconds(
          [&] {
            pass.upload_batch(GraphitBatch::pack(c, w.inputs, batches[next++ % bench::kBatches]), false);
            pass.outputs();
          },
          1.0, 20);
      emit({"graphit_infer", config, "cuda", infer, flops, bytes, device_used_mb() - before, s.batch}, d, json);
    }
    GraphitModel gpu_model = GraphitModel::create(c, 1);
    Adam gpu_adam(o.adam);
    const auto gpu = cuda::make_cuda_graphit_stepper(0, gpu_model, gpu_adam, train, o);
    const double t = median_host_seconds([&] { step(*gpu); }, 1.0, 20);
    emit({"graphit_train", config, "cuda", t, 3 * flops, 3 * bytes, device_used_mb() - before, s.batch}, d, json);
  }
}

// --profile CONFIG: two resident training steps between cudaProfilerStart/Stop, for
// `ncu --profile-from-start off` (bench/gpu/check.sh): the per-kernel split of one step.
int profile_steps(const std::string& config) {
  for (const Shape& sh : kShapes) {
    if (config != sh.name) continue;
    const SetBatch x = make_features(sh.k, 11);
    std::vector<int32_t> y(kBatch);
    std::vector<int> all(kBatch);
    for (int b = 0; b < kBatch; ++b) y[b] = b % 2, all[b] = b;
    const OtkeModel start = bench_model(sh.k, sh.p);
    Adam adam(AdamOptions{0.01});
    cuda::CudaOtkeStepper gpu(0, start, adam, OtkeLossOptions{});
    gpu.bind(x);
    for (int w = 0; w < 3; ++w) gpu.step_on(all, y, 0.01);
    cuda::check(cudaProfilerStart(), "cudaProfilerStart");
    for (int r = 0; r < 2; ++r) gpu.step_on(all, y, 0.01);
    cuda::check(cudaProfilerStop(), "cudaProfilerStop");
    return 0;
  }
  std::fprintf(stderr, "error: unknown config '%s'\n", config.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string json_path, profile;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json" && i + 1 < argc) {
      json_path = argv[++i];
    } else if (a == "--profile" && i + 1 < argc) {
      profile = argv[++i];
    } else if (a == "--only" && i + 1 < argc) {
      g_only = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: gpu_bench [--json PATH] [--only CONFIG] [--profile CONFIG]   (CONFIG: k128p64, k512p64, "
                   "k128p10, k512p10; --only also graphit-a, graphit-b)\n");
      return 2;
    }
  }
  try {
    if (cuda::device_count() == 0) {
      std::fprintf(stderr, "error: gpu_bench needs a CUDA device\n");
      return 2;
    }
    cuda::check(cudaSetDevice(0), "cudaSetDevice");
    if (!profile.empty()) return profile_steps(profile);
    const Device d = describe_device();
    std::FILE* json = json_path.empty() ? nullptr : std::fopen(json_path.c_str(), "w");
    std::printf("device: %s, FP32 %.1f TFLOP/s, DRAM %.0f GB/s (from the device's attributes)\n", d.name.c_str(),
                d.fp32_flops * 1e-12, d.bandwidth * 1e-9);
    std::printf("%-10s %-8s %-6s %12s %10s %10s %10s %9s\n", "section", "config", "on", "sets/s", "ms", "FP32 roof",
                "BW roof", "peak MB");
    sinkhorn_section(d, json);
    otke_sections(d, json);
    graphit_sections(d, json);
    if (json) std::fclose(json);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return 0;
}
