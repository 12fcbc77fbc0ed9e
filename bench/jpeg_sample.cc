// SPDX-License-Identifier: Apache-2.0
// The per-sample cost of a jpeg dataset's sample (--format jpeg): TurboJPEG decode, and the
// transform after it (/255, per-channel mean/std, horizontal flip, C x H x W), per image size.
// No LibTorch: the same functions the workloads call (workloads/jpeg_samples.h).
#include <benchmark/benchmark.h>

#include <vector>

#include "workloads/dataset_files.h"
#include "workloads/jpeg_samples.h"

namespace jpeg = ingero::workloads::jpeg;

namespace {

std::string encoded(int64_t size) {
  auto j = jpeg::encode(jpeg::generate_image(size, 0, 1), size, ingero::workloads::dataset::kJpegQuality);
  return j ? *j : std::string();
}

void BM_Decode(benchmark::State& state) {
  const int64_t size = state.range(0);
  const std::string data = encoded(size);
  std::vector<uint8_t> rgb(static_cast<size_t>(size * size * 3));
  jpeg::Decoder decoder;
  for (auto _ : state) {
    if (!decoder.decode(data, size, rgb.data())) state.SkipWithError("decode failed");
    benchmark::DoNotOptimize(rgb.data());
  }
  state.counters["jpeg_bytes"] = static_cast<double>(data.size());
}

void BM_Transform(benchmark::State& state) {
  const int64_t size = state.range(0);
  const std::vector<uint8_t> rgb = jpeg::generate_image(size, 0, 1);
  std::vector<float> out(rgb.size());
  bool flip = false;
  for (auto _ : state) {
    jpeg::transform(rgb.data(), size, flip = !flip, out.data());
    benchmark::DoNotOptimize(out.data());
  }
}

}  // namespace

BENCHMARK(BM_Decode)->Arg(32)->Arg(64)->Arg(224);
BENCHMARK(BM_Transform)->Arg(32)->Arg(64)->Arg(224);
BENCHMARK_MAIN();
