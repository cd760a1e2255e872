// Builders of the aux rows the x86 strip kernels read (layouts in
// x86_kernels.h). Portable code: it runs once per token and matmul call,
// O(n_in), and is compiled (unused) on every architecture.
#include <cstring>

#include "kernels/ref/vec_dot.h"
#include "kernels/x86/x86_kernels.h"
#include "tensor/blocks.h"
#include "tensor/quant.h"

namespace kazeia::kernels::x86 {
namespace {

int quant_sum(const int8_t* q, int n) {
  int s = 0;
  for (int j = 0; j < n; ++j) s += q[j];
  return s;
}

void put_word(uint8_t* out, int64_t i, uint32_t v) { std::memcpy(out + 4 * i, &v, 4); }

}  // namespace

size_t legacy_aux_bytes(int64_t n_in) { return static_cast<size_t>(n_in / kQK) * 8; }
size_t pairs32_aux_bytes(int64_t n_in) { return static_cast<size_t>(n_in / kQK_K) * 4 * 4; }
size_t corr16_aux_bytes(int64_t n_in) { return static_cast<size_t>(n_in / kQK_K) * 16 * 4; }

template <int kOffset>
void legacy_aux(int64_t n_in, const uint8_t* q_row, uint8_t* aux_row) {
  for (int64_t ib = 0; ib < n_in / kQK; ++ib) {
    BlockQ8_0 b;
    std::memcpy(&b, q_row + ib * sizeof(BlockQ8_0), sizeof(b));
    LegacyAux a{fp16_to_fp32(b.d), -kOffset * quant_sum(b.qs, kQK)};
    std::memcpy(aux_row + ib * sizeof(a), &a, sizeof(a));
  }
}

void legacy1_aux(int64_t n_in, const uint8_t* q_row, uint8_t* aux_row) {
  for (int64_t ib = 0; ib < n_in / kQK; ++ib) {
    ref::BlockQ8_1 b;
    std::memcpy(&b, q_row + ib * sizeof(b), sizeof(b));
    Legacy1Aux a{fp16_to_fp32(b.d), fp16_to_fp32(b.s)};
    std::memcpy(aux_row + ib * sizeof(a), &a, sizeof(a));
  }
}

void pairs32_aux(int64_t n_in, const uint8_t* q_row, uint8_t* aux_row) {
  for (int64_t ib = 0; ib < n_in / kQK_K; ++ib) {
    BlockQ8_K b;
    std::memcpy(&b, q_row + ib * sizeof(BlockQ8_K), sizeof(b));
    for (int p = 0; p < 4; ++p) {
      // |sum of 32 quants| <= 32 * 128 fits int16.
      const int lo = b.bsums[4 * p] + b.bsums[4 * p + 1];
      const int hi = b.bsums[4 * p + 2] + b.bsums[4 * p + 3];
      put_word(aux_row, 4 * ib + p,
               static_cast<uint16_t>(static_cast<int16_t>(lo)) |
                   (static_cast<uint32_t>(static_cast<uint16_t>(static_cast<int16_t>(hi))) << 16));
    }
  }
}

template <int kOffset>
void corr16_aux(int64_t n_in, const uint8_t* q_row, uint8_t* aux_row) {
  for (int64_t ib = 0; ib < n_in / kQK_K; ++ib) {
    BlockQ8_K b;
    std::memcpy(&b, q_row + ib * sizeof(BlockQ8_K), sizeof(b));
    for (int g = 0; g < 16; ++g) {
      put_word(aux_row, 16 * ib + g, static_cast<uint32_t>(-kOffset * b.bsums[g]));
    }
  }
}

template void legacy_aux<0>(int64_t, const uint8_t*, uint8_t*);
template void legacy_aux<8>(int64_t, const uint8_t*, uint8_t*);
template void legacy_aux<16>(int64_t, const uint8_t*, uint8_t*);
template void legacy_aux<128>(int64_t, const uint8_t*, uint8_t*);
template void corr16_aux<4>(int64_t, const uint8_t*, uint8_t*);
template void corr16_aux<32>(int64_t, const uint8_t*, uint8_t*);

}  // namespace kazeia::kernels::x86
