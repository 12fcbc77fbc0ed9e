// SPDX-License-Identifier: Apache-2.0
#include "workloads/jpeg_samples.h"

#include <turbojpeg.h>

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace ingero::workloads::jpeg {

namespace {

uint64_t mix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// A small counter-based generator: values depend only on (seed, index, draw).
class Draws {
 public:
  Draws(uint64_t seed, int64_t index) : state_(mix(mix(seed) ^ static_cast<uint64_t>(index))) {}
  double uniform() { return static_cast<double>(mix(state_++) >> 11) / 9007199254740992.0; }

 private:
  uint64_t state_;
};

struct TjHandle {
  tjhandle h;
  ~TjHandle() {
    if (h) tjDestroy(h);
  }
};

}  // namespace

std::vector<uint8_t> generate_image(int64_t size, uint64_t seed, int64_t index) {
  Draws d(seed, index);
  // Per channel: a base level, a gradient and three waves of at most 1.5 cycles across the image;
  // then +-6 of noise.
  struct Wave { double fx, fy, phase, amp; };
  double base[3], gx[3], gy[3];
  Wave waves[3][3];
  for (int c = 0; c < 3; ++c) {
    base[c] = 60 + 130 * d.uniform();
    gx[c] = 60 * (d.uniform() - 0.5);
    gy[c] = 60 * (d.uniform() - 0.5);
    for (auto& w : waves[c]) w = Wave{0.3 + 1.2 * d.uniform(), 0.3 + 1.2 * d.uniform(), 6.2831853 * d.uniform(), 10 + 20 * d.uniform()};
  }
  std::vector<uint8_t> rgb(static_cast<size_t>(size * size * 3));
  const double inv = 1.0 / static_cast<double>(size);
  for (int64_t y = 0; y < size; ++y) {
    for (int64_t x = 0; x < size; ++x) {
      const double u = static_cast<double>(x) * inv, v = static_cast<double>(y) * inv;
      for (int c = 0; c < 3; ++c) {
        double value = base[c] + gx[c] * u + gy[c] * v;
        for (const auto& w : waves[c]) value += w.amp * std::sin(6.2831853 * (w.fx * u + w.fy * v) + w.phase);
        value += 12 * (d.uniform() - 0.5);
        rgb[static_cast<size_t>((y * size + x) * 3 + c)] = static_cast<uint8_t>(std::clamp(std::lround(value), 0L, 255L));
      }
    }
  }
  return rgb;
}

Result<std::string> encode(const std::vector<uint8_t>& rgb, int64_t size, int quality) {
  TjHandle tj{tjInitCompress()};
  if (!tj.h) return Error::failure("tjInitCompress failed");
  unsigned char* out = nullptr;
  unsigned long out_bytes = 0;
  const int s = static_cast<int>(size);
  if (tjCompress2(tj.h, rgb.data(), s, 0, s, TJPF_RGB, &out, &out_bytes, TJSAMP_420, quality, 0) != 0) {
    const std::string why = tjGetErrorStr2(tj.h);
    tjFree(out);
    return Error::failure("JPEG encoding failed: " + why);
  }
  std::string jpeg(reinterpret_cast<const char*>(out), out_bytes);
  tjFree(out);
  return jpeg;
}

bool flips(uint64_t seed, int epoch, int64_t index) {
  return (mix(mix(mix(seed) ^ static_cast<uint64_t>(epoch)) ^ static_cast<uint64_t>(index)) & 1) != 0;
}

Decoder::Decoder() : handle_(tjInitDecompress()) {}
Decoder::~Decoder() {
  if (handle_) tjDestroy(static_cast<tjhandle>(handle_));
}

Status Decoder::decode(std::string_view data, int64_t size, uint8_t* rgb) {
  auto* h = static_cast<tjhandle>(handle_);
  if (!h) return Error::failure("tjInitDecompress failed");
  int width = 0, height = 0, subsampling = 0, colorspace = 0;
  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
  if (tjDecompressHeader3(h, bytes, data.size(), &width, &height, &subsampling, &colorspace) != 0)
    return Error::failure(fmt::format("JPEG header: {}", tjGetErrorStr2(h)));
  if (width != size || height != size)
    return Error::failure(fmt::format("JPEG is {}x{}, the dataset's images are {}x{}", width, height, size, size));
  // TJFLAG_STOPONWARNING: a warning (e.g. premature end of data) fails the call instead of
  // returning a half-grey image.
  if (tjDecompress2(h, bytes, data.size(), rgb, width, 0, height, TJPF_RGB, TJFLAG_STOPONWARNING) != 0)
    return Error::failure(fmt::format("JPEG decoding: {}", tjGetErrorStr2(h)));
  return {};
}

void transform(const uint8_t* rgb, int64_t size, bool flip, float* out) {
  const int64_t plane = size * size;
  for (int c = 0; c < 3; ++c) {
    const float mean = kMean[c], std = kStd[c];
    float* dst = out + c * plane;
    for (int64_t y = 0; y < size; ++y) {
      const uint8_t* row = rgb + y * size * 3 + c;
      for (int64_t x = 0; x < size; ++x) {
        const int64_t from = flip ? size - 1 - x : x;
        dst[y * size + x] = (static_cast<float>(row[from * 3]) / 255.0f - mean) / std;
      }
    }
  }
}

}  // namespace ingero::workloads::jpeg
