// SPDX-License-Identifier: Apache-2.0
// The jpeg format's samples: images generated from the seed (smooth low-frequency content plus a
// little noise, so they compress like photographs rather than like noise), encoded with TurboJPEG at
// quality 90, and per sample decoded -> float in [0,1] -> per-channel mean/std normalisation ->
// a random horizontal flip seeded by (seed, epoch, sample), laid out C x H x W as torchvision's
// ToTensor does. The Python reference does the same with PIL (workloads/python_reference.py).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace ingero::workloads::jpeg {

// ImageNet's per-channel statistics, the usual Normalize().
inline constexpr float kMean[3] = {0.485f, 0.456f, 0.406f};
inline constexpr float kStd[3] = {0.229f, 0.224f, 0.225f};

// size x size x 3 bytes (RGB, row-major), the same for the same (seed, index) everywhere.
std::vector<uint8_t> generate_image(int64_t size, uint64_t seed, int64_t index);
Result<std::string> encode(const std::vector<uint8_t>& rgb, int64_t size, int quality);

// splitmix64's finaliser over (seed, epoch, index): the flip is its lowest bit.
bool flips(uint64_t seed, int epoch, int64_t index);

// A TurboJPEG decompressor (one per thread: the handle is not shared).
class Decoder {
 public:
  Decoder();
  ~Decoder();
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;
  // Decodes a size x size JPEG into rgb (size * size * 3). libjpeg's warnings (premature end of
  // data, corrupt segments) are errors.
  Status decode(std::string_view jpeg, int64_t size, uint8_t* rgb);

 private:
  void* handle_;
};

// rgb (H x W x 3 bytes) -> out (3 x H x W floats): /255, (x - mean) / std, mirrored when flip.
void transform(const uint8_t* rgb, int64_t size, bool flip, float* out);

}  // namespace ingero::workloads::jpeg
