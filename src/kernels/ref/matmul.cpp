// Matrix views, the reference matrix product and the embedding lookup.
//
// matmul = convert the activations once (the table's quantizers, bytes
// identical to quantize_activations), then strip kernels from the kernel
// table (dispatch.h): the active one for matmul(), any for matmul_with().
// The scalar table's strips call the reference dot product per (row,
// token). Strips are split across the thread pool; every output element is
// computed by one strip whose arithmetic does not depend on the split, so
// results are identical for any pool size.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/checked_math.h"
#include "base/scratch.h"
#include "base/thread_pool.h"
#include "kernels/dispatch.h"
#include "kernels/kernels.h"
#include "kernels/ref/vec_dot.h"
#include "tensor/quant.h"

namespace kazeia::kernels {
namespace {

std::string type_name(TensorType t) { return std::string(tensor_type_name(t)); }

// A per-thread activation buffer that survives between calls, so decode does
// not allocate on every matmul. It is moved out while in use: a nested
// matmul on the same thread finds it empty and allocates its own.
// The tile path's interleaved tokens keep a second one.
thread_local std::vector<uint8_t> t_act_buffer;
thread_local std::vector<uint8_t> t_tile_buffer;

class ActivationBuffer {
 public:
  explicit ActivationBuffer(size_t bytes, std::vector<uint8_t>& slot = t_act_buffer)
      : slot_(slot), buf_(std::move(slot)) {
    if (buf_.size() < bytes) buf_.resize(bytes);
  }
  ~ActivationBuffer() {
    if (buf_.capacity() > slot_.capacity()) slot_ = std::move(buf_);
  }
  ActivationBuffer(const ActivationBuffer&) = delete;
  ActivationBuffer& operator=(const ActivationBuffer&) = delete;
  uint8_t* data() { return buf_.data(); }

 private:
  std::vector<uint8_t>& slot_;
  std::vector<uint8_t> buf_;
};

size_t round_up64(size_t n) { return (n + 63) & ~size_t{63}; }
uint8_t* align64(uint8_t* p) {
  return p + ((64 - reinterpret_cast<uintptr_t>(p) % 64) % 64);
}

// Per-thread outputs of an interleaved strip, before they are scattered, and
// of a fused gate / up strip pair, before they are combined.
float* thread_strip_out(size_t n) {
  thread_local std::vector<float, CacheLineAllocator<float>> buf;
  if (buf.size() < n) buf.resize(n);
  return buf.data();
}

// Per-thread scratch for the strip kernels (the unpacked weight panel of
// prefill), kept between calls; 64-byte aligned.
uint8_t* thread_scratch(size_t bytes) {
  if (bytes == 0) return nullptr;
  thread_local std::vector<uint8_t> t_scratch;
  if (t_scratch.size() < bytes + 64) t_scratch.resize(bytes + 64);
  return align64(t_scratch.data());
}

Status check_view(const MatrixView& w, const char* op) {
  const TensorTypeTraits& t = tensor_type_traits(w.type);
  if (w.data == nullptr) return InvalidArgument(std::string(op) + ": matrix data is null");
  if (w.n_in <= 0 || w.n_out <= 0) {
    return InvalidArgument(std::string(op) + ": matrix dims [" + std::to_string(w.n_in) + ", " +
                           std::to_string(w.n_out) + "] must be positive");
  }
  if (w.n_in % t.block_size != 0) {
    return InvalidArgument(std::string(op) + ": " + type_name(w.type) + " row length " +
                           std::to_string(w.n_in) + " is not a multiple of the block size " +
                           std::to_string(t.block_size));
  }
  const size_t packed = type_row_bytes(w.type, w.n_in);
  if (w.row_bytes < packed) {
    return InvalidArgument(std::string(op) + ": row_bytes " + std::to_string(w.row_bytes) +
                           " < " + std::to_string(packed) + " bytes of " + std::to_string(w.n_in) +
                           " " + type_name(w.type) + " values");
  }
  return OkStatus();
}

}  // namespace

Result<MatrixView> make_matrix_view(TensorType type, const void* data, int64_t n_in, int64_t n_out,
                                    size_t data_bytes) {
  if (!tensor_type_traits(static_cast<uint32_t>(type))) {
    return InvalidArgument("matrix view: unknown tensor type id " +
                           std::to_string(static_cast<uint32_t>(type)));
  }
  const TensorTypeTraits& t = tensor_type_traits(type);
  if (data == nullptr) return InvalidArgument("matrix view: data is null");
  if (n_in <= 0 || n_out <= 0) {
    return InvalidArgument("matrix view: dims [" + std::to_string(n_in) + ", " +
                           std::to_string(n_out) + "] must be positive");
  }
  if (n_in % t.block_size != 0) {
    return InvalidArgument("matrix view: " + type_name(type) + " row length " +
                           std::to_string(n_in) + " is not a multiple of the block size " +
                           std::to_string(t.block_size));
  }
  const auto row = checked_mul(static_cast<uint64_t>(n_in / t.block_size), t.block_bytes);
  const auto total = row ? checked_mul(*row, static_cast<uint64_t>(n_out)) : std::nullopt;
  if (!total || *total > static_cast<uint64_t>(SIZE_MAX / 2)) {
    return InvalidArgument("matrix view: " + type_name(type) + " [" + std::to_string(n_in) + ", " +
                           std::to_string(n_out) + "] overflows the address space");
  }
  if (data_bytes != SIZE_MAX && *total > data_bytes) {
    return OutOfRange("matrix view: " + type_name(type) + " [" + std::to_string(n_in) + ", " +
                      std::to_string(n_out) + "] needs " + std::to_string(*total) +
                      " bytes, only " + std::to_string(data_bytes) + " available");
  }
  MatrixView v;
  v.type = type;
  v.data = static_cast<const uint8_t*>(data);
  v.n_in = n_in;
  v.n_out = n_out;
  v.row_bytes = static_cast<size_t>(*row);
  return v;
}

bool matmul_supported(TensorType weight_type) { return ref::vec_dot_fn(weight_type) != nullptr; }

namespace ref {

VecDotFn vec_dot_fn(TensorType weight_type) {
  switch (weight_type) {
    case TensorType::F32: return vec_dot_f32;
    case TensorType::F16: return vec_dot_f16;
    case TensorType::BF16: return vec_dot_bf16;
    case TensorType::Q4_0: return vec_dot_q4_0;
    case TensorType::Q4_1: return vec_dot_q4_1;
    case TensorType::Q5_0: return vec_dot_q5_0;
    case TensorType::Q5_1: return vec_dot_q5_1;
    case TensorType::Q8_0: return vec_dot_q8_0;
    case TensorType::Q2_K: return vec_dot_q2_K;
    case TensorType::Q3_K: return vec_dot_q3_K;
    case TensorType::Q4_K: return vec_dot_q4_K;
    case TensorType::Q5_K: return vec_dot_q5_K;
    case TensorType::Q6_K: return vec_dot_q6_K;
    default: return nullptr;
  }
}

}  // namespace ref

namespace {

// Matrices per shared conversion and parallel region (a model passes at
// most 4: the DeltaNet input projections).
constexpr size_t kMaxJobs = 8;

// Batches up to this many tokens walk the matrix as the table's
// decode_walk says (below).
constexpr int64_t kInterleaveMaxTokens = 4;

// Output size from which strips may write y with non-temporal stores.
constexpr uint64_t kStreamOutputBytes = uint64_t{1} << 20;

// Most chunks one matmul is split into (4 per thread, below).
constexpr int64_t kMaxChunks = 256;

// Matrices of one weight type and row length, at most kMaxJobs (checked by
// the caller): one activation conversion, one parallel region over the
// strips of them all. With swiglu_out, jobs are {gate, up} of one shape
// (their y unused), batches of more than kInterleaveMaxTokens (checked by
// the caller; a tiled batch's rest below may be fewer: the fused strips
// walk plain strips whatever the count), and swiglu_out receives
// swiglu(gate x, up x) (fused below).
Status matmul_group(const KernelTable& table, const WeightKernels* k, std::span<const MatmulJob> jobs,
                    const float* x, int64_t n_tokens, ThreadPool* pool, float* swiglu_out = nullptr) {
  const MatrixView& w = *jobs[0].w;
  const TensorType vdt = vec_dot_type(w.type);
  const size_t act_row = vdt == TensorType::F32 ? 0 : activation_row_bytes(vdt, w.n_in);
  // A batch with a tile strip (AMX) takes it; its activations are the
  // quantized rows interleaved in token groups instead of aux rows. The
  // tile kernels address 16 weight rows, and 16 activation rows, with
  // 32-bit offsets; absurdly long rows take the plain strips.
  constexpr size_t kTileRowLimit = (size_t{1} << 31) / 16;
  const bool tiled = k->tile_strip != nullptr && n_tokens > k->tile_above && w.row_bytes <= kTileRowLimit &&
                     act_row <= kTileRowLimit;
  constexpr int64_t kTileGroup = 16;
  // The tokens past the last whole group, when few: a second, untiled pass
  // (rest <= tile_above) rather than a group of 16 holding them. Rows are
  // token-major in x, y and swiglu_out, so the rest is a suffix of each.
  if (const int64_t rest = n_tokens % kTileGroup; tiled && rest > 0 && rest <= std::min(k->tile_rest_max, k->tile_above)) {
    const int64_t head = n_tokens - rest;
    KZ_RETURN_IF_ERROR(matmul_group(table, k, jobs, x, head, pool, swiglu_out));
    MatmulJob tail[kMaxJobs];
    for (size_t j = 0; j < jobs.size(); ++j)
      tail[j] = {jobs[j].w, jobs[j].y != nullptr ? jobs[j].y + static_cast<size_t>(head * jobs[j].w->n_out) : nullptr};
    float* const tail_swiglu = swiglu_out != nullptr ? swiglu_out + static_cast<size_t>(head * w.n_out) : nullptr;
    return matmul_group(table, k, std::span<const MatmulJob>(tail, jobs.size()), x + head * w.n_in, rest, pool,
                        tail_swiglu);
  }
  // 1. Convert every token's activation row once (F32 weights use x as
  // is), and build the strip kernel's aux rows next to it.
  const size_t aux_row = k->aux_bytes != nullptr && !tiled ? round_up64(k->aux_bytes(w.n_in)) : 0;
  const size_t act_bytes = round_up64(act_row * static_cast<size_t>(n_tokens));
  ActivationBuffer buffer(act_bytes + aux_row * static_cast<size_t>(n_tokens) + 64);
  uint8_t* base = align64(buffer.data());
  ActivationRows acts;
  acts.n_tokens = n_tokens;
  acts.q = vdt == TensorType::F32 ? reinterpret_cast<const uint8_t*>(x) : base;
  acts.q_stride = vdt == TensorType::F32 ? static_cast<size_t>(w.n_in) * sizeof(float) : act_row;
  acts.aux = aux_row > 0 ? base + act_bytes : nullptr;
  acts.aux_stride = aux_row;
  const QuantizeActFn quantize = table.quantizer(vdt);
  auto convert = [&](int64_t t0, int64_t t1, int) {
    for (int64_t t = t0; t < t1; ++t) {
      uint8_t* q = base + static_cast<size_t>(t) * act_row;
      if (quantize != nullptr) {
        quantize(x + t * w.n_in, w.n_in, q);
      } else if (vdt != TensorType::F32) {
        // F16 / BF16: cannot fail, type and length were checked above.
        (void)quantize_activations(vdt, x + t * w.n_in, w.n_in, q);
      }
      if (aux_row > 0) k->aux(w.n_in, acts.q + static_cast<size_t>(t) * acts.q_stride,
                              base + act_bytes + static_cast<size_t>(t) * aux_row);
    }
  };
  if (pool != nullptr && n_tokens > 1) {
    pool->parallel_for(0, n_tokens, convert);
  } else {
    convert(0, n_tokens, 0);
  }

  // 1b. The tile strip reads the quantized rows interleaved in groups of
  // kTileGroup tokens (the last one padded), built once here.
  const size_t group_bytes = tiled ? round_up64(k->tile_group_bytes(w.n_in)) : 0;
  const int64_t n_groups = tiled ? (n_tokens + kTileGroup - 1) / kTileGroup : 0;
  std::optional<ActivationBuffer> tile_buffer;
  uint8_t* tiles = nullptr;
  if (tiled) {
    tile_buffer.emplace(group_bytes * static_cast<size_t>(n_groups) + 64, t_tile_buffer);
    tiles = align64(tile_buffer->data());
    auto interleave = [&](int64_t g0, int64_t g1, int) {
      for (int64_t g = g0; g < g1; ++g) {
        const int n = static_cast<int>(std::min(kTileGroup, n_tokens - g * kTileGroup));
        k->tile_acts(w.n_in, acts.q + static_cast<size_t>(g * kTileGroup) * acts.q_stride, acts.q_stride, n,
                     tiles + static_cast<size_t>(g) * group_bytes);
      }
    };
    if (pool != nullptr && n_groups > 1) {
      pool->parallel_for(0, n_groups, interleave);
    } else {
      interleave(0, n_groups, 0);
    }
  }

  // 2. Strips of strip_rows rows, each times all tokens, numbered across the
  // matrices one after the other. Threads take contiguous chunks of strips
  // (a contiguous stretch of a matrix); a few chunks per thread balance the
  // load when a thread is slowed down. For a few tokens, the table's
  // decode_walk says how a chunk is read (dispatch.h): as lane streams (lane
  // r of its i-th strip takes the chunk's row r * n + i of n strips, so each
  // lane walks consecutive rows: strip_rows long sequential streams), or as
  // strips in order, each prefetching the next. Side by side, the rows of a
  // strip are a few hundred bytes each, too short for the hardware
  // prefetchers to ramp up on: either each lane is a stream of its own, or
  // software fetches the next strip (faster on AMD Zen 4: dispatch.cpp).
  StripFn strip = tiled ? k->tile_strip : k->strip;
  int64_t rows_per_strip = tiled ? kTileGroup : k->strip_rows;
  if (!tiled && w.row_bytes > (size_t{1} << 31) / static_cast<size_t>(rows_per_strip)) {
    // SIMD strips address rows with 32-bit offsets; absurdly long rows
    // take the dot-product strip.
    strip = strip_from_dot;
    rows_per_strip = 1;
  }
  int64_t first_strip[kMaxJobs + 1] = {};
  // Fused: strips number gate's rows; each covers the same rows of up.
  const size_t n_numbered = swiglu_out != nullptr ? 1 : jobs.size();
  for (size_t j = 0; j < n_numbered; ++j)
    first_strip[j + 1] = first_strip[j] + (jobs[j].w->n_out + rows_per_strip - 1) / rows_per_strip;
  const int64_t n_strips = first_strip[n_numbered];
  const size_t scratch_bytes = tiled ? (k->tile_scratch_bytes != nullptr ? k->tile_scratch_bytes(w.n_in, n_tokens) : 0)
                                     : (k->scratch_bytes != nullptr ? k->scratch_bytes(w.n_in) : 0);
  // Interleave where the weights stream through once per few tokens (memory
  // bound). With many tokens the strips are compute bound, and scattered
  // outputs would make every cache line of y take 16 partial writes.
  const bool interleave = table.decode_walk == DecodeWalk::kLaneStreams && !tiled && rows_per_strip > 1 &&
                          n_tokens <= kInterleaveMaxTokens;
  // Outputs of a MiB and more (half of a typical L2) go out with
  // non-temporal stores where a kernel can: prefill's strips write one line
  // per token and strip, a row of y apart, and each plain store first
  // fetched its line from memory. pp512 +5-10 % (AMX and AVX-512 strips).
  uint64_t out_bytes = 0;
  for (size_t j = 0; j < n_numbered; ++j)
    out_bytes += static_cast<uint64_t>(jobs[j].w->n_out) * static_cast<uint64_t>(n_tokens) * sizeof(float);
  const bool stream_y = out_bytes >= kStreamOutputBytes;
  auto strips = [&](int64_t s0, int64_t s1, int) {
    uint8_t* scratch = thread_scratch(scratch_bytes);
    StripArgs a;
    a.n_in = w.n_in;
    a.w_stride = w.row_bytes;
    a.x = acts;
    a.scratch = scratch;
    a.dot = k->dot;
    a.tiles = tiles;
    a.tile_group_bytes = group_bytes;
    if (swiglu_out != nullptr) {
      // Gate's and up's rows of a strip, back to back, into the thread's
      // buffers (token t's rows at t * rows_per_strip: cache-resident), then
      // their swiglu into the output: only the product reaches memory.
      const MatrixView& g = *jobs[0].w;
      const MatrixView& u = *jobs[1].w;
      const size_t per = static_cast<size_t>(rows_per_strip * n_tokens);
      float* const g_out = thread_strip_out(2 * per);
      float* const u_out = g_out + per;
      a.ldy = static_cast<size_t>(rows_per_strip);
      a.prefetch_bytes = static_cast<size_t>(rows_per_strip) * g.row_bytes;
      for (int64_t s = s0; s < s1; ++s) {
        const int64_t r0 = s * rows_per_strip;
        a.n_rows = std::min(rows_per_strip, g.n_out - r0);
        a.w_stride = g.row_bytes;
        a.w = g.data + static_cast<size_t>(r0) * g.row_bytes;
        a.y = g_out;
        a.prefetch = u.data + static_cast<size_t>(r0) * u.row_bytes;  // read next
        strip(a);
        a.w_stride = u.row_bytes;
        a.w = u.data + static_cast<size_t>(r0) * u.row_bytes;
        a.y = u_out;
        a.prefetch = g.data + static_cast<size_t>(r0 + a.n_rows) * g.row_bytes;  // past the end: a hint
        strip(a);
        table.swiglu_rows(g_out, u_out, n_tokens, a.n_rows, static_cast<size_t>(rows_per_strip), swiglu_out + r0,
                          static_cast<size_t>(g.n_out), stream_y);
      }
      return;
    }
    a.stream_y = stream_y;
    size_t j = 0;
    for (int64_t s = s0; s < s1;) {
      while (s >= first_strip[j + 1]) ++j;
      const MatrixView& m = *jobs[j].w;
      int64_t e = std::min(s1, first_strip[j + 1]);  // this matrix's strips in the chunk
      const int64_t row0 = (s - first_strip[j]) * rows_per_strip;
      const int64_t n = std::min((e - first_strip[j]) * rows_per_strip, m.n_out) - row0;
      // Lane streams start n_seg rows apart. An even n_seg can put the 16
      // lanes' lines in a few L1 sets (row bytes 576 and 192 strips: all in
      // one set of an 8-way L1, every load a conflict miss): lanes one row
      // longer (odd) spread them over 16 sets, and the last lanes run out
      // of rows first (a strip's lanes past n compute on a copy of its last
      // row and are not stored). Splitting the last strip off instead, read
      // on its own and unprefetched, made decode 2-4 % slower (Zen 4).
      const int64_t n_seg = (e - s) % 2 == 0 ? e - s + 1 : e - s;
      if (interleave && n_seg > 1 &&
          static_cast<size_t>(n_seg) * m.row_bytes <= (size_t{1} << 31) / static_cast<size_t>(rows_per_strip)) {
        // Lane r of strip i takes row row0 + r * n_seg + i: each lane walks
        // n_seg consecutive rows, so the chunk is read as rows_per_strip
        // long sequential streams (what the hardware prefetchers follow)
        // instead of strips of short rows side by side. Same bits per row.
        // The outputs of kLaneBlock strips gather in the thread's buffer
        // (strip i's lanes side by side), then go to y lane by lane: each
        // lane's kLaneBlock outputs are consecutive in y. Copied strip by
        // strip, every value was a load just after the vector store that
        // wrote it and a store to another line of y.
        constexpr int64_t kLaneBlock = 64;
        const size_t tmp_ldy = static_cast<size_t>(rows_per_strip * kLaneBlock);
        float* const tmp = thread_strip_out(tmp_ldy * static_cast<size_t>(n_tokens));
        a.w_stride = static_cast<size_t>(n_seg) * m.row_bytes;
        a.w_row_bytes = m.row_bytes;
        a.lane_prefetch = table.decode_lane_prefetch;
        a.ldy = tmp_ldy;
        a.prefetch = nullptr;
        a.prefetch_bytes = 0;
        // The kernels prefetch each lane lane_prefetch bytes ahead of what
        // they read, so the first stretch of every lane would be read on
        // demand, cold: ask for the lanes' heads first (per-token
        // interleaved A/B, Qwen3-0.6B Q4_0 on Zen 4: 0.985-0.994x).
        if (a.lane_prefetch != 0) {
          for (int64_t r = 0; r < rows_per_strip && r * n_seg < n; ++r)
            prefetch_to_l2(m.data + static_cast<size_t>(row0 + r * n_seg) * m.row_bytes, a.lane_prefetch);
        }
        for (int64_t i0 = 0; i0 < n_seg; i0 += kLaneBlock) {
          const int64_t i1 = std::min(n_seg, i0 + kLaneBlock);
          // The lines of y this block's lanes go to, asked for now so that
          // they have arrived by the time the transpose below stores to
          // them: written cold, each store waited on its line's fetch.
          for (int64_t t = 0; t < n_tokens; ++t)
            for (int64_t r = 0; r < rows_per_strip && r * n_seg + i0 < n; ++r)
              prefetch_to_l2(jobs[j].y + static_cast<size_t>(t * m.n_out + row0 + r * n_seg + i0),
                             static_cast<size_t>(std::min(i1, n - r * n_seg) - i0) * sizeof(float));
          for (int64_t i = i0; i < i1; ++i) {
            a.w = m.data + static_cast<size_t>(row0 + i) * m.row_bytes;
            a.n_rows = std::min(rows_per_strip, (n - i + n_seg - 1) / n_seg);
            a.y = tmp + static_cast<size_t>((i - i0) * rows_per_strip);
            strip(a);
          }
          // Lane r of strip i holds row r * n_seg + i, real while < n: the
          // lanes whose rows are all real go out as one transpose (copied
          // value by value, this held ~2 % of a decode's samples), the
          // lanes that run out of rows in this block one by one.
          int64_t full_lanes = 0;
          while (full_lanes < rows_per_strip && full_lanes * n_seg + i1 <= n) ++full_lanes;
          for (int64_t t = 0; t < n_tokens; ++t) {
            const float* const src = tmp + static_cast<size_t>(t) * tmp_ldy;
            float* const dst = jobs[j].y + static_cast<size_t>(t * m.n_out + row0);
            if (full_lanes > 0)
              table.transpose_f32(src, static_cast<size_t>(rows_per_strip), i1 - i0, full_lanes, dst + i0,
                                  static_cast<size_t>(n_seg));
            for (int64_t r = full_lanes; r < rows_per_strip; ++r) {
              const int64_t end = std::min(i1, n - r * n_seg);
              for (int64_t i = i0; i < end; ++i)
                dst[static_cast<size_t>(r * n_seg + i)] = src[static_cast<size_t>((i - i0) * rows_per_strip + r)];
            }
          }
        }
      } else {
        a.w_stride = m.row_bytes;
        a.lane_prefetch = 0;
        a.ldy = static_cast<size_t>(m.n_out);
        for (int64_t i = s; i < e; ++i) {
          const int64_t r0 = (i - first_strip[j]) * rows_per_strip;
          a.w = m.data + static_cast<size_t>(r0) * m.row_bytes;
          a.n_rows = std::min(rows_per_strip, m.n_out - r0);
          a.y = jobs[j].y + r0;
          // The next strip's rows (past the matrix's end: harmless hints).
          // Not in lane-stream mode, where this branch reads only a lone
          // strip (a one-strip segment, or rows too long for lanes) and
          // what follows is read as lane streams: a whole strip
          // of prefetches over its few units (68 lines per unit at 1024
          // Q8_0 inputs) held ~0.9 % of a decode's samples.
          a.prefetch = interleave ? nullptr : a.w + static_cast<size_t>(a.n_rows) * m.row_bytes;
          a.prefetch_bytes = static_cast<size_t>(rows_per_strip) * m.row_bytes;
          strip(a);
        }
      }
      s = e;
    }
  };
  if (pool != nullptr && pool->size() > 1 && n_strips > 1) {
    const int64_t strip_bytes = rows_per_strip * static_cast<int64_t>(w.row_bytes);
    const int64_t work_per_strip = strip_bytes * n_tokens * (swiglu_out != nullptr ? 2 : 1);
    // Chunks of at least ~32 KB of weight-token work, at most 4 per thread;
    // 3 for lane streams, where every chunk starts its lanes cold (the
    // prefetchers have not seen them yet) and fewer, longer ones read
    // faster than the finer tail balances (Qwen3-0.6B Q4_0 tg128 on Zen 2,
    // 2 threads: 3 per thread 1.02x, 8 per thread 0.95x against 4).
    const int64_t grain = std::max<int64_t>(1, (int64_t{32} << 10) / std::max<int64_t>(work_per_strip, 1));
    const int threads = pool->size();
    const int64_t per_thread = interleave ? 3 : 4;
    const int64_t n_chunks = std::min<int64_t>({per_thread * threads, (n_strips + grain - 1) / grain, kMaxChunks});
    // Guided sizes: threads claim chunks in order, the big ones first and
    // the smallest last, so whoever finishes early waits at most for a small
    // chunk (equal chunks left ~1/16 of a matmul idle on one of two cores).
    // Round r of `threads` chunks weighs (rounds - r).
    int64_t bound[kMaxChunks + 1];
    const int64_t rounds = (n_chunks + threads - 1) / threads;
    int64_t total_weight = 0;
    for (int64_t c = 0; c < n_chunks; ++c) total_weight += rounds - c / threads;
    int64_t acc_weight = 0;
    bound[0] = 0;
    for (int64_t c = 0; c < n_chunks; ++c) {
      acc_weight += rounds - c / threads;
      const int64_t b = n_strips * acc_weight / total_weight;
      // Every chunk gets at least one strip.
      bound[c + 1] = std::clamp(b, bound[c] + 1, n_strips - (n_chunks - 1 - c));
    }
    pool->parallel_for(0, n_chunks, [&](int64_t c0, int64_t c1, int t) {
      for (int64_t c = c0; c < c1; ++c) strips(bound[c], bound[c + 1], t);
    }, 1, static_cast<int>(n_chunks));
  } else {
    strips(0, n_strips, 0);
  }
  return OkStatus();
}

// A weight matrix a table can multiply: a kernel for its type, a sound view.
Status check_weights(const KernelTable& table, const MatrixView* w) {
  if (w == nullptr) return InvalidArgument("matmul: null weight view");
  if (table.find(w->type) == nullptr) return Unsupported("matmul: weight type " + type_name(w->type) + " is not supported");
  return check_view(*w, "matmul");
}

}  // namespace

Status matmul_many_with(const KernelTable& table, std::span<const MatmulJob> jobs, const float* x,
                        int64_t n_tokens, ThreadPool* pool) {
  for (const MatmulJob& job : jobs) KZ_RETURN_IF_ERROR(check_weights(table, job.w));
  if (n_tokens < 0) return InvalidArgument("matmul: n_tokens = " + std::to_string(n_tokens));
  if (n_tokens == 0) return OkStatus();
  if (x == nullptr) return InvalidArgument("matmul: null activation or output");
  for (const MatmulJob& job : jobs)
    if (job.y == nullptr) return InvalidArgument("matmul: null activation or output");
  // Runs of matrices that share a type and row length go together.
  size_t i = 0;
  while (i < jobs.size()) {
    size_t e = i + 1;
    while (e < jobs.size() && e - i < kMaxJobs && jobs[e].w->type == jobs[i].w->type && jobs[e].w->n_in == jobs[i].w->n_in) ++e;
    KZ_RETURN_IF_ERROR(matmul_group(table, table.find(jobs[i].w->type), jobs.subspan(i, e - i), x, n_tokens, pool));
    i = e;
  }
  return OkStatus();
}

Status matmul_swiglu_with(const KernelTable& table, const MatrixView& gate, const MatrixView& up, const float* x,
                          int64_t n_tokens, float* out, ThreadPool* pool) {
  for (const MatrixView* w : {&gate, &up}) KZ_RETURN_IF_ERROR(check_weights(table, w));
  if (gate.n_in != up.n_in || gate.n_out != up.n_out)
    return InvalidArgument("matmul_swiglu: gate is " + std::to_string(gate.n_in) + " -> " + std::to_string(gate.n_out) +
                           ", up " + std::to_string(up.n_in) + " -> " + std::to_string(up.n_out) + "; they must match");
  if (n_tokens < 0) return InvalidArgument("matmul: n_tokens = " + std::to_string(n_tokens));
  if (n_tokens == 0) return OkStatus();
  if (x == nullptr || out == nullptr) return InvalidArgument("matmul: null activation or output");
  if (gate.type == up.type && n_tokens > kInterleaveMaxTokens) {
    const MatmulJob jobs[] = {{&gate, nullptr}, {&up, nullptr}};
    return matmul_group(table, table.find(gate.type), jobs, x, n_tokens, pool, out);
  }
  // Decode (and mixed types): two plain products, then swiglu, a batch's
  // worth split over the pool.
  const int64_t total = n_tokens * gate.n_out;
  ScratchFloats u(static_cast<size_t>(total));
  const MatmulJob jobs[] = {{&gate, out}, {&up, u.data()}};
  KZ_RETURN_IF_ERROR(matmul_many_with(table, jobs, x, n_tokens, pool));
  constexpr int64_t kParallelMin = int64_t{1} << 15;  // below: one thread is quicker than a dispatch
  if (pool != nullptr && total >= kParallelMin) {
    pool->parallel_for(0, total, [&](int64_t b, int64_t e, int) { table.swiglu(out + b, u.data() + b, e - b, out + b); },
                       4096);
  } else {
    table.swiglu(out, u.data(), total, out);
  }
  return OkStatus();
}

Status matmul_swiglu(const MatrixView& gate, const MatrixView& up, const float* x, int64_t n_tokens, float* out,
                     ThreadPool* pool) {
  return matmul_swiglu_with(active_kernels(), gate, up, x, n_tokens, out, pool);
}

Status matmul_with(const KernelTable& table, const MatrixView& w, const float* x,
                   int64_t n_tokens, float* y, ThreadPool* pool) {
  const MatmulJob job{&w, y};
  return matmul_many_with(table, std::span<const MatmulJob>(&job, 1), x, n_tokens, pool);
}

Status matmul(const MatrixView& w, const float* x, int64_t n_tokens, float* y, ThreadPool* pool) {
  return matmul_with(active_kernels(), w, x, n_tokens, y, pool);
}

Status matmul_many(std::span<const MatmulJob> jobs, const float* x, int64_t n_tokens, ThreadPool* pool) {
  return matmul_many_with(active_kernels(), jobs, x, n_tokens, pool);
}

void gemm_f32_acc(int64_t m, int64_t n, int64_t k, const float* a, size_t lda, const float* b, size_t ldb,
                  float* c, size_t ldc) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  active_kernels().gemm_f32_acc(m, n, k, a, lda, b, ldb, c, ldc);
}

void gemm_f32(int64_t m, int64_t n, int64_t k, const float* a, size_t lda, const float* b, size_t ldb, float* c,
              size_t ldc) {
  // k = 0 is a zero fill, which every variant does (no product to add).
  if (m > 0 && n > 0) active_kernels().gemm_f32(m, n, std::max<int64_t>(k, 0), a, lda, b, ldb, c, ldc);
}

void gemm_f32_f16b_acc(int64_t m, int64_t n, int64_t k, const float* a, size_t lda, const uint16_t* b, size_t ldb,
                       float* c, size_t ldc) {
  if (m <= 0 || n <= 0 || k <= 0) return;
  active_kernels().gemm_f32_f16b_acc(m, n, k, a, lda, b, ldb, c, ldc);
}

void gemm_f32_f16b(int64_t m, int64_t n, int64_t k, const float* a, size_t lda, const uint16_t* b, size_t ldb,
                   float* c, size_t ldc) {
  if (m > 0 && n > 0) active_kernels().gemm_f32_f16b(m, n, std::max<int64_t>(k, 0), a, lda, b, ldb, c, ldc);
}

void gemm_f32_scaled_acc(int64_t m, int64_t n, int64_t k, const float* a, size_t lda, const float* b, size_t ldb,
                         float* c, size_t ldc, float scale, float* abs_min, float* abs_max) {
  if (m <= 0 || n <= 0) {
    *abs_min = INFINITY;
    *abs_max = 0.0f;
    return;
  }
  active_kernels().gemm_f32_scaled_acc(m, n, std::max<int64_t>(k, 0), a, lda, b, ldb, c, ldc, scale, abs_min, abs_max);
}

uint64_t read_stream(const uint8_t* p, size_t bytes) { return active_kernels().read_stream(p, bytes); }
void fp16_to_fp32_row(const uint16_t* x, int64_t n, float* out) {
  if (n > 0) active_kernels().fp16_to_fp32_row(x, n, out);
}
void fp32_to_fp16_row(const float* x, int64_t n, uint16_t* out) {
  if (n > 0) active_kernels().fp32_to_fp16_row(x, n, out);
}

void silu(const float* x, int64_t n, float* out) {
  if (n > 0) active_kernels().silu(x, n, out);
}

void swiglu(const float* gate, const float* up, int64_t n, float* out) {
  if (n > 0) active_kernels().swiglu(gate, up, n, out);
}

void sigmoid_mul(const float* gate, const float* x, int64_t n, float* out) {
  if (n > 0) active_kernels().sigmoid_mul(gate, x, n, out);
}

void abs_range(const float* x, int64_t n, float* min, float* max) {
  if (n > 0) {
    active_kernels().abs_range(x, n, min, max);
  } else {
    *min = INFINITY;
    *max = 0.0f;
  }
}

void conv_silu(const float* const* rows, const float* taps, size_t taps_stride, int64_t n_taps, int64_t n,
               float* out) {
  if (n > 0) active_kernels().conv_silu(rows, taps, taps_stride, n_taps, n, out);
}

float softmax_online_row(const float* s, int64_t valid, int64_t n, float scale, float* m, float* alpha, float* p) {
  return active_kernels().softmax_online_row(s, valid, n, scale, m, alpha, p);
}

Status get_rows(const MatrixView& table, const int32_t* ids, int64_t n, float* out) {
  if (!can_dequantize(table.type)) {
    return Unsupported("get_rows: cannot dequantize type " + type_name(table.type));
  }
  KZ_RETURN_IF_ERROR(check_view(table, "get_rows"));
  if (n < 0) return InvalidArgument("get_rows: n = " + std::to_string(n));
  if (n == 0) return OkStatus();
  if (ids == nullptr || out == nullptr) return InvalidArgument("get_rows: null ids or output");
  for (int64_t i = 0; i < n; ++i) {
    if (ids[i] < 0 || ids[i] >= table.n_out) {
      return OutOfRange("get_rows: id " + std::to_string(ids[i]) + " at index " +
                        std::to_string(i) + " is outside [0, " + std::to_string(table.n_out) + ")");
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* row = table.data + static_cast<size_t>(ids[i]) * table.row_bytes;
    KZ_RETURN_IF_ERROR(dequantize_row(table.type, row, out + i * table.n_in, table.n_in));
  }
  return OkStatus();
}

}  // namespace kazeia::kernels
